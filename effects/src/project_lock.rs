//! The project lock: one writer per project.
//!
//! An exclusive OS file lock (`flock`/`LockFileEx` through `std::fs::File::try_lock`) on
//! `.contextos/state/lock`, a file that is never deleted or renamed, opened close-on-exec
//! (Rust's default) so a spawned command cannot keep it alive. The kernel releases the
//! lock when the holder dies, so there is no stale-lock guessing.
//!
//! Every acquisition writes `.contextos/state/lock.json` through
//! [`crate::atomic_write`] (removing the temp file of a holder killed mid-write) with a
//! fresh UUID v4 token and a **fencing generation** one higher
//! than the last. Mutations re-check the generation and token under the lock
//! ([`ProjectLockGuard::verify_fence`]) and the journal records the generation.
//!
//! Decisions: the lock is **not re-entrant** — a second acquire of the same project by
//! the same process is an error, never a deadlock; where the file system cannot lock
//! (or is a network file system whose lock semantics differ) we refuse to mutate.

use crate::atomic_write::{self, Publish};
use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// Who holds (or last held) the lock, as recorded in `lock.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectLockState {
    pub token: String,
    pub generation: u64,
    pub pid: u32,
    #[serde(rename = "pidStartTime")]
    pub pid_start_time: Option<u64>,
    #[serde(rename = "bootId")]
    pub boot_id: Option<String>,
    pub hostname: String,
    pub command: String,
    #[serde(rename = "acquiredAtUnixMs")]
    pub acquired_at_unix_ms: u64,
    #[serde(rename = "toolVersion")]
    pub tool_version: String,
}

impl std::fmt::Display for ProjectLockState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {} (`{}`, generation {})",
            self.pid, self.hostname, self.command, self.generation
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProjectLockError {
    #[error("timed out after {waited:?} waiting for the project lock held by {holder}")]
    Timeout { waited: Duration, holder: String },
    #[error("this process already holds the project lock for {0}; the lock is not re-entrant")]
    Reentrant(PathBuf),
    #[error("{path}: the file system cannot lock files ({reason}); refusing to mutate")]
    Unsupported { path: PathBuf, reason: String },
    #[error("{path}: corrupt lock state ({reason}); inspect it, then delete it to reset the fencing generation")]
    CorruptState { path: PathBuf, reason: String },
    #[error("fencing check failed: the lock state names generation {found} (token {found_token}), this holder has generation {mine}")]
    Fenced {
        mine: u64,
        found: u64,
        found_token: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProjectLockError + '_ {
    move |source| ProjectLockError::Io {
        path: path.to_path_buf(),
        source,
    }
}

const STATE_FILE: &str = "lock.json";
/// `lock.json` as `OpenOptions::create_new` made it before the shared helper: readable by
/// all, since it names the holder and holds no secret.
const STATE_MODE: u32 = 0o644;

/// Roots whose lock this process holds (re-entrancy detection).
static HELD: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

fn held() -> std::sync::MutexGuard<'static, Option<HashSet<PathBuf>>> {
    HELD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where the lock and its state live for a project.
#[derive(Debug, Clone)]
pub struct ProjectLockPaths {
    pub dir: PathBuf,
    pub lock: PathBuf,
    pub state: PathBuf,
}

impl ProjectLockPaths {
    pub fn for_project(root: &Path) -> Self {
        let dir = root.join(".contextos").join("state");
        ProjectLockPaths {
            lock: dir.join("lock"),
            state: dir.join(STATE_FILE),
            dir,
        }
    }
}

#[derive(Debug, Clone)]
pub struct AcquireOptions {
    pub timeout: Duration,
    /// Recorded in the state so others can see who holds the lock.
    pub command: String,
}

impl Default for AcquireOptions {
    fn default() -> Self {
        AcquireOptions {
            timeout: Duration::from_secs(30),
            command: String::new(),
        }
    }
}

/// The held lock. Dropping it releases the lock.
#[derive(Debug)]
pub struct ProjectLockGuard {
    file: File,
    key: PathBuf,
    paths: ProjectLockPaths,
    state: ProjectLockState,
}

impl ProjectLockGuard {
    pub fn generation(&self) -> u64 {
        self.state.generation
    }
    pub fn token(&self) -> &str {
        &self.state.token
    }
    pub fn state(&self) -> &ProjectLockState {
        &self.state
    }

    /// Re-reads the lock state and checks that it still names this holder.
    pub fn verify_fence(&self) -> Result<(), ProjectLockError> {
        match read_state(&self.paths.state)? {
            Some(s) if s.generation == self.state.generation && s.token == self.state.token => {
                Ok(())
            }
            Some(s) => Err(ProjectLockError::Fenced {
                mine: self.state.generation,
                found: s.generation,
                found_token: s.token,
            }),
            None => Err(ProjectLockError::Fenced {
                mine: self.state.generation,
                found: 0,
                found_token: String::new(),
            }),
        }
    }
}

impl Drop for ProjectLockGuard {
    fn drop(&mut self) {
        // Closing the file releases the lock anyway; unlocking first makes it immediate
        // even if something still holds a duplicate of the descriptor.
        let _ = self.file.unlock();
        if let Some(set) = held().as_mut() {
            set.remove(&self.key);
        }
    }
}

/// What `contextos lock status` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectLockStatus {
    pub held: bool,
    /// The current holder when held, otherwise the last one.
    pub state: Option<ProjectLockState>,
}

/// Acquires the project lock, waiting up to `opts.timeout`. `on_wait` is called once,
/// with the holder, when the lock is busy (the CLI prints "waiting for the lock held by …").
pub fn acquire(
    root: &Path,
    opts: &AcquireOptions,
    on_wait: &mut dyn FnMut(Option<&ProjectLockState>),
) -> Result<ProjectLockGuard, ProjectLockError> {
    let paths = ProjectLockPaths::for_project(root);
    std::fs::create_dir_all(&paths.dir).map_err(io(&paths.dir))?;
    let key = std::fs::canonicalize(&paths.dir).map_err(io(&paths.dir))?;
    {
        let mut guard = held();
        let set = guard.get_or_insert_with(HashSet::new);
        if !set.insert(key.clone()) {
            return Err(ProjectLockError::Reentrant(root.to_path_buf()));
        }
    }
    let result = acquire_file(&paths, opts, on_wait);
    match result {
        Ok((file, state)) => Ok(ProjectLockGuard {
            file,
            key,
            paths,
            state,
        }),
        Err(e) => {
            if let Some(set) = held().as_mut() {
                set.remove(&key);
            }
            Err(e)
        }
    }
}

fn acquire_file(
    paths: &ProjectLockPaths,
    opts: &AcquireOptions,
    on_wait: &mut dyn FnMut(Option<&ProjectLockState>),
) -> Result<(File, ProjectLockState), ProjectLockError> {
    // Read-only: the lock file is never written, and a descriptor open for writing would
    // pin its file system writable — an administrator's (or a test's) read-only remount
    // would fail with EBUSY for as long as the lock is held. `flock` needs no write access.
    let file = File::from(
        rustix::fs::open(
            &paths.lock,
            OFlags::RDONLY | OFlags::CREATE | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(|e| io(&paths.lock)(e.into()))?,
    );
    refuse_network_fs(&file, &paths.lock)?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                let holder = read_state(&paths.state).ok().flatten();
                if !told {
                    on_wait(holder.as_ref());
                    told = true;
                }
                let waited = start.elapsed();
                if waited >= opts.timeout {
                    return Err(ProjectLockError::Timeout {
                        waited,
                        holder: holder
                            .map_or_else(|| "another process".to_string(), |h| h.to_string()),
                    });
                }
                std::thread::sleep(pause.min(opts.timeout.saturating_sub(waited)));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(TryLockError::Error(e)) => {
                return Err(ProjectLockError::Unsupported {
                    path: paths.lock.clone(),
                    reason: e.to_string(),
                })
            }
        }
    }
    // Under the lock: the previous state decides the next generation, and a temp file
    // of a holder killed while writing the state is stale (only a holder writes it).
    let previous = read_state(&paths.state)?;
    atomic_write::remove_stale_temps(&paths.dir, STATE_FILE).map_err(io(&paths.dir))?;
    let state = ProjectLockState {
        token: uuid::Uuid::new_v4().to_string(),
        generation: previous.map_or(0, |p| p.generation).saturating_add(1),
        pid: std::process::id(),
        pid_start_time: pid_start_time(),
        boot_id: boot_id(),
        hostname: hostname(),
        command: opts.command.clone(),
        acquired_at_unix_ms: crate::clock::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    if let Err(e) = write_state(paths, &state) {
        if crate::faults::disabled(crate::faults::Recovery::LockRelease) {
            std::mem::forget(file);
        }
        // Dropping `file` releases the lock: a holder that could not record itself must
        // not hold it.
        return Err(e);
    }
    Ok((file, state))
}

/// Reports whether the lock is held (without taking it for longer than a probe) and
/// the recorded holder.
pub fn status(root: &Path) -> Result<ProjectLockStatus, ProjectLockError> {
    let paths = ProjectLockPaths::for_project(root);
    let file = match File::open(&paths.lock) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ProjectLockStatus {
                held: false,
                state: None,
            })
        }
        Err(e) => return Err(io(&paths.lock)(e)),
    };
    let held = match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(e)) => {
            return Err(ProjectLockError::Unsupported {
                path: paths.lock.clone(),
                reason: e.to_string(),
            })
        }
    };
    Ok(ProjectLockStatus {
        held,
        state: read_state(&paths.state)?,
    })
}

fn read_state(path: &Path) -> Result<Option<ProjectLockState>, ProjectLockError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| ProjectLockError::CorruptState {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// Replaced whole through [`atomic_write`], so a reader (another contender, `lock
/// status`) sees the previous holder or this one, never half of either.
fn write_state(paths: &ProjectLockPaths, state: &ProjectLockState) -> Result<(), ProjectLockError> {
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| ProjectLockError::CorruptState {
        path: paths.state.clone(),
        reason: e.to_string(),
    })?;
    atomic_write::write(&paths.state, &bytes, STATE_MODE, Publish::Replace)
        .map(|_| ())
        .map_err(io(&paths.state))
}

#[cfg(target_os = "linux")]
fn refuse_network_fs(file: &File, path: &Path) -> Result<(), ProjectLockError> {
    // statfs magic numbers of file systems whose rename/fsync/lock guarantees differ.
    const NETWORK: &[(i64, &str)] = &[
        (0x6969, "NFS"),
        (0x517B, "SMB"),
        (0xFF53_4D42, "CIFS"),
        (0xFE53_4D42, "SMB2"),
        (0x7375_7245, "Coda"),
        (0x5346_414F, "AFS"),
        (0x0102_1997, "9P"),
        (0x00C3_6400, "Ceph"),
        (0x0BD0_0BD0, "Lustre"),
        (0x4750_4653, "GPFS"),
    ];
    let fs = rustix::fs::fstatfs(file).map_err(|e| io(path)(e.into()))?;
    // `f_type`'s integer type differs between targets; the magic is its low 32 bits.
    #[allow(
        clippy::unnecessary_cast,
        reason = "f_type is i64 on some targets and not on others"
    )]
    let magic = (fs.f_type as i64) & 0xFFFF_FFFF;
    match NETWORK.iter().find(|(m, _)| *m == magic) {
        Some((_, name)) => Err(ProjectLockError::Unsupported {
            path: path.to_path_buf(),
            reason: format!("{name} is a network file system"),
        }),
        None => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn refuse_network_fs(_file: &File, _path: &Path) -> Result<(), ProjectLockError> {
    Ok(())
}

/// Field 22 of /proc/self/stat (start time in clock ticks since boot): with the pid and
/// boot id it identifies a process even under pid reuse.
fn pid_start_time() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_comm = stat.rsplit_once(')')?.1;
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

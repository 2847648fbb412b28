//! Sandbox sessions: one warm container per agent session whose workspace is writable
//! and whose changes are captured exactly.
//!
//! Two capture modes with one change semantics:
//! - [`CaptureMode::Overlay`]: the project is the read-only lower layer of an overlay
//!   volume; the upper directory in a per-session scratch directory *is* the changeset
//!   (files, whiteouts, opaque directories). The container never writes the host.
//! - [`CaptureMode::Copy`]: a private copy of the project, diffed against a recorded
//!   baseline after each command, where overlay volumes are not available.
//!
//! The session keeps a *baseline*: what the container was last shown of the host (sha256
//! and executable bit per file, target per link). [`Session::pending`] compares the
//! container's view with it; [`Session::accept`] moves it forward once the caller has
//! applied the changeset through the journal; [`Session::discard`] resets the refused
//! paths in the session to the host's state.
//!
//! Before each command the host is compared with the stat fingerprint of the last sync.
//! For each changed path: if the session already shows the host's new state (e.g. what
//! was just accepted), only the baseline moves; if the session shows the old baseline
//! there (no change of its own), the path is reset to the host (in overlay mode by
//! removing the synced upper entry, offline); if the session changed the path itself,
//! its change stays and keeps the old baseline as its precondition, so the journal
//! refuses it. In overlay mode any path where the lower layer shows through, and any
//! reset, restarts the container: a host rename over a file whose dentry the mount has
//! cached is otherwise never seen, and the upper layer may only change while stopped.
//!
//! One job per module: [`state`] (the persisted record), [`lock`] (one user of a session
//! at a time), [`fingerprint`] (the host walk), [`ignore`] (what stays in the session),
//! [`changes`] (the view of the session and the changeset), [`overlay`] and [`copy`]
//! (each mode's scratch area), `exec` (commands through the Engine API's exec).

pub mod changes;
pub mod copy;
pub mod exec;
pub mod fingerprint;
pub mod ignore;
pub mod lock;
pub mod mode;
pub mod overlay;
pub mod state;

pub use changes::{Change, Pending};
pub use exec::{ExecOptions, ExecOutcome};
pub use mode::CaptureMode;

use crate::safe_fs::SafeRoot;
use crate::sandbox::capture::Stream;
use crate::sandbox::profile::{Profile, DEFAULT_USER};
use crate::sandbox::runner::{is_not_found, Runner, SandboxError};
use crate::sandbox::spec::{
    session_body, HOME, SESSION_DEADLINE_LABEL, SESSION_LABEL, SESSION_SCRATCH_LABEL,
    SESSION_STATE_LABEL, WORKSPACE,
};
use bollard::models::{Mount, MountType, MountVolumeOptions};
use bollard::Docker;
use changes::Obs;
use fingerprint::Kind;
use lock::SessionLock;
use state::{Entry, SessionRecord};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What opening a session needs.
pub struct SessionConfig<'a> {
    pub id: &'a str,
    pub project: &'a Path,
    /// Where session records live, e.g. `<project>/.contextos/state/sessions`.
    pub state_dir: &'a Path,
    /// Where the scratch area goes (the system temp dir when `None`); never inside the
    /// project (an overlay's upper cannot live in its lower).
    pub scratch_base: Option<&'a Path>,
    /// The image by id, resolved by the caller.
    pub image_id: &'a str,
    pub profile: &'a Profile,
    /// How long a session may stay unused before an idle sweep removes it.
    pub idle: Duration,
    /// Chooses the mode instead of the automatic rule (tests, `CONTEXTOS_SESSION_MODE`).
    pub force_mode: Option<CaptureMode>,
    /// True for a project file the container must not see (its read verdict is not
    /// allow).
    pub withhold: &'a mut dyn FnMut(&str) -> bool,
}

impl std::fmt::Debug for SessionConfig<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionConfig")
            .field("id", &self.id)
            .field("project", &self.project)
            .field("state_dir", &self.state_dir)
            .field("force_mode", &self.force_mode)
            .finish_non_exhaustive()
    }
}

/// The parts of a [`SessionConfig`] a fresh session is made from.
#[derive(Debug, Clone, Copy)]
struct Fresh<'b> {
    id: &'b str,
    scratch_base: Option<&'b Path>,
    image_id: &'b str,
    idle: Duration,
    force_mode: Option<CaptureMode>,
}

/// An open session, held under its lock until dropped or closed.
pub struct Session<'a> {
    runner: &'a Runner,
    state_dir: PathBuf,
    profile: Profile,
    withhold: &'a mut dyn FnMut(&str) -> bool,
    rec: SessionRecord,
    fresh: bool,
    lock: SessionLock,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.rec.id)
            .field("mode", &self.rec.mode)
            .field("container", &self.rec.container)
            .field("fresh", &self.fresh)
            .finish_non_exhaustive()
    }
}

fn fail(code: &'static str, message: impl Into<String>) -> SandboxError {
    SandboxError {
        code,
        message: message.into(),
    }
}

fn io_fail(what: impl std::fmt::Display, e: impl std::fmt::Display) -> SandboxError {
    fail("sandbox.session-io", format!("{what}: {e}"))
}

fn api(what: impl std::fmt::Display, e: impl std::fmt::Display) -> SandboxError {
    fail("sandbox.api", format!("{what}: {e}"))
}

fn unix_now(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `ctx-s-<id>-<hash>`: the hash of the state directory and the id keeps two projects
/// that use the same session id apart (engine names are global); long ids are cut.
pub fn container_name(state_dir: &Path, id: &str) -> String {
    let h = crate::safe_fs::sha256_hex(format!("{}\0{id}", state_dir.display()).as_bytes());
    let head: String = id.chars().take(40).collect();
    format!("ctx-s-{head}-{}", &h[..12])
}

/// The automatic rule. Overlay needs a project the sandbox user can write through the
/// overlay — so the sandbox user becomes the project's (non-root) owner, which only the
/// default profile user may be replaced by — and root on the host, because resetting
/// paths in the upper layer offline creates whiteouts (device nodes).
fn choose_mode(project_owner: (u32, u32), profile: &Profile) -> CaptureMode {
    let root = rustix::process::geteuid().is_root();
    if root && project_owner.0 != 0 && project_owner.1 != 0 && profile.user == DEFAULT_USER {
        CaptureMode::Overlay
    } else {
        CaptureMode::Copy
    }
}

fn set_entry(baseline: &mut BTreeMap<String, Entry>, rel: &str, e: Option<Entry>) {
    match e {
        Some(e) => {
            baseline.insert(rel.to_string(), e);
        }
        None => {
            baseline.remove(rel);
        }
    }
}

/// Removes a directory tree the sandbox user may have left without write bits.
fn remove_tree(dir: &Path) -> std::io::Result<()> {
    fn open_up(dir: &Path) {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    open_up(&e.path());
                }
            }
        }
    }
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    open_up(dir);
    std::fs::remove_dir_all(dir)
}

/// A scratch directory as [`Runner::open_session`] names it.
fn is_scratch_name(p: &Path) -> bool {
    p.is_absolute()
        && p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("contextos-session-"))
}

fn host_kind(fp: &fingerprint::Fingerprint, rel: &str) -> Option<Kind> {
    fp.get(rel).map(|s| s.kind)
}

/// The host's visible files and links, hashed, and the files withheld.
fn host_baseline(
    root: &SafeRoot,
    fp: &fingerprint::Fingerprint,
    withhold: &mut dyn FnMut(&str) -> bool,
) -> Result<(BTreeMap<String, Entry>, BTreeSet<String>), SandboxError> {
    let withheld = withheld_of(fp, withhold);
    let mut baseline = BTreeMap::new();
    for (rel, st) in fp {
        if matches!(st.kind, Kind::File | Kind::Link) {
            if let Some(e) = changes::host_entry(root, rel, &withheld)
                .map_err(|e| io_fail("reading the project", e))?
            {
                baseline.insert(rel.clone(), e);
            }
        }
    }
    Ok((baseline, withheld))
}

fn withheld_of(
    fp: &fingerprint::Fingerprint,
    withhold: &mut dyn FnMut(&str) -> bool,
) -> BTreeSet<String> {
    fp.iter()
        .filter(|(_, s)| s.kind == Kind::File)
        .filter(|(rel, _)| withhold(rel))
        .map(|(rel, _)| rel.clone())
        .collect()
}

fn bind(source: &Path, view: &str, target: &str) -> Mount {
    Mount {
        target: Some(format!("{view}/{target}")),
        source: Some(source.display().to_string()),
        typ: Some(MountType::BIND),
        read_only: Some(true),
        ..Default::default()
    }
}

/// Where the container also sees the project: at its own host path, so a command that
/// names files by their absolute host path (agents do: `cd /home/me/proj && make`) finds
/// them, and `pwd` prints what it prints on the host. `None` when that path is one the
/// container itself needs (a system directory, `/tmp`, the sandbox home, `/workspace`)
/// or lies inside the kernel's or the engine's own trees.
pub fn host_view(project: &Path) -> Option<String> {
    let p = project.to_str()?.trim_end_matches('/');
    let own = [
        "",
        "/bin",
        "/sbin",
        "/usr",
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/usr/local",
        "/usr/local/bin",
        "/lib",
        "/lib64",
        "/lib32",
        "/etc",
        "/var",
        "/run",
        "/tmp",
        "/home",
        "/root",
        "/opt",
        "/srv",
        "/mnt",
        "/media",
    ];
    let inside = ["/proc", "/sys", "/dev", WORKSPACE, HOME];
    if !p.starts_with('/')
        || own.contains(&p)
        || inside
            .iter()
            .any(|r| p == *r || p.starts_with(&format!("{r}/")))
    {
        return None;
    }
    Some(p.to_string())
}

/// The container's mounts: the project view at `/workspace` (and at its host path, see
/// [`host_view`]), then an empty read-only file or directory over every hidden and
/// withheld path in each view (overlay mode: the lower layer holds them; copy mode never
/// copied them).
fn mounts(rec: &SessionRecord) -> Vec<Mount> {
    let views: Vec<String> = std::iter::once(WORKSPACE.to_string())
        .chain(host_view(&rec.project))
        .collect();
    let mut out = Vec::new();
    for view in &views {
        match (&rec.mode, &rec.volume) {
            (CaptureMode::Overlay, Some(vol)) => {
                out.push(Mount {
                    target: Some(view.clone()),
                    source: Some(vol.clone()),
                    typ: Some(MountType::VOLUME),
                    read_only: Some(false),
                    // An empty volume would otherwise get the image's own directory
                    // copied into it, i.e. into the upper layer.
                    volume_options: Some(MountVolumeOptions {
                        no_copy: Some(true),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
                let empty_dir = rec.scratch.join("empty-dir");
                let empty_file = rec.scratch.join("empty-file");
                for rel in &rec.hidden {
                    let is_dir = rec.project.join(rel).is_dir();
                    out.push(bind(
                        if is_dir { &empty_dir } else { &empty_file },
                        view,
                        rel,
                    ));
                }
                for rel in &rec.withheld {
                    out.push(bind(&empty_file, view, rel));
                }
            }
            _ => out.push(Mount {
                target: Some(view.clone()),
                source: Some(rec.scratch.join("copy").display().to_string()),
                typ: Some(MountType::BIND),
                read_only: Some(false),
                ..Default::default()
            }),
        }
    }
    out
}

async fn create_container(
    docker: &Docker,
    profile: &Profile,
    rec: &SessionRecord,
    state_dir: &Path,
) -> Result<(), SandboxError> {
    let labels = HashMap::from([
        (SESSION_LABEL.to_string(), rec.id.clone()),
        (SESSION_DEADLINE_LABEL.to_string(), rec.deadline.to_string()),
        (
            SESSION_STATE_LABEL.to_string(),
            state_dir.display().to_string(),
        ),
        (
            SESSION_SCRATCH_LABEL.to_string(),
            rec.scratch.display().to_string(),
        ),
    ]);
    let body = session_body(profile, &rec.image_id, rec.user, mounts(rec), labels);
    docker
        .create_container(
            Some(
                bollard::query_parameters::CreateContainerOptionsBuilder::new()
                    .name(&rec.container)
                    .build(),
            ),
            body,
        )
        .await
        .map(|_| ())
        .map_err(|e| {
            fail(
                "sandbox.create-failed",
                format!("creating {}: {e}", rec.container),
            )
        })
}

async fn start(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    docker
        .start_container(
            name,
            None::<bollard::query_parameters::StartContainerOptions>,
        )
        .await
        .map_err(|e| fail("sandbox.start-failed", format!("starting {name}: {e}")))
}

async fn stop(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    // The keep-alive shell ignores nothing, but a command left in the background might:
    // the engine kills after the grace period either way.
    let opts = bollard::query_parameters::StopContainerOptionsBuilder::new()
        .t(1)
        .build();
    match docker.stop_container(name, Some(opts)).await {
        Ok(()) => Ok(()),
        // Already stopped, or gone (rebuilt by `ensure_container` afterwards).
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 304 | 404,
            ..
        }) => Ok(()),
        Err(e) => Err(api(format!("stopping {name}"), e)),
    }
}

/// `Some(running)` when the container exists.
async fn running(docker: &Docker, name: &str) -> Result<Option<bool>, SandboxError> {
    match docker.inspect_container(name, None).await {
        Ok(i) => Ok(Some(i.state.and_then(|s| s.running).unwrap_or(false))),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(api(format!("inspecting {name}"), e)),
    }
}

/// Removes everything of a session: container, volume, scratch, record.
async fn teardown(
    docker: &Docker,
    state_dir: &Path,
    rec: &SessionRecord,
) -> Result<(), SandboxError> {
    crate::sandbox::runner::remove(docker, &rec.container).await?;
    if let Some(v) = &rec.volume {
        overlay::remove_volume(docker, v).await?;
    }
    remove_tree(&rec.scratch).map_err(|e| io_fail(rec.scratch.display(), e))?;
    state::remove(state_dir, &rec.id)
}

impl Runner {
    /// Opens the session `cfg.id`: picks up its record (same project and image, not past
    /// its idle deadline) or creates a fresh one. Holds the session lock until the
    /// [`Session`] is dropped, so two users of one id take turns.
    pub fn open_session<'a>(&'a self, cfg: SessionConfig<'a>) -> Result<Session<'a>, SandboxError> {
        let SessionConfig {
            id,
            project: project_in,
            state_dir: state_in,
            scratch_base,
            image_id,
            profile: wanted,
            idle,
            force_mode,
            withhold,
        } = cfg;
        let cfg = Fresh {
            id,
            scratch_base,
            image_id,
            idle,
            force_mode,
        };
        state::validate_id(cfg.id)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state_in)
            .map_err(|e| io_fail(state_in.display(), e))?;
        let state_dir = state_in
            .canonicalize()
            .map_err(|e| io_fail(state_in.display(), e))?;
        let project = project_in
            .canonicalize()
            .map_err(|e| io_fail(project_in.display(), e))?;
        let lock = SessionLock::acquire(&state_dir, cfg.id)?;
        let profile = wanted.clone();
        let now = unix_now(SystemTime::now());
        let (docker, rt) = self.engine();
        if let Some(rec) = state::load(&state_dir, cfg.id)? {
            let usable = rec.project == project
                && rec.image_id == cfg.image_id
                && cfg.force_mode.is_none_or(|m| m == rec.mode)
                && rec.deadline >= now
                && rec.scratch.is_dir();
            if usable {
                let mut s = Session {
                    runner: self,
                    state_dir,
                    profile,
                    withhold,
                    rec,
                    fresh: false,
                    lock,
                };
                s.rec.deadline = now.saturating_add(cfg.idle.as_secs());
                s.rec.idle_secs = cfg.idle.as_secs();
                s.ensure_container()?;
                s.save()?;
                return Ok(s);
            }
            rt.block_on(teardown(docker, &state_dir, &rec))?;
        }
        let rec = self.create_session(&cfg, &project, &state_dir, &profile, now, withhold)?;
        Ok(Session {
            runner: self,
            state_dir,
            profile,
            withhold,
            rec,
            fresh: true,
            lock,
        })
    }

    fn create_session(
        &self,
        cfg: &Fresh<'_>,
        project: &Path,
        state_dir: &Path,
        profile: &Profile,
        now: u64,
        withhold: &mut dyn FnMut(&str) -> bool,
    ) -> Result<SessionRecord, SandboxError> {
        let (docker, rt) = self.engine();
        let base = match cfg.scratch_base {
            Some(b) => b.canonicalize().map_err(|e| io_fail(b.display(), e))?,
            None => std::env::temp_dir()
                .canonicalize()
                .map_err(|e| io_fail("the temp dir", e))?,
        };
        if base.starts_with(project) {
            return Err(fail(
                "sandbox.session-scratch",
                format!(
                    "the scratch area {} lies inside the project: an overlay cannot keep its \
                     upper layer in its lower one, and a copy would copy itself",
                    base.display()
                ),
            ));
        }
        let meta = std::fs::metadata(project).map_err(|e| io_fail(project.display(), e))?;
        let owner = (meta.uid(), meta.gid());
        let mode = cfg
            .force_mode
            .unwrap_or_else(|| choose_mode(owner, profile));
        if mode == CaptureMode::Overlay && (owner.0 == 0 || owner.1 == 0) {
            return Err(fail(
                "sandbox.session-mode",
                "overlay mode runs commands as the project's owner, and this project is \
                 owned by root; use copy mode",
            ));
        }
        let scratch = base.join(format!(
            "contextos-session-{}-{}",
            cfg.id.chars().take(32).collect::<String>(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&scratch)
            .map_err(|e| io_fail(scratch.display(), e))?;
        let mut rec = SessionRecord {
            version: 1,
            id: cfg.id.to_string(),
            mode,
            container: container_name(state_dir, cfg.id),
            volume: None,
            scratch: scratch.clone(),
            project: project.to_path_buf(),
            image_id: cfg.image_id.to_string(),
            user: profile.uid_gid(),
            idle_secs: cfg.idle.as_secs(),
            deadline: now.saturating_add(cfg.idle.as_secs()),
            created: now,
            baseline: BTreeMap::new(),
            fingerprint: BTreeMap::new(),
            withheld: BTreeSet::new(),
            hidden: BTreeSet::new(),
            fallback: None,
        };
        // A container or volume of this name belongs to this state directory and id: a
        // leftover of a session whose record was lost (its process was killed).
        rt.block_on(async {
            crate::sandbox::runner::remove(docker, &rec.container).await?;
            overlay::remove_volume(docker, &rec.container).await
        })?;
        let made = self.populate(&mut rec, state_dir, profile, owner, withhold);
        let made = match made {
            Err(e) if mode == CaptureMode::Overlay && cfg.force_mode.is_none() => {
                // Overlay volumes are not available on every engine (Docker Desktop,
                // rootless Podman, a remote daemon): fall back to copy mode.
                if let Err(t) = rt.block_on(teardown(docker, state_dir, &rec)) {
                    return Err(fail(t.code, format!("{}; then {}", e.message, t.message)));
                }
                rec.fallback = Some(e.message);
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(&scratch)
                    .map_err(|e| io_fail(scratch.display(), e))?;
                rec.mode = CaptureMode::Copy;
                rec.volume = None;
                rec.user = profile.uid_gid();
                self.populate(&mut rec, state_dir, profile, owner, withhold)
            }
            other => other,
        };
        if let Err(e) = made {
            // Nothing of a session that never ran may stay behind; if cleaning up fails
            // too, both reasons are reported.
            if let Err(t) = rt.block_on(teardown(docker, state_dir, &rec)) {
                return Err(fail(e.code, format!("{}; then {}", e.message, t.message)));
            }
            return Err(e);
        }
        state::save(state_dir, &rec)?;
        Ok(rec)
    }

    /// Fills a fresh record for its mode and starts the container.
    fn populate(
        &self,
        rec: &mut SessionRecord,
        state_dir: &Path,
        profile: &Profile,
        owner: (u32, u32),
        withhold: &mut dyn FnMut(&str) -> bool,
    ) -> Result<(), SandboxError> {
        let (docker, rt) = self.engine();
        let project = rec.project.clone();
        let root = SafeRoot::open(&project).map_err(|e| io_fail(project.display(), e.message))?;
        // The fingerprint comes first: a host change made while the baseline is read is
        // then seen by the next sync.
        rec.fingerprint = fingerprint::take(&project).map_err(|e| io_fail(project.display(), e))?;
        match rec.mode {
            CaptureMode::Overlay => {
                rec.user = owner;
                rec.hidden =
                    fingerprint::hidden(&project).map_err(|e| io_fail(project.display(), e))?;
                let (baseline, withheld) = host_baseline(&root, &rec.fingerprint, withhold)?;
                rec.baseline = baseline;
                rec.withheld = withheld;
                let layers = overlay::prepare(&rec.scratch, &project)?;
                let empty_dir = rec.scratch.join("empty-dir");
                std::fs::DirBuilder::new()
                    .mode(0o555)
                    .create(&empty_dir)
                    .map_err(|e| io_fail(empty_dir.display(), e))?;
                let empty_file = rec.scratch.join("empty-file");
                std::fs::write(&empty_file, b"").map_err(|e| io_fail(empty_file.display(), e))?;
                let opts = overlay::mount_options(&project, &layers).ok_or_else(|| {
                    fail(
                        "sandbox.session-overlay",
                        "the project or scratch path cannot be written into overlay options",
                    )
                })?;
                let vol = rec.container.clone();
                rt.block_on(overlay::create_volume(
                    docker, &vol, &rec.id, state_dir, &opts,
                ))?;
                rec.volume = Some(vol);
            }
            CaptureMode::Copy => {
                let copy = rec.scratch.join("copy");
                std::fs::create_dir(&copy).map_err(|e| io_fail(copy.display(), e))?;
                let me = my_ids();
                if me.0 != 0 && profile.user == DEFAULT_USER {
                    // Not root: the sandbox user becomes the invoking user, so the copy
                    // and what the command leaves in it stay removable.
                    rec.user = me;
                }
                let (baseline, withheld) =
                    copy::populate(&root, &copy, withhold, copy_owner(rec.user))
                        .map_err(|e| io_fail("copying the project", e))?;
                rec.baseline = baseline;
                rec.withheld = withheld;
            }
        }
        rt.block_on(async {
            let profile = &crate::sandbox::runner::clamped(docker, profile).await;
            create_container(docker, profile, rec, state_dir).await?;
            start(docker, &rec.container).await
        })
    }
}

fn my_ids() -> (u32, u32) {
    (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    )
}

fn copy_owner(user: (u32, u32)) -> copy::Owner {
    let me = my_ids();
    if me.0 == 0 {
        copy::Owner::Chown(user.0, user.1)
    } else if user == me {
        copy::Owner::Mine
    } else {
        copy::Owner::World
    }
}

impl Runner {
    /// Removes every session in `state_dir` idle past its deadline at `now` (container,
    /// volume, scratch, record), skipping sessions in use, and the orphans of this
    /// state directory (session containers and volumes whose record is gone). Returns
    /// the removed session ids and orphan names.
    pub fn sweep_idle_sessions(
        &self,
        state_dir: &Path,
        now: SystemTime,
    ) -> Result<Vec<String>, SandboxError> {
        let (docker, rt) = self.engine();
        let now = unix_now(now);
        let mut removed = Vec::new();
        let Ok(state_dir) = state_dir.canonicalize() else {
            return Ok(removed);
        };
        for id in state::list(&state_dir)? {
            let Some(lock) = lock::SessionLock::try_acquire(&state_dir, &id)? else {
                continue;
            };
            let Some(rec) = state::load(&state_dir, &id)? else {
                continue;
            };
            if rec.deadline < now {
                rt.block_on(teardown(docker, &state_dir, &rec))?;
                lock.unlink();
                removed.push(id);
            }
        }
        let known: BTreeSet<String> = state::list(&state_dir)?.into_iter().collect();
        let shown = state_dir.display().to_string();
        rt.block_on(async {
            let filter = format!("{SESSION_STATE_LABEL}={shown}");
            let filters = HashMap::from([("label", vec![filter.as_str()])]);
            let list = docker
                .list_containers(Some(
                    bollard::query_parameters::ListContainersOptionsBuilder::new()
                        .all(true)
                        .filters(&filters)
                        .build(),
                ))
                .await
                .map_err(|e| api("listing session containers", e))?;
            for c in list {
                let id = c.labels.as_ref().and_then(|l| l.get(SESSION_LABEL));
                let name = c
                    .names
                    .as_ref()
                    .and_then(|n| n.first())
                    .map(|n| n.trim_start_matches('/').to_string());
                if let (Some(id), Some(name)) = (id, name) {
                    if !known.contains(id) {
                        crate::sandbox::runner::remove(docker, &name).await?;
                        // Only a directory named as the session code names scratch areas:
                        // a label is not trusted to point anywhere else.
                        let scratch = c
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(SESSION_SCRATCH_LABEL))
                            .map(PathBuf::from)
                            .filter(|p| is_scratch_name(p));
                        if let Some(p) = scratch {
                            remove_tree(&p).map_err(|e| io_fail(p.display(), e))?;
                        }
                        removed.push(name);
                    }
                }
            }
            let vols = docker
                .list_volumes(Some(
                    bollard::query_parameters::ListVolumesOptionsBuilder::new()
                        .filters(&filters)
                        .build(),
                ))
                .await
                .map_err(|e| api("listing session volumes", e))?;
            for v in vols.volumes.unwrap_or_default() {
                if v.labels
                    .get(SESSION_LABEL)
                    .is_some_and(|id| !known.contains(id))
                {
                    overlay::remove_volume(docker, &v.name).await?;
                    removed.push(v.name);
                }
            }
            Ok::<(), SandboxError>(())
        })?;
        Ok(removed)
    }

    /// Closes the session `id` (waiting for its current user): removes its container,
    /// volume, scratch and record. Returns whether there was one.
    pub fn close_session(&self, state_dir: &Path, id: &str) -> Result<bool, SandboxError> {
        state::validate_id(id)?;
        let (docker, rt) = self.engine();
        let Ok(state_dir) = state_dir.canonicalize() else {
            return Ok(false);
        };
        let lock = lock::SessionLock::acquire(&state_dir, id)?;
        let existed = match state::load(&state_dir, id)? {
            Some(rec) => {
                rt.block_on(teardown(docker, &state_dir, &rec))?;
                true
            }
            None => false,
        };
        lock.unlink();
        Ok(existed)
    }
}

impl Session<'_> {
    pub fn mode(&self) -> CaptureMode {
        self.rec.mode
    }

    pub fn id(&self) -> &str {
        &self.rec.id
    }

    pub fn container(&self) -> &str {
        &self.rec.container
    }

    /// The session was created by this open (not picked up from its record).
    pub fn fresh(&self) -> bool {
        self.fresh
    }

    /// Why overlay mode was not used although the automatic rule chose it.
    pub fn fallback(&self) -> Option<&str> {
        self.rec.fallback.as_deref()
    }

    /// The `uid:gid` commands run as.
    pub fn user(&self) -> (u32, u32) {
        self.rec.user
    }

    /// The scratch area (upper layer or copy).
    pub fn scratch(&self) -> &Path {
        &self.rec.scratch
    }

    /// The volume of an overlay session.
    pub fn volume(&self) -> Option<&str> {
        self.rec.volume.as_deref()
    }

    fn save(&self) -> Result<(), SandboxError> {
        state::save(&self.state_dir, &self.rec)
    }

    fn upper(&self) -> PathBuf {
        overlay::Layers::of(&self.rec.scratch).upper
    }

    fn copy_dir(&self) -> PathBuf {
        self.rec.scratch.join("copy")
    }

    fn root(&self) -> Result<SafeRoot, SandboxError> {
        SafeRoot::open(&self.rec.project)
            .map_err(|e| io_fail(self.rec.project.display(), e.message))
    }

    /// Makes sure the container (and in overlay mode its volume) exists and runs;
    /// returns whether it had to be started.
    fn ensure_container(&mut self) -> Result<bool, SandboxError> {
        let (docker, rt) = self.runner.engine();
        rt.block_on(async {
            match running(docker, &self.rec.container).await? {
                Some(true) => Ok(false),
                Some(false) => start(docker, &self.rec.container).await.map(|()| true),
                None => {
                    // Gone (engine restarted, removed by hand): the scratch area still
                    // holds the session, so rebuild the container around it.
                    if let (CaptureMode::Overlay, Some(vol)) = (self.rec.mode, &self.rec.volume) {
                        let exists = docker
                            .inspect_volume(vol)
                            .await
                            .map(|_| true)
                            .or_else(|e| if is_not_found(&e) { Ok(false) } else { Err(e) })
                            .map_err(|e| api(format!("inspecting {vol}"), e))?;
                        if !exists {
                            let l = overlay::Layers::of(&self.rec.scratch);
                            let opts =
                                overlay::mount_options(&self.rec.project, &l).ok_or_else(|| {
                                    fail("sandbox.session-overlay", "unusable overlay paths")
                                })?;
                            overlay::create_volume(
                                docker,
                                vol,
                                &self.rec.id,
                                &self.state_dir,
                                &opts,
                            )
                            .await?;
                        }
                    }
                    let profile = crate::sandbox::runner::clamped(docker, &self.profile).await;
                    create_container(docker, &profile, &self.rec, &self.state_dir).await?;
                    start(docker, &self.rec.container).await.map(|()| true)
                }
            }
        })
    }

    /// Brings the session up to date with the host before a command (see the module
    /// docs): returns whether the container was restarted or recreated.
    fn sync(&mut self) -> Result<bool, SandboxError> {
        let project = self.rec.project.clone();
        let new_fp = fingerprint::take(&project).map_err(|e| io_fail(project.display(), e))?;
        let changed = fingerprint::changed(&self.rec.fingerprint, &new_fp);
        let new_hidden = match self.rec.mode {
            CaptureMode::Overlay => {
                fingerprint::hidden(&project).map_err(|e| io_fail(project.display(), e))?
            }
            CaptureMode::Copy => BTreeSet::new(),
        };
        let new_withheld = withheld_of(&new_fp, &mut *self.withhold);
        if changed.is_empty() && new_hidden == self.rec.hidden && new_withheld == self.rec.withheld
        {
            return Ok(false);
        }
        let root = self.root()?;
        let mut paths = changed;
        paths.extend(
            new_withheld
                .symmetric_difference(&self.rec.withheld)
                .cloned(),
        );
        let upper = self.upper();
        let copy_dir = self.copy_dir();
        let view = match self.rec.mode {
            CaptureMode::Overlay => {
                Some(overlay::UpperView::read(&upper).map_err(|e| io_fail(upper.display(), e))?)
            }
            CaptureMode::Copy => None,
        };
        let mut baseline = self.rec.baseline.clone();
        let mut restore = Vec::new();
        let mut restart = false;
        for p in &paths {
            let now_kind = host_kind(&new_fp, p);
            let was_kind = host_kind(&self.rec.fingerprint, p);
            let entryish = |k: Option<Kind>| matches!(k, Some(Kind::File | Kind::Link));
            if !entryish(now_kind) && !entryish(was_kind) {
                // Directories carry no entry (a rename in one changes its mtime); what
                // they hold is judged path by path.
                continue;
            }
            let h = changes::host_entry(&root, p, &new_withheld)
                .map_err(|e| io_fail("reading the project", e))?;
            let b = self.rec.baseline.get(p);
            let w = match &view {
                Some(v) => v.obs(p).map_err(|e| io_fail(upper.display(), e))?,
                None => {
                    Some(copy::obs_at(&copy_dir, p).map_err(|e| io_fail(copy_dir.display(), e))?)
                }
            };
            match w {
                // The lower layer shows through: right after a remount.
                None => {
                    restart = true;
                    set_entry(&mut baseline, p, h);
                }
                Some(w) if w.shows(h.as_ref()) => set_entry(&mut baseline, p, h),
                Some(w) if w.shows(b) => {
                    restore.push((p.clone(), b.cloned()));
                    set_entry(&mut baseline, p, h);
                }
                // A change of the session the host change conflicts with: it stays, and
                // its precondition (the old baseline) makes the journal refuse it.
                Some(_) => {}
            }
        }
        let mut restarted = false;
        let (docker, rt) = self.runner.engine();
        match self.rec.mode {
            CaptureMode::Overlay => {
                let recreate = new_hidden != self.rec.hidden || new_withheld != self.rec.withheld;
                if recreate || restart || !restore.is_empty() {
                    let name = self.rec.container.clone();
                    rt.block_on(async {
                        if recreate {
                            crate::sandbox::runner::remove(docker, &name).await
                        } else {
                            stop(docker, &name).await
                        }
                    })?;
                    for (p, b) in &restore {
                        let done = overlay::restore(&upper, &project, p, false)
                            .map_err(|e| io_fail(format!("resetting {p} in the session"), e))?;
                        if !done {
                            set_entry(&mut baseline, p, b.clone());
                        }
                    }
                    self.rec.hidden = new_hidden;
                    self.rec.withheld = new_withheld;
                    // Recreated (the mounts changed) or started again: either way the
                    // volume is mounted afresh.
                    self.ensure_container()?;
                    restarted = true;
                }
            }
            CaptureMode::Copy => {
                let owner = copy_owner(self.rec.user);
                for (p, b) in &restore {
                    let done = copy::restore(&root, &copy_dir, p, &new_withheld, owner, false)
                        .map_err(|e| io_fail(format!("syncing {p} into the session"), e))?;
                    if !done {
                        set_entry(&mut baseline, p, b.clone());
                    }
                }
                self.rec.withheld = new_withheld;
            }
        }
        self.rec.baseline = baseline;
        self.rec.fingerprint = new_fp;
        self.save()?;
        Ok(restarted)
    }

    /// Runs `argv` in the session after bringing it up to date with the host;
    /// `on_output` sees each kept chunk as it arrives. Output past the profile's cap is
    /// counted and hashed, not kept.
    pub fn exec(
        &mut self,
        argv: &[String],
        opts: ExecOptions,
        on_output: &mut dyn FnMut(Stream, &[u8]),
    ) -> Result<ExecOutcome, SandboxError> {
        if argv.is_empty() {
            return Err(fail("sandbox.session-argv", "no command to run"));
        }
        let view = host_view(&self.rec.project).unwrap_or_else(|| WORKSPACE.to_string());
        let workdir = exec::workdir(&view, opts.workdir.as_deref())?;
        let mut restarted = self.sync()?;
        restarted |= self.ensure_container()?;
        let deadline = unix_now(SystemTime::now()).saturating_add(self.rec.idle_secs);
        // The record is fsynced on every save; within the same second the deadline has
        // not moved and the write would only cost latency.
        if deadline != self.rec.deadline {
            self.rec.deadline = deadline;
            self.save()?;
        }
        let timeout = opts
            .timeout
            .map_or(self.profile.timeout, |t| t.min(self.profile.timeout));
        let req = exec::Request {
            container: &self.rec.container,
            user: self.rec.user,
            workdir,
            env: crate::sandbox::spec::environment(&self.profile),
            argv,
            cap: self.profile.output,
            timeout,
            handle_signals: opts.handle_signals,
        };
        let (docker, rt) = self.runner.engine();
        let mut out = rt.block_on(exec::run(docker, req, on_output))?;
        out.restarted = restarted;
        Ok(out)
    }

    /// The changeset since the last sync.
    pub fn pending(&mut self) -> Result<Pending, SandboxError> {
        let obs: BTreeMap<String, Obs> = match self.rec.mode {
            CaptureMode::Overlay => {
                let upper = self.upper();
                overlay::UpperView::read(&upper)
                    .and_then(|v| v.all(&self.rec.baseline))
                    .map_err(|e| io_fail(upper.display(), e))?
            }
            CaptureMode::Copy => {
                let copy = self.copy_dir();
                copy::scan(&copy, &self.rec.baseline).map_err(|e| io_fail(copy.display(), e))?
            }
        };
        let ignores = ignore::Ignores::load(&self.rec.project);
        changes::classify(
            &self.rec.baseline,
            &obs,
            &self.rec.withheld,
            &ignores,
            self.profile.results,
        )
        .map_err(|e| io_fail("reading the session's changes", e))
    }

    /// The caller applied `p` on the host through the journal: its changes become the
    /// synced baseline, so they are not reported again.
    pub fn accept(&mut self, p: &Pending) -> Result<(), SandboxError> {
        changes::accept_into(&mut self.rec.baseline, p);
        self.save()
    }

    /// The caller refused `p`: its paths (changes and refused entries) are reset in the
    /// session to the host's state, so the next command neither sees nor re-reports
    /// them. Overlay mode stops the container for the reset and starts it again.
    pub fn discard(&mut self, p: &Pending) -> Result<(), SandboxError> {
        let mut paths: BTreeSet<String> = p.changes.iter().map(|c| c.path().to_string()).collect();
        paths.extend(p.refused.iter().map(|r| r.path.clone()));
        if paths.is_empty() {
            return Ok(());
        }
        let root = self.root()?;
        let project = self.rec.project.clone();
        let (docker, rt) = self.runner.engine();
        match self.rec.mode {
            CaptureMode::Overlay => {
                let upper = self.upper();
                rt.block_on(stop(docker, &self.rec.container))?;
                for rel in &paths {
                    overlay::restore(&upper, &project, rel, true)
                        .map_err(|e| io_fail(format!("resetting {rel} in the session"), e))?;
                }
                self.ensure_container()?;
            }
            CaptureMode::Copy => {
                let copy = self.copy_dir();
                let owner = copy_owner(self.rec.user);
                for rel in &paths {
                    copy::restore(&root, &copy, rel, &self.rec.withheld, owner, true)
                        .map_err(|e| io_fail(format!("resetting {rel} in the session"), e))?;
                }
            }
        }
        for rel in &paths {
            let h = changes::host_entry(&root, rel, &self.rec.withheld)
                .map_err(|e| io_fail("reading the project", e))?;
            set_entry(&mut self.rec.baseline, rel, h);
        }
        self.save()
    }

    /// Ends the session: container, volume, scratch and record are removed.
    pub fn close(self) -> Result<(), SandboxError> {
        let (docker, rt) = self.runner.engine();
        rt.block_on(teardown(docker, &self.state_dir, &self.rec))?;
        self.lock.unlink();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_print_and_serialize_in_lowercase() {
        assert_eq!(CaptureMode::Overlay.to_string(), "overlay");
        assert_eq!(
            serde_json::to_string(&CaptureMode::Copy).unwrap(),
            "\"copy\""
        );
        assert_eq!(
            serde_json::from_str::<CaptureMode>("\"overlay\"").unwrap(),
            CaptureMode::Overlay
        );
    }

    #[test]
    fn container_names_differ_per_state_directory_and_stay_short() {
        let a = container_name(Path::new("/p1/.contextos/state/sessions"), "agent");
        let b = container_name(Path::new("/p2/.contextos/state/sessions"), "agent");
        assert_ne!(a, b);
        assert!(a.starts_with("ctx-s-agent-"));
        let long = container_name(Path::new("/p"), &"x".repeat(128));
        assert!(long.len() <= 6 + 40 + 1 + 12, "{long}");
    }

    #[test]
    fn only_session_scratch_names_are_removed_from_a_label() {
        assert!(is_scratch_name(Path::new("/tmp/contextos-session-a-1234")));
        assert!(!is_scratch_name(Path::new("/home/user")));
        assert!(!is_scratch_name(Path::new("contextos-session-a")));
    }

    #[test]
    fn the_project_is_also_seen_at_its_host_path_unless_the_container_needs_that_path() {
        for ok in [
            "/home/me/proj",
            "/tmp/x",
            "/srv/git/repo",
            "/usr/src/app",
            "/work/main",
        ] {
            assert_eq!(host_view(Path::new(ok)).as_deref(), Some(ok), "{ok}");
        }
        assert_eq!(
            host_view(Path::new("/home/me/proj/")).as_deref(),
            Some("/home/me/proj")
        );
        for no in [
            "/",
            "/tmp",
            "/usr",
            "/etc",
            "/home",
            "/proc/1",
            "/sys/x",
            "/dev/shm/p",
            "/workspace",
            "/workspace/sub",
            "/home/sandbox",
            "/home/sandbox/p",
            "relative",
        ] {
            assert_eq!(host_view(Path::new(no)), None, "{no}");
        }
    }
}

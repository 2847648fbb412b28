//! The compiled-policy cache for short-lived processes (agent hooks).
//!
//! `.contextos/state/policy.cache` holds a policy snapshot keyed by the sha256 of every
//! input that shaped it: the cache format, this binary (version, size and modification
//! time), the configuration that affects compilation, and every policy source with its
//! name and layer (the embedded stdlib included). A cache is used only when its key
//! matches and its HMAC — made with the user's key, kept outside the repository —
//! verifies; anything else (stale, foreign, truncated, edited) is ignored and rebuilt
//! from source. A cache is never a reason to trust a policy the sources do not contain.
//!
//! Checking that key means reading and hashing every source and MAC-ing the whole cache:
//! work that grows with the policy, on every tool call. So a verified cache gets a
//! *stamp* beside it (`policy.cache.stamp`, MAC'd with its own derived key): the key, and
//! what the file system says of every input and of the cache file itself — device, inode,
//! size, modification and change times. While all of them are unchanged, the sources are
//! not read, the cache is not re-MAC'd and its snapshot is decoded lazily: loading costs a
//! few `stat` calls whatever the policy's size. The change time (`ctime`) is what makes
//! this sound: every write, rename or `touch` sets it to the current time, and no process
//! can set it back. As in git's "racily clean" rule, nothing is stamped while any of the
//! files changed less than [`RACY`] ago, so an edit within the same clock tick as the
//! stamp's reading cannot hide behind equal times.

use crate::project::{Project, ProjectError};
use contextos_engine::effects::atomic_write;
use contextos_engine::effects::user_key::UserKey;
use contextos_engine::snapshot::{SnapshotParts, SNAPSHOT_FORMAT};
use contextos_engine::{BuildOutput, Layer, PolicySet, PolicySource};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::path::Path;

const MAGIC: &[u8; 8] = b"CTXPC\x00\x01\n";
const STAMP_MAGIC: &[u8; 8] = b"CTXPS\x00\x01\n";
/// How old every input and the cache must be before a stamp vouches for them: far above
/// any file system's timestamp granularity (FAT's 2 s included).
const RACY: std::time::Duration = std::time::Duration::from_secs(3);
const HEADER: usize = 8 + 32 + 32;

/// How the policy set was obtained, for the decision log and the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    /// A valid cache entry was loaded.
    Hit,
    /// Compiled from source; the cache was then written.
    Rebuilt,
    /// Compiled from source; the cache could not be used or written (reason in `note`).
    Bypassed,
}

impl CacheStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheStatus::Hit => "hit",
            CacheStatus::Rebuilt => "rebuilt",
            CacheStatus::Bypassed => "bypassed",
        }
    }
}

/// A policy set ready to decide, or the compile output that explains why not.
#[derive(Debug)]
pub enum Loaded {
    Ready {
        set: PolicySet,
        status: CacheStatus,
        /// Why the cache was not used, when it was not.
        note: Option<String>,
    },
    Invalid(BuildOutput),
}

/// The project's policies alone, and with its verified plugin packs: two entries, so
/// the set that judges packs is cached too.
const BASE_CACHE: &str = ".contextos/state/policy.cache";
const FULL_CACHE: &str = ".contextos/state/policy-plugins.cache";

/// The cache key: everything that can change the compiled set.
fn key(project: &Project, sources: &[PolicySource]) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"contextos-policy-cache");
    field(&SNAPSHOT_FORMAT.to_le_bytes());
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(binary_identity().as_bytes());
    field(&[u8::from(project.config.policies.stdlib)]);
    for id in &project.config.policies.disable {
        field(id.as_bytes());
    }
    for s in sources {
        field(format!("{:?}", s.layer).as_bytes());
        field(s.name.as_bytes());
        // A file of the stdlib embedded in this binary is named, not hashed: the binary's
        // identity above already stands for everything it embeds, and hashing its 330 KB
        // was a twelfth of a cold hook. Any other text, a stdlib file included that
        // differs by a byte, is hashed whole.
        if embedded(s) {
            field(b"embedded");
        } else {
            field(b"text");
            field(s.text.as_bytes());
        }
    }
    h.finalize().into()
}

/// Whether `s` is, byte for byte, the file of the embedded stdlib it is named after.
fn embedded(s: &PolicySource) -> bool {
    // The embedded text itself (borrowed, not copied) is known equal without comparing it.
    let same =
        |text: &str| std::ptr::eq(text, s.text.as_ref()) || text.as_bytes() == s.text.as_bytes();
    s.layer == Layer::Stdlib
        && contextos_engine::stdlib::FILES
            .iter()
            .any(|(name, text)| *name == s.name && same(text))
}

/// Distinguishes builds of the same version: a rebuilt binary may encode its IR
/// differently, so its caches must not be read by another build. The identity is the
/// installation's — both binaries beside each other, `contextos` (agent hooks) and
/// `contextos-full` (`scan`), built together — so the two share one cache instead of
/// each rebuilding it after the other ran.
fn binary_identity() -> String {
    let Ok(exe) = std::env::current_exe() else {
        // Unknown identity: a random value, so no cache written by this process can be
        // read by another one.
        return uuid::Uuid::new_v4().to_string();
    };
    let file = |name: &str| match std::fs::metadata(exe.with_file_name(name)) {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{mtime}", m.len())
        }
        Err(_) => "absent".to_string(),
    };
    let own = exe.file_name().map(|n| n.to_string_lossy().into_owned());
    // A binary under another name (a renamed copy) still counts itself.
    let mut names = vec![
        crate::support::binaries::FRONT.to_string(),
        crate::support::binaries::COMPANION.to_string(),
    ];
    if let Some(own) = own.filter(|n| !names.contains(n)) {
        names.push(own);
    }
    names.iter().map(|n| file(n)).collect::<Vec<_>>().join("+")
}

/// Why a cache entry was not used, or not written: the load's note, never an error
/// (the set is compiled from source instead).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheMiss {
    #[error("no cache yet")]
    Absent,
    #[error("cannot read the cache: {0}")]
    Unreadable(std::io::Error),
    #[error("the cache is truncated")]
    Truncated,
    #[error("the cache is not a ContextOS policy cache of this format")]
    Foreign,
    #[error("the cache is stale (policies, configuration or binary changed)")]
    Stale,
    #[error("the cache's MAC does not verify (edited or foreign)")]
    Forged,
    #[error("the user key cannot key the cache MAC")]
    Key,
    #[error("{0}")]
    Snapshot(contextos_engine::snapshot::SnapshotError),
    #[error("{}: {error}", path.display())]
    Write {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
}

/// The cache's own MAC key, derived from the user key so a MAC made for one purpose
/// (the decision log's head) can never stand in for another.
fn cache_mac(user_key: &UserKey) -> Result<Hmac<Sha256>, CacheMiss> {
    let derived = user_key.derive(b"contextos policy cache v1");
    Hmac::<Sha256>::new_from_slice(&derived).map_err(|_| CacheMiss::Key)
}

fn mac<'a>(
    user_key: &UserKey,
    key: &[u8; 32],
    payload: impl IntoIterator<Item = &'a [u8]>,
) -> Option<[u8; 32]> {
    let mut m = cache_mac(user_key).ok()?;
    m.update(key);
    for chunk in payload {
        m.update(chunk);
    }
    Some(m.finalize().into_bytes().into())
}

/// The bytes of the cache file made for `key` and what the file system said of it once
/// they were read. The header is read first: a cache made for other sources (the usual
/// cold call, after a policy edit) is refused without reading its third of a megabyte.
fn read_file(path: &Path, key: &[u8; 32]) -> Result<(Vec<u8>, Option<FileStat>), CacheMiss> {
    use std::io::Read;
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(CacheMiss::Absent),
        Err(e) => return Err(CacheMiss::Unreadable(e)),
    };
    let mut bytes = Vec::new();
    (&mut file)
        .take(HEADER as u64)
        .read_to_end(&mut bytes)
        .map_err(CacheMiss::Unreadable)?;
    check_header(&bytes, key)?;
    file.read_to_end(&mut bytes)
        .map_err(CacheMiss::Unreadable)?;
    // Taken after the read, on the same open file: a change made while reading shows.
    let stat = file.metadata().ok().as_ref().and_then(FileStat::of);
    Ok((bytes, stat))
}

fn read_cache(
    path: &Path,
    key: &[u8; 32],
    user_key: &UserKey,
) -> Result<(PolicySet, Option<FileStat>), CacheMiss> {
    let (bytes, stat) = read_file(path, key)?;
    Ok((decode(bytes, key, user_key)?, stat))
}

/// Whether `bytes` start with the header of a cache of this format made for `key`.
fn check_header(bytes: &[u8], key: &[u8; 32]) -> Result<(), CacheMiss> {
    let (Some(magic), Some(stored_key)) = (bytes.get(..8), bytes.get(8..40)) else {
        return Err(CacheMiss::Truncated);
    };
    if magic != MAGIC {
        return Err(CacheMiss::Foreign);
    }
    if stored_key != key {
        return Err(CacheMiss::Stale);
    }
    Ok(())
}

/// The policy set a cache file's bytes hold, if they are a cache this key and user key
/// made. Apart from the file read so that the fuzz target (`fuzz/`) can feed it any byte
/// string.
pub(crate) fn decode(
    bytes: Vec<u8>,
    key: &[u8; 32],
    user_key: &UserKey,
) -> Result<PolicySet, CacheMiss> {
    check_header(&bytes, key)?;
    let (Some(stored_mac), Some(payload)) = (bytes.get(40..HEADER), bytes.get(HEADER..)) else {
        return Err(CacheMiss::Truncated);
    };
    // Compared through the MAC type, in constant time.
    let mut m = cache_mac(user_key)?;
    m.update(key);
    m.update(payload);
    m.verify_slice(stored_mac).map_err(|_| CacheMiss::Forged)?;
    PolicySet::from_snapshot_shared(
        std::sync::Arc::new(bytes),
        HEADER,
        embedded_detectors().as_ref(),
    )
    .map_err(CacheMiss::Snapshot)
}

/// The stdlib's detectors this binary embeds, which a cache refers to instead of holding
/// a copy (half of a stdlib-only cache, written and MAC'd by every cold hook).
/// The cache key names this binary, so a cache is read only by a binary holding the same
/// detectors; the snapshot names them by digest besides, and is refused where they differ.
fn embedded_detectors() -> Option<contextos_engine::snapshot::EmbeddedDetectors> {
    contextos_engine::core::build::embedded_detectors(contextos_engine::stdlib::PRECOMPILED)
}

/// The bytes of a cache file holding `set`: the counterpart of [`decode`].
pub(crate) fn encode(
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<Vec<u8>, CacheMiss> {
    let (header, payload) = sealed(key, user_key, set)?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(&header);
    payload.chunks().for_each(|c| bytes.extend_from_slice(c));
    Ok(bytes)
}

/// A cache file's two parts: its header (magic, key, MAC) and the snapshot it vouches
/// for, in the encoder's parts, written one after the other so the snapshot is never
/// copied into one buffer, let alone behind a header.
fn sealed(
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<(Vec<u8>, SnapshotParts), CacheMiss> {
    let payload = encoded(set)?;
    let tag = mac(user_key, key, payload.chunks()).ok_or(CacheMiss::Key)?;
    Ok((header(key, &tag), payload))
}

fn encoded(set: &PolicySet) -> Result<SnapshotParts, CacheMiss> {
    set.to_snapshot_parts(embedded_detectors().as_ref())
        .map_err(CacheMiss::Snapshot)
}

fn header(key: &[u8; 32], tag: &[u8; 32]) -> Vec<u8> {
    [MAGIC.as_slice(), key, tag].concat()
}

fn write_cache(
    path: &Path,
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<(), CacheMiss> {
    let (header, payload) = sealed(key, user_key, set)?;
    write_parts(path, &header, &payload)
}

fn write_parts(path: &Path, header: &[u8], payload: &SnapshotParts) -> Result<(), CacheMiss> {
    let at = |p: &Path| {
        let path = p.to_path_buf();
        move |error| CacheMiss::Write { path, error }
    };
    // A cache path always has a parent: it is joined onto the project root.
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir).map_err(at(dir))?;
    // Hooks run concurrently: each writes its own temporary file and renames it over the
    // cache, so a reader sees either the old or the new file, never a mix. Not fsynced: a
    // cache lost or torn by a power cut fails its key or MAC and is rebuilt.
    let parts: Vec<&[u8]> = std::iter::once(header).chain(payload.chunks()).collect();
    atomic_write::replace_cache(path, &parts, 0o600).map_err(at(path))?;
    Ok(())
}

/// A cache file encoded but not yet MAC'd and written, from [`load_deferring_write`]:
/// the hook decides while another thread finishes it.
pub struct CacheWrite {
    path: std::path::PathBuf,
    key: [u8; 32],
    /// The MAC, keyed and fed the cache key; the snapshot follows.
    mac: Hmac<Sha256>,
    payload: SnapshotParts,
}

impl CacheWrite {
    /// MACs and writes the cache on a thread of its own (on this one if no thread can be
    /// started). The handle waits for the write when finished or dropped: a process that
    /// ended mid-write would leave its temporary file behind.
    pub fn start(self) -> Writing {
        let job = std::sync::Arc::new(std::sync::Mutex::new(Some(self)));
        let theirs = std::sync::Arc::clone(&job);
        let run = |job: &std::sync::Mutex<Option<CacheWrite>>| {
            let taken = job.lock().ok().and_then(|mut held| held.take());
            taken.map_or(Ok(()), CacheWrite::run)
        };
        let state = match std::thread::Builder::new().spawn(move || run(&theirs)) {
            Ok(handle) => Pending::Thread(handle),
            Err(_) => Pending::Done(run(&job)),
        };
        Writing(Some(state))
    }

    fn run(self) -> Result<(), String> {
        let CacheWrite {
            path,
            key,
            mut mac,
            payload,
        } = self;
        payload.chunks().for_each(|c| mac.update(c));
        let tag: [u8; 32] = mac.finalize().into_bytes().into();
        write_parts(&path, &header(&key, &tag), &payload).map_err(|e| e.to_string())
    }
}

/// A [`CacheWrite`] under way.
pub struct Writing(Option<Pending>);

enum Pending {
    Thread(std::thread::JoinHandle<Result<(), String>>),
    Done(Result<(), String>),
}

impl Writing {
    /// Waits for the write; why the cache was not written, if it was not.
    pub fn finish(mut self) -> Result<(), String> {
        self.wait()
    }

    fn wait(&mut self) -> Result<(), String> {
        match self.0.take() {
            None => Ok(()),
            Some(Pending::Done(result)) => result,
            Some(Pending::Thread(handle)) => handle
                .join()
                .unwrap_or_else(|_| Err("writing the cache failed".into())),
        }
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        let _ = self.wait();
    }
}

/// What the file system says of a file: equal stats mean unchanged content, because a
/// change of content always moves `ctime` (see the module comment).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FileStat {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStat {
    #[cfg(unix)]
    fn of(m: &std::fs::Metadata) -> Option<FileStat> {
        use std::os::unix::fs::MetadataExt;
        Some(FileStat {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// Without a change time nothing can be stamped: every load checks the sources.
    #[cfg(not(unix))]
    fn of(_: &std::fs::Metadata) -> Option<FileStat> {
        None
    }

    fn path(p: &Path) -> Option<FileStat> {
        FileStat::of(&std::fs::metadata(p).ok()?)
    }

    /// Whether the file last changed more than [`RACY`] before `now`.
    fn settled(&self, now: std::time::SystemTime) -> bool {
        let Ok(now) = now.duration_since(std::time::UNIX_EPOCH) else {
            return false;
        };
        let (Ok(secs), Ok(nanos)) = (u64::try_from(self.ctime.0), u32::try_from(self.ctime.1))
        else {
            return false;
        };
        std::time::Duration::new(secs, nanos.min(999_999_999)) + RACY < now
    }
}

/// The stat of every file a cache's key depends on, beside the binary's identity: the
/// configuration, the project's policy files and the pinned packs' policy files. `None`
/// when one cannot be read (then the sources are read and hashed, as without a stamp).
fn inputs(project: &Project, packs: &[String]) -> Option<Vec<(String, Option<FileStat>)>> {
    let mut out = Vec::new();
    // An absent configuration is an input too: creating one changes the key.
    let config = project.root.join("contextos.toml");
    out.push(("contextos.toml".to_string(), FileStat::path(&config)));
    for (name, path) in project.policy_files().ok()? {
        out.push((name, Some(FileStat::path(&path)?)));
    }
    for pack in packs {
        for (name, path) in crate::plugins::pack_policies(&project.root, pack).ok()? {
            out.push((format!("{pack}:{name}"), Some(FileStat::path(&path)?)));
        }
    }
    Some(out)
}

#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    /// The cache key (hex) the sources had when the stamp was made.
    key: String,
    /// The binary and format that read them.
    binary: String,
    inputs: Vec<(String, Option<FileStat>)>,
    cache: FileStat,
}

fn stamp_path(cache: &Path) -> std::path::PathBuf {
    let mut name = cache.as_os_str().to_owned();
    name.push(".stamp");
    name.into()
}

fn stamp_mac(user_key: &UserKey) -> Option<Hmac<Sha256>> {
    Hmac::<Sha256>::new_from_slice(&user_key.derive(b"contextos policy cache stamp v1")).ok()
}

fn binary_tag() -> String {
    format!(
        "{}/{SNAPSHOT_FORMAT}/{}",
        env!("CARGO_PKG_VERSION"),
        binary_identity()
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The set a stamped cache holds, when the stamp verifies and every file is as it says;
/// `None` sends the caller down the checked path.
fn stamped(
    cache: &Path,
    inputs: &[(String, Option<FileStat>)],
    user_key: &UserKey,
) -> Option<PolicySet> {
    let raw = std::fs::read(stamp_path(cache)).ok()?;
    let (magic, rest) = raw.split_at_checked(8)?;
    let (tag, json) = rest.split_at_checked(32)?;
    if magic != STAMP_MAGIC {
        return None;
    }
    let mut m = stamp_mac(user_key)?;
    m.update(json);
    m.verify_slice(tag).ok()?;
    let stamp: Stamp = serde_json::from_slice(json).ok()?;
    if stamp.inputs != inputs || stamp.binary != binary_tag() {
        return None;
    }
    let file = InPlace::open(cache, stamp.cache)?;
    let mut header = [0u8; 40];
    contextos_engine::core::ReadAt::read_at(&file, 0, &mut header).ok()?;
    if header.get(..8)? != MAGIC || hex(header.get(8..40)?) != stamp.key {
        return None;
    }
    let total = file.stat.size;
    PolicySet::from_snapshot_reader(
        std::sync::Arc::new(file),
        HEADER as u64,
        total,
        embedded_detectors().as_ref(),
    )
    .ok()
}

/// A stamped cache file, read in place: the head when loading, then each section or
/// rule when a request first needs it, so a hook reads a few kilobytes of a snapshot of
/// 10,000 rules instead of its 2 MB. The bytes are not MAC'd on this path — the stamp
/// vouches for the file as it was (same inode, size and change time) — so every read is
/// followed by a stat of the same open file: a write in place, before or during the
/// read, moves the change time, which cannot be set back, and the read is refused (what
/// it would have held reads as damaged: a deny).
#[derive(Debug)]
struct InPlace {
    file: std::fs::File,
    stat: FileStat,
}

impl InPlace {
    /// The cache file, if it is still the one the stamp describes.
    fn open(path: &Path, stamped: FileStat) -> Option<InPlace> {
        let file = std::fs::File::open(path).ok()?;
        let stat = file.metadata().ok().as_ref().and_then(FileStat::of)?;
        (stat == stamped).then_some(InPlace { file, stat })
    }
}

impl contextos_engine::core::ReadAt for InPlace {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Result<(), String> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file
                .read_exact_at(buf, at)
                .map_err(|e| format!("the policy cache cannot be read: {e}"))?;
            let now = self.file.metadata().ok().as_ref().and_then(FileStat::of);
            if now.as_ref() != Some(&self.stat) {
                return Err("the policy cache changed while it was read".to_string());
            }
            Ok(())
        }
        // Without a change time nothing is stamped (see `FileStat::of`): never reached.
        #[cfg(not(unix))]
        {
            let _ = (at, buf);
            Err("reading the policy cache in place needs a Unix file system".to_string())
        }
    }
}

/// Stamps a cache just verified the long way, unless a file changed too recently for its
/// times to be trusted (the next load tries again). Best effort: without a stamp, loads
/// stay correct, only slower.
fn stamp(
    cache: &Path,
    key: &[u8; 32],
    inputs: &[(String, Option<FileStat>)],
    cache_stat: FileStat,
    user_key: &UserKey,
) {
    let now = std::time::SystemTime::now();
    let settled = cache_stat.settled(now)
        && inputs
            .iter()
            .all(|(_, s)| s.as_ref().is_none_or(|s| s.settled(now)));
    if !settled {
        return;
    }
    let stamp = Stamp {
        key: hex(key),
        binary: binary_tag(),
        inputs: inputs.to_vec(),
        cache: cache_stat,
    };
    let (Ok(json), Some(mut m)) = (serde_json::to_vec(&stamp), stamp_mac(user_key)) else {
        return;
    };
    m.update(&json);
    let mut bytes = STAMP_MAGIC.to_vec();
    bytes.extend_from_slice(&m.finalize().into_bytes());
    bytes.extend_from_slice(&json);
    // A stamp names the cache file's inode and times: one that outlives its cache after a
    // power cut no longer matches it, and one lost or torn fails its MAC.
    let _ = atomic_write::replace_cache(&stamp_path(cache), &[&bytes], 0o600);
}

/// Loads the project's policy set for a hook: from a stamped cache when nothing changed
/// since it was stamped, else from the cache when it is valid, from source otherwise
/// (glob sets compile lazily either way).
pub fn load(project: &Project, user_key: Option<&UserKey>) -> Result<Loaded, ProjectError> {
    load_with(project, user_key, false).map(|(loaded, _)| loaded)
}

/// [`load`], except that a cache to be rebuilt comes back encoded but not yet written:
/// its MAC and write (about a tenth of a cold hook call with a project of its own) can
/// run while the caller decides. The set is ready either way; `status` says `rebuilt`
/// for a write still to make, and [`Writing::finish`] says if it failed.
pub fn load_deferring_write(
    project: &Project,
    user_key: Option<&UserKey>,
) -> Result<(Loaded, Option<CacheWrite>), ProjectError> {
    load_with(project, user_key, true)
}

fn load_with(
    project: &Project,
    user_key: Option<&UserKey>,
    defer: bool,
) -> Result<(Loaded, Option<CacheWrite>), ProjectError> {
    let names = project.pinned_plugins()?;
    let file = if names.is_empty() {
        BASE_CACHE
    } else {
        FULL_CACHE
    };
    let cache = project.root.join(file);
    // Taken before any source is read: a change made after this shows in the next load.
    let inputs = inputs(project, &names);
    let stamped = match (user_key, &inputs) {
        (Some(uk), Some(inputs)) => stamped(&cache, inputs, uk),
        _ => None,
    };
    let (loaded, write) = match stamped {
        Some(set) => (
            Loaded::Ready {
                set,
                status: CacheStatus::Hit,
                note: Some("stamped: sources unchanged, not read".into()),
            },
            None,
        ),
        None => {
            let base = project.base_sources()?;
            // One set serves both jobs: the packs' own files cannot touch plugin verdicts
            // (E0120), so the full set judges the packs exactly as the project's policies
            // alone would; and the set is used only once every pack has been verified and
            // allowed.
            let sources = if names.is_empty() {
                base
            } else {
                project.add_pack_sources(base, &names)?
            };
            let inputs = inputs.as_deref();
            load_sources(project, &sources, &cache, user_key, inputs, defer)?
        }
    };
    if let (false, Loaded::Ready { set, .. }) = (names.is_empty(), &loaded) {
        if let Err(e) = project.verify_plugins(set) {
            // Written as a plain load writes it, before the packs are judged: the next
            // call judges them again from the cache instead of compiling.
            if let Some(w) = write {
                let _ = w.run();
            }
            return Err(e);
        }
    }
    Ok((loaded, write))
}

fn load_sources(
    project: &Project,
    sources: &[PolicySource],
    path: &Path,
    user_key: Option<&UserKey>,
    inputs: Option<&[(String, Option<FileStat>)]>,
    defer: bool,
) -> Result<(Loaded, Option<CacheWrite>), ProjectError> {
    let key = key(project, sources);
    let mut note: Option<String>;
    if let Some(uk) = user_key {
        match read_cache(path, &key, uk) {
            Ok((set, stat)) => {
                if let (Some(inputs), Some(stat)) = (inputs, stat) {
                    stamp(path, &key, inputs, stat, uk);
                }
                let status = CacheStatus::Hit;
                return Ok((
                    Loaded::Ready {
                        set,
                        status,
                        note: None,
                    },
                    None,
                ));
            }
            Err(why) => note = Some(why.to_string()),
        }
    } else {
        note = Some("no user key to authenticate a cache".into());
    }
    // The stdlib starts from its precompiled image: a cold call compiles only the project's
    // own files (and its packs'), with the same set and diagnostics as a full build.
    let (out, used) = project.build_lazily(sources);
    // How the stdlib was compiled, for `--trace`: planted from the image, or from source
    // and why.
    if project.config.policies.stdlib {
        note = Some(match note {
            Some(n) => format!("{n}; {used}"),
            None => used.to_string(),
        });
    }
    if out.has_errors() {
        return Ok((Loaded::Invalid(out), None));
    }
    let Some(set) = out.policy else {
        return Ok((Loaded::Invalid(out), None));
    };
    let mut write = None;
    let written = match user_key {
        None => None,
        Some(uk) if defer => Some(deferred(path, &key, uk, &set).map(|w| write = Some(w))),
        Some(uk) => Some(write_cache(path, &key, uk, &set)),
    };
    let status = match written {
        Some(Ok(())) => CacheStatus::Rebuilt,
        Some(Err(e)) => {
            note = Some(format!("cannot write the cache: {e}"));
            CacheStatus::Bypassed
        }
        None => CacheStatus::Bypassed,
    };
    Ok((Loaded::Ready { set, status, note }, write))
}

/// The cache for `set`, encoded now (the encoder reads the set) and keyed, the rest left
/// to [`CacheWrite::start`].
fn deferred(
    path: &Path,
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<CacheWrite, CacheMiss> {
    let payload = encoded(set)?;
    let mut mac = cache_mac(user_key)?;
    mac.update(key);
    Ok(CacheWrite {
        path: path.to_path_buf(),
        key: *key,
        mac,
        payload,
    })
}

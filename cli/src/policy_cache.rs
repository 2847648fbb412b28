//! The compiled-policy cache for short-lived processes (agent hooks).
//!
//! `.contextos/state/policy.cache` holds a policy snapshot keyed by the sha256 of every
//! input that shaped it: the cache format, this binary (version, size and modification
//! time), the configuration that affects compilation, and every policy source with its
//! name and layer (the embedded stdlib included). A cache is used only when its key
//! matches and its HMAC — made with the user's key, kept outside the repository —
//! verifies; anything else (stale, foreign, truncated, edited) is ignored and rebuilt
//! from source. A cache is never a reason to trust a policy the sources do not contain.

use crate::project::{Project, ProjectError};
use contextos_engine::effects::atomic_write::{self, Publish};
use contextos_engine::effects::user_key::UserKey;
use contextos_engine::snapshot::SNAPSHOT_FORMAT;
use contextos_engine::{build, BuildOptions, BuildOutput, PolicySet, PolicySource};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::path::Path;

const MAGIC: &[u8; 8] = b"CTXPC\x00\x01\n";
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
        field(s.text.as_bytes());
    }
    h.finalize().into()
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

fn mac(user_key: &UserKey, key: &[u8; 32], payload: &[u8]) -> Option<[u8; 32]> {
    let mut m = cache_mac(user_key).ok()?;
    m.update(key);
    m.update(payload);
    Some(m.finalize().into_bytes().into())
}

fn read_cache(path: &Path, key: &[u8; 32], user_key: &UserKey) -> Result<PolicySet, CacheMiss> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(CacheMiss::Absent),
        Err(e) => return Err(CacheMiss::Unreadable(e)),
    };
    decode(&bytes, key, user_key)
}

/// The policy set a cache file's bytes hold, if they are a cache this key and user key
/// made. Apart from the file read so that the fuzz target (`fuzz/`) can feed it any byte
/// string.
pub(crate) fn decode(
    bytes: &[u8],
    key: &[u8; 32],
    user_key: &UserKey,
) -> Result<PolicySet, CacheMiss> {
    let (Some(magic), Some(stored_key), Some(stored_mac), Some(payload)) = (
        bytes.get(..8),
        bytes.get(8..40),
        bytes.get(40..HEADER),
        bytes.get(HEADER..),
    ) else {
        return Err(CacheMiss::Truncated);
    };
    if magic != MAGIC {
        return Err(CacheMiss::Foreign);
    }
    if stored_key != key {
        return Err(CacheMiss::Stale);
    }
    // Compared through the MAC type, in constant time.
    let mut m = cache_mac(user_key)?;
    m.update(key);
    m.update(payload);
    m.verify_slice(stored_mac).map_err(|_| CacheMiss::Forged)?;
    PolicySet::from_snapshot(payload).map_err(CacheMiss::Snapshot)
}

/// The bytes of a cache file holding `set`: the counterpart of [`decode`].
pub(crate) fn encode(
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<Vec<u8>, CacheMiss> {
    let payload = set.to_snapshot().map_err(CacheMiss::Snapshot)?;
    let tag = mac(user_key, key, &payload).ok_or(CacheMiss::Key)?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&tag);
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

fn write_cache(
    path: &Path,
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<(), CacheMiss> {
    let bytes = encode(key, user_key, set)?;
    let at = |p: &Path| {
        let path = p.to_path_buf();
        move |error| CacheMiss::Write { path, error }
    };
    // A cache path always has a parent: it is joined onto the project root.
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir).map_err(at(dir))?;
    // Hooks run concurrently: each writes its own temporary file and renames it over the
    // cache, so a reader sees either the old or the new file, never a mix.
    atomic_write::write(path, &bytes, 0o600, Publish::Replace).map_err(at(path))?;
    Ok(())
}

/// Loads the project's policy set for a hook: from the cache when it is valid, from
/// source otherwise (glob sets compile lazily either way).
pub fn load(project: &Project, user_key: Option<&UserKey>) -> Result<Loaded, ProjectError> {
    let base = project.base_sources()?;
    let names = project.pinned_plugins()?;
    if names.is_empty() {
        return load_sources(project, &base, BASE_CACHE, user_key);
    }
    // One set serves both jobs: the packs' own files cannot touch plugin verdicts
    // (E0120), so the full set judges the packs exactly as the project's policies alone
    // would; and the set is used only once every pack has been verified and allowed.
    let all = project.add_pack_sources(base, &names)?;
    let loaded = load_sources(project, &all, FULL_CACHE, user_key)?;
    if let Loaded::Ready { set, .. } = &loaded {
        project.verify_plugins(set)?;
    }
    Ok(loaded)
}

fn load_sources(
    project: &Project,
    sources: &[PolicySource],
    file: &str,
    user_key: Option<&UserKey>,
) -> Result<Loaded, ProjectError> {
    let path = project.root.join(file);
    let key = key(project, sources);
    let mut note: Option<String>;
    if let Some(uk) = user_key {
        match read_cache(&path, &key, uk) {
            Ok(set) => {
                return Ok(Loaded::Ready {
                    set,
                    status: CacheStatus::Hit,
                    note: None,
                })
            }
            Err(why) => note = Some(why.to_string()),
        }
    } else {
        note = Some("no user key to authenticate a cache".into());
    }
    let out = build(
        sources,
        &BuildOptions {
            disabled_rules: project.config.policies.disable.clone(),
            lazy: true,
        },
    );
    if out.has_errors() {
        return Ok(Loaded::Invalid(out));
    }
    let Some(set) = out.policy else {
        return Ok(Loaded::Invalid(out));
    };
    let status = match user_key.map(|uk| write_cache(&path, &key, uk, &set)) {
        Some(Ok(())) => CacheStatus::Rebuilt,
        Some(Err(e)) => {
            note = Some(format!("cannot write the cache: {e}"));
            CacheStatus::Bypassed
        }
        None => CacheStatus::Bypassed,
    };
    Ok(Loaded::Ready { set, status, note })
}

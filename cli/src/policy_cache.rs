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
use contextos_engine::{compile, CompileOptions, CompileOutput, PolicySet, PolicySource};
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
    Invalid(CompileOutput),
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
/// differently, so its caches must not be read by another build.
fn binary_identity() -> String {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{mtime}", m.len())
        }
        // Unknown identity: a random value, so no cache written by this process can be
        // read by another one.
        Err(_) => uuid::Uuid::new_v4().to_string(),
    }
}

/// The cache's own MAC key, derived from the user key so a MAC made for one purpose
/// (the decision log's head) can never stand in for another.
fn cache_mac(user_key: &UserKey) -> Result<Hmac<Sha256>, String> {
    let derived = user_key.derive(b"contextos policy cache v1");
    Hmac::<Sha256>::new_from_slice(&derived).map_err(|e| e.to_string())
}

fn mac(user_key: &UserKey, key: &[u8; 32], payload: &[u8]) -> Option<[u8; 32]> {
    let mut m = cache_mac(user_key).ok()?;
    m.update(key);
    m.update(payload);
    Some(m.finalize().into_bytes().into())
}

fn read_cache(path: &Path, key: &[u8; 32], user_key: &UserKey) -> Result<PolicySet, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("no cache yet".into()),
        Err(e) => return Err(format!("cannot read the cache: {e}")),
    };
    let (Some(magic), Some(stored_key), Some(stored_mac), Some(payload)) = (
        bytes.get(..8),
        bytes.get(8..40),
        bytes.get(40..HEADER),
        bytes.get(HEADER..),
    ) else {
        return Err("the cache is truncated".into());
    };
    if magic != MAGIC {
        return Err("the cache is not a ContextOS policy cache of this format".into());
    }
    if stored_key != key {
        return Err("the cache is stale (policies, configuration or binary changed)".into());
    }
    // Compared through the MAC type, in constant time.
    let mut m = cache_mac(user_key)?;
    m.update(key);
    m.update(payload);
    m.verify_slice(stored_mac)
        .map_err(|_| "the cache's MAC does not verify (edited or foreign)".to_string())?;
    PolicySet::from_snapshot(payload).map_err(|e| e.to_string())
}

fn write_cache(
    path: &Path,
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<(), String> {
    let payload = set.to_snapshot().map_err(|e| e.to_string())?;
    let tag = mac(user_key, key, &payload).ok_or("cannot key the MAC")?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&tag);
    bytes.extend_from_slice(&payload);
    let dir = path.parent().ok_or("the cache has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Hooks run concurrently: each writes its own temporary file and renames it over the
    // cache, so a reader sees either the old or the new file, never a mix.
    atomic_write::write(path, &bytes, 0o600, Publish::Replace)
        .map(|_| ())
        .map_err(|e| e.to_string())
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
            Err(why) => note = Some(why),
        }
    } else {
        note = Some("no user key to authenticate a cache".into());
    }
    let out = compile(
        sources,
        &CompileOptions {
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

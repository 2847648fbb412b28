//! The policy cache a hook loads: no byte string is trusted unless it is exactly the
//! cache written for this key and user key. The first byte picks what the rest is:
//! 0 a whole cache file; 1 edits (offset, xor) to a genuine cache; 2 a bare snapshot
//! payload; 3 edits to a genuine snapshot payload; 4 edits to a genuine cache of a set
//! built on the precompiled stdlib, which names the embedded detectors instead of holding
//! them (as every hook's cache does). Snapshots (read only after the MAC verifies) must
//! still be rejected cleanly, without a panic or a huge allocation.
#![no_main]

use contextos::fuzzing::{policy_cache_decode, policy_cache_encode};
use contextos_core::{build, BuildOptions, Layer, PolicySet, PolicySource};
use contextos_effects::user_key::UserKey;
use libfuzzer_sys::fuzz_target;
use std::os::unix::fs::PermissionsExt;
use std::sync::OnceLock;

const KEY: [u8; 32] = [7; 32];
const POLICY: &str = "language 1;\n\
    default exec = ask;\n\
    deny exec \"git push --force *\" because \"no force pushes\";\n\
    allow exec \"cargo test *\" because \"tests are fine\";\n";

struct Genuine {
    user_key: UserKey,
    cache: Vec<u8>,
    payload: Vec<u8>,
    /// A cache of the stdlib plus [`POLICY`], built on the precompiled image, and the
    /// full snapshot of its set (detectors included).
    shared_cache: Vec<u8>,
    shared_payload: Vec<u8>,
}

fn genuine() -> &'static Genuine {
    static G: OnceLock<Genuine> = OnceLock::new();
    G.get_or_init(|| {
        let dir = tempfile::tempdir()
            .map(|d| d.keep())
            .unwrap_or_else(|e| panic!("{e}"));
        let key_path = dir.join("log.key");
        std::fs::write(&key_path, format!("{}\n", "ab".repeat(32)))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        let user_key = match UserKey::load(&key_path) {
            Ok(Some(k)) => k,
            other => panic!("user key: {other:?}"),
        };
        let source = PolicySource {
            name: "fuzz.policy".to_string(),
            text: POLICY.into(),
            layer: Layer::User,
        };
        let out = build(&[source], &BuildOptions::default());
        let Some(set) = out.policy else {
            panic!("the fuzz policy does not compile: {:?}", out.diagnostics);
        };
        let cache = policy_cache_encode(&KEY, &user_key, &set).unwrap_or_else(|e| panic!("{e}"));
        let payload = set.to_snapshot().unwrap_or_else(|e| panic!("{e}"));
        let mut sources = contextos_engine::stdlib_sources();
        sources.push(PolicySource {
            name: "fuzz.policy".to_string(),
            text: POLICY.into(),
            layer: Layer::User,
        });
        let lazy = BuildOptions {
            lazy: true,
            ..BuildOptions::default()
        };
        let (out, _) = contextos_core::build::build_precompiled(
            contextos_engine::stdlib::PRECOMPILED,
            &sources,
            &lazy,
        );
        let Some(on_stdlib) = out.policy else {
            panic!(
                "the stdlib and the fuzz policy do not compile: {:?}",
                out.diagnostics
            );
        };
        let shared_cache =
            policy_cache_encode(&KEY, &user_key, &on_stdlib).unwrap_or_else(|e| panic!("{e}"));
        let shared_payload = on_stdlib.to_snapshot().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            shared_cache.len() < shared_payload.len(),
            "the cache does not name the embedded detectors"
        );
        Genuine {
            user_key,
            cache,
            payload,
            shared_cache,
            shared_payload,
        }
    })
}

/// `base` with each (offset, xor) pair of `edits` applied; offsets wrap around.
fn edited(base: &[u8], edits: &[u8]) -> Vec<u8> {
    let mut out = base.to_vec();
    for e in edits.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([e[0], e[1]]));
        if let Some(len) = std::num::NonZeroUsize::new(out.len()) {
            out[at % len.get()] ^= e[2];
        }
    }
    // A trailing odd byte truncates or extends, so length changes are explored too.
    match edits.len() % 3 {
        1 => out.truncate(usize::from(edits[edits.len() - 1]) * out.len() / 256),
        2 => out.extend_from_slice(&edits[edits.len() - 2..]),
        _ => {}
    }
    out
}

fn snapshot_round_trips(set: &PolicySet) {
    let Ok(bytes) = set.to_snapshot() else {
        return;
    };
    assert!(
        PolicySet::from_snapshot(&bytes).is_ok(),
        "a re-encoded snapshot does not load"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let g = genuine();
    match mode % 5 {
        4 => {
            let bytes = edited(&g.shared_cache, rest);
            if let Ok(set) = policy_cache_decode(&bytes, &KEY, &g.user_key) {
                assert!(
                    bytes == g.shared_cache,
                    "a cache that is not the one written was trusted"
                );
                assert_eq!(set.to_snapshot().ok(), Some(g.shared_payload.clone()));
            }
        }
        0 | 1 => {
            let bytes = if mode % 5 == 0 {
                rest.to_vec()
            } else {
                edited(&g.cache, rest)
            };
            if let Ok(set) = policy_cache_decode(&bytes, &KEY, &g.user_key) {
                assert!(
                    bytes == g.cache,
                    "a cache that is not the one written was trusted"
                );
                assert_eq!(set.to_snapshot().ok(), Some(g.payload.clone()));
            }
        }
        _ => {
            let bytes = if mode % 5 == 2 {
                rest.to_vec()
            } else {
                edited(&g.payload, rest)
            };
            if let Ok(set) = PolicySet::from_snapshot(&bytes) {
                snapshot_round_trips(&set);
            }
        }
    }
});

//! `contextos log verify` over arbitrary logs, against a genuine signed head: no panic,
//! every outcome is a report or an error, and a log reported valid under the genuine
//! head is the genuine log, byte for byte. With an odd first byte the input's first
//! line replaces the head too (no panic is all that is asserted then).
#![no_main]

use contextos_effects::decision_log::{
    append, verify, DecisionRecord, LogOptions, ACTIVE_FILE, HEAD_FILE,
};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

struct Genuine {
    key_path: PathBuf,
    head: Vec<u8>,
    log: Vec<u8>,
}

fn genuine() -> &'static Genuine {
    static G: OnceLock<Genuine> = OnceLock::new();
    G.get_or_init(|| {
        let dir = tempfile::tempdir()
            .map(|d| d.keep())
            .unwrap_or_else(|e| panic!("{e}"));
        let key_path = dir.join("key").join("log.key");
        let state = dir.join("state");
        let opts = LogOptions {
            key_path: Some(key_path.clone()),
            rotate_bytes: 0,
            now: Some("2026-01-02T03:04:05Z".to_string()),
            ..LogOptions::default()
        };
        for (i, verdict) in ["allow", "deny", "ask"].into_iter().enumerate() {
            let rec = DecisionRecord {
                agent: "claude".to_string(),
                event: "PreToolUse".to_string(),
                tool: "Bash".to_string(),
                request: serde_json::json!({"exec": {"argv": ["git", "push", i.to_string()]}}),
                verdict: verdict.to_string(),
                rules: vec![format!("fuzz.policy:{i}")],
                duration_us: 100 + i as u64,
            };
            append(&state, &rec, &opts).unwrap_or_else(|e| panic!("{e}"));
        }
        let read = |name: &str| std::fs::read(state.join(name)).unwrap_or_else(|e| panic!("{e}"));
        Genuine {
            head: read(HEAD_FILE),
            log: read(ACTIVE_FILE),
            key_path,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let g = genuine();
    let (head, log) = if mode % 2 == 0 {
        (g.head.as_slice(), rest)
    } else {
        let cut = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        rest.split_at(cut)
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let state = dir.path();
    std::fs::write(state.join(HEAD_FILE), head).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(state.join(ACTIVE_FILE), log).unwrap_or_else(|e| panic!("{e}"));
    if let Ok(report) = verify(state, Some(&g.key_path)) {
        if report.is_valid() && mode % 2 == 0 {
            assert!(
                log == g.log.as_slice(),
                "a log that is not the genuine one verifies"
            );
        }
    }
});

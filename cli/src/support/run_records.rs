//! The records `contextos run` leaves of every run, and what other commands learn from them.

use serde_json::Value;
use std::path::Path;

/// Where every run is recorded (git-ignored state).
pub const RUNS_DIR: &str = ".contextos/state/runs";

/// Where the records of sandbox sessions live (git-ignored state).
pub const SESSIONS_DIR: &str = ".contextos/state/sessions";

/// Whether any of `files` was written by a recorded host-unsafe run. An unreadable
/// record counts as host-unsafe: the question is whether a human must stay in the loop.
pub fn produced_by_host_unsafe(root: &Path, files: &[String]) -> bool {
    let Ok(entries) = std::fs::read_dir(root.join(RUNS_DIR)) else {
        return false;
    };
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            return true;
        };
        let Ok(rec) = serde_json::from_str::<Value>(&text) else {
            return true;
        };
        if rec["mode"] != "host-unsafe" {
            continue;
        }
        let paths = rec["paths"].as_array().cloned().unwrap_or_default();
        if files.iter().any(|f| {
            let canon = contextos_engine::canon::canonical_path(f).unwrap_or_else(|_| f.clone());
            paths.iter().any(|p| p.as_str() == Some(canon.as_str()))
        }) {
            return true;
        }
    }
    false
}

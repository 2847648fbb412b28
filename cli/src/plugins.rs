//! Plugin packs at load time: every command that loads policies verifies every pinned
//! pack first — its tree digest, its signature and its signer — and asks the policies
//! for the plugin verdict. Only packs the verdict allows contribute policy files; one
//! denied pack stops the command (fail closed).
//!
//! The verdict is decided with the stdlib and the project's own policies only: a pack's
//! own policies never judge a pack (and cannot, E0120).

use contextos_engine::plugins::keys::{self, TrustedKeys};
use contextos_engine::plugins::pins::{self, Pin, Pins};
use contextos_engine::plugins::verify::{self, Facts, VerifyInput};
use contextos_engine::{Decision, Effect, EvalOptions, PolicySet, Request, RequestKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use contextos_engine::plugins::keys::TRUSTED_KEYS_FILE as KEYS_FILE;
pub use contextos_engine::plugins::pins::PINS_FILE;
pub const PACKS_DIR: &str = ".contextos/plugins";
pub const SEEN_FILE: &str = ".contextos/state/plugins-seen.json";

/// One pinned pack and what became of it.
#[derive(Debug)]
pub struct Checked {
    pub entry: Pin,
    pub facts: Facts,
    pub decision: Decision,
}

impl Checked {
    pub fn allowed(&self) -> bool {
        self.decision.verdict == Effect::Allow
    }
    /// The reason codes: the deciding rules' ids (a deny) and the verification findings.
    pub fn reasons(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .decision
            .rule_ids()
            .iter()
            .map(|s| s.to_string())
            .collect();
        if v.is_empty() {
            v.push(format!("default plugin = {:?}", self.decision.verdict).to_lowercase());
        }
        v
    }
}

pub fn pack_dir(root: &Path, name: &str) -> PathBuf {
    root.join(PACKS_DIR).join(name)
}

/// The pins (`contextos.lock`), or `None` when the project pins no plugins.
pub fn read_pins(root: &Path) -> Result<Option<Pins>, String> {
    match std::fs::read_to_string(root.join(PINS_FILE)) {
        Ok(text) => pins::parse(&text, PINS_FILE)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{PINS_FILE}: {e}")),
    }
}

/// The trusted keys; none when the file does not exist (then no pack can be signed).
pub fn read_keys(root: &Path) -> Result<TrustedKeys, String> {
    match std::fs::read_to_string(root.join(KEYS_FILE)) {
        Ok(text) => keys::parse(&text, KEYS_FILE).map_err(|e| e.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustedKeys { keys: Vec::new() }),
        Err(e) => Err(format!("{KEYS_FILE}: {e}")),
    }
}

/// Highest release sequence accepted so far, per pack (local state, never committed).
pub fn read_seen(root: &Path) -> Result<BTreeMap<String, u64>, String> {
    match std::fs::read_to_string(root.join(SEEN_FILE)) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{SEEN_FILE}: {e}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(format!("{SEEN_FILE}: {e}")),
    }
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Verifies `entry` against the pack in `dir` and decides it.
pub fn check(
    set: &PolicySet,
    entry: &Pin,
    dir: &Path,
    keys: &TrustedKeys,
    high_water: Option<u64>,
) -> Checked {
    let facts = verify::verify(&VerifyInput {
        entry,
        pack_dir: dir,
        keys,
        now: now(),
        high_water,
    });
    let request = Request::new(RequestKind::Plugin(facts.request()));
    let decision = set.decide(&request, EvalOptions::default());
    Checked {
        entry: entry.clone(),
        facts,
        decision,
    }
}

/// Verifies every installed pack; `Ok(None)` when the project pins none.
pub fn check_installed(root: &Path, set: &PolicySet) -> Result<Option<Vec<Checked>>, String> {
    let Some(pins) = read_pins(root)? else {
        return Ok(None);
    };
    if pins.plugins.is_empty() {
        return Ok(None);
    }
    let keys = read_keys(root)?;
    let seen = read_seen(root)?;
    Ok(Some(
        pins.plugins
            .iter()
            .map(|e| {
                check(
                    set,
                    e,
                    &pack_dir(root, &e.name),
                    &keys,
                    seen.get(&e.name).copied(),
                )
            })
            .collect(),
    ))
}

/// The `.policy` files of an allowed pack, sorted byte-wise, as (display name, path).
pub fn pack_policies(root: &Path, name: &str) -> Result<Vec<(String, PathBuf)>, String> {
    let dir = pack_dir(root, name);
    let mut out = Vec::new();
    collect(&dir, &dir, name, &mut out)?;
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

fn collect(
    base: &Path,
    dir: &Path,
    name: &str,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let ty = entry.file_type().map_err(|e| e.to_string())?;
        let path = entry.path();
        // Symbolic links are never followed; the digest already covered what they are.
        if ty.is_dir() {
            collect(base, &path, name, out)?;
        } else if ty.is_file() && path.extension().is_some_and(|e| e == "policy") {
            let rel = path
                .strip_prefix(base)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((format!("plugin/{name}/{rel}"), path));
        }
    }
    Ok(())
}

/// One line per denied pack, for the error that stops a command.
pub fn describe_denials(checked: &[Checked]) -> String {
    checked
        .iter()
        .filter(|c| !c.allowed())
        .map(|c| {
            format!(
                "plugin `{}` {} is refused: {}{}",
                c.entry.name,
                c.entry.version,
                c.reasons().join(", "),
                if c.facts.findings.is_empty() {
                    String::new()
                } else {
                    format!(" (findings: {})", c.facts.findings.join(", "))
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

//! Plugin packs at load time, for the commands: every command that loads policies has
//! the plugins crate verify and judge every pinned pack first
//! ([`contextos_engine::plugins::admission`]). This module only turns its errors into the
//! text the commands report.

use contextos_engine::plugins::installed;
use contextos_engine::plugins::keys::TrustedKeys;
use contextos_engine::plugins::pins::Pins;
use contextos_engine::PolicySet;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use contextos_engine::plugins::admission::{check, describe_denials, Checked};
pub use contextos_engine::plugins::installed::{pack_dir, PACKS_DIR, SEEN_FILE};
pub use contextos_engine::plugins::pins::PINS_FILE;

/// The pins, or `None` when the project pins no plugins.
pub fn read_pins(root: &Path) -> Result<Option<Pins>, String> {
    installed::read_pins(root).map_err(|e| e.to_string())
}

/// The trusted keys; none when the file does not exist (then no pack can be signed).
pub fn read_keys(root: &Path) -> Result<TrustedKeys, String> {
    installed::read_keys(root).map_err(|e| e.to_string())
}

/// Highest release sequence accepted so far, per pack (local state, never committed).
pub fn read_seen(root: &Path) -> Result<BTreeMap<String, u64>, String> {
    installed::read_seen(root).map_err(|e| e.to_string())
}

/// Verifies every installed pack; `Ok(None)` when the project pins none.
pub fn check_installed(root: &Path, set: &PolicySet) -> Result<Option<Vec<Checked>>, String> {
    contextos_engine::plugins::admission::check_installed(root, set).map_err(|e| e.to_string())
}

/// The `.policy` files of an allowed pack, sorted byte-wise, as (display name, path).
pub fn pack_policies(root: &Path, name: &str) -> Result<Vec<(String, PathBuf)>, String> {
    installed::pack_policies(root, name).map_err(|e| e.to_string())
}

//! A project's installed packs on disk: where they live, and the files that describe
//! them — the pins (`contextos.lock`), the trusted keys and the local high-water state.
//!
//! Reading only; writes go through the CLI's journal.

use crate::keys::{self, KeysError, TrustedKeys, TRUSTED_KEYS_FILE};
use crate::pins::{self, Pins, PinsError, PINS_FILE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where installed packs live, relative to the project root (one directory per name).
pub const PACKS_DIR: &str = ".contextos/plugins";
/// Highest release sequence accepted per pack: local state, never committed.
pub const SEEN_FILE: &str = ".contextos/state/plugins-seen.json";

/// A file describing the installed packs that cannot be read; loading fails closed on it.
#[derive(Debug, thiserror::Error)]
pub enum InstalledError {
    #[error(transparent)]
    Pins(#[from] PinsError),
    #[error(transparent)]
    Keys(#[from] KeysError),
    #[error("{file}: {source}")]
    Seen {
        file: &'static str,
        source: serde_json::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn io_error(path: impl Into<String>) -> impl FnOnce(std::io::Error) -> InstalledError {
    let path = path.into();
    move |source| InstalledError::Io { path, source }
}

/// The directory pack `name` is installed in.
pub fn pack_dir(root: &Path, name: &str) -> PathBuf {
    root.join(PACKS_DIR).join(name)
}

/// `file` under `root`, or `None` when it does not exist.
fn read_optional(root: &Path, file: &str) -> Result<Option<String>, InstalledError> {
    match std::fs::read_to_string(root.join(file)) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(file)(e)),
    }
}

/// The pins, or `None` when the project has no `contextos.lock`.
pub fn read_pins(root: &Path) -> Result<Option<Pins>, InstalledError> {
    read_optional(root, PINS_FILE)?
        .map(|text| pins::parse(&text, PINS_FILE).map_err(InstalledError::from))
        .transpose()
}

/// The trusted keys; none when the file does not exist (then no pack can be signed).
pub fn read_keys(root: &Path) -> Result<TrustedKeys, InstalledError> {
    match read_optional(root, TRUSTED_KEYS_FILE)? {
        Some(text) => Ok(keys::parse(&text, TRUSTED_KEYS_FILE)?),
        None => Ok(TrustedKeys { keys: Vec::new() }),
    }
}

/// Highest release sequence accepted so far, per pack; empty when none was recorded.
pub fn read_seen(root: &Path) -> Result<BTreeMap<String, u64>, InstalledError> {
    match read_optional(root, SEEN_FILE)? {
        Some(text) => serde_json::from_str(&text).map_err(|source| InstalledError::Seen {
            file: SEEN_FILE,
            source,
        }),
        None => Ok(BTreeMap::new()),
    }
}

/// The `.policy` files of an installed pack, sorted byte-wise, as (display name, path).
/// Display names are `plugin/NAME/RELATIVE-PATH`.
pub fn pack_policies(root: &Path, name: &str) -> Result<Vec<(String, PathBuf)>, InstalledError> {
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
) -> Result<(), InstalledError> {
    let shown = || dir.display().to_string();
    for entry in std::fs::read_dir(dir).map_err(io_error(shown()))? {
        let entry = entry.map_err(io_error(shown()))?;
        let path = entry.path();
        let ty = entry
            .file_type()
            .map_err(io_error(path.display().to_string()))?;
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

#[cfg(test)]
mod tests {

    use super::*;
    use std::fs;

    #[test]
    fn missing_files_mean_nothing_installed() {
        let root = tempfile::tempdir().unwrap();
        assert!(read_pins(root.path()).unwrap().is_none());
        assert!(read_keys(root.path()).unwrap().keys.is_empty());
        assert!(read_seen(root.path()).unwrap().is_empty());
    }

    #[test]
    fn broken_files_are_errors_naming_the_file() {
        let root = tempfile::tempdir().unwrap();
        fs::write(root.path().join(PINS_FILE), "version = 2\n").unwrap();
        let e = read_pins(root.path()).unwrap_err();
        assert!(matches!(e, InstalledError::Pins(_)), "{e}");
        assert!(e.to_string().starts_with("contextos.lock:1:"), "{e}");
        fs::create_dir_all(root.path().join(".contextos/state")).unwrap();
        fs::write(root.path().join(SEEN_FILE), "{\"a\": -1}").unwrap();
        let e = read_seen(root.path()).unwrap_err();
        assert!(e.to_string().starts_with(SEEN_FILE), "{e}");
        fs::write(root.path().join(SEEN_FILE), "{\"a\": 3}").unwrap();
        assert_eq!(read_seen(root.path()).unwrap().get("a"), Some(&3));
    }

    #[test]
    fn pack_policies_are_sorted_and_skip_links_and_other_files() {
        let root = tempfile::tempdir().unwrap();
        let pack = pack_dir(root.path(), "acme");
        fs::create_dir_all(pack.join("sub")).unwrap();
        fs::write(pack.join("b.policy"), "").unwrap();
        fs::write(pack.join("sub/a.policy"), "").unwrap();
        fs::write(pack.join("README.md"), "").unwrap();
        std::os::unix::fs::symlink(pack.join("b.policy"), pack.join("c.policy")).unwrap();
        let names: Vec<String> = pack_policies(root.path(), "acme")
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["plugin/acme/b.policy", "plugin/acme/sub/a.policy"]);
        let e = pack_policies(root.path(), "missing").unwrap_err();
        assert!(matches!(e, InstalledError::Io { .. }), "{e}");
    }
}

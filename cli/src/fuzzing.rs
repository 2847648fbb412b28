//! Entry points for the coverage-guided fuzz targets (`fuzz/`, see the book's fuzzing
//! chapter). The targets link this library from outside the crate, while the parsers
//! they exercise belong to command modules and stay private to it. Each function here
//! hands its input to the very code the command line runs and returns plain values, so
//! what is fuzzed is what ships. Not an API: nothing in the command line calls it.

use crate::commands::{apply, plugin};
use crate::policy_cache;
use crate::support::changeset::{Entry, Op};
use contextos_engine::effects::user_key::UserKey;
use contextos_engine::PolicySet;
use std::path::Path;

/// One change of a changeset, as `contextos apply` read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub delete: bool,
    pub content: Option<String>,
    pub expect_sha256: Option<String>,
    pub must_not_exist: bool,
}

fn changes(entries: Vec<Entry>) -> Vec<Change> {
    entries
        .into_iter()
        .map(|e| Change {
            path: e.path,
            delete: matches!(e.op, Op::Delete),
            content: e.content,
            expect_sha256: e.expect_sha256,
            must_not_exist: e.must_not_exist,
        })
        .collect()
}

/// A JSON changeset (`contextos apply` on text starting with `{`).
pub fn changeset_json(text: &str) -> Result<Vec<Change>, String> {
    serde_json::from_str::<apply::Changeset>(text)
        .map(|c| changes(c.changes))
        .map_err(|e| e.to_string())
}

/// A unified diff turned into a changeset against the files under `root`.
pub fn changeset_diff(text: &str, root: &Path) -> Result<Vec<Change>, String> {
    apply::from_unified_diff(text, root)
        .map(|c| changes(c.changes))
        .map_err(|e| e.to_string())
}

/// The bytes of a policy cache holding `set`, as a hook writes them.
pub fn policy_cache_encode(
    key: &[u8; 32],
    user_key: &UserKey,
    set: &PolicySet,
) -> Result<Vec<u8>, String> {
    policy_cache::encode(key, user_key, set).map_err(|e| e.to_string())
}

/// The policy set in a policy cache's bytes, as a hook reads them.
pub fn policy_cache_decode(
    bytes: &[u8],
    key: &[u8; 32],
    user_key: &UserKey,
) -> Result<PolicySet, String> {
    policy_cache::decode(bytes.to_vec(), key, user_key).map_err(|e| e.to_string())
}

/// Unpacks a plugin archive (`.tar`, or gzip-compressed when the name ends `.gz` or
/// `.tgz`) into `staging`, as `contextos plugin add` does.
pub fn extract_plugin_archive(archive: &Path, staging: &Path) -> Result<(), String> {
    plugin::extract_tar(archive, staging).map_err(|e| e.to_string())
}

/// One change an `apply_patch` body makes: the path, and the new text (`None`: deleted).
pub type PatchChange = (String, Option<String>);

/// The changes of an `apply_patch` body (MCP server) given what `read` says the files
/// hold (`None`: absent).
pub fn apply_patch(
    body: &str,
    read: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<Vec<PatchChange>, String> {
    use crate::support::patch::{apply, FileChange};
    let mut reader = |path: &str| Ok(read(path));
    apply(body, &mut reader)
        .map(|all| {
            all.into_iter()
                .map(|c| match c {
                    FileChange::Write { path, content, .. } => (path, Some(content)),
                    FileChange::Delete { path, .. } => (path, None),
                })
                .collect()
        })
        .map_err(|e| e.to_string())
}

//! Paths outside the project: `/tmp/build.log`, `~/.cargo/registry/…`, `~/.ssh/id_rsa`.
//!
//! Rules are written against project-relative paths, and a pattern such as `**` must never
//! reach a file outside the project. So an outside path is decided only by rules whose
//! pattern is itself anchored outside (it starts with `/` or `~/`), e.g. the stdlib's
//! temp-directory and toolchain-cache allows and its credential-store denies. When no such
//! rule applies, the path is not the project's to allow: a read is asked, a write or a
//! delete denied (`path.outside-project`).

use crate::canon::{canonical_path, PathRejection};
use crate::ir::CompiledRule;
use crate::request::PathOp;

/// Whether a path as given is an outside spelling this module decides (absolute POSIX or
/// home-relative); UNC, device and drive-letter paths stay rejected by the lexical stage.
pub fn is_outside_spelling(raw: &str) -> bool {
    (raw.starts_with('/') && !raw.starts_with("//")) || raw == "~" || raw.starts_with("~/")
}

/// The canonical form of an outside path: `.` and `..` folded, no empty segments, each
/// segment passing the same lexical checks as a project path.
///
/// # Errors
///
/// The lexical stage's rejection for a segment it refuses (control characters, NUL,
/// look-alikes of path syntax, …).
pub fn canonical_outside(raw: &str) -> Result<String, PathRejection> {
    let (prefix, rest) = match raw.strip_prefix("~") {
        Some(r) => ("~", r),
        None => ("", raw),
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    if !parts.is_empty() {
        // The remainder must be a clean relative path; `..` are folded already.
        canonical_path(&parts.join("/"))?;
    }
    Ok(format!("{prefix}/{}", parts.join("/")))
}

/// Whether a pattern is anchored outside the project.
pub fn is_outside_pattern(p: &str) -> bool {
    p.starts_with('/') || p.starts_with("~/")
}

/// Whether rule `r` speaks about the outside path `path` at all: one of its patterns is
/// anchored outside and matches it. A rule without patterns names no path.
///
/// `r` is a candidate the index found for `path`, so one of its patterns matched: when all
/// of them are anchored outside, that one was, and nothing needs matching again.
pub fn rule_reaches(r: &CompiledRule, path: &str) -> bool {
    let outside = r.patterns.iter().filter(|p| is_outside_pattern(p)).count();
    if outside == 0 {
        return false;
    }
    if outside == r.patterns.len() {
        return true;
    }
    r.patterns
        .iter()
        .filter(|p| is_outside_pattern(p))
        .any(|p| {
            crate::glob::path_glob(p)
                .map(|g| g.compile_matcher().is_match(path))
                // A pattern that does not compile is taken to match a deny/ask rule only.
                .unwrap_or(r.effect != contextos_grammar::ast::Effect::Allow)
        })
}

/// What an outside path gets when no rule speaks about it.
pub fn unruled(op: PathOp) -> contextos_grammar::ast::Effect {
    match op {
        PathOp::Read => contextos_grammar::ast::Effect::Ask,
        PathOp::Write | PathOp::Delete => contextos_grammar::ast::Effect::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_paths_fold_and_keep_their_anchor() {
        assert_eq!(
            canonical_outside("/tmp/./a/../b").ok().as_deref(),
            Some("/tmp/b")
        );
        assert_eq!(
            canonical_outside("/../../etc/passwd").ok().as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(
            canonical_outside("~/.ssh//id_rsa").ok().as_deref(),
            Some("~/.ssh/id_rsa")
        );
        assert_eq!(canonical_outside("~").ok().as_deref(), Some("~/"));
        assert!(canonical_outside("/tmp/a\u{0}b").is_err());
        assert!(is_outside_spelling("/etc/passwd"));
        assert!(is_outside_spelling("~/.ssh"));
        assert!(!is_outside_spelling("//server/share"));
        assert!(!is_outside_spelling("~other/x"));
        assert!(!is_outside_spelling("src/main.rs"));
    }
}

//! Write-scope containment: a task's scope file lists the path globs a change may touch.
//!
//! One glob per line; blank lines and lines starting with `#` are ignored; a leading `/`
//! anchors nothing (every pattern is repository-relative already). Globs are the policy
//! language's path globs: `*` stays inside a segment, `**` crosses them, matching is
//! case-sensitive, and nothing is ever read as a regex.

use contextos_core::glob::PathGlobs;

/// A parsed scope file.
#[derive(Debug)]
pub struct Scope {
    globs: PathGlobs,
    source: String,
}

/// A scope line that is not a valid glob.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}:{line}: invalid glob `{pattern}`: {message}")]
pub struct ScopeError {
    pub source_name: String,
    pub line: usize,
    pub pattern: String,
    pub message: String,
}

/// The scope's globs could not be matched (a size limit while building them); the scan
/// fails closed on it.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: the scope's globs cannot be matched: {message}")]
pub struct ScopeMatchError {
    pub source_name: String,
    pub message: String,
}

impl Scope {
    /// Parses `text`; `source` names it in messages (the file's path).
    pub fn parse(text: &str, source: &str) -> Result<Scope, ScopeError> {
        let mut patterns = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let pattern = line.trim_start_matches('/');
            PathGlobs::new([pattern]).map_err(|(_, message)| ScopeError {
                source_name: source.to_string(),
                line: i + 1,
                pattern: line.to_string(),
                message,
            })?;
            patterns.push(pattern.to_string());
        }
        let globs =
            PathGlobs::new(patterns.iter().map(String::as_str)).map_err(|(p, message)| {
                ScopeError {
                    source_name: source.to_string(),
                    line: 0,
                    pattern: p,
                    message,
                }
            })?;
        Ok(Scope {
            globs,
            source: source.to_string(),
        })
    }

    /// True when `path` is inside the scope. An empty scope allows nothing.
    pub fn allows(&self, path: &str) -> Result<bool, ScopeMatchError> {
        self.globs
            .is_match(path)
            .map_err(|message| ScopeMatchError {
                source_name: self.source.clone(),
                message,
            })
    }

    pub fn source(&self) -> &str {
        &self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globstar_and_case() {
        let s = Scope::parse("# task 42\nsrc/**\n/docs/*.md\n\n", "scope.txt").unwrap();
        assert!(s.allows("src/a/b.rs").unwrap());
        assert!(s.allows("docs/x.md").unwrap());
        assert!(!s.allows("docs/a/x.md").unwrap());
        assert!(!s.allows("Src/a.rs").unwrap());
        assert!(!s.allows("README.md").unwrap());
    }

    #[test]
    fn patterns_are_globs_never_regexes() {
        let s = Scope::parse("src/a.rs\nlib/(x|y).rs\n", "scope").unwrap();
        assert!(!s.allows("src/abrs").unwrap());
        assert!(!s.allows("lib/x.rs").unwrap());
        assert!(s.allows("lib/(x|y).rs").unwrap());
    }

    #[test]
    fn a_bad_glob_names_its_line() {
        let e = Scope::parse("src/**\nsrc/[a\n", "task.scope").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("task.scope:2:"));
    }

    #[test]
    fn empty_scope_allows_nothing() {
        let s = Scope::parse("# nothing\n", "s").unwrap();
        assert!(!s.allows("a").unwrap());
    }
}

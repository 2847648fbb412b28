//! Segment-aware globs. Path, plugin and commit patterns use `/` as a separator: `*` and
//! `?` never cross it, `**` does, matching is case-sensitive. Exec word patterns match
//! one argv word, so there `*` matches any characters, `/` included.

use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};

pub fn path_glob(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| e.kind().to_string())
}

pub fn word_glob(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.kind().to_string())
}

/// True when a pattern word has glob syntax and cannot be looked up literally.
pub fn has_glob_meta(word: &str) -> bool {
    word.contains(['*', '?', '[', '{', '\\'])
}

/// A compiled set of path globs, for `matches` conditions.
#[derive(Debug, Clone)]
pub struct PathGlobs {
    set: GlobSet,
}

impl PathGlobs {
    pub fn new<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<Self, (String, String)> {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(path_glob(p).map_err(|e| (p.to_string(), e))?);
        }
        let set = b.build().map_err(|e| (String::new(), e.to_string()))?;
        Ok(PathGlobs { set })
    }
    pub fn is_match(&self, s: &str) -> bool {
        self.set.is_match(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        path_glob(p)
            .map(|g| g.compile_matcher().is_match(s))
            .unwrap_or(false)
    }

    #[test]
    fn star_stays_in_its_segment() {
        assert!(m("src/*.rs", "src/lib.rs"));
        assert!(!m("src/*.rs", "src/a/lib.rs"));
        assert!(m("src/**", "src/a/b/lib.rs"));
        assert!(m("**/.env", ".env"));
        assert!(m("**/.env", "a/b/.env"));
        assert!(!m("*.pem", "keys/a.pem"));
        assert!(!m("Cargo.lock", "cargo.lock"));
        assert!(!m("secrets/**", "secrets-old/x"));
    }

    #[test]
    fn words_match_across_slashes() {
        let g = word_glob("*.py").map(|g| g.is_match("scripts/x.py"));
        assert_eq!(g, Ok(true));
    }
}

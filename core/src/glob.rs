//! Segment-aware globs. Path, plugin and commit patterns use `/` as a separator: `*` and
//! `?` never cross it, `**` does, matching is case-sensitive. Exec word patterns match
//! one argv word, so there `*` matches any characters, `/` included.

use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use std::sync::OnceLock;

/// A segment-aware glob for path, plugin and commit patterns: `*` and `?` stay inside one
/// `/`-separated segment, `**` crosses them, `\` escapes; the error is the reason, for E0112.
pub fn path_glob(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| e.kind().to_string())
}

/// Whether `pattern` is a path glob [`path_glob`] accepts, without building it when its
/// shape alone settles that: a simple shape ([`crate::simple_glob`]) is valid by
/// construction, as [`PathGlobs::new`] already trusts. A cold build checks every glob a
/// project's rules name, and most are simple (`gen42/**/*.rs`, `docs/*.md`): building each
/// one's regex only to drop it was a twentieth of a cold hook call at 1,000 rules.
pub fn check_path_glob(pattern: &str) -> Result<(), String> {
    if crate::simple_glob::SimpleGlob::parse(pattern).is_some() {
        return Ok(());
    }
    path_glob(pattern).map(drop)
}

fn word_builder(pattern: &str) -> GlobBuilder<'_> {
    let mut b = GlobBuilder::new(pattern);
    b.literal_separator(false).backslash_escape(true);
    b
}

/// A glob over one argv word, where `*` also matches `/` (`*.py` matches `scripts/x.py`).
pub fn word_glob(pattern: &str) -> Result<GlobMatcher, String> {
    word_builder(pattern)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.kind().to_string())
}

/// The globs a rule-head pattern stands for. `dir/**` also names `dir` itself: a rule
/// about everything inside a directory must also catch the directory being deleted,
/// moved or replaced as a whole (`rm -rf .contextos`, `mv x .github/hooks`).
pub fn head_globs(pattern: &str) -> impl Iterator<Item = &str> {
    let dir = pattern
        .strip_suffix("/**")
        .filter(|d| !d.is_empty() && !d.ends_with('/'));
    std::iter::once(pattern).chain(dir)
}

/// True when a pattern word has glob syntax and cannot be looked up literally.
pub fn has_glob_meta(word: &str) -> bool {
    word.contains(['*', '?', '[', '{', '\\'])
}

/// A lazily compiled single glob over one argv word. Parsing (done at compile time)
/// validates the pattern; the regex behind it is only built the first time a request
/// reaches it, so a short-lived process (an agent hook) pays only for what it uses.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(try_from = "String")]
pub struct LazyWordGlob {
    pattern: String,
    /// The pattern when it has a simple shape, matched without a regex: a hook asks one
    /// question of a word glob, and compiling it was a twentieth of a warm hook.
    simple: Option<crate::simple_glob::SimpleGlob>,
    matcher: OnceLock<Result<GlobMatcher, String>>,
}

impl LazyWordGlob {
    /// Validates `pattern` as a word glob now and defers building its matcher.
    pub fn new(pattern: &str) -> Result<Self, String> {
        let simple = crate::simple_glob::SimpleGlob::parse_word(pattern);
        // A simple shape is a valid glob by construction.
        if simple.is_none() {
            word_builder(pattern)
                .build()
                .map_err(|e| e.kind().to_string())?;
        }
        Ok(LazyWordGlob {
            pattern: pattern.to_string(),
            simple,
            matcher: OnceLock::new(),
        })
    }
    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
    /// Errors only when the regex cannot be built (size limits); callers resolve that to
    /// the stricter outcome.
    pub fn is_match(&self, s: &str) -> Result<bool, String> {
        if let Some(hit) = self.simple.as_ref().and_then(|g| g.is_match(s)) {
            return Ok(hit);
        }
        self.matcher
            .get_or_init(|| word_glob(&self.pattern))
            .as_ref()
            .map(|m| m.is_match(s))
            .map_err(Clone::clone)
    }
}

thread_local! {
    /// Set while [`decoding_trusted`] runs on this thread.
    static TRUSTED_DECODE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `decode` with glob lists and word globs deserialised without asking globset
/// whether they parse: for bytes this build made and ships inside itself (the
/// precompiled standard library, whose globs the lazy build trusts the same way, see
/// `Ctx::trusted`), never for a policy cache read from disk. A pattern that does not
/// parse still fails closed where it is matched.
pub(crate) fn decoding_trusted<R>(decode: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            TRUSTED_DECODE.with(|t| t.set(self.0));
        }
    }
    let _reset = Reset(TRUSTED_DECODE.with(|t| t.replace(true)));
    decode()
}

fn trusted_decode() -> bool {
    TRUSTED_DECODE.with(std::cell::Cell::get)
}

// Serialised as the pattern text; deserialising re-validates it, so a policy cache can
// never smuggle in a pattern the compiler would have rejected.
impl TryFrom<String> for LazyWordGlob {
    type Error = String;
    fn try_from(p: String) -> Result<Self, String> {
        if trusted_decode() {
            let simple = crate::simple_glob::SimpleGlob::parse_word(&p);
            return Ok(LazyWordGlob {
                pattern: p,
                simple,
                matcher: OnceLock::new(),
            });
        }
        LazyWordGlob::new(&p)
    }
}

// Written as the pattern text, without cloning the glob (its matcher included) first.
impl serde::Serialize for LazyWordGlob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.pattern)
    }
}

impl TryFrom<Vec<String>> for PathGlobs {
    type Error = String;
    fn try_from(p: Vec<String>) -> Result<Self, String> {
        if trusted_decode() {
            return Ok(PathGlobs::of(p, None));
        }
        let simple: Vec<_> = p
            .iter()
            .map(|g| crate::simple_glob::SimpleGlob::parse(g))
            .collect();
        for (g, shape) in p.iter().zip(&simple) {
            if shape.is_none() {
                path_glob(g).map_err(|e| format!("glob `{g}`: {e}"))?;
            }
        }
        Ok(PathGlobs::of(p, Some(simple)))
    }
}

// Written as the list of patterns, the encoding of a `Vec<String>`, straight from the
// patterns: serde's `into` would clone the whole set (its simple matchers and compiled
// globs included) for every rule a snapshot encodes, a twenty-fifth of a cold hook.
impl serde::Serialize for PathGlobs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.patterns.serialize(s)
    }
}

/// A set of path globs for `matches` conditions, validated at compile time and compiled
/// into one `GlobSet` on first use.
#[derive(Debug, serde::Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct PathGlobs {
    patterns: Vec<String>,
    /// Each pattern of a simple shape, matched without a regex; `None` for the others.
    /// Worked out on first use when the patterns were trusted: a cold hook decodes
    /// hundreds of lists and matches against a handful.
    simple: OnceLock<Vec<Option<crate::simple_glob::SimpleGlob>>>,
    /// Every pattern, for text the simple matcher leaves to globset (not ASCII).
    set: OnceLock<Result<GlobSet, String>>,
    /// The patterns that are not simple, for ASCII text no simple pattern matched.
    rest: OnceLock<Result<GlobSet, String>>,
    /// Questions answered so far: matching glob by glob spares a hook (a few questions
    /// per process) the compilation, but a long-lived process (the MCP server, `decide`)
    /// asks thousands, and there one compiled set answers ten times faster.
    asked: std::sync::atomic::AtomicU32,
}

/// After this many questions a list is compiled into one set and answered by it.
const COMPILE_AFTER: u32 = 32;

impl Clone for PathGlobs {
    fn clone(&self) -> Self {
        PathGlobs {
            patterns: self.patterns.clone(),
            simple: self.simple.clone(),
            set: self.set.clone(),
            rest: self.rest.clone(),
            asked: std::sync::atomic::AtomicU32::new(0),
        }
    }
}

impl PathGlobs {
    /// Validates every pattern as a path glob; the error names the first invalid pattern and why.
    pub fn new<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<Self, (String, String)> {
        let mut out = Vec::new();
        let mut simple = Vec::new();
        for p in patterns {
            // A simple shape is a valid glob by construction; only the others need
            // globset's parser to say so (a snapshot decodes many of these per rule).
            let g = crate::simple_glob::SimpleGlob::parse(p);
            if g.is_none() {
                path_glob(p).map_err(|e| (p.to_string(), e))?;
            }
            out.push(p.to_string());
            simple.push(g);
        }
        Ok(PathGlobs::of(out, Some(simple)))
    }

    /// [`PathGlobs::new`] without asking globset whether the patterns of no simple shape
    /// parse: for a layer the compiler trusts (the stdlib, in a lazy build). A pattern
    /// that does not parse still fails closed: matching it is an error, which callers
    /// resolve to the stricter outcome, and a snapshot validates it again when decoded.
    pub fn unchecked<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Self {
        PathGlobs::of(patterns.into_iter().map(str::to_string).collect(), None)
    }

    fn of(
        patterns: Vec<String>,
        simple: Option<Vec<Option<crate::simple_glob::SimpleGlob>>>,
    ) -> Self {
        PathGlobs {
            patterns,
            simple: simple.map(OnceLock::from).unwrap_or_default(),
            set: OnceLock::new(),
            rest: OnceLock::new(),
            asked: std::sync::atomic::AtomicU32::new(0),
        }
    }
    /// The patterns as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
    fn build<'a>(patterns: impl Iterator<Item = &'a String>) -> Result<GlobSet, String> {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(path_glob(p)?);
        }
        b.build().map_err(|e| e.to_string())
    }
    /// Whether any pattern matches the whole of `s`; errors only when the set cannot be built
    /// (size limits), which callers resolve to the stricter outcome.
    pub fn is_match(&self, s: &str) -> Result<bool, String> {
        let asked = self
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let compiled = self.set.get().is_some() || asked >= COMPILE_AFTER;
        let (cell, patterns): (_, Box<dyn Iterator<Item = &String>>) = if s.is_ascii() && !compiled
        {
            // Simple globs answer directly; the others are compiled (on first use) into a
            // set of their own, consulted only when no simple one matched.
            let simple = self.simple.get_or_init(|| {
                self.patterns
                    .iter()
                    .map(|p| crate::simple_glob::SimpleGlob::parse(p))
                    .collect()
            });
            let mut rest = false;
            for g in simple {
                match g {
                    Some(g) if g.is_match(s) == Some(true) => return Ok(true),
                    Some(_) => {}
                    None => rest = true,
                }
            }
            if !rest {
                return Ok(false);
            }
            let others = self
                .patterns
                .iter()
                .zip(simple)
                .filter(|(_, g)| g.is_none())
                .map(|(p, _)| p);
            (&self.rest, Box::new(others))
        } else {
            (&self.set, Box::new(self.patterns.iter()))
        };
        cell.get_or_init(|| Self::build(patterns))
            .as_ref()
            .map(|set| set.is_match(s))
            .map_err(Clone::clone)
    }
    /// Builds the set now, reporting an error `check` should show.
    pub fn warm(&self) -> Result<(), String> {
        self.set
            .get_or_init(|| Self::build(self.patterns.iter()))
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
    }
}

/// Names a glob word could expand to, for deciding it like a path: each `*` once as
/// nothing and once as a letter, `?` and a bracket as a letter of the class. `secrets/*`
/// gives `secrets/x`, `.env*` gives `.env` and `.envx`, so the rules about those names see
/// the glob. Braces are expanded by the shell before globbing and are taken apart here.
pub fn samples(w: &str) -> Vec<String> {
    let mut out = Vec::new();
    for fill in ["", "x"] {
        let mut s = String::new();
        let mut chars = w.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' => s.push_str(fill),
                '?' => s.push('x'),
                '[' => {
                    let mut first = None;
                    for d in chars.by_ref() {
                        if d == ']' {
                            break;
                        }
                        if first.is_none() && d != '!' && d != '^' {
                            first = Some(d);
                        }
                    }
                    s.push(first.unwrap_or('x'));
                }
                '{' | '}' | ',' => s.push(if c == ',' { '/' } else { 'x' }),
                c => s.push(c),
            }
        }
        // A segment left empty (`dir/*`) names a file in the directory.
        // (The empty segment before a leading `/` is the root, not a name.)
        let s = s
            .split('/')
            .enumerate()
            .map(|(i, seg)| if seg.is_empty() && i > 0 { "x" } else { seg })
            .collect::<Vec<_>>()
            .join("/");
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The shortcut never accepts what globset refuses: a check answers as globset
        /// does on random patterns over the glob alphabet.
        #[test]
        fn checking_a_glob_agrees_with_globset(p in "[a/*?._{}\\[\\]!,\\\\-]{0,12}") {
            prop_assert_eq!(
                super::check_path_glob(&p).is_ok(),
                super::path_glob(&p).is_ok(),
                "{:?}", p
            );
        }
    }

    #[test]
    fn simple_globs_pass_the_check_and_broken_ones_do_not() {
        for p in [
            "gen42/**/*.rs",
            "**",
            "docs/*.md",
            "a?b",
            "**/x",
            "x/**",
            "src/{a,b}/*.rs",
        ] {
            assert!(super::check_path_glob(p).is_ok(), "{p}");
        }
        for p in ["{a,b", "[ab", "a\\"] {
            assert!(super::check_path_glob(p).is_err(), "{p}");
        }
    }

    #[test]
    fn glob_samples_name_what_the_glob_could_match() {
        assert_eq!(super::samples("secrets/*"), ["secrets/x", "secrets/x"][..1]);
        assert_eq!(super::samples(".env*"), [".env", ".envx"]);
        assert_eq!(
            super::samples(".git*/hooks/*"),
            [".git/hooks/x", ".gitx/hooks/x"]
        );
        assert_eq!(super::samples("key.[pP]em"), ["key.pem"]);
        assert_eq!(
            super::samples("/p/secrets/*.yaml"),
            ["/p/secrets/.yaml", "/p/secrets/x.yaml"]
        );
    }

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

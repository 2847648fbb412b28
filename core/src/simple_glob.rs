//! Path globs of the simple shapes — literals, `*`, `?`, `\` escapes and `**` as a whole
//! segment — matched directly, without compiling a regex.
//!
//! A hook process evaluates a condition such as `exec.args matches $credentials` once.
//! Compiling the list into a `GlobSet` (a regex plus automata) took about a third of a
//! hook call, to answer one question about one word; matching each simple glob directly
//! costs well under a microsecond. The semantics are exactly those of
//! [`crate::glob::path_glob`] (globset with `literal_separator` and `backslash_escape`):
//! `*` and `?` never match `/`; `**/` at the start matches nothing or any leading
//! directories; `/**` at the end matches `/` and anything after it; `/**/` matches one
//! `/` or any directories between two; `**` alone matches everything. A class of plain
//! characters and letter or digit ranges (`[=@]`, `[a-z0-9_]`) matches one of them; the
//! stdlib writes `*[=@]~/.ssh/**` for `--key=~/.ssh/id` and `user@~/...`, and compiling
//! those few classes into a set was a quarter of a hook call. Negated classes, classes
//! holding `/`, `\`, `[`, `:` or a `-` outside a range, alternations (`{…}`) and a `**`
//! inside a segment are not simple: the caller compiles those as before. A differential
//! property test holds this to globset.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `?`: one character other than `/`.
    One,
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**` alone: anything.
    All,
    /// A leading `**/`: nothing, or anything that ends with `/`.
    RecPrefix,
    /// A trailing `/**`: `/` then anything.
    RecSuffix,
    /// A middle `/**/`: `/`, or anything that starts and ends with `/`.
    RecMid,
    /// `[…]`: one character of the set (index into the glob's class list).
    Class(usize),
    /// `?` in an argv word: any one character, `/` included.
    AnyOne,
    /// `*` in an argv word: any run of characters, `/` included.
    AnyRun,
}

/// Inclusive character ranges of a class; a single character is a range of one.
type Ranges = Vec<(char, char)>;

/// Parses the class body after `[` up to and including `]`: the ranges and how many chars
/// it took, or `None` when the class is not of the plain shape this matcher handles.
fn parse_class(chars: &[char]) -> Option<(Ranges, usize)> {
    let plain = |c: char| {
        c.is_ascii_graphic() && !matches!(c, '/' | '\\' | '[' | ']' | ':' | '-' | '!' | '^')
    };
    let mut ranges = Ranges::new();
    let mut i = 0;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !ranges.is_empty() {
            return Some((ranges, i + 1));
        }
        if !plain(c) {
            return None;
        }
        if chars.get(i + 1) == Some(&'-') {
            let end = *chars.get(i + 2)?;
            // Only letter and digit ranges of one kind: no range can span `/`.
            let same_kind = (c.is_ascii_lowercase() && end.is_ascii_lowercase())
                || (c.is_ascii_uppercase() && end.is_ascii_uppercase())
                || (c.is_ascii_digit() && end.is_ascii_digit());
            if !same_kind || end < c {
                return None;
            }
            ranges.push((c, end));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
}

/// A glob of a simple shape, ready to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleGlob(Vec<Tok>, Vec<Ranges>);

impl SimpleGlob {
    /// The glob's tokens, or `None` when it is not of a simple shape.
    pub(crate) fn parse(pattern: &str) -> Option<SimpleGlob> {
        // Non-ASCII text: globset matches bytes there (`?` is not one `é`); left to it.
        if !pattern.is_ascii() || pattern.is_empty() {
            return None;
        }
        if pattern == "**" {
            return Some(SimpleGlob(vec![Tok::All], Vec::new()));
        }
        let chars: Vec<char> = pattern.chars().collect();
        let mut toks = Vec::with_capacity(chars.len());
        let mut classes = Vec::new();
        let mut i = 0;
        // Whether the last token is an unescaped `/` (a `**` after it is a whole segment).
        let mut after_slash = false;
        while let Some(&c) = chars.get(i) {
            let next = chars.get(i + 1).copied();
            let slash_before = std::mem::replace(&mut after_slash, c == '/');
            match c {
                '\\' => {
                    toks.push(Tok::Lit(next?));
                    i += 2;
                }
                '[' => {
                    let (ranges, took) = parse_class(chars.get(i + 1..)?)?;
                    toks.push(Tok::Class(classes.len()));
                    classes.push(ranges);
                    i += 1 + took;
                }
                ']' | '{' | '}' => return None,
                '?' => {
                    toks.push(Tok::One);
                    i += 1;
                }
                '*' if next == Some('*') => {
                    let after = chars.get(i + 2).copied();
                    match (i, after) {
                        // A bare `**/` has a meaning of its own in globset: left to it.
                        (0, Some('/')) if chars.len() > 3 => {
                            toks.push(Tok::RecPrefix);
                            i += 3;
                        }
                        // `/**` closing the pattern, or `/**/` in the middle: the `/`
                        // before was already pushed as a literal.
                        (_, None) if slash_before => {
                            toks.pop();
                            toks.push(Tok::RecSuffix);
                            i += 2;
                        }
                        (_, Some('/')) if slash_before => {
                            toks.pop();
                            toks.push(Tok::RecMid);
                            i += 3;
                        }
                        _ => return None,
                    }
                }
                '*' => {
                    toks.push(Tok::Star);
                    i += 1;
                }
                c => {
                    toks.push(Tok::Lit(c));
                    i += 1;
                }
            }
        }
        Some(SimpleGlob(toks, classes))
    }

    /// An exec word glob ([`crate::glob::word_glob`]: globset without `literal_separator`):
    /// `*` and `?` match `/` too, and `/` is an ordinary character. A `**` is left to
    /// globset, as are the shapes [`SimpleGlob::parse`] leaves to it.
    pub(crate) fn parse_word(pattern: &str) -> Option<SimpleGlob> {
        if pattern.contains("**") {
            return None;
        }
        let SimpleGlob(toks, classes) = SimpleGlob::parse(pattern)?;
        let toks = toks
            .into_iter()
            .map(|t| match t {
                Tok::Star => Some(Tok::AnyRun),
                Tok::One => Some(Tok::AnyOne),
                Tok::Lit(_) | Tok::Class(_) => Some(t),
                // Not reachable without `**`; refused rather than guessed.
                Tok::All
                | Tok::RecPrefix
                | Tok::RecSuffix
                | Tok::RecMid
                | Tok::AnyOne
                | Tok::AnyRun => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SimpleGlob(toks, classes))
    }

    /// Whether the glob matches the whole of `s`; `None` for non-ASCII text, which the
    /// caller leaves to globset.
    pub(crate) fn is_match(&self, s: &str) -> Option<bool> {
        if !s.is_ascii() {
            return None;
        }
        // ASCII text and an ASCII pattern: a byte is a character.
        let text = s.as_bytes();
        if let Some(hit) = self.one_run_match(text) {
            return Some(hit);
        }
        // memo[t * (n + 1) + p]: 0 unknown, 1 no, 2 yes — keeps the backtracking linear
        // in tokens × positions. Small enough for the stack for the words and paths of
        // nearly every request.
        let size = (self.0.len() + 1) * (text.len() + 1);
        let mut on_stack = [0u8; 512];
        let mut on_heap = Vec::new();
        let memo = match on_stack.get_mut(..size) {
            Some(m) => m,
            None => {
                on_heap.resize(size, 0u8);
                on_heap.as_mut_slice()
            }
        };
        Some(self.at(0, 0, text, memo))
    }

    /// A glob with at most one run token and that one a `*` (`deploy-*`, `*.sh`, `id_*`,
    /// `--force`): the one-character tokens before the run match the text's start, those
    /// after it its end, and the run what lies between — nothing to backtrack over.
    /// `None` for any other shape.
    fn one_run_match(&self, s: &[u8]) -> Option<bool> {
        let fixed = |t: &Tok| matches!(t, Tok::Lit(_) | Tok::One | Tok::Class(_) | Tok::AnyOne);
        let toks = self.0.as_slice();
        let (head, run, tail) = match toks.iter().position(|t| !fixed(t)) {
            None => (toks, None, &[][..]),
            Some(i) => {
                let run = toks
                    .get(i)
                    .copied()
                    .filter(|t| matches!(t, Tok::Star | Tok::AnyRun))?;
                let tail = toks.get(i + 1..).unwrap_or_default();
                if !tail.iter().all(fixed) {
                    return None;
                }
                (toks.get(..i).unwrap_or_default(), Some(run), tail)
            }
        };
        let all_one = |ts: &[Tok], cs: &[u8]| ts.iter().zip(cs).all(|(t, c)| self.one(*t, *c));
        Some(match run {
            None => head.len() == s.len() && all_one(head, s),
            Some(run) => {
                s.len() >= head.len() + tail.len() && {
                    let (start, rest) = s.split_at(head.len());
                    let (middle, end) = rest.split_at(rest.len() - tail.len());
                    all_one(head, start)
                        && all_one(tail, end)
                        && (run == Tok::AnyRun || !middle.contains(&b'/'))
                }
            }
        })
    }

    /// Whether a one-character token matches the character `c`.
    fn one(&self, t: Tok, c: u8) -> bool {
        match t {
            Tok::Lit(l) => u32::from(l) == u32::from(c),
            Tok::One => c != b'/',
            Tok::AnyOne => true,
            Tok::Class(k) => self.in_class(k, c),
            Tok::Star | Tok::All | Tok::RecPrefix | Tok::RecSuffix | Tok::RecMid | Tok::AnyRun => {
                false
            }
        }
    }

    fn in_class(&self, k: usize, c: u8) -> bool {
        let c = char::from(c);
        self.1
            .get(k)
            .is_some_and(|ranges| ranges.iter().any(|(lo, hi)| (lo..=hi).contains(&&c)))
    }

    fn at(&self, t: usize, p: usize, s: &[u8], memo: &mut [u8]) -> bool {
        let key = t * (s.len() + 1) + p;
        match memo.get(key) {
            Some(1) => return false,
            Some(2) => return true,
            _ => {}
        }
        let rest = s.get(p..).unwrap_or_default();
        let hit = match self.0.get(t) {
            None => rest.is_empty(),
            Some(&tok @ (Tok::Lit(_) | Tok::One | Tok::Class(_) | Tok::AnyOne)) => {
                rest.first().is_some_and(|c| self.one(tok, *c)) && self.at(t + 1, p + 1, s, memo)
            }
            Some(Tok::Star) => {
                let run = rest.iter().take_while(|c| **c != b'/').count();
                (0..=run).any(|k| self.at(t + 1, p + k, s, memo))
            }
            Some(Tok::All | Tok::AnyRun) => {
                (0..=rest.len()).any(|k| self.at(t + 1, p + k, s, memo))
            }
            Some(Tok::RecPrefix) => {
                self.at(t + 1, p, s, memo)
                    || (0..rest.len())
                        .filter(|k| rest.get(*k) == Some(&b'/'))
                        .any(|k| self.at(t + 1, p + k + 1, s, memo))
            }
            Some(Tok::RecSuffix) => {
                rest.first() == Some(&b'/')
                    && (1..=rest.len()).any(|k| self.at(t + 1, p + k, s, memo))
            }
            Some(Tok::RecMid) => {
                rest.first() == Some(&b'/')
                    && (0..rest.len())
                        .filter(|k| rest.get(*k) == Some(&b'/'))
                        .any(|k| self.at(t + 1, p + k + 1, s, memo))
            }
        };
        if let Some(m) = memo.get_mut(key) {
            *m = if hit { 2 } else { 1 };
        }
        hit
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn globset(pattern: &str, s: &str) -> Option<bool> {
        crate::glob::path_glob(pattern)
            .ok()
            .map(|g| g.compile_matcher().is_match(s))
    }

    #[test]
    fn agrees_with_globset_on_the_shapes_policies_use() {
        let patterns = [
            "**",
            "*",
            "?",
            "**/.env",
            "**/*.pem",
            ".git/**",
            "src/**/*.rs",
            "a/**/b",
            "*.key",
            ".env*",
            "*secret*",
            "id_*",
            "a\\*b",
            "**/.ssh/**",
            "x/*/y",
            "-o=*",
            "*$(env)*",
            "docs/*.md",
            "/etc/**",
            "a/**",
            "**/a/**/b/**",
            "/**",
            "/**/a",
            "*[=@]~/.ssh/**",
            "*[=@]/**/.ssh/**",
            "[ab]",
            "x[a-c0-9_]y",
            "[.]env",
        ];
        let subjects = [
            "",
            "a",
            ".env",
            ".env.local",
            "x/.env",
            "a/b/.env",
            "k.pem",
            "d/k.pem",
            ".git",
            ".git/",
            ".git/config",
            "src/a.rs",
            "src/x/y/a.rs",
            "src/a/b",
            "a/b",
            "a/x/b",
            "a/x/y/b",
            "ab",
            "a*b",
            "axb",
            "x/q/y",
            "x/q/r/y",
            "-o=json",
            "/etc/passwd",
            "/etc",
            "a/",
            "/",
            "//",
            "a/a/b/b",
            "x$(env)y",
            "docs/a.md",
            "docs/x/a.md",
            "id_rsa",
            "é",
            "é/é",
            "--key=~/.ssh/id",
            "u@~/.ssh/x",
            "~/.ssh/id",
            "-i=/home/u/.ssh/id",
            "x_y",
            "x5y",
            "xdy",
            ".env",
            "b",
        ];
        for p in patterns {
            let g = SimpleGlob::parse(p).unwrap_or_else(|| panic!("{p} is simple"));
            for s in subjects {
                if let Some(hit) = g.is_match(s) {
                    assert_eq!(Some(hit), globset(p, s), "`{p}` on `{s}`");
                } else {
                    assert!(!s.is_ascii());
                }
            }
        }
    }

    #[test]
    fn classes_alternations_and_inner_double_stars_are_not_simple() {
        for p in [
            "[!ab]",
            "[^a]",
            "[a/]",
            "[a-]",
            "[-a]",
            "[]a]",
            "[a",
            "[a-/]",
            "[a-Z]",
            "[z-a]",
            "[[:alpha:]]",
            "[\\a]",
            "{a,b}",
            "a**",
            "**a",
            "a/**b",
            "x\\",
            "**/",
            "**/**",
            "é*",
            "",
        ] {
            assert_eq!(SimpleGlob::parse(p), None, "{p}");
        }
    }

    fn glob_text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just("/"),
                Just("*"),
                Just("?"),
                Just("**"),
                Just("**/"),
                Just("/**"),
                Just("/**/"),
                Just("."),
                Just("\\*"),
                Just("é"),
                Just("[ab]"),
                Just("[a-c.]"),
                Just("[=@]"),
                Just("[b"),
            ],
            0..7,
        )
        .prop_map(|v| v.concat())
    }

    fn subject() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just("/"),
                Just("."),
                Just("*"),
                Just("é"),
                Just("c"),
                Just("="),
                Just("@"),
            ],
            0..9,
        )
        .prop_map(|v| v.concat())
    }

    fn word_globset(pattern: &str, s: &str) -> Option<bool> {
        crate::glob::word_glob(pattern).ok().map(|g| g.is_match(s))
    }

    #[test]
    fn word_globs_cross_slashes_like_globset() {
        for (p, s, want) in [
            ("*.py", "scripts/x.py", true),
            ("python*", "python3", true),
            ("?", "/", true),
            ("/dev/tcp/*", "/dev/tcp/1.2.3.4/80", true),
            ("--key=*", "--key=~/.ssh/id", true),
            ("*[=@]x", "a/b@x", true),
            ("a?c", "a/c", true),
            ("a?c", "ac", false),
        ] {
            let g = SimpleGlob::parse_word(p).unwrap();
            assert_eq!(g.is_match(s), Some(want), "{p} on {s}");
            assert_eq!(word_globset(p, s), Some(want), "globset: {p} on {s}");
        }
        for p in ["**", "a/**", "**/x", "x**", "{a,b}", "[!a]", "é*"] {
            assert_eq!(SimpleGlob::parse_word(p), None, "{p}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Whenever a word glob is simple and globset accepts it, both answer alike.
        #[test]
        fn word_globs_match_like_globset(p in glob_text(), subjects in prop::collection::vec(subject(), 1..8)) {
            if let (Some(g), Ok(_)) = (SimpleGlob::parse_word(&p), crate::glob::word_glob(&p)) {
                for s in &subjects {
                    if let Some(hit) = g.is_match(s) {
                        prop_assert_eq!(Some(hit), word_globset(&p, s), "`{}` on `{}`", p, s);
                    }
                }
            }
        }

        /// Whenever a glob is simple and globset accepts it, both answer alike.
        #[test]
        fn matches_like_globset(p in glob_text(), subjects in prop::collection::vec(subject(), 1..8)) {
            if let (Some(g), Ok(_)) = (SimpleGlob::parse(&p), crate::glob::path_glob(&p)) {
                for s in &subjects {
                    if let Some(hit) = g.is_match(s) {
                        prop_assert_eq!(Some(hit), globset(&p, s), "`{}` on `{}`", p, s);
                    }
                }
            }
        }
    }
}

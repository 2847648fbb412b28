//! Small text primitives of the scanner: line tables, entropy, literal/comment context,
//! redaction and fingerprints. Pure functions over bytes.

use sha2::{Digest, Sha256};

/// Byte offsets of line starts, for turning a match offset into a 1-based line and column.
#[derive(Debug)]
pub struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub fn new(text: &[u8]) -> Lines {
        let mut starts = Vec::with_capacity(text.len() / 40 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            // A final newline does not start a line of its own.
            starts.pop();
        }
        Lines {
            starts,
            len: text.len(),
        }
    }

    /// Number of lines.
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line index holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Byte range of line `i` without its line terminator.
    pub fn range(&self, i: usize, text: &[u8]) -> std::ops::Range<usize> {
        let start = self.starts.get(i).copied().unwrap_or(self.len);
        let mut end = self.starts.get(i + 1).copied().unwrap_or(self.len);
        if end > start && text.get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && text.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        start..end
    }

    /// Byte offset where line `i` starts (the text's end past the last line).
    pub fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.len)
    }
}

/// Shannon entropy in bits per character.
pub fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// True when stopword `stop` (lower-case) occurs in `value` (lower-cased) as a word: where
/// the stopword begins or ends with a letter, the value has no letter next to it. `true`
/// stops `enabled_true` and `TRUE`, not a random `x9TrUek2`; `example` stops
/// `AKIA…7EXAMPLE`, not `counterexamples`. A stopword of one repeated character (`xxxx`,
/// `####`) stops any run of it, which is how masked values look.
pub fn stopword_in(value: &[u8], stop: &[u8]) -> bool {
    let Some((&first, _)) = stop.split_first() else {
        return false;
    };
    if stop.iter().all(|b| *b == first) {
        return memchr::memmem::find(value, stop).is_some();
    }
    let last = stop[stop.len() - 1];
    memchr::memmem::find_iter(value, stop).any(|at| {
        let end = at + stop.len();
        let open = !first.is_ascii_alphabetic() || at == 0 || !value[at - 1].is_ascii_alphabetic();
        let close =
            !last.is_ascii_alphabetic() || end == value.len() || !value[end].is_ascii_alphabetic();
        open && close
    })
}

/// 1-based column of byte `offset` within `line` (counted in characters).
pub fn column(line: &[u8], offset_in_line: usize) -> usize {
    let prefix = line.get(..offset_in_line).unwrap_or(line);
    String::from_utf8_lossy(prefix).chars().count() + 1
}

/// True when byte `at` of `line` lies inside a string literal or after a line comment
/// (`//`, `#`, `--`). Quotes are counted from the line's start, with `\` escapes, which
/// is exact for the single-line literals stub markers live in.
pub fn in_literal_or_comment(line: &[u8], at: usize) -> bool {
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < at && i < line.len() {
        let b = line[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'"' | b'\'' | b'`' => {
                    // `'` also opens Rust lifetimes and char literals; a lifetime never
                    // closes on the same line the way a literal does, so only count it
                    // when it closes before `at`.
                    if b == b'\'' && !line[i + 1..at.min(line.len())].contains(&b'\'') {
                        i += 1;
                        continue;
                    }
                    quote = Some(b);
                }
                b'/' if line.get(i + 1) == Some(&b'/') => return true,
                b'#' => return true,
                b'-' if line.get(i + 1) == Some(&b'-') && line.get(i + 2) == Some(&b' ') => {
                    return true
                }
                _ => {}
            },
        }
        i += 1;
    }
    quote.is_some()
}

/// What a report may show of a secret: its provider prefix (`ghp_`, `sk-`, `xoxb-`: the
/// letters before the first `_` or `-`, which every token of that kind shares) and its
/// length — never a character of the random part.
pub fn redact(secret: &str) -> String {
    let n = secret.chars().count();
    let prefix = secret
        .char_indices()
        .find(|(_, c)| *c == '_' || *c == '-')
        .filter(|(i, _)| (2..=8).contains(i) && n >= 16)
        .map(|(i, _)| &secret[..=i])
        .filter(|p| p[..p.len() - 1].chars().all(|c| c.is_ascii_alphabetic()))
        .unwrap_or("");
    format!("{prefix}…[{n} chars]")
}

/// A stable fingerprint of a finding: the rule, the file and the secret (or matched
/// text), never the line, so a baseline entry survives code moving around it.
pub fn fingerprint(rule: &str, path: &str, value: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"contextos-finding-v1\0");
    h.update(rule.as_bytes());
    h.update([0]);
    h.update(path.as_bytes());
    h.update([0]);
    h.update(value);
    let d = h.finalize();
    let mut s = String::with_capacity(32);
    for b in d.iter().take(16) {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Looks like text: no NUL byte in the first 8000 bytes (git's own heuristic).
pub fn is_binary(data: &[u8]) -> bool {
    let head = data.get(..8000).unwrap_or(data);
    memchr::memchr(0, head).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_map_offsets() {
        let t = b"ab\ncd\r\n\nef";
        let l = Lines::new(t);
        assert_eq!(l.count(), 4);
        assert_eq!(l.line_of(0), 0);
        assert_eq!(l.line_of(3), 1);
        assert_eq!(l.line_of(7), 2);
        assert_eq!(l.line_of(8), 3);
        assert_eq!(&t[l.range(1, t)], b"cd");
        assert_eq!(&t[l.range(3, t)], b"ef");
        assert_eq!(Lines::new(b"a\n").count(), 1);
    }

    #[test]
    fn entropy_orders_random_above_repetitive() {
        assert!(entropy(b"aaaaaaaaaaaa") < 0.1);
        assert!(entropy(b"x7Gq2LmP9sKd4Tz8") > 3.5);
    }

    #[test]
    fn stopwords_match_words_not_letters_inside_a_value() {
        assert!(stopword_in(b"true", b"true"));
        assert!(stopword_in(b"enabled_true", b"true"));
        assert!(!stopword_in(b"x9truek2mq", b"true"));
        assert!(stopword_in(b"akiaiosfodnn7example", b"example"));
        assert!(!stopword_in(b"counterexamples", b"example"));
        assert!(stopword_in(b"ghp_xxxxxxxxxxxx", b"xxxx"));
        assert!(stopword_in(b"sk_####_####", b"####"));
        assert!(stopword_in(b"foo(bar", b"("));
        assert!(stopword_in(b"your_api_key", b"your_"));
        assert!(!stopword_in(b"", b"x"));
        assert!(!stopword_in(b"abc", b""));
    }

    #[test]
    fn literal_and_comment_context() {
        let l = br#"let s = "todo!()"; todo!()"#;
        assert!(in_literal_or_comment(l, 9));
        assert!(!in_literal_or_comment(l, 19));
        assert!(in_literal_or_comment(b"x // todo!()", 5));
        assert!(!in_literal_or_comment(
            b"fn f<'a>(x: &'a str) { todo!() }",
            23
        ));
    }

    #[test]
    fn redaction_hides_the_value() {
        let r = redact("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
        assert_eq!(r, "ghp_…[40 chars]");
        assert_eq!(redact("hunter2"), "…[7 chars]");
        assert_eq!(redact("xoxb-1234567890-abcdefghijkl"), "xoxb-…[28 chars]");
        assert_eq!(
            redact("vRMxqB7stjX5aufmOTz2u6z6VHQrMs4t1FUtiCT7"),
            "…[40 chars]"
        );
        assert_eq!(
            redact("-9HgZuvayMQryl22Gwgyw6Fb3ixBHsMAtMhzVmFbW98"),
            "…[43 chars]"
        );
        assert_eq!(redact("AKIAABCDEFGHIJKLMNOP"), "…[20 chars]");
    }

    #[test]
    fn fingerprints_ignore_lines_but_not_files() {
        let a = fingerprint("r", "a.txt", b"v");
        assert_eq!(a, fingerprint("r", "a.txt", b"v"));
        assert_ne!(a, fingerprint("r", "b.txt", b"v"));
        assert_ne!(a, fingerprint("q", "a.txt", b"v"));
        assert_eq!(a.len(), 32);
    }
}

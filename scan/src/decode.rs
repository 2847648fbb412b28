//! The decoding layer: a second look at added lines whose secret a line regex cannot see as
//! written.
//!
//! Two encodings hide a credential from a regex over the raw line:
//! - **base64 / base64url values.** A Kubernetes `Secret`'s `data:` values, a JWT or a PEM
//!   block stored base64-encoded, a `config.json` `auth` field. A run of the base64 alphabet
//!   that decodes to printable text is replaced by that text.
//! - **string literals split and joined.** `"-----BEGIN …" +\n "MIIE…"`, PHP's `.`, VB's
//!   `&`, and adjacent literals (`"abc" "def"` in C, Python and Go raw strings): the closing
//!   quote, the operator and the opening quote are dropped, across lines too.
//!
//! The result is a [`View`]: the rewritten text of the blocks of lines that needed it, and
//! for every byte of it the offset in the original content it came from, so a finding in a
//! view is reported at the original line. Only lines that need a rewrite are copied, and
//! long lines (minified bundles, data blobs) are left alone: the cost stays with the lines
//! that have something to decode. Escaped newlines (`\n`, `\r\n` inside a literal) are
//! matched by the private-key detector's own regex and need no view.

use std::ops::Range;

/// Lines longer than this are not decoded: minified bundles and embedded blobs, whose
/// secrets the raw pass already sees, would cost the most and yield the least.
pub const MAX_LINE: usize = 16 * 1024;

/// The shortest base64 run worth decoding: 12 bytes of text, a short password.
const MIN_BASE64: usize = 16;

/// The most lines one joined-literal block spans.
const MAX_BLOCK_LINES: usize = 64;

/// Rewritten text and, for every byte of it, the offset in the original content it stands
/// for.
#[derive(Debug, Default)]
pub struct View {
    pub text: Vec<u8>,
    src: Vec<usize>,
}

impl View {
    /// The original offset behind byte `at` of the view (the last one past the end).
    pub fn source(&self, at: usize) -> usize {
        self.src
            .get(at)
            .or_else(|| self.src.last())
            .copied()
            .unwrap_or(0)
    }

    fn push(&mut self, b: u8, from: usize) {
        self.text.push(b);
        self.src.push(from);
    }

    fn extend(&mut self, bytes: &[u8], from: usize) {
        self.text.extend_from_slice(bytes);
        self.src.extend(std::iter::repeat_n(from, bytes.len()));
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// The base64 and base64url alphabets as a table: the run finder looks at every byte of
/// every added line, and a table lookup is the cheapest test per byte.
const B64: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
        b += 1;
    }
    t
};

fn is_b64(b: u8) -> bool {
    B64[usize::from(b)]
}

fn b64_value(b: u8) -> Option<u32> {
    Some(u32::from(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    }))
}

/// Decodes a base64 or base64url run (padding optional) that stands for printable text:
/// ASCII letters, digits, punctuation and whitespace only. `None` for anything else, which
/// is what random bytes, hashes and identifiers decode to.
pub fn decode_text(run: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(run.len() * 3 / 4);
    decode_with(run, |b| out.push(b)).then_some(out)
}

/// True when `run` decodes to text ([`decode_text`] would return it), without building
/// the text: most runs an added line holds are identifiers and hashes, which fail here.
fn is_text(run: &[u8]) -> bool {
    decode_with(run, |_| {})
}

/// Decodes `run`, handing each byte to `sink`; true when the run is base64 of text.
fn decode_with(run: &[u8], sink: impl FnMut(u8)) -> bool {
    let body = run.strip_suffix(b"==").or_else(|| run.strip_suffix(b"="));
    let body = body.unwrap_or(run);
    if body.len() < MIN_BASE64 || body.len() % 4 == 1 {
        return false;
    }
    // Most runs (identifiers, hashes) stop decoding to text within a few bytes, and the
    // alphabet check reads the whole run two or three times: decoding goes first. Both
    // are required; a caller keeps what `sink` saw only when the answer is true.
    decode_bytes(body, sink) && one_alphabet(body)
}

/// Whether `body` sticks to one alphabet: base64 (`+`, `/`) or base64url (`-`, `_`),
/// and is not words joined by `-` or `_` (`my-service-name`, `SOME_CONSTANT_NAME`),
/// which are names.
fn one_alphabet(body: &[u8]) -> bool {
    let std = body.iter().any(|b| matches!(b, b'+' | b'/'));
    let url = body.iter().any(|b| matches!(b, b'-' | b'_'));
    if url {
        !std && body.iter().any(u8::is_ascii_digit)
    } else {
        true
    }
}

/// Decodes `body` (no padding), handing each byte to `sink`; true when every character
/// is in the alphabets and the bytes are text.
fn decode_bytes(body: &[u8], mut sink: impl FnMut(u8)) -> bool {
    let mut acc = 0u32;
    let mut bits = 0u32;
    let (mut len, mut alnum) = (0usize, 0usize);
    for &b in body {
        let Some(v) = b64_value(b) else {
            return false;
        };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let byte = ((acc >> bits) & 0xFF) as u8;
            if !(byte.is_ascii_graphic() || matches!(byte, b' ' | b'\t' | b'\n' | b'\r')) {
                return false;
            }
            len += 1;
            alnum += usize::from(byte.is_ascii_alphanumeric());
            sink(byte);
        }
    }
    // Text has some letters; a run of punctuation is not worth a second look.
    alnum * 2 >= len
}

/// The base64 runs of `line` long enough to decode, as ranges of `line`.
///
/// A run of at least [`MIN_BASE64`] bytes that starts within the next [`MIN_BASE64`]
/// bytes covers the last of them, so one probe there rules the whole stretch out when it
/// is not in the alphabet: ordinary text is stepped through a word's length at a time.
fn candidate_runs(line: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        loop {
            let probe = i + MIN_BASE64 - 1;
            if probe >= line.len() {
                return None;
            }
            if !is_b64(line[probe]) {
                i = probe + 1;
                continue;
            }
            // `line[i - 1]`, when there is one, ended the previous run or was a probe
            // outside the alphabet, so the run holding the probe starts at `i` or later.
            let mut start = probe;
            while start > i && is_b64(line[start - 1]) {
                start -= 1;
            }
            let mut end = probe + 1;
            while end < line.len() && is_b64(line[end]) {
                end += 1;
            }
            while end < line.len() && line[end] == b'=' && end - start < MAX_LINE {
                end += 1;
            }
            i = end;
            if end - start >= MIN_BASE64 {
                return Some(start..end);
            }
        }
    })
}

/// True when `line` holds a base64 run that decodes to text.
fn has_text_run(line: &[u8]) -> bool {
    candidate_runs(line).any(|r| is_text(&line[r]))
}

/// Base64 runs of `line` (a slice of the content starting at offset `base`) that decode
/// to text, as (range in the content, decoded text).
fn base64_runs(line: &[u8], base: usize) -> Vec<(Range<usize>, Vec<u8>)> {
    candidate_runs(line)
        .filter_map(|r| decode_text(&line[r.clone()]).map(|t| (base + r.start..base + r.end, t)))
        .collect()
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// If a literal closes at `content[at]` (a quote) and the next literal, with the same
/// quote, opens after an operator or whitespace, the offset just past that opening quote.
/// `limit` bounds the look-ahead (the block's end).
fn join_at(content: &[u8], at: usize, limit: usize) -> Option<usize> {
    let q = *content.get(at)?;
    let mut i = at + 1;
    let mut gap = false;
    let mut op = false;
    while i < limit {
        let b = content[i];
        if is_space(b) {
            gap = true;
        } else if !op && matches!(b, b'+' | b'.' | b'&') {
            op = true;
        } else if b == b'\\'
            && content
                .get(i + 1)
                .is_some_and(|n| *n == b'\n' || *n == b'\r')
        {
            // A shell or C line continuation.
            gap = true;
        } else {
            break;
        }
        i += 1;
    }
    (i < limit && content[i] == q && (gap || op) && i > at + 1).then_some(i + 1)
}

/// True when a literal on this line is continued on the next (`"…" +`, `"…" .`, `"…"`
/// followed by a line that opens with a literal or an operator). `next` is asked for only
/// when the line ends with a quote: most lines end otherwise, and finding a line's range
/// costs a few bounds checks.
fn continues<'a>(line: &[u8], next: impl FnOnce() -> Option<&'a [u8]>) -> bool {
    let t = trim_end(line);
    match t.split_last() {
        Some((b'+' | b'.' | b'&' | b'\\', rest)) => {
            matches!(trim_end(rest).last(), Some(b'"' | b'\''))
        }
        Some((b'"' | b'\'', _)) => next().is_some_and(|n| {
            let n = trim_start(n);
            match n.split_first() {
                Some((b'"' | b'\'', _)) => true,
                Some((b'+' | b'.' | b'&', rest)) => {
                    matches!(trim_start(rest).first(), Some(b'"' | b'\''))
                }
                _ => false,
            }
        }),
        _ => false,
    }
}

fn trim_end(s: &[u8]) -> &[u8] {
    let n = s.iter().rposition(|b| !is_space(*b)).map_or(0, |i| i + 1);
    &s[..n]
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().position(|b| !is_space(*b)).unwrap_or(s.len());
    &s[n..]
}

/// True when a same-line join point occurs in `line` at or after `from`, where its first
/// quote is (a join point is a quote).
fn has_join_from(line: &[u8], from: usize) -> bool {
    let mut i = from;
    while let Some(j) = line
        .get(i..)
        .and_then(|rest| memchr::memchr2(b'"', b'\'', rest))
    {
        let at = i + j;
        if join_at(line, at, line.len()).is_some() {
            return true;
        }
        i = at + 1;
    }
    false
}

/// Rewrites `content[block]`: joins literals, replaces base64 text runs by their text.
fn rewrite(content: &[u8], block: Range<usize>, view: &mut View) -> bool {
    let mut changed = false;
    let mut runs = base64_runs(&content[block.clone()], block.start)
        .into_iter()
        .peekable();
    let mut i = block.start;
    while i < block.end {
        if let Some((r, text)) = runs.peek() {
            if r.start == i {
                view.extend(text, i);
                i = r.end;
                runs.next();
                changed = true;
                continue;
            }
        }
        let b = content[i];
        if matches!(b, b'"' | b'\'') {
            if let Some(next) = join_at(content, i, block.end) {
                // Skip runs the dropped gap swallowed (none: the gap holds no base64).
                i = next;
                changed = true;
                continue;
            }
        }
        view.push(b, i);
        i += 1;
    }
    changed
}

/// Appends the rewrite of `block` to `view`, ended by a line break, when it changed
/// something; otherwise leaves `view` as it was.
fn keep_rewritten(content: &[u8], block: Range<usize>, view: &mut View) {
    let mark = view.text.len();
    if rewrite(content, block.clone(), view) {
        view.push(b'\n', block.end);
    } else {
        view.text.truncate(mark);
        view.src.truncate(mark);
    }
}

/// The first quote at or after a line's start, for [`view`]'s lines in order. About three
/// added lines in four hold no quote: one search from a line's start answers for every
/// line before the quote it finds, where a search per line cost a call for each.
struct NextQuote<'a> {
    content: &'a [u8],
    /// No quote lies in `content[from..at]`; `at` is one, or the content's end.
    from: usize,
    at: usize,
}

impl<'a> NextQuote<'a> {
    fn new(content: &'a [u8]) -> NextQuote<'a> {
        // Nothing searched yet: the first call searches.
        NextQuote {
            content,
            from: usize::MAX,
            at: 0,
        }
    }

    /// The offset of the first quote at or after `start` (the content's end when none).
    fn after(&mut self, start: usize) -> usize {
        if start < self.from || self.at < start {
            self.from = start;
            self.at = self
                .content
                .get(start..)
                .and_then(|rest| memchr::memchr2(b'"', b'\'', rest))
                .map_or(self.content.len(), |j| start + j);
        }
        self.at
    }
}

/// The view of the added `ranges` (line index ranges, as [`crate::text::Lines`] counts
/// them), or `None` when no added line needs decoding.
pub fn view(content: &[u8], lines: &crate::text::Lines, ranges: &[Range<usize>]) -> Option<View> {
    let mut view = View::default();
    let mut quotes = NextQuote::new(content);
    for r in ranges {
        let mut l = r.start;
        while l < r.end {
            let lr = lines.range(l, content);
            let line = &content[lr.clone()];
            if line.len() > MAX_LINE || line.len() < MIN_BASE64 / 2 {
                l += 1;
                continue;
            }
            let mut last = l;
            let mut last_end = lr.end;
            let mut tail = line;
            while last + 1 < r.end && last - l < MAX_BLOCK_LINES {
                let next_range = || lines.range(last + 1, content);
                if !continues(tail, || Some(&content[next_range()])) {
                    break;
                }
                let nr = next_range();
                if nr.len() > MAX_LINE {
                    break;
                }
                last += 1;
                last_end = nr.end;
                tail = &content[nr];
            }
            let spans = last > l;
            let mut joins = || {
                let q = quotes.after(lr.start);
                q < lr.end && has_join_from(line, q - lr.start)
            };
            if spans || joins() || has_text_run(line) {
                keep_rewritten(content, lr.start..last_end, &mut view);
            }
            l = last + 1;
        }
    }
    (!view.is_empty()).then_some(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Lines;

    fn b64(s: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for c in s.chunks(3) {
            let n = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for i in 0..4 {
                if i <= c.len() {
                    out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    fn view_of(text: &str) -> Option<String> {
        let lines = Lines::new(text.as_bytes());
        view(
            text.as_bytes(),
            &lines,
            std::slice::from_ref(&(0..lines.count())),
        )
        .map(|v| String::from_utf8_lossy(&v.text).into_owned())
    }

    #[test]
    fn base64_text_is_decoded_in_place() {
        let line = format!("  password: {}\n", b64(b"correct-horse-battery"));
        assert_eq!(
            view_of(&line).as_deref(),
            Some("  password: correct-horse-battery\n")
        );
        // Padding-free base64url decodes too.
        let url = b64(b"a token: abc123?>xyz")
            .trim_end_matches('=')
            .replace('+', "-");
        assert!(view_of(&format!("v={url}\n")).is_some_and(|v| v.contains("a token")));
    }

    #[test]
    fn binary_hashes_and_names_are_not_decoded() {
        assert_eq!(
            decode_text(b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            None
        );
        assert_eq!(view_of("let getElementsByTagNameNS = 1;\n"), None);
        assert_eq!(view_of("name: my-service-account-name\n"), None);
        assert_eq!(view_of("CONSTANT_NAME_THAT_IS_LONG = 2\n"), None);
    }

    #[test]
    fn literals_are_joined_across_lines() {
        let text = "k = \"-----BEGIN\" +\n    \"MIIEabc\" +\n    \"def\"\nother = 1\n";
        assert_eq!(
            view_of(text).as_deref(),
            Some("k = \"-----BEGINMIIEabcdef\"\n")
        );
        assert_eq!(
            view_of("$t = 'abc' . 'def';\n").as_deref(),
            Some("$t = 'abcdef';\n")
        );
        assert_eq!(
            view_of("x = (\"abcdefgh\"\n     \"ijkl\")\n").as_deref(),
            Some("x = (\"abcdefghijkl\")\n")
        );
    }

    #[test]
    fn views_map_back_to_the_original_offsets() {
        let text = "a = 1\nk = \"abcdefgh\" + \"ijkl\"\n";
        let lines = Lines::new(text.as_bytes());
        let v = view(
            text.as_bytes(),
            &lines,
            std::slice::from_ref(&(0..lines.count())),
        )
        .unwrap();
        let at = v.text.iter().position(|b| *b == b'i').unwrap();
        assert_eq!(&text[v.source(at)..v.source(at) + 4], "ijkl");
        assert_eq!(lines.line_of(v.source(0)), 1);
    }

    /// The runs as a byte-at-a-time walk finds them: the reference for the probing finder.
    fn runs_walked(line: &[u8]) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < line.len() {
            if !is_b64(line[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < line.len() && is_b64(line[i]) {
                i += 1;
            }
            while i < line.len() && line[i] == b'=' {
                i += 1;
            }
            if i - start >= MIN_BASE64 {
                out.push(start..i);
            }
        }
        out
    }

    /// Lines made of pieces that exercise the finder: base64 of text (padded or not),
    /// runs of the alphabet of any length, padding, and the bytes that end a run.
    fn line_of_pieces() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let text = proptest::collection::vec(0x20u8..0x7f, 0..40).prop_map(|t| {
            let mut s = b64(&t);
            if t.len() % 2 == 0 {
                s = s.trim_end_matches('=').to_string();
            }
            s.into_bytes()
        });
        let alphabet =
            proptest::collection::vec(proptest::sample::select(b"aZ09+/-_".to_vec()), 0..40);
        let enders = proptest::collection::vec(
            proptest::sample::select(b"= .\"'\n\t:,\x80\xff".to_vec()),
            1..4,
        );
        let piece = prop_oneof![text, alphabet, enders];
        proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat())
    }

    fn alphabet_len(line: &[u8], r: &Range<usize>) -> usize {
        line[r.clone()].iter().filter(|b| **b != b'=').count()
    }

    /// The text runs as the walk finds them: the reference for `has_text_run` and
    /// `base64_runs`.
    fn text_runs_walked(line: &[u8]) -> Vec<(Range<usize>, Vec<u8>)> {
        runs_walked(line)
            .into_iter()
            .filter_map(|r| decode_text(&line[r.clone()]).map(|t| (r, t)))
            .collect()
    }

    /// The runs the probe finds and the runs a byte-by-byte walk finds, each kept where
    /// its alphabet part reaches MIN_BASE64: a walked run shorter than that (the rest is
    /// padding) cannot decode, so the probe may skip it; every other run must be the same.
    fn probed_and_walked(line: &[u8]) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
        let probed = candidate_runs(line)
            .filter(|r| alphabet_len(line, r) >= MIN_BASE64)
            .collect();
        let decodable = runs_walked(line)
            .into_iter()
            .filter(|r| alphabet_len(line, r) >= MIN_BASE64)
            .collect();
        (probed, decodable)
    }

    proptest::proptest! {
        #[test]
        fn probing_finds_every_run_a_walk_finds_that_could_decode(
            line in proptest::collection::vec(
                proptest::sample::select(b"aZ09+/-_= .\"'".to_vec()), 0..200)
        ) {
            let (probed, decodable) = probed_and_walked(&line);
            proptest::prop_assert_eq!(probed, decodable);
        }

        #[test]
        fn the_finder_agrees_with_a_walk_on_lines_of_runs(line in line_of_pieces()) {
            let (probed, decodable) = probed_and_walked(&line);
            proptest::prop_assert_eq!(probed, decodable);
            let walked = text_runs_walked(&line);
            proptest::prop_assert_eq!(has_text_run(&line), !walked.is_empty());
            let shifted: Vec<(Range<usize>, Vec<u8>)> = walked
                .into_iter()
                .map(|(r, t)| (r.start + 7..r.end + 7, t))
                .collect();
            proptest::prop_assert_eq!(base64_runs(&line, 7), shifted);
        }
    }

    /// `view` as first written, line by line: the reference for the one that reads
    /// quotes ahead and line ranges only when needed.
    fn view_line_by_line(content: &[u8], lines: &Lines, ranges: &[Range<usize>]) -> Option<View> {
        let has_join = |line: &[u8]| {
            let mut i = 0;
            while let Some(j) = memchr::memchr2(b'"', b'\'', &line[i..]) {
                let at = i + j;
                if join_at(line, at, line.len()).is_some() {
                    return true;
                }
                i = at + 1;
            }
            false
        };
        let mut view = View::default();
        for r in ranges {
            let mut l = r.start;
            while l < r.end {
                let lr = lines.range(l, content);
                let line = &content[lr.clone()];
                if line.len() > MAX_LINE || line.len() < MIN_BASE64 / 2 {
                    l += 1;
                    continue;
                }
                let next =
                    |k: usize| (k + 1 < r.end).then(|| &content[lines.range(k + 1, content)]);
                let mut last = l;
                while last + 1 < r.end
                    && last - l < MAX_BLOCK_LINES
                    && continues(&content[lines.range(last, content)], || next(last))
                    && next(last).is_some_and(|n| n.len() <= MAX_LINE)
                {
                    last += 1;
                }
                let spans = last > l;
                if spans || has_join(line) || has_text_run(line) {
                    keep_rewritten(content, lr.start..lines.range(last, content).end, &mut view);
                }
                l = last + 1;
            }
        }
        (!view.is_empty()).then_some(view)
    }

    /// Content of lines made of literals, operators, base64 of text, words and line ends,
    /// some lines long: what joins, spans and decodes.
    fn content_of_pieces() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let text =
            proptest::collection::vec(0x20u8..0x7f, 12..30).prop_map(|t| b64(&t).into_bytes());
        let word = proptest::sample::select(vec![
            &b"\""[..],
            b"'",
            b" + ",
            b" . ",
            b" & ",
            b" \\",
            b"\n",
            b"\r\n",
            b"  ",
            b"\t",
            b"abcdefgh",
            b"x = ",
            b"\"abc\" \"def\"",
            b"'k' . 'v'",
        ])
        .prop_map(<[u8]>::to_vec);
        // A whole line of about MAX_LINE bytes between quotes, which a block may take or
        // must stop at.
        let long =
            proptest::sample::select(vec![MAX_LINE - 1, MAX_LINE, MAX_LINE + 1]).prop_map(|n| {
                let mut l = vec![b'q'; n + 2];
                l[0] = b'\n';
                l[1] = b'\'';
                l[n] = b'\'';
                l[n + 1] = b'\n';
                l
            });
        let piece = prop_oneof![4 => word, 2 => text, 1 => long];
        proptest::collection::vec(piece, 0..60).prop_map(|p| p.concat())
    }

    proptest::proptest! {
        #[test]
        fn the_view_agrees_with_the_view_line_by_line(
            content in content_of_pieces(),
            cuts in proptest::collection::vec(0usize..40, 0..6),
        ) {
            let lines = Lines::new(&content);
            let n = lines.count();
            // Every line added, or the ranges between sorted cut points.
            let mut at: Vec<usize> = cuts.iter().map(|c| c % (n + 1)).collect();
            at.sort_unstable();
            let pairs: Vec<Range<usize>> = at.chunks(2).filter_map(|c| match c {
                [a, b] => Some(*a..*b),
                _ => None,
            }).collect();
            let every: Vec<Range<usize>> = std::iter::once(0..n).collect();
            for ranges in [every, pairs] {
                let fast = view(&content, &lines, &ranges);
                let slow = view_line_by_line(&content, &lines, &ranges);
                proptest::prop_assert_eq!(
                    fast.as_ref().map(|v| (&v.text, &v.src)),
                    slow.as_ref().map(|v| (&v.text, &v.src))
                );
            }
        }
    }

    #[test]
    fn empty_strings_and_plain_lines_are_left_alone() {
        assert_eq!(view_of("x = \"\"\ny = ''\n"), None);
        assert_eq!(view_of("print(\"a\", \"b\")\n"), None);
    }
}

//! The lexical stage of the safe-path primitive, applied before any rule sees a path.
//!
//! Rules are written against repository-relative, `/`-separated paths. A path that cannot
//! be brought into that form — or that names the same file differently on some operating
//! system — is rejected with a stable reason code, and the request is denied without
//! consulting rules. The rules are the same on every OS: a repository must stay portable,
//! so a name Windows or macOS would alias is refused on Linux too.
//!
//! Not covered here (physical stage): symbolic links, mounts and hard links, which need
//! the file system and are resolved beneath the project root by the effect handlers.

use std::borrow::Cow;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Characters with meaning in a path; a look-alike that folds to one of them is refused.
const PATH_SYNTAX: [char; 7] = ['.', '/', '\\', ':', '%', '~', '$'];

/// A rejected path: `code` is stable and documented in the book.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PathRejection {
    /// Stable `path.*` reason code; it becomes the decision's
    /// [`Rejection::code`](crate::decision::Rejection::code).
    pub code: &'static str,
    /// What is wrong with the path, for people.
    pub message: String,
}

fn reject(code: &'static str, message: impl Into<String>) -> PathRejection {
    PathRejection {
        code,
        message: message.into(),
    }
}

/// Maximum length of a path in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Maximum length of one path segment in bytes (the common file-system limit).
pub const MAX_SEGMENT_BYTES: usize = 255;

/// Returns the canonical repository-relative form of `raw`: `/` separators, no `.`
/// segments, no empty segments. See the module documentation for what is rejected.
pub fn canonical_path(raw: &str) -> Result<String, PathRejection> {
    canonical_path_cow(raw).map(Cow::into_owned)
}

/// [`canonical_path`], borrowing `raw` when it is already canonical (nearly every path an
/// agent sends), so the evaluator need not copy it.
pub(crate) fn canonical_path_cow(raw: &str) -> Result<Cow<'_, str>, PathRejection> {
    match canonical_ascii(raw) {
        Some(c) => Ok(c),
        None => canonical_any(raw).map(Cow::Owned),
    }
}

/// The canonical form of a plain ASCII path that passes every check, in one pass over its
/// bytes; `None` for anything else — non-ASCII, a byte some check is about, a segment
/// that is refused — which [`canonical_any`] then decides, with its reason. Every check of
/// `canonical_any` that can refuse an ASCII path is covered by a byte sent there, so the
/// two agree; a property test holds them to it.
fn canonical_ascii(raw: &str) -> Option<Cow<'_, str>> {
    let b = raw.as_bytes();
    if b.is_empty() || b.len() > MAX_PATH_BYTES || matches!(b[0], b'/' | b'\\' | b'~') {
        return None;
    }
    // Whether `raw` is already canonical: no `\\`, no empty or `.` segment.
    let mut as_is = true;
    let mut segments = 0usize;
    let mut start = 0usize;
    for (i, &c) in b.iter().enumerate() {
        match BYTE[usize::from(c)] {
            Class::Plain => {}
            Class::Separator => {
                let plain = segment_is_plain(b.get(start..i)?)?;
                as_is &= plain && c == b'/';
                segments += usize::from(plain);
                start = i + 1;
            }
            Class::Refer => return None,
        }
    }
    let last = segment_is_plain(b.get(start..)?)?;
    as_is &= last;
    segments += usize::from(last);
    if segments == 0 {
        return None;
    }
    if as_is {
        return Some(Cow::Borrowed(raw));
    }
    let joined: Vec<&str> = raw
        .split(['/', '\\'])
        .filter(|s| !matches!(*s, "" | "."))
        .collect();
    Some(Cow::Owned(joined.join("/")))
}

/// What [`canonical_ascii`] does with a byte.
#[derive(Clone, Copy)]
enum Class {
    /// Allowed anywhere in a segment.
    Plain,
    /// `/` or `\\`.
    Separator,
    /// Non-ASCII, control, or a byte a check is about (`:<>"|?*%`): left to the full
    /// checks.
    Refer,
}

const BYTE: [Class; 256] = {
    let mut t = [Class::Refer; 256];
    let mut c = 0x20;
    while c < 0x7f {
        t[c] = match c as u8 {
            b'/' | b'\\' => Class::Separator,
            b':' | b'<' | b'>' | b'"' | b'|' | b'?' | b'*' | b'%' => Class::Refer,
            _ => Class::Plain,
        };
        c += 1;
    }
    t
};

/// Of a segment of plain bytes: `Some(true)` when it passes the segment checks,
/// `Some(false)` for an empty or `.` segment (dropped from the canonical form), `None`
/// when it is refused (or is `..`).
fn segment_is_plain(seg: &[u8]) -> Option<bool> {
    match seg {
        [] | [b'.'] => Some(false),
        [b'.', b'.'] => None,
        [first, .., last] | [first @ last]
            if seg.len() <= MAX_SEGMENT_BYTES
                && *first != b' '
                && !matches!(last, b'.' | b' ')
                && !is_device_name_ascii(seg)
                && !is_git_alias_ascii(seg) =>
        {
            Some(true)
        }
        _ => None,
    }
}

/// [`canonical_path`] for any input, check by check.
fn canonical_any(raw: &str) -> Result<String, PathRejection> {
    if raw.is_empty() {
        return Err(reject("path.empty", "the path is empty"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(reject(
            "path.too-long",
            format!("the path is longer than {MAX_PATH_BYTES} bytes"),
        ));
    }
    if raw.contains('\0') {
        return Err(reject("path.nul", "the path contains a NUL byte"));
    }
    if raw.chars().any(char::is_control) {
        return Err(reject(
            "path.control",
            "the path contains a control character",
        ));
    }
    if raw.starts_with('/') || raw.starts_with('\\') {
        return Err(reject(
            "path.absolute",
            "absolute, UNC and device paths are outside the project; use a repository-relative path",
        ));
    }
    let bytes = raw.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(reject(
            "path.drive",
            "drive-letter paths are outside the project",
        ));
    }
    if let Some(c) = raw.chars().find(|c| is_ignorable(*c)) {
        return Err(reject(
            "path.invisible-char",
            format!("the path contains the invisible character U+{:04X}, which some file systems ignore", u32::from(c)),
        ));
    }
    if is_nfc_quick(raw.chars()) != IsNormalized::Yes && raw.nfc().ne(raw.chars()) {
        return Err(reject(
            "path.unicode-normalization",
            "the path is not in Unicode NFC form; macOS would treat it as another spelling of an NFC name",
        ));
    }
    if raw.starts_with('~') {
        return Err(reject(
            "path.tilde",
            "a leading `~` means a home directory to a shell; use a repository-relative path",
        ));
    }
    if has_percent_escape(raw) {
        return Err(reject(
            "path.percent-encoded",
            "the path contains a %XX escape; paths are never decoded, so this spelling is refused",
        ));
    }
    if let Some(c) = raw.chars().find(|c| folds_to_path_syntax(*c)) {
        return Err(reject(
            "path.confusable",
            format!(
                "U+{:04X} looks like path syntax after Unicode compatibility folding",
                u32::from(c)
            ),
        ));
    }
    let mut segments: Vec<&str> = Vec::new();
    for seg in raw.split(['/', '\\']) {
        match seg {
            "" | "." => {}
            ".." => {
                return Err(reject(
                    "path.traversal",
                    "`..` segments may escape the project and are not allowed",
                ))
            }
            s => {
                check_segment(s)?;
                segments.push(s);
            }
        }
    }
    if segments.is_empty() {
        return Err(reject(
            "path.empty",
            "the path names the project root itself",
        ));
    }
    Ok(segments.join("/"))
}

fn check_segment(s: &str) -> Result<(), PathRejection> {
    if s.len() > MAX_SEGMENT_BYTES {
        return Err(reject(
            "path.segment-too-long",
            format!("a path segment is longer than {MAX_SEGMENT_BYTES} bytes"),
        ));
    }
    if s.contains(':') {
        return Err(reject(
            "path.stream",
            format!("`{s}`: a `:` names an NTFS alternate data stream (or a drive) on Windows"),
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| matches!(c, '<' | '>' | '"' | '|' | '?' | '*'))
    {
        return Err(reject(
            "path.reserved-char",
            format!("`{s}`: `{c}` cannot appear in a file name on Windows"),
        ));
    }
    if s.ends_with('.') || s.ends_with(' ') {
        return Err(reject(
            "path.trailing-dot-space",
            format!("`{s}`: Windows drops trailing dots and spaces, so this names another file"),
        ));
    }
    if s.starts_with(' ') {
        return Err(reject(
            "path.leading-space",
            format!("`{s}`: a leading space makes a name that looks like another"),
        ));
    }
    if is_device_name(s) {
        return Err(reject(
            "path.device",
            format!("`{s}` is a reserved device name on Windows"),
        ));
    }
    if is_git_alias(s) {
        return Err(reject(
            "path.git-alias",
            format!("`{s}` is another spelling of `.git` on case-insensitive or 8.3 file systems"),
        ));
    }
    Ok(())
}

fn has_percent_escape(s: &str) -> bool {
    s.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// Fullwidth `．／＼：`, the one-dot leader `․`, and other compatibility forms whose NFKC
/// folding is (or contains) path syntax; Windows' best-fit conversion makes them real.
fn folds_to_path_syntax(c: char) -> bool {
    !c.is_ascii() && std::iter::once(c).nfkc().any(|f| PATH_SYNTAX.contains(&f))
        || matches!(
            c,
            '\u{2215}' | '\u{2044}' | '\u{29F8}' | '\u{29F9}' | '\u{FE68}'
        )
}

/// Windows reserved device names, matched on the part before the first dot with trailing
/// spaces removed, case-insensitively: `nul.txt`, `COM1 .log`, `lpt¹`, `conin$`.
fn is_device_name(segment: &str) -> bool {
    let stem = segment
        .split('.')
        .next()
        .unwrap_or(segment)
        .trim_end_matches(' ');
    if stem.is_ascii() {
        return is_device_stem_ascii(stem.as_bytes());
    }
    is_device_name_unicode(stem)
}

/// [`is_device_name`] of an ASCII segment, on its bytes.
fn is_device_name_ascii(segment: &[u8]) -> bool {
    let stem = match segment.iter().position(|&c| c == b'.') {
        Some(dot) => &segment[..dot],
        None => segment,
    };
    let end = stem.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1);
    is_device_stem_ascii(&stem[..end])
}

/// Whether an ASCII stem is a device name. Every segment of every path request passes
/// here, so it is compared in place, without building its upper-case form.
fn is_device_stem_ascii(stem: &[u8]) -> bool {
    let is = |name: &[u8]| stem.eq_ignore_ascii_case(name);
    match stem {
        [_, _, _] => is(b"CON") || is(b"PRN") || is(b"AUX") || is(b"NUL"),
        [a, b, c, d] => {
            let prefix = [*a, *b, *c];
            (prefix.eq_ignore_ascii_case(b"COM") || prefix.eq_ignore_ascii_case(b"LPT"))
                && d.is_ascii_digit()
        }
        _ => is(b"CONIN$") || is(b"CONOUT$") || is(b"CLOCK$"),
    }
}

/// [`is_device_name`] on a stem with non-ASCII characters, whose upper-case form may be
/// ASCII (`ı` is `I`) or longer than the stem.
fn is_device_name_unicode(stem: &str) -> bool {
    let upper: String = stem.chars().flat_map(char::to_uppercase).collect();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" | "CLOCK$" => true,
        other => {
            let mut chars = other.chars();
            let prefix: String = chars.by_ref().take(3).collect();
            let rest: Vec<char> = chars.collect();
            (prefix == "COM" || prefix == "LPT")
                && matches!(rest.as_slice(), [d] if d.is_ascii_digit() || matches!(d, '¹' | '²' | '³'))
        }
    }
}

/// `.git` under another spelling: any case variant, or the 8.3 short name `GIT~1`.
fn is_git_alias(segment: &str) -> bool {
    is_git_alias_ascii(segment.as_bytes())
}

/// [`is_git_alias`] on the bytes of a segment (both spellings are ASCII).
fn is_git_alias_ascii(segment: &[u8]) -> bool {
    (segment.eq_ignore_ascii_case(b".git") && segment != b".git")
        || segment.eq_ignore_ascii_case(b"git~1")
}

/// Default-ignorable code points that HFS+ and some tools drop when comparing names
/// (the CVE-2014-9390 family: `.g\u{200c}it` is `.git` there).
fn is_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]
        /// The in-place ASCII comparison answers as the upper-casing one does.
        #[test]
        fn device_names_compare_in_place_as_upper_cased(
            parts in prop::collection::vec(prop_oneof![
                Just("c"), Just("C"), Just("o"), Just("n"), Just("N"), Just("p"), Just("r"),
                Just("u"), Just("x"), Just("a"), Just("l"), Just("t"), Just("m"), Just("i"),
                Just("I"), Just("k"), Just("$"), Just("1"), Just("9"), Just("0"), Just("."),
                Just(" "), Just("ı"), Just("¹"), Just("é"), Just("x.y"),
            ], 0..9)
        ) {
            let segment = parts.concat();
            let stem = segment.split('.').next().unwrap_or(&segment).trim_end_matches(' ');
            prop_assert_eq!(is_device_name(&segment), is_device_name_unicode(stem), "{:?}", segment);
        }
    }

    /// Pieces of the paths the fast path must get right: device names, `.git` spellings,
    /// separators, dots, spaces, every byte a check is about, and a few non-ASCII ones.
    fn path_piece() -> impl Strategy<Value = String> {
        let pick = |v: Vec<&'static str>| prop::sample::select(v).prop_map(String::from);
        prop_oneof![
            3 => pick(vec![
                "nul", "CON", "Aux", "prn", "com1", "LPT9", "com", "conin$", "CLOCK$", ".git",
                ".GIT", "git~1", "GIT~1", "src", "a", "x.y", "é", "ı", "¹",
            ]),
            3 => pick(vec!["/", "\\", ".", "..", " ", "//", "./"]),
            2 => pick(vec![
                ":", "<", ">", "\"", "|", "?", "*", "%", "%4", "%41", "~", "$", "\0", "\t",
                "\x7f", "\u{200b}", "\u{ff0e}",
            ]),
            1 => any::<char>().prop_map(String::from),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The one-pass ASCII path answers as the full checks do, and takes every ASCII
        /// path without a `%` that they accept.
        #[test]
        fn the_ascii_fast_path_agrees_with_the_full_checks(
            pieces in prop::collection::vec(path_piece(), 0..10)
        ) {
            let raw = pieces.concat();
            let full = canonical_any(&raw);
            match canonical_ascii(&raw) {
                Some(fast) => prop_assert_eq!(Ok(fast.into_owned()), full, "{:?}", raw),
                None => prop_assert!(
                    full.is_err() || !raw.is_ascii() || raw.contains('%'),
                    "{:?} fell to the slow path though it is plain ASCII", raw
                ),
            }
        }
    }

    #[test]
    fn an_already_canonical_path_is_borrowed() {
        assert!(matches!(
            canonical_path_cow("src/lib.rs"),
            Ok(Cow::Borrowed("src/lib.rs"))
        ));
        assert!(
            matches!(canonical_path_cow("./src/lib.rs"), Ok(Cow::Owned(s)) if s == "src/lib.rs")
        );
        assert!(
            matches!(canonical_path_cow("src\\lib.rs"), Ok(Cow::Owned(s)) if s == "src/lib.rs")
        );
        assert!(matches!(canonical_path_cow("src/"), Ok(Cow::Owned(s)) if s == "src"));
    }

    #[test]
    fn normalises_separators_and_dots() {
        assert_eq!(canonical_path("./src//lib.rs").as_deref(), Ok("src/lib.rs"));
        assert_eq!(canonical_path("src\\main.rs").as_deref(), Ok("src/main.rs"));
        assert_eq!(canonical_path("docs/./guide/").as_deref(), Ok("docs/guide"));
        assert_eq!(canonical_path(".gitignore").as_deref(), Ok(".gitignore"));
        assert_eq!(canonical_path(".git/config").as_deref(), Ok(".git/config"));
        assert_eq!(
            canonical_path("café/naïve.txt").as_deref(),
            Ok("café/naïve.txt")
        );
        assert_eq!(canonical_path("console.log").as_deref(), Ok("console.log"));
        assert_eq!(canonical_path("com10.txt").as_deref(), Ok("com10.txt"));
        assert_eq!(
            canonical_path(".env.example").as_deref(),
            Ok(".env.example")
        );
    }
}

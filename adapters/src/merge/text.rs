//! Lines, line endings and hashes: what every merge looks at in a text.

/// One line of a text: `start..end` is its content (without `\n`, but with a `\r` before
/// it, if any); `next` is where the following line starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    pub(crate) number: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) next: usize,
}

pub(crate) fn lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut number = 1;
    while start < text.len() {
        let (end, next) = match text[start..].find('\n') {
            Some(i) => (start + i, start + i + 1),
            None => (text.len(), text.len()),
        };
        out.push(Line {
            number,
            start,
            end,
            next,
        });
        start = next;
        number += 1;
    }
    out
}

/// The line ending of the first line break (`\n` when there is none).
pub(crate) fn detect_eol(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

pub(crate) fn with_eol(lf_text: &str, eol: &str) -> String {
    if eol == "\n" {
        lf_text.to_string()
    } else {
        lf_text.replace('\n', eol)
    }
}

/// The text [`super::RecordedFile::normalized_sha256`] hashes: CRLF → LF, trailing whitespace of
/// every line removed. Nothing else (a BOM, for instance, is a change).
pub fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lowercase hex SHA-256 of `text`'s bytes.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

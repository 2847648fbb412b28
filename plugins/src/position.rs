//! Where in a file a parse error is, in the form an editor or a human can follow.

/// `file:line:col` for a byte span of `text` (columns count characters, from 1), or just
/// `file` when the parser gave no span, so every error points where a human can look.
pub(crate) fn file_line_col(
    file: &str,
    text: &str,
    span: Option<std::ops::Range<usize>>,
) -> String {
    let Some(span) = span else {
        return file.to_string();
    };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = match before.rfind('\n') {
        Some(nl) => before.get(nl + 1..).map_or(0, |l| l.chars().count()) + 1,
        None => before.chars().count() + 1,
    };
    format!("{file}:{line}:{col}")
}

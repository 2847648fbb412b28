//! A small lexical pass that runs beside the parser. The parser stops at the first error
//! and skips comments, so this pass provides what it cannot: the `//` comments (for the
//! formatter), the top-level statement boundaries (to report several errors per file),
//! and the bracket depth check that runs *before* the recursive-descent parser can be
//! driven into a stack overflow by hostile nesting.

use crate::ast::Span;

/// Brackets and `not` may nest at most this deep; deeper input is rejected before parsing.
pub const MAX_NESTING: usize = 64;
/// Policy files larger than this are rejected outright.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// A `//` comment, `span` covering the slashes through the end of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// From the first `/` through the last byte before the line break.
    pub span: Span,
    /// The comment as written, `//` included, trailing whitespace removed.
    pub text: String,
    /// True when code precedes the comment on the same line.
    pub trailing: bool,
}

/// What the lexical pass found in one file: comments, statement boundaries and nesting depth.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Every `//` comment outside strings and `script` bodies, in source order.
    pub comments: Vec<Comment>,
    /// Spans of top-level statements, as far as brackets and `;` tell.
    pub statements: Vec<Span>,
    /// Offset of the first bracket that nests deeper than the limit.
    pub too_deep_at: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Opener {
    Paren,
    Bracket,
    Brace,
}

/// Scans `src` without parsing it, noting the first bracket nested deeper than `max_depth`.
pub fn scan(src: &str, max_depth: usize) -> Scan {
    let bytes = src.as_bytes();
    let mut out = Scan::default();
    let mut stack: Vec<Opener> = Vec::new();
    let mut i = 0;
    let mut stmt_start: Option<usize> = None;
    let mut block_stmt = false; // current statement is a role/test/guide block
    let mut line_has_code = false;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                line_has_code = false;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            let end = src[i..].find('\n').map_or(src.len(), |e| i + e);
            out.comments.push(Comment {
                span: Span::new(i, end),
                text: src[i..end].trim_end().to_string(),
                trailing: line_has_code,
            });
            i = end;
            continue;
        }
        line_has_code = true;
        if stmt_start.is_none() {
            stmt_start = Some(i);
            block_stmt = false;
        }
        if is_word_at(src, i) {
            let word = word_at(src, i);
            if stack.is_empty() && matches!(word, "role" | "test" | "guide") {
                block_stmt = true;
            }
            if word == "script" {
                if let Some(open) = next_non_ws(bytes, i + word.len()).filter(|&j| bytes[j] == b'{')
                {
                    i = skip_script(bytes, open);
                    continue;
                }
            }
            i += word.len();
            continue;
        }
        match c {
            b'"' => {
                i = if src[i..].starts_with("\"\"\"") {
                    src[i + 3..]
                        .find("\"\"\"")
                        .map_or(src.len(), |e| i + 3 + e + 3)
                } else {
                    skip_string(bytes, i)
                };
                continue;
            }
            b'(' | b'[' | b'{' => {
                stack.push(match c {
                    b'(' => Opener::Paren,
                    b'[' => Opener::Bracket,
                    _ => Opener::Brace,
                });
                if stack.len() > max_depth && out.too_deep_at.is_none() {
                    out.too_deep_at = Some(i);
                }
            }
            b')' | b']' | b'}' => {
                stack.pop();
                if c == b'}' && stack.is_empty() && block_stmt {
                    if let Some(s) = stmt_start.take() {
                        out.statements.push(Span::new(s, i + 1));
                    }
                }
            }
            b';' if stack.is_empty() => {
                if let Some(s) = stmt_start.take() {
                    out.statements.push(Span::new(s, i + 1));
                }
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(s) = stmt_start {
        out.statements.push(Span::new(s, src.len()));
    }
    out
}

fn is_word_at(src: &str, i: usize) -> bool {
    src.as_bytes()
        .get(i)
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && (i == 0
            || !src
                .as_bytes()
                .get(i - 1)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'@'))
}

fn word_at(src: &str, i: usize) -> &str {
    let rest = &src[i..];
    let end = rest
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

fn next_non_ws(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    (i < bytes.len()).then_some(i)
}

fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    let quote = bytes[i];
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' if quote == b'"' => return i,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Skips a Rhai block starting at its `{`, honouring Rhai strings and comments.
fn skip_script(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b'"' | b'\'' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'`' => {
                i = bytes[i + 1..]
                    .iter()
                    .position(|&b| b == b'`')
                    .map_or(bytes.len(), |e| i + 1 + e + 1);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |e| i + e);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_comments_and_statements() {
        let src =
            "// lead\ndeny exec \"a;b\"; // tail\nrole r { allow exec \"x\"; }\nlet x = [\"//\"];";
        let s = scan(src, 64);
        assert_eq!(s.comments.len(), 2);
        assert!(!s.comments[0].trailing);
        assert!(s.comments[1].trailing);
        let stmts: Vec<&str> = s
            .statements
            .iter()
            .map(|sp| &src[sp.start..sp.end])
            .collect();
        assert_eq!(
            stmts,
            vec![
                "deny exec \"a;b\";",
                "role r { allow exec \"x\"; }",
                "let x = [\"//\"];"
            ]
        );
    }

    #[test]
    fn script_bodies_are_opaque() {
        let src = "deny exec \"*\" when script { let s = \"}\"; // }\n s == \"{\" } because \"x\";";
        let s = scan(src, 64);
        assert!(s.comments.is_empty());
        assert_eq!(s.statements.len(), 1);
    }

    #[test]
    fn with_block_does_not_end_a_rule() {
        let src =
            "allow exec \"a\" with sandbox { network: none } because \"b\";\ndeny exec \"c\";";
        assert_eq!(scan(src, 64).statements.len(), 2);
    }

    #[test]
    fn detector_body_does_not_end_a_detector() {
        let src = "detector file \"a\" { exclude: [\"b\"] } because \"c\";\ndetector file \"d\";";
        assert_eq!(scan(src, 64).statements.len(), 2);
    }

    #[test]
    fn depth_limit_reports_the_offending_bracket() {
        let src = format!("deny exec \"a\" when {}", "(".repeat(10));
        assert_eq!(scan(&src, 4).too_deep_at, Some(23));
    }
}

//! Managed blocks: ContextOS's text between [`BLOCK_BEGIN`] and [`BLOCK_END`], each on its
//! own line, inside a Markdown file people also edit. Everything outside the markers is
//! kept byte for byte, line endings included. Malformed markers (duplicated, reversed,
//! unclosed, unopened, inline) are refused with their line numbers: nothing is written.

use super::error::{MergeError, MergeErrorKind};
use super::markers::{BLOCK_BEGIN, BLOCK_END};
use super::text::{detect_eol, lines, with_eol, Line};

/// The well-formed marker pair of `text`, if any.
fn find_markers(text: &str) -> Result<Option<(Line, Line)>, MergeError> {
    let mut begin: Option<Line> = None;
    let mut end: Option<Line> = None;
    for l in lines(text) {
        let content = &text[l.start..l.end];
        let has_begin = content.contains(BLOCK_BEGIN);
        let has_end = content.contains(BLOCK_END);
        if !has_begin && !has_end {
            continue;
        }
        let (marker, slot) = match content.trim() {
            t if t == BLOCK_BEGIN => (BLOCK_BEGIN, &mut begin),
            t if t == BLOCK_END => (BLOCK_END, &mut end),
            _ => {
                return Err(MergeError::from(MergeErrorKind::InlineMarker {
                    line: l.number,
                    marker: if has_begin { BLOCK_BEGIN } else { BLOCK_END },
                }))
            }
        };
        if let Some(first) = slot {
            return Err(MergeError::from(MergeErrorKind::DuplicateMarker {
                line: l.number,
                first: first.number,
                marker,
            }));
        }
        *slot = Some(l);
    }
    match (begin, end) {
        (None, None) => Ok(None),
        (Some(b), None) => Err(MergeError::from(MergeErrorKind::UnclosedBlock {
            line: b.number,
        })),
        (None, Some(e)) => Err(MergeError::from(MergeErrorKind::UnopenedBlock {
            line: e.number,
        })),
        (Some(b), Some(e)) if e.number < b.number => {
            Err(MergeError::from(MergeErrorKind::ReversedMarkers {
                line: e.number,
                begin: b.number,
            }))
        }
        (Some(b), Some(e)) => Ok(Some((b, e))),
    }
}

/// The inside of a block as ContextOS writes it: LF, no trailing blank lines, every line
/// terminated. The text must not contain a marker, or the next read would refuse the file.
fn block_inner(block: &str) -> Result<String, MergeError> {
    let lf = block.replace("\r\n", "\n");
    let trimmed = lf.trim_end_matches('\n');
    for (i, l) in trimmed.split('\n').enumerate() {
        if l.contains(BLOCK_BEGIN) || l.contains(BLOCK_END) {
            return Err(MergeError::from(MergeErrorKind::MarkerInBlockText {
                line: i + 1,
            }));
        }
    }
    Ok(if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}\n")
    })
}

fn render_block(inner_lf: &str, eol: &str) -> String {
    format!(
        "{BLOCK_BEGIN}{eol}{}{BLOCK_END}{eol}",
        with_eol(inner_lf, eol)
    )
}

/// Puts `block` into `existing` (a Markdown file people also edit):
/// - no file (or an empty one) ⇒ the block alone: `BEGIN\n{block}\nEND\n`;
/// - no markers ⇒ the user's text (ended by a line break), one blank line, the block;
/// - one well-formed `BEGIN … END` ⇒ only the lines between the markers are replaced.
///
/// Everything outside the block is kept byte for byte; the block takes the file's line
/// ending (that of the `BEGIN` line, or of the first line when appending). Malformed
/// markers are an error: nothing may be written.
pub fn apply_block(existing: Option<&str>, block: &str) -> Result<String, MergeError> {
    let inner = block_inner(block)?;
    let text = match existing {
        None => return Ok(render_block(&inner, "\n")),
        Some(t) => t,
    };
    match find_markers(text)? {
        None if text.is_empty() => Ok(render_block(&inner, "\n")),
        None => {
            let eol = detect_eol(text);
            let mut out = text.to_string();
            if !out.ends_with('\n') {
                out.push_str(eol);
            }
            // One blank line of ContextOS's; [`remove_block`] takes it away again.
            out.push_str(eol);
            out.push_str(&render_block(&inner, eol));
            Ok(out)
        }
        Some((b, e)) => {
            let eol = if text[b.start..b.end].ends_with('\r') {
                "\r\n"
            } else {
                "\n"
            };
            Ok(format!(
                "{}{}{}",
                &text[..b.next],
                with_eol(&inner, eol),
                &text[e.start..]
            ))
        }
    }
}

/// The text between the markers, exactly as in the file (line endings included), or
/// `None` when the file has no block. Malformed markers are an error.
pub fn read_block(text: &str) -> Result<Option<String>, MergeError> {
    Ok(find_markers(text)?.map(|(b, e)| text[b.next..e.start].to_string()))
}

/// `text` without its managed block (markers included); the user's text is kept. When the
/// block ended the file, the blank line [`apply_block`] put before it goes too, so a block
/// appended to a text ending with a line break is removed without a trace. An empty
/// result means nothing but the block was in the file.
pub fn remove_block(text: &str) -> Result<String, MergeError> {
    let Some((b, e)) = find_markers(text)? else {
        return Ok(text.to_string());
    };
    let mut before = &text[..b.start];
    let after = &text[e.next..];
    if after.is_empty() {
        let shorter = before
            .strip_suffix("\r\n")
            .or_else(|| before.strip_suffix('\n'));
        if let Some(shorter) = shorter.filter(|s| s.ends_with('\n')) {
            before = shorter;
        }
    }
    Ok(format!("{before}{after}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::error::MergeErrorKind;
    use crate::merge::text::normalize;

    const B: &str = BLOCK_BEGIN;
    const E: &str = BLOCK_END;

    // ----- blocks -------------------------------------------------------------------

    #[test]
    fn block_into_missing_and_empty_file() {
        let want = format!("{B}\nhello\nworld\n{E}\n");
        assert_eq!(apply_block(None, "hello\nworld").unwrap(), want);
        assert_eq!(apply_block(None, "hello\nworld\n\n").unwrap(), want);
        assert_eq!(apply_block(Some(""), "hello\nworld\n").unwrap(), want);
        assert_eq!(apply_block(None, "").unwrap(), format!("{B}\n{E}\n"));
    }

    #[test]
    fn block_appended_to_marker_less_file_after_a_blank_line() {
        let want = format!("# Mine\nuser text\n\n{B}\nhello\n{E}\n");
        assert_eq!(
            apply_block(Some("# Mine\nuser text"), "hello").unwrap(),
            want
        );
        assert_eq!(
            apply_block(Some("# Mine\nuser text\n"), "hello").unwrap(),
            want
        );
        // Exactly one blank line of ContextOS's, whatever the user's text ends with.
        assert_eq!(
            apply_block(Some("# Mine\nuser text\n\n"), "hello").unwrap(),
            format!("# Mine\nuser text\n\n\n{B}\nhello\n{E}\n")
        );
    }

    #[test]
    fn block_in_crlf_file_stays_crlf() {
        let user = "# Mine\r\nuser text\r\n";
        let out = apply_block(Some(user), "a\nb\n").unwrap();
        assert_eq!(out, format!("{user}\r\n{B}\r\na\r\nb\r\n{E}\r\n"));
        // Replacing keeps CRLF, and a CRLF block text is not doubled.
        let again = apply_block(Some(&out), "c\r\n").unwrap();
        assert_eq!(again, format!("{user}\r\n{B}\r\nc\r\n{E}\r\n"));
        assert!(!again.replace("\r\n", "").contains('\n'));
    }

    #[test]
    fn block_replace_keeps_user_text_byte_for_byte() {
        let before = "Intro with trailing spaces   \r\n\tTabbed line\nno-final-eol-mix\n\n";
        let after = "\n## After\r\n  kept exactly  \nlast line without newline";
        let text = format!("{before}{B}\nold\nstuff\n{E}\n{after}");
        let out = apply_block(Some(&text), "new").unwrap();
        assert_eq!(out, format!("{before}{B}\nnew\n{E}\n{after}"));
        assert!(out.starts_with(before) && out.ends_with(after));
        assert_eq!(read_block(&out).unwrap().as_deref(), Some("new\n"));
        // Idempotent.
        assert_eq!(apply_block(Some(&out), "new").unwrap(), out);
    }

    #[test]
    fn block_markers_with_surrounding_spaces_and_eof_end() {
        let text = format!("x\n  {B}  \nold\n{E}");
        let out = apply_block(Some(&text), "new").unwrap();
        assert_eq!(out, format!("x\n  {B}  \nnew\n{E}"));
    }

    #[test]
    fn malformed_markers_are_refused_with_line_numbers() {
        use MergeErrorKind::*;
        let cases = [
            (
                format!("a\n{B}\nx\n{E}\n{B}\ny\n{E}\n"),
                DuplicateMarker {
                    line: 5,
                    first: 2,
                    marker: BLOCK_BEGIN,
                },
                "emit.block.duplicate-marker",
            ),
            (
                format!("{B}\nx\n{E}\n{E}\n"),
                DuplicateMarker {
                    line: 4,
                    first: 3,
                    marker: BLOCK_END,
                },
                "emit.block.duplicate-marker",
            ),
            (
                format!("a\n{E}\nx\n{B}\n"),
                ReversedMarkers { line: 2, begin: 4 },
                "emit.block.reversed-markers",
            ),
            (
                format!("a\nb\n{B}\nx\n"),
                UnclosedBlock { line: 3 },
                "emit.block.unclosed",
            ),
            (
                format!("a\n{E}\n"),
                UnopenedBlock { line: 2 },
                "emit.block.unopened",
            ),
            (
                format!("a\nsee {B} here\n{E}\n"),
                InlineMarker {
                    line: 2,
                    marker: BLOCK_BEGIN,
                },
                "emit.block.inline-marker",
            ),
        ];
        for (text, kind, code) in cases {
            let e = apply_block(Some(&text), "z").unwrap_err();
            assert_eq!((&e.kind, e.code()), (&kind, code), "{text:?}");
            // Reading and removing refuse the same file.
            assert_eq!(read_block(&text).unwrap_err(), e);
            assert_eq!(remove_block(&text).unwrap_err(), e);
        }
        let inline = format!("a\nsee {B} here\n{E}\n");
        let msg = apply_block(Some(&inline), "z")
            .unwrap_err()
            .with_path("AGENTS.md")
            .to_string();
        assert!(msg.starts_with("AGENTS.md:2:"), "{msg}");
    }

    #[test]
    fn block_text_with_a_marker_is_refused() {
        let e = apply_block(None, &format!("ok\n{E}\n")).unwrap_err();
        assert_eq!(e.kind, MergeErrorKind::MarkerInBlockText { line: 2 });
    }

    #[test]
    fn read_and_remove_block() {
        assert_eq!(read_block("no block\n").unwrap(), None);
        for user in ["# Mine\nuser text\n", "# Mine\r\nuser text\r\n", ""] {
            let with = apply_block(Some(user), "hello").unwrap();
            assert_eq!(
                read_block(&with).unwrap().as_deref().map(normalize),
                Some("hello\n".into())
            );
            assert_eq!(remove_block(&with).unwrap(), user);
        }
        let middle = format!("top\n{B}\nx\n{E}\nbottom\n");
        assert_eq!(remove_block(&middle).unwrap(), "top\nbottom\n");
    }

    proptest::proptest! {
        #[test]
        fn block_round_trips_any_user_text(
            user in "[ a#\t\r\n]{0,40}",
            b1 in "[a-z \n]{0,20}",
            b2 in "[a-z \r\n]{0,20}",
        ) {
            let user = if user.is_empty() || user.ends_with('\n') { user } else { format!("{user}\n") };
            let once = apply_block(Some(&user), &b1).unwrap();
            proptest::prop_assert!(once.starts_with(user.as_str()));
            proptest::prop_assert_eq!(&apply_block(Some(&once), &b1).unwrap(), &once);
            let twice = apply_block(Some(&once), &b2).unwrap();
            proptest::prop_assert!(twice.starts_with(user.as_str()));
            proptest::prop_assert_eq!(remove_block(&twice).unwrap(), user.clone());
            let after = format!("{once}tail\r\n more");
            let replaced = apply_block(Some(&after), &b2).unwrap();
            proptest::prop_assert!(replaced.starts_with(user.as_str()));
            proptest::prop_assert!(replaced.ends_with("tail\r\n more"));
        }
    }
}

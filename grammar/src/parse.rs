//! The one entry point: limits first, then the hand-written parser (`parser/`); on a
//! syntax error, every top-level statement is parsed on its own so that one file reports
//! every broken statement and keeps the good ones.

use crate::ast::{PolicyFile, Span, Statement};
use crate::diagnostic::Diagnostic;
use crate::lexical::{self, Scan, MAX_FILE_BYTES, MAX_NESTING};
use crate::output::ParseOutput;
use crate::parser::{self, Failure};

/// Parses a policy file: its statements, every error found and its comments.
pub fn parse(src: &str) -> ParseOutput {
    if let Some(out) = oversized(src) {
        return out;
    }
    let scan = lexical::scan(src, MAX_NESTING);
    // Hostile nesting is refused before the recursive descent runs at all.
    finish_scanned(src, scan, || {
        parser::parse(src, Span::new(0, src.len()), false)
    })
}

/// The parser's pass over a whole file, made without the lexical scan: half of a
/// [`parse`], which [`finish`] completes with the scan (see [`parse_unscanned`]).
#[derive(Debug)]
pub struct Unscanned(Option<Result<parser::Parsed, Failure>>);

/// Runs the parser over `src` before the lexical scan, so that another thread can scan
/// meanwhile: [`finish`] with `lexical::scan(src, MAX_NESTING)` then gives exactly what
/// [`parse`] gives. The parser guards its own depth (brackets, `not` chains and `script`
/// bodies end it at [`MAX_NESTING`]), so hostile nesting cannot overflow its stack
/// without the scan's check first; where the scan finds such nesting, [`finish`] reports
/// it as [`parse`] does and the parser's outcome is dropped.
pub fn parse_unscanned(src: &str) -> Unscanned {
    Unscanned(
        oversized(src)
            .is_none()
            .then(|| parser::parse(src, Span::new(0, src.len()), false)),
    )
}

/// [`parse_unscanned`] of `src` up to byte `at`, the end of one of the statements its
/// lexical scan found, while another thread runs [`parse_unscanned_from`] over the rest:
/// the two halves of a large file parse at once, and [`finish_split`] joins them. The
/// statement list is sized for `room` statements, the whole file's, so the other half's
/// are appended without copying this one's.
pub fn parse_unscanned_until(src: &str, at: usize, room: usize) -> Unscanned {
    Unscanned(
        oversized(src)
            .is_none()
            .then(|| parser::parse_sized(src, Span::new(0, at.min(src.len())), room)),
    )
}

/// The rest of the file [`parse_unscanned_until`] parsed up to `at`.
pub fn parse_unscanned_from(src: &str, at: usize) -> Unscanned {
    Unscanned(
        oversized(src)
            .is_none()
            .then(|| parser::parse(src, Span::new(at.min(src.len()), src.len()), false)),
    )
}

/// Completes the two halves of a split pass over `src` with the file's lexical `scan`:
/// what [`parse`] gives. The file's grammar is a sequence of statements, each ending at
/// its own `;` or `}`, so the halves' statements are the whole's as long as both parse;
/// where either does not (a syntax error, a limit), the whole file is parsed again here
/// and reported as [`parse`] reports it.
pub fn finish_split(src: &str, head: Unscanned, tail: Unscanned, scan: Scan) -> ParseOutput {
    match (head.0, tail.0, oversized(src)) {
        (_, _, Some(out)) => out,
        (Some(Ok(mut head)), Some(Ok(tail)), None) => {
            head.statements.extend(tail.statements);
            head.diagnostics.extend(tail.diagnostics);
            finish_scanned(src, scan, move || Ok(head))
        }
        _ => finish_scanned(src, scan, || {
            parser::parse(src, Span::new(0, src.len()), false)
        }),
    }
}

/// Completes [`parse_unscanned`]'s pass over `src` with the file's lexical `scan`.
pub fn finish(src: &str, unscanned: Unscanned, scan: Scan) -> ParseOutput {
    match (unscanned.0, oversized(src)) {
        (Some(parsed), None) => finish_scanned(src, scan, move || parsed),
        (_, Some(out)) => out,
        // Not made from `src` (the pass would be there for a file within the limit).
        (None, None) => parse(src),
    }
}

/// A file over [`MAX_FILE_BYTES`]: refused unread.
fn oversized(src: &str) -> Option<ParseOutput> {
    (src.len() > MAX_FILE_BYTES).then(|| ParseOutput {
        diagnostics: vec![Diagnostic::error(
            "E0004",
            Span::new(0, 0),
            format!(
                "policy file is {} bytes; the limit is {MAX_FILE_BYTES}",
                src.len()
            ),
        )],
        ..ParseOutput::default()
    })
}

/// The output of a file within [`MAX_FILE_BYTES`] from its lexical `scan` and the
/// parser's pass over it, which is not asked for where the scan found nesting too deep.
fn finish_scanned(
    src: &str,
    scan: Scan,
    parsed: impl FnOnce() -> Result<parser::Parsed, Failure>,
) -> ParseOutput {
    if let Some(at) = scan.too_deep_at {
        return ParseOutput {
            diagnostics: vec![Diagnostic::error(
                "E0002",
                Span::new(at, at + 1),
                format!("brackets nest deeper than {MAX_NESTING} levels"),
            )
            .with_label("too deep")
            .with_help("split the condition into several rules or a `let` list")],
            comments: scan.comments,
            ..ParseOutput::default()
        };
    }
    let (statements, mut diagnostics) = match parsed() {
        Ok(parsed) => (parsed.statements, parsed.diagnostics),
        Err(Failure::Fatal(d)) => (Vec::new(), vec![*d]),
        Err(Failure::Syntax) => recover(src, &scan),
    };
    diagnostics.sort_by_key(|d| d.span.start);
    ParseOutput {
        file: PolicyFile { statements },
        diagnostics,
        comments: scan.comments,
    }
}

/// Each statement the lexical scan found, parsed on its own.
fn recover(src: &str, scan: &Scan) -> (Vec<Statement>, Vec<Diagnostic>) {
    let first = parser::syntax_error(src, Span::new(0, src.len()), false);
    let mut statements = Vec::new();
    let mut diagnostics = Vec::new();
    for span in &scan.statements {
        if src.get(span.start..span.end).is_none() {
            continue;
        }
        match parser::parse(src, *span, true) {
            Ok(parsed) => {
                statements.extend(parsed.statements);
                diagnostics.extend(parsed.diagnostics);
            }
            Err(Failure::Syntax) => diagnostics.push(parser::syntax_error(src, *span, true)),
            Err(Failure::Fatal(d)) => diagnostics.push(*d),
        }
    }
    if !diagnostics.iter().any(|d| d.code == "E0001") {
        diagnostics.insert(0, first);
    }
    (statements, diagnostics)
}

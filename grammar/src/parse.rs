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
    if src.len() > MAX_FILE_BYTES {
        return ParseOutput {
            diagnostics: vec![Diagnostic::error(
                "E0004",
                Span::new(0, 0),
                format!(
                    "policy file is {} bytes; the limit is {MAX_FILE_BYTES}",
                    src.len()
                ),
            )],
            ..ParseOutput::default()
        };
    }
    let scan = lexical::scan(src, MAX_NESTING);
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
    let whole = Span::new(0, src.len());
    let (statements, mut diagnostics) = match parser::parse(src, whole, false) {
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

//! The production parser: hand-written recursive descent over bytes, rule for rule
//! `policy.pest` (the normative grammar, kept as the oracle of the differential tests).
//!
//! It builds the AST pest's pairs would give, spans included. pest positions are
//! mirrored exactly: a non-atomic rule whose trailing optional or repeated part did not
//! match ends *after* the implicit whitespace/comment skip that preceded the attempt,
//! and `sp` then trims trailing whitespace (but not comments) from it.
//!
//! Every named rule runs through [`Parser::r`], which undoes a failed attempt (bracket
//! depth, build errors found inside it) and, in the tracking instance (`TRACK = true`,
//! run only after a failure), records the attempt the way pest does, so a syntax error
//! points where pest's would and names what was expected there (see `attempts.rs`).
//! Ordered choices try their alternatives in the grammar's order for the same reason.
//!
//! Errors found while building a value from text the grammar accepts (an integer out of
//! range, a bad `\u{…}`, a detector in a role, a condition nested too deep) do not stop
//! the parse: the first one of each top-level statement is kept and the statement is
//! dropped, as building from pest's pairs did.

mod conditions;
mod lexemes;
mod state;
mod statements;
mod test_blocks;

use crate::ast::Span;
use crate::diagnostic::Diagnostic;
use crate::expected;
use state::Parser;
pub(crate) use state::{Failure, Parsed};

/// Parses the `part` of `src` as a whole file (`file`) or as one statement (`single_stmt`).
pub(crate) fn parse(src: &str, part: Span, single: bool) -> Result<Parsed, Failure> {
    Parser::<false>::new(src, part).run(single)
}

/// [`parse`] of `part` as a file, its statement list sized for `room` statements.
pub(crate) fn parse_sized(src: &str, part: Span, room: usize) -> Result<Parsed, Failure> {
    let mut p = Parser::<false>::new(src, part);
    p.room = Some(room);
    p.run(false)
}

/// The E0001 diagnostic for a part that [`parse`] reported as `Failure::Syntax`.
pub(crate) fn syntax_error(src: &str, part: Span, single: bool) -> Diagnostic {
    let p = Parser::<true>::new(src, part);
    match p.run(single) {
        Err(Failure::Fatal(d)) => *d,
        _ => expected::syntax_error(&p.attempts.borrow()),
    }
}

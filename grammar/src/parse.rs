//! The one entry point: `parse` picks the fast path for valid files and the pest path
//! for the rest.

use crate::fast;
use crate::lexical::{self, MAX_FILE_BYTES, MAX_NESTING};
use crate::output::ParseOutput;
use crate::pest_parser::parse_pest;

/// Parses a policy file. Valid files take the hand-written fast path (`fast.rs`), which
/// is tested to build exactly the AST the pest grammar does; anything it is unsure of,
/// every error included, goes through pest, which owns the diagnostics. On a syntax
/// error each top-level statement is parsed on its own so that one file reports every
/// broken statement, not only the first.
pub fn parse(src: &str) -> ParseOutput {
    if src.len() <= MAX_FILE_BYTES {
        let scan = lexical::scan(src, MAX_NESTING);
        if scan.too_deep_at.is_none() {
            if let Some(file) = fast::parse_fast(src) {
                return ParseOutput {
                    file,
                    diagnostics: Vec::new(),
                    comments: scan.comments,
                };
            }
        }
    }
    parse_pest(src)
}

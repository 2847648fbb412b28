//! The ContextOS policy language: typed AST with byte spans, the parser, located
//! diagnostics and the canonical formatter. The normative grammar, `policy.pest`, lives
//! with the differential tests (`tests/oracle/`), where pest checks this parser.
//!
//! ```
//! let out = contextos_grammar::parse("language 1;\ndeny exec \"git push --force *\" because \"no\";\n");
//! assert!(!out.has_errors());
//! assert_eq!(out.file.statements.len(), 2);
//! ```

#![warn(missing_docs)]

pub mod ast;
mod attempts;
pub mod diagnostic;
mod expected;
pub mod format;
pub mod lexical;
mod literal;
mod output;
mod parse;
mod parser;

pub use diagnostic::{did_you_mean, Diagnostic, LineCol, Severity, SourceFile};
pub use format::format_source;
pub use lexical::{MAX_FILE_BYTES, MAX_NESTING};
pub use literal::{dedent, unescape};
pub use output::ParseOutput;
pub use parse::{
    finish, finish_split, parse, parse_unscanned, parse_unscanned_from, parse_unscanned_until,
    Unscanned,
};

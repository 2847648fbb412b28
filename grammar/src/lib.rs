//! The ContextOS policy language: grammar, typed AST with byte spans, located
//! diagnostics and the canonical formatter.
//!
//! ```
//! let out = contextos_grammar::parse("language 1;\ndeny exec \"git push --force *\" because \"no\";\n");
//! assert!(!out.has_errors());
//! assert_eq!(out.file.statements.len(), 2);
//! ```

pub mod ast;
pub mod diagnostic;
mod fast;
pub mod format;
pub mod lexical;
mod literal;
mod output;
mod parse;
mod pest_parser;

pub use diagnostic::{did_you_mean, Diagnostic, LineCol, Severity, SourceFile};
pub use format::format_source;
pub use lexical::{MAX_FILE_BYTES, MAX_NESTING};
pub use literal::dedent;
pub use output::ParseOutput;
pub use parse::parse;

/// The hand-written fast path alone (`None` when it defers to pest). For differential tests.
#[doc(hidden)]
pub fn __parse_fast(src: &str) -> Option<ast::PolicyFile> {
    fast::parse_fast(src)
}

/// The pest path alone: the file and whether it had errors. For differential tests.
#[doc(hidden)]
pub fn __parse_pest(src: &str) -> (Option<ast::PolicyFile>, bool) {
    pest_parser::parse_with_pest(src)
}

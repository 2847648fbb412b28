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
pub mod format;
pub mod lexical;
mod parser;

pub use diagnostic::{did_you_mean, Diagnostic, LineCol, Severity, SourceFile};
pub use format::format_source;
pub use parser::{dedent, parse, ParseOutput, MAX_FILE_BYTES, MAX_NESTING};

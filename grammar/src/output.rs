//! What parsing one file gives: the statements, the diagnostics and the comments.

use crate::ast::PolicyFile;
use crate::diagnostic::Diagnostic;
use crate::lexical;

/// Result of parsing one file: the statements that parsed, and every error found.
#[derive(Debug, Clone, Default)]
pub struct ParseOutput {
    /// The statements that parsed; after a syntax error, only the statements that parse on their own.
    pub file: PolicyFile,
    /// Syntax and limit errors in source order (empty for a clean file).
    pub diagnostics: Vec<Diagnostic>,
    /// The file's `//` comments, which the AST omits, for the formatter to put back.
    pub comments: Vec<lexical::Comment>,
}

impl ParseOutput {
    /// True when any diagnostic is an error, so the file must not be compiled.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

//! What parsing one file gives: the statements, the diagnostics and the comments.

use crate::ast::PolicyFile;
use crate::diagnostic::Diagnostic;
use crate::lexical;

/// Result of parsing one file: the statements that parsed, and every error found.
#[derive(Debug, Clone, Default)]
pub struct ParseOutput {
    pub file: PolicyFile,
    pub diagnostics: Vec<Diagnostic>,
    pub comments: Vec<lexical::Comment>,
}

impl ParseOutput {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

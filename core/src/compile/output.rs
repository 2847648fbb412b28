//! What the compiler takes and gives: the sources, the options and the output with its
//! located diagnostics.

use crate::ir::Layer;
use crate::policy::PolicySet;
use contextos_grammar::{Diagnostic, SourceFile};

/// One policy file to compile.
#[derive(Debug, Clone)]
pub struct PolicySource {
    pub name: String,
    pub text: String,
    pub layer: Layer,
}

#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Rule ids to leave out (from `contextos.toml`), e.g. to override a stdlib rule.
    pub disabled_rules: Vec<String>,
    /// Leave glob sets to be compiled on first use instead of now. A short-lived process
    /// (an agent hook) then pays only for the index nodes its request reaches; an invalid
    /// set surfaces as an evaluation error (resolved stricter) instead of a compile error.
    pub lazy: bool,
}

/// A diagnostic and the index of the file (in [`CompileOutput::files`]) it belongs to;
/// [`NO_FILE`] for findings about the policy set as a whole or its configuration.
#[derive(Debug, Clone)]
pub struct FileDiagnostic {
    pub file: usize,
    pub diagnostic: Diagnostic,
}

#[derive(Debug)]
pub struct CompileOutput {
    pub policy: Option<PolicySet>,
    pub files: Vec<SourceFile>,
    pub diagnostics: Vec<FileDiagnostic>,
}

/// A diagnostic about the set as a whole: no snippet to show.
fn render_unlocated(d: &Diagnostic) -> String {
    let kind = if d.is_error() { "error" } else { "warning" };
    let mut out = format!("{kind}[{}]: {}\n", d.code, d.message);
    if let Some(h) = &d.help {
        out.push_str(&format!("   = help: {h}\n"));
    }
    out
}

impl CompileOutput {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.diagnostic.is_error())
    }
    pub fn render(&self, d: &FileDiagnostic) -> String {
        self.files
            .get(d.file)
            .map(|f| f.render(&d.diagnostic))
            .unwrap_or_else(|| render_unlocated(&d.diagnostic))
    }
}

/// File index of diagnostics that belong to no policy file.
pub const NO_FILE: usize = usize::MAX;

//! What the compiler takes and gives: the sources, the options and the output with its
//! located diagnostics.

use crate::ir::Layer;
use crate::policy::PolicySet;
use contextos_grammar::{Diagnostic, SourceFile};

/// One policy file to compile.
#[derive(Debug, Clone)]
pub struct PolicySource {
    /// The name diagnostics, origins and implicit `FILE:LINE` ids use (project files relative
    /// to the project root).
    pub name: String,
    /// The policy text: borrowed when it is the binary's own (the embedded stdlib's 330 KB,
    /// which every command compiles and which need not be copied), owned otherwise.
    pub text: std::borrow::Cow<'static, str>,
    /// Where the source comes from; decides what it may declare and which tests run.
    pub layer: Layer,
}

impl PolicySource {
    /// A file of the standard library embedded in the binary: its text borrowed, not
    /// copied.
    pub fn embedded_stdlib(name: &str, text: &'static str) -> PolicySource {
        PolicySource {
            name: name.to_string(),
            text: std::borrow::Cow::Borrowed(text),
            layer: Layer::Stdlib,
        }
    }
}

/// Settings of one compilation that do not come from the policy text.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Rule ids to leave out (from `contextos.toml`), e.g. to override a stdlib rule.
    pub disabled_rules: Vec<String>,
    /// Leave glob sets to be compiled on first use instead of now. A short-lived process
    /// (an agent hook) then pays only for the index nodes its request reaches; an invalid
    /// set surfaces as an evaluation error (resolved stricter) instead of a compile error.
    /// The stdlib's detector regexes and globs are then not checked at all: a full build
    /// of it is tested clean, and each consumer still fails closed on one it cannot parse.
    /// The lints that only advise (shadowing, conditions, head patterns: warnings) are not
    /// run either: a lazy build's callers act on its errors and never show its warnings.
    pub lazy: bool,
}

/// A diagnostic and the index of the file (in [`BuildOutput::files`]) it belongs to;
/// [`NO_FILE`] for findings about the policy set as a whole or its configuration.
#[derive(Debug, Clone)]
pub struct FileDiagnostic {
    /// Index into [`BuildOutput::files`], or [`NO_FILE`].
    pub file: usize,
    /// The error or warning itself.
    pub diagnostic: Diagnostic,
}

/// The result of [`build`](crate::build()): the set when there was no error, and every
/// diagnostic either way.
#[derive(Debug)]
pub struct BuildOutput {
    /// The compiled set; `None` when any diagnostic is an error, so callers cannot use a
    /// half-checked policy.
    pub policy: Option<PolicySet>,
    /// The sources as parsed, in input order; what diagnostics are rendered against.
    pub files: Vec<SourceFile>,
    /// Every error and warning, each tied to its file.
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

impl BuildOutput {
    /// Some diagnostic is an error (then [`BuildOutput::policy`] is `None`).
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.diagnostic.is_error())
    }
    /// A diagnostic as text with its source snippet, or without one for [`NO_FILE`].
    pub fn render(&self, d: &FileDiagnostic) -> String {
        self.files
            .get(d.file)
            .map(|f| f.render(&d.diagnostic))
            .unwrap_or_else(|| render_unlocated(&d.diagnostic))
    }
}

/// File index of diagnostics that belong to no policy file.
pub const NO_FILE: usize = usize::MAX;

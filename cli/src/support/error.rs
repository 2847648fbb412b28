//! Why a command could not do its job, and the one place that says so: a miette report
//! on stderr in the text formats, `{"error": …}` on stdout with `--format json`. Every
//! error exits 2 (could not verify): callers treat it as a block, never as a pass.
//!
//! Each variant has a stable diagnostic code (`contextos::…`). Wrapped errors are kept
//! as values, not strings, and their message already says what failed, so no variant
//! exposes a `source()` chain that the report would print a second time.

use crate::output;
use crate::project::ProjectError;
use crate::support::Format;
use contextos_engine::effects::decision_log::LogError;
use contextos_engine::effects::journal::JournalError;
use contextos_engine::effects::project_lock::ProjectLockError;
use contextos_engine::effects::safe_fs::SafeFsError;
use contextos_engine::grammar::Severity;
use contextos_engine::{BuildOutput, FileDiagnostic};
use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};
use serde_json::{json, Value};
use std::fmt;
use std::io::IsTerminal as _;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum CliError {
    /// The project, its configuration or its policy files cannot be read.
    #[error("{0}")]
    #[diagnostic(code(contextos::project))]
    Project(ProjectError),

    /// The project lock cannot be taken or read.
    #[error("{0}")]
    #[diagnostic(code(contextos::lock))]
    Lock(ProjectLockError),

    /// A journaled transaction failed; `doing` says at which step.
    #[error("{doing}: {error}")]
    #[diagnostic(code(contextos::journal))]
    Journal {
        doing: &'static str,
        error: JournalError,
    },

    /// The journal itself cannot be read.
    #[error("{0}")]
    #[diagnostic(code(contextos::journal))]
    JournalState(JournalError),

    /// A path refused or failed by the safe-path layer.
    #[error("{0}")]
    #[diagnostic(code(contextos::safe_path))]
    SafePath(SafeFsError),

    /// The hash-chained decision log cannot be read or written.
    #[error("{0}")]
    #[diagnostic(code(contextos::decision_log))]
    DecisionLog(LogError),

    /// The git pre-commit hook cannot be installed or removed.
    #[cfg(feature = "scan")]
    #[error("{0}")]
    #[diagnostic(code(contextos::githook))]
    GitHook(crate::githook::HookError),

    /// The staged change, the scope, the baseline or the detectors cannot be used.
    #[error("{0}")]
    #[diagnostic(code(contextos::scan))]
    Scan(Box<dyn std::error::Error>),

    /// The generated outputs cannot be planned (ownership lock, merge of an existing file).
    #[error("{0}")]
    #[diagnostic(code(contextos::outputs))]
    Outputs(Box<dyn std::error::Error>),

    /// A plugin pack cannot be fetched, read, signed or installed.
    #[error("{0}")]
    #[diagnostic(code(contextos::plugin))]
    Plugin(Box<dyn std::error::Error>),

    /// A file the command needs cannot be read or written; `doing` names it.
    #[error("{doing}: {error}")]
    #[diagnostic(code(contextos::io))]
    Io {
        doing: String,
        error: std::io::Error,
    },

    /// What the user gave — an argument, a changeset, a key — cannot be used.
    #[error("{0}")]
    #[diagnostic(code(contextos::input))]
    Input(String),

    /// A state the code should never reach; reported instead of guessed past.
    #[error("internal: {0}")]
    #[diagnostic(code(contextos::internal))]
    Internal(String),

    /// Writing would overwrite what ContextOS does not own; nothing was written.
    #[error("{0}")]
    #[diagnostic(code(contextos::refused))]
    Refused(String),

    /// The policies do not compile, so nothing that needs them can be decided.
    #[error("{message}")]
    #[diagnostic(code(contextos::policy_invalid), help("{consequence}"))]
    PolicyInvalid {
        message: String,
        consequence: String,
        #[related]
        diagnostics: Vec<PolicyDiagnostic>,
        /// The same diagnostics as `--format json` reports them.
        json: Vec<Value>,
    },
}

impl CliError {
    /// The error for a compile output without a policy set: its error diagnostics, each
    /// with the source snippet where the file is known.
    pub fn policy_invalid(out: &BuildOutput, consequence: &str) -> CliError {
        CliError::invalid_sources(
            out,
            "the policies do not compile".into(),
            format!("{consequence} (run `contextos check`)"),
        )
    }

    /// The policies with a plugin pack's files do not compile: the pack is refused.
    pub fn pack_invalid(out: &BuildOutput, pack: &str) -> CliError {
        CliError::invalid_sources(
            out,
            format!("the pack `{pack}` does not compile with this project's policies"),
            "nothing installed".into(),
        )
    }

    fn invalid_sources(out: &BuildOutput, message: String, consequence: String) -> CliError {
        let errors = || out.diagnostics.iter().filter(|d| d.diagnostic.is_error());
        CliError::PolicyInvalid {
            message,
            consequence,
            diagnostics: errors().map(|d| PolicyDiagnostic::new(out, d)).collect(),
            json: errors().map(|d| output::diagnostic_json(out, d)).collect(),
        }
    }

    pub fn io(doing: impl Into<String>, error: std::io::Error) -> CliError {
        CliError::Io {
            doing: doing.into(),
            error,
        }
    }

    /// The document `--format json` prints (the envelope adds `schemaVersion`).
    fn json(&self) -> Value {
        match self {
            CliError::PolicyInvalid { json, .. } => json!({
                "error": self.to_string(),
                "diagnostics": json,
            }),
            _ => json!({ "error": self.to_string() }),
        }
    }

    /// Reports the error once, in the invocation's format.
    pub fn report(&self, format: Format) {
        match format {
            Format::Json => output::print_json(self.json()),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                let colour =
                    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
                let theme = if colour {
                    miette::GraphicalTheme::unicode()
                } else {
                    miette::GraphicalTheme::unicode_nocolor()
                };
                // Unwrapped: messages carry paths and commands a reader copies whole.
                let handler = miette::GraphicalReportHandler::new_themed(theme)
                    .with_links(false)
                    .with_wrap_lines(false);
                let mut text = String::new();
                if handler.render_report(&mut text, self).is_err() {
                    text = format!("error: {self}\n");
                }
                eprint!("{text}");
            }
        }
    }
}

macro_rules! from {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for CliError {
            fn from(e: $ty) -> CliError {
                CliError::$variant(e)
            }
        }
    )*};
}

from! {
    ProjectError => Project,
    ProjectLockError => Lock,
    SafeFsError => SafePath,
    LogError => DecisionLog,
}

#[cfg(feature = "scan")]
from! {
    crate::githook::HookError => GitHook,
}

/// One policy diagnostic as a miette report: code, message, help, and the source line
/// with its label when the diagnostic has a file.
#[derive(Debug)]
pub struct PolicyDiagnostic {
    code: &'static str,
    message: String,
    severity: Severity,
    help: Option<String>,
    source: Option<NamedSource<String>>,
    labels: Vec<LabeledSpan>,
}

impl PolicyDiagnostic {
    fn new(out: &BuildOutput, d: &FileDiagnostic) -> PolicyDiagnostic {
        let diag = &d.diagnostic;
        let file = out.files.get(d.file);
        let mut labels = Vec::new();
        if let Some(f) = file {
            let span = |s: &contextos_engine::grammar::ast::Span| {
                let start = s.start.min(f.text.len());
                let end = s.end.clamp(start, f.text.len());
                (start, end - start)
            };
            let main = (!diag.label.is_empty()).then(|| diag.label.clone());
            labels.push(LabeledSpan::new_primary_with_span(main, span(&diag.span)));
            for (s, note) in &diag.notes {
                labels.push(LabeledSpan::new_with_span(Some(note.clone()), span(s)));
            }
        }
        PolicyDiagnostic {
            code: diag.code,
            message: diag.message.clone(),
            severity: diag.severity,
            help: diag.help.clone(),
            source: file.map(|f| NamedSource::new(f.name.clone(), f.text.to_string())),
            labels,
        }
    }
}

impl fmt::Display for PolicyDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyDiagnostic {}

impl Diagnostic for PolicyDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display + 'a>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.source.is_none() || self.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.iter().cloned()))
    }
}

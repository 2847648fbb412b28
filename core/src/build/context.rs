//! The compiler's working state, shared by every pass: the files, their layers, the
//! diagnostics found so far, the `let` table and the scripts compiled so far; and the small
//! checks more than one pass makes.

use super::output::FileDiagnostic;
use crate::ir::{Layer, Origin};
use crate::request::Domain;
use crate::script::ScriptHost;
use contextos_grammar::ast::{ListItem, Span, Spanned};
use contextos_grammar::{did_you_mean, Diagnostic, SourceFile};
use std::collections::{BTreeSet, HashMap};

#[derive(Clone)]
pub(super) struct LetDef {
    /// Shared, not copied, by each expansion that walks it (a stdlib list such as
    /// `$governance` is expanded wherever a rule names it).
    pub(super) items: std::sync::Arc<[ListItem]>,
    pub(super) scalar: bool,
    pub(super) file: usize,
    pub(super) span: Span,
}

/// An `override let`: the definition it replaced and where the override is written.
pub(super) struct Override {
    pub(super) name: String,
    pub(super) old: LetDef,
    pub(super) file: usize,
    pub(super) span: Span,
}

pub(super) struct Ctx<'a> {
    pub(super) files: &'a [SourceFile],
    pub(super) layers: Vec<Layer>,
    pub(super) diags: Vec<FileDiagnostic>,
    /// How many of `diags` are errors: rules ask before and after lowering, and counting
    /// made a build with many warnings quadratic in its rules.
    errors: usize,
    pub(super) lets: HashMap<String, LetDef>,
    pub(super) cycles_reported: BTreeSet<String>,
    /// Every `override let`, in declaration order.
    pub(super) overrides: Vec<Override>,
    pub(super) scripts: ScriptHost,
    /// [`BuildOptions::lazy`]: detector regexes are only parsed, not compiled.
    pub(super) lazy: bool,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(files: &'a [SourceFile], layers: Vec<Layer>, lazy: bool) -> Ctx<'a> {
        Ctx {
            files,
            layers,
            diags: Vec::new(),
            errors: 0,
            lets: HashMap::new(),
            cycles_reported: BTreeSet::new(),
            overrides: Vec::new(),
            scripts: ScriptHost::new(),
            lazy,
        }
    }
}

impl Ctx<'_> {
    pub(super) fn error_count(&self) -> usize {
        self.errors
    }

    /// Whether file `fi`'s detector regexes and globs ([`Ctx::check_glob`]) go unchecked:
    /// in a lazy build, the standard library's. Checking the regexes was half of a cold
    /// hook's work (parsing 450-odd regexes with Unicode case folding), and the checks
    /// can find nothing: the stdlib is compiled into the binary and a full build of it is
    /// tested clean (`core/tests/stdlib_clean.rs`). The lowered detectors are the same
    /// either way, and a regex the scanner cannot compile still fails the scan closed.
    pub(super) fn trusted(&self, fi: usize) -> bool {
        self.lazy && self.layers.get(fi) == Some(&Layer::Stdlib)
    }

    /// Whether `pattern` parses as a path glob, asked of globset unless file `fi` is
    /// [trusted](Ctx::trusted): validating the stdlib's few hundred globs was a
    /// twenty-fifth of a cold hook, and finds nothing for the same reason as its regexes.
    /// Every consumer still parses a glob before matching with it, and fails closed when
    /// it cannot: the rule index resolves to the stricter outcome, a snapshot's `matches`
    /// lists are validated again as they are decoded, the scan refuses a detector's globs.
    pub(super) fn check_glob(&self, fi: usize, pattern: &str) -> Result<(), String> {
        if self.trusted(fi) {
            return Ok(());
        }
        crate::glob::check_path_glob(pattern)
    }

    pub(super) fn err(&mut self, file: usize, d: Diagnostic) {
        self.errors += usize::from(d.is_error());
        self.diags.push(FileDiagnostic {
            file,
            diagnostic: d,
        });
    }

    pub(super) fn origin(&self, file: usize, span: Span) -> Origin {
        let f = &self.files[file];
        let lc = f.line_col(span.start);
        Origin {
            file: f.name.clone(),
            line: lc.line,
            col: lc.col,
            start: span.start,
            end: span.end,
        }
    }

    pub(super) fn text(&self, file: usize, span: Span) -> String {
        self.files[file]
            .text
            .get(span.start..span.end)
            .unwrap_or("")
            .to_string()
    }
}

/// A plugin pack only adds rules, guides and detectors (a detector only finds; the
/// verdict on a finding stays with the project's commit rules). Changing defaults, redefining another
/// layer's `let`s or deciding plugins (its own verdict included) would let a third-party
/// pack loosen the policies that admitted it.
pub(super) fn plugin_may_not(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error("E0120", span, format!("a plugin pack may not {what}")).with_help(
        "plugin packs may only add rules, guides and detectors; put this in the project's own policies",
    )
}

/// Rule and detector ids: letters, digits and `-_.:/`.
pub(super) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/".contains(c))
}

pub(super) fn check_domain(ctx: &mut Ctx, fi: usize, d: &Spanned<String>) -> Option<Domain> {
    let found = Domain::parse(&d.node);
    if found.is_none() {
        let mut diag = Diagnostic::error("E0101", d.span, format!("unknown domain `{}`", d.node))
            .with_label("expected path, exec, plugin or commit");
        if let Some(s) = did_you_mean(&d.node, Domain::ALL.iter().map(|d| d.as_str())) {
            diag = diag.with_help(format!("did you mean `{s}`?"));
        }
        ctx.err(fi, diag);
    }
    found
}

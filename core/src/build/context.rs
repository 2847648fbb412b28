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

/// Decodes one encoded `let` definition; `None` when it does not decode.
pub(super) type DecodeLet = fn(&[u8]) -> Option<LetDef>;

/// A precompiled stdlib's `let`s, each still encoded (see [`super::precompiled`]): a
/// definition is decoded into [`Ctx::lets`] when a later file first names it, and most
/// name none (a cold hook call decoded some 2,900 list items to expand a handful).
#[derive(Default)]
pub(super) struct EncodedLets {
    /// Each name with its encoded definition, sorted by name.
    pub(super) lets: Vec<(&'static str, &'static [u8])>,
    /// Decodes a definition; `None` when it does not decode.
    pub(super) decode: Option<DecodeLet>,
    /// How many files the definitions may point into (the image's).
    pub(super) files: usize,
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
    /// The `let`s declared so far, or decoded from [`Ctx::encoded_lets`]: every lookup by
    /// name goes through [`Ctx::decode_let`] first.
    pub(super) lets: HashMap<String, LetDef>,
    pub(super) encoded_lets: EncodedLets,
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
            encoded_lets: EncodedLets::default(),
            cycles_reported: BTreeSet::new(),
            overrides: Vec::new(),
            scripts: ScriptHost::new(),
            lazy,
        }
    }
}

impl Ctx<'_> {
    /// Decodes the encoded definition of `name` into [`Ctx::lets`], unless it is there
    /// already or there is none. One that does not decode, or points past the image's
    /// files, stays out: a rule naming it is then an error (fail closed).
    pub(super) fn decode_let(&mut self, name: &str) {
        if self.lets.contains_key(name) {
            return;
        }
        let encoded = &self.encoded_lets;
        let (Ok(i), Some(decode)) = (
            encoded.lets.binary_search_by(|(n, _)| (*n).cmp(name)),
            encoded.decode,
        ) else {
            return;
        };
        let (n, bytes) = encoded.lets[i];
        if let Some(def) = decode(bytes).filter(|d| d.file < encoded.files) {
            self.lets.insert(n.to_string(), def);
        }
    }

    /// Decodes every encoded `let` (for the passes that read the whole table).
    pub(super) fn decode_all_lets(&mut self) {
        let names: Vec<&'static str> = self.encoded_lets.lets.iter().map(|(n, _)| *n).collect();
        for name in names {
            self.decode_let(name);
        }
    }

    /// Every `let` name, decoded or still encoded.
    pub(super) fn let_names(&self) -> Vec<String> {
        let encoded = self.encoded_lets.lets.iter().map(|(n, _)| *n);
        let mut names: Vec<String> = self.lets.keys().cloned().collect();
        names.extend(
            encoded
                .filter(|n| !self.lets.contains_key(*n))
                .map(str::to_string),
        );
        names
    }

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

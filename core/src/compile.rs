//! Policy compiler: parses every source, checks it against the request schema and
//! builds the indexed [`PolicySet`]. Every problem becomes a located diagnostic; a set
//! with any error is never produced (callers fail closed).

use crate::detector::CompiledDetector;
use crate::glob::{has_glob_meta, path_glob, LazyWordGlob, PathGlobs};
use crate::index::Index;
use crate::ir::*;
use crate::policy::{CompiledCase, CompiledGuide, CompiledTest, PolicySet, TestSubject};
use crate::request::*;
use crate::schema::{self, Attr, Method, Ty};
use crate::script::ScriptHost;
use contextos_grammar::ast::{self, Effect, ListItem, Pattern, Span, Spanned, Statement};
use contextos_grammar::{did_you_mean, Diagnostic, SourceFile};
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod detectors;
pub use detectors::{check_regex, DEFAULT_LOOKBACK, REGEX_SIZE_LIMIT};

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

/// The language versions this build understands.
pub const LANGUAGE_VERSION: u32 = 1;

struct LetDef {
    items: Vec<ListItem>,
    scalar: bool,
    file: usize,
    span: Span,
}

struct Ctx<'a> {
    files: &'a [SourceFile],
    layers: Vec<Layer>,
    diags: Vec<FileDiagnostic>,
    lets: HashMap<String, LetDef>,
    cycles_reported: BTreeSet<String>,
    scripts: ScriptHost,
    /// [`CompileOptions::lazy`]: detector regexes are only parsed, not compiled.
    lazy: bool,
}

impl Ctx<'_> {
    fn error_count(&self) -> usize {
        self.diags
            .iter()
            .filter(|d| d.diagnostic.is_error())
            .count()
    }

    fn err(&mut self, file: usize, d: Diagnostic) {
        self.diags.push(FileDiagnostic {
            file,
            diagnostic: d,
        });
    }

    fn origin(&self, file: usize, span: Span) -> Origin {
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

    fn text(&self, file: usize, span: Span) -> String {
        self.files[file]
            .text
            .get(span.start..span.end)
            .unwrap_or("")
            .to_string()
    }

    /// Expands a list with `$var` references, detecting cycles.
    fn expand(
        &mut self,
        file: usize,
        items: &[ListItem],
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut ok = true;
        for item in items {
            match item {
                ListItem::Str(s) => out.push(s.node.clone()),
                ListItem::Var(v) => match self.var(file, v, stack) {
                    Some((vals, _)) => out.extend(vals),
                    None => ok = false,
                },
            }
        }
        ok.then_some(out)
    }

    fn var(
        &mut self,
        file: usize,
        v: &Spanned<String>,
        stack: &mut Vec<String>,
    ) -> Option<(Vec<String>, bool)> {
        if stack.contains(&v.node) {
            let fresh = !self.cycles_reported.contains(&v.node);
            self.cycles_reported.extend(stack.iter().cloned());
            if !fresh {
                return None;
            }
            self.err(
                file,
                Diagnostic::error(
                    "E0118",
                    v.span,
                    format!("`${}` is defined in terms of itself", v.node),
                )
                .with_label("cycle"),
            );
            return None;
        }
        let Some(def) = self.lets.get(&v.node) else {
            let names: Vec<String> = self.lets.keys().cloned().collect();
            let mut d =
                Diagnostic::error("E0105", v.span, format!("undefined variable `${}`", v.node))
                    .with_label("not defined by any `let`");
            if let Some(s) = did_you_mean(&v.node, names.iter().map(String::as_str)) {
                d = d.with_help(format!("did you mean `${s}`?"));
            }
            self.err(file, d);
            return None;
        };
        let (items, scalar, def_file) = (def.items.clone(), def.scalar, def.file);
        stack.push(v.node.clone());
        let out = self.expand(def_file, &items, stack);
        stack.pop();
        out.map(|o| (o, scalar))
    }
}

/// Compiles sources into a policy set. Files are given in layer order (stdlib first).
pub fn compile(sources: &[PolicySource], options: &CompileOptions) -> CompileOutput {
    let files: Vec<SourceFile> = sources
        .iter()
        .map(|s| SourceFile::new(s.name.clone(), s.text.clone()))
        .collect();
    let mut ctx = Ctx {
        files: &files,
        layers: sources.iter().map(|s| s.layer).collect(),
        diags: Vec::new(),
        lets: HashMap::new(),
        cycles_reported: BTreeSet::new(),
        scripts: ScriptHost::new(),
        lazy: options.lazy,
    };
    let mut parsed = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let out = contextos_grammar::parse(&s.text);
        for d in out.diagnostics {
            ctx.err(i, d);
        }
        parsed.push(out.file);
    }

    // Pass 1: headers, defaults and lets (a later layer overrides an earlier one).
    let mut defaults: BTreeMap<Domain, (Effect, Layer, usize, Span)> = BTreeMap::new();
    for (fi, file) in parsed.iter().enumerate() {
        let layer = ctx.layers[fi];
        let mut saw_language = false;
        for stmt in &file.statements {
            match stmt {
                Statement::Language(v) => {
                    saw_language = true;
                    if v.node != LANGUAGE_VERSION {
                        ctx.err(
                            fi,
                            Diagnostic::error(
                                "E0116",
                                v.span,
                                format!("unsupported language version {}", v.node),
                            )
                            .with_help(format!(
                                "this build understands `language {LANGUAGE_VERSION};`"
                            )),
                        );
                    }
                }
                Statement::Default(d) => {
                    if layer == Layer::Plugin {
                        ctx.err(fi, plugin_may_not(d.span, "change a default"));
                        continue;
                    }
                    let Some(domain) = check_domain(&mut ctx, fi, &d.domain) else {
                        continue;
                    };
                    if let Some((_, l, pf, ps)) = defaults.get(&domain) {
                        if *l == layer {
                            let prev = ctx.origin(*pf, *ps);
                            ctx.err(
                                fi,
                                Diagnostic::error(
                                    "E0103",
                                    d.span,
                                    format!(
                                        "a default for `{domain}` is already declared at {prev}"
                                    ),
                                )
                                .with_label("second default"),
                            );
                            continue;
                        }
                    }
                    defaults.insert(domain, (d.effect.node, layer, fi, d.span));
                }
                Statement::Let(l) => {
                    if layer == Layer::Plugin && ctx.lets.contains_key(&l.name.node) {
                        ctx.err(
                            fi,
                            plugin_may_not(
                                l.name.span,
                                &format!(
                                    "redefine `${}`, which an earlier layer defines",
                                    l.name.node
                                ),
                            ),
                        );
                        continue;
                    }
                    if let Some(prev) = ctx.lets.get(&l.name.node) {
                        if ctx.layers[prev.file] == layer {
                            let at = ctx.origin(prev.file, prev.span);
                            ctx.err(
                                fi,
                                Diagnostic::error(
                                    "E0104",
                                    l.name.span,
                                    format!("`{}` is already defined at {at}", l.name.node),
                                )
                                .with_label("defined twice"),
                            );
                            continue;
                        }
                    }
                    ctx.lets.insert(
                        l.name.node.clone(),
                        LetDef {
                            items: l.value.node.clone(),
                            scalar: l.scalar,
                            file: fi,
                            span: l.span,
                        },
                    );
                }
                _ => {}
            }
        }
        if !saw_language && !file.statements.is_empty() {
            ctx.err(
                fi,
                Diagnostic::warning("W0202", Span::new(0, 0), "missing `language 1;` header")
                    .with_help(
                        "start the file with `language 1;` so future versions can tell it apart",
                    ),
            );
        }
    }
    // Check every let resolves even if unused.
    let let_names: Vec<(String, usize, Span)> = {
        let mut v: Vec<_> = ctx
            .lets
            .iter()
            .map(|(k, d)| (k.clone(), d.file, d.span))
            .collect();
        v.sort_by_key(|a| (a.1, a.2.start));
        v
    };
    for (name, file, span) in let_names {
        ctx.var(file, &Spanned::new(name, span), &mut Vec::new());
    }

    // Pass 2: rules, guides, tests.
    let mut rules = Vec::new();
    let mut guides = Vec::new();
    let mut detectors: Vec<(usize, CompiledDetector)> = Vec::new();
    let mut tests_ast = Vec::new();
    let mut roles = BTreeSet::new();
    for (fi, file) in parsed.iter().enumerate() {
        for stmt in &file.statements {
            match stmt {
                Statement::Rule(r) => rules.extend(compile_rule(&mut ctx, fi, r, None)),
                Statement::Guide(g) => guides.extend(compile_guide(&mut ctx, fi, g, None)),
                Statement::Detector(d) => {
                    detectors.extend(detectors::compile_detector(&mut ctx, fi, d).map(|c| (fi, c)))
                }
                Statement::Role(rb) => {
                    roles.insert(rb.name.node.clone());
                    for r in &rb.rules {
                        rules.extend(compile_rule(&mut ctx, fi, r, Some(&rb.name.node)));
                    }
                    for g in &rb.guides {
                        guides.extend(compile_guide(&mut ctx, fi, g, Some(&rb.name.node)));
                    }
                }
                Statement::Test(t) => tests_ast.push((fi, t)),
                _ => {}
            }
        }
    }

    // Unique ids.
    let mut seen: HashMap<String, Origin> = HashMap::new();
    for r in &rules {
        if let Some(prev) = seen.get(&r.id) {
            let fi = files
                .iter()
                .position(|f| f.name == r.origin.file)
                .unwrap_or(0);
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0106",
                    Span::new(r.origin.start, r.origin.end),
                    format!("rule id `{}` is already used at {prev}", r.id),
                )
                .with_label("duplicate id")
                .with_help("rule ids must be unique across the policy set (stdlib included)"),
            );
        } else {
            seen.insert(r.id.clone(), r.origin.clone());
        }
    }
    let mut seen_detectors: HashMap<&str, &Origin> = HashMap::new();
    for (fi, d) in &detectors {
        match seen_detectors.get(d.id.as_str()) {
            Some(prev) => {
                let msg = format!("detector id `{}` is already used at {prev}", d.id);
                ctx.err(
                    *fi,
                    Diagnostic::error("E0128", Span::new(d.origin.start, d.origin.end), msg)
                        .with_label("duplicate id")
                        .with_help(
                            "detector ids must be unique across the policy set (stdlib included)",
                        ),
                );
            }
            None => {
                seen_detectors.insert(&d.id, &d.origin);
            }
        }
    }
    let all_ids: BTreeSet<String> = rules.iter().map(|r| r.id.clone()).collect();
    let disabled: BTreeSet<&str> = options.disabled_rules.iter().map(String::as_str).collect();
    for id in &disabled {
        if !all_ids.contains(*id) && !detectors.iter().any(|(_, d)| d.id == *id) {
            ctx.err(
                NO_FILE,
                Diagnostic::warning(
                    "W0205",
                    Span::new(0, 0),
                    format!("`disable` names unknown rule id `{id}`"),
                ),
            );
        }
    }
    rules.retain(|r| !disabled.contains(r.id.as_str()));
    let detectors: Vec<CompiledDetector> = detectors
        .into_iter()
        .map(|(_, d)| d)
        .filter(|d| !disabled.contains(d.id.as_str()))
        .collect();

    let mut tests = Vec::new();
    for (fi, t) in tests_ast {
        tests.extend(compile_test(&mut ctx, fi, t, &all_ids, &roles));
    }

    let mut default_effects = [Effect::Deny; 4];
    for d in Domain::ALL {
        match defaults.get(&d) {
            Some((e, ..)) => default_effects[d.index()] = *e,
            None if !files.is_empty() => ctx.err(
                NO_FILE,
                Diagnostic::warning(
                    "W0204",
                    Span::new(0, 0),
                    format!("no `default {d} = …;` is declared; `{d}` requests default to deny"),
                ),
            ),
            None => {}
        }
    }

    let Ctx {
        mut diags, scripts, ..
    } = ctx;
    let has_errors = diags.iter().any(|d| d.diagnostic.is_error());
    let index = if has_errors {
        None
    } else {
        match Index::build(&rules).and_then(|i| {
            if !options.lazy {
                i.warm(&rules)?;
                warm_rules(&rules)?;
            }
            Ok(i)
        }) {
            Ok(i) => Some(i),
            Err(e) => {
                diags.push(FileDiagnostic {
                    file: 0,
                    diagnostic: Diagnostic::error(
                        "E0119",
                        Span::new(0, 0),
                        format!("the rule index cannot be built: {e}"),
                    )
                    .with_help("reduce the number or complexity of glob patterns"),
                });
                None
            }
        }
    };
    let policy = index.map(|index| PolicySet {
        rules,
        defaults: default_effects,
        guides,
        detectors,
        tests,
        roles,
        index,
        scripts,
    });
    CompileOutput {
        policy,
        files,
        diagnostics: diags,
    }
}

/// A plugin pack only adds rules, guides and detectors (a detector only finds; the
/// verdict on a finding stays with the project's commit rules). Changing defaults, redefining another
/// layer's `let`s or deciding plugins (its own verdict included) would let a third-party
/// pack loosen the policies that admitted it.
fn plugin_may_not(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error("E0120", span, format!("a plugin pack may not {what}")).with_help(
        "plugin packs may only add rules, guides and detectors; put this in the project's own policies",
    )
}

/// Compiles the globs inside conditions and exec heads now (see [`CompileOptions::lazy`]).
pub(crate) fn warm_rules(rules: &[CompiledRule]) -> Result<(), String> {
    fn cond(c: &Cond) -> Result<(), String> {
        match c {
            Cond::Or(v) | Cond::And(v) => v.iter().try_for_each(cond),
            Cond::Not(inner) => cond(inner),
            Cond::Matches(_, globs) => globs.warm(),
            Cond::Cmp(..) | Cond::Truthy(_) | Cond::Script(_) => Ok(()),
        }
    }
    for r in rules {
        for c in &r.clauses {
            cond(&c.cond)?;
        }
        for p in &r.exec_patterns {
            for w in &p.words {
                if let Word::Glob(g) = w {
                    g.is_match("")?;
                }
            }
        }
    }
    Ok(())
}

fn check_domain(ctx: &mut Ctx, fi: usize, d: &Spanned<String>) -> Option<Domain> {
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

fn compile_rule(
    ctx: &mut Ctx,
    fi: usize,
    r: &ast::Rule,
    role: Option<&str>,
) -> Option<CompiledRule> {
    let errors_before = ctx.diags.iter().filter(|d| d.diagnostic.is_error()).count();
    let domain = check_domain(ctx, fi, &r.domain)?;
    if domain == Domain::Plugin && ctx.layers.get(fi) == Some(&Layer::Plugin) {
        ctx.err(fi, plugin_may_not(r.domain.span, "decide plugins"));
        return None;
    }
    let mut id = None;
    let mut severity = None;
    let mut seen_ann = BTreeSet::new();
    for a in &r.annotations {
        if !seen_ann.insert(a.name.node.clone()) {
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0107",
                    a.span,
                    format!("`@{}` is given twice", a.name.node),
                ),
            );
            continue;
        }
        match a.name.node.as_str() {
            "id" => {
                if !valid_id(&a.value.node) {
                    ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0107",
                            a.value.span,
                            "rule ids use letters, digits and `-_.:/`",
                        )
                        .with_label("invalid id"),
                    );
                }
                id = Some(a.value.node.clone());
            }
            "severity" => {
                if matches!(a.value.node.as_str(), "error" | "warning" | "info") {
                    severity = Some(a.value.node.clone());
                } else {
                    ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0107",
                            a.value.span,
                            format!("unknown severity `{}`", a.value.node),
                        )
                        .with_help("use error, warning or info"),
                    );
                }
            }
            other => {
                let mut d = Diagnostic::error(
                    "E0107",
                    a.name.span,
                    format!("unknown annotation `@{other}`"),
                )
                .with_label("expected @id or @severity");
                if let Some(s) = did_you_mean(other, ["id", "severity"]) {
                    d = d.with_help(format!("did you mean `@{s}`?"));
                }
                ctx.err(fi, d);
            }
        }
    }
    let origin = ctx.origin(fi, r.span);
    let head_origin = ctx.origin(fi, r.head_span);
    let id = id.unwrap_or_else(|| format!("{}:{}", head_origin.file, head_origin.line));

    // Operations.
    let allowed = schema::domain_ops(domain);
    let mut ops: OpMask = if r.ops.is_empty() { ALL_OPS } else { 0 };
    for op in &r.ops {
        match allowed.iter().position(|o| *o == op.node) {
            Some(i) => ops |= 1 << i,
            None if allowed.is_empty() => ctx.err(
                fi,
                Diagnostic::error(
                    "E0102",
                    op.span,
                    format!("`{domain}` rules take no operations"),
                )
                .with_label("unexpected operation")
                .with_help("patterns are strings: write them in quotes"),
            ),
            None => {
                let mut d = Diagnostic::error(
                    "E0102",
                    op.span,
                    format!("unknown operation `{}` for `{domain}`", op.node),
                )
                .with_label(format!("expected one of: {}", allowed.join(", ")));
                if let Some(s) = did_you_mean(&op.node, allowed.iter().copied()) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                ctx.err(fi, d);
            }
        }
    }

    // Patterns.
    let mut patterns = Vec::new();
    for p in &r.patterns {
        let (items, span) = match p {
            Pattern::Str(s) => (vec![ListItem::Str(s.clone())], s.span),
            Pattern::Var(v) => (vec![ListItem::Var(v.clone())], v.span),
            Pattern::List(l) => (l.node.clone(), l.span),
        };
        if let Some(vals) = ctx.expand(fi, &items, &mut Vec::new()) {
            for v in vals {
                patterns.push((v, span));
            }
        }
    }
    let mut exec_patterns = Vec::new();
    for (p, span) in &patterns {
        if domain == Domain::Exec {
            match exec_pattern(p) {
                Ok(ep) => exec_patterns.push(ep),
                Err(e) => ctx.err(
                    fi,
                    Diagnostic::error("E0112", *span, format!("invalid exec pattern `{p}`: {e}")),
                ),
            }
        } else if let Err(e) = path_glob(p) {
            ctx.err(
                fi,
                Diagnostic::error("E0112", *span, format!("invalid glob `{p}`: {e}"))
                    .with_label("here"),
            );
        }
    }

    // Clauses.
    let mut clauses = Vec::new();
    let mut because: Option<String> = None;
    let mut obligations = Vec::new();
    let mut analyzable = true;
    for c in &r.clauses {
        match c {
            ast::Clause::When(e) | ast::Clause::Unless(e) => {
                let negated = matches!(c, ast::Clause::Unless(_));
                if contains_script(e) {
                    analyzable = false;
                }
                if let Some(cond) = check_expr(ctx, fi, domain, e) {
                    let span = e.span();
                    clauses.push(Clause {
                        negated,
                        cond,
                        text: format!(
                            "{} {}",
                            if negated { "unless" } else { "when" },
                            match e {
                                ast::Expr::Script(body) =>
                                    format!("script {{ {} }}", body.node.trim()),
                                _ => one_line(&ctx.text(fi, span)),
                            }
                        ),
                        origin: ctx.origin(fi, span),
                    });
                }
            }
            ast::Clause::Because(s) => {
                if because.is_some() {
                    ctx.err(
                        fi,
                        Diagnostic::error("E0115", s.span, "a rule has at most one `because`"),
                    );
                }
                because = Some(s.node.clone());
            }
            ast::Clause::With(o) => {
                if let Some(ob) = check_obligation(ctx, fi, domain, r.effect.node, o, &obligations)
                {
                    obligations.push(ob);
                }
            }
        }
    }
    if because.is_none() {
        ctx.err(
            fi,
            Diagnostic::warning(
                "W0201",
                r.head_span,
                format!("rule `{id}` has no `because`"),
            )
            .with_help("a reason tells the agent and the reviewer why the verdict was given"),
        );
    }
    let errors_after = ctx.diags.iter().filter(|d| d.diagnostic.is_error()).count();
    if errors_after > errors_before {
        return None;
    }
    Some(CompiledRule {
        id,
        effect: r.effect.node,
        domain,
        ops,
        role: role.map(str::to_string),
        patterns: patterns.into_iter().map(|(p, _)| p).collect(),
        exec_patterns,
        clauses,
        because,
        severity,
        obligations,
        origin,
        layer: ctx.layers[fi],
        analyzable,
    })
}

/// Rule and detector ids: letters, digits and `-_.:/`.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/".contains(c))
}

/// `git push *` → words [git, push] + any rest; `*` alone → any command.
pub fn exec_pattern(p: &str) -> Result<ExecPattern, String> {
    let mut words: Vec<&str> = p.split_whitespace().collect();
    if words.is_empty() {
        return Err("the pattern is empty".into());
    }
    let rest = words.last() == Some(&"*");
    if rest {
        words.pop();
    }
    let words = words
        .into_iter()
        .map(|w| {
            if has_glob_meta(w) {
                LazyWordGlob::new(w).map(Word::Glob)
            } else {
                Ok(Word::Literal(w.to_string()))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ExecPattern { words, rest })
}

/// Clause text for traces: one line, no trailing whitespace (pest spans may include it).
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn contains_script(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Script(_) => true,
        ast::Expr::Or(v, _) | ast::Expr::And(v, _) => v.iter().any(contains_script),
        ast::Expr::Not(e, _) | ast::Expr::Paren(e, _) => contains_script(e),
        ast::Expr::Compare { .. } | ast::Expr::Truthy(_) => false,
    }
}

fn check_obligation(
    ctx: &mut Ctx,
    fi: usize,
    domain: Domain,
    effect: Effect,
    o: &ast::Obligation,
    existing: &[ObligationIr],
) -> Option<ObligationIr> {
    if effect == Effect::Deny {
        ctx.err(
            fi,
            Diagnostic::error("E0113", o.span, "a `deny` rule cannot carry obligations")
                .with_help("obligations tell an effect handler how to carry out an allowed action"),
        );
        return None;
    }
    if existing.iter().any(|e| e.name == o.name.node) {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0113",
                o.name.span,
                format!("`with {}` is given twice", o.name.node),
            ),
        );
        return None;
    }
    let Some(keys) = schema::obligation_keys(domain, &o.name.node) else {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0113",
                o.name.span,
                format!("unknown obligation `{}` for `{domain}` rules", o.name.node),
            )
            .with_help("exec rules accept `with sandbox { … }`"),
        );
        return None;
    };
    let mut entries = Vec::new();
    let mut seen = BTreeSet::new();
    for (k, v) in &o.entries {
        if !keys.contains(&k.node.as_str()) {
            let mut d = Diagnostic::error(
                "E0113",
                k.span,
                format!("unknown `{}` key `{}`", o.name.node, k.node),
            )
            .with_label(format!("expected one of: {}", keys.join(", ")));
            if let Some(s) = did_you_mean(&k.node, keys.iter().copied()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            ctx.err(fi, d);
            continue;
        }
        if !seen.insert(k.node.clone()) {
            ctx.err(
                fi,
                Diagnostic::error("E0113", k.span, format!("`{}` is given twice", k.node)),
            );
            continue;
        }
        let value = match &v.node {
            ast::Value::Str(s) | ast::Value::Ident(s) => serde_json::Value::String(s.clone()),
            ast::Value::Int(i) => serde_json::Value::from(*i),
            ast::Value::Bool(b) => serde_json::Value::Bool(*b),
            ast::Value::List(items) => {
                let vals = ctx.expand(fi, items, &mut Vec::new())?;
                serde_json::Value::from(vals)
            }
        };
        entries.push((k.node.clone(), value));
    }
    Some(ObligationIr {
        name: o.name.node.clone(),
        entries,
    })
}

fn check_expr(ctx: &mut Ctx, fi: usize, domain: Domain, e: &ast::Expr) -> Option<Cond> {
    match e {
        ast::Expr::Or(items, _) => {
            let parts: Vec<Option<Cond>> = items
                .iter()
                .map(|i| check_expr(ctx, fi, domain, i))
                .collect();
            Some(Cond::Or(parts.into_iter().collect::<Option<_>>()?))
        }
        ast::Expr::And(items, _) => {
            let parts: Vec<Option<Cond>> = items
                .iter()
                .map(|i| check_expr(ctx, fi, domain, i))
                .collect();
            Some(Cond::And(parts.into_iter().collect::<Option<_>>()?))
        }
        ast::Expr::Not(inner, _) => Some(Cond::Not(Box::new(check_expr(ctx, fi, domain, inner)?))),
        ast::Expr::Paren(inner, _) => check_expr(ctx, fi, domain, inner),
        ast::Expr::Truthy(o) => {
            let (v, ty) = check_operand(ctx, fi, domain, o)?;
            if ty != Ty::Bool {
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0110",
                        o.span(),
                        format!("a condition must be a boolean, this is a {}", ty.name()),
                    )
                    .with_help("compare it, e.g. `role == \"maintainer\"`"),
                );
                return None;
            }
            Some(Cond::Truthy(v))
        }
        ast::Expr::Script(body) => match ctx.scripts.compile(domain, &body.node) {
            Ok(i) => Some(Cond::Script(i)),
            Err(err) => {
                let at = body.span.start + err.offset.unwrap_or(0);
                let vars: Vec<&str> = schema::script_vars(domain)
                    .iter()
                    .map(|(n, _)| *n)
                    .collect();
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0114",
                        Span::new(at, at + 1),
                        format!("script error: {}", err.message),
                    )
                    .with_label("here")
                    .with_help(format!("`{domain}` scripts see: {}", vars.join(", "))),
                );
                None
            }
        },
        ast::Expr::Compare { lhs, op, rhs, .. } => {
            let l = check_operand(ctx, fi, domain, lhs);
            if op.node == ast::CmpOp::Matches {
                let (lv, lt) = l?;
                if !matches!(lt, Ty::Str | Ty::List) {
                    ctx.err(
                        fi,
                        type_err(
                            lhs.span(),
                            "`matches` needs a string or a list on the left",
                            lt,
                        ),
                    );
                    return None;
                }
                let globs = match rhs {
                    ast::Operand::Str(s) => vec![s.node.clone()],
                    ast::Operand::List(l) => ctx.expand(fi, &l.node, &mut Vec::new())?,
                    ast::Operand::Var(v) => ctx.var(fi, v, &mut Vec::new())?.0,
                    other => {
                        ctx.err(
                            fi,
                            Diagnostic::error(
                                "E0110",
                                other.span(),
                                "`matches` takes literal glob patterns",
                            )
                            .with_help("write a string, a list or a `$variable`"),
                        );
                        return None;
                    }
                };
                return match PathGlobs::new(globs.iter().map(String::as_str)) {
                    Ok(g) => Some(Cond::Matches(Box::new(lv), g)),
                    Err((p, msg)) => {
                        ctx.err(
                            fi,
                            Diagnostic::error(
                                "E0112",
                                rhs.span(),
                                format!("invalid glob `{p}`: {msg}"),
                            ),
                        );
                        None
                    }
                };
            }
            let r = check_operand(ctx, fi, domain, rhs);
            let ((lv, lt), (rv, rt)) = (l?, r?);
            use ast::CmpOp::*;
            let ok = match op.node {
                Eq | Ne => lt == rt && lt != Ty::List,
                Lt | Le | Gt | Ge => lt == Ty::Int && rt == Ty::Int,
                In => lt == Ty::Str && rt == Ty::List,
                Contains => matches!(lt, Ty::List | Ty::Str) && rt == Ty::Str,
                Matches => false,
            };
            if !ok {
                let want = match op.node {
                    Eq | Ne => "both sides of the same type (string, integer or boolean)",
                    Lt | Le | Gt | Ge => "integers on both sides",
                    In => "a string on the left and a list on the right",
                    Contains => "a list or string on the left and a string on the right",
                    Matches => "",
                };
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0110",
                        op.span,
                        format!("type mismatch: `{}` needs {want}", op.node.as_str()),
                    )
                    .with_label(format!(
                        "{} {} {}",
                        lt.name(),
                        op.node.as_str(),
                        rt.name()
                    )),
                );
                return None;
            }
            Some(Cond::Cmp(Box::new(lv), op.node, Box::new(rv)))
        }
    }
}

fn type_err(span: Span, msg: &str, got: Ty) -> Diagnostic {
    Diagnostic::error("E0110", span, format!("type mismatch: {msg}"))
        .with_label(format!("this is a {}", got.name()))
}

fn check_attr(
    ctx: &mut Ctx,
    fi: usize,
    domain: Domain,
    path: &Spanned<Vec<String>>,
) -> Option<(Attr, Ty)> {
    let dotted = path.node.join(".");
    let Some(info) = schema::lookup_attr(&dotted) else {
        let mut d = Diagnostic::error("E0108", path.span, format!("unknown attribute `{dotted}`"))
            .with_label("not in the request schema");
        let candidates: Vec<&str> = schema::ATTRS
            .iter()
            .filter(|a| a.domain.is_none() || a.domain == Some(domain))
            .flat_map(|a| a.names.iter().copied())
            .collect();
        if let Some(s) = did_you_mean(&dotted, candidates.iter().copied()) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else {
            d = d.with_help(format!(
                "`{domain}` requests have: {}",
                candidates.join(", ")
            ));
        }
        ctx.err(fi, d);
        return None;
    };
    if let Some(d) = info.domain {
        if d != domain {
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0109",
                    path.span,
                    format!("`{dotted}` belongs to `{d}` requests, not `{domain}`"),
                )
                .with_label("not available here"),
            );
            return None;
        }
    }
    Some((info.attr, info.ty))
}

fn check_operand(ctx: &mut Ctx, fi: usize, domain: Domain, o: &ast::Operand) -> Option<(Val, Ty)> {
    match o {
        ast::Operand::Str(s) => Some((Val::Str(s.node.clone()), Ty::Str)),
        ast::Operand::Int(i) => Some((Val::Int(i.node), Ty::Int)),
        ast::Operand::Bool(b) => Some((Val::Bool(b.node), Ty::Bool)),
        ast::Operand::List(l) => Some((
            Val::List(ctx.expand(fi, &l.node, &mut Vec::new())?),
            Ty::List,
        )),
        ast::Operand::Var(v) => {
            let (vals, scalar) = ctx.var(fi, v, &mut Vec::new())?;
            match (scalar, vals.as_slice()) {
                (true, [one]) => Some((Val::Str(one.clone()), Ty::Str)),
                _ => Some((Val::List(vals), Ty::List)),
            }
        }
        ast::Operand::Attr(path) => {
            let (a, ty) = check_attr(ctx, fi, domain, path)?;
            Some((Val::Attr(a), ty))
        }
        ast::Operand::Call { target, args, span } => {
            let dotted = target.node.join(".");
            if dotted == "plugin.signed_by" {
                if domain != Domain::Plugin {
                    ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0109",
                            target.span,
                            format!("`plugin.signed_by` is not available in `{domain}` rules"),
                        ),
                    );
                    return None;
                }
                let args = check_args(ctx, fi, domain, args, *span, &[Ty::Str])?;
                return Some((
                    Val::Call(
                        Method::SignedBy,
                        Box::new(Val::Attr(Attr::PluginSigner)),
                        args,
                    ),
                    Ty::Bool,
                ));
            }
            let (method_name, receiver) = target.node.split_last()?;
            let Some(method) = schema::METHODS
                .iter()
                .find(|(n, _)| n == method_name)
                .map(|(_, m)| *m)
            else {
                let mut d = Diagnostic::error(
                    "E0111",
                    target.span,
                    format!("unknown method `{method_name}`"),
                );
                if let Some(s) = did_you_mean(method_name, schema::METHODS.iter().map(|(n, _)| *n))
                {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                ctx.err(fi, d);
                return None;
            };
            if receiver.is_empty() {
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0111",
                        target.span,
                        format!("`{method_name}` must be called on an attribute"),
                    ),
                );
                return None;
            }
            let recv_span = Span::new(
                target.span.start,
                target.span.start + receiver.join(".").len(),
            );
            let (attr, rty) =
                check_attr(ctx, fi, domain, &Spanned::new(receiver.to_vec(), recv_span))?;
            let (params, ret, ok): (&[Ty], Ty, bool) = match method {
                Method::Len => (&[], Ty::Int, matches!(rty, Ty::Str | Ty::List)),
                Method::StartsWith | Method::EndsWith => (&[Ty::Str], Ty::Bool, rty == Ty::Str),
                Method::Contains => (&[Ty::Str], Ty::Bool, matches!(rty, Ty::Str | Ty::List)),
                Method::SignedBy => (&[Ty::Str], Ty::Bool, false),
            };
            if !ok {
                ctx.err(
                    fi,
                    type_err(
                        recv_span,
                        &format!("`{method_name}` cannot be called on this attribute"),
                        rty,
                    ),
                );
                return None;
            }
            let args = check_args(ctx, fi, domain, args, *span, params)?;
            Some((Val::Call(method, Box::new(Val::Attr(attr)), args), ret))
        }
    }
}

fn check_args(
    ctx: &mut Ctx,
    fi: usize,
    domain: Domain,
    args: &[ast::Operand],
    span: Span,
    params: &[Ty],
) -> Option<Vec<Val>> {
    if args.len() != params.len() {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0111",
                span,
                format!(
                    "expected {} argument(s), found {}",
                    params.len(),
                    args.len()
                ),
            ),
        );
        return None;
    }
    let mut out = Vec::new();
    for (a, want) in args.iter().zip(params) {
        let (v, ty) = check_operand(ctx, fi, domain, a)?;
        if ty != *want {
            ctx.err(
                fi,
                type_err(a.span(), &format!("expected a {}", want.name()), ty),
            );
            return None;
        }
        out.push(v);
    }
    Some(out)
}

fn compile_guide(
    ctx: &mut Ctx,
    fi: usize,
    g: &ast::Guide,
    role: Option<&str>,
) -> Option<CompiledGuide> {
    let mut id = None;
    let mut apply = None;
    for a in &g.annotations {
        match a.name.node.as_str() {
            "id" => id = Some(a.value.node.clone()),
            "apply" => match crate::policy::GuideApply::parse(&a.value.node) {
                Some(v) => apply = Some(v),
                None => ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0107",
                        a.value.span,
                        format!(
                            "`@apply` takes one of {}",
                            crate::policy::GuideApply::NAMES.join(", ")
                        ),
                    ),
                ),
            },
            other => ctx.err(
                fi,
                Diagnostic::error(
                    "E0107",
                    a.name.span,
                    format!("guides take only `@id` and `@apply`, not `@{other}`"),
                ),
            ),
        }
    }
    let mut scope = Vec::new();
    for p in &g.scope {
        let items = match p {
            Pattern::Str(s) => vec![ListItem::Str(s.clone())],
            Pattern::Var(v) => vec![ListItem::Var(v.clone())],
            Pattern::List(l) => l.node.clone(),
        };
        for v in ctx.expand(fi, &items, &mut Vec::new())? {
            if let Err(e) = path_glob(&v) {
                ctx.err(
                    fi,
                    Diagnostic::error("E0112", g.span, format!("invalid glob `{v}`: {e}")),
                );
                return None;
            }
            scope.push(v);
        }
    }
    let origin = ctx.origin(fi, g.span);
    let apply = apply
        .unwrap_or_else(|| crate::policy::GuideApply::derived(!scope.is_empty(), role.is_some()));
    Some(CompiledGuide {
        apply,
        id: id.unwrap_or_else(|| format!("{}:{}", origin.file, origin.line)),
        title: g.title.node.clone(),
        scope,
        text: g
            .body
            .iter()
            .map(|b| b.node.as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
        role: role.map(str::to_string),
        origin,
    })
}

fn field_str(ctx: &mut Ctx, fi: usize, v: &Spanned<ast::Value>) -> Option<String> {
    match &v.node {
        ast::Value::Str(s) => Some(s.clone()),
        _ => {
            ctx.err(fi, Diagnostic::error("E0117", v.span, "expected a string"));
            None
        }
    }
}

fn compile_test(
    ctx: &mut Ctx,
    fi: usize,
    t: &ast::TestBlock,
    ids: &BTreeSet<String>,
    roles: &BTreeSet<String>,
) -> Option<CompiledTest> {
    let mut cases = Vec::new();
    let mut ok = true;
    for c in &t.cases {
        let subject = match &c.request {
            ast::TestRequest::Path { op, path } => match PathOp::parse(&op.node) {
                Some(o) => Some(TestSubject::Request(Request::path(o, path.node.clone()))),
                None => {
                    ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0102",
                            op.span,
                            format!("unknown path operation `{}`", op.node),
                        )
                        .with_help("use read, write or delete"),
                    );
                    None
                }
            },
            ast::TestRequest::ExecShell(line) => Some(TestSubject::Shell(line.node.clone())),
            ast::TestRequest::ExecArgv(argv) => ctx
                .expand(fi, &argv.node, &mut Vec::new())
                .map(|a| TestSubject::Request(Request::exec(a))),
            ast::TestRequest::Plugin { name, fields } => {
                let mut p = PluginRequest {
                    name: name.node.clone(),
                    ..PluginRequest::default()
                };
                let mut good = true;
                for (k, v) in fields {
                    if let ("findings", ast::Value::List(items)) = (k.node.as_str(), &v.node) {
                        p.findings = ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default();
                        continue;
                    }
                    let val = field_str(ctx, fi, v);
                    match (k.node.as_str(), val) {
                        ("source", Some(s)) => p.source = s,
                        ("version", Some(s)) => p.version = s,
                        ("digest", Some(s)) => p.digest = s,
                        ("signer", Some(s)) => p.signer = Some(s),
                        (other, Some(_)) => {
                            ctx.err(
                                fi,
                                Diagnostic::error(
                                    "E0117",
                                    k.span,
                                    format!("unknown plugin field `{other}`"),
                                )
                                .with_help("use source, version, digest, signer or findings"),
                            );
                            good = false;
                        }
                        (_, None) => good = false,
                    }
                }
                good.then(|| TestSubject::Request(Request::new(RequestKind::Plugin(p))))
            }
            ast::TestRequest::Commit { files, fields } => {
                let files = ctx.expand(fi, &files.node, &mut Vec::new());
                let mut req = CommitRequest {
                    files: files.unwrap_or_default(),
                    ..CommitRequest::default()
                };
                let mut good = true;
                for (k, v) in fields {
                    match (k.node.as_str(), &v.node) {
                        ("message", ast::Value::Str(s)) => req.message = s.clone(),
                        ("kind", ast::Value::Str(s)) => req.kind = s.clone(),
                        ("severity", ast::Value::Str(s)) => req.severity = s.clone(),
                        ("host_unsafe", ast::Value::Bool(b)) => req.host_unsafe = *b,
                        ("auto_merge", ast::Value::Bool(b)) => req.auto_merge = *b,
                        ("findings", ast::Value::List(items)) => {
                            req.findings =
                                ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default()
                        }
                        (other, _) => {
                            ctx.err(
                                fi,
                                Diagnostic::error(
                                    "E0117",
                                    k.span,
                                    format!("unexpected commit field `{other}`"),
                                )
                                .with_help(
                                    "use message: \"…\", findings: [\"rule-id\", …], kind: \"secret\", severity: \"error\", host_unsafe: true or auto_merge: true",
                                ),
                            );
                            good = false;
                        }
                    }
                }
                good.then(|| TestSubject::Request(Request::new(RequestKind::Commit(req))))
            }
        };
        for r in &c.expect_rules {
            if !ids.contains(&r.node) {
                let mut d =
                    Diagnostic::error("E0117", r.span, format!("no rule has the id `{}`", r.node));
                if let Some(s) = did_you_mean(&r.node, ids.iter().map(String::as_str)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                ctx.err(fi, d);
                ok = false;
            }
        }
        if let Some(role) = &c.role {
            if !roles.contains(&role.node) && !role.node.is_empty() {
                ctx.err(
                    fi,
                    Diagnostic::warning(
                        "W0206",
                        role.span,
                        format!(
                            "no `role {}` block exists; only rules outside roles apply",
                            role.node
                        ),
                    ),
                );
            }
        }
        match subject {
            Some(subject) => cases.push(CompiledCase {
                subject,
                role: c.role.as_ref().map(|r| r.node.clone()),
                expect: c.expect.node,
                expect_rules: c.expect_rules.iter().map(|r| r.node.clone()).collect(),
                text: ctx.text(fi, c.span),
                origin: ctx.origin(fi, c.span),
            }),
            None => ok = false,
        }
    }
    ok.then(|| CompiledTest {
        name: t.name.node.clone(),
        layer: ctx.layers[fi],
        origin: ctx.origin(fi, t.span),
        cases,
    })
}

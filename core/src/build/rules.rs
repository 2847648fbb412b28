//! Lowering a rule to IR: annotations, operations, patterns (globs or exec words) and
//! clauses; conditions are type-checked in [`super::expr`], obligations in
//! [`super::obligations`].

use super::annotations;
use super::context::{check_domain, plugin_may_not, Ctx};
use super::expr::check_expr;
use super::obligations::check_obligation;
use crate::glob::{has_glob_meta, LazyWordGlob};
use crate::ir::{Clause, CompiledRule, ExecPattern, Layer, OpMask, Word, ALL_OPS};
use crate::request::Domain;
use crate::schema;
use contextos_grammar::ast::{self, ListItem, Pattern};
use contextos_grammar::{did_you_mean, Diagnostic};

/// Lowers one rule, which it takes whole: its strings (id, patterns, reason) move into
/// the IR instead of being copied, and its syntax is dropped as soon as it is lowered, so
/// a cold build's IR reuses the syntax tree's memory instead of faulting in fresh pages
/// beside it (each such page costs more than a rule's lowering does).
pub(super) fn compile_rule(
    ctx: &mut Ctx,
    fi: usize,
    mut r: ast::Rule,
    role: Option<&str>,
) -> Option<CompiledRule> {
    let errors_before = ctx.error_count();
    let domain = check_domain(ctx, fi, &r.domain)?;
    if domain == Domain::Plugin && ctx.layers.get(fi) == Some(&Layer::Plugin) {
        ctx.err(fi, plugin_may_not(r.domain.span, "decide plugins"));
        return None;
    }
    let mut severity = None;
    let mut accepts = Vec::new();
    let id_at = annotations::read(
        ctx,
        fi,
        &r.annotations,
        "rule",
        |ctx, v| {
            if matches!(v.node.as_str(), "error" | "warning" | "info") {
                severity = Some(v.node.clone());
            } else {
                ctx.err(
                    fi,
                    Diagnostic::error("E0107", v.span, format!("unknown severity `{}`", v.node)),
                );
            }
        },
        Some(&mut accepts),
    );
    let origin = ctx.origin(fi, r.span);
    let id = match id_at.and_then(|i| r.annotations.get_mut(i)) {
        Some(a) => std::mem::take(&mut a.value.node),
        None => {
            let head = ctx.origin(fi, r.head_span);
            format!("{}:{}", head.file, head.line)
        }
    };

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
    let first_span = r.patterns.first().map(|p| match p {
        Pattern::Str(s) => s.span,
        Pattern::Var(v) => v.span,
        Pattern::List(l) => l.span,
    });
    let mut patterns = Vec::with_capacity(r.patterns.len());
    for p in std::mem::take(&mut r.patterns) {
        // A literal is its own value; only `$name` and lists go through expansion (a
        // cold hook call lowers every rule, and most heads are one literal).
        let (expanded, span) = match p {
            Pattern::Str(s) => {
                patterns.push((s.node, s.span));
                continue;
            }
            Pattern::Var(v) => {
                let span = v.span;
                let item = ListItem::Var(v);
                (
                    ctx.expand(fi, std::slice::from_ref(&item), &mut Vec::new()),
                    span,
                )
            }
            Pattern::List(l) => (ctx.expand(fi, &l.node, &mut Vec::new()), l.span),
        };
        for v in expanded.into_iter().flatten() {
            patterns.push((v, span));
        }
    }
    if let Some(span) = first_span {
        if patterns.is_empty() && errors_before == ctx.error_count() {
            empty_head(ctx, fi, span);
        }
    }
    // Advice only (warnings), which a lazy build's caller never shows: it needs the
    // verdict, and a cold hook call lowers every rule of the project.
    if ctx.layers[fi] != Layer::Stdlib && !ctx.lazy {
        for (p, span) in &patterns {
            if let Some(f) = crate::lint::head::check(domain, p) {
                ctx.err(fi, lint_diagnostic(f, *span));
            }
        }
    }
    // An MCP pattern without `/` names servers: `github` is every tool of `github`.
    if domain == Domain::Mcp {
        for (p, _) in patterns.iter_mut() {
            if !p.contains('/') && p != "**" {
                p.push_str("/*");
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
        } else if domain == Domain::Net && crate::net::cidr(p).is_some() {
            // An address range, matched by containment.
        } else if let Some(problem) = (domain == Domain::Net)
            .then(|| crate::net::pattern_problem(p))
            .flatten()
        {
            ctx.err(
                fi,
                Diagnostic::error("E0112", *span, format!("invalid net pattern `{p}`"))
                    .with_label(problem),
            );
        } else if let Err(e) = ctx.check_glob(fi, p) {
            ctx.err(
                fi,
                Diagnostic::error("E0112", *span, format!("invalid glob `{p}`: {e}"))
                    .with_label("here"),
            );
        }
    }

    // Clauses.
    let mut clauses = Vec::with_capacity(r.clauses.len());
    let mut because: Option<String> = None;
    let mut obligations = Vec::new();
    let mut analyzable = true;
    for c in std::mem::take(&mut r.clauses) {
        let negated = matches!(c, ast::Clause::Unless(_));
        match c {
            ast::Clause::When(e) | ast::Clause::Unless(e) => {
                if contains_script(&e) {
                    analyzable = false;
                }
                if let Some(cond) = check_expr(ctx, fi, domain, &e) {
                    let span = e.span();
                    clauses.push(Clause {
                        negated,
                        cond,
                        text: clause_text(ctx, fi, negated, &e),
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
                because = Some(s.node);
            }
            ast::Clause::With(o) => {
                if let Some(ob) = check_obligation(ctx, fi, domain, r.effect.node, &o, &obligations)
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
    let errors_after = ctx.error_count();
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
        accepts,
    })
}

/// A lint finding as a located warning.
pub(super) fn lint_diagnostic(f: crate::lint::Finding, span: ast::Span) -> Diagnostic {
    Diagnostic::warning(f.code, span, f.message).with_help(f.help)
}

/// E0142: patterns were written but name nothing (`[]`, or `$x` with `let x = [];`).
/// Without patterns a rule matches every subject of its domain, so an empty list would
/// silently turn `allow exec $trusted` into "allow every command".
fn empty_head(ctx: &mut Ctx, fi: usize, span: ast::Span) {
    ctx.err(
        fi,
        Diagnostic::error("E0142", span, "the pattern list is empty")
            .with_label("expands to no pattern")
            .with_help(
                "an empty list would make the rule match every subject of its domain; list the patterns, or drop the list to match everything on purpose",
            ),
    );
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
    // Sized up front: collecting through `Result` would start at four words.
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        out.push(if has_glob_meta(w) {
            Word::Glob(Box::new(LazyWordGlob::new(w)?))
        } else {
            Word::Literal(w.to_string())
        });
    }
    let words = out;
    Ok(ExecPattern { words, rest })
}

/// A condition's text for traces, `when …` or `unless …`: one line, each source line
/// trimmed and the blank ones left out, written into one string (a cold hook call makes
/// one for every condition of the project).
fn clause_text(ctx: &Ctx, fi: usize, negated: bool, e: &ast::Expr) -> String {
    let keyword = if negated { "unless" } else { "when" };
    if let ast::Expr::Script(body) = e {
        return format!("{keyword} script {{ {} }}", body.node.trim());
    }
    let span = e.span();
    let source = ctx.files[fi].text.get(span.start..span.end).unwrap_or("");
    let mut text = String::with_capacity(keyword.len() + 1 + source.len());
    text.push_str(keyword);
    text.push(' ');
    one_line_into(&mut text, source);
    text
}

/// Appends `source` as one line: each line trimmed, blank ones left out, the rest joined
/// by single spaces (spans may include a trailing line break and indentation).
fn one_line_into(out: &mut String, source: &str) {
    let mut first = true;
    for line in source.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !first {
            out.push(' ');
        }
        out.push_str(line);
        first = false;
    }
}

fn contains_script(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Script(_) => true,
        ast::Expr::Or(v, _) | ast::Expr::And(v, _) => v.iter().any(contains_script),
        ast::Expr::Not(e, _) | ast::Expr::Paren(e, _) => contains_script(e),
        ast::Expr::Compare { .. } | ast::Expr::Truthy(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::one_line_into;

    fn one_line(source: &str) -> String {
        let mut out = String::from(">");
        one_line_into(&mut out, source);
        out
    }

    #[test]
    fn a_condition_over_several_lines_reads_as_one() {
        assert_eq!(
            one_line("path.ext == \"toml\"\n    and\n\n   role == \"ci\"  \r\n"),
            ">path.ext == \"toml\" and role == \"ci\""
        );
        assert_eq!(one_line("  a  "), ">a");
        assert_eq!(one_line("\n\n"), ">");
        assert_eq!(one_line(""), ">");
    }
}

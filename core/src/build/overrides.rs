//! `override let` and what it weakens. Replacing an earlier layer's list on purpose is
//! allowed, but when the replacement drops entries a `deny`/`ask` rule's head is built from
//! (or adds entries to an `allow` rule's head, or changes a list a condition reads) some
//! verdict may get weaker, so the override is reported with the rules it touches (W0240).

use super::context::Ctx;
use contextos_grammar::ast::{self, Effect, Expr, ListItem, Operand, Pattern, Statement};
use contextos_grammar::Diagnostic;
use std::collections::{BTreeMap, BTreeSet};

/// A rule of an earlier layer and the `$vars` its head and conditions name directly.
struct RuleRefs {
    id: String,
    effect: Effect,
    head: BTreeSet<String>,
    cond: BTreeSet<String>,
}

/// Warns (W0240) for every override that may weaken a rule.
pub(super) fn check(ctx: &mut Ctx, parsed: &[ast::PolicyFile]) {
    if ctx.overrides.is_empty() {
        return;
    }
    let rules = rule_refs(ctx, parsed);
    let deps = let_deps(ctx);
    let overrides = std::mem::take(&mut ctx.overrides);
    for o in &overrides {
        let Some((new, _)) = ctx.var(
            o.file,
            &ast::Spanned::new(o.name.clone(), o.span),
            &mut Vec::new(),
        ) else {
            continue;
        };
        let Some(old) = ctx.expand(o.old.file, &o.old.items, &mut vec![o.name.clone()]) else {
            continue;
        };
        let removed: Vec<&String> = old.iter().filter(|v| !new.contains(v)).collect();
        let added: Vec<&String> = new.iter().filter(|v| !old.contains(v)).collect();
        let reaches = |v: &String| v == &o.name || deps.get(v).is_some_and(|d| d.contains(&o.name));
        let mut weakened = Vec::new();
        for r in &rules {
            let in_head = r.head.iter().any(reaches);
            let in_cond = r.cond.iter().any(reaches);
            let why = match (in_head, r.effect) {
                (true, Effect::Deny | Effect::Ask) if !removed.is_empty() => Some(format!(
                    "`{}` ({}) no longer covers {}",
                    r.id,
                    r.effect,
                    quoted(&removed)
                )),
                (true, Effect::Allow) if !added.is_empty() => Some(format!(
                    "`{}` (allow) now also covers {}",
                    r.id,
                    quoted(&added)
                )),
                _ if in_cond && (!removed.is_empty() || !added.is_empty()) => Some(format!(
                    "a condition of `{}` ({}) reads the changed list",
                    r.id, r.effect
                )),
                _ => None,
            };
            weakened.extend(why);
        }
        if weakened.is_empty() {
            continue;
        }
        let d = Diagnostic::warning(
            "W0240",
            o.span,
            format!("`override let {}` weakens {} rule(s): {}", o.name, weakened.len(), weakened.join("; ")),
        )
        .with_label("replaces an earlier layer's list")
        .with_help(format!(
            "keep every entry of the earlier `${}` and add to it, or disable the rules you mean to drop in contextos.toml",
            o.name
        ));
        ctx.err(o.file, d);
    }
    ctx.overrides = overrides;
}

/// The first few entries, quoted; a stdlib list can hold dozens.
fn quoted(v: &[&String]) -> String {
    const SHOWN: usize = 4;
    let mut out = v
        .iter()
        .take(SHOWN)
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    if v.len() > SHOWN {
        out.push_str(&format!(" and {} more", v.len() - SHOWN));
    }
    out
}

/// For each `let`, every variable it reaches through other `let`s.
fn let_deps(ctx: &Ctx) -> BTreeMap<String, BTreeSet<String>> {
    let direct: BTreeMap<&String, Vec<&String>> = ctx
        .lets
        .iter()
        .map(|(k, d)| {
            let vars = d
                .items
                .iter()
                .filter_map(|i| match i {
                    ListItem::Var(v) => Some(&v.node),
                    ListItem::Str(_) => None,
                })
                .collect();
            (k, vars)
        })
        .collect();
    let mut out = BTreeMap::new();
    for k in direct.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = direct.get(k).cloned().unwrap_or_default();
        while let Some(v) = todo.pop() {
            if seen.insert(v.clone()) {
                todo.extend(direct.get(v).cloned().unwrap_or_default());
            }
        }
        out.insert((*k).clone(), seen);
    }
    out
}

/// Every rule of every file with the variables its head and its conditions name.
fn rule_refs(ctx: &Ctx, parsed: &[ast::PolicyFile]) -> Vec<RuleRefs> {
    let mut out = Vec::new();
    for (fi, file) in parsed.iter().enumerate() {
        for stmt in &file.statements {
            match stmt {
                Statement::Rule(r) => out.push(refs(ctx, fi, r)),
                Statement::Role(rb) => out.extend(rb.rules.iter().map(|r| refs(ctx, fi, r))),
                _ => {}
            }
        }
    }
    out
}

fn refs(ctx: &Ctx, fi: usize, r: &ast::Rule) -> RuleRefs {
    let id = r
        .annotations
        .iter()
        .find(|a| a.name.node == "id")
        .map(|a| a.value.node.clone())
        .unwrap_or_else(|| {
            let o = ctx.origin(fi, r.head_span);
            format!("{}:{}", o.file, o.line)
        });
    let mut head = BTreeSet::new();
    for p in &r.patterns {
        match p {
            Pattern::Str(_) => {}
            Pattern::Var(v) => {
                head.insert(v.node.clone());
            }
            Pattern::List(l) => list_vars(&l.node, &mut head),
        }
    }
    let mut cond = BTreeSet::new();
    for c in &r.clauses {
        if let ast::Clause::When(e) | ast::Clause::Unless(e) = c {
            expr_vars(e, &mut cond);
        }
    }
    RuleRefs {
        id,
        effect: r.effect.node,
        head,
        cond,
    }
}

fn list_vars(items: &[ListItem], out: &mut BTreeSet<String>) {
    for i in items {
        if let ListItem::Var(v) = i {
            out.insert(v.node.clone());
        }
    }
}

fn expr_vars(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Or(v, _) | Expr::And(v, _) => v.iter().for_each(|e| expr_vars(e, out)),
        Expr::Not(e, _) | Expr::Paren(e, _) => expr_vars(e, out),
        Expr::Compare { lhs, rhs, .. } => {
            operand_vars(lhs, out);
            operand_vars(rhs, out);
        }
        Expr::Truthy(o) => operand_vars(o, out),
        Expr::Script(_) => {}
    }
}

fn operand_vars(o: &Operand, out: &mut BTreeSet<String>) {
    match o {
        Operand::Var(v) => {
            out.insert(v.node.clone());
        }
        Operand::List(l) => list_vars(&l.node, out),
        Operand::Call { args, .. } => args.iter().for_each(|a| operand_vars(a, out)),
        Operand::Str(_) | Operand::Int(_) | Operand::Bool(_) | Operand::Attr(_) => {}
    }
}

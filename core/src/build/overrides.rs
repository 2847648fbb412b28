//! `override let` and what it weakens. Replacing an earlier layer's list on purpose is
//! allowed, but when the replacement drops entries a `deny`/`ask` rule's head is built from
//! (or adds entries to an `allow` rule's head, or changes a list a condition reads) some
//! verdict may get weaker, so the override is reported with the rules it touches (W0240).

use super::context::Ctx;
use contextos_grammar::ast::{self, CmpOp, Effect, Expr, ListItem, Operand, Pattern, Statement};
use contextos_grammar::Diagnostic;
use std::collections::{BTreeMap, BTreeSet};

/// How a list a rule reads moves the rule when entries are added: `More` (a head, or
/// `x in $list` / `x matches $list` under an even number of negations), `Less` (under an
/// odd number), or `Unknown` (`==` on a scalar, a method argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Polarity {
    More,
    Less,
    Unknown,
}

impl Polarity {
    fn flip(self) -> Polarity {
        match self {
            Polarity::More => Polarity::Less,
            Polarity::Less => Polarity::More,
            Polarity::Unknown => Polarity::Unknown,
        }
    }
}

/// A rule of any layer and the `$vars` it reads, each with its polarity.
struct RuleRefs {
    id: String,
    effect: Effect,
    vars: Vec<(String, Polarity)>,
}

/// Warns (W0240) for every override that may weaken a rule: one that then applies less
/// often (`deny`/`ask`) or more often (`allow`).
/// `parsed` are the files from index `first` on, and an override can only weaken rules
/// among them: a [precompiled](super::precompiled) standard library is not used when any
/// file overrides a `let`.
pub(super) fn check(ctx: &mut Ctx, first: usize, parsed: &[ast::PolicyFile]) {
    if ctx.overrides.is_empty() {
        return;
    }
    // Reads which `let` reaches which through the whole table.
    ctx.decode_all_lets();
    let rules = rule_refs(ctx, first, parsed);
    let deps = let_deps(ctx);
    let overrides: Vec<(String, super::context::LetDef, usize, ast::Span)> = ctx
        .overrides
        .iter()
        .map(|o| (o.name.clone(), o.old.clone(), o.file, o.span))
        .collect();
    for (name, old_def, file, span) in overrides {
        let Some((new, _)) = ctx.var(
            file,
            &ast::Spanned::new(name.clone(), span),
            &mut Vec::new(),
        ) else {
            continue;
        };
        let Some(old) = ctx.expand(old_def.file, &old_def.items, &mut vec![name.clone()]) else {
            continue;
        };
        let removed: Vec<&String> = old.iter().filter(|v| !new.contains(v)).collect();
        let added: Vec<&String> = new.iter().filter(|v| !old.contains(v)).collect();
        let reaches = |v: &String| v == &name || deps.get(v).is_some_and(|d| d.contains(&name));
        let mut weakened = Vec::new();
        for r in &rules {
            // What makes this rule weaker: applying less (deny/ask) or more (allow).
            let weaker_when_more = r.effect == Effect::Allow;
            let mut why = None;
            for (_, pol) in r.vars.iter().filter(|(v, _)| reaches(v)) {
                let (grows, shrinks) = match pol {
                    Polarity::More => (!added.is_empty(), !removed.is_empty()),
                    Polarity::Less => (!removed.is_empty(), !added.is_empty()),
                    Polarity::Unknown => {
                        let changed = !added.is_empty() || !removed.is_empty();
                        (changed, changed)
                    }
                };
                let hit = if weaker_when_more { grows } else { shrinks };
                if hit {
                    why = Some(match pol {
                        Polarity::More if weaker_when_more => {
                            format!("`{}` (allow) now also covers {}", r.id, quoted(&added))
                        }
                        Polarity::More => format!(
                            "`{}` ({}) no longer covers {}",
                            r.id,
                            r.effect,
                            quoted(&removed)
                        ),
                        Polarity::Less | Polarity::Unknown => format!(
                            "a condition of `{}` ({}) reads the changed list",
                            r.id, r.effect
                        ),
                    });
                    break;
                }
            }
            weakened.extend(why);
        }
        if weakened.is_empty() {
            continue;
        }
        let d = Diagnostic::warning(
            "W0240",
            span,
            format!(
                "`override let {name}` weakens {} rule(s): {}",
                weakened.len(),
                weakened.join("; ")
            ),
        )
        .with_label("replaces an earlier layer's list")
        .with_help(format!(
            "extend the earlier list instead (`override let {name} = [${name}, …];`), or disable the rules you mean to drop in contextos.toml"
        ));
        ctx.err(file, d);
    }
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
fn rule_refs(ctx: &Ctx, first: usize, parsed: &[ast::PolicyFile]) -> Vec<RuleRefs> {
    let mut out = Vec::new();
    for (fi, file) in (first..).zip(parsed) {
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
    let mut vars = Vec::new();
    for p in &r.patterns {
        match p {
            Pattern::Str(_) => {}
            Pattern::Var(v) => vars.push((v.node.clone(), Polarity::More)),
            Pattern::List(l) => list_vars(&l.node, Polarity::More, &mut vars),
        }
    }
    for c in &r.clauses {
        match c {
            ast::Clause::When(e) => expr_vars(e, Polarity::More, &mut vars),
            ast::Clause::Unless(e) => expr_vars(e, Polarity::Less, &mut vars),
            ast::Clause::Because(_) | ast::Clause::With(_) => {}
        }
    }
    RuleRefs {
        id,
        effect: r.effect.node,
        vars,
    }
}

fn list_vars(items: &[ListItem], pol: Polarity, out: &mut Vec<(String, Polarity)>) {
    for i in items {
        if let ListItem::Var(v) = i {
            out.push((v.node.clone(), pol));
        }
    }
}

/// `pol` is the polarity of the clause so far (`unless` and `not` flip it).
fn expr_vars(e: &Expr, pol: Polarity, out: &mut Vec<(String, Polarity)>) {
    match e {
        Expr::Or(v, _) | Expr::And(v, _) => v.iter().for_each(|e| expr_vars(e, pol, out)),
        Expr::Not(e, _) => expr_vars(e, pol.flip(), out),
        Expr::Paren(e, _) => expr_vars(e, pol, out),
        Expr::Compare { lhs, op, rhs, .. } => {
            // More entries on the right of `in`/`matches` make it hold more often.
            let rhs_pol = match op.node {
                CmpOp::In | CmpOp::Matches => pol,
                _ => Polarity::Unknown,
            };
            operand_vars(lhs, Polarity::Unknown, out);
            operand_vars(rhs, rhs_pol, out);
        }
        Expr::Truthy(o) => operand_vars(o, Polarity::Unknown, out),
        Expr::Script(_) => {}
    }
}

fn operand_vars(o: &Operand, pol: Polarity, out: &mut Vec<(String, Polarity)>) {
    match o {
        Operand::Var(v) => out.push((v.node.clone(), pol)),
        Operand::List(l) => list_vars(&l.node, pol, out),
        Operand::Call { args, .. } => args
            .iter()
            .for_each(|a| operand_vars(a, Polarity::Unknown, out)),
        Operand::Str(_) | Operand::Int(_) | Operand::Bool(_) | Operand::Attr(_) => {}
    }
}

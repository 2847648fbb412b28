//! W0302: conditions that compare an attribute with a value it can never have — an
//! extension with its dot (`path.ext == ".rs"`), an operation the rule's head excludes
//! (`path.op == "read"` on a `write` rule), a misspelt role (a near miss of one a `role` block or test names).

use super::Finding;
use crate::ir::{CompiledRule, Cond, Val, ALL_OPS};
use crate::schema::{domain_ops, Attr};
use contextos_grammar::ast::CmpOp;
use contextos_grammar::did_you_mean;
use std::collections::BTreeSet;

/// Every W0302 finding of `rule`, with the index of the clause it is in. `roles` are the
/// roles the set knows (its `role` blocks and the roles its tests use).
pub fn check(rule: &CompiledRule, roles: &BTreeSet<String>) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    for (i, c) in rule.clauses.iter().enumerate() {
        let mut found = Vec::new();
        walk(&c.cond, &mut |attr, op, values| {
            found.extend(judge(rule, roles, attr, op, values));
        });
        out.extend(found.into_iter().map(|f| (i, f)));
    }
    out
}

/// Calls `f` for every comparison of an attribute with literal strings.
fn walk(c: &Cond, f: &mut dyn FnMut(Attr, CmpOp, &[String])) {
    match c {
        Cond::Or(v) | Cond::And(v) => v.iter().for_each(|c| walk(c, f)),
        Cond::Not(inner) => walk(inner, f),
        Cond::Cmp(a, op, b) => match (&**a, &**b) {
            (Val::Attr(attr), Val::Str(s)) | (Val::Str(s), Val::Attr(attr)) => {
                f(*attr, *op, std::slice::from_ref(s))
            }
            (Val::Attr(attr), Val::List(l)) => f(*attr, *op, l),
            _ => {}
        },
        Cond::Matches(..) | Cond::Truthy(_) | Cond::Script(_) => {}
    }
}

fn judge(
    rule: &CompiledRule,
    roles: &BTreeSet<String>,
    attr: Attr,
    op: CmpOp,
    values: &[String],
) -> Vec<Finding> {
    if !matches!(op, CmpOp::Eq | CmpOp::Ne | CmpOp::In) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for v in values {
        match attr {
            Attr::PathExt if v.starts_with('.') => out.push(Finding::new(
                "W0302",
                format!("`path.ext` is never {v:?}: extensions are given without the dot"),
                format!("write {:?}", v.trim_start_matches('.')),
            )),
            Attr::PathOp => {
                let ops = domain_ops(rule.domain);
                match ops.iter().position(|o| o == v) {
                    None => out.push(Finding::new(
                        "W0302",
                        format!("`path.op` is never {v:?}"),
                        format!("use one of: {}", ops.join(", ")),
                    )),
                    Some(i) if rule.ops != ALL_OPS && rule.ops & (1 << i) == 0 => {
                        out.push(Finding::new(
                            "W0302",
                            format!(
                                "`path.op` is never {v:?} here: the rule's head covers only {}",
                                head_ops(rule.ops, ops)
                            ),
                            format!("add `{v}` to the rule's operations, or drop the comparison"),
                        ))
                    }
                    Some(_) => {}
                }
            }
            // Only a near miss of a known role: a role with no block of its own can be
            // meaningful (`when role != "maintainer"` exempts one), a misspelt one cannot.
            Attr::Role if !v.is_empty() && !roles.contains(v) => {
                if let Some(s) = did_you_mean(v, roles.iter().map(String::as_str)) {
                    out.push(Finding::new(
                        "W0302",
                        format!("no `role` block or test uses the role {v:?}"),
                        format!("did you mean {s:?}?"),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

fn head_ops(mask: u8, ops: &[&str]) -> String {
    ops.iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, o)| *o)
        .collect::<Vec<_>>()
        .join(", ")
}

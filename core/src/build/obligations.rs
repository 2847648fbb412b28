//! `with name { key: value, … }` obligations: only on allow/ask rules, only the names and
//! keys the schema has for the domain, each key once.

use super::context::Ctx;
use crate::ir::ObligationIr;
use crate::request::Domain;
use crate::schema;
use contextos_grammar::ast::{self, Effect};
use contextos_grammar::{did_you_mean, Diagnostic};
use std::collections::BTreeSet;

pub(super) fn check_obligation(
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

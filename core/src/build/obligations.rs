//! `with name { key: value, … }` obligations: only on allow/ask rules, only the names and
//! keys the schema has for the domain, each key once.
//!
//! `with host {}` is the one obligation the schema does not list, because it depends on
//! who wrote the rule: it sends an exec the hook would otherwise route into the sandbox to
//! the host, so only the project's own policies may use it. A plugin pack (or the stdlib)
//! that could would take commands out of the sandbox for every project that installs it.

use super::context::Ctx;
use crate::ir::{Layer, ObligationIr, HOST_OBLIGATION};
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
    if o.name.node == HOST_OBLIGATION {
        return check_host(ctx, fi, domain, o);
    }
    let Some(keys) = schema::obligation_keys(domain, &o.name.node) else {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0113",
                o.name.span,
                format!("unknown obligation `{}` for `{domain}` rules", o.name.node),
            )
            .with_help("exec rules accept `with sandbox { … }` and `with host {}`"),
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

/// `with host {}`: exec rules of the project's own policies only, without keys.
fn check_host(
    ctx: &mut Ctx,
    fi: usize,
    domain: Domain,
    o: &ast::Obligation,
) -> Option<ObligationIr> {
    if domain != Domain::Exec {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0113",
                o.name.span,
                format!("`with host` is for `exec` rules, not `{domain}` rules"),
            ),
        );
        return None;
    }
    if ctx.layers.get(fi) != Some(&Layer::User) {
        let who = match ctx.layers.get(fi) {
            Some(Layer::Plugin) => "a plugin pack",
            _ => "the standard library",
        };
        ctx.err(
            fi,
            Diagnostic::error(
                "E0113",
                o.span,
                format!("{who} may not send commands to the host (`with host`)"),
            )
            .with_label("only the project's own policies may use `with host`")
            .with_help(
                "`with host` takes a command out of the sandbox; write the rule in the \
                 project's own policies (.contextos/policies/) if this project wants it",
            ),
        );
        return None;
    }
    if let Some((k, _)) = o.entries.first() {
        ctx.err(
            fi,
            Diagnostic::error("E0113", k.span, "`with host` takes no keys")
                .with_help("write `with host {}`"),
        );
        return None;
    }
    Some(ObligationIr {
        name: HOST_OBLIGATION.into(),
        entries: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use crate::build::{build, BuildOptions, PolicySource};
    use crate::ir::Layer;

    fn errors(text: &str, layer: Layer) -> Vec<String> {
        let out = build(
            &[PolicySource {
                name: "x.policy".into(),
                text: text.to_string().into(),
                layer,
            }],
            &BuildOptions::default(),
        );
        out.diagnostics
            .iter()
            .filter(|d| d.diagnostic.is_error())
            .map(|d| out.render(d))
            .collect()
    }

    const HOST: &str =
        "language 1;\n@id(\"gc\") allow exec \"git commit *\" with host {} because \"x\";\n";

    #[test]
    fn only_project_policies_may_send_commands_to_the_host() {
        assert!(errors(HOST, Layer::User).is_empty());
        for (layer, who) in [
            (Layer::Plugin, "a plugin pack"),
            (Layer::Stdlib, "the standard library"),
        ] {
            let e = errors(HOST, layer);
            assert_eq!(e.len(), 1, "{e:?}");
            assert!(e[0].contains("E0113") && e[0].contains(who), "{}", e[0]);
            assert!(e[0].contains("x.policy:2:"), "located: {}", e[0]);
        }
    }

    #[test]
    fn host_is_for_exec_allow_and_ask_without_keys() {
        let bad = [
            "language 1;\nallow path write \"x\" with host {} because \"x\";\n",
            "language 1;\nallow exec \"x\" with host { a: 1 } because \"x\";\n",
            "language 1;\ndeny exec \"x\" with host {} because \"x\";\n",
        ];
        for text in bad {
            assert_eq!(errors(text, Layer::User).len(), 1, "{text}");
        }
        let ask = "language 1;\nask exec \"x\" with host {} because \"x\";\n";
        assert!(errors(ask, Layer::User).is_empty());
    }
}

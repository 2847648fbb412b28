//! Guides: advisory text for agents, scoped by globs, with `@id` and `@apply`.

use super::context::Ctx;
use crate::policy::{CompiledGuide, GuideApply};
use contextos_grammar::ast::{self, ListItem, Pattern};
use contextos_grammar::Diagnostic;

pub(super) fn compile_guide(
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
            "apply" => match GuideApply::parse(&a.value.node) {
                Some(v) => apply = Some(v),
                None => ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0107",
                        a.value.span,
                        format!("`@apply` takes one of {}", GuideApply::NAMES.join(", ")),
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
            if let Err(e) = ctx.check_glob(fi, &v) {
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
    let apply = apply.unwrap_or_else(|| GuideApply::derived(!scope.is_empty(), role.is_some()));
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

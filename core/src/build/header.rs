//! Pass 1: each file's `language` header, the domain defaults and the `let` definitions.
//! A later layer overrides an earlier one; a plugin pack may do neither.

use super::context::{check_domain, plugin_may_not, Ctx, LetDef, Override};
use super::output::NO_FILE;
use crate::ir::Layer;
use crate::request::Domain;
use contextos_grammar::ast::{self, Effect, Span, Statement};
use contextos_grammar::Diagnostic;
use std::collections::BTreeMap;

/// The language versions this build understands.
pub const LANGUAGE_VERSION: u32 = 1;

/// Each domain's declared default: its effect, and the layer, file and span declaring it.
pub(super) type Defaults = BTreeMap<Domain, (Effect, Layer, usize, Span)>;

/// Checks the headers and collects the defaults and the `let` table into `defaults` and
/// `ctx`. `parsed` are the files from index `first` on: the ones before were declared
/// already (a [precompiled](super::precompiled) standard library).
pub(super) fn declare(
    ctx: &mut Ctx,
    defaults: &mut Defaults,
    first: usize,
    parsed: &[ast::PolicyFile],
) {
    for (fi, file) in (first..).zip(parsed) {
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
                    let Some(domain) = check_domain(ctx, fi, &d.domain) else {
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
                Statement::Let(l) => declare_let(ctx, fi, layer, l),
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
}

/// Enters one `let` in the table. A `let` naming an earlier layer's variable must say
/// `override let`: a silent replacement could switch off a protection list (the stdlib's
/// `$governance`) without anyone noticing. An override is recorded for
/// [`super::overrides`], which warns when it weakens a rule.
fn declare_let(ctx: &mut Ctx, fi: usize, layer: Layer, l: &ast::LetDecl) {
    let name = &l.name.node;
    ctx.decode_let(name);
    if layer == Layer::Plugin && (ctx.lets.contains_key(name) || l.overrides) {
        ctx.err(
            fi,
            plugin_may_not(
                l.name.span,
                &format!("redefine `${name}`, which an earlier layer defines"),
            ),
        );
        return;
    }
    let prev = ctx.lets.get(name).cloned();
    match &prev {
        Some(prev) if ctx.layers[prev.file] == layer => {
            let at = ctx.origin(prev.file, prev.span);
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0104",
                    l.name.span,
                    format!("`{name}` is already defined at {at}"),
                )
                .with_label("defined twice"),
            );
            return;
        }
        Some(prev) if !l.overrides => {
            let at = ctx.origin(prev.file, prev.span);
            let whose = layer_name(ctx.layers[prev.file]);
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0140",
                    l.name.span,
                    format!("`{name}` is already defined by the {whose} at {at}"),
                )
                .with_label("would silently replace it")
                .with_help(format!(
                    "write `override let {name} = …;` to replace it on purpose, or pick another name"
                )),
            );
            return;
        }
        None if l.overrides => {
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0141",
                    l.name.span,
                    format!("`override let {name}` overrides nothing: no earlier layer defines `${name}`"),
                )
                .with_help(format!("write `let {name} = …;`")),
            );
            return;
        }
        _ => {}
    }
    ctx.lets.insert(
        name.clone(),
        LetDef {
            items: l.value.node.clone().into(),
            scalar: l.scalar,
            file: fi,
            span: l.span,
        },
    );
    if let Some(old) = prev {
        ctx.overrides.push(Override {
            name: name.clone(),
            old,
            file: fi,
            span: l.name.span,
        });
    }
}

/// How a layer is called in diagnostics.
fn layer_name(layer: Layer) -> &'static str {
    match layer {
        Layer::Stdlib => "standard library",
        Layer::Plugin => "plugin pack",
        Layer::User => "project",
    }
}

/// The effect of every domain; one without a declared default denies, with a warning when
/// there are policy files at all.
pub(super) fn default_effects(
    ctx: &mut Ctx,
    defaults: &Defaults,
    any_file: bool,
) -> [Effect; Domain::COUNT] {
    let mut default_effects = [Effect::Deny; Domain::COUNT];
    for d in Domain::ALL {
        match defaults.get(&d) {
            Some((e, ..)) => default_effects[d.index()] = *e,
            None if any_file => ctx.err(
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
    default_effects
}

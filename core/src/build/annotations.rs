//! `@id` and `@severity` on rules and detectors, `@accept` on rules: one reading of the
//! annotations, so a duplicate, an invalid id or an unknown annotation is reported the
//! same way on both. What a severity may be differs (rules: error, warning, info;
//! detectors: error, warning), so each caller judges its own.

use super::context::{valid_id, Ctx};
use contextos_grammar::ast::{Annotation, Spanned};
use contextos_grammar::{did_you_mean, Diagnostic};

/// What `@accept(…)` may name: `widening`, a verdict this rule makes weaker than before on
/// purpose, which `contextos gate --no-widening` then lets through.
pub(crate) const ACCEPTABLE: &[&str] = &["widening"];

/// Reads `annotations` of a `what` ("rule", "detector") in file `fi`, in order: each
/// error is reported where it stands, `severity` is called for each `@severity` value,
/// `@accept` values go to `accepts` (rules only: `None` makes `@accept` unknown), and the
/// position of the `@id` given (valid or not, so later checks still see it) is returned:
/// a caller that owns the annotations moves the id out instead of copying it.
pub(super) fn read(
    ctx: &mut Ctx,
    fi: usize,
    annotations: &[Annotation],
    what: &str,
    mut severity: impl FnMut(&mut Ctx, &Spanned<String>),
    mut accepts: Option<&mut Vec<String>>,
) -> Option<usize> {
    let known: &[&str] = if accepts.is_some() {
        &["id", "severity", "accept"]
    } else {
        &["id", "severity"]
    };
    let mut id = None;
    for (i, a) in annotations.iter().enumerate() {
        // A rule has one to three annotations: looking back beats a set's allocations,
        // which every rule of a cold build paid.
        if annotations[..i].iter().any(|b| b.name.node == a.name.node) {
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
                            format!("{what} ids use letters, digits and `-_.:/`"),
                        )
                        .with_label("invalid id"),
                    );
                }
                id = Some(i);
            }
            "severity" => severity(ctx, &a.value),
            "accept" if accepts.is_some() => {
                if ACCEPTABLE.contains(&a.value.node.as_str()) {
                    if let Some(acc) = accepts.as_deref_mut() {
                        acc.push(a.value.node.clone());
                    }
                } else {
                    let mut d = Diagnostic::error(
                        "E0107",
                        a.value.span,
                        format!(
                            "`@accept({:?})` accepts nothing ContextOS knows",
                            a.value.node
                        ),
                    )
                    .with_label("expected \"widening\"");
                    if let Some(s) = did_you_mean(&a.value.node, ACCEPTABLE.iter().copied()) {
                        d = d.with_help(format!("did you mean `@accept(\"{s}\")`?"));
                    }
                    ctx.err(fi, d);
                }
            }
            other => {
                let mut d = Diagnostic::error(
                    "E0107",
                    a.name.span,
                    format!("unknown annotation `@{other}`"),
                )
                .with_label(if known.len() > 2 {
                    "expected @id, @severity or @accept"
                } else {
                    "expected @id or @severity"
                });
                if let Some(s) = did_you_mean(other, known.iter().copied()) {
                    d = d.with_help(format!("did you mean `@{s}`?"));
                }
                ctx.err(fi, d);
            }
        }
    }
    id
}

//! `@id` and `@severity` on rules and detectors: one reading of the annotations, so a
//! duplicate, an invalid id or an unknown annotation is reported the same way on both.
//! What a severity may be differs (rules: error, warning, info; detectors: error,
//! warning), so each caller judges its own.

use super::context::{valid_id, Ctx};
use contextos_grammar::ast::{Annotation, Spanned};
use contextos_grammar::{did_you_mean, Diagnostic};
use std::collections::BTreeSet;

/// Reads `annotations` of a `what` ("rule", "detector") in file `fi`, in order: each
/// error is reported where it stands, `severity` is called for each `@severity` value,
/// and the `@id` given (valid or not, so later checks still see it) is returned.
pub(super) fn read(
    ctx: &mut Ctx,
    fi: usize,
    annotations: &[Annotation],
    what: &str,
    mut severity: impl FnMut(&mut Ctx, &Spanned<String>),
) -> Option<String> {
    let mut id = None;
    let mut seen = BTreeSet::new();
    for a in annotations {
        if !seen.insert(a.name.node.clone()) {
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
                id = Some(a.value.node.clone());
            }
            "severity" => severity(ctx, &a.value),
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
    id
}

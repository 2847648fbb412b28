//! Conditions: names resolve against the request schema, operands and method calls are
//! type-checked, and the expression is lowered to a [`Cond`].

use super::context::Ctx;
use crate::glob::PathGlobs;
use crate::ir::{Cond, Val};
use crate::request::Domain;
use crate::schema::{self, Attr, Method, Ty};
use contextos_grammar::ast::{self, Span, Spanned};
use contextos_grammar::{did_you_mean, Diagnostic};

pub(super) fn check_expr(ctx: &mut Ctx, fi: usize, domain: Domain, e: &ast::Expr) -> Option<Cond> {
    match e {
        ast::Expr::Or(items, _) => {
            let parts: Vec<Option<Cond>> = items
                .iter()
                .map(|i| check_expr(ctx, fi, domain, i))
                .collect();
            Some(Cond::Or(parts.into_iter().collect::<Option<_>>()?))
        }
        ast::Expr::And(items, _) => {
            let parts: Vec<Option<Cond>> = items
                .iter()
                .map(|i| check_expr(ctx, fi, domain, i))
                .collect();
            Some(Cond::And(parts.into_iter().collect::<Option<_>>()?))
        }
        ast::Expr::Not(inner, _) => Some(Cond::Not(Box::new(check_expr(ctx, fi, domain, inner)?))),
        ast::Expr::Paren(inner, _) => check_expr(ctx, fi, domain, inner),
        ast::Expr::Truthy(o) => {
            let (v, ty) = check_operand(ctx, fi, domain, o)?;
            if ty != Ty::Bool {
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0110",
                        o.span(),
                        format!("a condition must be a boolean, this is a {}", ty.name()),
                    )
                    .with_help("compare it, e.g. `role == \"maintainer\"`"),
                );
                return None;
            }
            Some(Cond::Truthy(v))
        }
        ast::Expr::Script(body) => match ctx.scripts.compile(domain, &body.node) {
            Ok(i) => {
                if let Some(ty) = ctx.scripts.non_boolean_result(i).filter(|_| !ctx.lazy) {
                    ctx.err(
                        fi,
                        Diagnostic::warning(
                            "W0305",
                            body.span,
                            format!(
                                "this script returns {ty}, not a boolean: every evaluation fails and counts as the stricter outcome"
                            ),
                        )
                        .with_help("end the script with a comparison, e.g. `argv.len() > 64`"),
                    );
                }
                Some(Cond::Script(i))
            }
            Err(err) => {
                let at = body.span.start + err.offset.unwrap_or(0);
                let vars: Vec<&str> = schema::script_vars(domain)
                    .iter()
                    .map(|(n, _)| *n)
                    .collect();
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0114",
                        Span::new(at, at + 1),
                        format!("script error: {}", err.message),
                    )
                    .with_label("here")
                    .with_help(format!("`{domain}` scripts see: {}", vars.join(", "))),
                );
                None
            }
        },
        ast::Expr::Compare { lhs, op, rhs, .. } => {
            let l = check_operand(ctx, fi, domain, lhs);
            if op.node == ast::CmpOp::Matches {
                let (lv, lt) = l?;
                if !matches!(lt, Ty::Str | Ty::List) {
                    ctx.err(
                        fi,
                        type_err(
                            lhs.span(),
                            "`matches` needs a string or a list on the left",
                            lt,
                        ),
                    );
                    return None;
                }
                let globs = match rhs {
                    ast::Operand::Str(s) => vec![s.node.clone()],
                    ast::Operand::List(l) => ctx.expand(fi, &l.node, &mut Vec::new())?,
                    ast::Operand::Var(v) => ctx.var(fi, v, &mut Vec::new())?.0,
                    other => {
                        ctx.err(
                            fi,
                            Diagnostic::error(
                                "E0110",
                                other.span(),
                                "`matches` takes literal glob patterns",
                            )
                            .with_help("write a string, a list or a `$variable`"),
                        );
                        return None;
                    }
                };
                let made = if ctx.trusted(fi) {
                    Ok(PathGlobs::unchecked(globs.iter().map(String::as_str)))
                } else {
                    PathGlobs::new(globs.iter().map(String::as_str))
                };
                return match made {
                    Ok(g) => Some(Cond::Matches(Box::new(lv), Box::new(g))),
                    Err((p, msg)) => {
                        ctx.err(
                            fi,
                            Diagnostic::error(
                                "E0112",
                                rhs.span(),
                                format!("invalid glob `{p}`: {msg}"),
                            ),
                        );
                        None
                    }
                };
            }
            let r = check_operand(ctx, fi, domain, rhs);
            let ((lv, lt), (rv, rt)) = (l?, r?);
            use ast::CmpOp::*;
            let ok = match op.node {
                Eq | Ne => lt == rt && lt != Ty::List,
                Lt | Le | Gt | Ge => lt == Ty::Int && rt == Ty::Int,
                In => lt == Ty::Str && rt == Ty::List,
                Contains => matches!(lt, Ty::List | Ty::Str) && rt == Ty::Str,
                Matches => false,
            };
            if !ok {
                let want = match op.node {
                    Eq | Ne => "both sides of the same type (string, integer or boolean)",
                    Lt | Le | Gt | Ge => "integers on both sides",
                    In => "a string on the left and a list on the right",
                    Contains => "a list or string on the left and a string on the right",
                    Matches => "",
                };
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0110",
                        op.span,
                        format!("type mismatch: `{}` needs {want}", op.node.as_str()),
                    )
                    .with_label(format!(
                        "{} {} {}",
                        lt.name(),
                        op.node.as_str(),
                        rt.name()
                    )),
                );
                return None;
            }
            Some(Cond::Cmp(Box::new(lv), op.node, Box::new(rv)))
        }
    }
}

fn type_err(span: Span, msg: &str, got: Ty) -> Diagnostic {
    Diagnostic::error("E0110", span, format!("type mismatch: {msg}"))
        .with_label(format!("this is a {}", got.name()))
}

fn check_attr(
    ctx: &mut Ctx,
    fi: usize,
    domain: Domain,
    path: &Spanned<Vec<String>>,
) -> Option<(Attr, Ty)> {
    let dotted = path.node.join(".");
    let Some(info) = schema::lookup_attr(&dotted) else {
        let mut d = Diagnostic::error("E0108", path.span, format!("unknown attribute `{dotted}`"))
            .with_label("not in the request schema");
        let candidates: Vec<&str> = schema::ATTRS
            .iter()
            .filter(|a| a.domain.is_none() || a.domain == Some(domain))
            .flat_map(|a| a.names.iter().copied())
            .collect();
        if let Some(s) = did_you_mean(&dotted, candidates.iter().copied()) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else {
            d = d.with_help(format!(
                "`{domain}` requests have: {}",
                candidates.join(", ")
            ));
        }
        ctx.err(fi, d);
        return None;
    };
    if let Some(d) = info.domain {
        if d != domain {
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0109",
                    path.span,
                    format!("`{dotted}` belongs to `{d}` requests, not `{domain}`"),
                )
                .with_label("not available here"),
            );
            return None;
        }
    }
    Some((info.attr, info.ty))
}

fn check_operand(ctx: &mut Ctx, fi: usize, domain: Domain, o: &ast::Operand) -> Option<(Val, Ty)> {
    match o {
        ast::Operand::Str(s) => Some((Val::Str(s.node.clone()), Ty::Str)),
        ast::Operand::Int(i) => Some((Val::Int(i.node), Ty::Int)),
        ast::Operand::Bool(b) => Some((Val::Bool(b.node), Ty::Bool)),
        ast::Operand::List(l) => Some((
            Val::List(ctx.expand(fi, &l.node, &mut Vec::new())?),
            Ty::List,
        )),
        ast::Operand::Var(v) => {
            let (vals, scalar) = ctx.var(fi, v, &mut Vec::new())?;
            match (scalar, vals.as_slice()) {
                (true, [one]) => Some((Val::Str(one.clone()), Ty::Str)),
                _ => Some((Val::List(vals), Ty::List)),
            }
        }
        ast::Operand::Attr(path) => {
            let (a, ty) = check_attr(ctx, fi, domain, path)?;
            Some((Val::Attr(a), ty))
        }
        ast::Operand::Call { target, args, span } => {
            let dotted = target.node.join(".");
            if dotted == "plugin.signed_by" {
                if domain != Domain::Plugin {
                    ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0109",
                            target.span,
                            format!("`plugin.signed_by` is not available in `{domain}` rules"),
                        ),
                    );
                    return None;
                }
                let args = check_args(ctx, fi, domain, args, *span, &[Ty::Str])?;
                return Some((
                    Val::Call(
                        Method::SignedBy,
                        Box::new(Val::Attr(Attr::PluginSigner)),
                        args,
                    ),
                    Ty::Bool,
                ));
            }
            let (method_name, receiver) = target.node.split_last()?;
            let Some(method) = schema::METHODS
                .iter()
                .find(|(n, _)| n == method_name)
                .map(|(_, m)| *m)
            else {
                let mut d = Diagnostic::error(
                    "E0111",
                    target.span,
                    format!("unknown method `{method_name}`"),
                );
                if let Some(s) = did_you_mean(method_name, schema::METHODS.iter().map(|(n, _)| *n))
                {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                ctx.err(fi, d);
                return None;
            };
            if receiver.is_empty() {
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0111",
                        target.span,
                        format!("`{method_name}` must be called on an attribute"),
                    ),
                );
                return None;
            }
            let recv_span = Span::new(
                target.span.start,
                target.span.start + receiver.join(".").len(),
            );
            let (attr, rty) =
                check_attr(ctx, fi, domain, &Spanned::new(receiver.to_vec(), recv_span))?;
            let (params, ret, ok): (&[Ty], Ty, bool) = match method {
                Method::Len => (&[], Ty::Int, matches!(rty, Ty::Str | Ty::List)),
                Method::StartsWith | Method::EndsWith => (&[Ty::Str], Ty::Bool, rty == Ty::Str),
                Method::Contains => (&[Ty::Str], Ty::Bool, matches!(rty, Ty::Str | Ty::List)),
                Method::SignedBy => (&[Ty::Str], Ty::Bool, false),
            };
            if !ok {
                ctx.err(
                    fi,
                    type_err(
                        recv_span,
                        &format!("`{method_name}` cannot be called on this attribute"),
                        rty,
                    ),
                );
                return None;
            }
            let args = check_args(ctx, fi, domain, args, *span, params)?;
            Some((Val::Call(method, Box::new(Val::Attr(attr)), args), ret))
        }
    }
}

fn check_args(
    ctx: &mut Ctx,
    fi: usize,
    domain: Domain,
    args: &[ast::Operand],
    span: Span,
    params: &[Ty],
) -> Option<Vec<Val>> {
    if args.len() != params.len() {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0111",
                span,
                format!(
                    "expected {} argument(s), found {}",
                    params.len(),
                    args.len()
                ),
            ),
        );
        return None;
    }
    let mut out = Vec::new();
    for (a, want) in args.iter().zip(params) {
        let (v, ty) = check_operand(ctx, fi, domain, a)?;
        if ty != *want {
            ctx.err(
                fi,
                type_err(a.span(), &format!("expected a {}", want.name()), ty),
            );
            return None;
        }
        out.push(v);
    }
    Some(out)
}

//! The policies' own `test` blocks: each case becomes a request (or a shell line) with the
//! verdict and rule ids it expects; ids and roles are checked against the set.

use super::context::Ctx;
use crate::policy::{CompiledCase, CompiledTest, TestSubject};
use crate::request::{CommitRequest, PathOp, PluginRequest, Request, RequestKind};
use contextos_grammar::ast::{self, Spanned};
use contextos_grammar::{did_you_mean, Diagnostic};
use std::collections::BTreeSet;

fn field_str(ctx: &mut Ctx, fi: usize, v: &Spanned<ast::Value>) -> Option<String> {
    match &v.node {
        ast::Value::Str(s) => Some(s.clone()),
        _ => {
            ctx.err(fi, Diagnostic::error("E0117", v.span, "expected a string"));
            None
        }
    }
}

pub(super) fn compile_test(
    ctx: &mut Ctx,
    fi: usize,
    t: &ast::TestBlock,
    ids: &BTreeSet<String>,
    roles: &BTreeSet<String>,
) -> Option<CompiledTest> {
    let mut cases = Vec::new();
    let mut ok = true;
    for c in &t.cases {
        let subject = match &c.request {
            ast::TestRequest::Path { op, path } => match PathOp::parse(&op.node) {
                Some(o) => Some(TestSubject::Request(Box::new(Request::path(
                    o,
                    path.node.clone(),
                )))),
                None => {
                    ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0102",
                            op.span,
                            format!("unknown path operation `{}`", op.node),
                        )
                        .with_help("use read, write or delete"),
                    );
                    None
                }
            },
            ast::TestRequest::ExecShell(line) => Some(TestSubject::Shell(line.node.clone())),
            ast::TestRequest::ExecArgv(argv) => ctx
                .expand(fi, &argv.node, &mut Vec::new())
                .map(|a| TestSubject::Request(Box::new(Request::exec(a)))),
            ast::TestRequest::Plugin { name, fields } => {
                let mut p = PluginRequest {
                    name: name.node.clone(),
                    ..PluginRequest::default()
                };
                let mut good = true;
                for (k, v) in fields {
                    if let ("findings", ast::Value::List(items)) = (k.node.as_str(), &v.node) {
                        p.findings = ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default();
                        continue;
                    }
                    let val = field_str(ctx, fi, v);
                    match (k.node.as_str(), val) {
                        ("source", Some(s)) => p.source = s,
                        ("version", Some(s)) => p.version = s,
                        ("digest", Some(s)) => p.digest = s,
                        ("signer", Some(s)) => p.signer = Some(s),
                        (other, Some(_)) => {
                            ctx.err(
                                fi,
                                Diagnostic::error(
                                    "E0117",
                                    k.span,
                                    format!("unknown plugin field `{other}`"),
                                )
                                .with_help("use source, version, digest, signer or findings"),
                            );
                            good = false;
                        }
                        (_, None) => good = false,
                    }
                }
                good.then(|| TestSubject::Request(Box::new(Request::new(RequestKind::Plugin(p)))))
            }
            ast::TestRequest::Net { op, target, fields } => {
                super::test_requests::net(ctx, fi, op, target, fields)
                    .map(|r| TestSubject::Request(Box::new(r)))
            }
            ast::TestRequest::Mcp { name, fields } => {
                super::test_requests::mcp(ctx, fi, name, fields)
                    .map(|r| TestSubject::Request(Box::new(r)))
            }
            ast::TestRequest::Commit { files, fields } => {
                let files = ctx.expand(fi, &files.node, &mut Vec::new());
                let mut req = CommitRequest {
                    files: files.unwrap_or_default(),
                    ..CommitRequest::default()
                };
                let mut good = true;
                for (k, v) in fields {
                    match (k.node.as_str(), &v.node) {
                        ("message", ast::Value::Str(s)) => req.message = s.clone(),
                        ("kind", ast::Value::Str(s)) => req.kind = s.clone(),
                        ("severity", ast::Value::Str(s)) => req.severity = s.clone(),
                        ("host_unsafe", ast::Value::Bool(b)) => req.host_unsafe = *b,
                        ("auto_merge", ast::Value::Bool(b)) => req.auto_merge = *b,
                        ("findings", ast::Value::List(items)) => {
                            req.findings =
                                ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default()
                        }
                        (other, _) => {
                            ctx.err(
                                fi,
                                Diagnostic::error(
                                    "E0117",
                                    k.span,
                                    format!("unexpected commit field `{other}`"),
                                )
                                .with_help(
                                    "use message: \"…\", findings: [\"rule-id\", …], kind: \"secret\", severity: \"error\", host_unsafe: true or auto_merge: true",
                                ),
                            );
                            good = false;
                        }
                    }
                }
                good.then(|| TestSubject::Request(Box::new(Request::new(RequestKind::Commit(req)))))
            }
        };
        for r in &c.expect_rules {
            if !ids.contains(&r.node) {
                let mut d =
                    Diagnostic::error("E0117", r.span, format!("no rule has the id `{}`", r.node));
                if let Some(s) = did_you_mean(&r.node, ids.iter().map(String::as_str)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                ctx.err(fi, d);
                ok = false;
            }
        }
        if let Some(role) = &c.role {
            if !roles.contains(&role.node) && !role.node.is_empty() {
                ctx.err(
                    fi,
                    Diagnostic::warning(
                        "W0206",
                        role.span,
                        format!(
                            "no `role {}` block exists; only rules outside roles apply",
                            role.node
                        ),
                    ),
                );
            }
        }
        match subject {
            Some(subject) => cases.push(CompiledCase {
                subject,
                role: c.role.as_ref().map(|r| r.node.clone()),
                tainted: c.tainted.is_some(),
                expect: c.expect.node,
                expect_rules: c.expect_rules.iter().map(|r| r.node.clone()).collect(),
                text: ctx.text(fi, c.span),
                origin: ctx.origin(fi, c.span),
            }),
            None => ok = false,
        }
    }
    ok.then(|| CompiledTest {
        name: t.name.node.clone(),
        layer: ctx.layers[fi],
        origin: ctx.origin(fi, t.span),
        cases,
    })
}

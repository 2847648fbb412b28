//! `net` and `mcp` requests in `test` blocks: their fields, checked like a plugin's.

use super::context::Ctx;
use crate::request::{McpRequest, NetOp, NetRequest, Request, RequestKind};
use contextos_grammar::ast::{self, Spanned};
use contextos_grammar::Diagnostic;

type Fields = [(Spanned<String>, Spanned<ast::Value>)];

fn unknown_field(ctx: &mut Ctx, fi: usize, k: &Spanned<String>, what: &str, help: &str) {
    ctx.err(
        fi,
        Diagnostic::error(
            "E0117",
            k.span,
            format!("unknown {what} field `{}`", k.node),
        )
        .with_help(help.to_string()),
    );
}

/// `net OP "TARGET" { tool: "curl", method: "POST", carries: [...], sends: [...] }`.
pub(super) fn net(
    ctx: &mut Ctx,
    fi: usize,
    op: &Spanned<String>,
    target: &Spanned<String>,
    fields: &Fields,
) -> Option<Request> {
    let Some(op_v) = NetOp::parse(&op.node) else {
        ctx.err(
            fi,
            Diagnostic::error(
                "E0102",
                op.span,
                format!("unknown net operation `{}`", op.node),
            )
            .with_help("use fetch or connect"),
        );
        return None;
    };
    let mut req = NetRequest {
        op: op_v,
        target: target.node.clone(),
        ..NetRequest::default()
    };
    let mut good = true;
    for (k, v) in fields {
        match (k.node.as_str(), &v.node) {
            ("tool", ast::Value::Str(s)) => req.tool = s.clone(),
            ("method", ast::Value::Str(s)) => req.method = s.clone(),
            ("carries", ast::Value::List(items)) => {
                req.carries = ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default()
            }
            ("sends", ast::Value::List(items)) => {
                req.sends = ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default()
            }
            _ => {
                unknown_field(
                    ctx,
                    fi,
                    k,
                    "net",
                    "use tool: \"curl\", method: \"POST\", carries: [\"secret:ID\", \"file:PATH\"] or sends: [\"PATH\"]",
                );
                good = false;
            }
        }
    }
    good.then(|| Request::new(RequestKind::Net(req)))
}

/// `mcp "SERVER/TOOL" { args: "{…}", carries: [...], listed: true, trusted: true,
/// definition: "changed" }`.
pub(super) fn mcp(
    ctx: &mut Ctx,
    fi: usize,
    name: &Spanned<String>,
    fields: &Fields,
) -> Option<Request> {
    let Some((server, tool)) = name.node.split_once('/') else {
        ctx.err(
            fi,
            Diagnostic::error("E0117", name.span, format!("`{}` names no tool", name.node))
                .with_help("write the call as \"SERVER/TOOL\", e.g. \"github/create_issue\""),
        );
        return None;
    };
    let mut req = McpRequest {
        server: server.to_string(),
        tool: tool.to_string(),
        ..McpRequest::default()
    };
    let mut good = true;
    for (k, v) in fields {
        match (k.node.as_str(), &v.node) {
            ("args", ast::Value::Str(s)) => req.args = s.clone(),
            ("definition", ast::Value::Str(s)) => req.definition = s.clone(),
            ("listed", ast::Value::Bool(b)) => req.listed = *b,
            ("trusted", ast::Value::Bool(b)) => req.trusted = *b,
            ("carries", ast::Value::List(items)) => {
                req.carries = ctx.expand(fi, items, &mut Vec::new()).unwrap_or_default()
            }
            _ => {
                unknown_field(
                    ctx,
                    fi,
                    k,
                    "mcp",
                    "use args: \"{…}\", carries: [\"secret:ID\"], listed: true, trusted: true or definition: \"pinned\"",
                );
                good = false;
            }
        }
    }
    good.then(|| Request::new(RequestKind::Mcp(req)))
}

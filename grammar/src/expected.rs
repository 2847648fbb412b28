//! The E0001 syntax error: where parsing went furthest and what it expected there.

use crate::ast::Span;
use crate::attempts::{Attempts, Production as R};
use crate::diagnostic::Diagnostic;

/// The diagnostic for a failed parse.
pub(crate) fn syntax_error(attempts: &Attempts) -> Diagnostic {
    let mut expected: Vec<&str> = attempts.rules.iter().map(|r| rule_name(*r)).collect();
    expected.sort_unstable();
    expected.dedup();
    let text = if expected.is_empty() {
        "unexpected input".to_string()
    } else {
        format!("expected {}", join_alternatives(&expected))
    };
    let at = attempts.pos;
    Diagnostic::error("E0001", Span::new(at, at), format!("syntax error: {text}")).with_label(text)
}

fn join_alternatives(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// User-facing names of grammar rules, used in "expected …" messages.
fn rule_name(r: R) -> &'static str {
    match r {
        R::Eoi => "end of file",
        R::LanguageDecl => "`language N;`",
        R::DefaultDecl => "`default DOMAIN = EFFECT;`",
        R::LetDecl => "`let NAME = [...];`",
        R::Annotated | R::Rule => "a rule (`allow`, `ask` or `deny`)",
        R::Annotation => "an annotation (`@id(\"…\")`)",
        R::RoleBlock => "`role NAME { … }`",
        R::TestBlock => "`test \"name\" { … }`",
        R::Guide => "`guide \"title\" { … }`",
        R::Detector => "`detector KIND \"…\" { … }`",
        R::DetectorBody => "`{ key: value, … }`",
        R::Effect => "`allow`, `ask` or `deny`",
        R::Ident | R::Name => "an identifier",
        R::String | R::PlainStr | R::TripleStr => "a string",
        R::Int => "an integer",
        R::VarRef => "a `$variable`",
        R::ListLit => "a list `[…]`",
        R::Ops => "operations",
        R::Patterns => "patterns",
        R::WhenClause => "`when`",
        R::UnlessClause => "`unless`",
        R::BecauseClause => "`because`",
        R::WithClause => "`with`",
        R::Obligation => "`key: value`",
        R::GuideFor => "`for`",
        R::Expr | R::AndExpr | R::Unary | R::Comparison | R::Paren => "a condition",
        R::OrOp => "`or`",
        R::AndOp => "`and`",
        R::NotOp => "`not`",
        R::CmpOp => "a comparison (`==`, `!=`, `in`, `matches`, `contains`, …)",
        R::Access | R::Call => "an attribute",
        R::Boolean => "`true` or `false`",
        R::ScriptBlock => "`script { … }`",
        R::TestCase | R::Request => {
            "a test case (`path OP \"…\"`, `exec …`, `plugin …`, `commit […]`, `net OP …`, `mcp …`)"
        }
        R::AsRole => "`as role \"…\"`",
        R::Expectation => "an expected verdict",
        R::RuleRef => "a rule id",
        // pest's bookkeeping names the whole file when nothing at its start matched.
        R::File | R::SingleStmt => {
            "a statement (`language`, `default`, `let`, `role`, `test`, `guide`, `detector` or a rule)"
        }
        R::PathReq | R::ExecReq | R::PluginReq | R::CommitReq | R::NetReq | R::McpReq => {
            "a token"
        }
        R::Tainted => "`tainted`",
    }
}

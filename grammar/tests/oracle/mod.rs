//! The oracle: the normative grammar `policy.pest` run by pest, its pairs built into the
//! typed AST, its errors turned into diagnostics, with the same per-statement recovery.
//! Only the differential tests compile it; production parses with `src/parser/`.
#![allow(
    clippy::result_large_err,
    reason = "diagnostics are built only on the cold error path; boxing them buys nothing"
)]

use contextos_grammar::ast::*;
use contextos_grammar::lexical::{self, MAX_FILE_BYTES, MAX_NESTING};
use contextos_grammar::{dedent, unescape, Diagnostic, ParseOutput};
use pest::iterators::Pair;
use pest::Parser as _;

mod generated {
    #[derive(pest_derive::Parser)]
    #[grammar = "tests/oracle/policy.pest"]
    pub struct PolicyParser;
}
use generated::{PolicyParser, Rule as R};

/// Parses a file with pest: the reference the production parser is tested against.
pub fn parse_pest(src: &str) -> ParseOutput {
    if src.len() > MAX_FILE_BYTES {
        return ParseOutput {
            diagnostics: vec![Diagnostic::error(
                "E0004",
                Span::new(0, 0),
                format!(
                    "policy file is {} bytes; the limit is {MAX_FILE_BYTES}",
                    src.len()
                ),
            )],
            ..ParseOutput::default()
        };
    }
    let scan = lexical::scan(src, MAX_NESTING);
    if let Some(at) = scan.too_deep_at {
        return ParseOutput {
            diagnostics: vec![Diagnostic::error(
                "E0002",
                Span::new(at, at + 1),
                format!("brackets nest deeper than {MAX_NESTING} levels"),
            )
            .with_label("too deep")
            .with_help("split the condition into several rules or a `let` list")],
            comments: scan.comments,
            ..ParseOutput::default()
        };
    }
    let mut diagnostics = Vec::new();
    let file = match PolicyParser::parse(R::file, src) {
        Ok(mut pairs) => {
            let mut statements = Vec::new();
            if let Some(file) = pairs.next() {
                for pair in file.into_inner() {
                    if pair.as_rule() == R::EOI {
                        continue;
                    }
                    match build_statement(pair, 0) {
                        Ok(s) => statements.push(s),
                        Err(d) => diagnostics.push(d),
                    }
                }
            }
            PolicyFile { statements }
        }
        Err(first) => {
            let first = syntax_error(&first, 0);
            let mut statements = Vec::new();
            for span in &scan.statements {
                let Some(chunk) = src.get(span.start..span.end) else {
                    continue;
                };
                match PolicyParser::parse(R::single_stmt, chunk) {
                    Ok(mut pairs) => {
                        let stmt = pairs
                            .next()
                            .and_then(|p| p.into_inner().find(|p| p.as_rule() != R::EOI));
                        if let Some(pair) = stmt {
                            match build_statement(pair, span.start) {
                                Ok(s) => statements.push(s),
                                Err(d) => diagnostics.push(d),
                            }
                        }
                    }
                    Err(e) => diagnostics.push(syntax_error(&e, span.start)),
                }
            }
            if !diagnostics.iter().any(|d| d.code == "E0001") {
                diagnostics.insert(0, first);
            }
            PolicyFile { statements }
        }
    };
    diagnostics.sort_by_key(|d| d.span.start);
    ParseOutput {
        file,
        diagnostics,
        comments: scan.comments,
    }
}

fn syntax_error(e: &pest::error::Error<R>, offset: usize) -> Diagnostic {
    use pest::error::{ErrorVariant, InputLocation};
    let (start, end) = match e.location {
        InputLocation::Pos(p) => (p, p),
        InputLocation::Span((s, e)) => (s, e),
    };
    let (message, label) = match &e.variant {
        ErrorVariant::ParsingError {
            positives,
            negatives,
        } => {
            let mut expected: Vec<&str> = positives.iter().map(|r| rule_name(*r)).collect();
            expected.sort_unstable();
            expected.dedup();
            let text = if expected.is_empty() {
                let unexpected: Vec<&str> = negatives.iter().map(|r| rule_name(*r)).collect();
                format!("unexpected {}", unexpected.join(", "))
            } else {
                format!("expected {}", join_alternatives(&expected))
            };
            (text.clone(), text)
        }
        ErrorVariant::CustomError { message } => (message.clone(), message.clone()),
    };
    Diagnostic::error(
        "E0001",
        Span::new(start + offset, end.max(start) + offset),
        format!("syntax error: {message}"),
    )
    .with_label(label)
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
        R::EOI => "end of file",
        R::language_decl => "`language N;`",
        R::default_decl => "`default DOMAIN = EFFECT;`",
        R::let_decl | R::override_kw => "`let NAME = [...];`",
        R::annotated | R::rule => "a rule (`allow`, `ask` or `deny`)",
        R::annotation => "an annotation (`@id(\"…\")`)",
        R::role_block => "`role NAME { … }`",
        R::test_block => "`test \"name\" { … }`",
        R::guide => "`guide \"title\" { … }`",
        R::detector => "`detector KIND \"…\" { … }`",
        R::detector_body => "`{ key: value, … }`",
        R::effect => "`allow`, `ask` or `deny`",
        R::ident | R::name => "an identifier",
        R::string | R::plain_str | R::triple_str => "a string",
        R::int => "an integer",
        R::var_ref => "a `$variable`",
        R::list_lit => "a list `[…]`",
        R::ops => "operations",
        R::patterns => "patterns",
        R::when_clause => "`when`",
        R::unless_clause => "`unless`",
        R::because_clause => "`because`",
        R::with_clause => "`with`",
        R::obligation => "`key: value`",
        R::guide_for => "`for`",
        R::expr | R::and_expr | R::unary | R::comparison | R::paren => "a condition",
        R::or_op => "`or`",
        R::and_op => "`and`",
        R::not_op => "`not`",
        R::cmp_op => "a comparison (`==`, `!=`, `in`, `matches`, `contains`, …)",
        R::access | R::call => "an attribute",
        R::boolean => "`true` or `false`",
        R::script_block => "`script { … }`",
        R::test_case | R::request => {
            "a test case (`path OP \"…\"`, `exec …`, `plugin …`, `commit […]`, `net OP …`, `mcp …`)"
        }
        R::as_role => "`as role \"…\"`",
        R::tainted => "`tainted`",
        R::expectation => "an expected verdict",
        R::rule_ref => "a rule id",
        R::file | R::single_stmt => "a statement (`language`, `default`, `let`, `role`, `test`, `guide`, `detector` or a rule)",
        _ => "a token",
    }
}

type Built<T> = Result<T, Diagnostic>;

/// Byte span of a pair without the trailing whitespace pest includes when an optional
/// part after it did not match (so carets and clause texts end at the last token).
fn span_of(pair: &Pair<R>, offset: usize) -> Span {
    let s = pair.as_span();
    // A script body is verbatim Rhai: its whitespace is content, not padding.
    let len = if pair.as_rule() == R::script_body {
        pair.as_str().len()
    } else {
        pair.as_str().trim_end().len()
    };
    Span::new(s.start() + offset, s.start() + len + offset)
}

fn spanned_text(pair: &Pair<R>, offset: usize) -> Spanned<String> {
    Spanned::new(pair.as_str().to_string(), span_of(pair, offset))
}

fn build_statement(pair: Pair<R>, off: usize) -> Built<Statement> {
    let span = span_of(&pair, off);
    match pair.as_rule() {
        R::language_decl => {
            let int = first_inner(pair, span)?;
            let n = parse_int(&int, off)?;
            let n = u32::try_from(n)
                .map_err(|_| Diagnostic::error("E0005", span, "language version out of range"))?;
            Ok(Statement::Language(Spanned::new(n, span)))
        }
        R::default_decl => {
            let mut it = pair.into_inner();
            let domain = next(&mut it, span)?;
            let effect = next(&mut it, span)?;
            Ok(Statement::Default(DefaultDecl {
                domain: spanned_text(&domain, off),
                effect: build_effect(&effect, off)?,
                span,
            }))
        }
        R::let_decl => {
            let mut it = pair.into_inner().peekable();
            let overrides = it.next_if(|p| p.as_rule() == R::override_kw).is_some();
            let name = next(&mut it, span)?;
            let value = next(&mut it, span)?;
            let vspan = span_of(&value, off);
            let (items, scalar) = if value.as_rule() == R::list_lit {
                (build_list(value, off)?, false)
            } else {
                (vec![ListItem::Str(build_string(value, off)?)], true)
            };
            Ok(Statement::Let(LetDecl {
                overrides,
                name: spanned_text(&name, off),
                value: Spanned::new(items, vspan),
                scalar,
                span,
            }))
        }
        R::annotated => build_annotated(pair, off),
        R::role_block => {
            let mut it = pair.into_inner();
            let name = next(&mut it, span)?;
            let mut block = RoleBlock {
                name: spanned_text(&name, off),
                rules: Vec::new(),
                guides: Vec::new(),
                order: Vec::new(),
                span,
            };
            for item in it {
                if let Some(other) = block.push(build_annotated(item, off)?) {
                    if let Statement::Detector(d) = &other {
                        return Err(Diagnostic::error(
                            "E0121",
                            Span::new(d.span.start, d.kind.span.end),
                            "a detector may not appear inside a role",
                        )
                        .with_label("inside `role`")
                        .with_help(
                            "detectors apply to every commit, whoever makes it: \
                             declare it outside the `role` block",
                        ));
                    }
                    return Err(Diagnostic::error(
                        "E0001",
                        other.span(),
                        "only rules and guides may appear inside a role",
                    ));
                }
            }
            Ok(Statement::Role(block))
        }
        R::test_block => {
            let mut it = pair.into_inner();
            let name = build_string(next(&mut it, span)?, off)?;
            let cases = it.map(|c| build_test_case(c, off)).collect::<Built<_>>()?;
            Ok(Statement::Test(TestBlock { name, cases, span }))
        }
        _ => Err(internal(span)),
    }
}

fn internal(span: Span) -> Diagnostic {
    Diagnostic::error(
        "E0001",
        span,
        "syntax error: the parser met a construct it does not know",
    )
}

fn next<'a>(it: &mut impl Iterator<Item = Pair<'a, R>>, span: Span) -> Built<Pair<'a, R>> {
    it.next().ok_or_else(|| internal(span))
}

fn first_inner(pair: Pair<R>, span: Span) -> Built<Pair<R>> {
    pair.into_inner().next().ok_or_else(|| internal(span))
}

fn parse_int(pair: &Pair<R>, off: usize) -> Built<i64> {
    pair.as_str().parse::<i64>().map_err(|_| {
        Diagnostic::error("E0005", span_of(pair, off), "integer literal out of range")
            .with_label("too large")
    })
}

fn build_effect(pair: &Pair<R>, off: usize) -> Built<Spanned<Effect>> {
    let span = span_of(pair, off);
    Effect::parse(pair.as_str())
        .map(|e| Spanned::new(e, span))
        .ok_or_else(|| internal(span))
}

/// Decodes a `string` pair (plain with escapes, or triple-quoted with indentation removed).
fn build_string(pair: Pair<R>, off: usize) -> Built<Spanned<String>> {
    let span = span_of(&pair, off);
    let inner = if pair.as_rule() == R::string {
        first_inner(pair, span)?
    } else {
        pair
    };
    let text = match inner.as_rule() {
        R::triple_str => {
            let raw = inner.as_str();
            dedent(raw.get(3..raw.len().saturating_sub(3)).unwrap_or(""))
        }
        R::plain_str => {
            let body = inner.into_inner().next().map(|p| p.as_str()).unwrap_or("");
            unescape(body).map_err(|(at, msg)| {
                Diagnostic::error(
                    "E0003",
                    Span::new(span.start + 1 + at, span.start + 1 + at + 1),
                    msg,
                )
            })?
        }
        _ => return Err(internal(span)),
    };
    Ok(Spanned::new(text, span))
}

fn build_list(pair: Pair<R>, off: usize) -> Built<Vec<ListItem>> {
    pair.into_inner().map(|p| build_list_item(p, off)).collect()
}

fn build_list_item(pair: Pair<R>, off: usize) -> Built<ListItem> {
    match pair.as_rule() {
        R::string => Ok(ListItem::Str(build_string(pair, off)?)),
        R::var_ref => Ok(ListItem::Var(build_var(pair, off)?)),
        _ => Err(internal(span_of(&pair, off))),
    }
}

fn build_var(pair: Pair<R>, off: usize) -> Built<Spanned<String>> {
    let span = span_of(&pair, off);
    let ident = first_inner(pair, span)?;
    Ok(Spanned::new(ident.as_str().to_string(), span))
}

fn build_pattern(pair: Pair<R>, off: usize) -> Built<Pattern> {
    let span = span_of(&pair, off);
    match pair.as_rule() {
        R::string => Ok(Pattern::Str(build_string(pair, off)?)),
        R::var_ref => Ok(Pattern::Var(build_var(pair, off)?)),
        R::list_lit => Ok(Pattern::List(Spanned::new(build_list(pair, off)?, span))),
        _ => Err(internal(span)),
    }
}

fn build_annotated(pair: Pair<R>, off: usize) -> Built<Statement> {
    let mut annotations = Vec::new();
    for item in pair.into_inner() {
        match item.as_rule() {
            R::annotation => {
                let span = span_of(&item, off);
                let mut it = item.into_inner();
                let name = spanned_text(&next(&mut it, span)?, off);
                let value = next(&mut it, span)?;
                let bare = value.as_rule() == R::ident;
                let value = if bare {
                    spanned_text(&value, off)
                } else {
                    build_string(value, off)?
                };
                annotations.push(Annotation {
                    name,
                    value,
                    bare,
                    span,
                });
            }
            R::rule => return build_rule(item, annotations, off).map(Statement::Rule),
            R::guide => return build_guide(item, annotations, off).map(Statement::Guide),
            R::detector => return build_detector(item, annotations, off).map(Statement::Detector),
            _ => return Err(internal(span_of(&item, off))),
        }
    }
    Err(Diagnostic::error(
        "E0001",
        annotations.last().map(|a| a.span).unwrap_or_default(),
        "annotations must be followed by a rule, a guide or a detector",
    ))
}

fn build_detector(pair: Pair<R>, annotations: Vec<Annotation>, off: usize) -> Built<Detector> {
    let span = span_of(&pair, off);
    let mut it = pair.into_inner();
    let kind = spanned_text(&next(&mut it, span)?, off);
    let mut patterns = Vec::new();
    let mut fields = Vec::new();
    let mut because = None;
    for item in it {
        match item.as_rule() {
            R::patterns => {
                patterns = item
                    .into_inner()
                    .map(|p| build_pattern(p, off))
                    .collect::<Built<_>>()?;
            }
            R::detector_body => fields = build_fields(item.into_inner(), off)?,
            R::because_clause => because = Some(build_string(first_inner(item, span)?, off)?),
            _ => return Err(internal(span_of(&item, off))),
        }
    }
    Ok(Detector {
        span: Span::new(
            annotations.first().map_or(span.start, |a| a.span.start),
            span.end,
        ),
        annotations,
        kind,
        patterns,
        fields,
        because,
    })
}

fn build_rule(pair: Pair<R>, annotations: Vec<Annotation>, off: usize) -> Built<Rule> {
    let span = span_of(&pair, off);
    let mut it = pair.into_inner().peekable();
    let effect = build_effect(&next(&mut it, span)?, off)?;
    let domain = spanned_text(&next(&mut it, span)?, off);
    let mut head_end = domain.span.end;
    let mut ops = Vec::new();
    let mut patterns = Vec::new();
    let mut clauses = Vec::new();
    for item in it {
        match item.as_rule() {
            R::ops => {
                head_end = span_of(&item, off).end;
                ops = item.into_inner().map(|p| spanned_text(&p, off)).collect();
            }
            R::patterns => {
                head_end = span_of(&item, off).end;
                patterns = item
                    .into_inner()
                    .map(|p| build_pattern(p, off))
                    .collect::<Built<_>>()?;
            }
            R::when_clause => {
                clauses.push(Clause::When(build_expr(first_inner(item, span)?, off, 0)?))
            }
            R::unless_clause => clauses.push(Clause::Unless(build_expr(
                first_inner(item, span)?,
                off,
                0,
            )?)),
            R::because_clause => clauses.push(Clause::Because(build_string(
                first_inner(item, span)?,
                off,
            )?)),
            R::with_clause => {
                let ospan = span_of(&item, off);
                let text = item.as_str();
                let mut inner = item.into_inner();
                let name = spanned_text(&next(&mut inner, ospan)?, off);
                let entries = inner.map(|e| build_entry(e, off)).collect::<Built<_>>()?;
                // Without braces pest's span runs over the trivia it skipped looking for
                // `{`; the clause ends with its name. With braces it ends at the `}`.
                let span = if text.ends_with('}') {
                    ospan
                } else {
                    Span::new(ospan.start, name.span.end)
                };
                clauses.push(Clause::With(Obligation {
                    name,
                    entries,
                    span,
                }));
            }
            _ => return Err(internal(span_of(&item, off))),
        }
    }
    Ok(Rule {
        span: Span::new(
            annotations.first().map_or(span.start, |a| a.span.start),
            span.end,
        ),
        annotations,
        effect: effect.clone(),
        domain,
        ops,
        patterns,
        clauses,
        head_span: Span::new(effect.span.start, head_end),
    })
}

fn build_entry(pair: Pair<R>, off: usize) -> Built<(Spanned<String>, Spanned<Value>)> {
    let span = span_of(&pair, off);
    let mut it = pair.into_inner();
    let key = spanned_text(&next(&mut it, span)?, off);
    let v = next(&mut it, span)?;
    let vspan = span_of(&v, off);
    let value = match v.as_rule() {
        R::string => Value::Str(build_string(v, off)?.node),
        R::int => Value::Int(parse_int(&v, off)?),
        R::boolean => Value::Bool(v.as_str() == "true"),
        R::list_lit => Value::List(build_list(v, off)?),
        R::ident => Value::Ident(v.as_str().to_string()),
        _ => return Err(internal(vspan)),
    };
    Ok((key, Spanned::new(value, vspan)))
}

fn build_guide(pair: Pair<R>, annotations: Vec<Annotation>, off: usize) -> Built<Guide> {
    let span = span_of(&pair, off);
    let mut it = pair.into_inner();
    let title = build_string(next(&mut it, span)?, off)?;
    let mut scope = Vec::new();
    let mut body = Vec::new();
    for item in it {
        match item.as_rule() {
            R::guide_for => {
                scope = item
                    .into_inner()
                    .map(|p| build_pattern(p, off))
                    .collect::<Built<_>>()?;
            }
            R::string => body.push(build_string(item, off)?),
            _ => return Err(internal(span_of(&item, off))),
        }
    }
    Ok(Guide {
        annotations,
        title,
        scope,
        body,
        span,
    })
}

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        "E0002",
        span,
        format!("condition nests deeper than {MAX_NESTING} levels"),
    )
    .with_label("too deep")
}

fn build_expr(pair: Pair<R>, off: usize, depth: usize) -> Built<Expr> {
    let span = span_of(&pair, off);
    if depth > MAX_NESTING {
        return Err(too_deep(span));
    }
    match pair.as_rule() {
        R::expr => {
            let mut parts = Vec::new();
            for p in pair.into_inner() {
                if p.as_rule() != R::or_op {
                    parts.push(build_expr(p, off, depth + 1)?);
                }
            }
            Ok(collapse(parts, span, Expr::Or))
        }
        R::and_expr => {
            let mut parts = Vec::new();
            for p in pair.into_inner() {
                if p.as_rule() != R::and_op {
                    parts.push(build_expr(p, off, depth + 1)?);
                }
            }
            Ok(collapse(parts, span, Expr::And))
        }
        R::unary => {
            let mut nots = Vec::new();
            let mut atom = None;
            for p in pair.into_inner() {
                if p.as_rule() == R::not_op {
                    nots.push(span_of(&p, off).start);
                } else {
                    atom = Some(p);
                }
            }
            if nots.len() + depth > MAX_NESTING {
                return Err(too_deep(span));
            }
            let atom = atom.ok_or_else(|| internal(span))?;
            let mut e = build_expr(atom, off, depth + 1)?;
            for start in nots.into_iter().rev() {
                e = Expr::Not(Box::new(e), Span::new(start, span.end));
            }
            Ok(e)
        }
        R::paren => {
            let inner = build_expr(first_inner(pair, span)?, off, depth + 1)?;
            Ok(Expr::Paren(Box::new(inner), span))
        }
        R::script_block => {
            let body = first_inner(pair, span)?;
            Ok(Expr::Script(spanned_text(&body, off)))
        }
        R::comparison => {
            let mut it = pair.into_inner();
            let lhs = build_operand(next(&mut it, span)?, off)?;
            match it.next() {
                None => Ok(Expr::Truthy(lhs)),
                Some(op) => {
                    let op_span = span_of(&op, off);
                    let cmp = CmpOp::parse(op.as_str()).ok_or_else(|| internal(op_span))?;
                    let rhs = build_operand(next(&mut it, span)?, off)?;
                    Ok(Expr::Compare {
                        lhs,
                        op: Spanned::new(cmp, op_span),
                        rhs,
                        span,
                    })
                }
            }
        }
        _ => Err(internal(span)),
    }
}

fn collapse(mut parts: Vec<Expr>, span: Span, make: fn(Vec<Expr>, Span) -> Expr) -> Expr {
    if parts.len() == 1 {
        if let Some(only) = parts.pop() {
            return only;
        }
    }
    make(parts, span)
}

fn build_operand(pair: Pair<R>, off: usize) -> Built<Operand> {
    let span = span_of(&pair, off);
    match pair.as_rule() {
        R::string => Ok(Operand::Str(build_string(pair, off)?)),
        R::int => Ok(Operand::Int(Spanned::new(parse_int(&pair, off)?, span))),
        R::boolean => Ok(Operand::Bool(Spanned::new(pair.as_str() == "true", span))),
        R::list_lit => Ok(Operand::List(Spanned::new(build_list(pair, off)?, span))),
        R::var_ref => Ok(Operand::Var(build_var(pair, off)?)),
        R::access => Ok(Operand::Attr(build_access(pair, off))),
        R::call => {
            let mut it = pair.into_inner();
            let target = build_access(next(&mut it, span)?, off);
            let args = it.map(|a| build_operand(a, off)).collect::<Built<_>>()?;
            Ok(Operand::Call { target, args, span })
        }
        _ => Err(internal(span)),
    }
}

fn build_access(pair: Pair<R>, off: usize) -> Spanned<Vec<String>> {
    let span = span_of(&pair, off);
    Spanned::new(
        pair.into_inner().map(|p| p.as_str().to_string()).collect(),
        span,
    )
}

fn build_fields<'a>(
    it: impl Iterator<Item = Pair<'a, R>>,
    off: usize,
) -> Built<Vec<(Spanned<String>, Spanned<Value>)>> {
    it.map(|e| build_entry(e, off)).collect()
}

fn build_test_case(pair: Pair<R>, off: usize) -> Built<TestCase> {
    let span = span_of(&pair, off);
    let mut it = pair.into_inner();
    let request = next(&mut it, span)?;
    let req = first_inner(request, span)?;
    let rspan = span_of(&req, off);
    let request = match req.as_rule() {
        R::path_req => {
            let mut r = req.into_inner();
            let op = spanned_text(&next(&mut r, rspan)?, off);
            let path = build_string(next(&mut r, rspan)?, off)?;
            TestRequest::Path { op, path }
        }
        R::exec_req => {
            let v = first_inner(req, rspan)?;
            if v.as_rule() == R::list_lit {
                let vspan = span_of(&v, off);
                TestRequest::ExecArgv(Spanned::new(build_list(v, off)?, vspan))
            } else {
                TestRequest::ExecShell(build_string(v, off)?)
            }
        }
        R::plugin_req => {
            let mut r = req.into_inner();
            let name = build_string(next(&mut r, rspan)?, off)?;
            TestRequest::Plugin {
                name,
                fields: build_fields(r, off)?,
            }
        }
        R::net_req => {
            let mut r = req.into_inner();
            let op = spanned_text(&next(&mut r, rspan)?, off);
            let target = build_string(next(&mut r, rspan)?, off)?;
            TestRequest::Net {
                op,
                target,
                fields: build_fields(r, off)?,
            }
        }
        R::mcp_req => {
            let mut r = req.into_inner();
            let name = build_string(next(&mut r, rspan)?, off)?;
            TestRequest::Mcp {
                name,
                fields: build_fields(r, off)?,
            }
        }
        R::commit_req => {
            let mut r = req.into_inner();
            let list = next(&mut r, rspan)?;
            let lspan = span_of(&list, off);
            TestRequest::Commit {
                files: Spanned::new(build_list(list, off)?, lspan),
                fields: build_fields(r, off)?,
            }
        }
        _ => return Err(internal(rspan)),
    };
    let mut role = None;
    let mut tainted = None;
    let mut expectation = None;
    for item in it {
        match item.as_rule() {
            R::as_role => role = Some(build_string(first_inner(item, span)?, off)?),
            R::tainted => tainted = Some(span_of(&item, off)),
            R::expectation => expectation = Some(item),
            _ => return Err(internal(span_of(&item, off))),
        }
    }
    let expectation = expectation.ok_or_else(|| internal(span))?;
    let mut e = expectation.into_inner();
    let expect = build_effect(&next(&mut e, span)?, off)?;
    let expect_rules = e
        .map(|r| {
            if r.as_rule() == R::string {
                build_string(r, off)
            } else {
                Ok(spanned_text(&r, off))
            }
        })
        .collect::<Built<_>>()?;
    Ok(TestCase {
        request,
        role,
        tainted,
        expect,
        expect_rules,
        span,
    })
}

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]
use contextos_grammar::ast::*;
use contextos_grammar::{parse, SourceFile};

const DESIGN: &str = include_str!("fixtures/design.policy");

#[test]
fn the_design_example_parses_completely() {
    let out = parse(DESIGN);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    let kinds: Vec<&str> = out
        .file
        .statements
        .iter()
        .map(|s| match s {
            Statement::Language(_) => "language",
            Statement::Default(_) => "default",
            Statement::Let(_) => "let",
            Statement::Rule(_) => "rule",
            Statement::Guide(_) => "guide",
            Statement::Role(_) => "role",
            Statement::Test(_) => "test",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "language", "default", "default", "default", "default", "let", "rule", "rule", "rule",
            "rule", "rule", "rule", "role", "guide", "test"
        ]
    );
    let Statement::Rule(r) = &out.file.statements[6] else {
        unreachable!()
    };
    assert_eq!(r.effect.node, Effect::Deny);
    assert_eq!(r.domain.node, "path");
    let ops: Vec<&str> = r.ops.iter().map(|o| o.node.as_str()).collect();
    assert_eq!(ops, ["write", "delete"]);
    assert!(matches!(&r.patterns[..], [Pattern::Var(v)] if v.node == "secrets"));
    assert_eq!(
        &DESIGN[r.span.start..r.span.start + 24],
        "@id(\"no-secret-writes\")\n"
    );
    let Statement::Guide(g) = &out.file.statements[13] else {
        unreachable!()
    };
    assert_eq!(
        g.body[0].node,
        "Handlers call services; services never import handlers."
    );
    let Statement::Test(t) = &out.file.statements[14] else {
        unreachable!()
    };
    assert_eq!(t.cases.len(), 3);
    assert_eq!(t.cases[0].expect_rules[0].node, "no-secret-writes");
    assert_eq!(
        t.cases[2].role.as_ref().map(|r| r.node.as_str()),
        Some("maintainer")
    );
}

#[test]
fn script_bodies_are_kept_verbatim() {
    let out = parse(DESIGN);
    let Statement::Rule(r) = &out.file.statements[11] else {
        unreachable!()
    };
    let Clause::When(Expr::Script(body)) = &r.clauses[0] else {
        unreachable!()
    };
    assert!(body
        .node
        .contains("argv.len() > 64 || argv.contains(\"--no-verify\")"));
    assert_eq!(&DESIGN[body.span.start..body.span.end], body.node);
}

#[test]
fn string_escapes_decode() {
    let out = parse(r#"let x = ["a\"b", "tab\there", "\u{1F600}", "back\\slash"];"#);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let Statement::Let(l) = &out.file.statements[0] else {
        unreachable!()
    };
    let items: Vec<&str> = l
        .value
        .node
        .iter()
        .map(|i| match i {
            ListItem::Str(s) => s.node.as_str(),
            ListItem::Var(v) => v.node.as_str(),
        })
        .collect();
    assert_eq!(items, ["a\"b", "tab\there", "\u{1F600}", "back\\slash"]);
}

#[test]
fn syntax_errors_are_located_with_caret_and_expectation() {
    let src = "language 1;\ndeny path write \"x\"\nallow exec \"y\";\n";
    let out = parse(src);
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    let d = &out.diagnostics[0];
    assert_eq!(d.code, "E0001");
    let f = SourceFile::new("p.policy", src);
    let rendered = f.render(d);
    assert!(rendered.contains("p.policy:3:1"), "{rendered}");
    assert!(rendered.contains("expected"), "{rendered}");
    assert!(rendered.contains("^"), "{rendered}");
}

#[test]
fn one_file_reports_several_errors() {
    let src =
        "deny path write \"a\" because;\nallow exec \"ok\";\nask exec \"b\" when ;\nlet = [];\n";
    let out = parse(src);
    let lines: Vec<usize> = out
        .diagnostics
        .iter()
        .map(|d| SourceFile::new("f", src).line_col(d.span.start).line)
        .collect();
    assert_eq!(lines, [1, 3, 4], "{:#?}", out.diagnostics);
    // The good statement in between is still parsed.
    assert_eq!(out.file.statements.len(), 1);
}

#[test]
fn bad_escape_is_its_own_error() {
    let out = parse(r#"let x = "\q";"#);
    assert_eq!(out.diagnostics[0].code, "E0001");
    let out = parse(r#"let x = "\u{110000}";"#);
    assert_eq!(out.diagnostics[0].code, "E0003");
}

#[test]
fn hostile_nesting_is_rejected_without_overflowing() {
    let src = format!(
        "deny exec \"a\" when {}true{};",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let out = parse(&src);
    assert_eq!(out.diagnostics[0].code, "E0002");
    let nots = format!("deny exec \"a\" when {}true;", "not ".repeat(100_000));
    let out = parse(&nots);
    assert_eq!(out.diagnostics[0].code, "E0002");
    let lists = format!("let x = {};", "[".repeat(100_000));
    assert_eq!(parse(&lists).diagnostics[0].code, "E0002");
}

#[test]
fn keywords_need_word_boundaries() {
    let out = parse("denyexec \"a\";");
    assert!(out.has_errors());
    let out = parse("allow exec \"a\" when android == \"x\";");
    assert!(!out.has_errors(), "{:?}", out.diagnostics);
}

#[test]
fn hostile_nesting_inside_script_bodies_ends_with_an_error() {
    let src = format!(
        "deny exec \"a\" when script {{ {}true{} }} because \"x\";",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    let out = parse(&src);
    assert!(out.has_errors(), "must not be accepted");
    assert_eq!(out.diagnostics[0].code, "E0001");
}

#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
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
            Statement::Detector(_) => "detector",
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

// ---------------------------------------------------------------------------------------
// Detectors
// ---------------------------------------------------------------------------------------

const DETECTORS: &str = r#"language 1;
@id("aws-access-key-id")
@severity(error)
detector secret """\b((?:AKIA|ASIA)[A-Z2-7]{16})\b""" {
    keywords: ["akia", "asia"],
    entropy: "3.0",
    lookback: 6,
    multiline: true,
} because "An AWS access key id.";
detector file "**/.env", $more, ["a", $b] { exclude: ["**/.env.example"] };
detector file "**/id_rsa" because "k";
detector stub "\\bx" {};
"#;

#[test]
fn detectors_parse_with_every_part() {
    let out = parse(DETECTORS);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    let ds: Vec<&Detector> = out
        .file
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Detector(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(ds.len(), 4);

    let d = ds[0];
    assert_eq!(d.annotations.len(), 2);
    assert_eq!(d.annotations[1].value.node, "error");
    assert!(d.annotations[1].bare);
    assert_eq!(d.kind.node, "secret");
    assert_eq!(&DETECTORS[d.kind.span.start..d.kind.span.end], "secret");
    // Triple-quoted strings are raw: the backslashes stay.
    assert!(
        matches!(&d.patterns[..], [Pattern::Str(s)] if s.node == r"\b((?:AKIA|ASIA)[A-Z2-7]{16})\b")
    );
    let keys: Vec<&str> = d.fields.iter().map(|(k, _)| k.node.as_str()).collect();
    assert_eq!(keys, ["keywords", "entropy", "lookback", "multiline"]);
    assert!(matches!(&d.fields[0].1.node, Value::List(items) if items.len() == 2));
    assert_eq!(d.fields[1].1.node, Value::Str("3.0".into()));
    assert_eq!(
        &DETECTORS[d.fields[1].1.span.start..d.fields[1].1.span.end],
        "\"3.0\""
    );
    assert_eq!(d.fields[2].1.node, Value::Int(6));
    assert_eq!(d.fields[3].1.node, Value::Bool(true));
    assert_eq!(
        d.because.as_ref().map(|b| b.node.as_str()),
        Some("An AWS access key id.")
    );
    // The span runs from the first annotation through the `;`.
    let text = &DETECTORS[d.span.start..d.span.end];
    assert!(text.starts_with("@id(\"aws-access-key-id\")"), "{text}");
    assert!(
        text.ends_with("because \"An AWS access key id.\";"),
        "{text}"
    );

    let d = ds[1];
    assert!(d.annotations.is_empty());
    assert_eq!(&DETECTORS[d.span.start..d.span.start + 8], "detector");
    assert!(matches!(
        &d.patterns[..],
        [Pattern::Str(a), Pattern::Var(v), Pattern::List(l)]
            if a.node == "**/.env" && v.node == "more" && l.node.len() == 2
    ));
    assert_eq!(d.fields.len(), 1);
    assert!(d.because.is_none());

    let d = ds[2];
    assert!(d.fields.is_empty());
    assert_eq!(d.because.as_ref().map(|b| b.node.as_str()), Some("k"));

    // Plain strings keep their escapes; an empty body is no body.
    let d = ds[3];
    assert!(matches!(&d.patterns[..], [Pattern::Str(s)] if s.node == r"\bx"));
    assert!(d.fields.is_empty());
}

#[test]
fn detector_syntax_errors() {
    for (src, code) in [
        // A pattern is required.
        ("detector secret { keywords: [\"a\"] };", "E0001"),
        // The kind is an identifier, not a string.
        ("detector \"secret\" \"a\";", "E0001"),
        // Missing `;`.
        ("detector file \"a\" because \"b\"", "E0001"),
        // Body entries are `key: value`.
        ("detector file \"a\" { exclude };", "E0001"),
        // `because` comes after the body.
        (
            "detector file \"a\" because \"b\" { exclude: [] };",
            "E0001",
        ),
    ] {
        let out = parse(src);
        assert!(out.has_errors(), "{src}");
        assert_eq!(
            out.diagnostics[0].code, code,
            "{src}: {:?}",
            out.diagnostics
        );
    }
}

#[test]
fn a_detector_in_a_role_is_refused_with_its_own_code() {
    let src = "role dev {\n    @id(\"x\") detector file \"a\";\n    deny exec \"x\";\n}\n";
    let out = parse(src);
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    let d = &out.diagnostics[0];
    assert_eq!(d.code, "E0121");
    assert_eq!(&src[d.span.start..d.span.end], "@id(\"x\") detector file");
}

#[test]
fn detectors_survive_error_recovery() {
    // A syntax error elsewhere: each statement is parsed on its own, and the detector
    // (whose `{ … }` body does not end the statement) still parses.
    let src = "deny exec \"x\" bogus;\ndetector file \"a\" { exclude: [\"b\"] } because \"c\";\n";
    let out = parse(src);
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    assert!(matches!(&out.file.statements[..], [Statement::Detector(d)] if d.fields.len() == 1));
}

#[test]
fn the_syntax_errors_the_book_quotes_are_the_ones_reported() {
    // book/src/diagnostics.md, E0001: the message, the line and the column.
    for (src, line, col, message) in [
        (
            "language 1;\ndeny exec \"x\"\ndeny exec \"y\" because \"z\";\n",
            3,
            1,
            "syntax error: expected `because`, `unless`, `when` or `with`",
        ),
        (
            "language 1;\ndeny path write \"a\\qb\" because \"x\";\n",
            2,
            17,
            "syntax error: expected `because`, `unless`, `when`, `with` or patterns",
        ),
        (
            "language 1;\nrole r { let x = [\"a\"]; }\n",
            2,
            10,
            "syntax error: expected a rule (`allow`, `ask` or `deny`)",
        ),
    ] {
        let out = parse(src);
        let d = &out.diagnostics[0];
        assert_eq!((d.code, d.message.as_str()), ("E0001", message), "{src}");
        let at = SourceFile::new("p.policy", src).line_col(d.span.start);
        assert_eq!((at.line, at.col), (line, col), "{src}");
    }
}

#[test]
fn text_that_starts_no_statement_is_told_what_may_start_one() {
    let out = parse("x");
    assert_eq!(
        out.diagnostics[0].message,
        "syntax error: expected a statement (`language`, `default`, `let`, `role`, `test`, \
         `guide`, `detector` or a rule)"
    );
}

/// A file parsed in two halves cut at a statement's end (each half on its own, as two
/// threads parse a large project file) gives exactly the whole parse: statements, spans,
/// diagnostics and comments. Checked at every end the lexical scan finds, in the design
/// example, every stdlib file, and texts with broken statements, `;` inside strings,
/// scripts and blocks, and comments at the cut.
#[test]
fn a_file_cut_at_any_statement_end_parses_as_the_whole() {
    use contextos_grammar::{
        finish_split, lexical, parse_unscanned_from, parse_unscanned_until, MAX_NESTING,
    };
    let stdlib = concat!(env!("CARGO_MANIFEST_DIR"), "/../stdlib-policies/policies");
    let mut texts: Vec<String> = std::fs::read_dir(stdlib)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "policy"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(texts.len() > 5, "the stdlib's files are there");
    texts.push(DESIGN.to_string());
    texts.push(
        "language 1;\n// before\ndeny path write \"a;b/**\" because \"x;y\"; // after\n\
         let l = [\"p;q\", \"r\"];\n\
         role ci { allow exec \"make *\" because \"ok;\"; }\n\
         ask exec \"x\" when script { let a = 1; a == 1 } because \"s\";\n\
         deny path write \"broken\" because;\n\
         deny path read \"fine/**\" because \"ok\";\n\
         deny path write \"u\" when path.size > 99999999999999999999999 because \"big\";\n"
            .to_string(),
    );
    let mut cuts = 0;
    for text in &texts {
        let whole = format!("{:?}", parse(text));
        let scan = lexical::scan(text, MAX_NESTING);
        let room = scan.statements.len();
        for end in scan.statements.iter().map(|s| s.end).chain([0, text.len()]) {
            let split = finish_split(
                text,
                parse_unscanned_until(text, end, room),
                parse_unscanned_from(text, end),
                lexical::scan(text, MAX_NESTING),
            );
            assert_eq!(format!("{split:?}"), whole, "cut at byte {end}");
            cuts += 1;
        }
    }
    assert!(cuts > 500, "{cuts} cuts");
}

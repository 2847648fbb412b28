//! Tests of the canonical formatter: golden files, comment preservation, error handling
//! and property tests over randomly generated policies.

use contextos_grammar::ast::{Clause, PolicyFile, Statement};
use contextos_grammar::{format_source, parse};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::Config;

const DESIGN: &str = include_str!("fixtures/design.policy");
const DESIGN_OUT: &str = include_str!("fixtures/format/design.out.policy");
const MESSY_IN: &str = include_str!("fixtures/format/messy.in.policy");
const MESSY_OUT: &str = include_str!("fixtures/format/messy.out.policy");
const COMMENTS_IN: &str = include_str!("fixtures/format/comments.in.policy");
const COMMENTS_OUT: &str = include_str!("fixtures/format/comments.out.policy");
const DETECTORS_IN: &str = include_str!("fixtures/format/detectors.in.policy");
const DETECTORS_OUT: &str = include_str!("fixtures/format/detectors.out.policy");

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn fmt(src: &str) -> String {
    let result = format_source(src);
    assert!(
        result.is_ok(),
        "format_source failed on\n{src}\n--\n{result:#?}"
    );
    result.unwrap_or_default()
}

/// The syntax tree printed with `{:?}`, every `Span { start: N, end: N }` replaced by
/// `Span`, and each rule's clauses in the formatter's canonical order (a stable sort,
/// so clauses of one kind keep their relative order).
fn shape(src: &str) -> String {
    let out = parse(src);
    assert!(
        !out.has_errors(),
        "does not parse:\n{src}\n--\n{:#?}",
        out.diagnostics
    );
    let mut file: PolicyFile = out.file;
    let rank = |c: &Clause| match c {
        Clause::When(_) => 0,
        Clause::Unless(_) => 1,
        Clause::With(_) => 2,
        Clause::Because(_) => 3,
    };
    for s in &mut file.statements {
        match s {
            Statement::Rule(r) => r.clauses.sort_by_key(rank),
            Statement::Role(role) => {
                for r in &mut role.rules {
                    r.clauses.sort_by_key(rank);
                }
            }
            _ => {}
        }
    }
    erase_spans(&format!("{file:?}"))
}

fn erase_spans(debug: &str) -> String {
    const OPEN: &str = "Span { start: ";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        out.push_str("Span");
        let after = &rest[at..];
        let close = after.find('}').map_or(after.len(), |c| c + 1);
        rest = &after[close..];
    }
    out.push_str(rest);
    out
}

/// Comment texts in source order, as the lexical pass sees them.
fn comments(src: &str) -> Vec<String> {
    parse(src).comments.into_iter().map(|c| c.text).collect()
}

/// Everything the formatter promises about one valid input.
fn check_canonical(src: &str) {
    let once = fmt(src);
    let twice = fmt(&once);
    assert_eq!(
        once, twice,
        "not idempotent; input:\n{src}\n--\nfirst pass:\n{once}"
    );
    assert_eq!(
        shape(&once),
        shape(src),
        "syntax tree changed; input:\n{src}\n--\noutput:\n{once}"
    );
    assert_eq!(
        comments(&once),
        comments(src),
        "comments changed; input:\n{src}\n--\noutput:\n{once}"
    );
    if !once.is_empty() {
        assert!(
            once.ends_with('\n') && !once.ends_with("\n\n"),
            "bad end: {once:?}"
        );
        assert!(
            !once.starts_with('\n'),
            "starts with a blank line: {once:?}"
        );
    }
    // Script bodies are verbatim and triple-quoted text may hold blank lines.
    if !src.contains("script") {
        for line in once.lines() {
            assert_eq!(line, line.trim_end(), "trailing whitespace in {once:?}");
        }
        if !src.contains("\"\"\"") {
            assert!(
                !once.contains("\n\n\n"),
                "two blank lines in a row:\n{once}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Golden files
// ---------------------------------------------------------------------------------------

#[test]
fn design_fixture_formats_to_golden_output() {
    assert_eq!(fmt(DESIGN), DESIGN_OUT);
    check_canonical(DESIGN);
}

#[test]
fn messy_input_formats_to_golden_output() {
    assert_eq!(fmt(MESSY_IN), MESSY_OUT);
    check_canonical(MESSY_IN);
}

#[test]
fn comments_fixture_formats_to_golden_output() {
    assert_eq!(fmt(COMMENTS_IN), COMMENTS_OUT);
    check_canonical(COMMENTS_IN);
}

#[test]
fn golden_outputs_are_fixed_points() {
    for out in [DESIGN_OUT, MESSY_OUT, COMMENTS_OUT] {
        assert_eq!(fmt(out), out);
    }
}

// ---------------------------------------------------------------------------------------
// Comments
// ---------------------------------------------------------------------------------------

#[test]
fn every_comment_survives_in_order() {
    let before = comments(COMMENTS_IN);
    // c01..c40 (the `//` inside the script body is part of the body, not a comment).
    let expected: Vec<String> = (1..=40).map(|i| format!("c{i:02}")).collect();
    let tags: Vec<String> = before
        .iter()
        .map(|c| c.trim_start_matches("// ").chars().take(3).collect())
        .collect();
    assert_eq!(tags, expected);
    let out = fmt(COMMENTS_IN);
    let after = comments(&out);
    assert_eq!(after.len(), 40);
    assert_eq!(after, before);
    for c in &before {
        assert_eq!(out.matches(c.as_str()).count(), 1, "{c} in\n{out}");
    }
    assert!(out.contains("when script { x // part of the script body, not a comment\n    }"));
}

#[test]
fn comment_placement() {
    let src = "deny exec \"a\"; // tail a\n// lead b\nallow exec \"b\"\n  // inside b\n  because \"x\";\n// eof\n";
    assert_eq!(
        fmt(src),
        "deny exec \"a\"; // tail a\n\n// lead b\n// inside b\nallow exec \"b\"\n    because \"x\";\n// eof\n"
    );
    // Two statements on one line: the comment belongs to the last one.
    assert_eq!(
        fmt("default a = allow; default b = deny; // both\n"),
        "default a = allow;\ndefault b = deny; // both\n"
    );
    // A comment right after `{` stays on the header line.
    assert_eq!(fmt("role r { // why\n}"), "role r { // why\n}\n");
    assert_eq!(fmt("test \"t\" {} // after"), "test \"t\" {} // after\n");
    // Only comments.
    assert_eq!(fmt("\n\n// a\n\n\n// b\n"), "// a\n\n// b\n");
}

#[test]
fn slashes_in_strings_and_rule_ids_are_not_comments() {
    let src = "let x = [\"http://a\"];\ntest \"t\" { exec \"x\" => deny(\"a//b\", \"c // d\"); }\n";
    let out = fmt(src);
    assert_eq!(
        out,
        "let x = [\"http://a\"];\n\ntest \"t\" {\n    exec \"x\" => deny(\"a//b\", \"c // d\");\n}\n"
    );
    assert!(comments(&out).is_empty());
    assert_eq!(shape(&out), shape(src));
}

// ---------------------------------------------------------------------------------------
// Layout details
// ---------------------------------------------------------------------------------------

#[test]
fn clauses_are_reordered_keeping_relative_order() {
    let src = "deny exec \"x\" because \"b\" with s { a: 1 } unless u1 when w1 unless u2 when w2 with t {};";
    assert_eq!(
        fmt(src),
        "deny exec \"x\"\n    when w1\n    when w2\n    unless u1\n    unless u2\n    with s { a: 1 }\n    with t {}\n    because \"b\";\n"
    );
    assert_eq!(fmt("allow   exec;"), "allow exec;\n");
}

#[test]
fn operators_become_words_and_parentheses_stay() {
    assert_eq!(
        fmt("deny exec \"x\" when !(a || b) && !!c or ((d));"),
        "deny exec \"x\"\n    when not (a or b) and not not c or ((d));\n"
    );
    assert_eq!(
        fmt("deny exec \"x\" when a.b . c(1,\"s\",[ $v ]) >= 007;"),
        "deny exec \"x\"\n    when a.b.c(1, \"s\", [$v]) >= 7;\n"
    );
}

#[test]
fn strings_are_reescaped_minimally() {
    let src = r#"let x = ["\u{41}\t\"\\", "\u{1}\u{7F}", "é😀", "raw	tab"];"#;
    assert_eq!(
        fmt(src),
        "let x = [\"A\\t\\\"\\\\\", \"\\u{1}\\u{7f}\", \"é😀\", \"raw\\ttab\"];\n"
    );
    check_canonical(src);
}

#[test]
fn triple_quoted_strings_round_trip() {
    let src =
        "role r {\nguide \"g\" {\n\"\"\"\n  say \"hi\" and \"\"\n\n    indented\n  \"\"\"\n}\n}\n";
    let out = fmt(src);
    assert_eq!(
        out,
        "role r {\n    guide \"g\" {\n        \"\"\"\n        say \"hi\" and \"\"\n\n          indented\n        \"\"\"\n    }\n}\n"
    );
    check_canonical(src);
    // Text that starts on the opening line.
    check_canonical("guide \"g\" { \"\"\"first\n   second\"\"\" }");
    // `because` with a triple-quoted reason indents with its line.
    assert_eq!(
        fmt("deny exec \"x\" because \"\"\"\n  long\n  reason\n\"\"\";"),
        "deny exec \"x\"\n    because \"\"\"\n    long\n    reason\n    \"\"\";\n"
    );
}

#[test]
fn text_with_three_quotes_stays_plain() {
    // `\"\"\"` inside a triple string can only be written by a plain one: use a plain
    // source string that decodes to text containing three quotes.
    let out = fmt("guide \"g\" { \"say \\\"\\\"\\\" now\" }");
    assert_eq!(out, "guide \"g\" {\n    \"say \\\"\\\"\\\" now\"\n}\n");
    // Common indentation is the parser's to remove: the text is `a\nb`.
    let src = "guide \"g\" { \"\"\"  a\n  b\"\"\" }";
    assert_eq!(
        fmt(src),
        "guide \"g\" {\n    \"\"\"\n    a\n    b\n    \"\"\"\n}\n"
    );
    check_canonical(src);
}

#[test]
fn scripts_are_verbatim() {
    let src = "deny exec \"*\" when script {  a  &&\n\t\tb // }\n } && x;";
    let out = fmt(src);
    assert_eq!(
        out,
        "deny exec \"*\"\n    when script {  a  &&\n\t\tb // }\n } and x;\n"
    );
    check_canonical(src);
}

#[test]
fn long_lists_break_one_item_per_line() {
    let items: Vec<String> = (0..12).map(|i| format!("\"pattern-number-{i}\"")).collect();
    let src = format!("let xs = [{}];", items.join(","));
    let out = fmt(&src);
    let mut expected = String::from("let xs = [\n");
    for i in &items {
        expected.push_str(&format!("    {i},\n"));
    }
    expected.push_str("];\n");
    assert_eq!(out, expected);
    check_canonical(&src);

    // Exactly 100 columns fits; 101 does not.
    let fits = format!("let x = [\"{}\"];", "a".repeat(100 - 13));
    assert_eq!(fits.len(), 100);
    assert_eq!(fmt(&fits), format!("{fits}\n"));
    let over = format!("let x = [\"{}\"];", "a".repeat(101 - 13));
    assert_eq!(
        fmt(&over),
        format!("let x = [\n    \"{}\",\n];\n", "a".repeat(88))
    );

    // Inside a role the continuation indentation adds up.
    let src = format!(
        "role r {{ deny exec \"x\" when a in [{}]; }}",
        items.join(",")
    );
    let out = fmt(&src);
    assert!(
        out.contains("        when a in [\n            \"pattern-number-0\",\n"),
        "{out}"
    );
    assert!(
        out.contains("            \"pattern-number-11\",\n        ];\n}\n"),
        "{out}"
    );
    check_canonical(&src);
}

#[test]
fn blank_lines_between_statements() {
    let src = "language 1;default a=allow;\n\n\ndefault b=deny;let x=\"1\";\n\nlet y=[];deny exec;allow exec;";
    assert_eq!(
        fmt(src),
        "language 1;\n\ndefault a = allow;\ndefault b = deny;\n\nlet x = \"1\";\nlet y = [];\n\ndeny exec;\n\nallow exec;\n"
    );
    // Inside blocks: at most one blank line, only where the author had one.
    let src =
        "role r {\n\n\n  deny exec \"a\";\n  deny exec \"b\";\n\n\n\n  deny exec \"c\";\n\n}\n";
    assert_eq!(
        fmt(src),
        "role r {\n    deny exec \"a\";\n    deny exec \"b\";\n\n    deny exec \"c\";\n}\n"
    );
}

#[test]
fn tests_and_requests() {
    let src = r#"test "t" {
        exec ["git","push"] => deny();
        plugin "p" { signed: true, n: 3, k: ident, l: ["a"] } as role "dev" => allow(a, "b c");
        commit ["a.rs"] {} => ask("x");
        path read "/etc" => deny ( std:fs/read.v1 );
    }"#;
    assert_eq!(
        fmt(src),
        "test \"t\" {\n    exec [\"git\", \"push\"] => deny;\n    plugin \"p\" { signed: true, n: 3, k: ident, l: [\"a\"] } as role \"dev\" => allow(a, \"b c\");\n    commit [\"a.rs\"] => ask(x);\n    path read \"/etc\" => deny(std:fs/read.v1);\n}\n"
    );
    check_canonical(src);
}

#[test]
fn empty_blocks_and_files() {
    assert_eq!(
        fmt("role r{}test \"t\"{ }guide \"g\"{}"),
        "role r {}\n\ntest \"t\" {}\n\nguide \"g\" {}\n"
    );
    assert_eq!(fmt(""), "");
    assert_eq!(fmt(" \n\t\n"), "");
}

#[test]
fn detectors_format_to_golden_output() {
    assert_eq!(fmt(DETECTORS_IN), DETECTORS_OUT);
    check_canonical(DETECTORS_IN);
    check_canonical(DETECTORS_OUT);
    assert_eq!(fmt(DETECTORS_OUT), DETECTORS_OUT);
}

#[test]
fn detector_layout() {
    // No body (or an empty one): one line.
    assert_eq!(
        fmt("detector  file\n\"**/id_rsa\" {  } because \"k\" ;"),
        "detector file \"**/id_rsa\" because \"k\";\n"
    );
    assert_eq!(fmt("detector file \"a\";"), "detector file \"a\";\n");
    // A body: one `key: value,` per line, indented with the statement.
    assert_eq!(
        fmt("@id(\"s\") detector stub \"x\" { keywords: [\"x\"], code_only: true, lookback: 2 };"),
        "@id(\"s\")\ndetector stub \"x\" {\n    keywords: [\"x\"],\n    code_only: true,\n    lookback: 2,\n};\n"
    );
    // One-line triple-quoted regexes stay triple-quoted on one line; text the parser
    // would not give back that way becomes a block or a plain string.
    assert_eq!(
        fmt("detector secret \"\"\"\\d+\"\"\" { keywords: [\"1\"], allow: [\"\"\"a\\b\"\"\"] };"),
        "detector secret \"\"\"\\d+\"\"\" {\n    keywords: [\"1\"],\n    allow: [\"\"\"a\\b\"\"\"],\n};\n"
    );
    for src in [
        "detector secret \"\"\"\\d+\"\"\", \"\"\"x\"\"\" { keywords: [\"1\"] };",
        "detector secret \"\"\"\n  a\n    b\n\"\"\" { keywords: [\"1\"] } because \"\"\"one\"\"\";",
        "detector secret \"a\\\"\" { keywords: [\"\\\"\"] };",
        "// before\ndetector file \"a\" { // in\n exclude: [\"b\"], // after b\n} because \"c\"; // end\n",
    ] {
        check_canonical(src);
    }
    // Long pattern lists break like a rule's.
    let items: Vec<String> = (0..12).map(|i| format!("\"pattern-number-{i}\"")).collect();
    let src = format!("detector file [{}];", items.join(","));
    let out = fmt(&src);
    assert!(
        out.starts_with("detector file [\n    \"pattern-number-0\",\n"),
        "{out}"
    );
    assert!(out.ends_with("    \"pattern-number-11\",\n];\n"), "{out}");
    check_canonical(&src);
}

#[test]
fn annotations_and_lets_keep_their_spelling() {
    let src =
        "@id( \"a\" )@severity(error)guide\"g\"for$x,[\"a\"]{\"b\"} let s=\"v\"; let l=[\"v\"];";
    assert_eq!(
        fmt(src),
        "@id(\"a\")\n@severity(error)\nguide \"g\" for $x, [\"a\"] {\n    \"b\"\n}\n\nlet s = \"v\";\nlet l = [\"v\"];\n"
    );
    check_canonical(src);
}

#[test]
fn crlf_and_bom_inputs() {
    let src = "\u{feff}language 1;\r\n// c\r\ndeny exec \"x\" // t\r\n  because \"y\";\r\n";
    assert_eq!(
        fmt(src),
        "language 1;\n\n// c\n// t\ndeny exec \"x\"\n    because \"y\";\n"
    );
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

#[test]
fn syntax_errors_are_returned_not_formatted() {
    let src = "language 1;\ndeny path write \"x\"\nallow exec \"y\";\n";
    let Err(diags) = format_source(src) else {
        panic!("formatted a file with a syntax error")
    };
    assert_eq!(diags, parse(src).diagnostics);
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, "E0001");

    let Err(diags) = format_source("let x = \"\\u{110000}\";") else {
        panic!("formatted a file with a bad escape")
    };
    assert_eq!(diags[0].code, "E0003");

    let deep = format!(
        "deny exec \"a\" when {}true{};",
        "(".repeat(100),
        ")".repeat(100)
    );
    let Err(diags) = format_source(&deep) else {
        panic!("formatted a file nested too deeply")
    };
    assert_eq!(diags[0].code, "E0002");
}

// ---------------------------------------------------------------------------------------
// Property tests: random valid policies written as source text
// ---------------------------------------------------------------------------------------

/// Source tokens; the joiner puts random whitespace and comments between them.
type Toks = Vec<String>;

const KEYWORDS: &[&str] = &[
    "when", "unless", "because", "with", "and", "or", "not", "script", "in", "matches", "contains",
    "true", "false",
];

fn tok(s: &str) -> Toks {
    vec![s.to_string()]
}

fn cat(parts: Vec<Toks>) -> Toks {
    parts.into_iter().flatten().collect()
}

/// `parts` separated by `sep` tokens, with an optional trailing separator.
fn sep_by(parts: Vec<Toks>, sep: &str, trailing: bool) -> Toks {
    let n = parts.len();
    let mut out = Vec::new();
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(sep.to_string());
        }
        out.extend(p);
    }
    if trailing && n > 0 {
        out.push(sep.to_string());
    }
    out
}

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_][a-z0-9_]{0,6}".prop_filter("keyword", |s| !KEYWORDS.contains(&s.as_str())),
        1 => prop::sample::select(vec![
            "path", "write", "index", "notes", "order", "android", "within", "as", "for", "allow",
            "role", "test", "default", "truely",
        ])
        .prop_map(String::from),
    ]
}

fn effect() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["allow", "ask", "deny"]).prop_map(String::from)
}

fn str_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::char::range('a', 'z'),
        1 => prop::sample::select(vec![
            '"', '\\', '\n', '\t', '\r', '\0', '\u{1}', '\u{7f}', '\u{85}', 'é', '😀', '/', '{',
            '}', ';', ' ', '\u{200b}', '\u{feff}', '$', '[', '\u{3000}',
        ]),
    ]
}

/// A plain string literal; each character is written raw or escaped at random.
fn plain_str() -> impl Strategy<Value = String> {
    vec((str_char(), 0u8..4), 0..10).prop_map(|chars| {
        let mut s = String::from("\"");
        for (c, how) in chars {
            match (c, how) {
                (c, 0) => s.push_str(&format!("\\u{{{:X}}}", u32::from(c))),
                ('"', _) => s.push_str("\\\""),
                ('\\', _) => s.push_str("\\\\"),
                ('\n', _) => s.push_str("\\n"),
                ('\t', 1) => s.push_str("\\t"),
                ('\r', 1) => s.push_str("\\r"),
                ('\0', 1) => s.push_str("\\0"),
                (c, _) => s.push(c),
            }
        }
        s.push('"');
        s
    })
}

/// A triple-quoted string with random indentation, blank lines, quotes and line ends.
fn triple_str() -> impl Strategy<Value = String> {
    let line = (
        prop::sample::select(vec!["", " ", "  ", "    ", "\t", " \u{3000}"]),
        "[a-z \"\\\\{}é]{0,12}".prop_filter("no triple quote", |l: &String| !l.contains("\"\"\"")),
    );
    (
        any::<bool>(),
        vec(line, 1..5),
        prop::sample::select(vec!["", "  ", "        "]),
        any::<bool>(),
    )
        .prop_map(|(newline_first, lines, close, crlf)| {
            let lines: Vec<String> = lines
                .into_iter()
                .map(|(ind, text)| format!("{ind}{text}"))
                .collect();
            let nl = if crlf { "\r\n" } else { "\n" };
            format!(
                "\"\"\"{}{}{nl}{close}\"\"\"",
                if newline_first { nl } else { "" },
                lines.join(nl)
            )
        })
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![8 => plain_str(), 1 => triple_str()]
}

fn var() -> impl Strategy<Value = String> {
    ident().prop_map(|i| format!("${i}"))
}

fn list() -> impl Strategy<Value = Toks> {
    (
        vec(prop_oneof![3 => string(), 1 => var()], 0..4),
        any::<bool>(),
    )
        .prop_map(|(items, trailing)| {
            cat(vec![
                tok("["),
                sep_by(items.into_iter().map(|i| vec![i]).collect(), ",", trailing),
                tok("]"),
            ])
        })
}

fn pattern() -> impl Strategy<Value = Toks> {
    prop_oneof![3 => string().prop_map(|s| vec![s]), 1 => var().prop_map(|v| vec![v]), 1 => list()]
}

fn access() -> impl Strategy<Value = Toks> {
    vec(ident(), 1..4)
        .prop_map(|parts| sep_by(parts.into_iter().map(|p| vec![p]).collect(), ".", false))
}

fn simple_operand() -> impl Strategy<Value = Toks> {
    prop_oneof![
        2 => string().prop_map(|s| vec![s]),
        1 => "[0-9]{1,4}".prop_map(|n| vec![n]),
        1 => prop::sample::select(vec!["true", "false"]).prop_map(tok),
        1 => list(),
        1 => var().prop_map(|v| vec![v]),
        3 => access(),
    ]
}

fn operand() -> impl Strategy<Value = Toks> {
    prop_oneof![
        4 => simple_operand(),
        1 => (access(), vec(simple_operand(), 0..3)).prop_map(|(target, args)| {
            cat(vec![target, tok("("), sep_by(args, ",", false), tok(")")])
        }),
    ]
}

fn comparison() -> impl Strategy<Value = Toks> {
    let op = prop::sample::select(vec![
        "==", "!=", "<=", ">=", "<", ">", "in", "matches", "contains",
    ]);
    (operand(), prop::option::of((op, operand()))).prop_map(|(lhs, rest)| match rest {
        None => lhs,
        Some((op, rhs)) => cat(vec![lhs, tok(op), rhs]),
    })
}

/// `script { … }`: Rhai-looking text with braces inside strings, chars, backtick strings
/// and comments, no trailing whitespace on its lines.
fn script() -> impl Strategy<Value = Toks> {
    let piece = prop::sample::select(vec![
        " x > 1",
        " a.len() == 2",
        "\n    let a = 1;",
        " \"}{\"",
        " '}'",
        " `bt}\nx`",
        " // c } {\n",
        " { y }",
        " ||",
        "\n",
    ]);
    (
        prop::sample::select(vec!["", " ", "\n  "]),
        vec(piece, 0..5),
    )
        .prop_map(|(ws, pieces)| vec![format!("script{ws}{{{}}}", pieces.concat())])
}

fn expr() -> impl Strategy<Value = Toks> {
    let leaf = prop_oneof![8 => comparison(), 1 => script()];
    leaf.prop_recursive(3, 16, 3, |inner| {
        let binop = prop::sample::select(vec!["and", "&&", "or", "||"]);
        prop_oneof![
            (inner.clone(), vec((binop, inner.clone()), 1..3)).prop_map(|(first, rest)| {
                let mut out = first;
                for (op, e) in rest {
                    out.push(op.to_string());
                    out.extend(e);
                }
                out
            }),
            (prop::sample::select(vec!["not", "!"]), inner.clone())
                .prop_map(|(op, e)| cat(vec![tok(op), e])),
            inner.prop_map(|e| cat(vec![tok("("), e, tok(")")])),
        ]
    })
}

fn value() -> impl Strategy<Value = Toks> {
    prop_oneof![
        2 => string().prop_map(|s| vec![s]),
        1 => "[0-9]{1,6}".prop_map(|n| vec![n]),
        1 => prop::sample::select(vec!["true", "false"]).prop_map(tok),
        1 => list(),
        1 => ident().prop_map(|i| vec![i]),
    ]
}

/// `{ key: value, … }`.
fn entries() -> impl Strategy<Value = Toks> {
    (vec((ident(), value()), 0..3), any::<bool>()).prop_map(|(entries, trailing)| {
        let entries = entries
            .into_iter()
            .map(|(k, v)| cat(vec![vec![k, ":".to_string()], v]))
            .collect();
        cat(vec![tok("{"), sep_by(entries, ",", trailing), tok("}")])
    })
}

fn clause() -> impl Strategy<Value = Toks> {
    prop_oneof![
        3 => expr().prop_map(|e| cat(vec![tok("when"), e])),
        2 => expr().prop_map(|e| cat(vec![tok("unless"), e])),
        2 => string().prop_map(|s| vec!["because".to_string(), s]),
        1 => (ident(), entries()).prop_map(|(name, e)| cat(vec![vec!["with".to_string(), name], e])),
    ]
}

fn annotation() -> impl Strategy<Value = Toks> {
    (ident(), prop_oneof![plain_str(), ident()])
        .prop_map(|(name, v)| vec!["@".into(), name, "(".into(), v, ")".into()])
}

fn rule() -> impl Strategy<Value = Toks> {
    (
        vec(annotation(), 0..3),
        effect(),
        ident(),
        vec(ident(), 0..3),
        vec(pattern(), 0..3),
        vec(clause(), 0..5),
    )
        .prop_map(|(anns, effect, domain, ops, patterns, clauses)| {
            cat(vec![
                anns.concat(),
                vec![effect, domain],
                sep_by(ops.into_iter().map(|o| vec![o]).collect(), ",", false),
                sep_by(patterns, ",", false),
                clauses.concat(),
                tok(";"),
            ])
        })
}

fn guide() -> impl Strategy<Value = Toks> {
    (
        vec(annotation(), 0..2),
        string(),
        prop::option::of(vec(pattern(), 1..3)),
        vec(prop_oneof![plain_str(), triple_str()], 0..3),
    )
        .prop_map(|(anns, title, scope, body)| {
            cat(vec![
                anns.concat(),
                vec!["guide".into(), title],
                scope.map_or_else(Vec::new, |s| cat(vec![tok("for"), sep_by(s, ",", false)])),
                tok("{"),
                body,
                tok("}"),
            ])
        })
}

fn detector() -> impl Strategy<Value = Toks> {
    (
        vec(annotation(), 0..3),
        ident(),
        vec(pattern(), 1..3),
        prop::option::of(entries()),
        prop::option::of(string()),
    )
        .prop_map(|(anns, kind, patterns, body, because)| {
            cat(vec![
                anns.concat(),
                vec!["detector".into(), kind],
                sep_by(patterns, ",", false),
                body.unwrap_or_default(),
                because.map_or_else(Vec::new, |b| vec!["because".into(), b]),
                tok(";"),
            ])
        })
}

fn role() -> impl Strategy<Value = Toks> {
    (
        "[a-z_][a-z0-9_-]{0,6}",
        vec(prop_oneof![3 => rule(), 1 => guide()], 0..4),
    )
        .prop_map(|(name, items)| {
            cat(vec![
                vec!["role".into(), name, "{".into()],
                items.concat(),
                tok("}"),
            ])
        })
}

fn rule_ref() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9_.:/-]{1,8}".prop_filter("comment-like", |r: &String| !r.contains("//")),
        1 => plain_str(),
    ]
}

fn test_case() -> impl Strategy<Value = Toks> {
    let request = prop_oneof![
        (ident(), plain_str()).prop_map(|(op, p)| vec!["path".into(), op, p]),
        string().prop_map(|s| vec!["exec".into(), s]),
        list().prop_map(|l| cat(vec![tok("exec"), l])),
        (plain_str(), prop::option::of(entries()))
            .prop_map(|(n, f)| cat(vec![vec!["plugin".into(), n], f.unwrap_or_default()])),
        (list(), prop::option::of(entries())).prop_map(|(l, f)| cat(vec![
            tok("commit"),
            l,
            f.unwrap_or_default()
        ])),
    ];
    (
        request,
        prop::option::of(plain_str()),
        effect(),
        prop::option::of(vec(rule_ref(), 0..3)),
    )
        .prop_map(|(req, role, effect, ids)| {
            cat(vec![
                req,
                role.map_or_else(Vec::new, |r| vec!["as".into(), "role".into(), r]),
                vec!["=>".into(), effect],
                ids.map_or_else(Vec::new, |ids| {
                    cat(vec![
                        tok("("),
                        sep_by(ids.into_iter().map(|i| vec![i]).collect(), ",", false),
                        tok(")"),
                    ])
                }),
                tok(";"),
            ])
        })
}

fn test_block() -> impl Strategy<Value = Toks> {
    (plain_str(), vec(test_case(), 0..4)).prop_map(|(name, cases)| {
        cat(vec![
            vec!["test".into(), name, "{".into()],
            cases.concat(),
            tok("}"),
        ])
    })
}

fn statement() -> impl Strategy<Value = Toks> {
    prop_oneof![
        1 => "[0-9]{1,3}".prop_map(|n| vec!["language".into(), n, ";".into()]),
        2 => (ident(), effect()).prop_map(|(d, e)| vec!["default".into(), d, "=".into(), e, ";".into()]),
        2 => (ident(), prop_oneof![list(), string().prop_map(|s| vec![s])])
            .prop_map(|(n, v)| cat(vec![vec!["let".into(), n, "=".into()], v, tok(";")])),
        6 => rule(),
        2 => detector(),
        2 => guide(),
        2 => role(),
        2 => test_block(),
    ]
}

fn comment_text() -> impl Strategy<Value = String> {
    "[ a-z\"{};/é\\\\]{0,10}"
}

fn separator() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => Just(" ".to_string()),
        4 => Just(String::new()),
        3 => Just("\n".to_string()),
        1 => Just("\n\n".to_string()),
        1 => Just("\n\n\n  ".to_string()),
        1 => Just("\t".to_string()),
        1 => Just("\r\n".to_string()),
        1 => Just("  \n    ".to_string()),
        1 => Just("\u{feff}".to_string()),
        2 => comment_text().prop_map(|t| format!(" //{t}\n")),
        1 => comment_text().prop_map(|t| format!("\n\n  //{t}\n  ")),
        1 => comment_text().prop_map(|t| format!(" //{t}\r\n")),
    ]
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Joins tokens with the separators (cycled). Adjacent words, and adjacent string
/// quotes (`"" "x"` must not become `"""x"`), always get at least a space.
fn join(toks: &[String], seps: &[String]) -> String {
    let sep = |i: usize| seps.get(i % seps.len().max(1)).map_or(" ", String::as_str);
    let mut out = String::from(sep(0));
    for (i, t) in toks.iter().enumerate() {
        if i > 0 {
            let s = sep(i);
            let prev = out.chars().last();
            let next = t.chars().next();
            let glue_needed = match (prev, next) {
                (Some(a), Some(b)) => (is_word(a) && is_word(b)) || (a == '"' && b == '"'),
                _ => false,
            };
            out.push_str(if s.is_empty() && glue_needed { " " } else { s });
        }
        out.push_str(t);
    }
    out.push_str(sep(toks.len() + 1));
    out
}

fn policy() -> impl Strategy<Value = String> {
    (vec(statement(), 0..8), vec(separator(), 1..48))
        .prop_map(|(stmts, seps)| join(&stmts.concat(), &seps))
}

/// Token soup: mostly invalid, sometimes valid, always a chance to panic.
fn soup() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "deny",
        "allow",
        "ask",
        "exec",
        "path",
        "write",
        ",",
        ";",
        "\"a\"",
        "\"\"\"\n x\n\"\"\"",
        "$x",
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        "when",
        "unless",
        "because",
        "with",
        "and",
        "&&",
        "||",
        "!",
        "not",
        "==",
        "in",
        "role",
        "r",
        "test",
        "=>",
        "guide",
        "for",
        "let",
        "=",
        "default",
        "language",
        "1",
        "@",
        "id",
        "script {x}",
        "// c\n",
        "\n",
        "as",
        ":",
        ".",
        "\"\\u{0}\"",
    ]);
    vec((word, prop::sample::select(vec!["", " ", "\n"])), 0..40)
        .prop_map(|ws| ws.into_iter().map(|(w, s)| format!("{w}{s}")).collect())
}

proptest! {
    #![proptest_config(Config { cases: 256, failure_persistence: None, ..Config::default() })]

    #[test]
    fn random_policies_format_canonically(src in policy()) {
        let parsed = parse(&src);
        prop_assert!(!parsed.has_errors(), "generator produced an invalid policy:\n{}\n--\n{:#?}", src, parsed.diagnostics);
        check_canonical(&src);
    }

    #[test]
    fn arbitrary_text_never_panics(src in any::<String>()) {
        let _ = format_source(&src);
    }

    #[test]
    fn token_soup_never_panics(src in soup()) {
        if format_source(&src).is_ok() {
            check_canonical(&src);
        }
    }
}

#[test]
fn override_let_round_trips() {
    let src = "language 1;\noverride   let shells = [$shells,\"deno\"];\nlet overrides = \"x\";\n";
    let out = fmt(src);
    assert!(
        out.contains("override let shells = [$shells, \"deno\"];"),
        "{out}"
    );
    // `overrides` is an ordinary name: the keyword needs a word boundary.
    assert!(out.contains("let overrides = \"x\";"), "{out}");
    let parsed = parse(&out);
    let lets: Vec<bool> = parsed
        .file
        .statements
        .iter()
        .filter_map(|s| match s {
            contextos_grammar::ast::Statement::Let(l) => Some(l.overrides),
            _ => None,
        })
        .collect();
    assert_eq!(lets, [true, false]);
    check_canonical(&out);
}

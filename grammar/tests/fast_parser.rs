//! Differential tests: the production parser (`src/parser/`) against the oracle, pest
//! running the normative grammar (`oracle/policy.pest`). On every input both must accept
//! or both reject; accepted, they build the same AST; rejected, they report the same
//! diagnostics (code, span, message) and keep the same statements.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

mod oracle;

use contextos_grammar::lexical::scan;
use contextos_grammar::{finish, parse, parse_unscanned, MAX_NESTING};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::path::{Path, PathBuf};

/// Both parsers on `src`: they must agree. Returns whether `src` is valid. The production
/// parser run before its lexical scan (as a cold compile runs it, the scan on another
/// thread) must also give exactly what `parse` gives.
fn agree(src: &str, what: &str) -> bool {
    let fast = parse(src);
    let split = finish(src, parse_unscanned(src), scan(src, MAX_NESTING));
    assert_eq!(
        (&split.file, &split.diagnostics, &split.comments),
        (&fast.file, &fast.diagnostics, &fast.comments),
        "{what}: the parse before the scan differs:\n---\n{src}\n---"
    );
    let pest = oracle::parse_pest(src);
    assert_eq!(
        fast.has_errors(),
        pest.has_errors(),
        "{what}: only one parser rejects:\n---\n{src}\n---\nfast: {:#?}\npest: {:#?}",
        fast.diagnostics,
        pest.diagnostics
    );
    if let (Some(f), Some(p)) = (fast.diagnostics.first(), pest.diagnostics.first()) {
        assert_eq!(
            (f.code, f.span),
            (p.code, p.span),
            "{what}: first error differs:\n---\n{src}\n---\nfast: {f:#?}\npest: {p:#?}"
        );
    }
    assert_eq!(
        fast.diagnostics, pest.diagnostics,
        "{what}: diagnostics differ:\n---\n{src}\n---"
    );
    assert_eq!(
        fast.file, pest.file,
        "{what}: AST differs:\n---\n{src}\n---"
    );
    !fast.has_errors()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn policy_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.extension().is_some_and(|e| e == "policy"));
    out.sort();
    out
}

// ---------------------------------------------------------------------------
// (a) corpus: fixtures, stdlib, book
// ---------------------------------------------------------------------------

#[test]
fn every_fixture_and_stdlib_file_parses_alike() {
    let r = root();
    let mut files = policy_files(&r.join("grammar/tests/fixtures"));
    files.extend(policy_files(&r.join("grammar/tests/fixtures/format")));
    files.extend(policy_files(&r.join("stdlib-policies/policies")));
    assert!(files.len() >= 5, "fixtures not found: {files:?}");
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        assert!(
            agree(&src, &f.display().to_string()),
            "{} has errors",
            f.display()
        );
    }
}

fn book_blocks() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dir = root().join("book/src");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut block: Option<String> = None;
        for (n, line) in text.lines().enumerate() {
            match &mut block {
                None if line.trim_start().starts_with("```policy") => block = Some(String::new()),
                Some(b) if line.trim_start().starts_with("```") => {
                    out.push((format!("{}:{}", f.display(), n + 1), std::mem::take(b)));
                    block = None;
                }
                Some(b) => {
                    b.push_str(line);
                    b.push('\n');
                }
                None => {}
            }
        }
    }
    out
}

#[test]
fn every_book_block_parses_alike() {
    let blocks = book_blocks();
    assert!(blocks.len() >= 20, "book blocks not found");
    let mut valid = 0;
    for (what, src) in &blocks {
        if agree(src, what) {
            valid += 1;
        }
    }
    assert!(valid >= 10, "only {valid} book blocks parse");
}

// ---------------------------------------------------------------------------
// (d) hand-written tricky cases
// ---------------------------------------------------------------------------

const TRICKY: &[&str] = &[
    "",
    "   \n\t\r\n",
    "// only a comment",
    "// one\n// two\n",
    "\u{FEFF}language 1;",
    "language 1;\r\ndefault exec = ask;\r\n",
    "language1;",
    "language 4294967295;",
    "defaultexec=allow;",
    "let x = \"scalar\";",
    "let x = [];",
    "let x = [\"a\", $b,];",
    "letx=[\"a\"];",
    "deny exec whenever;",
    "deny exec run whenever;",
    "deny exec \"x\" when android;",
    "deny exec \"x\" when notx;",
    "deny exec \"x\" when not x;",
    "deny exec \"x\" when !x;",
    "deny exec \"x\" when ! ! x;",
    "deny exec \"x\" when a != b;",
    "deny exec \"x\" when a!=b;",
    "deny exec \"x\" when not not not (a) ;",
    "deny exec \"x\" when a and b or c && d || e;",
    "deny exec \"x\" when a andb;",
    "deny exec \"x\" when (a or b) and (c);",
    "deny exec \"x\" when a.b.c // trailing\n ;",
    "deny exec \"x\" when a . b // c\n . c == 1 // d\n because \"x\";",
    "deny exec \"x\" when x in [\"a\", \"b\",] and y matches \"*\" and z contains \"q\";",
    "deny exec \"x\" when x inside;",
    "deny exec \"x\" when x in_y;",
    "deny exec \"x\" when f() and g(1, \"a\", true, $x, [\"l\"], h.i(j)) ;",
    "deny exec \"x\" when f (1) ;",
    "deny exec \"x\" when f // c\n (1) ;",
    "deny exec \"x\" when 9223372036854775807 > 1;",
    "deny exec \"x\" when 9223372036854775808 > 1;",
    "deny exec \"x\" when true;",
    "deny exec \"x\" when truex;",
    "deny exec \"x\" when true.x;",
    "deny exec \"x\" when a <= 1 and b >= 2 and c < 3 and d > 4 and e == 5;",
    "deny exec \"x\" when script { let s = \"}\"; // }\n s == \"{\" } because \"x\";",
    "deny exec \"x\" when script{ `}` + '}' + '\\'' + { {} } / 2 };",
    "deny exec \"x\" when script \r\n { x };",
    "deny exec \"x\" when scriptx;",
    "deny exec \"x\" when script;",
    "deny exec \"x\" when script { \"unterminated\n\" };",
    "deny exec \"x\" whenscript { x };",
    "deny exec \"x\" when script \u{FEFF}{ x };",
    "deny exec \"x\" when !script { x } && script {y};",
    "deny exec \"x\" because \"caf\u{e9} \u{1F600} \\u{1F600} \\\"q\\\" \\\\ \\n\\t\\r\\0\";",
    "deny exec \"x\" because \"\\u{D800}\";",
    "deny exec \"x\" because \"\\q\";",
    "deny exec \"x\" because \"\\u{1234567}\";",
    "deny exec \"x\" because \"\"\"\n    a\n      b\n    \"\"\";",
    "deny exec \"x\" because \"\"\"\"\"\";",
    "deny exec \"\"\"x\"\"\" because \"\";",
    "deny exec \"\" ;",
    "deny exec;",
    "deny exec run, read;",
    "deny exec run, read // c\n ;",
    "deny exec run // c\n \"x\" // d\n ;",
    "deny exec $x, [\"a\", $y], \"z\" // c\n;",
    "deny exec \"x\" with sandbox { network: none, memory: \"2GiB\", n: 3, b: false, l: [\"a\"], } ;",
    "deny exec \"x\" with sandbox {};",
    "deny exec \"x\" withsandbox{};",
    "@id(\"a\") @severity(error) deny exec \"x\";",
    "@ id ( x ) deny exec \"x\";",
    "@id(\"a\") guide \"t\" { }",
    "@id(\"a\") guide \"t\" for \"a\", $b, [\"c\"] { \"x\" \"\"\"\n  y\n  \"\"\" }",
    "guide\"t\"for\"a\"{\"b\"}",
    "role r-1_x { deny exec \"x\"; guide \"g\" { } allow path read \"a\"; }",
    "roler{}",
    "role script { }",
    "role a-script { }",
    "role when { }",
    "test \"t\" { }",
    "test \"t\" {\n  path write \"a//b\" => deny(a//b\n  );\n}",
    "test \"t\" { path write \"a\" => deny(a/b, \"c\", x:y.z-1); }",
    "test \"t\" { path write \"a\" => deny(); }",
    "test \"t\" { path write \"a\" => deny; }",
    "test \"t\" { path write \"a\" => deny (); }",
    "test \"t\" { exec \"ls -l\" as role \"admin\" => allow; }",
    "test \"t\" { exec [\"ls\", \"-l\"] asrole\"admin\" => allow; }",
    "test \"t\" { plugin \"p\" { signed: true, n: 1 } => ask; plugin \"q\" => ask; }",
    "test \"t\" { commit [\"a\", \"b\"] { message: \"m\", } => deny(x); commit [] => allow; }",
    "test \"t\" { pathwrite\"a\"=>deny; }",
    "test \"t\" { path write \"a\" => denyx; }",
    "deny exec \"x\" when ((((a))));",
    "deny exec \"x\" when a // c",
    "deny exec \"x\"; // c",
    "deny exec \"x\" when a\u{FEFF};",
    "deny exec \"x\" when a \u{FEFF} and b\u{FEFF} ;",
    "deny exec \"x\" when a // c\u{a0}\n;",
    "deny exec \"x\" when \"a\" == \"b\" // c\n or \"c\"\n;",
    "deny exec \"x\" when a\0;",
    "deny exec \"a\0b\";",
    "allow ask \"x\";",
    "ask exec \"x\" unless a because \"b\" when c with s {} ;",
    "detector secret \"\"\"\\b(AKIA[A-Z2-7]{16})\\b\"\"\" { keywords: [\"akia\"], entropy: \"3.0\", } because \"k\";",
    "@id(\"a\")@severity(warning)detector file\"**/.env\",$x,[\"a\",$y]{exclude:[],lookback:3,multiline:true,x:y}because\"b\";",
    "detector file \"a\" {} ;",
    "detector file \"a\" // c\n { // d\n } // e\n because // f\n \"b\" // g\n ;",
    "detectorsecret\"a\";",
    "detector stub \"\"\"\n    x\n  \"\"\" {};",
];

#[test]
fn tricky_cases_agree() {
    let mut accepted = 0;
    for src in TRICKY {
        if agree(src, src) {
            accepted += 1;
        }
    }
    assert!(accepted > 60, "only {accepted} tricky cases accepted");
}

#[test]
fn tricky_cases_that_pest_rejects_are_rejected_alike() {
    for src in [
        "deny exec \"x\" when true.x;",
        "deny exec \"x\" when script;",
        "deny exec \"x\" because \"\\q\";",
        "deny exec \"x\" because \"\\u{D800}\";",
        "deny exec \"x\" when 9223372036854775808 > 1;",
        "language 4294967296;",
        "test \"t\" { path write \"a\" => denyx; }",
        "deny exec \"x\" when a // c",
        "deny exec whenx.y;",
        "test \"t\" { path write \"a\" => deny(a, ); }",
        "deny exec \"x\" when f(a,);",
        "detector file;",
        "detector \"a\";",
        "detector file \"a\" because \"b\" { x: 1 };",
        "detector file \"a\" { x: 1, , };",
        "detector file \"a\" { x };",
        "detector when \"a\";",
        "detector file \"a\"",
        "role r { detector file \"a\"; }",
    ] {
        assert!(!agree(src, src), "accepted {src:?}");
    }
}

/// Near misses whose error position or recovery is easy to get wrong: where pest's
/// attempt bookkeeping ends up, build errors next to syntax errors, backtracking over a
/// part that had an error.
const TRICKY_ERRORS: &[&str] = &[
    "x",
    "deny exec \"x\" when a. ;",
    "deny exec \"x\" when a.b.;",
    "deny exec \"x\" when f(1,;",
    "deny exec \"x\" when f(99999999999999999999;",
    "deny exec \"x\" when f(99999999999999999999);",
    "deny exec \"x\" when ;",
    "deny exec \"x\" when (a;",
    "deny exec \"x\" when a ==;",
    "deny exec \"x\" when not;",
    "deny exec \"x\" when $;",
    "deny exec \"x\" when script { \"a\n\" };",
    "deny exec [\"a\", ] \"b\";",
    "deny exec \"a\", ;",
    "deny exec a, ;",
    "deny exec \"a\" with s { n: 1, , };",
    "deny exec \"a\" with s { n: 99999999999999999999 };\ndeny exec \"b\" when;",
    "let x = \"\\u{D800}\";\nlet y = ;\nlanguage 99999999999;",
    "language 4294967296;\ndefault exec = nope;",
    "test \"t\" { plugin \"p\" { n: 99999999999999999999 } => deny; }",
    "test \"t\" { plugin \"p\" { n: 1 => deny; }",
    "test \"t\" { path write \"a\" => deny(\"\\u{D800}\"; }",
    "test \"t\" { path write \"a\" as \"r\" => deny; }",
    "test \"t\" { path write \"a\" => ; }",
    "role r { detector file \"a\"; deny exec \"x\" because; }",
    "role r { deny exec \"x\"; } role s { guide \"g\" { x } }",
    "@id(\"a\") ;",
    "@id(\"a\"",
    "guide \"g\" for { }",
    "detector file \"a\" { x: 1 } because;",
    "deny exec \"x\" because \"\"\"open",
    "deny exec \"x\"; junk; allow exec \"y\";",
];

#[test]
fn tricky_errors_agree() {
    for src in TRICKY_ERRORS {
        assert!(!agree(src, src), "accepted {src:?}");
    }
}

#[test]
fn nesting_limits_agree() {
    for n in [10usize, 15, 16, 17, 30, 63, 64, 65, 70] {
        let parens = format!("deny exec \"x\" when {}a{};", "(".repeat(n), ")".repeat(n));
        agree(&parens, "input");
        let nots = format!("deny exec \"x\" when {}a;", "not ".repeat(n));
        agree(&nots, "input");
        let bangs = format!("deny exec \"x\" when {}a;", "!".repeat(n));
        agree(&bangs, "input");
        let lists = format!(
            "deny exec \"x\" when f({}1{});",
            "g(".repeat(n),
            ")".repeat(n)
        );
        agree(&lists, "input");
        let mixed = format!("deny exec \"x\" when {}a{};", "!(".repeat(n), ")".repeat(n));
        agree(&mixed, "input");
        let braces = format!(
            "deny exec \"x\" when script {{ {}{} }};",
            "{".repeat(n),
            "}".repeat(n)
        );
        if n <= MAX_NESTING {
            agree(&braces, "input");
        } else {
            // The one deliberate difference: the grammar puts no bound on braces inside
            // a Rhai body; the parser refuses a body nested this deep as hostile.
            let out = parse(&braces);
            assert_eq!(out.diagnostics[0].code, "E0001", "{n} braces");
        }
        let role = format!(
            "role r {{ deny exec \"x\" with s {{ a: {}\"x\"{} }}; }}",
            "[".repeat(n.min(1)),
            "]".repeat(n.min(1))
        );
        agree(&role, "input");
    }
    // Up to the limits, both accept.
    let ok = format!(
        "deny exec \"x\" when {}a{};",
        "(".repeat(15),
        ")".repeat(15)
    );
    assert!(agree(&ok, "15 parens"));
    let ok = format!("deny exec \"x\" when {}a;", "not ".repeat(60));
    assert!(agree(&ok, "60 nots"));
}

// ---------------------------------------------------------------------------
// (b) generated valid policies
// ---------------------------------------------------------------------------

/// Cases per property (`FAST_PARSER_CASES` raises it for a soak run).
fn cases() -> u32 {
    std::env::var("FAST_PARSER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// A tiny deterministic generator driven by proptest-chosen seeds.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51afd7ed558ccd);
        x ^ (x >> 29)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Optional whitespace/comments between tokens.
    fn ws(&mut self) -> String {
        if self.chance(60) {
            return String::new();
        }
        self.sep()
    }
    /// Mandatory separation between two word tokens.
    fn sep(&mut self) -> String {
        self.pick(&[
            " ",
            " ",
            " ",
            "\n    ",
            "\t",
            "\r\n",
            "  // comment\n  ",
            "//\n",
            " // c \u{a0}\n",
            "\u{FEFF}",
            " \u{FEFF} ",
            "\n\n",
        ])
        .to_string()
    }

    fn ident(&mut self) -> String {
        self.pick(&[
            "a",
            "path",
            "exec",
            "whenever",
            "android",
            "notx",
            "or_",
            "in2",
            "_x",
            "for",
            "as",
            "role",
            "truex",
            "scriptx",
            "language",
            "deny_",
            "allowed",
            "withx",
            "becausey",
            "ask2",
            "x9",
            "containsz",
        ])
        .to_string()
    }

    fn plain_string(&mut self) -> String {
        let body = self.pick(&[
            "abc",
            "a\\\"b",
            "\\n\\t\\r\\0\\\\",
            "\\u{1F600}x\\u{e9}",
            "ünï \u{1F600}",
            "//not a comment",
            "{ ( [",
            "",
            " a ",
            "**/*.pem",
            "a\rb",
            "'`",
        ]);
        format!("\"{body}\"")
    }

    fn string(&mut self) -> String {
        if self.chance(15) {
            let body = self.pick(&[
                "\n    line one\n      line two\n    ",
                "inline",
                "\r\n  a\r\n\r\n  b  \r\n",
                "\n\t\tx\n\n",
                "",
                "\"quoted\" and \"\"two\"\" x",
            ]);
            format!("\"\"\"{body}\"\"\"")
        } else {
            self.plain_string()
        }
    }

    fn var(&mut self) -> String {
        format!("${}", self.ident())
    }

    fn list(&mut self) -> String {
        let n = self.below(4);
        let mut s = String::from("[");
        s += &self.ws();
        for i in 0..n {
            if i > 0 {
                s += &self.ws();
                s += ",";
                s += &self.ws();
            }
            if self.chance(70) {
                s += &self.string();
            } else {
                s += &self.var();
            }
        }
        if n > 0 && self.chance(30) {
            s += &self.ws();
            s += ",";
        }
        s += &self.ws();
        s += "]";
        s
    }

    fn access(&mut self) -> String {
        let mut s = self.ident();
        for _ in 0..self.below(3) {
            s += &self.ws();
            s += ".";
            s += &self.ws();
            s += &self.ident();
        }
        s
    }

    fn operand(&mut self, depth: usize) -> String {
        match self.below(if depth > 2 { 7 } else { 8 }) {
            0 => self.string(),
            1 => self.below(100_000).to_string(),
            2 => self.pick(&["true", "false"]).to_string(),
            3 => self.list(),
            4 => self.var(),
            5 | 6 => self.access(),
            _ => {
                let mut s = self.access();
                s += &self.ws();
                s += "(";
                s += &self.ws();
                let n = self.below(3);
                for i in 0..n {
                    if i > 0 {
                        s += &self.ws();
                        s += ",";
                        s += &self.ws();
                    }
                    s += &self.operand(depth + 1);
                }
                s += &self.ws();
                s += ")";
                s
            }
        }
    }

    fn script(&mut self) -> String {
        let body = self.pick(&[
            " argv.len() > 64 || argv.contains(\"--no-verify\") ",
            "\n    let s = \"}\"; // } brace\n    s == `{` && '}' != \"\\\"\" / 2\n",
            "",
            " { let x = { 1 }; x } ",
            " x /* not a comment */ ",
            " '\\'' ",
        ]);
        let gap = self.pick(&["", " ", "\n", "\t\r\n"]);
        format!("script{gap}{{{body}}}")
    }

    fn atom(&mut self, depth: usize) -> String {
        match self.below(if depth > 3 { 8 } else { 10 }) {
            0 => self.script(),
            1..=4 => self.operand(depth),
            5..=7 => {
                let lhs = self.operand(depth);
                let op = self.pick(&[
                    "==", "!=", "<", "<=", ">", ">=", "in", "matches", "contains",
                ]);
                let word = op.chars().all(|c| c.is_ascii_alphabetic());
                let (a, b) = if word {
                    (self.sep(), self.sep())
                } else {
                    (self.ws(), self.ws())
                };
                let rhs = self.operand(depth);
                format!("{lhs}{a}{op}{b}{rhs}")
            }
            _ => {
                let (a, b) = (self.ws(), self.ws());
                let inner = self.expr(depth + 1);
                format!("({a}{inner}{b})")
            }
        }
    }

    fn unary(&mut self, depth: usize) -> String {
        let mut s = String::new();
        for _ in 0..self.below(3) {
            if self.chance(50) {
                s += "not";
                s += &self.sep();
            } else {
                s += "!";
                s += &self.ws();
            }
        }
        s += &self.atom(depth);
        s
    }

    fn and_expr(&mut self, depth: usize) -> String {
        let mut s = self.unary(depth);
        for _ in 0..self.below(3) {
            if self.chance(50) {
                s += &self.sep();
                s += "and";
                s += &self.sep();
            } else {
                s += &self.ws();
                s += "&&";
                s += &self.ws();
            }
            s += &self.unary(depth);
        }
        s
    }

    fn expr(&mut self, depth: usize) -> String {
        let mut s = self.and_expr(depth);
        for _ in 0..self.below(3) {
            if self.chance(50) {
                s += &self.sep();
                s += "or";
                s += &self.sep();
            } else {
                s += &self.ws();
                s += "||";
                s += &self.ws();
            }
            s += &self.and_expr(depth);
        }
        s
    }

    fn pattern(&mut self) -> String {
        match self.below(5) {
            0 => self.var(),
            1 => self.list(),
            _ => self.string(),
        }
    }

    fn patterns(&mut self) -> String {
        let mut s = self.pattern();
        for _ in 0..self.below(3) {
            s += &self.ws();
            s += ",";
            s += &self.ws();
            s += &self.pattern();
        }
        s
    }

    fn obl_value(&mut self) -> String {
        match self.below(5) {
            0 => self.string(),
            1 => self.below(1000).to_string(),
            2 => self.pick(&["true", "false"]).to_string(),
            3 => self.list(),
            _ => self.ident(),
        }
    }

    fn obligations(&mut self) -> String {
        let mut s = String::from("{");
        s += &self.ws();
        let n = self.below(4);
        for i in 0..n {
            if i > 0 {
                s += &self.ws();
                s += ",";
                s += &self.ws();
            }
            s += &self.ident();
            s += &self.ws();
            s += ":";
            s += &self.ws();
            s += &self.obl_value();
        }
        if n > 0 && self.chance(30) {
            s += &self.ws();
            s += ",";
        }
        s += &self.ws();
        s += "}";
        s
    }

    fn annotations(&mut self) -> String {
        let mut s = String::new();
        for _ in 0..self.below(3) {
            s += "@";
            s += &self.ws();
            s += &self.ident();
            s += &self.ws();
            s += "(";
            s += &self.ws();
            if self.chance(50) {
                s += &self.string();
            } else {
                s += &self.ident();
            }
            s += &self.ws();
            s += ")";
            s += &self.sep();
        }
        s
    }

    fn rule(&mut self) -> String {
        let mut s = self.annotations();
        s += self.pick(&["allow", "ask", "deny"]);
        s += &self.sep();
        s += &self.ident();
        let with_ops = self.chance(50);
        if with_ops {
            s += &self.sep();
            s += &self.ident();
            for _ in 0..self.below(3) {
                s += &self.ws();
                s += ",";
                s += &self.ws();
                s += &self.ident();
            }
        }
        if self.chance(70) {
            s += &self.sep();
            s += &self.patterns();
        }
        for _ in 0..self.below(4) {
            s += &self.sep();
            match self.below(4) {
                0 => {
                    s += "when";
                    s += &self.sep();
                    s += &self.expr(0);
                }
                1 => {
                    s += "unless";
                    s += &self.sep();
                    s += &self.expr(0);
                }
                2 => {
                    s += "with";
                    s += &self.sep();
                    s += &self.ident();
                    s += &self.ws();
                    s += &self.obligations();
                }
                _ => {
                    s += "because";
                    s += &self.sep();
                    s += &self.string();
                }
            }
        }
        s += &self.ws();
        s += ";";
        s
    }

    fn guide(&mut self) -> String {
        let mut s = self.annotations();
        s += "guide";
        s += &self.sep();
        s += &self.string();
        if self.chance(50) {
            s += &self.sep();
            s += "for";
            s += &self.sep();
            s += &self.patterns();
        }
        s += &self.ws();
        s += "{";
        for _ in 0..self.below(3) {
            s += &self.ws();
            s += &self.string();
        }
        s += &self.ws();
        s += "}";
        s
    }

    fn detector(&mut self) -> String {
        let mut s = self.annotations();
        s += "detector";
        s += &self.sep();
        s += self.pick(&["secret", "file", "stub", "x_1"]);
        s += &self.sep();
        s += &self.patterns();
        if self.chance(60) {
            s += &self.ws();
            s += &self.obligations();
        }
        if self.chance(60) {
            s += &self.ws();
            s += "because";
            s += &self.sep();
            s += &self.string();
        }
        s += &self.ws();
        s += ";";
        s
    }

    fn test_case(&mut self) -> String {
        let mut s = match self.below(5) {
            0 => format!(
                "path{}{}{}{}",
                self.sep(),
                self.ident(),
                self.sep(),
                self.string()
            ),
            1 => format!("exec{}{}", self.sep(), self.string()),
            2 => format!("exec{}{}", self.ws(), self.list()),
            3 => {
                let mut s = format!("plugin{}{}", self.sep(), self.string());
                if self.chance(50) {
                    s += &self.ws();
                    s += &self.obligations();
                }
                s
            }
            _ => {
                let mut s = format!("commit{}{}", self.ws(), self.list());
                if self.chance(50) {
                    s += &self.ws();
                    s += &self.obligations();
                }
                s
            }
        };
        if self.chance(30) {
            s += &self.sep();
            s += "as";
            s += &self.sep();
            s += "role";
            s += &self.sep();
            s += &self.string();
        }
        s += &self.ws();
        s += "=>";
        s += &self.ws();
        s += self.pick(&["allow", "ask", "deny"]);
        if self.chance(50) {
            s += &self.ws();
            s += "(";
            let n = self.below(3);
            for i in 0..n {
                s += &self.ws();
                if i > 0 {
                    s += ",";
                    s += &self.ws();
                }
                if self.chance(30) {
                    s += &self.string();
                } else {
                    s += self.pick(&["a", "no-secret-writes", "x.y:z/w", "a/b", "-1", "_"]);
                }
            }
            s += &self.ws();
            s += ")";
        }
        s += &self.ws();
        s += ";";
        s
    }

    fn statement(&mut self) -> String {
        match self.below(10) {
            0 => format!("language{}{};", self.sep(), self.below(5)),
            1 => format!(
                "default{}{}{}={}{}{};",
                self.sep(),
                self.ident(),
                self.ws(),
                self.ws(),
                self.pick(&["allow", "ask", "deny"]),
                self.ws()
            ),
            2 => {
                let value = if self.chance(50) {
                    self.list()
                } else {
                    self.string()
                };
                format!(
                    "let{}{}{}={}{}{};",
                    self.sep(),
                    self.ident(),
                    self.ws(),
                    self.ws(),
                    value,
                    self.ws()
                )
            }
            3 => {
                let name = self.pick(&["reviewer", "r-1", "_x", "a-b-c", "when"]);
                let mut s = format!("role{}{}{}{{", self.sep(), name, self.ws());
                for _ in 0..self.below(3) {
                    s += &self.ws();
                    if self.chance(70) {
                        s += &self.rule();
                    } else {
                        s += &self.guide();
                    }
                }
                s += &self.ws();
                s += "}";
                s
            }
            4 => {
                let mut s = format!("test{}{}{}{{", self.sep(), self.string(), self.ws());
                for _ in 0..self.below(4) {
                    s += &self.ws();
                    s += &self.test_case();
                }
                s += &self.ws();
                s += "}";
                s
            }
            5 => self.guide(),
            6 => self.detector(),
            _ => self.rule(),
        }
    }

    fn policy(&mut self) -> String {
        let mut s = String::new();
        if self.chance(10) {
            s += "\u{FEFF}";
        }
        s += &self.ws();
        for _ in 0..self.below(6) {
            s += &self.statement();
            s += &self.sep();
        }
        if self.chance(20) {
            s += "// trailing comment";
        }
        s
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn generated_policies_agree(seed in any::<u64>()) {
        let src = Gen(seed).policy();
        agree(&src, &format!("seed {seed}"));
    }
}

#[test]
fn the_generator_produces_valid_policies() {
    let mut valid = 0;
    for seed in 0..2000u64 {
        let src = Gen(seed).policy();
        if agree(&src, &format!("seed {seed}")) {
            valid += 1;
        }
    }
    assert!(
        valid >= 1900,
        "only {valid} of 2000 generated policies are valid"
    );
}

#[test]
fn mutated_policies_are_often_accepted() {
    // Sanity check that the agreement tests below exercise accepted input too.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut accepted = 0;
    for _ in 0..2000 {
        let src = mutated().new_tree(&mut runner).unwrap().current();
        if agree(&src, "input") {
            accepted += 1;
        }
    }
    assert!(
        accepted >= 100,
        "only {accepted} of 2000 mutated inputs accepted"
    );
}

// ---------------------------------------------------------------------------
// (c) arbitrary input and token soup: both parsers accept, reject and recover alike
// ---------------------------------------------------------------------------

const TOKENS: &[&str] = &[
    "language",
    "default",
    "let",
    "role",
    "test",
    "guide",
    "for",
    "allow",
    "ask",
    "deny",
    "when",
    "unless",
    "because",
    "with",
    "and",
    "or",
    "not",
    "script",
    "in",
    "matches",
    "contains",
    "true",
    "false",
    "path",
    "exec",
    "plugin",
    "commit",
    "as",
    "whenever",
    "android",
    "notx",
    "x",
    "a.b",
    "f",
    "_",
    "-",
    ".",
    ":",
    "/",
    "//",
    "//c\n",
    "\n",
    " ",
    "\t",
    "\r\n",
    "\u{FEFF}",
    "$x",
    "$",
    "@",
    "@id",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "=",
    "==",
    "!=",
    "!",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "=>",
    "0",
    "42",
    "99999999999999999999",
    "\"",
    "\"a\"",
    "\"\\n\"",
    "\"\\u{41}\"",
    "\"\\q\"",
    "\"\"\"",
    "\"\"\"\n  t\n  \"\"\"",
    "script {",
    "script{ } ",
    "'",
    "`",
    "\\",
    "é",
    "\u{1F600}",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..40).prop_map(|t| t.concat())
}

/// Token soup seeded with a valid statement, so that most inputs get far into the parser.
fn mutated() -> impl Strategy<Value = String> {
    (any::<u64>(), soup(), any::<prop::sample::Index>()).prop_map(|(seed, junk, at)| {
        let src = Gen(seed).policy();
        let mut cut = at.index(src.len() + 1);
        while !src.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}{}{}", &src[..cut], junk, &src[cut..])
    })
}

/// A valid policy with a few small edits: a character deleted, a token inserted or a
/// character swapped for another one. Most results are near misses of the grammar.
fn edited() -> impl Strategy<Value = String> {
    (
        any::<u64>(),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0..3u8,
                prop::sample::select(TOKENS),
            ),
            1..4,
        ),
    )
        .prop_map(|(seed, edits)| {
            let mut src = Gen(seed).policy();
            for (at, kind, token) in edits {
                let mut i = at.index(src.len() + 1);
                while !src.is_char_boundary(i) {
                    i -= 1;
                }
                let next = src[i..].chars().next().map_or(i, |c| i + c.len_utf8());
                match kind {
                    0 => src.replace_range(i..next, ""),
                    1 => src.insert_str(i, token),
                    _ => src.replace_range(i..next, token),
                }
            }
            src
        })
}

#[test]
fn edited_policies_are_often_accepted() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut accepted = 0;
    for _ in 0..2000 {
        let src = edited().new_tree(&mut runner).unwrap().current();
        if agree(&src, "input") {
            accepted += 1;
        }
    }
    assert!(
        accepted >= 200,
        "only {accepted} of 2000 edited inputs accepted"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn edited_policies_are_sound(src in edited()) {
        agree(&src, "input");
    }

    #[test]
    fn arbitrary_strings_are_sound(src in "\\PC{0,80}") {
        agree(&src, "input");
    }

    #[test]
    fn token_soup_is_sound(src in soup()) {
        agree(&src, "input");
    }

    #[test]
    fn statement_soup_is_sound(
        stmts in prop::collection::vec(
            (prop::sample::select(&["deny exec \"x\" when ", "test \"t\" { ", "allow path ",
                "let x = ", "role r { ", "guide \"g\" ", "@id(x) "][..]), soup()),
            1..4,
        )
    ) {
        let src: String = stmts.into_iter().map(|(a, b)| format!("{a}{b}")).collect();
        agree(&src, "input");
    }

    #[test]
    fn mutated_policies_are_sound(src in mutated()) {
        agree(&src, "input");
    }
}

// ---------------------------------------------------------------------------
// (e) corrupted fixtures: near misses of real policies, both parsers reject alike
// ---------------------------------------------------------------------------

/// The fixture and stdlib policies, each split into tokens.
fn fixture_tokens() -> &'static [Vec<String>] {
    static TOKENS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    TOKENS.get_or_init(|| {
        let r = root();
        let mut files = policy_files(&r.join("grammar/tests/fixtures"));
        files.extend(policy_files(&r.join("grammar/tests/fixtures/format")));
        files.extend(policy_files(&r.join("stdlib-policies/policies")));
        files
            .iter()
            .map(|f| tokenize(&std::fs::read_to_string(f).unwrap()))
            .collect()
    })
}

/// A rough lexer: whitespace, comments, strings, words, two-character operators and
/// single characters. Concatenating the tokens gives the source back.
fn tokenize(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(c) = rest.chars().next() {
        let len = if c.is_whitespace() {
            rest.find(|c: char| !c.is_whitespace())
                .unwrap_or(rest.len())
        } else if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if let Some(body) = rest.strip_prefix("\"\"\"") {
            body.find("\"\"\"").map_or(rest.len(), |n| n + 6)
        } else if c == '"' {
            let mut end = rest.len();
            let mut escaped = false;
            for (i, ch) in rest.char_indices().skip(1) {
                match ch {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => {
                        end = i + 1;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            end
        } else if c.is_ascii_alphanumeric() || c == '_' {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(rest.len())
        } else if ["==", "!=", "<=", ">=", "&&", "||", "=>"]
            .iter()
            .any(|op| rest.starts_with(op))
        {
            2
        } else {
            c.len_utf8()
        };
        out.push(rest[..len].to_string());
        rest = &rest[len..];
    }
    out
}

/// A fixture with one to three tokens deleted, duplicated or swapped with another.
fn corrupted() -> impl Strategy<Value = String> {
    (
        any::<prop::sample::Index>(),
        prop::collection::vec(
            (
                0..3u8,
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
            ),
            1..4,
        ),
    )
        .prop_map(|(file, edits)| {
            let files = fixture_tokens();
            let mut tokens = files[file.index(files.len())].clone();
            for (kind, a, b) in edits {
                // Edit tokens that carry meaning, not the layout between them.
                let solid: Vec<usize> = (0..tokens.len())
                    .filter(|&i| !tokens[i].trim().is_empty())
                    .collect();
                if solid.is_empty() {
                    break;
                }
                let i = solid[a.index(solid.len())];
                match kind {
                    0 => {
                        tokens.remove(i);
                    }
                    1 => {
                        let t = tokens[i].clone();
                        tokens.insert(i, t);
                    }
                    _ => {
                        let j = solid[b.index(solid.len())];
                        tokens.swap(i, j);
                    }
                }
            }
            tokens.concat()
        })
}

#[test]
fn the_lexer_of_the_corruptions_gives_the_source_back() {
    for src in TRICKY {
        assert_eq!(tokenize(src).concat(), *src);
    }
    assert!(fixture_tokens().len() >= 5);
}

#[test]
fn corrupted_fixtures_are_mostly_rejected() {
    // Sanity check that the property below exercises the error paths.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut rejected = 0;
    for _ in 0..500 {
        let src = corrupted().new_tree(&mut runner).unwrap().current();
        if !agree(&src, "corrupted fixture") {
            rejected += 1;
        }
    }
    assert!(
        rejected >= 300,
        "only {rejected} of 500 corruptions rejected"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases() / 3))]

    #[test]
    fn corrupted_fixtures_agree(src in corrupted()) {
        agree(&src, "corrupted fixture");
    }
}

#[test]
fn the_parse_before_the_scan_survives_hostile_nesting_on_a_small_stack() {
    let n = 200_000;
    let hostile = [
        format!("deny exec \"x\" when {}a{};", "(".repeat(n), ")".repeat(n)),
        format!("deny exec \"x\" when {}a;", "not ".repeat(n)),
        format!("deny exec \"x\" when {}a;", "!".repeat(n)),
        format!(
            "deny exec \"x\" when f({}1{});",
            "g(".repeat(n),
            ")".repeat(n)
        ),
        format!(
            "deny exec \"x\" when script {{ {}{} }};",
            "{".repeat(n),
            "}".repeat(n)
        ),
        format!("let x = {}\"a\"{};", "[".repeat(n), "]".repeat(n)),
        format!(
            "role r {{ deny exec \"x\" with s {{ a: {}1{} }}; }}",
            "{a: ".repeat(n),
            "}".repeat(n)
        ),
    ];
    // A spawned thread's default stack (2 MiB), smaller than the main thread's.
    let checked = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for src in &hostile {
                let split = finish(src, parse_unscanned(src), scan(src, MAX_NESTING));
                let whole = parse(src);
                assert!(whole.has_errors(), "{}", &src[..40]);
                assert_eq!(split.diagnostics, whole.diagnostics, "{}", &src[..40]);
                assert_eq!(split.file, whole.file, "{}", &src[..40]);
            }
        })
        .expect("a thread")
        .join();
    assert!(checked.is_ok(), "the parser overflowed or disagreed");
}

//! Helpers shared by the unit tests of the splitter and the file model.

#![allow(clippy::panic, reason = "test helpers fail the test")]

use crate::{file_effects, split, FileEffects, FileOp, ShellError, SimpleCommand};

/// `line` split on blanks (no shell syntax).
pub(crate) fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// A static command with this argv and nothing else.
pub(crate) fn c(argv: &[&str]) -> SimpleCommand {
    SimpleCommand {
        argv: argv.iter().map(|s| (*s).to_string()).collect(),
        piped_from: Vec::new(),
        writes: Vec::new(),
        dynamic: false,
        env: Vec::new(),
        cwd: Some(String::new()),
        stdin_script: false,
        reads: Vec::new(),
    }
}

/// Builders for the expected [`SimpleCommand`]s.
pub(crate) trait Build {
    fn piped(self, p: &[&str]) -> Self;
    fn writes(self, w: &[&str]) -> Self;
    fn dynamic(self) -> Self;
}

impl Build for SimpleCommand {
    fn piped(mut self, p: &[&str]) -> Self {
        self.piped_from = p.iter().map(|s| (*s).to_string()).collect();
        self
    }
    fn writes(mut self, w: &[&str]) -> Self {
        self.writes = w.iter().map(|s| (*s).to_string()).collect();
        self
    }
    fn dynamic(mut self) -> Self {
        self.dynamic = true;
        self
    }
}

/// `split(line)`, which must succeed.
pub(crate) fn ok(line: &str) -> Vec<SimpleCommand> {
    match split(line) {
        Ok(v) => v,
        Err(e) => panic!("split({line:?}) failed: {e}"),
    }
}

/// The argvs of `split(line)`, which must succeed.
pub(crate) fn argvs(line: &str) -> Vec<Vec<String>> {
    ok(line).into_iter().map(|c| c.argv).collect()
}

/// Whether `split(line)` is a syntax error.
pub(crate) fn is_syntax(line: &str) -> bool {
    matches!(split(line), Err(ShellError::Syntax { .. }))
}

/// The file effects of `argv`.
pub(crate) fn fxv(argv: &[&str]) -> FileEffects {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    file_effects(&argv)
}

/// Effects as `r:path` / `w:path` / `d:path` strings (`wi:path` for an `into_dir`
/// guess), in order.
pub(crate) fn show(f: &FileEffects) -> Vec<String> {
    f.effects
        .iter()
        .map(|e| {
            let op = match (e.op, e.into_dir) {
                (FileOp::Read, _) => "r",
                (FileOp::Write, false) => "w",
                (FileOp::Write, true) => "wi",
                (FileOp::Delete, _) => "d",
            };
            format!("{op}:{}", e.path)
        })
        .collect()
}

/// `line` split into words the way a shell would quote them, without any other shell
/// syntax: blanks separate, `'…'` is literal, `"…"` honours `\"` and `\\`, and a
/// backslash outside quotes escapes the next character.
pub(crate) fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = cur.take() {
                    out.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => w.push(n),
                            Some(n) => {
                                w.push('\\');
                                w.push(n);
                            }
                            None => w.push('\\'),
                        },
                        _ => w.push(c),
                    }
                }
            }
            '\\' => {
                let w = cur.get_or_insert_with(String::new);
                if let Some(n) = chars.next() {
                    w.push(n);
                }
            }
            _ => cur.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(cur);
    out
}

/// A word for a case line, quoted when it holds blanks or quotes.
fn case_word(w: &str) -> String {
    if w.is_empty() || w.contains([' ', '\t', '\'', '"', '\\']) {
        format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        w.to_string()
    }
}

/// `f` written as the expectation of a case line (the fields always checked), so a
/// failing line shows what to compare it with.
fn render(f: &FileEffects, unknown: bool) -> String {
    let mut t = show(f);
    t.extend(f.network.iter().map(|n| format!("net:{n}")));
    t.extend(f.code.iter().map(|c| format!("code:{c}")));
    t.extend(f.runs_files.iter().map(|r| format!("runs:{r}")));
    t.extend(f.links.iter().map(|l| {
        let tag = if l.symbolic { "link" } else { "hard" };
        format!("{tag}:{}->{}", l.path, l.target)
    }));
    t.extend(f.unknown_options.iter().map(|u| format!("unk:{u}")));
    if !f.opaque.is_empty() {
        t.push("opaque".into());
    }
    let words: Vec<String> = t.iter().map(|w| case_word(w)).collect();
    format!("=>{} {}", if unknown { "?" } else { "" }, words.join(" "))
}

/// What one case line expects besides the effects.
#[derive(Default)]
struct Expect {
    effects: Vec<String>,
    network: Vec<String>,
    code: Vec<String>,
    runs: Vec<String>,
    links: Vec<String>,
    unknown_options: Vec<String>,
    opaque: bool,
    options: Option<Vec<String>>,
    not_options: Vec<String>,
    subcommand: Option<Vec<String>>,
    operands: Option<Vec<String>>,
    modelled: Option<bool>,
}

impl Expect {
    fn parse(tokens: &[String]) -> Self {
        let mut e = Expect::default();
        for t in tokens {
            let (tag, value) = t.split_once(':').unwrap_or((t.as_str(), ""));
            let value = value.to_string();
            match tag {
                "r" | "w" | "wi" | "d" => e.effects.push(t.clone()),
                "net" => e.network.push(value),
                "code" => e.code.push(value),
                "runs" => e.runs.push(value),
                "link" | "hard" => e.links.push(t.clone()),
                "unk" => e.unknown_options.push(value),
                "opaque" => e.opaque = true,
                "opt" if value.is_empty() => {
                    e.options.get_or_insert_with(Vec::new);
                }
                "opt" => e.options.get_or_insert_with(Vec::new).push(value),
                // More options after `opt:X`.
                _ if t.starts_with('-') && e.options.is_some() => {
                    e.options.get_or_insert_with(Vec::new).push(t.clone());
                }
                "!opt" => e.not_options.push(value),
                "sub" => e.subcommand.get_or_insert_with(Vec::new).push(value),
                "nosub" => e.subcommand = Some(Vec::new()),
                "arg" => e.operands.get_or_insert_with(Vec::new).push(value),
                "noargs" => e.operands = Some(Vec::new()),
                "modelled" => e.modelled = Some(true),
                "!modelled" => e.modelled = Some(false),
                _ => panic!("unknown expectation `{t}`"),
            }
        }
        e
    }

    /// What `f` has that this expectation checks, in this expectation's terms; `None`
    /// when it matches.
    fn mismatch(&self, f: &FileEffects) -> Option<String> {
        let links: Vec<String> = f
            .links
            .iter()
            .map(|l| {
                let tag = if l.symbolic { "link" } else { "hard" };
                format!("{tag}:{}->{}", l.path, l.target)
            })
            .collect();
        let mut bad = Vec::new();
        let mut check = |what: &str, got: &[String], want: &[String]| {
            if got != want {
                bad.push(format!("{what}: got {got:?}, expected {want:?}"));
            }
        };
        check("effects", &show(f), &self.effects);
        check("network", &f.network, &self.network);
        check("code", &f.code, &self.code);
        check("runs_files", &f.runs_files, &self.runs);
        check("links", &links, &self.links);
        check("unknown_options", &f.unknown_options, &self.unknown_options);
        if let Some(o) = &self.options {
            check("options", &f.options, o);
        }
        if let Some(s) = &self.subcommand {
            check("subcommand", &f.subcommand, s);
        }
        if let Some(a) = &self.operands {
            check("operands", &f.operands, a);
        }
        for o in &self.not_options {
            if f.options.contains(o) {
                bad.push(format!("options: {o} in {:?}", f.options));
            }
        }
        if self.opaque == f.opaque.is_empty() {
            bad.push(format!("opaque: got {:?}", f.opaque));
        }
        if let Some(m) = self.modelled {
            if m != f.modelled {
                bad.push(format!("modelled: got {}", f.modelled));
            }
        }
        (!bad.is_empty()).then(|| bad.join("; "))
    }
}

/// Checks a case file of the file model, one command per line (`#` starts a comment
/// line): `CMD => EXPECTED` expects no `unknown`, `CMD =>? EXPECTED` expects
/// `unknown`. CMD and EXPECTED are split into words like a shell would (quotes, no
/// other syntax). EXPECTED lists, in order, the effects (`r:P`, `w:P`, `wi:P` for an
/// `into_dir` guess, `d:P`) and the network destinations (`net:X`), code strings
/// (`code:X`), script files run (`runs:X`), links (`link:L->T`, `hard:L->T`) and
/// unknown options (`unk:X`), all of which must match exactly; `opaque` when some
/// code is not visible (otherwise it must be visible). Checked only when given:
/// options (`opt:X`, exact, more options may follow as bare `-x` words, `opt:`
/// alone for none; `!opt:X`, absent), the subcommand (`sub:X`, `nosub`),
/// operands (`arg:X`, `noargs`) and `modelled` / `!modelled`. Every failing line is
/// reported.
#[track_caller]
pub(crate) fn check_cases(cases: &str) {
    let mut failures = Vec::new();
    for (n, case) in cases.lines().enumerate() {
        let case = case.trim();
        if case.is_empty() || case.starts_with('#') {
            continue;
        }
        let (line, expected, want_unknown) = match case.split_once(" =>") {
            Some((line, rest)) => match rest.strip_prefix('?') {
                Some(rest) => (line, rest, true),
                None => (line, rest, false),
            },
            None => panic!("case line {} has no `=>`: {case}", n + 1),
        };
        let f = file_effects(&shell_words(line));
        let expect = Expect::parse(&shell_words(expected));
        let mut why = expect.mismatch(&f).unwrap_or_default();
        if f.unknown != want_unknown {
            why.push_str(&format!("; unknown: got {}", f.unknown));
        }
        if !why.is_empty() {
            failures.push(format!(
                "line {}: {line}: {why}\n    got: {line} {}",
                n + 1,
                render(&f, f.unknown)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One test per case file of `cases/` beside the calling file (see [`check_cases`]).
macro_rules! case_files {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $crate::test_support::check_cases(include_str!(concat!(
                "cases/",
                stringify!($name),
                ".cases"
            )));
        }
    )*};
}
pub(crate) use case_files;

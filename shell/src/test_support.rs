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

/// The file effects of `line` split on blanks.
pub(crate) fn fx(line: &str) -> FileEffects {
    file_effects(&words(line))
}

/// The file effects of `argv`.
pub(crate) fn fxv(argv: &[&str]) -> FileEffects {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    file_effects(&argv)
}

/// Effects as `w:path` / `d:path` strings, in order.
pub(crate) fn show(f: &FileEffects) -> Vec<String> {
    f.effects
        .iter()
        .map(|e| {
            let op = match e.op {
                FileOp::Read => "r",
                FileOp::Write => "w",
                FileOp::Delete => "d",
            };
            format!("{op}:{}", e.path)
        })
        .collect()
}

/// Checks a case file of the file model, one command per line (split on blanks, `#`
/// starts a comment line): `CMD => EFFECTS` expects exactly these effects and no
/// `unknown`; `CMD =>? EFFECTS` expects these effects and `unknown`. EFFECTS are
/// `w:PATH` and `d:PATH`, space-separated, in order. Every failing line is reported.
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
        let f = fx(line);
        let expected: Vec<&str> = expected.split_whitespace().collect();
        if show(&f) != expected || f.unknown != want_unknown {
            failures.push(format!(
                "line {}: {line}: got {:?} unknown={}, expected {expected:?} unknown={want_unknown}",
                n + 1,
                show(&f),
                f.unknown
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

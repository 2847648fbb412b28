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

/// Known effects, no `unknown`.
#[track_caller]
pub(crate) fn known(line: &str, expected: &[&str]) {
    let f = fx(line);
    assert_eq!(show(&f), expected, "{line}");
    assert!(!f.unknown, "{line}: unexpectedly unknown");
}

/// `unknown`, with these effects.
#[track_caller]
pub(crate) fn unknown(line: &str, expected: &[&str]) {
    let f = fx(line);
    assert_eq!(show(&f), expected, "{line}");
    assert!(f.unknown, "{line}: expected unknown");
}

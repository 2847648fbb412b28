//! The one wrapper table: programs that run another command (`sudo`, `env`, `timeout`,
//! `xargs`, `find -exec`, `sh -c`, `eval`, …).
//!
//! The splitter reports the wrapped commands so that a policy decides each of them, and
//! the file model reads them for the files they change; both read this table, so a
//! wrapper seen by one is seen by the other. Options are read with closed specs (every
//! option listed): an unknown one means we cannot tell where the wrapped command
//! starts, which is [`Unanalysable`], never a guess.

use std::ops::Range;

use crate::names::{basename, is_assignment};
use crate::options::{parse_words, wrapper, Parsed, Spec};
use crate::shell_args::{parse_shell_args, SHELLS};

/// How a wrapped command gets its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// Exactly as written after the wrapper.
    AsWritten,
    /// With more arguments read from standard input (`xargs`): options included.
    WithStdinArgs,
    /// Once per file found (`find -exec`), `{}` standing for the file; `in_its_dir`
    /// for `-execdir`/`-okdir`, which run in each file's directory.
    PerFoundFile {
        /// Relative paths are relative to the found file's directory.
        in_its_dir: bool,
    },
}

/// A command run by a wrapper command.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Inner {
    /// A slice of the wrapper's argv.
    Argv {
        /// Indices into the wrapper's argv (the program name is index 0).
        range: Range<usize>,
        /// How it gets its arguments.
        runs: Runs,
    },
    /// A fixed argv (`xargs`' default `echo`).
    Literal {
        /// The command.
        argv: Vec<String>,
        /// How it gets its arguments.
        runs: Runs,
    },
    /// A script to parse like a command line (`sh -c`, `eval`, `trap`).
    Script(String),
}

/// What a wrapper command does besides being a command itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Wrapped<'a> {
    /// The commands it runs, in order.
    pub(crate) inners: Vec<Inner>,
    /// Directories it changes to before running them (`env -C`, `sudo -D`), in order.
    pub(crate) chdirs: Vec<&'a str>,
    /// Files it writes itself (`time -o`).
    pub(crate) writes: Vec<&'a str>,
    /// Files it opens in an editor (`sudo -e`).
    pub(crate) edits: Vec<&'a str>,
}

/// A wrapper invocation whose wrapped command cannot be told statically.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unanalysable(pub(crate) String);

const ENV: Spec = wrapper(
    "i0v",
    "uCPS",
    "unset chdir split-string",
    "ignore-environment null debug list-signal-handling block-signal default-signal \
        ignore-signal",
);
/// `sudo`'s options, shared with `sudoedit`.
pub(crate) const SUDO: Spec = wrapper(
    "AbBEeHiKklnNPSsVv",
    "ugCDhprtUTR",
    "user group close-from chdir host prompt role type other-user command-timeout chroot",
    "askpass background bell edit set-home login remove-timestamp reset-timestamp list \
        non-interactive preserve-env preserve-groups shell stdin validate no-update",
);
const TIMEOUT: Spec = wrapper(
    "vfp",
    "sk",
    "signal kill-after",
    "foreground preserve-status verbose",
);
const NICE: Spec = Spec {
    numeric: true,
    ..wrapper("", "n", "adjustment", "")
};
const TIME: Spec = wrapper(
    "pavq",
    "fo",
    "format output",
    "append verbose quiet portability",
);
const XARGS: Spec = Spec {
    attached: "iel",
    ..wrapper(
        "0oprtx",
        "adEILnPs",
        "arg-file delimiter max-args max-procs max-chars process-slot-var",
        "null interactive no-run-if-empty verbose exit show-limits open-tty eof replace \
            max-lines",
    )
};
const IONICE: Spec = wrapper("t", "cnpPu", "class classdata pid pgid uid", "ignore");
const CHRT: Spec = wrapper(
    "abdefimoprRv",
    "TPD",
    "sched-runtime sched-period sched-deadline",
    "all-tasks batch deadline ext fifo idle max other pid rr reset-on-fork verbose",
);

/// The argv of one command, with which of its words are dynamic (`$X`, `$(…)`): a
/// dynamic word is never taken for an option or a terminator.
struct Words<'a> {
    argv: &'a [String],
    dynamic: &'a [bool],
}

impl<'a> Words<'a> {
    /// Word `i` when it is known before the command runs.
    fn fixed(&self, i: usize) -> Option<&'a str> {
        match self.dynamic.get(i) {
            Some(true) => None,
            _ => self.argv.get(i).map(String::as_str),
        }
    }

    /// The wrapped command from word `i` to the end, if there is one.
    fn rest(&self, i: usize) -> Vec<Inner> {
        if i < self.argv.len() {
            vec![Inner::Argv {
                range: i..self.argv.len(),
                runs: Runs::AsWritten,
            }]
        } else {
            Vec::new()
        }
    }

    /// The options of the wrapper, read with `spec`; `next` is an index into argv.
    fn options(&self, spec: &Spec) -> Result<Parsed<'a>, Unanalysable> {
        let args = self.argv.get(1..).unwrap_or_default();
        let dynamic = self.dynamic.get(1..).unwrap_or_default();
        let mut p = parse_words(args, dynamic, spec);
        if let Some(opt) = p.unknown {
            let tool = self.argv.first().map_or("", |a| basename(a));
            return Err(Unanalysable(format!(
                "unknown option '{opt}' for '{tool}': cannot tell which command it runs"
            )));
        }
        p.next += 1;
        Ok(p)
    }
}

/// What wrapper command `argv` runs, or `None` when it is not a wrapper; `dynamic[i]`
/// tells that `argv[i]` is not known before the command runs (missing entries are
/// known).
pub(crate) fn unwrap<'a>(
    argv: &'a [String],
    dynamic: &'a [bool],
) -> Result<Option<Wrapped<'a>>, Unanalysable> {
    let w = Words { argv, dynamic };
    let Some(name) = w.fixed(0).map(basename) else {
        return Ok(None);
    };
    let mut out = Wrapped::default();
    out.inners = match name {
        "env" => {
            let p = w.options(&ENV)?;
            if p.has('S', "split-string") {
                return Err(Unanalysable(
                    "'env -S' is not supported: cannot tell which command it runs".into(),
                ));
            }
            out.chdirs.extend(p.values('C', "chdir"));
            let mut i = p.next;
            if w.fixed(i) == Some("-") {
                i += 1;
            }
            while w.fixed(i).is_some_and(|a| a.contains('=')) {
                i += 1;
            }
            w.rest(i)
        }
        "sudo" => {
            let p = w.options(&SUDO)?;
            out.chdirs.extend(p.values('D', "chdir"));
            if p.has('e', "edit") {
                // `sudo -e FILE…` is sudoedit: it runs no command.
                out.edits.extend(
                    argv.get(p.next..)
                        .unwrap_or_default()
                        .iter()
                        .map(String::as_str),
                );
                Vec::new()
            } else {
                let mut i = p.next;
                while w.fixed(i).is_some_and(is_assignment) {
                    i += 1;
                }
                w.rest(i)
            }
        }
        // The first operand is the duration.
        "timeout" => w.rest(w.options(&TIMEOUT)?.next + 1),
        "nice" => w.rest(w.options(&NICE)?.next),
        "nohup" | "builtin" => w.rest(w.options(&wrapper("", "", "", ""))?.next),
        "setsid" => w.rest(w.options(&wrapper("cfw", "", "", "ctty fork wait"))?.next),
        "doas" => w.rest(w.options(&wrapper("Lns", "uC", "", ""))?.next),
        "exec" => w.rest(w.options(&wrapper("cl", "a", "", ""))?.next),
        "stdbuf" => w.rest(
            w.options(&wrapper("", "ioe", "input output error", ""))?
                .next,
        ),
        "command" => {
            let p = w.options(&wrapper("pvV", "", "", ""))?;
            // `command -v NAME` only looks NAME up.
            if p.has_short('v') || p.has_short('V') {
                Vec::new()
            } else {
                w.rest(p.next)
            }
        }
        "time" => {
            let p = w.options(&TIME)?;
            out.writes.extend(p.values('o', "output"));
            w.rest(p.next)
        }
        "ionice" => {
            let p = w.options(&IONICE)?;
            // Changing the priority of running processes runs nothing.
            if p.has('p', "pid") || p.has('P', "pgid") || p.has('u', "uid") {
                Vec::new()
            } else {
                w.rest(p.next)
            }
        }
        "chrt" => {
            let p = w.options(&CHRT)?;
            if p.has('p', "pid") || p.has('m', "max") {
                Vec::new()
            } else {
                let mut i = p.next;
                let priority = |a: &str| !a.is_empty() && a.bytes().all(|c| c.is_ascii_digit());
                if w.fixed(i).is_some_and(priority) {
                    i += 1;
                }
                w.rest(i)
            }
        }
        // `busybox APPLET ARGS…`; its own `--list`, `--install`, `--help` run nothing.
        "busybox" => match w.fixed(1) {
            Some(a) if a.starts_with("--") => Vec::new(),
            _ => w.rest(1),
        },
        "xargs" => {
            let p = w.options(&XARGS)?;
            if p.next < argv.len() {
                vec![Inner::Argv {
                    range: p.next..argv.len(),
                    runs: Runs::WithStdinArgs,
                }]
            } else {
                vec![Inner::Literal {
                    argv: vec!["echo".to_string()],
                    runs: Runs::WithStdinArgs,
                }]
            }
        }
        "find" => find_exec(&w)?,
        "trap" => trap(&w)?,
        "eval" => {
            if argv.len() <= 1 {
                Vec::new()
            } else if dynamic.iter().skip(1).any(|d| *d) {
                return Err(Unanalysable(
                    "'eval' of a dynamic string cannot be analysed".into(),
                ));
            } else {
                vec![Inner::Script(argv.get(1..).unwrap_or_default().join(" "))]
            }
        }
        _ if SHELLS.contains(&name) => {
            let sh = parse_shell_args(argv, dynamic);
            let i = sh.operand;
            match (sh.c_seen, argv.get(i), w.fixed(i)) {
                (false, _, _) | (true, None, _) => Vec::new(),
                (true, Some(_), Some(script)) => vec![Inner::Script(script.to_string())],
                (true, Some(_), None) => {
                    return Err(Unanalysable(format!(
                        "'{name} -c' with a dynamic command string cannot be analysed"
                    )))
                }
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// The commands of `find … -exec CMD {} ;` (also `-execdir`, `-ok`, `-okdir`, and `+`
/// after `{}`).
fn find_exec(w: &Words<'_>) -> Result<Vec<Inner>, Unanalysable> {
    let n = w.argv.len();
    let mut found = Vec::new();
    let mut i = 1;
    while i < n {
        let Some(action @ ("-exec" | "-execdir" | "-ok" | "-okdir")) = w.fixed(i) else {
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut k = start;
        let end = loop {
            match w.fixed(k) {
                Some(";") => break Some(k),
                Some("+") if k > start && w.fixed(k - 1) == Some("{}") => break Some(k),
                _ if k >= n => break None,
                _ => k += 1,
            }
        };
        let Some(end) = end else {
            return Err(Unanalysable(format!(
                "'find {action}' without a terminating ';' or '+'"
            )));
        };
        if end == start {
            return Err(Unanalysable("'find -exec' without a command".into()));
        }
        found.push(Inner::Argv {
            range: start..end,
            runs: Runs::PerFoundFile {
                in_its_dir: action.ends_with("dir"),
            },
        });
        i = end + 1;
    }
    Ok(found)
}

/// `trap [-lpP] [[ACTION] SIGNAL…]`: ACTION runs later, like `sh -c ACTION`.
fn trap(w: &Words<'_>) -> Result<Vec<Inner>, Unanalysable> {
    let mut i = 1;
    match w.fixed(1) {
        Some("--") => i = 2,
        Some(a) if a.len() > 1 && a.starts_with('-') => return Ok(Vec::new()),
        _ => {}
    }
    if w.argv.len() < i + 2 {
        return Ok(Vec::new());
    }
    match w.fixed(i) {
        Some("-" | "") => Ok(Vec::new()),
        Some(action) => Ok(vec![Inner::Script(action.to_string())]),
        None => Err(Unanalysable(
            "'trap' with a dynamic action cannot be analysed".into(),
        )),
    }
}

#[cfg(test)]
mod tests;

//! The walker: from the syntax tree to the simple commands a line would run.
//!
//! [`split`] parses a POSIX/bash command line into every simple command it
//! would run, so that a policy can decide each one on its own. It is used to
//! DENY dangerous commands, so it errs on the side of reporting more commands
//! and marking uncertainty ([`SimpleCommand::dynamic`]); anything it cannot
//! attribute faithfully is an `Err`, never a silently partial result.
//!
//! # What is reported
//!
//! * every simple command of lists, pipelines, subshells, groups, `if`,
//!   `while`/`until`, `for`/`select`, `case` (all branches), function bodies,
//!   `coproc`;
//! * the commands inside `$(…)`, backticks, `<(…)`, `>(…)`, `${…}`, `$((…))`,
//!   `[[ … ]]`, `(( … ))`, unquoted here-document bodies and here-strings;
//! * for wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`,
//!   `sh -c`, `eval`, …) both the wrapper command and the wrapped command(s);
//!   also the action of `trap ACTION SIGNAL…` and the script a shell reads
//!   from a here-document or here-string (`bash <<'EOF' … EOF`), both parsed
//!   like `sh -c` (an error when dynamic).
//!
//! Order: a simple command comes first, followed by the commands it wraps,
//! followed by the commands found in its words, assignments and
//! redirections (source order), followed by those of its `>(…)` process
//! substitutions.
//!
//! # Conservative choices
//!
//! * Redirections on a compound command (or function definition) are
//!   attached to every simple command inside it.
//! * Programs whose output feeds a command's standard input other than
//!   through `|` are also listed in that command's `piped_from`: commands of
//!   `<(…)` arguments/redirections, of here-strings and of unquoted
//!   here-document bodies (so `bash <(curl x)` looks like `curl x | bash`).
//!   Commands inside `>(…)` get the basename(s) of the command writing into
//!   them. Commands inside `$(…)` of a pipeline element inherit that
//!   element's `piped_from` (they share its stdin).
//! * A command consisting only of write redirections (`> file`) is reported
//!   with an empty `argv` so its `writes` are not lost.
//! * Unknown options of a wrapper are an error (we could not tell where the
//!   wrapped command starts).
//!
//! # Known limitations
//!
//! * Aliases, functions called later, `source`/`.` files and scripts run by
//!   path are not followed (they are reported as commands, not expanded).
//! * Tilde (`~`) is kept literally and does NOT make a word dynamic.
//! * Prefix assignments (`LD_PRELOAD=x cmd`) are not reported in `argv` but in
//!   [`SimpleCommand::env`], with those of `env`/`sudo` wrappers and earlier
//!   `export`s.
//! * Bash evaluates array subscripts and arithmetic operands held in
//!   variables (`(( x ))` with `x='a[$(cmd)]'`): such indirect execution is
//!   invisible; the arithmetic itself is not reported as a command.
//! * `env -S`, a here-document whose body would start inside a `$(…)` on the
//!   same line, and a here-document without its closing delimiter are
//!   rejected rather than guessed; so are strings handed to `eval`/`sh -c`
//!   that bash itself would only reject when running them.
//! * Interpreters' code strings (`python3 -c`, `perl -e`) are not shell: the file
//!   model reports them as code (`FileEffects::code`), not as commands. Programs
//!   that run a command the wrapper table does not know are reported as themselves
//!   only, and the file model marks them opaque.
//! * Worst-case stack use at the maximum depth is about 400 KiB in debug
//!   builds (much less in release), so any thread with the usual 2 MiB stack
//!   is fine.

use crate::ast::{Command, Compound, List, Redir, RedirKind, Shared, Simple, Sub, SubKind, Word};
use crate::command::SimpleCommand;
use crate::error::{too_deep, Res, ShellError};
use crate::file_op::changes_no_file;
use crate::limits::{MAX_DEPTH, MAX_INPUT_LEN, MAX_OUTPUT_BYTES, MAX_OUTPUT_ENTRIES};
use crate::names::{basename, is_assignment, normalise_path};
use crate::parser::parse;
use crate::shell_args::shell_reads_stdin;
use crate::wrappers::{unwrap, Inner, Runs};

/// Splits a shell command line into the simple commands it would run, so that a
/// policy decides each program, however it is nested, wrapped or piped.
///
/// Empty, blank or comment-only input gives `Ok(vec![])`.
///
/// # Errors
///
/// [`ShellError::Syntax`] for invalid or unsupported syntax (unterminated
/// quotes, unbalanced parentheses, `sh -c "$X"`, …), [`ShellError::TooDeep`]
/// when nesting exceeds [`MAX_DEPTH`], [`ShellError::TooLong`] when the input
/// exceeds [`MAX_INPUT_LEN`].
pub fn split(line: &str) -> Result<Vec<SimpleCommand>, ShellError> {
    if line.len() > MAX_INPUT_LEN {
        return Err(ShellError::TooLong {
            len: line.len(),
            limit: MAX_INPUT_LEN,
        });
    }
    let mut walker = Walker::default();
    walker.run_script(line, 0, 0, &Inherit::default())?;
    Ok(walker.out)
}

/// Splits a command given as argv (as `execve` receives it: no shell in between) into
/// the simple commands it would run: the command itself and, through the wrapper table,
/// whatever it runs (`sudo rm x`, `sh -c 'a; b'`, `xargs rm`).
///
/// No word is expanded, split or taken as an assignment or redirection — argv words are
/// literal — so a caller never quotes argv back into a line to have it split again.
///
/// # Errors
///
/// As [`split`], for the code a wrapper runs (`sh -c '…'`) and for wrappers whose
/// options cannot be read; [`ShellError::TooLong`] when the words together exceed
/// [`MAX_INPUT_LEN`].
pub fn split_argv(argv: &[String]) -> Result<Vec<SimpleCommand>, ShellError> {
    let len: usize = argv.iter().map(|w| w.len() + 1).sum();
    if len > MAX_INPUT_LEN {
        return Err(ShellError::TooLong {
            len,
            limit: MAX_INPUT_LEN,
        });
    }
    let words = argv
        .iter()
        .map(|w| Word {
            text: w.clone(),
            plain: false,
            quoted: true,
            ..Word::default()
        })
        .collect();
    let simple = Simple {
        words,
        ..Simple::default()
    };
    let mut walker = Walker::default();
    let shared = Shared::default();
    walker.walk_simple(
        &simple,
        &Inherit::default(),
        &[],
        At {
            bodies: &shared.bodies,
            depth: 0,
        },
    )?;
    Ok(walker.out)
}

/// (`bash <<EOF … EOF`, `sh <<< 'cmd'`).
#[derive(Debug)]
struct StdinScript {
    text: String,
    dynamic: bool,
    offset: usize,
}

/// What [`Walker::emit`] passes down to wrapped commands.
#[derive(Debug, Clone, Copy)]
struct EmitCtx<'x> {
    /// Inner command of `xargs`/`find -exec`: arguments are unknown.
    forced: bool,
    /// A redirection target is dynamic.
    extra_dynamic: bool,
    /// Offset for errors.
    offset: usize,
    /// Here-documents / here-strings on standard input.
    stdin: &'x [StdinScript],
}

/// Where the walk is: the here-document bodies of the script being walked and the
/// nesting depth, passed together to every step.
#[derive(Debug, Clone, Copy)]
struct At<'b> {
    bodies: &'b [Option<Word>],
    depth: usize,
}

impl At<'_> {
    /// One level deeper.
    fn deeper(self) -> Self {
        At {
            depth: self.depth + 1,
            ..self
        }
    }

    /// Fails past [`MAX_DEPTH`].
    fn check(self) -> Res<()> {
        if self.depth > MAX_DEPTH {
            return Err(too_deep());
        }
        Ok(())
    }
}

/// Context inherited by the commands inside a construct.
#[derive(Debug, Clone, Default)]
struct Inherit {
    piped_from: Vec<String>,
    writes: Vec<String>,
    writes_dynamic: bool,
    /// Environment assignments the enclosing wrapper or shell passes on.
    env: Vec<String>,
}

#[derive(Debug)]
struct Walker {
    out: Vec<SimpleCommand>,
    entries: usize,
    bytes: usize,
    /// The working directory of the next command, relative to the line's (see
    /// [`SimpleCommand::cwd`]).
    cwd: Option<String>,
    /// `pushd`'s stack.
    dirs: Vec<Option<String>>,
    /// `export NAME=value`s seen so far; every later command runs with them.
    exported: Vec<String>,
}

impl Default for Walker {
    fn default() -> Self {
        Walker {
            out: Vec::new(),
            entries: 0,
            bytes: 0,
            cwd: Some(String::new()),
            dirs: Vec::new(),
            exported: Vec::new(),
        }
    }
}

fn basenames(cmds: &[SimpleCommand]) -> Vec<String> {
    cmds.iter()
        .filter_map(|c| c.argv.first())
        .map(|a| basename(a).to_string())
        .collect()
}

/// Here-documents and here-strings redirected to standard input.
fn stdin_scripts(redirs: &[Redir], bodies: &[Option<Word>]) -> Vec<StdinScript> {
    let mut out = Vec::new();
    for r in redirs.iter().filter(|r| r.stdin) {
        match r.kind {
            RedirKind::HereDoc => {
                if let Some(Some(body)) = r.heredoc.and_then(|id| bodies.get(id)) {
                    out.push(StdinScript {
                        text: body.text.clone(),
                        dynamic: body.dynamic,
                        offset: body.start,
                    });
                }
            }
            RedirKind::HereString => out.push(StdinScript {
                text: r.target.text.clone(),
                dynamic: r.target.dynamic,
                offset: r.target.start,
            }),
            _ => {}
        }
    }
    out
}

/// A redirection target that is just `<(…)` / `>(…)` (a pipe, not a file).
fn is_procsub_target(w: &Word) -> bool {
    w.subs.len() == 1
        && w.subs.iter().all(|s| s.kind != SubKind::Command)
        && (w.text.starts_with("<(") || w.text.starts_with(">("))
        && w.text.ends_with(')')
}

impl Walker {
    fn run_script(&mut self, text: &str, base: usize, depth: usize, inh: &Inherit) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let mut shared = Shared::default();
        let list = parse(text, base, depth, &mut shared)?;
        self.walk_list(
            &list,
            inh,
            At {
                bodies: &shared.bodies,
                depth,
            },
        )
    }

    fn push(&mut self, cmd: SimpleCommand) -> Res<()> {
        let strings = cmd.argv.iter().chain(&cmd.piped_from).chain(&cmd.writes);
        let bytes: usize = strings.clone().map(String::len).sum();
        self.entries = self.entries.saturating_add(1 + strings.count());
        self.bytes = self.bytes.saturating_add(bytes);
        if self.entries > MAX_OUTPUT_ENTRIES || self.bytes > MAX_OUTPUT_BYTES {
            return Err(ShellError::Syntax {
                offset: 0,
                message: "command line expands to too many simple commands to analyse".into(),
            });
        }
        self.out.push(cmd);
        Ok(())
    }

    fn walk_list(&mut self, list: &List, inh: &Inherit, at: At<'_>) -> Res<()> {
        at.check()?;
        for p in list {
            let cwd_before = self.cwd.clone();
            let subshells = p.cmds.len() > 1;
            let mut upstream = inh.piped_from.clone();
            let last = p.cmds.len().saturating_sub(1);
            for (i, cmd) in p.cmds.iter().enumerate() {
                let ci = Inherit {
                    piped_from: upstream.clone(),
                    writes: inh.writes.clone(),
                    writes_dynamic: inh.writes_dynamic,
                    env: inh.env.clone(),
                };
                let start = self.out.len();
                let timed: &[String] = if i == 0 { &p.timed } else { &[] };
                match cmd {
                    Command::Simple(s) => self.walk_simple(s, &ci, timed, at)?,
                    Command::Compound(c) => self.walk_compound(c, &ci, at)?,
                }
                if i < last {
                    upstream.extend(basenames(self.out.get(start..).unwrap_or_default()));
                }
                // Every element of a pipeline runs in a subshell of its own.
                if subshells {
                    self.cwd.clone_from(&cwd_before);
                }
            }
            // After `||` the step may not have run: a directory it changed to is only
            // maybe the current one.
            if p.after_or && self.cwd != cwd_before {
                self.cwd = None;
            }
        }
        Ok(())
    }

    fn walk_sub(&mut self, sub: &Sub, inh: &Inherit, at: At<'_>) -> Res<Vec<String>> {
        let before = self.out.len();
        // A substitution runs in a subshell: its `cd` does not outlive it.
        let cwd = self.cwd.clone();
        let dirs = self.dirs.clone();
        let res = self.walk_list(&sub.list, inh, at.deeper());
        self.cwd = cwd;
        self.dirs = dirs;
        res?;
        Ok(basenames(self.out.get(before..).unwrap_or_default()))
    }

    /// Walks the substitutions of redirections (not `>(…)`), returning the
    /// basenames of the commands that feed standard input.
    fn walk_redir_subs(&mut self, redirs: &[Redir], inh: &Inherit, at: At<'_>) -> Res<Vec<String>> {
        let mut feed = Vec::new();
        for r in redirs {
            if r.kind != RedirKind::HereDoc {
                for sub in &r.target.subs {
                    if sub.kind != SubKind::ProcOut {
                        let names = self.walk_sub(sub, inh, at)?;
                        if r.kind == RedirKind::HereString || sub.kind == SubKind::ProcIn {
                            feed.extend(names);
                        }
                    }
                }
            }
            if let Some(Some(body)) = r.heredoc.and_then(|id| at.bodies.get(id)) {
                for sub in &body.subs {
                    feed.extend(self.walk_sub(sub, inh, at)?);
                }
            }
        }
        Ok(feed)
    }

    fn walk_compound(&mut self, c: &Compound, inh: &Inherit, at: At<'_>) -> Res<()> {
        let at = at.deeper();
        at.check()?;
        let mut ci = inh.clone();
        for r in &c.redirs {
            if r.kind == RedirKind::Write && !is_procsub_target(&r.target) {
                ci.writes_dynamic |= r.target.dynamic;
                if r.target.dynamic || !changes_no_file(&r.target.text) {
                    ci.writes.push(r.target.text.clone());
                }
            }
        }
        let saved = std::mem::take(&mut self.out);
        let res = self.walk_redir_subs(&c.redirs, inh, at);
        let pre = std::mem::replace(&mut self.out, saved);
        ci.piped_from.extend(res?);
        let start = self.out.len();
        for w in &c.words {
            for sub in &w.subs {
                self.walk_sub(sub, &ci, at)?;
            }
        }
        // A compound may be a subshell (its `cd` ends with it), a group (it lasts) or a
        // branch or loop (it may or may not have run): after one that changed directory,
        // the directory is not known.
        let cwd_before = self.cwd.clone();
        for l in &c.lists {
            self.walk_list(l, &ci, at)?;
        }
        if self.cwd != cwd_before {
            self.cwd = None;
        }
        let names = basenames(self.out.get(start..).unwrap_or_default());
        self.out.extend(pre);
        let mut po = inh.clone();
        po.piped_from.extend(names);
        for r in &c.redirs {
            for sub in r.target.subs.iter().filter(|s| s.kind == SubKind::ProcOut) {
                self.walk_sub(sub, &po, at)?;
            }
        }
        Ok(())
    }

    fn walk_simple(&mut self, s: &Simple, inh: &Inherit, timed: &[String], at: At<'_>) -> Res<()> {
        let mut argv = Vec::new();
        let mut dyns = Vec::new();
        if !s.words.is_empty() {
            for t in timed {
                argv.push(t.clone());
                dyns.push(false);
            }
        }
        for w in &s.words {
            argv.push(w.text.clone());
            dyns.push(w.dynamic);
        }
        let mut writes = inh.writes.clone();
        let mut own_writes = false;
        let mut writes_dynamic = inh.writes_dynamic;
        let mut redir_dynamic = false;
        for r in &s.redirs {
            match r.kind {
                _ if is_procsub_target(&r.target) => {}
                RedirKind::Write => {
                    writes_dynamic |= r.target.dynamic;
                    if r.target.dynamic || !changes_no_file(&r.target.text) {
                        writes.push(r.target.text.clone());
                        own_writes = true;
                    }
                }
                RedirKind::Read | RedirKind::Dup => redir_dynamic |= r.target.dynamic,
                RedirKind::HereDoc | RedirKind::HereString => {}
            }
        }

        // Substitutions run before the command; walk them aside (their
        // commands are listed after it) to learn what feeds its stdin.
        let sub_inh = Inherit {
            piped_from: inh.piped_from.clone(),
            writes: inh.writes.clone(),
            writes_dynamic: inh.writes_dynamic,
            env: inh.env.clone(),
        };
        let saved = std::mem::take(&mut self.out);
        let res = self.walk_word_subs(s, &sub_inh, at);
        let pre = std::mem::replace(&mut self.out, saved);
        let feed = res?;

        let start = self.out.len();
        if !argv.is_empty() || own_writes {
            let mut piped_from = inh.piped_from.clone();
            piped_from.extend(feed);
            let extra_dynamic = writes_dynamic || redir_dynamic;
            let offset = s
                .words
                .first()
                .or(s.redirs.first().map(|r| &r.target))
                .map_or(0, |w| w.start);
            let stdin = stdin_scripts(&s.redirs, at.bodies);
            let mut env = self.exported.clone();
            env.extend(inh.env.iter().cloned());
            env.extend(s.assigns.iter().map(|w| w.text.clone()));
            let cmd = SimpleCommand {
                dynamic: extra_dynamic || dyns.iter().any(|d| *d),
                argv: argv.clone(),
                piped_from,
                writes,
                env,
                cwd: self.cwd.clone(),
                stdin_script: false,
                reads: s
                    .redirs
                    .iter()
                    .filter(|r| {
                        r.kind == RedirKind::Read
                            && !is_procsub_target(&r.target)
                            && !changes_no_file(&r.target.text)
                    })
                    .map(|r| r.target.text.clone())
                    .collect(),
            };
            let ctx = EmitCtx {
                forced: false,
                extra_dynamic,
                offset,
                stdin: &stdin,
            };
            self.emit(cmd, &dyns, ctx, at.depth)?;
            self.track(&argv, &dyns);
        }
        let names = basenames(self.out.get(start..).unwrap_or_default());
        self.out.extend(pre);

        let mut po = sub_inh;
        po.piped_from.extend(names);
        let words = s.assigns.iter().chain(&s.words);
        let targets = s.redirs.iter().map(|r| &r.target);
        for w in words.chain(targets) {
            for sub in w.subs.iter().filter(|s| s.kind == SubKind::ProcOut) {
                self.walk_sub(sub, &po, at)?;
            }
        }
        Ok(())
    }

    /// Walks the substitutions of a simple command's assignments, words and
    /// redirections (not `>(…)`), returning the basenames feeding its stdin.
    fn walk_word_subs(&mut self, s: &Simple, inh: &Inherit, at: At<'_>) -> Res<Vec<String>> {
        let mut feed = Vec::new();
        for w in s.assigns.iter().chain(&s.words) {
            for sub in w.subs.iter().filter(|s| s.kind != SubKind::ProcOut) {
                let names = self.walk_sub(sub, inh, at)?;
                if sub.kind == SubKind::ProcIn {
                    feed.extend(names);
                }
            }
        }
        feed.extend(self.walk_redir_subs(&s.redirs, inh, at)?);
        Ok(feed)
    }

    /// Emits `cmd`, then the commands it wraps (recursively).
    fn emit(
        &mut self,
        cmd: SimpleCommand,
        dyns: &[bool],
        ctx: EmitCtx<'_>,
        depth: usize,
    ) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let EmitCtx {
            forced,
            extra_dynamic,
            offset,
            stdin,
        } = ctx;
        let mut inners = match unwrap(&cmd.argv, dyns) {
            Ok(wrapped) => wrapped.map(|w| w.inners).unwrap_or_default(),
            Err(why) => {
                return Err(ShellError::Syntax {
                    offset,
                    message: why.0,
                })
            }
        };
        if !stdin.is_empty() && shell_reads_stdin(&cmd.argv, dyns) {
            for script in stdin {
                if script.dynamic {
                    return Err(ShellError::Syntax {
                        offset: script.offset,
                        message: "a shell reading a dynamic here-document or here-string cannot be analysed".into(),
                    });
                }
                inners.push(Inner::Script(script.text.clone()));
            }
        }
        let mut cmd = cmd;
        cmd.stdin_script = !stdin.is_empty() && shell_reads_stdin(&cmd.argv, dyns);
        if inners.is_empty() {
            return self.push(cmd);
        }
        self.push(cmd.clone())?;
        for inner in inners {
            let (argv, d, runs) = match inner {
                Inner::Argv { range, runs } => {
                    let argv = cmd.argv.get(range.clone()).unwrap_or_default().to_vec();
                    let d = dyns.get(range).unwrap_or_default().to_vec();
                    (argv, d, runs)
                }
                Inner::Literal { argv, runs } => {
                    let d = vec![false; argv.len()];
                    (argv, d, runs)
                }
                Inner::Script(text) => {
                    let inh = Inherit {
                        piped_from: cmd.piped_from.clone(),
                        writes: cmd.writes.clone(),
                        writes_dynamic: extra_dynamic,
                        env: cmd.env.clone(),
                    };
                    // The script runs in a shell of its own, starting where the wrapper
                    // runs; its `cd`s end with it.
                    let saved = (self.cwd.clone(), self.dirs.clone(), self.exported.clone());
                    self.cwd.clone_from(&cmd.cwd);
                    self.exported.clear();
                    let res = self.run_script(&text, offset, depth + 1, &inh);
                    (self.cwd, self.dirs, self.exported) = saved;
                    res?;
                    continue;
                }
            };
            // Arguments added at run time (xargs' input, find's files) are unknown.
            let forced = forced || runs != Runs::AsWritten;
            let mut env = cmd.env.clone();
            env.extend(wrapper_assignments(
                &cmd.argv,
                first_inner_word(&argv, &cmd.argv),
            ));
            let inner_cmd = SimpleCommand {
                dynamic: forced || extra_dynamic || d.iter().any(|x| *x),
                argv,
                piped_from: cmd.piped_from.clone(),
                writes: cmd.writes.clone(),
                env,
                cwd: cmd.cwd.clone(),
                stdin_script: false,
                reads: cmd.reads.clone(),
            };
            let inner_ctx = EmitCtx { forced, ..ctx };
            self.emit(inner_cmd, &d, inner_ctx, depth + 1)?;
        }
        Ok(())
    }
}

/// Where the wrapped `inner` starts in the wrapper's `argv` (its length when not found).
fn first_inner_word(inner: &[String], argv: &[String]) -> usize {
    if inner.is_empty() {
        return argv.len();
    }
    (1..argv.len())
        .find(|&i| argv.get(i..i + inner.len()) == Some(inner))
        .unwrap_or(argv.len())
}

/// `NAME=value` words a wrapper puts in the environment of the command it runs
/// (`env A=1 cmd`, `sudo A=1 cmd`): the assignments among its own words.
fn wrapper_assignments(argv: &[String], end: usize) -> Vec<String> {
    argv.get(1..end)
        .unwrap_or_default()
        .iter()
        .filter(|w| is_assignment(w))
        .cloned()
        .collect()
}

impl Walker {
    /// Follows what a step of the line changes for the steps after it: the working
    /// directory (`cd`, `pushd`, `popd`) and exported variables.
    fn track(&mut self, argv: &[String], dyns: &[bool]) {
        let Some(program) = argv.first() else {
            return;
        };
        let operand = argv
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, a)| !a.starts_with('-') || a.as_str() == "-");
        let literal = |i: usize| !dyns.get(i).copied().unwrap_or(true);
        match program.as_str() {
            "cd" | "chdir" => {
                self.cwd = match operand {
                    None => Some("~".into()),
                    Some((_, a)) if a == "-" => None,
                    Some((i, a)) if literal(i) => join_dir(self.cwd.as_deref(), a),
                    Some(_) => None,
                };
            }
            "pushd" => {
                self.dirs.push(self.cwd.clone());
                self.cwd = match operand {
                    Some((i, a)) if literal(i) && !a.starts_with(['+', '-']) => {
                        join_dir(self.cwd.as_deref(), a)
                    }
                    _ => None,
                };
            }
            "popd" => self.cwd = self.dirs.pop().unwrap_or(None),
            "export" => {
                for (i, a) in argv.iter().enumerate().skip(1) {
                    if is_assignment(a) && literal(i) {
                        self.exported.push(a.clone());
                    }
                }
            }
            _ => {}
        }
    }
}

/// `cd`'s target from `cur`: absolute and home paths replace it, relative ones are
/// joined; `..` climbing above the line's directory is kept as `../`.
fn join_dir(cur: Option<&str>, target: &str) -> Option<String> {
    if target.starts_with('/') || target == "~" || target.starts_with("~/") {
        return Some(normalise_path(target));
    }
    if target.starts_with('~') {
        // Another user's home: not followed.
        return None;
    }
    let cur = cur?;
    if cur.is_empty() {
        return Some(normalise_path(target));
    }
    Some(normalise_path(&format!("{cur}/{target}")))
}

#[cfg(test)]
mod tests;

//! Exec requests in shell form: a command line is split into simple commands (see
//! [`contextos_shell`]), each command and each write redirection is decided, and the strongest
//! verdict wins. A line that cannot be analysed is `ask` (or `deny` when strict), never
//! `allow`.

use crate::decision::{Decision, Rejection, ShellDecision};
use crate::eval::{self, EvalOptions};
use crate::policy::PolicySet;
use crate::request::{Domain, ExecRequest, PathOp, Request, RequestKind};
use contextos_grammar::ast::Effect;

/// How [`PolicySet::decide_shell`](crate::PolicySet::decide_shell) and `decide_argv` treat
/// a line: strictness, explanation, and where it runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellOptions<'a> {
    /// Unanalysable input is denied instead of asked.
    pub strict: bool,
    /// Collect why-not traces in every part (see [`crate::EvalOptions::explain`]).
    pub explain: bool,
    /// Where the line runs, so file targets can be brought into project-relative form.
    /// Without it, targets are judged exactly as written (relative to the project root).
    pub base: Option<&'a ShellBase>,
}

/// The project root and the working directory of a shell line.
#[derive(Debug, Clone, Default)]
pub struct ShellBase {
    /// The project root as an absolute path, `/`-separated, without a trailing `/`.
    /// Several spellings may name it (a symlinked checkout); any of them is recognised.
    pub roots: Vec<String>,
    /// The working directory relative to the root (`""` at the root).
    pub cwd: String,
    /// The line runs in a sandbox whose only host-backed directory is the project (seen
    /// at one of `roots`): every other absolute path, `~` and `$HOME` are the container's
    /// own files and are not judged as host paths. File targets known only at run time
    /// are not rejected either, because the sandbox's changeset is decided path by path
    /// after the command ran; the program itself is still decided.
    pub contained: bool,
}

impl ShellBase {
    /// A target as a path request sees it: absolute paths inside the project become
    /// relative, relative paths are joined to the working directory, anything else
    /// (outside the project, `~`, `$VAR`) stays as written and is judged as such.
    pub fn resolve(&self, target: &str) -> String {
        if target.starts_with('/') {
            for root in &self.roots {
                if let Some(rest) = target.strip_prefix(root.as_str()) {
                    if rest.is_empty() {
                        return ".".into();
                    }
                    if let Some(rel) = rest.strip_prefix('/') {
                        return rel.to_string();
                    }
                }
            }
            return target.to_string();
        }
        if self.cwd.is_empty() || target.starts_with('~') || target.starts_with('$') {
            return target.to_string();
        }
        // `..` is folded against the working directory only; one that climbs above the
        // root is kept, so the path check rejects it as a traversal.
        let mut parts: Vec<&str> = self.cwd.split('/').filter(|s| !s.is_empty()).collect();
        let mut above = 0usize;
        for seg in target.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        above += 1;
                    }
                }
                s => parts.push(s),
            }
        }
        let mut out = "../".repeat(above);
        out.push_str(&parts.join("/"));
        out
    }
}

fn resolve(base: Option<&ShellBase>, target: &str) -> String {
    base.map_or_else(|| target.to_string(), |b| b.resolve(target))
}

impl ShellBase {
    /// Whether `target` (as written) names a host file at all: in a contained base only
    /// paths that land in the project do.
    fn reaches_host(&self, target: &str) -> bool {
        if !self.contained {
            return true;
        }
        if target.starts_with('~') || target.starts_with('$') {
            return false;
        }
        !self.resolve(target).starts_with('/')
    }
}

/// Decides a shell command line ([`PolicySet::decide_shell`] calls it).
pub(crate) fn decide_shell(
    set: &PolicySet,
    line: &str,
    role: Option<&str>,
    opts: ShellOptions<'_>,
) -> ShellDecision {
    decide_commands(
        set,
        line.to_string(),
        contextos_shell::split(line),
        role,
        opts,
    )
}

/// Decides a command given as argv (no shell in between): the words are not split or
/// expanded again, but wrappers are unwrapped as in a line. The decision's `line` is
/// the argv quoted for a person to read.
pub(crate) fn decide_argv(
    set: &PolicySet,
    argv: &[String],
    role: Option<&str>,
    opts: ShellOptions<'_>,
) -> ShellDecision {
    let line = contextos_shell::quote(argv);
    decide_commands(set, line, contextos_shell::split_argv(argv), role, opts)
}

/// Decides the simple commands of one line (or argv): each command, each file it
/// changes; an analysis error is the unknown verdict, never allow.
fn decide_commands(
    set: &PolicySet,
    line: String,
    commands: Result<Vec<contextos_shell::SimpleCommand>, contextos_shell::ShellError>,
    role: Option<&str>,
    opts: ShellOptions<'_>,
) -> ShellDecision {
    let unknown = if opts.strict {
        Effect::Deny
    } else {
        Effect::Ask
    };
    let eval = EvalOptions {
        explain: opts.explain,
    };
    let commands = match commands {
        Ok(c) => c,
        Err(e) => {
            return ShellDecision {
                line,
                verdict: unknown,
                parts: Vec::new(),
                rejection: Some(Rejection {
                    code: "exec.unparsable".into(),
                    message: e.to_string(),
                }),
            }
        }
    };
    let mut parts: Vec<Decision> = Vec::new();
    let mut rejection = None;
    for cmd in &commands {
        if cmd.argv.first().is_some_and(|p| is_dynamic_word(p)) {
            rejection = Some(Rejection {
                code: "exec.dynamic-program".into(),
                message: format!(
                    "the program `{}` is only known at run time",
                    cmd.argv.first().map_or("", |s| s.as_str())
                ),
            });
        }
        // A bare redirection (`> file`) runs no program; only its writes are decided.
        if !cmd.argv.is_empty() {
            let req = Request::new(RequestKind::Exec(ExecRequest {
                argv: cmd.argv.clone(),
                piped_from: cmd.piped_from.clone(),
            }))
            .with_role(role.map(str::to_string));
            parts.push(eval::decide(set, &req, eval));
        }
        // The files the command changes are decided as path requests, so a shell
        // route (`sed -i`, `rm`, `mv`, `tee`, editors, …) meets the same path rules
        // as a direct write.
        let fx = contextos_shell::file_effects(&cmd.argv);
        let contained = opts.base.is_some_and(|b| b.contained);
        if fx.unknown && !contained {
            rejection = Some(Rejection {
                code: "exec.unknown-targets".into(),
                message: format!(
                    "`{}` changes files that cannot be known before it runs",
                    cmd.argv.join(" ")
                ),
            });
        }
        let targets = cmd
            .writes
            .iter()
            .map(|t| (PathOp::Write, t.as_str()))
            .chain(
                fx.effects
                    .iter()
                    .map(|e| (PathOp::from(e.op), e.path.as_str())),
            );
        for (op, target) in targets {
            if opts.base.is_some_and(|b| !b.reaches_host(target)) {
                continue;
            }
            if is_dynamic_word(target) {
                if contained {
                    continue;
                }
                rejection = Some(Rejection {
                    code: "exec.dynamic-target".into(),
                    message: format!(
                        "the file `{target}` is only known at run time (expansion or glob)"
                    ),
                });
                continue;
            }
            let req =
                Request::path(op, resolve(opts.base, target)).with_role(role.map(str::to_string));
            parts.push(eval::decide(set, &req, eval));
        }
    }
    let mut verdict = parts.iter().map(|p| p.verdict).max();
    if rejection.is_some() {
        verdict = Some(verdict.map_or(unknown, |v| v.max(unknown)));
    }
    let verdict = verdict.unwrap_or_else(|| set.defaults[Domain::Exec.index()]);
    ShellDecision {
        line,
        verdict,
        parts,
        rejection,
    }
}

/// A program name that expansion could change. `[` alone is the `test` builtin.
fn is_dynamic_word(w: &str) -> bool {
    w.contains(['$', '`', '*', '?', '{']) || (w.contains('[') && w != "[")
}

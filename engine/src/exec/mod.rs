//! Exec requests in shell form: a command line is split into simple commands (see
//! [`shell`]), each command and each write redirection is decided, and the strongest
//! verdict wins. A line that cannot be analysed is `ask` (or `deny` when strict), never
//! `allow`.

pub mod shell;

use crate::decision::{Decision, Rejection, ShellDecision};
use crate::eval::EvalOptions;
use crate::policy::PolicySet;
use crate::request::{ExecRequest, PathOp, Request, RequestKind};
use contextos_grammar::ast::Effect;

/// The last `/`-separated component of a program path.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ShellOptions {
    /// Unanalysable input is denied instead of asked.
    pub strict: bool,
    pub explain: bool,
}

impl PolicySet {
    /// Decides a shell command line.
    pub fn decide_shell(
        &self,
        line: &str,
        role: Option<&str>,
        opts: ShellOptions,
    ) -> ShellDecision {
        let unknown = if opts.strict {
            Effect::Deny
        } else {
            Effect::Ask
        };
        let eval = EvalOptions {
            explain: opts.explain,
        };
        let commands = match shell::split(line) {
            Ok(c) => c,
            Err(e) => {
                return ShellDecision {
                    line: line.to_string(),
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
                parts.push(self.decide(&req, eval));
            }
            for target in &cmd.writes {
                let req = Request::path(PathOp::Write, target.clone())
                    .with_role(role.map(str::to_string));
                parts.push(self.decide(&req, eval));
            }
        }
        let mut verdict = parts.iter().map(|p| p.verdict).max();
        if rejection.is_some() {
            verdict = Some(verdict.map_or(unknown, |v| v.max(unknown)));
        }
        let verdict = verdict.unwrap_or_else(|| self.default_for(crate::request::Domain::Exec));
        ShellDecision {
            line: line.to_string(),
            verdict,
            parts,
            rejection,
        }
    }
}

/// A program name that expansion could change. `[` alone is the `test` builtin.
fn is_dynamic_word(w: &str) -> bool {
    w.contains(['$', '`', '*', '?', '{']) || (w.contains('[') && w != "[")
}

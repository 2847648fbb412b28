//! The Kiro CLI hook dialect (kiro.dev/docs/cli/hooks; v3: kiro.dev/docs/cli/v3/hooks): a
//! command hook gets one JSON object on stdin — `hook_event_name`, `cwd`, and for tool
//! events `tool_name` and `tool_input` — and answers by exit code alone: 2 blocks a
//! `PreToolUse` (stderr goes back to the model), 0 lets it run, any other code is a
//! warning and the tool runs. There is no ask, so an ask blocks (saying so), and a
//! failure is the same exit 2.
//!
//! Event names are read without regard to case (`preToolUse` in the agent-config hooks,
//! `PreToolUse` as a v3 trigger). Tool names are Kiro's built-in ones in both spellings the
//! documents use (`execute_bash` / `shell` with `command`; `fs_write` / `write` with
//! `path`; `fs_read` / `read` with `path` or `operations[].path`). A tool this table does
//! not know is still looked at: a `path` it carries is judged as both a read and a write.

use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, loose_str, opt_owned, paths_from, perr, req_str, shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer: crate::protocol::dialect::no_document,
    failure: Failure::ExitTwo,
    by_exit: true,
};

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let event = req_str(obj, "hook_event_name", "kiro hook")?.to_owned();
    let label = format!("kiro {event}");
    let judged = event.eq_ignore_ascii_case("preToolUse");
    let (tool, actions, edits) = if judged {
        let tool = req_str(obj, "tool_name", &label)?;
        let label = format!("{label} {tool}");
        let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
        let acts = actions(tool, &input, &label)?;
        (tool.to_owned(), acts, edits(tool, &input))
    } else {
        let tool = loose_str(obj, "tool_name").unwrap_or_else(|| event.clone());
        let acts = args_object(obj.get("tool_input"), "tool_input", &label)
            .and_then(|input| actions(&tool, &input, &label))
            .unwrap_or_default();
        (tool, acts, Vec::new())
    };
    Ok(HookEvent {
        agent: Agent::Kiro,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: Vec::new(),
        session: loose_str(obj, "session_id"),
        tool_input: None,
        can_ask: false,
        observe_only: !judged,
        // Kiro's trust settings are not sent to hooks.
        permission_mode: None,
        edits,
        event,
    })
}

fn actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "execute_bash" | "execute_cmd" | "shell" => vec![shell(req_str(input, "command", label)?)],
        "fs_write" | "write" => paths_from(input, &["path"], PathOp::Write, true, label)?,
        "fs_read" | "read" => read_paths(input, label)?,
        _ => {
            let mut out = paths_from(input, &["path"], PathOp::Read, false, label)?;
            out.extend(paths_from(input, &["path"], PathOp::Write, false, label)?);
            out
        }
    })
}

/// `fs_read`: a `path`, or `operations`, each with its own `path`; at least one.
fn read_paths(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let mut out = paths_from(input, &["path"], PathOp::Read, false, label)?;
    if let Some(ops) = input.get("operations") {
        let Some(ops) = ops.as_array() else {
            return Err(perr(format!("{label}: `operations` is not an array")));
        };
        for op in ops {
            let Some(op) = op.as_object() else {
                return Err(perr(format!("{label}: an operation is not an object")));
            };
            for a in paths_from(op, &["path"], PathOp::Read, true, label)? {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
    }
    if out.is_empty() {
        return Err(perr(format!(
            "{label}: no file path (expected `path` or `operations`)"
        )));
    }
    Ok(out)
}

/// What `fs_write` puts into its file: `file_text` (create), `new_str` for `old_str`
/// (str_replace), `new_str` appended or inserted.
fn edits(tool: &str, input: &Obj) -> Vec<Edit> {
    if !matches!(tool, "fs_write" | "write") {
        return Vec::new();
    }
    let Some(p) = text_of(input, &["path"]).filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    match (text_of(input, &["file_text"]), text_of(input, &["new_str"])) {
        (Some(text), _) => vec![edit(p, "", text, true)],
        (None, Some(new)) => vec![edit(
            p,
            text_of(input, &["old_str"]).unwrap_or_default(),
            new,
            false,
        )],
        (None, None) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answer::Rendered;
    use crate::test_support::hooks::*;
    use crate::{render, render_failure, Answer};

    #[test]
    fn kiro_fixtures() {
        check(Agent::Kiro);
    }

    #[test]
    fn the_verdict_is_the_exit_code() {
        let e = fixture(Agent::Kiro, "pretooluse-execute-bash-rm-home.json");
        let denied = render(&e, &deny("no"));
        assert_eq!((denied.exit, denied.stdout.as_str()), (2, ""));
        assert_eq!(denied.stderr, "no\n");
        let asked = render(&e, &ask("sure?"));
        assert_eq!(asked.exit, 2);
        assert_eq!(asked.stderr, format!("{WOULD_ASK}sure?\n"));
        assert_eq!(render(&e, &allow("ok")), Rendered::pass());
        assert_eq!(render(&e, &Answer::Pass), Rendered::pass());
        let f = render_failure(Agent::Kiro, "policy invalid");
        assert_eq!((f.exit, f.stdout.as_str()), (2, ""));
    }

    #[test]
    fn reads_carry_every_operation_path_and_writes_their_text() {
        let e = fixture(Agent::Kiro, "pretooluse-fs-read-operations.json");
        assert_eq!(
            e.actions,
            vec![p(PathOp::Read, ".env"), p(PathOp::Read, "src/main.rs")]
        );
        let e = fixture(Agent::Kiro, "pretooluse-fs-write-create.json");
        assert_eq!(
            e.edits,
            vec![edit(
                ".github/workflows/release.yml",
                "",
                "on: push\n",
                true
            )]
        );
        refuses(
            Agent::Kiro,
            &[
                (r#"{"cwd":"/repo"}"#, "`hook_event_name` is missing"),
                (
                    r#"{"hook_event_name":"preToolUse","tool_input":{}}"#,
                    "`tool_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"execute_bash","tool_input":{}}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Line"}]}}"#,
                    "no file path",
                ),
            ],
        );
    }
}

//! The Windsurf (Cascade) hook dialect (`ide-targets.md` §1.7 and §4.4): the input is
//! `agent_action_name` (the event), `trajectory_id`, `execution_id`, `timestamp` and
//! `tool_info` — `command_line` and `cwd` for `pre_run_command`, `file_path` for
//! `pre_read_code`, `file_path` and `edits` for `pre_write_code`, `mcp_server_name`,
//! `mcp_tool_name` and `mcp_tool_arguments` for `pre_mcp_tool_use`. There is no output
//! document: exit 2 blocks a `pre_*` action and shows stderr, exit 0 lets it run. Cascade
//! cannot ask, so an ask blocks too (saying so), and a failure is the same exit 2.

use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, loose_str, opt_owned, path, req_str, shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer: crate::protocol::dialect::no_document,
    failure: Failure::ExitTwo,
    by_exit: true,
};

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let event = req_str(obj, "agent_action_name", "windsurf hook")?.to_owned();
    let label = format!("windsurf {event}");
    let judged = event.starts_with("pre_") && event != "pre_user_prompt";
    let (actions, edits, cwd) = if judged {
        let info = args_object(obj.get("tool_info"), "tool_info", &label)?;
        let label = format!("{label} tool_info");
        let cwd = opt_owned(&info, "cwd", &label)?;
        let (actions, edits) = windsurf_actions(&event, &info, &label)?;
        (actions, edits, cwd)
    } else {
        // post_* and prompt events: nothing to veto, and nothing read for the log.
        let cwd = obj
            .get("tool_info")
            .and_then(Value::as_object)
            .and_then(|i| loose_str(i, "cwd"));
        (Vec::new(), Vec::new(), cwd)
    };
    Ok(HookEvent {
        agent: Agent::Windsurf,
        tool: event.clone(),
        actions,
        cwd,
        roots: Vec::new(),
        session: loose_str(obj, "trajectory_id"),
        tool_input: None,
        can_ask: false,
        observe_only: !judged,
        // Cascade's hook input carries no permission mode.
        permission_mode: None,
        edits,
        event,
    })
}

fn windsurf_actions(
    event: &str,
    info: &Obj,
    label: &str,
) -> Result<(Vec<Action>, Vec<Edit>), ProtocolError> {
    Ok(match event {
        "pre_run_command" => (
            vec![shell(req_str(info, "command_line", label)?)],
            Vec::new(),
        ),
        "pre_read_code" => (
            vec![path(PathOp::Read, req_str(info, "file_path", label)?)],
            Vec::new(),
        ),
        "pre_write_code" => {
            let file = req_str(info, "file_path", label)?;
            (vec![path(PathOp::Write, file)], write_edits(file, info))
        }
        "pre_mcp_tool_use" => {
            let tool = req_str(info, "mcp_tool_name", label)?;
            let args = match info.get("mcp_tool_arguments") {
                Some(Value::String(t)) => serde_json::from_str(t).ok(),
                Some(Value::Null) | None => None,
                Some(v) => Some(v.clone()),
            };
            (
                vec![Action::Mcp {
                    server: opt_owned(info, "mcp_server_name", label)?,
                    tool: tool.to_owned(),
                    args,
                    endpoint: McpEndpoint::Named,
                }],
                Vec::new(),
            )
        }
        // A `pre_*` event this version does not know: nothing ContextOS can judge.
        _ => (Vec::new(), Vec::new()),
    })
}

/// The `edits` of `pre_write_code` (`old_string` → `new_string` each).
fn write_edits(file: &str, info: &Obj) -> Vec<Edit> {
    info.get("edits")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_object)
                .filter_map(|e| {
                    let new = text_of(e, &["new_string"])?;
                    let old = text_of(e, &["old_string"]).unwrap_or_default();
                    Some(edit(file, old, new, false))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hooks::*;
    use crate::{render, render_failure, Answer, Rendered};

    #[test]
    fn windsurf_fixtures() {
        check(Agent::Windsurf);
    }

    #[test]
    fn windsurf_answers_by_exit_code() {
        let e = fixture(Agent::Windsurf, "pre-run-command-rm-home.json");
        let blocked = |reason: &str| Rendered {
            stdout: String::new(),
            stderr: format!("{reason}\n"),
            exit: 2,
        };
        assert_eq!(render(&e, &deny("[CTX-1] no")), blocked("[CTX-1] no"));
        assert_eq!(
            render(&e, &ask("sure?")),
            blocked(&format!("{WOULD_ASK}sure?"))
        );
        assert_eq!(render(&e, &allow("ok")), Rendered::pass());
        assert_eq!(render(&e, &Answer::Pass), Rendered::pass());
        let f = render_failure(Agent::Windsurf, "boom");
        assert_eq!((f.exit, f.stdout.as_str()), (2, ""));
        let post = fixture(Agent::Windsurf, "post-run-command.json");
        assert_eq!(render(&post, &deny("x")), Rendered::pass());
    }

    #[test]
    fn windsurf_missing_or_mistyped_fields() {
        refuses(
            Agent::Windsurf,
            &[
                (r#"{"tool_info":{}}"#, "`agent_action_name` is missing"),
                (
                    r#"{"agent_action_name":"pre_run_command"}"#,
                    "`tool_info` is missing",
                ),
                (
                    r#"{"agent_action_name":"pre_run_command","tool_info":{"cwd":"/repo"}}"#,
                    "`command_line` is missing",
                ),
                (
                    r#"{"agent_action_name":"pre_write_code","tool_info":{"edits":[]}}"#,
                    "`file_path` is missing",
                ),
                (
                    r#"{"agent_action_name":"pre_mcp_tool_use","tool_info":{"mcp_server_name":"x"}}"#,
                    "`mcp_tool_name` is missing",
                ),
            ],
        );
    }
}

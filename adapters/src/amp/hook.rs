//! The Amp hook dialect: a `delegate` permission rule (Amp manual, "Delegating the
//! decision to an external program", and the appendix's permissions reference).
//!
//! Amp runs the program named in the rule's `to` with the tool's arguments as JSON on
//! stdin and the tool's name in `AGENT_TOOL_NAME` (`AGENT=amp`, `AMP_THREAD_ID` beside
//! it). There is no output document: exit 0 allows, 1 asks the operator, 2 and above
//! reject with stderr passed to the model. The CLI folds the environment and stdin into
//! one object, [`envelope`], which is what this dialect reads: `tool_name`,
//! `tool_input`, `thread_id`.
//!
//! Tools: `Bash` (`cmd`, `cwd`), `Read` (`path`), `create_file` (`path`, `content`),
//! `edit_file` (`path`, `old_str`, `new_str`), `undo_edit` (`path`), `glob`
//! (`filePattern`), `Grep` (`path`, `glob`), `read_web_page` (`url`), `web_search`
//! (`query`), `mcp__<server>__<tool>`. An ask is answered only for `Bash`: Amp documents
//! asking as working for `Bash` alone in its VS Code extension, so elsewhere an ask is a
//! reject that says so.

use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, loose_str, opt_str, paths_from, req_str, shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde_json::{Map, Value};

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer: crate::protocol::dialect::no_document,
    failure: Failure::ExitTwo,
    by_exit: true,
};

/// The event name ContextOS logs for a delegated call (Amp names none).
pub const EVENT: &str = "delegate";

/// One delegated call as the dialect reads it: `tool_name` (from `AGENT_TOOL_NAME`),
/// `thread_id` (from `AMP_THREAD_ID`) and `tool_input`, stdin parsed as JSON — kept as a
/// string when it is not JSON, and `null` when it is empty, so that the parser refuses it
/// (fail closed) instead of the envelope hiding it.
pub fn envelope(tool_name: Option<&str>, thread_id: Option<&str>, stdin: &[u8]) -> Vec<u8> {
    let stdin = stdin.strip_prefix(b"\xef\xbb\xbf").unwrap_or(stdin);
    let input = if stdin.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(stdin)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(stdin).into_owned()))
    };
    let mut obj = Map::new();
    let text = |s: Option<&str>| s.map_or(Value::Null, |s| Value::String(s.to_owned()));
    obj.insert("tool_name".into(), text(tool_name));
    obj.insert("thread_id".into(), text(thread_id));
    obj.insert("tool_input".into(), input);
    // Serialising a map of JSON values cannot fail; an empty object is refused anyway.
    serde_json::to_vec(&Value::Object(obj)).unwrap_or_default()
}

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let tool = req_str(obj, "tool_name", "amp delegate (AGENT_TOOL_NAME)")?;
    let label = format!("amp {tool}");
    let input = args_object(obj.get("tool_input"), "tool_input (stdin)", &label)?;
    let actions = amp_actions(tool, &input, &label)?;
    Ok(HookEvent {
        agent: Agent::Amp,
        event: EVENT.into(),
        tool: tool.to_owned(),
        actions,
        // Amp sends no working directory: the hook runs in Amp's, the workspace.
        cwd: None,
        roots: Vec::new(),
        session: loose_str(obj, "thread_id"),
        edits: amp_edits(tool, &input),
        tool_input: None,
        can_ask: tool == "Bash",
        observe_only: false,
        // Amp passes no permission mode to a delegate.
        permission_mode: None,
    })
}

fn amp_actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "Bash" => {
            let cmd = req_str(input, "cmd", label)?;
            // `cwd` (absolute or relative) is where the command runs: judged as if it
            // changed there first, so relative paths land where they will.
            match opt_str(input, "cwd", label)?.filter(|d| !d.is_empty() && *d != ".") {
                Some(d) => vec![shell(&format!(
                    "cd {} && {cmd}",
                    contextos_shell::quote(&[d.to_owned()])
                ))],
                None => vec![shell(cmd)],
            }
        }
        "Read" => paths_from(input, &["path"], PathOp::Read, true, label)?,
        "create_file" | "edit_file" | "undo_edit" => {
            paths_from(input, &["path"], PathOp::Write, true, label)?
        }
        "glob" => glob_reads(input, &[], "filePattern", false, label)?,
        // ripgrep-style `glob` filters: a glob without `/` matches names at any depth.
        "Grep" => glob_reads(input, &["path"], "glob", true, label)?,
        "read_web_page" => vec![Action::Fetch {
            url: req_str(input, "url", label)?.to_owned(),
        }],
        "web_search" => vec![Action::Search {
            query: req_str(input, "query", label)?.to_owned(),
        }],
        t if t.starts_with("mcp__") => vec![crate::claude::hook::claude_mcp(t, input)],
        // Task, oracle, mermaid, todo_*…: nothing ContextOS has a rule for.
        _ => Vec::new(),
    })
}

/// What `create_file` (the whole file) and `edit_file` (`old_str` → `new_str`) put in.
fn amp_edits(tool: &str, input: &Obj) -> Vec<Edit> {
    let Some(file) = text_of(input, &["path"]).filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    match tool {
        "create_file" => text_of(input, &["content"])
            .map(|c| vec![edit(file, "", c, true)])
            .unwrap_or_default(),
        "edit_file" => text_of(input, &["new_str"])
            .map(|new| {
                let old = text_of(input, &["old_str"]).unwrap_or_default();
                vec![edit(file, old, new, false)]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hooks::*;
    use crate::{parse_event, render, render_failure, Answer, Rendered};
    use PathOp::{Read, Write};

    /// A call as Amp makes it: the tool's name in the environment, its arguments on stdin.
    fn call(tool: &str, stdin: &str) -> HookEvent {
        parsed(
            Agent::Amp,
            &envelope(Some(tool), Some("T-5928a90d"), stdin.as_bytes()),
        )
    }

    fn refused(tool: Option<&str>, stdin: &str) -> String {
        match parse_event(Agent::Amp, &envelope(tool, None, stdin.as_bytes())) {
            Ok(e) => panic!("expected an error, got {e:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn amp_fixtures() {
        check(Agent::Amp);
    }

    #[test]
    fn amp_answers_by_exit_code() {
        let e = call("Bash", r#"{"cmd":"git push --force"}"#);
        assert!(e.can_ask);
        assert_eq!(e.session.as_deref(), Some("T-5928a90d"));
        let rendered = |stderr: &str, exit| Rendered {
            stdout: String::new(),
            stderr: format!("{stderr}\n"),
            exit,
        };
        assert_eq!(render(&e, &deny("[CTX-1] no")), rendered("[CTX-1] no", 2));
        // Exit 1 asks the operator.
        assert_eq!(render(&e, &ask("sure?")), rendered("sure?", 1));
        assert_eq!(render(&e, &allow("ok")), Rendered::pass());
        assert_eq!(render(&e, &Answer::Pass), Rendered::pass());
        // Outside Bash an ask cannot be relied on: it is a reject that says so.
        let e = call(
            "edit_file",
            r#"{"path":"/repo/Cargo.lock","old_str":"a","new_str":"b"}"#,
        );
        assert!(!e.can_ask);
        assert_eq!(
            render(&e, &ask("sure?")),
            rendered(&format!("{WOULD_ASK}sure?"), 2)
        );
        let f = render_failure(Agent::Amp, "boom");
        assert_eq!((f.exit, f.stdout.as_str()), (2, ""));
        assert!(f.stderr.contains("boom"));
    }

    #[test]
    fn amp_tool_inputs() {
        let e = call("Bash", r#"{"cmd":"rm -rf hooks","cwd":".git"}"#);
        assert_eq!(e.actions, vec![sh("cd .git && rm -rf hooks")]);
        let e = call("Read", r#"{"path":"/repo/.env","read_range":[1,20]}"#);
        assert_eq!(e.actions, vec![p(Read, "/repo/.env")]);
        let e = call(
            "create_file",
            r#"{"path":"/repo/a.rs","content":"fn a() {}"}"#,
        );
        assert_eq!(e.actions, vec![p(Write, "/repo/a.rs")]);
        assert_eq!(
            e.edits,
            vec![crate::protocol::fields::edit(
                "/repo/a.rs",
                "",
                "fn a() {}",
                true
            )]
        );
        let e = call(
            "Grep",
            r#"{"pattern":"KEY","path":"/repo/secrets","glob":"*.yaml"}"#,
        );
        assert_eq!(
            e.actions,
            vec![p(Read, "/repo/secrets"), p(Read, "/repo/secrets/**/*.yaml")]
        );
        let e = call("glob", r#"{"filePattern":"**/*.pem"}"#);
        assert_eq!(e.actions, vec![p(Read, "**/*.pem")]);
        let e = call("mcp__github__create_issue", r#"{"title":"t"}"#);
        assert_eq!(
            e.actions.iter().map(without_args).collect::<Vec<_>>(),
            vec![mcp(Some("github"), "create_issue")]
        );
        // A tool ContextOS has no reading for is passed, not blocked.
        let e = call("oracle", r#"{"task":"review"}"#);
        assert!(e.actions.is_empty());
    }

    #[test]
    fn amp_missing_or_mistyped_fields() {
        for (tool, stdin, want) in [
            (None, r#"{"cmd":"ls"}"#, "`tool_name` is missing"),
            (Some("Bash"), "", "`tool_input (stdin)` is missing"),
            (Some("Bash"), "cmd=ls", "not JSON"),
            (Some("Bash"), "[1]", "not an object"),
            (Some("Bash"), r#"{"command":"ls"}"#, "`cmd` is missing"),
            (Some("Bash"), r#"{"cmd":7}"#, "`cmd` is not a string"),
            (Some("Read"), "{}", "no file path"),
            (Some("read_web_page"), "{}", "`url` is missing"),
        ] {
            let e = refused(tool, stdin);
            assert!(e.contains(want), "{tool:?} {stdin}: {e}");
        }
    }
}

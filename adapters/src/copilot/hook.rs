//! The GitHub Copilot hook dialect (`ide-targets.md` §1.3.2 and its 2026-12 update), CLI
//! and cloud agent, in both its native camelCase form and the "VS Code compatible"
//! snake_case one. Answers are top-level `permissionDecision` documents (a PascalCase
//! event also gets Claude's envelope). A failure is a deny document with exit 0: Copilot
//! now fails closed on crashes and non-zero exits too, but a deny on a successful exit is
//! the one answer every Copilot release binds on. Only a timeout fails open.

use crate::protocol::answer::{to_line, Decision, PermissionDecision};
use crate::protocol::apply_patch::{apply_patch_actions, apply_patch_edits};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, loose_str, opt_owned, opt_str, paths_from, perr, req_str, shell,
    text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse: parse_object,
    answer,
    // A deny on exit 0 binds on every Copilot release (older ones skipped non-zero exits).
    failure: Failure::DenyAnswer { exit: 0 },
    by_exit: false,
};

/// A Copilot event, in either dialect; also what `contextos hook claude` hands over when
/// the Copilot CLI runs the hooks of `.claude/settings.json` (`hook claude` tells it apart).
pub(crate) fn parse_object(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    // VS Code's agent hooks load `.github/hooks/*.json` too and send their own payload
    // (`hookEventName` beside `tool_name`/`tool_input`, VS Code's tool names); read as
    // Copilot's snake_case dialect it would lack `hook_event_name` and block every call.
    if is_vscode(obj) {
        return crate::claude::vscode::parse_as(obj, Agent::Copilot);
    }
    // The "VS Code compatible" dialect (hooks configured under PascalCase event names) sends
    // snake_case fields; the native dialect camelCase ones and no event name at all.
    let snake = ["hook_event_name", "tool_name", "tool_input"]
        .iter()
        .any(|k| obj.contains_key(*k));
    let (event, tool_key, args_key) = if snake {
        let event = req_str(obj, "hook_event_name", "copilot hook")?.to_owned();
        (event, "tool_name", "tool_input")
    } else {
        let event = match opt_str(obj, "hookEventName", "copilot hook")? {
            Some(e) if !e.is_empty() => e.to_owned(),
            // Only postToolUse carries a result; a call without one is about to happen, so
            // the unknown case is judged rather than waved through.
            _ if obj.contains_key("toolResult") => "postToolUse".to_owned(),
            _ => "preToolUse".to_owned(),
        };
        (event, "toolName", "toolArgs")
    };
    let label = format!("copilot {event}");
    let judged = event.eq_ignore_ascii_case("preToolUse");
    let mut edits = Vec::new();
    let (tool, actions) = if judged {
        let tool = req_str(obj, tool_key, &label)?;
        let label = format!("{label} {tool}");
        let Some(args) = obj.get(args_key).filter(|v| !v.is_null()) else {
            return Err(perr(format!("{label}: `{args_key}` is missing")));
        };
        let actions = copilot_actions(tool, args, args_key, &label)?;
        edits = copilot_edits(tool, args);
        (tool.to_owned(), actions)
    } else {
        match loose_str(obj, tool_key) {
            Some(tool) => {
                let actions = obj
                    .get(args_key)
                    .map(|args| copilot_actions(&tool, args, args_key, &label))
                    .and_then(Result::ok)
                    .unwrap_or_default();
                (tool, actions)
            }
            None => (event.clone(), Vec::new()),
        }
    };
    Ok(HookEvent {
        agent: Agent::Copilot,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: Vec::new(),
        session: loose_str(obj, "sessionId").or_else(|| loose_str(obj, "session_id")),
        tool_input: None,
        // The CLI prompts on `ask`; the cloud agent only processes `deny`, where an `ask`
        // is then simply not enforced — the caller cannot tell the two apart from the input.
        can_ask: judged,
        observe_only: !judged,
        // Copilot's hook input carries no permission mode (`--allow-all-tools` is not sent).
        permission_mode: None,
        edits,
        event,
    })
}

/// VS Code's payload: the camelCase event key with the snake_case tool keys. Copilot's
/// native dialect pairs `hookEventName` with `toolName`/`toolArgs`, its Claude-compatible
/// one `hook_event_name` with `tool_name`/`tool_input`.
fn is_vscode(obj: &Obj) -> bool {
    crate::claude::vscode::is_payload(obj)
        && ["tool_name", "tool_input"]
            .iter()
            .any(|k| obj.contains_key(*k))
}

/// What Copilot's file tools put into their file: `apply_patch` bodies, `create`'s
/// `file_text`, `edit`/`str_replace_editor`'s `old_str`/`new_str`.
fn copilot_edits(tool: &str, args: &Value) -> Vec<Edit> {
    let name = copilot_name(tool);
    if name == "apply_patch" {
        return apply_patch_edits(args);
    }
    if !matches!(name.as_str(), "create" | "edit" | "str_replace_editor") {
        return Vec::new();
    }
    let Ok(input) = args_object(Some(args), "", "") else {
        return Vec::new();
    };
    let (old, new, whole) = match (
        text_of(&input, &["file_text"]),
        text_of(&input, &["new_str", "new_string", "insert_text"]),
    ) {
        (Some(text), _) => ("", text, true),
        (None, Some(new)) => (
            text_of(&input, &["old_str", "old_string"]).unwrap_or_default(),
            new,
            false,
        ),
        (None, None) => return Vec::new(),
    };
    ["path", "file_path"]
        .iter()
        .filter_map(|k| text_of(&input, &[k]).filter(|p| !p.is_empty()))
        .map(|p| edit(p, old, new, whole))
        .collect()
}

/// The Copilot tool behind `tool`, lowercased. In its Claude-compatible hooks (PascalCase
/// events, `.claude/settings.json`) the Copilot CLI renames its tools to Claude's names
/// and keeps its own arguments: `Read` is `view`, `Write` is `create`, `Edit` and
/// `MultiEdit` are `edit`, `WebFetch` is `web_fetch`.
fn copilot_name(tool: &str) -> String {
    let name = tool.to_ascii_lowercase();
    match name.as_str() {
        "read" => "view".into(),
        "write" => "create".into(),
        "multiedit" => "edit".into(),
        "webfetch" => "web_fetch".into(),
        _ => name,
    }
}

/// Copilot tool names are matched case-insensitively: the documented ones are lowercase, and
/// recognising a differently-cased spelling can only add actions to judge.
fn copilot_actions(
    tool: &str,
    args: &Value,
    args_key: &str,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let name = copilot_name(tool);
    if name == "apply_patch" {
        return apply_patch_actions(args, args_key, label);
    }
    let input = args_object(Some(args), args_key, label)?;
    let label = &format!("{label} {args_key}");
    const PATH_KEYS: [&str; 2] = ["path", "file_path"];
    Ok(match name.as_str() {
        "bash" => vec![shell(req_str(&input, "command", label)?)],
        "powershell" => vec![Action::PowerShell {
            line: req_str(&input, "command", label)?.to_owned(),
        }],
        "view" => paths_from(&input, &PATH_KEYS, PathOp::Read, true, label)?,
        "create" | "edit" => paths_from(&input, &PATH_KEYS, PathOp::Write, true, label)?,
        // `command` here is the editor's sub-command, not a shell line; anything but `view`
        // (create, str_replace, insert, undo_edit, or absent) writes.
        "str_replace_editor" => {
            let op = match opt_str(&input, "command", label)? {
                Some("view") => PathOp::Read,
                _ => PathOp::Write,
            };
            paths_from(&input, &PATH_KEYS, op, true, label)?
        }
        "glob" => glob_reads(&input, &PATH_KEYS, "pattern", false, label)?,
        "grep" => glob_reads(&input, &PATH_KEYS, "glob", true, label)?,
        "web_fetch" => vec![Action::Fetch {
            url: req_str(&input, "url", label)?.to_owned(),
        }],
        // The CLI names MCP tools `SERVER-TOOL`; its own tools have no `-` in their names.
        _ if tool.contains('-') => vec![Action::Mcp {
            server: None,
            tool: tool.to_owned(),
            args: Some(Value::Object(input.clone())),
            endpoint: McpEndpoint::Prefixed,
        }],
        _ => Vec::new(),
    })
}

fn answer(event: &str, decision: Decision, reason: &str) -> String {
    // Copilot CLI and cloud agent: at the top level. A PascalCase event comes from the
    // Claude-compatible configuration (`.github/hooks` under PascalCase names, or
    // `.claude/settings.json`), whose readers may look for Claude's envelope instead: the
    // same decision is then written both ways, so whichever is read, it binds.
    // A failure's deny knows no event (`""`): it may be answering VS Code, which runs
    // `.github/hooks` too and reads only the envelope, so it carries both as well.
    if event == "PreToolUse" || event.is_empty() {
        return to_line(&Both {
            top: PermissionDecision::new(decision, reason),
            hook_specific_output: Envelope {
                hook_event_name: "PreToolUse",
                decision: PermissionDecision::new(decision, reason),
            },
        });
    }
    to_line(&PermissionDecision::new(decision, reason))
}

#[derive(serde::Serialize)]
struct Both<'a> {
    #[serde(flatten)]
    top: PermissionDecision<'a>,
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: Envelope<'a>,
}

#[derive(serde::Serialize)]
struct Envelope<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'a str,
    #[serde(flatten)]
    decision: PermissionDecision<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::fields::edit;
    use crate::test_support::hooks::*;
    use crate::{parse_event, render, Answer, Rendered};
    use PathOp::{Delete, Read, Write};

    #[test]
    fn copilot_fixtures() {
        check(Agent::Copilot);
    }

    #[test]
    fn copilot_answers_both_dialects() {
        let e = fixture(Agent::Copilot, "bash-rm-home.json");
        assert_eq!(
            render(&e, &deny("no")),
            out(r#"{"permissionDecision":"deny","permissionDecisionReason":"no"}"#)
        );
        assert_eq!(
            render(&e, &ask("sure?")),
            out(r#"{"permissionDecision":"ask","permissionDecisionReason":"sure?"}"#)
        );
        assert_eq!(
            render(&e, &allow("")),
            out(r#"{"permissionDecision":"allow"}"#)
        );
        // The Claude-compatible (PascalCase) form: the same decision, read either way.
        let e = fixture(Agent::Copilot, "snake-pretooluse-bash-git-hookspath.json");
        assert_eq!(
            render(&e, &deny("no")),
            out(
                r#"{"permissionDecision":"deny","permissionDecisionReason":"no","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#
            )
        );
        assert_eq!(
            render(&e, &allow("")),
            out(
                r#"{"permissionDecision":"allow","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#
            )
        );
    }

    /// Claude's tool names with Copilot's arguments, as the Copilot CLI sends them from
    /// `.claude/settings.json`, are Copilot's tools.
    #[test]
    fn claude_names_are_copilots_tools() {
        let e = parsed(
            Agent::Copilot,
            br#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"path":"a.rs","file_text":"x"}}"#,
        );
        assert_eq!(e.actions, vec![p(Write, "a.rs")]);
        assert_eq!(e.edits, vec![edit("a.rs", "", "x", true)]);
        let e = parsed(
            Agent::Copilot,
            br#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"path":"/r/.env"}}"#,
        );
        assert_eq!(e.actions, vec![p(Read, "/r/.env")]);
    }

    /// VS Code runs the hooks of `.github/hooks/*.json` with its own payload: it is read
    /// (not refused, which would block every call) and answered so VS Code's reader of
    /// Claude's envelope binds — a deny denies, an ask asks, a pass says nothing.
    #[test]
    fn vscode_payloads_from_github_hooks_are_answered_in_vscode_dialect() {
        let e = fixture(Agent::Copilot, "vscode-run-in-terminal-rm-home.json");
        assert_eq!(e.agent, Agent::Copilot);
        assert_eq!(
            e.session.as_deref(),
            Some("c0ffee42-6a1d-4b7e-9f00-3d2a1b4c5e6f")
        );
        for (answer, word) in [(deny("no"), "deny"), (ask("sure?"), "ask")] {
            let r = render(&e, &answer);
            assert_eq!(r.exit, 0);
            let v: Value = serde_json::from_str(&r.stdout).unwrap();
            let h = &v["hookSpecificOutput"];
            assert_eq!(h["hookEventName"], "PreToolUse");
            assert_eq!(h["permissionDecision"], word, "{}", r.stdout);
        }
        assert_eq!(render(&e, &Answer::Pass), Rendered::pass());
        // An edit of a hook file is a write VS Code's `create_file` names in `filePath`.
        let e = fixture(Agent::Copilot, "vscode-create-file-github-hook.json");
        assert_eq!(
            e.actions,
            vec![p(Write, "/repo/.github/hooks/contextos.json")]
        );
        // A failure blocks in VS Code's reading too.
        let f = crate::render_failure(Agent::Copilot, "policy invalid");
        let v: Value = serde_json::from_str(&f.stdout).unwrap();
        assert_eq!(f.exit, 0);
        assert_eq!(v["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        // VS Code's PostToolUse is observed only.
        let e = parsed(
            Agent::Copilot,
            br#"{"hookEventName":"PostToolUse","tool_name":"run_in_terminal","tool_input":{"command":"ls"}}"#,
        );
        assert!(e.observe_only);
        // Its PreToolUse still needs what it judges.
        refuses(
            Agent::Copilot,
            &[(
                r#"{"hookEventName":"PreToolUse","tool_name":"run_in_terminal","tool_input":{}}"#,
                "`command` is missing",
            )],
        );
    }

    #[test]
    fn copilot_missing_or_mistyped_fields() {
        // camelCase without a tool name is taken for a preToolUse, which needs one.
        refuses(
            Agent::Copilot,
            &[
                (r#"{"timestamp":1,"cwd":"/repo"}"#, "`toolName` is missing"),
                (
                    r#"{"timestamp":1,"toolName":"bash"}"#,
                    "`toolArgs` is missing",
                ),
                (
                    r#"{"timestamp":1,"toolName":"bash","toolArgs":"rm -rf ~"}"#,
                    "is a string but not JSON",
                ),
                (
                    r#"{"timestamp":1,"toolName":"bash","toolArgs":"[\"rm\"]"}"#,
                    "not a JSON object",
                ),
                (
                    r#"{"timestamp":1,"toolName":"bash","toolArgs":"{}"}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"timestamp":1,"toolName":"view","toolArgs":{}}"#,
                    "no file path",
                ),
                (
                    r#"{"toolName":"apply_patch","toolArgs":"*** Begin Patch\n*** Add File: x\n+1\n"}"#,
                    "missing `*** End Patch`",
                ),
                (
                    r#"{"toolName":"apply_patch","toolArgs":{"other":"x"}}"#,
                    "has no patch",
                ),
                (
                    r#"{"toolName":"apply_patch","toolArgs":{"input":42}}"#,
                    "is not a string",
                ),
                // snake_case dialect requires its event name.
                (
                    r#"{"tool_name":"bash","tool_input":{"command":"ls"}}"#,
                    "`hook_event_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"bash"}"#,
                    "`tool_input` is missing",
                ),
            ],
        );
    }

    #[test]
    fn copilot_apply_patch_shapes() {
        let expected = vec![p(Write, "src/a.rs")];
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch\n";
        let shapes = [
            serde_json::json!({"toolName": "apply_patch", "toolArgs": patch}),
            serde_json::json!({"toolName": "apply_patch", "toolArgs": {"input": patch}}),
            serde_json::json!({"toolName": "apply_patch", "toolArgs": {"patch": patch}}),
            serde_json::json!({"toolName": "apply_patch", "toolArgs": serde_json::to_string(&serde_json::json!({"input": patch})).unwrap()}),
            serde_json::json!({"toolName": "apply_patch", "toolArgs": serde_json::to_string(&patch).unwrap()}),
            serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}}),
        ];
        for shape in shapes {
            let e = parse_event(Agent::Copilot, shape.to_string().as_bytes())
                .unwrap_or_else(|err| panic!("{shape}: {err}"));
            assert_eq!(e.actions, expected, "{shape}");
        }
        // Two fields: both are judged.
        let two = serde_json::json!({"toolName": "apply_patch", "toolArgs": {
            "input": patch,
            "patch": "*** Begin Patch\n*** Delete File: .github/hooks/x.json\n*** End Patch"
        }});
        let e = parse_event(Agent::Copilot, two.to_string().as_bytes()).unwrap();
        assert_eq!(
            e.actions,
            vec![p(Write, "src/a.rs"), p(Delete, ".github/hooks/x.json")]
        );
        // A unified diff is accepted too.
        let diff = serde_json::json!({"toolName": "apply_patch", "toolArgs":
            "diff --git a/.github/hooks/x.json b/.github/hooks/x.json\nnew file mode 100644\n--- /dev/null\n+++ b/.github/hooks/x.json\n@@ -0,0 +1 @@\n+{}\n"});
        let e = parse_event(Agent::Copilot, diff.to_string().as_bytes()).unwrap();
        assert_eq!(e.actions, vec![p(Write, ".github/hooks/x.json")]);
    }

    #[test]
    fn copilot_tool_names_are_case_insensitive_and_str_replace_editor_defaults_to_write() {
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"Bash","toolArgs":{"command":"ls"}}"#,
        );
        assert_eq!(e.actions, vec![sh("ls")]);
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"str_replace_editor","toolArgs":{"path":"/repo/a"}}"#,
        );
        assert_eq!(e.actions, vec![p(Write, "/repo/a")]);
        let e = parsed(Agent::Copilot, br#"{"toolName":"str_replace_editor","toolArgs":{"command":"insert","path":"/repo/a","file_path":"/repo/b"}}"#);
        assert_eq!(e.actions, vec![p(Write, "/repo/a"), p(Write, "/repo/b")]);
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"grep","toolArgs":{"pattern":"x","path":"/home/dev/.aws"}}"#,
        );
        assert_eq!(e.actions, vec![p(Read, "/home/dev/.aws")]);
    }

    #[test]
    fn copilot_session_events_are_observe_only() {
        let e = parsed(
            Agent::Copilot,
            br#"{"hook_event_name":"PostToolUse","tool_name":"bash","tool_input":"garbage"}"#,
        );
        assert!(e.observe_only && e.actions.is_empty());
        let e = parsed(
            Agent::Copilot,
            br#"{"hookEventName":"sessionStart","timestamp":1,"cwd":"/repo","source":"new"}"#,
        );
        assert!(e.observe_only);
        assert_eq!(e.tool, "sessionStart");
    }

    #[test]
    fn copilot_searches_globs_and_edit_text() {
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"glob","toolArgs":{"pattern":"secrets/**"}}"#,
        );
        assert_eq!(e.actions, vec![p(Read, "secrets/**")]);
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"grep","toolArgs":{"pattern":"k","glob":"*.pem","path":"/repo"}}"#,
        );
        assert_eq!(e.actions, vec![p(Read, "/repo"), p(Read, "/repo/**/*.pem")]);
        assert_eq!(e.permission_mode, None);
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"create","toolArgs":{"path":"/repo/build.rs","file_text":"fn main() {}"}}"#,
        );
        assert_eq!(
            e.edits,
            vec![edit("/repo/build.rs", "", "fn main() {}", true)]
        );
        let e = parsed(
            Agent::Copilot,
            br#"{"toolName":"edit","toolArgs":{"path":"package.json","old_str":"a","new_str":"b"}}"#,
        );
        assert_eq!(e.edits, vec![edit("package.json", "a", "b", false)]);
        let patch = "*** Begin Patch\n*** Update File: web/package.json\n@@\n-    \"test\": \"jest\"\n+    \"test\": \"jest\",\n+    \"postinstall\": \"node x.js\"\n*** Add File: build.rs\n+fn main() {}\n*** End Patch\n";
        let shape = serde_json::json!({"toolName": "apply_patch", "toolArgs": patch});
        let e = parse_event(Agent::Copilot, shape.to_string().as_bytes()).unwrap();
        assert_eq!(
            e.edits,
            vec![
                edit(
                    "web/package.json",
                    "    \"test\": \"jest\"\n",
                    "    \"test\": \"jest\",\n    \"postinstall\": \"node x.js\"\n",
                    false
                ),
                edit("build.rs", "", "fn main() {}\n", true),
            ]
        );
        // A unified diff: an added line that reads `++ x` does not switch files.
        let diff = "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -0,0 +1,2 @@\n+++ b/README.md\n+\"preinstall\": \"x\"\n--- /dev/null\n+++ b/build.rs\n@@ -0,0 +1 @@\n+fn main() {}\n";
        let shape = serde_json::json!({"toolName": "apply_patch", "toolArgs": diff});
        let e = parse_event(Agent::Copilot, shape.to_string().as_bytes()).unwrap();
        assert_eq!(e.edits.len(), 2, "{:?}", e.edits);
        assert_eq!(e.edits[0].path, "package.json");
        assert!(e.edits[0].added.contains("preinstall"));
        assert!(e.edits[1].whole && e.edits[1].path == "build.rs");
    }
}

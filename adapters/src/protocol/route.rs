//! Boundary mode's answer to a shell command: the agent's own line runs in its sandbox
//! session instead of on the host.
//!
//! Claude Code's `PreToolUse` can replace the tool input (`updatedInput`, which replaces
//! the whole input, so every other field is copied), so its `Bash` call is answered with
//! the usual verdict and the command rewritten to
//! `<contextos> run --session <id> -- /bin/sh -c '<line>'`: `allow` where ContextOS would
//! allow or say nothing, `ask` where it asks (the person then approves the routed command,
//! which is what will run), and a deny stays a deny, not rewritten. Every other hook
//! (Cursor's `beforeShellExecution`, Copilot, Codex) cannot rewrite a command, or not in a
//! way ContextOS can rely on (Codex fails open on an output field it does not take), so
//! there a command that is not denied is denied with a message that sends the model to
//! the MCP `run` tool.

use super::answer::{to_line, verdict, Answer, Decision, PermissionDecision, Rendered};
use super::event::{Action, HookEvent};
use crate::wiring::run_tool_hint;
use crate::{render, Agent};
use serde::Serialize;
use serde_json::{Map, Value};

/// Where a routed command goes: the ContextOS executable that will run it (the one the
/// hook itself runs as) and the agent's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub exe: String,
    pub session: String,
}

/// The argv of a routed line: exactly what the sandbox session is asked to run.
/// `approved`: the hook answers `ask`, so the agent runs the command only after a person
/// approved it in the agent's own dialog — `--approved` tells `contextos run` that its
/// exec `ask` was confirmed (the asks of the command's changes still need their own).
pub fn routed_argv(route: &Route, line: &str, approved: bool) -> Vec<String> {
    let mut argv = vec![route.exe.clone(), "run".into()];
    argv.extend(["--session".to_string(), route.session.clone()]);
    if approved {
        argv.push("--approved".into());
    }
    argv.extend(["--", "/bin/sh", "-c", line].map(str::to_owned));
    argv
}

/// `line` as a command line that runs it through `contextos run` in the session: every
/// word quoted for a POSIX shell (single quotes where a shell would change anything), so
/// the shell the agent starts hands `contextos run` exactly [`routed_argv`].
pub fn routed_command(route: &Route, line: &str, approved: bool) -> String {
    contextos_shell::quote(&routed_argv(route, line, approved))
}

/// Whether `agent`'s answer to `event` can replace the command it runs (Claude Code's
/// `updatedInput`; `Monitor` runs its `command` like Bash, streaming its output).
pub fn can_rewrite(agent: Agent, event: &str, tool: &str) -> bool {
    agent == Agent::Claude && event == "PreToolUse" && matches!(tool, "Bash" | "Monitor")
}

/// The answer to a shell event in boundary mode, given the usual verdict `answer`. The
/// event must carry exactly one [`Action::Shell`]; anything else is answered as usual.
pub fn render_routed(ev: &HookEvent, answer: &Answer, route: &Route) -> Rendered {
    let line = match ev.actions.as_slice() {
        [Action::Shell { line }] => line,
        _ => return render(ev, answer),
    };
    if matches!(answer, Answer::Deny { .. }) {
        return render(ev, answer);
    }
    let Some(input) = ev
        .tool_input
        .as_ref()
        .filter(|_| can_rewrite(ev.agent, &ev.event, &ev.tool))
    else {
        let reason = match answer {
            Answer::Ask { reason } | Answer::Allow { reason } => {
                format!("{} ({reason})", run_tool_hint())
            }
            Answer::Pass | Answer::Deny { .. } => run_tool_hint(),
        };
        return render(ev, &Answer::Deny { reason });
    };
    let note = format!(
        "ContextOS runs this command in the sandbox session `{}`",
        route.session
    );
    let decision = match answer {
        Answer::Ask { reason } => Answer::Ask {
            reason: format!("{reason} ({note})"),
        },
        Answer::Allow { reason } => Answer::Allow {
            reason: format!("{reason} ({note})"),
        },
        // No rule spoke: the routed command is allowed, since the sandbox is the boundary.
        Answer::Pass | Answer::Deny { .. } => Answer::Allow { reason: note },
    };
    let Some((d, reason)) = verdict(ev, &decision) else {
        return render(ev, answer);
    };
    // An ask the event cannot honour has become a deny, which is not rewritten.
    if d == Decision::Deny {
        return render(ev, &Answer::Deny { reason });
    }
    let routed = routed_command(route, line, d == Decision::Ask);
    let mut updated = input.clone();
    updated.insert("command".into(), Value::String(routed));
    Rendered {
        stdout: to_line(&RoutedOut {
            hook_specific_output: RoutedSpecific {
                hook_event_name: "PreToolUse",
                decision: PermissionDecision::new(d, &reason),
                updated_input: &updated,
            },
        }),
        stderr: String::new(),
        exit: 0,
    }
}

#[derive(Serialize)]
struct RoutedOut<'a> {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: RoutedSpecific<'a>,
}

#[derive(Serialize)]
struct RoutedSpecific<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'static str,
    #[serde(flatten)]
    decision: PermissionDecision<'a>,
    #[serde(rename = "updatedInput")]
    updated_input: &'a Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hooks::{allow, ask, deny, fixture};
    use proptest::prelude::*;
    use serde_json::json;

    fn route() -> Route {
        Route {
            exe: "/opt/context os/bin/contextos".into(),
            session: "5b1e7a52-8c3f-4d0e-9a6b-2f4c1d7e9a30".into(),
        }
    }

    fn out(r: &Rendered) -> Value {
        serde_json::from_str(&r.stdout).unwrap()
    }

    #[test]
    fn claude_bash_is_routed_keeping_every_other_field() {
        let ev = fixture(Agent::Claude, "bash-cargo-test.json");
        for (answer, word, approved) in [
            (Answer::Pass, "allow", ""),
            (allow("ContextOS: ok"), "allow", ""),
            (ask("ContextOS: sure?"), "ask", " --approved"),
        ] {
            let r = render_routed(&ev, &answer, &route());
            assert_eq!(r.exit, 0);
            let v = out(&r);
            let h = &v["hookSpecificOutput"];
            assert_eq!(h["hookEventName"], "PreToolUse");
            assert_eq!(h["permissionDecision"], word);
            assert!(h["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("sandbox session `5b1e7a52"));
            assert_eq!(
                h["updatedInput"],
                json!({
                    "command": format!("'/opt/context os/bin/contextos' run --session \
                                5b1e7a52-8c3f-4d0e-9a6b-2f4c1d7e9a30{approved} -- /bin/sh -c 'cargo test'"),
                    "description": "Run the test suite",
                    "timeout": 600000,
                    "run_in_background": false
                })
            );
        }
    }

    #[test]
    fn claude_monitor_is_routed_like_bash() {
        let ev = fixture(Agent::Claude, "monitor-rm-home.json");
        let r = render_routed(&ev, &Answer::Pass, &route());
        let v = out(&r);
        let h = &v["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "allow");
        assert_eq!(h["updatedInput"]["timeout_ms"], 300000);
        assert!(h["updatedInput"]["command"].as_str().unwrap().contains(
            "run --session 5b1e7a52-8c3f-4d0e-9a6b-2f4c1d7e9a30 -- /bin/sh -c 'rm -rf ~'"
        ));
    }

    #[test]
    fn a_deny_stays_a_deny_and_is_not_rewritten() {
        let ev = fixture(Agent::Claude, "bash-rm-home.json");
        let r = render_routed(&ev, &deny("ContextOS: no"), &route());
        assert_eq!(r, render(&ev, &deny("ContextOS: no")));
        assert!(!r.stdout.contains("updatedInput"));
    }

    #[test]
    fn hooks_that_cannot_rewrite_send_the_model_to_the_run_tool() {
        for (agent, file) in [
            (Agent::Cursor, "before-shell-cargo-test.json"),
            (Agent::Copilot, "bash-rm-home.json"),
        ] {
            let ev = fixture(agent, file);
            for answer in [
                Answer::Pass,
                allow("ContextOS: ok"),
                ask("ContextOS: sure?"),
            ] {
                let r = render_routed(&ev, &answer, &route());
                assert!(r.stdout.contains("deny"), "{agent:?}: {}", r.stdout);
                assert!(
                    r.stdout
                        .contains("`run` tool of the `contextos` MCP server"),
                    "{agent:?}: {}",
                    r.stdout
                );
                assert!(!r.stdout.contains("updatedInput"));
            }
        }
        // A PermissionRequest cannot rewrite either.
        let ev = fixture(Agent::Claude, "permission-request-git-push-force.json");
        let r = render_routed(&ev, &Answer::Pass, &route());
        assert!(r.stdout.contains("\"deny\"") && r.stdout.contains("`run` tool"));
    }

    /// The words a real `/bin/sh` gives `contextos run` for the rewritten command.
    fn sh_argv(command: &str) -> Vec<String> {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {command}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}");
        let mut words: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split('\0')
            .map(str::to_owned)
            .collect();
        assert_eq!(words.pop().as_deref(), Some(""));
        words
    }

    /// The words the project's own shell model reads from the rewritten command.
    fn model_argv(command: &str) -> Vec<String> {
        let cmds = contextos_shell::split(command).unwrap();
        assert_eq!(cmds.len(), 1, "{command}: {cmds:?}");
        cmds[0].argv.clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// Whatever the line (quotes, newlines, `$`, backslashes, unicode; a NUL cannot
        /// be in an argument), the routed command gives back exactly the routed argv,
        /// read by a real shell and by ContextOS's shell model alike.
        #[test]
        fn the_routed_line_round_trips(
            line in "([ -~]|\n|\t|[é€😀\u{202e}]|'|\"|\\\\|\\$|`){0,60}",
            session in "[A-Za-z0-9-]{1,12}",
            approved: bool,
        ) {
            let r = Route { exe: "/opt/context os/bin/contextos".into(), session };
            let command = routed_command(&r, &line, approved);
            let want = routed_argv(&r, &line, approved);
            prop_assert_eq!(&sh_argv(&command), &want);
            prop_assert_eq!(&model_argv(&command), &want);
        }
    }
}

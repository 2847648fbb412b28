//! Answers an agent's hook in its own dialect: each agent folder's `hook.rs` translates,
//! this file picks the dialect.

use crate::protocol::answer::{blocked, failure_reason, verdict, Answer, Decision, Rendered};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{HookEvent, ProtocolError};
use crate::protocol::fields::parse_object;
use crate::{amazonq, amp, claude, cline, codex, copilot, cursor, gemini, kiro, windsurf, Agent};

/// The hook dialect of `agent`; `None` for an agent without a hook (see
/// [`Agent::has_hook`]).
fn dialect(agent: Agent) -> Option<&'static Dialect> {
    match agent {
        Agent::AgentsMd
        | Agent::Zed
        | Agent::Junie
        | Agent::Continue
        | Agent::Aider
        | Agent::OpenCode => None,
        Agent::Claude => Some(&claude::hook::DIALECT),
        Agent::Cline => Some(&cline::hook::DIALECT),
        Agent::Kiro => Some(&kiro::hook::DIALECT),
        Agent::Cursor => Some(&cursor::hook::DIALECT),
        Agent::Copilot => Some(&copilot::hook::DIALECT),
        Agent::Codex => Some(&codex::hook::DIALECT),
        Agent::Gemini => Some(&gemini::hook::DIALECT),
        Agent::Windsurf => Some(&windsurf::hook::DIALECT),
        Agent::Amp => Some(&amp::hook::DIALECT),
        Agent::AmazonQ => Some(&amazonq::hook::DIALECT),
    }
}

/// Decodes one hook invocation. Unknown extra fields are ignored; the fields a judged event
/// needs must be present and well-typed, otherwise this is an error (as is an agent
/// without a hook).
pub fn parse_event(agent: Agent, input: &[u8]) -> Result<HookEvent, ProtocolError> {
    let Some(d) = dialect(agent) else {
        return Err(ProtocolError(format!(
            "{} has no hook protocol",
            agent.as_str()
        )));
    };
    (d.parse)(&parse_object(agent, input)?)
}

/// The answer in the agent's own wire format. `Ask` where `can_ask` is false becomes a deny
/// whose reason says it would have asked. `Pass`, and anything on an observe-only event, is
/// empty stdout with exit 0. A non-empty stdout ends with a newline.
pub fn render(ev: &HookEvent, answer: &Answer) -> Rendered {
    let Some((decision, reason)) = verdict(ev, answer) else {
        return Rendered::pass();
    };
    match dialect(ev.agent) {
        Some(d) if d.by_exit => match decision {
            Decision::Allow => Rendered::pass(),
            // Only an event that can ask gets here with an ask (`verdict` turns the others
            // into a deny): Amp's delegate, where exit 1 asks the operator.
            Decision::Ask => blocked(String::new(), &reason, 1),
            Decision::Deny => blocked(String::new(), &reason, 2),
        },
        Some(d) => Rendered {
            stdout: (d.answer)(&ev.event, decision, &reason),
            stderr: String::new(),
            exit: 0,
        },
        // No such event can be decoded; one built by hand is not answered permissively.
        None => render_failure(ev.agent, "this agent has no hook protocol"),
    }
}

/// Fail closed: an internal error, invalid policy or unreadable input. Claude and Codex:
/// exit 2 + reason on stderr (exit 2 is what blocks; stdout is ignored then). Cursor: exit
/// 2 plus a JSON deny on stdout. Copilot: a JSON deny on stdout with exit 0 — older
/// Copilot releases logged and skipped non-zero exits, and a deny on a successful exit
/// binds on all of them. An agent without a hook gets the exit-2 block. (`contextos hook
/// claude` also serves VS Code and the Copilot CLI: exit 2 blocks in both.)
pub fn render_failure(agent: Agent, message: &str) -> Rendered {
    let reason = failure_reason(message);
    match dialect(agent) {
        Some(d) => match d.failure {
            Failure::DenyAnswer { exit } => {
                blocked((d.answer)("", Decision::Deny, &reason), &reason, exit)
            }
            Failure::ExitTwo => blocked(String::new(), &reason, 2),
        },
        // Exit 2 is the block every hook runner honours without parsing.
        None => blocked(String::new(), &reason, 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answer::REASON_CAP;
    use crate::test_support::hooks::*;
    use serde_json::Value;

    #[test]
    fn every_agent_with_a_hook_has_a_dialect() {
        for agent in Agent::ALL {
            assert_eq!(dialect(agent).is_some(), agent.has_hook(), "{agent:?}");
        }
        assert!(bad(Agent::AgentsMd, "{}").contains("no hook protocol"));
        let r = render_failure(Agent::AgentsMd, "x");
        assert_eq!((r.exit, r.stdout.as_str()), (2, ""));
    }
    /// No decision writes nothing: `Pass` on judged events, and any answer on an
    /// observe-only event.
    #[test]
    fn no_decision_is_silent() {
        let judged = [
            (Agent::Claude, "PreToolUse"),
            (Agent::Claude, "PermissionRequest"),
            (Agent::Cursor, "beforeShellExecution"),
            (Agent::Cursor, "preToolUse"),
            (Agent::Copilot, "preToolUse"),
        ]
        .map(|(agent, event)| (ev(agent, event, true), vec![Answer::Pass]));
        let observed = [
            (Agent::Claude, "posttooluse-bash.json"),
            (Agent::Cursor, "after-file-edit.json"),
            (Agent::Copilot, "posttooluse-bash.json"),
        ]
        .map(|(agent, file)| (fixture(agent, file), vec![allow("x"), ask("x"), deny("x")]));
        for (e, answers) in judged.into_iter().chain(observed) {
            for a in answers {
                assert_eq!(render(&e, &a), Rendered::pass(), "{} {}", e.event, e.tool);
            }
        }
    }

    #[test]
    fn reasons_are_capped() {
        let long = "é".repeat(20_000);
        let e = ev(Agent::Claude, "PreToolUse", true);
        let r = render(&e, &deny(&long));
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert_eq!(reason.chars().count(), REASON_CAP);
        assert!(reason.ends_with('…'));
        let f = render_failure(Agent::Copilot, &long);
        let v: Value = serde_json::from_str(&f.stdout).unwrap();
        assert!(
            v["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .chars()
                .count()
                <= REASON_CAP
        );
    }

    #[test]
    fn failures_fail_closed() {
        let msg = "ContextOS could not verify this action, so it is blocked: policy invalid";
        let cursor =
            format!(r#"{{"permission":"deny","user_message":"{msg}","agent_message":"{msg}"}}"#);
        // Copilot's carries Claude's envelope too: VS Code runs `.github/hooks` as well.
        let copilot = format!(
            r#"{{"permissionDecision":"deny","permissionDecisionReason":"{msg}","hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"{msg}"}}}}"#
        );
        for (agent, stdout, exit) in [
            (Agent::Claude, String::new(), 2),
            (Agent::Codex, String::new(), 2),
            (Agent::Gemini, String::new(), 2),
            (Agent::Windsurf, String::new(), 2),
            (Agent::Amp, String::new(), 2),
            (Agent::AmazonQ, String::new(), 2),
            (Agent::Cursor, cursor + "\n", 2),
            (Agent::Copilot, copilot + "\n", 0),
        ] {
            let want = Rendered {
                stdout,
                stderr: format!("{msg}\n"),
                exit,
            };
            assert_eq!(render_failure(agent, "policy invalid"), want, "{agent:?}");
        }
    }

    #[test]
    fn empty_and_non_json_input_is_an_error() {
        for agent in Agent::ALL.into_iter().filter(|a| a.has_hook()) {
            refuses(
                agent,
                &[
                    ("", "empty input"),
                    (" \n", "empty input"),
                    ("not json", "not JSON"),
                    ("{\"tool_name\":", "not JSON"),
                    ("[1,2]", "not a JSON object"),
                    ("\"PreToolUse\"", "not a JSON object"),
                ],
            );
        }
    }
}

//! The answer given the agent's permission mode.
//!
//! Silence hands the call to the agent's own permission flow. In Claude Code's `default`
//! (and `plan`) mode that flow asks the user, so an action only a default decided is left
//! to it. In every other mode — `acceptEdits`, `auto`, `bypassPermissions`, `dontAsk`, or a
//! mode this version does not know — silence lets the action run (or leaves it to a
//! classifier), so what no rule covers is asked here instead, and denied where the event
//! cannot ask (Codex, Cursor's `preToolUse`, `dontAsk`, which turns every prompt into a
//! refusal). A default *allow* stays silence in every mode: reading a file no rule names is
//! what the defaults mean to let through.

use crate::hook::judge::{Judgement, Part};
use contextos_engine::emit::{Answer, HookEvent};
use contextos_engine::Effect;

/// How the agent treats silence, by its `permission_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Silence {
    /// The agent asks its user: `default` (the CLI's `manual` alias), `plan`, or no mode
    /// sent at all (the agents that have none).
    Prompts,
    /// The agent runs the action, or lets a classifier decide it.
    Runs,
    /// `dontAsk`: the agent refuses what it would have asked about, so an ask cannot reach
    /// anyone.
    Refuses,
}

fn silence(mode: Option<&str>) -> Silence {
    match mode {
        None | Some("default" | "manual" | "plan") => Silence::Prompts,
        Some("dontAsk") => Silence::Refuses,
        Some(_) => Silence::Runs,
    }
}

/// The answer to `ev` for `judgement`. Claude's `PermissionRequest` keeps the plain
/// answer: it fires while the user is already being asked, so the agent's prompt is there.
/// So does a line routed into the sandbox session (`sandboxed`, boundary mode): what no
/// rule covers runs there, not on the host, whatever the mode.
pub fn answer(judgement: &Judgement, ev: &HookEvent, sandboxed: bool) -> Answer {
    if ev.event == "PermissionRequest" || sandboxed {
        return judgement.answer();
    }
    answer_in(
        judgement,
        ev.permission_mode.as_deref(),
        ev.can_ask,
        &ev.tool,
    )
}

fn answer_in(judgement: &Judgement, mode: Option<&str>, can_ask: bool, tool: &str) -> Answer {
    let plain = judgement.answer();
    let how = silence(mode);
    let mode_name = mode.unwrap_or("default");
    let asks = can_ask && how != Silence::Refuses;
    match plain {
        // An ask the agent would turn into a refusal is said as a deny, with the reason.
        Answer::Ask { reason } if how == Silence::Refuses => Answer::Deny {
            reason: format!(
                "{reason} (in {mode_name} mode the agent cannot ask anyone, so this is denied)"
            ),
        },
        Answer::Pass if how != Silence::Prompts && judgement.verdict() == Some(Effect::Ask) => {
            let uncovered: Vec<&str> = judgement
                .parts
                .iter()
                .filter(|p| p.verdict == Effect::Ask && !p.explicit)
                .map(|p: &Part| p.reason.as_str())
                .collect();
            let what = if uncovered.is_empty() {
                format!("this {tool} call")
            } else {
                uncovered.join("; ")
            };
            let consequence = match how {
                Silence::Refuses => "the agent cannot ask anyone".to_string(),
                _ => "silence would let it run unconfirmed".to_string(),
            };
            let reason = format!(
                "ContextOS: no rule covers this ({what}); in {mode_name} mode {consequence}"
            );
            if asks {
                Answer::Ask {
                    reason: format!("{reason}, so a person confirms it [hook.mode-uncovered]"),
                }
            } else {
                Answer::Deny {
                    reason: format!(
                        "{reason}, and this hook cannot ask, so it is denied [hook.mode-uncovered]"
                    ),
                }
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(verdict: Effect, explicit: bool, reason: &str) -> Part {
        Part {
            verdict,
            explicit,
            reason: reason.into(),
            rules: Vec::new(),
            host: false,
        }
    }

    fn j(parts: Vec<Part>) -> Judgement {
        Judgement {
            parts,
            ..Judgement::default()
        }
    }

    const MODES: [Option<&str>; 8] = [
        None,
        Some("default"),
        Some("plan"),
        Some("acceptEdits"),
        Some("auto"),
        Some("bypassPermissions"),
        Some("dontAsk"),
        Some("someFutureMode"),
    ];

    fn prompts(mode: Option<&str>) -> bool {
        matches!(mode, None | Some("default" | "plan"))
    }

    #[test]
    fn a_default_ask_is_silence_only_where_the_agent_prompts() {
        let uncovered = j(vec![
            part(Effect::Allow, true, "`ls`: rule r"),
            part(
                Effect::Ask,
                false,
                "`terraform destroy`: no rule matched and the default for `exec` is ask",
            ),
        ]);
        for mode in MODES {
            for can_ask in [true, false] {
                let a = answer_in(&uncovered, mode, can_ask, "Bash");
                match a {
                    Answer::Pass => assert!(prompts(mode), "{mode:?} {can_ask}"),
                    Answer::Ask { reason } => {
                        assert!(!prompts(mode) && can_ask && mode != Some("dontAsk"));
                        assert!(reason.contains("`terraform destroy`"), "{reason}");
                        assert!(reason.contains(mode.unwrap_or("")), "{reason}");
                    }
                    Answer::Deny { reason } => {
                        assert!(!prompts(mode) && (!can_ask || mode == Some("dontAsk")));
                        assert!(reason.contains("`terraform destroy`"), "{reason}");
                    }
                    Answer::Allow { .. } => panic!("{mode:?}: an allow from a default"),
                }
            }
        }
    }

    #[test]
    fn a_default_allow_stays_silence_in_every_mode() {
        let read = j(vec![part(
            Effect::Allow,
            false,
            "read `src/a.rs`: no rule matched and the default for `path` is allow",
        )]);
        for mode in MODES {
            for can_ask in [true, false] {
                assert_eq!(answer_in(&read, mode, can_ask, "Read"), Answer::Pass);
            }
        }
    }

    #[test]
    fn explicit_verdicts_are_kept_and_dont_ask_refuses_an_ask() {
        let asked = j(vec![part(Effect::Ask, true, "`git push`: rule r [r]")]);
        let denied = j(vec![part(Effect::Deny, true, "`rm -rf ~`: rule d [d]")]);
        let allowed = j(vec![part(Effect::Allow, true, "`ls`: rule a [a]")]);
        for mode in MODES {
            let a = answer_in(&asked, mode, true, "Bash");
            if mode == Some("dontAsk") {
                assert!(matches!(a, Answer::Deny { ref reason } if reason.contains("`git push`")));
            } else {
                assert_eq!(a, asked.answer(), "{mode:?}");
            }
            assert_eq!(answer_in(&denied, mode, true, "Bash"), denied.answer());
            assert_eq!(answer_in(&allowed, mode, true, "Bash"), allowed.answer());
        }
        // Nothing judged stays nothing.
        for mode in MODES {
            assert_eq!(answer_in(&j(vec![]), mode, true, "Task"), Answer::Pass);
        }
    }
}

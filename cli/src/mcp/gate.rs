//! The verdict in front of every tool call, the same as the agent hooks give: the
//! call's actions (paths with their operation, or a shell line) go through
//! [`crate::hook::judge`], and the strongest verdict decides. A deny is a tool error that
//! names the rules and the reason; an ask is put to the person through elicitation, or
//! refused when the client cannot ask; each outcome lands in the decision log.

use super::audit::{self, Entry};
use super::elicit::{self, Asked};
use super::limits::{Failure, ToolError};
use super::state::State;
use crate::hook::judge::{judge, Judgement};
use contextos_engine::emit::{Action, Answer};
use contextos_engine::{Effect, PolicySet};
use rmcp::{Peer, RoleServer};
use std::sync::Arc;
use std::time::Instant;

/// A call that may proceed: the policies it was decided with, and what to log at the end.
#[derive(Debug)]
pub struct Passed {
    pub set: Arc<PolicySet>,
    judgement: Judgement,
    verdict: &'static str,
    started: Instant,
    confirmed: bool,
}

/// Decides `actions` for `tool`; `Err` is the tool result to answer (already logged).
pub async fn decide(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    tool: &'static str,
    actions: &[Action],
) -> Result<Passed, Failure> {
    let started = Instant::now();
    let (set, judgement) = {
        let shared = Arc::clone(state);
        let owned = actions.to_vec();
        blocking(move || {
            let set = shared.policies()?;
            // `run` carries the line out in the sandbox session: judged where it runs, as
            // the hook judges a routed line.
            let routed = tool == "run";
            let place = if routed {
                shared.place().contained()
            } else {
                shared.place()
            };
            let secrets = crate::hook::egress::Secrets::new(&set);
            let mcp = crate::hook::egress::McpFacts::new(&shared.project);
            let session =
                crate::hook::taint::session(&shared.project.root, Some(shared.session.as_str()));
            let scope = crate::hook::judge::Scope {
                role: shared.role.as_deref(),
                session: session.as_ref(),
                secrets: &secrets,
                mcp: &mcp,
            };
            let judgement = judge(&set, &place, &owned, &scope, routed);
            Ok((Arc::new(set), judgement))
        })
        .await
        .inspect_err(|e| {
            // The policies cannot decide: logged as the hooks log it, a fail-closed deny.
            let judgement = Judgement {
                parts: vec![crate::hook::judge::Part {
                    verdict: Effect::Deny,
                    explicit: true,
                    reason: e.0.clone(),
                    rules: vec!["fail-closed:policy-invalid".into()],
                    host: false,
                }],
                ..Judgement::default()
            };
            log(state, tool, actions, &judgement, "deny", "denied", started);
        })?
    };
    // Writes: the strongest verdict over every part, defaults included — a default `ask`
    // is a question here even where a hook would stay silent and leave it to the agent's
    // own prompt, because this server carries the write out on the host. `run`: the
    // routed hook's answer, since the line runs in the sandbox either way — a rule's ask
    // or deny holds, a permissive default does not turn into a question.
    let effect = if tool == "run" {
        match judgement.answer() {
            Answer::Deny { .. } => Effect::Deny,
            Answer::Ask { .. } => Effect::Ask,
            Answer::Allow { .. } | Answer::Pass => Effect::Allow,
        }
    } else {
        judgement.verdict().unwrap_or(Effect::Allow)
    };
    let rules = judgement.rules();
    let named = if rules.is_empty() {
        String::new()
    } else {
        format!(" (rules: {})", rules.join(", "))
    };
    let mut reasons: Vec<&str> = Vec::new();
    for p in judgement.parts.iter().filter(|p| p.verdict == effect) {
        if !reasons.contains(&p.reason.as_str()) {
            reasons.push(&p.reason);
        }
    }
    let reason = format!("ContextOS: {}", reasons.join("; "));
    match effect {
        Effect::Deny => {
            log(state, tool, actions, &judgement, "deny", "denied", started);
            Err(Failure::Logged(ToolError::new(format!(
                "denied{named}: {reason}\nNothing was done."
            ))))
        }
        Effect::Ask => match elicit::ask(peer, &reason).await {
            Asked::Confirmed => Ok(Passed {
                set,
                judgement,
                verdict: "ask",
                started,
                confirmed: true,
            }),
            Asked::Refused(why) => {
                let outcome = format!("refused: {why}");
                log(state, tool, actions, &judgement, "ask", &outcome, started);
                Err(Failure::Logged(ToolError::new(format!(
                    "needs confirmation{named}: {reason}\nRefused: {why}. Nothing was done."
                ))))
            }
            Asked::Unsupported => {
                // What the agent is told is a deny, as the hooks log an ask an agent
                // cannot honour.
                log(
                    state,
                    tool,
                    actions,
                    &judgement,
                    "deny",
                    "refused: the client cannot ask (no elicitation capability)",
                    started,
                );
                Err(Failure::Logged(ToolError::new(format!(
                    "needs confirmation{named}: {reason}\nRefused: this MCP client cannot ask the person (it did not declare the elicitation capability). Nothing was done."
                ))))
            }
        },
        Effect::Allow => {
            // The hooks' word for it: `allow` when rules allowed every part, `pass`
            // when no rule spoke and a permissive default let it through.
            let verdict = match judgement.answer() {
                Answer::Allow { .. } => "allow",
                _ => "pass",
            };
            Ok(Passed {
                set,
                judgement,
                verdict,
                started,
                confirmed: false,
            })
        }
    }
}

impl Passed {
    /// Logs how the call that passed ended.
    pub fn finish<T>(
        &self,
        state: &State,
        tool: &str,
        actions: &[Action],
        result: Result<T, ToolError>,
    ) -> Result<T, Failure> {
        let outcome = match (&result, self.confirmed) {
            (Ok(_), true) => "confirmed".to_string(),
            (Ok(_), false) => "done".to_string(),
            (Err(e), _) => format!("failed: {}", e.0),
        };
        log(
            state,
            tool,
            actions,
            &self.judgement,
            self.verdict,
            &outcome,
            self.started,
        );
        result.map_err(Failure::Logged)
    }

    /// Whether a person confirmed an `ask` for this call.
    pub fn confirmed(&self) -> bool {
        self.confirmed
    }
}

/// Logs a call refused before it could be decided (bad arguments, a patch that does not
/// apply): a fail-closed deny, as the hooks log input they cannot read.
pub fn log_invalid(state: &State, tool: &str, error: &ToolError) {
    let judgement = Judgement {
        parts: vec![crate::hook::judge::Part {
            verdict: Effect::Deny,
            explicit: true,
            reason: error.0.clone(),
            rules: vec!["fail-closed:invalid-input".into()],
            host: false,
        }],
        ..Judgement::default()
    };
    let outcome = format!("invalid: {}", error.0);
    log(
        state,
        tool,
        &[],
        &judgement,
        "deny",
        &outcome,
        Instant::now(),
    );
}

fn log(
    state: &State,
    tool: &str,
    actions: &[Action],
    judgement: &Judgement,
    verdict: &str,
    outcome: &str,
    started: Instant,
) {
    audit::record(
        &state.project.root,
        &Entry {
            tool,
            session: &state.session,
            actions,
            judgement,
            verdict,
            outcome,
            started,
        },
    );
}

/// Runs file-system and lock work off the protocol's threads, so a call that waits for
/// the project lock does not stall the other requests of the session.
pub async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("internal: the call's worker failed: {e}")))?
}

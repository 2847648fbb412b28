//! Hook payloads in every dialect (the first byte picks the agent): decoding never
//! panics; a decoded event is answered in well-formed output for every kind of answer;
//! an undecodable one gets a failure answer that blocks.
#![no_main]

use contextos_adapters::{parse_event, render, render_failure, Agent, Answer, Rendered};
use libfuzzer_sys::fuzz_target;

const AGENTS: [Agent; 10] = [
    Agent::Claude,
    Agent::Cursor,
    Agent::Copilot,
    Agent::Codex,
    Agent::Gemini,
    Agent::Windsurf,
    Agent::Amp,
    Agent::AmazonQ,
    Agent::Cline,
    Agent::Kiro,
];

/// Standard output is empty or one JSON value and a newline.
fn well_formed(r: &Rendered) {
    if r.stdout.is_empty() {
        return;
    }
    assert!(r.stdout.ends_with('\n'), "stdout lacks its newline: {r:?}");
    assert!(
        serde_json::from_str::<serde_json::Value>(&r.stdout).is_ok(),
        "stdout is not JSON: {r:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let agent = AGENTS[usize::from(pick) % AGENTS.len()];
    match parse_event(agent, payload) {
        Ok(ev) => {
            // One dialect may serve several agents (Claude Code's also reads the
            // Copilot CLI's events), but never one without a hook.
            assert!(ev.agent.has_hook(), "decoded for {:?}", ev.agent);
            let reason = "fuzz \"reason\"\n\u{7}".to_string();
            for answer in [
                Answer::Pass,
                Answer::Allow {
                    reason: reason.clone(),
                },
                Answer::Ask {
                    reason: reason.clone(),
                },
                Answer::Deny { reason },
            ] {
                well_formed(&render(&ev, &answer));
            }
        }
        Err(e) => {
            let r = render_failure(agent, &e.to_string());
            well_formed(&r);
            assert!(
                r.exit != 0 || r.stdout.contains("deny"),
                "a payload that cannot be read is not blocked: {r:?}"
            );
        }
    }
});

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]
//! Snapshots of every emitter on the example project: any change to what ContextOS writes
//! into an agent's configuration shows up as a reviewed diff.
use contextos_adapters::{emit, Agent, Content};
use contextos_core::compile::{compile, CompileOptions, PolicySource};
use contextos_core::ir::Layer;
use contextos_core::policy::PolicySet;

fn example_set() -> PolicySet {
    let mut sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource {
            name: (*name).to_string(),
            text: (*text).to_string(),
            layer: Layer::Stdlib,
        })
        .collect();
    sources.push(PolicySource {
        name: ".contextos/policies/main.policy".into(),
        text: include_str!("../../examples/rust-service/.contextos/policies/main.policy").into(),
        layer: Layer::User,
    });
    let out = compile(&sources, &CompileOptions::default());
    out.policy.unwrap_or_else(|| panic!("the example compiles"))
}

fn render(target: Agent) -> String {
    let e = emit(&example_set(), &[target]);
    let mut s = String::new();
    for o in &e.outputs {
        s.push_str(&format!("===== {} =====\n", o.path));
        match &o.content {
            Content::Whole { text } => s.push_str(&format!("[whole file]\n{text}")),
            Content::Block { text } => s.push_str(&format!("[managed block]\n{text}\n")),
            Content::Json { parts } => {
                s.push_str("[owned JSON parts]\n");
                s.push_str(&serde_json::to_string_pretty(parts).unwrap());
                s.push('\n');
            }
        }
    }
    s.push_str("===== lossy =====\n");
    for l in &e.lossy {
        s.push_str(&format!("{} {}: {}\n", l.origin, l.rule, l.message));
    }
    s
}

#[test]
fn agents_md() {
    insta::assert_snapshot!(render(Agent::AgentsMd));
}

#[test]
fn claude_code() {
    insta::assert_snapshot!(render(Agent::Claude));
}

#[test]
fn cursor() {
    insta::assert_snapshot!(render(Agent::Cursor));
}

#[test]
fn github_copilot() {
    insta::assert_snapshot!(render(Agent::Copilot));
}

#[test]
fn openai_codex() {
    insta::assert_snapshot!(render(Agent::Codex));
}

#[test]
fn two_runs_are_byte_identical() {
    for t in Agent::ALL {
        assert_eq!(render(t), render(t));
    }
}

#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! Snapshots of every emitter on the example project: any change to what ContextOS writes
//! into an agent's configuration shows up as a reviewed diff.
use contextos_adapters::{emit, Agent, Content, EmitOptions, Mode};
use contextos_core::build::{build, BuildOptions, PolicySource};
use contextos_core::ir::Layer;
use contextos_core::policy::PolicySet;

fn example_set() -> PolicySet {
    let user = (
        ".contextos/policies/main.policy",
        include_str!("../../examples/rust-service/.contextos/policies/main.policy"),
        Layer::User,
    );
    let stdlib = contextos_stdlib::FILES
        .iter()
        .map(|&(n, t)| (n, t, Layer::Stdlib));
    let sources: Vec<PolicySource> = stdlib
        .chain([user])
        .map(|(name, text, layer)| PolicySource {
            name: name.to_string(),
            text: text.to_string().into(),
            layer,
        })
        .collect();
    let out = build(&sources, &BuildOptions::default());
    out.policy.unwrap_or_else(|| panic!("the example compiles"))
}

fn render(target: Agent) -> String {
    render_in(target, Mode::Guard)
}

fn render_in(target: Agent, mode: Mode) -> String {
    let opts = EmitOptions {
        mode,
        mcp_servers: Vec::new(),
        copilot_install: None,
        claude_sandbox: false,
    };
    let e = emit(&example_set(), &[target], &opts);
    let mut s = String::new();
    for o in &e.outputs {
        s.push_str(&format!("===== {} =====\n", o.path));
        match &o.content {
            Content::Whole { text } => s.push_str(&format!("[whole file]\n{text}")),
            Content::Script { text } => s.push_str(&format!("[executable file]\n{text}")),
            Content::Block { text } => s.push_str(&format!("[managed block]\n{text}\n")),
            Content::Json { parts } => {
                s.push_str("[owned JSON parts]\n");
                s.push_str(&serde_json::to_string_pretty(parts).unwrap());
                s.push('\n');
            }
            Content::Toml { keys } => {
                s.push_str("[owned TOML keys]\n");
                s.push_str(&serde_json::to_string_pretty(keys).unwrap());
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

/// Snapshot names are the file names under `snapshots/` (`emit_snapshots__<name>.snap`).
const SNAPSHOTS: [(&str, Agent); 16] = [
    ("agents_md", Agent::AgentsMd),
    ("claude_code", Agent::Claude),
    ("cursor", Agent::Cursor),
    ("github_copilot", Agent::Copilot),
    ("openai_codex", Agent::Codex),
    ("gemini_cli", Agent::Gemini),
    ("windsurf", Agent::Windsurf),
    ("cline", Agent::Cline),
    ("zed", Agent::Zed),
    ("junie", Agent::Junie),
    ("kiro", Agent::Kiro),
    ("continue", Agent::Continue),
    ("aider", Agent::Aider),
    ("opencode", Agent::OpenCode),
    ("amp", Agent::Amp),
    ("amazon_q", Agent::AmazonQ),
];

#[test]
fn every_agent_matches_its_snapshot() {
    for (name, agent) in SNAPSHOTS {
        insta::assert_snapshot!(name, render(agent));
    }
}

#[test]
fn every_agent_has_a_snapshot() {
    let named: Vec<Agent> = SNAPSHOTS.iter().map(|(_, a)| *a).collect();
    assert_eq!(named, Agent::ALL);
}

#[test]
fn two_runs_are_byte_identical() {
    for t in Agent::ALL {
        assert_eq!(render(t), render(t));
    }
}

/// Boundary mode: the same outputs plus Claude Code's native write denies; every other
/// agent's files are those of guard mode (their registration is emitted in both modes).
#[test]
fn boundary_mode_matches_its_snapshots() {
    insta::assert_snapshot!(
        "claude_code_boundary",
        render_in(Agent::Claude, Mode::Boundary)
    );
    for t in Agent::ALL.into_iter().filter(|t| *t != Agent::Claude) {
        assert_eq!(render_in(t, Mode::Boundary), render(t), "{t:?}");
    }
}

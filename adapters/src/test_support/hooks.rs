//! Hook fixtures (`tests/e2e/fixtures/hooks/<agent>/`) and shorthands for the dialect tests.

use crate::protocol::fields::{path, shell};
use crate::{parse_event, Action, Agent, Answer, HookEvent, McpEndpoint, Rendered};
use contextos_core::PathOp;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

pub(crate) fn fixtures_dir(agent: Agent) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/e2e/fixtures/hooks")
        .join(agent.as_str())
}

/// The fixture `name` of `agent`, decoded.
pub(crate) fn fixture(agent: Agent, name: &str) -> HookEvent {
    let file = fixtures_dir(agent).join(name);
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    parse_event(agent, &bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Amp's fixture `name` — what Amp writes on stdin, the tool's arguments — decoded as a
/// call to `tool` (which Amp passes in `AGENT_TOOL_NAME`).
pub(crate) fn amp_fixture(name: &str, tool: &str) -> HookEvent {
    let file = fixtures_dir(Agent::Amp).join(name);
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let input = crate::amp::hook::envelope(Some(tool), Some("T-fixture"), &bytes);
    parse_event(Agent::Amp, &input).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

pub(crate) fn sh(line: &str) -> Action {
    shell(line)
}
pub(crate) fn p(op: PathOp, s: &str) -> Action {
    path(op, s)
}
pub(crate) fn mcp(server: Option<&str>, tool: &str) -> Action {
    Action::Mcp {
        server: server.map(str::to_owned),
        tool: tool.to_owned(),
        args: None,
        endpoint: McpEndpoint::Named,
    }
}

/// The action without its MCP arguments, for expectations that do not state them.
pub(crate) fn without_args(a: &Action) -> Action {
    match a {
        Action::Mcp {
            server,
            tool,
            endpoint,
            ..
        } => Action::Mcp {
            server: server.clone(),
            tool: tool.clone(),
            args: None,
            endpoint: endpoint.clone(),
        },
        other => other.clone(),
    }
}

/// An action as the expectation files write it: `{"shell": line}`, `{"powershell": line}`,
/// `{"read"|"write"|"delete": path}`, `{"fetch": url}`, `{"mcp": tool, "server": name}`.
fn action(v: &Value) -> Action {
    let text = |key: &str| v[key].as_str().map(str::to_owned);
    if let Some(line) = text("shell") {
        return Action::Shell { line };
    }
    if let Some(line) = text("powershell") {
        return Action::PowerShell { line };
    }
    if let Some(url) = text("fetch") {
        return Action::Fetch { url };
    }
    if let Some(query) = text("search") {
        return Action::Search { query };
    }
    if let Some(tool) = text("mcp") {
        let endpoint = match (text("command"), text("url")) {
            (Some(c), _) => McpEndpoint::Command(c),
            (_, Some(u)) => McpEndpoint::Url(u),
            _ if v["elsewhere"].as_bool() == Some(true) => McpEndpoint::JudgedElsewhere,
            _ if v["prefixed"].as_bool() == Some(true) => McpEndpoint::Prefixed,
            _ => McpEndpoint::Named,
        };
        return Action::Mcp {
            server: text("server"),
            tool,
            args: v.get("args").cloned(),
            endpoint,
        };
    }
    for op in PathOp::ALL {
        if let Some(p) = text(op.as_str()) {
            return path(op, &p);
        }
    }
    panic!("not an action: {v}")
}

/// Every fixture of `agent` decodes as `adapters/tests/data/hooks/<agent>.json` says
/// (event, tool, actions, whether it can ask, whether it is only observed), with the
/// fixture's own `cwd` and a session id; and every fixture on disk has an expectation.
pub(crate) fn check(agent: Agent) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hooks")
        .join(format!("{}.json", agent.as_str()));
    let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut seen = BTreeSet::new();
    for case in &cases {
        let name = case["file"].as_str().unwrap();
        let ev = match agent {
            Agent::Amp => amp_fixture(name, case["tool"].as_str().unwrap()),
            _ => fixture(agent, name),
        };
        // `contextos hook claude` also serves the Copilot CLI, whose events are Copilot's.
        let sender = case["agent"]
            .as_str()
            .map_or(agent, |a| Agent::parse(a).unwrap());
        assert_eq!(ev.agent, sender, "{name}");
        assert_eq!(Some(ev.event.as_str()), case["event"].as_str(), "{name}");
        assert_eq!(Some(ev.tool.as_str()), case["tool"].as_str(), "{name}");
        let actions: Vec<Action> = case["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(action)
            .collect();
        let stated_args = case["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.get("args").is_some());
        let got: Vec<Action> = if stated_args {
            ev.actions.clone()
        } else {
            ev.actions.iter().map(without_args).collect()
        };
        assert_eq!(got, actions, "{name}");
        assert_eq!(
            Some(ev.can_ask),
            case["can_ask"].as_bool(),
            "{name}: can_ask"
        );
        assert_eq!(
            Some(ev.observe_only),
            case["observe_only"].as_bool(),
            "{name}: observe_only"
        );
        let raw: Value =
            serde_json::from_slice(&std::fs::read(fixtures_dir(agent).join(name)).unwrap())
                .unwrap();
        // Windsurf sends its `cwd` inside `tool_info`; Cline none (its first workspace
        // root is where it runs); Amp none (a Bash `cwd` is the command's own directory).
        let cwd = match agent {
            Agent::Amp => None,
            _ => raw["cwd"]
                .as_str()
                .or(raw["tool_info"]["cwd"].as_str())
                .or(raw["workspaceRoots"][0].as_str()),
        };
        assert_eq!(ev.cwd.as_deref(), cwd, "{name}: cwd");
        // Amazon Q's hook event carries no session id.
        assert_eq!(
            ev.session.is_some(),
            agent != Agent::AmazonQ,
            "{name}: session"
        );
        // Where the expectation names a mode, the fixture's own field is what was read.
        if let Some(mode) = case.get("permission_mode") {
            assert_eq!(ev.permission_mode.as_deref(), mode.as_str(), "{name}: mode");
            assert_eq!(raw["permission_mode"], *mode, "{name}: fixture mode");
        }
        seen.insert(name.to_owned());
    }
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures_dir(agent))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(
        on_disk, seen,
        "fixtures without expectations (or vice versa)"
    );
}

/// A judged `Bash`-like event built by hand.
pub(crate) fn ev(agent: Agent, event: &str, can_ask: bool) -> HookEvent {
    HookEvent {
        agent,
        event: event.to_owned(),
        tool: "Bash".to_owned(),
        actions: vec![sh("rm -rf ~")],
        cwd: None,
        roots: vec![],
        session: None,
        tool_input: None,
        can_ask,
        observe_only: false,
        permission_mode: None,
        edits: Vec::new(),
    }
}
pub(crate) fn allow(r: &str) -> Answer {
    Answer::Allow { reason: r.into() }
}
pub(crate) fn ask(r: &str) -> Answer {
    Answer::Ask { reason: r.into() }
}
pub(crate) fn deny(r: &str) -> Answer {
    Answer::Deny { reason: r.into() }
}
/// One line on stdout, exit 0.
pub(crate) fn out(stdout: &str) -> Rendered {
    Rendered {
        stdout: format!("{stdout}\n"),
        stderr: String::new(),
        exit: 0,
    }
}
pub(crate) const WOULD_ASK: &str = "ContextOS would ask for confirmation here, but this hook cannot ask, so the action is denied: ";

/// `input`, decoded.
pub(crate) fn parsed(agent: Agent, input: &[u8]) -> HookEvent {
    parse_event(agent, input).unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(input)))
}

/// The error `input` is refused with.
pub(crate) fn bad(agent: Agent, input: &str) -> String {
    match parse_event(agent, input.as_bytes()) {
        Ok(e) => panic!("expected an error for {input:?}, got {e:?}"),
        Err(e) => e.to_string(),
    }
}

/// Each `(input, part of the error)`: the input is refused with that error.
pub(crate) fn refuses(agent: Agent, cases: &[(&str, &str)]) {
    for (input, want) in cases {
        let e = bad(agent, input);
        assert!(e.contains(want), "{input}: {e:?} lacks {want:?}");
    }
}

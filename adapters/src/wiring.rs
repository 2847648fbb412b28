//! The boundary wiring `compile` adds to every agent: ContextOS's MCP server registered in
//! the agent's own MCP configuration, and, in boundary mode, what keeps the agent's native
//! tools from reaching the host.
//!
//! Registration is emitted in both modes. In guard mode the MCP tools are simply available
//! (the hook still judges the native tools, which run on the host as before); in boundary
//! mode they are the only way to write, because the native write tools are denied (natively
//! where the agent can express it, by the hook elsewhere) and shell commands are routed into
//! the sandbox by the hook.

use crate::{Agent, Content, JsonPart, Lossy, Output, TomlKey};
use contextos_core::ir::Origin;
use serde::Serialize;
use serde_json::{json, Value};

/// How far the agents are wired into ContextOS (`[boundary] mode` in `contextos.toml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The hook judges every native tool call; what it allows runs on the host.
    #[default]
    Guard,
    /// Native writes are denied and go through the MCP tools; shell commands are routed
    /// into the sandbox.
    Boundary,
}

/// The server name every agent knows ContextOS's MCP server by (Claude's tools then read
/// `mcp__contextos__write_file`, and the hook's deny messages name it).
pub const MCP_SERVER: &str = "contextos";
/// The program the agents start for the MCP server: looked up on `PATH`, like the hook
/// commands, so one configuration works on every machine it is committed to.
pub const MCP_COMMAND: &str = "contextos";
/// Its arguments.
pub const MCP_ARGS: [&str; 1] = ["mcp"];

/// Claude Code's native file-writing tools, denied in boundary mode so that every write
/// goes through the MCP tools (and so through the journal and the path verdicts).
pub const CLAUDE_WRITE_TOOLS: [&str; 4] = ["Edit", "MultiEdit", "NotebookEdit", "Write"];

/// The stdio server entry; `typed` adds `"type": "stdio"` for the files whose schema has
/// it (Claude Code's `.mcp.json`, VS Code's `.vscode/mcp.json`).
pub(crate) fn server(typed: bool) -> Value {
    let mut v = json!({"command": MCP_COMMAND, "args": MCP_ARGS});
    if typed {
        if let Some(m) = v.as_object_mut() {
            m.insert("type".into(), Value::String("stdio".into()));
            m.sort_keys();
        }
    }
    v
}

fn json_key(path: &str, target: Agent, pointer: &str, value: Value) -> Output {
    Output {
        path: path.into(),
        target,
        content: Content::Json {
            parts: vec![JsonPart::Key {
                pointer: pointer.into(),
                value,
            }],
        },
    }
}

/// The files the registration adds for `agent`, beside its emitter's own outputs. Claude
/// Code's enable settings go into its `.claude/settings.json` output (see
/// [`claude_settings_parts`]) and Gemini CLI's whole registration into its
/// `.gemini/settings.json` output, since one path has one output.
pub fn registration(agent: Agent) -> Vec<Output> {
    let pointer = format!("/mcpServers/{MCP_SERVER}");
    match agent {
        Agent::Claude => vec![json_key(".mcp.json", agent, &pointer, server(true))],
        Agent::Cursor => vec![json_key(".cursor/mcp.json", agent, &pointer, server(false))],
        // Copilot in VS Code reads `.vscode/mcp.json`, keyed `servers`.
        Agent::Copilot => vec![json_key(
            ".vscode/mcp.json",
            agent,
            &format!("/servers/{MCP_SERVER}"),
            server(true),
        )],
        Agent::Codex => vec![Output {
            path: ".codex/config.toml".into(),
            target: agent,
            content: Content::Toml {
                keys: vec![TomlKey {
                    pointer: format!("/mcp_servers/{MCP_SERVER}"),
                    value: server(false),
                }],
            },
        }],
        // `AGENTS.md` is an instruction file, not a program: nothing to register. Gemini
        // CLI's registration is part of its `.gemini/settings.json` output (see
        // [`gemini_settings_parts`]), since one path has one output.
        Agent::AgentsMd | Agent::Gemini => Vec::new(),
        // Windsurf reads MCP servers from the user's own `~/.codeium/windsurf/mcp_config.json`
        // only; ContextOS writes no user-level files.
        Agent::Windsurf => Vec::new(),
        // Amp's registration is in its `.amp/settings.json` output, Amazon Q's in its agent
        // file: one path has one output.
        Agent::Amp | Agent::AmazonQ => Vec::new(),
        // Instructions-only targets: no MCP configuration is written for them.
        Agent::Cline
        | Agent::Zed
        | Agent::Junie
        | Agent::Kiro
        | Agent::Continue
        | Agent::Aider
        | Agent::OpenCode => Vec::new(),
    }
}

/// ContextOS's MCP parts of Gemini CLI's `.gemini/settings.json`: the server, and
/// `mcp.allowed`, a native allowlist of server names — only the listed servers and
/// ContextOS's own connect.
pub fn gemini_settings_parts(servers: &[String]) -> Vec<JsonPart> {
    vec![
        JsonPart::Key {
            pointer: format!("/mcpServers/{MCP_SERVER}"),
            value: server(false),
        },
        JsonPart::Key {
            pointer: "/mcp/allowed".into(),
            value: Value::Array(allowed(servers)),
        },
    ]
}

/// The listed servers and ContextOS's own, sorted and once each.
fn allowed(servers: &[String]) -> Vec<Value> {
    let mut names: Vec<&str> = servers.iter().map(String::as_str).collect();
    names.push(MCP_SERVER);
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|n| Value::String(n.into())).collect()
}

/// ContextOS's extra parts of `.claude/settings.json`: only the listed `.mcp.json`
/// servers and ContextOS's own are enabled (project servers otherwise wait for each
/// user's approval, and one approval of "all" would enable any server added later).
pub fn claude_settings_parts(servers: &[String]) -> Vec<JsonPart> {
    vec![
        JsonPart::Key {
            pointer: "/enableAllProjectMcpServers".into(),
            value: Value::Bool(false),
        },
        JsonPart::Items {
            pointer: "/enabledMcpjsonServers".into(),
            items: allowed(servers),
        },
    ]
}

/// Where `agent` has no native allowlist of MCP servers, a note that the listed servers
/// are enforced by the hook alone (which asks for any other server). Nothing when the
/// project lists none.
pub fn allowlist_notes(agent: Agent, servers: &[String]) -> Vec<Lossy> {
    if servers.is_empty() {
        return Vec::new();
    }
    let what = match agent {
        // Amazon Q's agent lists the allowed servers in its `tools`.
        Agent::Claude | Agent::AgentsMd | Agent::Gemini | Agent::AmazonQ => return Vec::new(),
        Agent::Amp => "Amp has no allowlist of MCP servers (servers in workspace settings wait for each user's `amp mcp approve`)",
        Agent::Cursor => "Cursor has no project allowlist of MCP servers",
        Agent::Copilot => "Copilot (`.vscode/mcp.json`, the CLI) has no project allowlist of MCP servers",
        Agent::Codex => "Codex can disable a server it knows by name but has no allowlist for servers added elsewhere",
        Agent::Windsurf => "Windsurf has no project MCP configuration (its servers are the user's own)",
        Agent::Cline
        | Agent::Zed
        | Agent::Junie
        | Agent::Kiro
        | Agent::Continue
        | Agent::Aider
        | Agent::OpenCode => return Vec::new(),
    };
    vec![Lossy {
        target: agent,
        rule: "[mcp] servers".into(),
        origin: Origin {
            file: "contextos.toml".into(),
            line: 1,
            col: 1,
            start: 0,
            end: 0,
        },
        message: format!(
            "{what}: the listed servers are not enforced natively; the hook asks before any \
             other server's tool runs"
        ),
    }]
}

/// The tool-name message for agents whose hook cannot rewrite a command: the model is
/// told where the same command can run.
pub fn run_tool_hint() -> String {
    format!(
        "ContextOS runs in boundary mode: shell commands do not run on the host. Call the \
         `run` tool of the `{MCP_SERVER}` MCP server with the same command line instead; it \
         runs in the project's sandbox and brings the changes back through the policies."
    )
}

/// The message for a native file write in boundary mode.
pub fn write_tool_hint() -> String {
    format!(
        "ContextOS runs in boundary mode: the agent's own file tools do not write to the \
         host. Use the `write_file`, `edit_file` or `apply_patch` tool of the `{MCP_SERVER}` \
         MCP server instead; it writes through the journal under the same policies."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_registers_the_same_server() {
        for agent in Agent::ALL {
            let outs = registration(agent);
            if matches!(
                agent,
                Agent::AgentsMd
                    | Agent::Gemini
                    | Agent::Amp
                    | Agent::AmazonQ
                    | Agent::Windsurf
                    | Agent::Cline
                    | Agent::Zed
                    | Agent::Junie
                    | Agent::Kiro
                    | Agent::Continue
                    | Agent::Aider
                    | Agent::OpenCode
            ) {
                assert!(outs.is_empty(), "{agent:?}");
                continue;
            }
            assert_eq!(outs.len(), 1, "{agent:?}");
            let value = match &outs[0].content {
                Content::Json { parts } => match &parts[..] {
                    [JsonPart::Key { value, pointer }, ..] => {
                        assert!(pointer.ends_with("/contextos"), "{pointer}");
                        value.clone()
                    }
                    other => panic!("{other:?}"),
                },
                Content::Toml { keys } => keys[0].value.clone(),
                other => panic!("{other:?}"),
            };
            assert_eq!(value["command"], "contextos");
            assert_eq!(value["args"], json!(["mcp"]));
        }
    }

    #[test]
    fn native_allowlists_name_the_listed_servers_and_contextos() {
        let listed = vec!["memory".to_string(), "github".to_string()];
        let parts = claude_settings_parts(&listed);
        assert_eq!(
            parts,
            vec![
                JsonPart::Key {
                    pointer: "/enableAllProjectMcpServers".into(),
                    value: json!(false)
                },
                JsonPart::Items {
                    pointer: "/enabledMcpjsonServers".into(),
                    items: vec![json!("contextos"), json!("github"), json!("memory")]
                },
            ]
        );
        let parts = gemini_settings_parts(&listed);
        assert_eq!(
            parts[0],
            JsonPart::Key {
                pointer: "/mcpServers/contextos".into(),
                value: json!({"command": "contextos", "args": ["mcp"]})
            }
        );
        assert!(parts.contains(&JsonPart::Key {
            pointer: "/mcp/allowed".into(),
            value: json!(["contextos", "github", "memory"])
        }));
        for agent in [Agent::Cursor, Agent::Copilot, Agent::Codex, Agent::Amp] {
            let notes = allowlist_notes(agent, &listed);
            assert_eq!(notes.len(), 1, "{agent:?}");
            assert!(notes[0].message.contains("the hook asks"), "{notes:?}");
            assert!(allowlist_notes(agent, &[]).is_empty());
        }
        assert!(allowlist_notes(Agent::Claude, &listed).is_empty());
        assert!(allowlist_notes(Agent::AmazonQ, &listed).is_empty());
    }

    #[test]
    fn typed_entries_say_stdio() {
        assert_eq!(server(true)["type"], "stdio");
        assert!(server(false).get("type").is_none());
        assert!(run_tool_hint().contains("`run` tool of the `contextos` MCP server"));
    }
}

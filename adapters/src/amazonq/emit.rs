//! The Amazon Q Developer CLI emitter: one custom agent, `.amazonq/cli-agents/contextos.json`
//! (owned whole; the file name is the agent's name). Its fields are the CLI's documented
//! agent format (`docs/agent-format.md`, `docs/built-in-tools.md`, `docs/hooks.md`); the
//! Kiro CLI, its successor, reads the same directory.
//!
//! - Instructions: `resources` lists `AGENTS.md` (compiled along) and the files the CLI's
//!   default agent loads (`AmazonQ.md`, `README.md`, `.amazonq/rules/**/*.md`), so choosing
//!   this agent loses none of them. Amazon Q has no path-scoped rule format: a guide's
//!   scope is the "Applies to" line `AGENTS.md` gives it.
//! - Native rules, for deny rules without conditions or roles: `toolsSettings.execute_bash
//!   .deniedCommands` — regexes the CLI anchors at both ends, one per literal exec pattern
//!   (`git push --force( .*)?`) — and `deniedPaths` of `fs_read` and `fs_write` —
//!   gitignore-style globs, a project-relative pattern written `**/…` (the base of a
//!   relative pattern is not documented, so it is matched at any depth). Deny rules are
//!   evaluated before anything the user allows. Nothing is allowed natively.
//! - The hook: `hooks.preToolUse` (every tool, `matcher: "*"`), `contextos hook amazonq`,
//!   verdict by exit code (2 blocks); it cannot ask, so an ask blocks. `postToolUse` is
//!   observed.
//! - MCP: `mcpServers.contextos`; `tools` is `@builtin`, `@contextos` and the servers
//!   `[mcp] servers` lists — a native allowlist — with `useLegacyMcpJson` so the listed
//!   servers defined in `.amazonq/mcp.json` load.
//!
//! The agent applies when Amazon Q runs it (`q chat --agent contextos`, or the
//! `chat.defaultAgent` setting): the CLI's default agent reads none of this.

use crate::text::globs::expand_braces;
use crate::text::regex::exec_words;
use crate::text::rules::{literal_words, sorted_rules};
use crate::wiring::{server, MCP_SERVER};
use crate::{Agent, Content, EmitOptions, Emitted, Lossy, Output};
use contextos_core::glob::head_globs;
use contextos_core::ir::CompiledRule;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Map};
use std::collections::BTreeSet;

pub(crate) const AGENT_FILE: &str = ".amazonq/cli-agents/contextos.json";
pub(crate) const HOOK_COMMAND: &str = "contextos hook amazonq";
/// The agent's name: the file name without `.json`.
const NAME: &str = "contextos";
/// Milliseconds before the CLI gives up on the hook (ContextOS answers within 60 % of it).
const HOOK_TIMEOUT_MS: u64 = 5000;
/// The files the CLI's default agent loads, kept when this agent is chosen.
const RESOURCES: [&str; 4] = [
    "file://AGENTS.md",
    "file://AmazonQ.md",
    "file://README.md",
    "file://.amazonq/rules/**/*.md",
];

fn note(r: &CompiledRule, message: &str) -> Lossy {
    Lossy {
        target: Agent::AmazonQ,
        rule: r.id.clone(),
        origin: r.origin.clone(),
        message: message.into(),
    }
}

/// The native lists and the notes for what they cannot carry.
#[derive(Default)]
struct Native {
    commands: BTreeSet<String>,
    read_paths: BTreeSet<String>,
    write_paths: BTreeSet<String>,
    lossy: Vec<Lossy>,
}

pub fn emit(set: &PolicySet, opts: &EmitOptions) -> Emitted {
    let mut n = Native::default();
    for r in sorted_rules(set) {
        if !matches!(r.domain, Domain::Exec | Domain::Path) || r.effect == Effect::Allow {
            continue;
        }
        if r.effect == Effect::Ask {
            n.lossy.push(note(
                r,
                "Amazon Q's preToolUse hook cannot ask: the hook blocks there (saying it would \
                 have asked)",
            ));
            continue;
        }
        if !crate::text::rules::unconditioned(r) {
            n.lossy.push(note(
                r,
                "conditions, roles and scripts are not expressible in `toolsSettings`: no \
                 native entry, the hook enforces it",
            ));
        } else if r.domain == Domain::Exec {
            commands(r, &mut n);
        } else {
            paths(r, &mut n);
        }
    }
    let mut settings = Map::new();
    if !n.commands.is_empty() {
        settings.insert(
            "execute_bash".into(),
            json!({"deniedCommands": n.commands.iter().collect::<Vec<_>>()}),
        );
    }
    for (tool, list) in [("fs_read", &n.read_paths), ("fs_write", &n.write_paths)] {
        if !list.is_empty() {
            settings.insert(
                tool.into(),
                json!({"deniedPaths": list.iter().collect::<Vec<_>>()}),
            );
        }
    }
    let mut tools = vec!["@builtin".to_string(), format!("@{MCP_SERVER}")];
    for s in &opts.mcp_servers {
        let t = format!("@{s}");
        if !tools.contains(&t) {
            tools.push(t);
        }
    }
    let hook = json!([{"matcher": "*", "command": HOOK_COMMAND, "timeout_ms": HOOK_TIMEOUT_MS}]);
    let agent = json!({
        "name": NAME,
        "description": "ContextOS: the project's policies, compiled by `contextos compile` (do not \
                        edit: change the policies and compile again). Every tool call is checked \
                        by the ContextOS hook.",
        "mcpServers": { MCP_SERVER: server(false) },
        "tools": tools,
        "toolsSettings": settings,
        "resources": RESOURCES,
        "hooks": {"preToolUse": hook, "postToolUse": hook},
        "useLegacyMcpJson": true,
    });
    // Pretty-printing a JSON value cannot fail; an empty agent would be refused by the CLI.
    let mut text = serde_json::to_string_pretty(&agent).unwrap_or_default();
    text.push('\n');
    Emitted {
        outputs: vec![Output {
            path: AGENT_FILE.into(),
            target: Agent::AmazonQ,
            content: Content::Whole { text },
        }],
        lossy: n.lossy,
    }
}

fn commands(r: &CompiledRule, n: &mut Native) {
    if r.exec_patterns.is_empty() {
        // Every command.
        n.commands.insert(".*".into());
        return;
    }
    let mut glob_noted = false;
    let mut any = false;
    for ep in &r.exec_patterns {
        match literal_words(ep).filter(|w| !w.is_empty()) {
            Some(words) => {
                any = true;
                n.commands.insert(exec_words(&words, ep.rest, &[]));
            }
            None if !glob_noted => {
                glob_noted = true;
                n.lossy.push(note(
                    r,
                    "a glob word is not expressed in `deniedCommands`: no native entry for \
                     that pattern, the hook enforces it",
                ));
            }
            None => {}
        }
    }
    if any {
        n.lossy.push(note(
            r,
            "`deniedCommands` sees the command line as written: a command chained, quoted or \
             spaced differently is not matched natively and is left to the hook",
        ));
    }
}

fn paths(r: &CompiledRule, n: &mut Native) {
    if r.ops & 0b110 == 0b100 {
        n.lossy.push(note(
            r,
            "Amazon Q has no file tool that deletes: no native entry, the hook judges deleting \
             commands",
        ));
    }
    let mut globs: Vec<String> = Vec::new();
    let mut relative = false;
    let mut outside = false;
    let patterns = if r.patterns.is_empty() {
        vec!["**".to_string()]
    } else {
        r.patterns.clone()
    };
    for pat in &patterns {
        if pat.starts_with("..") {
            outside = true;
            continue;
        }
        for g in head_globs(pat) {
            for e in expand_braces(g) {
                let anchored = e.starts_with(['/', '~']) || e.starts_with("**");
                if !anchored {
                    relative = true;
                }
                let glob = if anchored { e } else { format!("**/{e}") };
                if !globs.contains(&glob) {
                    globs.push(glob);
                }
            }
        }
    }
    if outside {
        n.lossy.push(note(
            r,
            "a pattern above the project (`../…`) is not expressed in `deniedPaths`: the hook \
             enforces it",
        ));
    }
    if relative {
        n.lossy.push(note(
            r,
            "a project-relative pattern is written `**/…` in `deniedPaths` (the base of a \
             relative pattern is not documented): it also matches below any directory",
        ));
    }
    if r.ops & 0b001 != 0 {
        n.read_paths.extend(globs.iter().cloned());
    }
    if r.ops & 0b010 != 0 {
        n.write_paths.extend(globs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{full, small, whole_text};
    use serde_json::Value;

    fn agent(e: &Emitted) -> Value {
        serde_json::from_str(&whole_text(e, AGENT_FILE)).unwrap()
    }

    /// The documented agent fields, and nothing else: a field the CLI does not know would
    /// make it reject the file.
    const FIELDS: [&str; 13] = [
        "name",
        "description",
        "prompt",
        "mcpServers",
        "tools",
        "toolAliases",
        "allowedTools",
        "toolsSettings",
        "resources",
        "hooks",
        "useLegacyMcpJson",
        "model",
        "$schema",
    ];

    #[test]
    fn deny_rules_become_denied_commands_and_paths() {
        let set = small(
            r#"
@id("np") deny exec "git push --force *", "rm -rf" because "x";
@id("g") deny exec "curl -*k*" because "x";
@id("c") deny exec "terraform *" when role == "dev" because "x";
@id("rel") ask exec "make release" because "x";
@id("sec") deny path read "secrets/**", "**/*.pem" because "x";
@id("mig") deny path write "migrations/*.{sql,rs}" because "x";
@id("ok") allow exec "cargo test *" because "x";
"#,
        );
        let e = emit(&set, &EmitOptions::default());
        let a = agent(&e);
        assert_eq!(
            a["toolsSettings"]["execute_bash"]["deniedCommands"],
            json!(["git push --force( .*)?", "rm -rf"])
        );
        assert_eq!(
            a["toolsSettings"]["fs_read"]["deniedPaths"],
            json!(["**/*.pem", "**/secrets", "**/secrets/**"])
        );
        assert_eq!(
            a["toolsSettings"]["fs_write"]["deniedPaths"],
            json!(["**/migrations/*.rs", "**/migrations/*.sql"])
        );
        // The CLI anchors each regex at both ends (`\A…\z`).
        let denied = |cmd: &str| {
            a["toolsSettings"]["execute_bash"]["deniedCommands"]
                .as_array()
                .unwrap()
                .iter()
                .any(|re| {
                    let re = format!(r"\A(?:{})\z", re.as_str().unwrap());
                    regex::Regex::new(&re).unwrap().is_match(cmd)
                })
        };
        assert!(denied("git push --force") && denied("git push --force origin main"));
        assert!(denied("rm -rf") && !denied("rm -rf build") && !denied("git push origin"));
        let notes: Vec<(&str, &str)> = e
            .lossy
            .iter()
            .map(|l| (l.rule.as_str(), l.message.as_str()))
            .collect();
        for (id, part) in [
            ("g", "glob word"),
            ("c", "roles"),
            ("rel", "cannot ask"),
            ("sec", "`**/…`"),
        ] {
            assert!(
                notes.iter().any(|(r, m)| *r == id && m.contains(part)),
                "{id}: {notes:?}"
            );
        }
        assert!(!notes.iter().any(|(r, _)| *r == "ok"));
    }

    #[test]
    fn the_agent_has_only_documented_fields_and_the_hook() {
        let opts = EmitOptions {
            mcp_servers: vec!["github".into()],
            ..EmitOptions::default()
        };
        let e = emit(&full(), &opts);
        assert_eq!(e.outputs.len(), 1);
        let a = agent(&e);
        for k in a.as_object().unwrap().keys() {
            assert!(FIELDS.contains(&k.as_str()), "undocumented field {k}");
        }
        assert_eq!(a["name"], "contextos");
        for event in ["preToolUse", "postToolUse"] {
            assert_eq!(
                a["hooks"][event],
                json!([{"matcher": "*", "command": "contextos hook amazonq", "timeout_ms": 5000}])
            );
        }
        assert_eq!(a["tools"], json!(["@builtin", "@contextos", "@github"]));
        assert_eq!(
            a["mcpServers"]["contextos"],
            json!({"command": "contextos", "args": ["mcp"]})
        );
        assert_eq!(a["resources"][0], "file://AGENTS.md");
        for r in a["resources"].as_array().unwrap() {
            assert!(r.as_str().unwrap().starts_with("file://"), "{r}");
        }
        // The stdlib's self-protection: writing the policies is denied natively.
        let w = &a["toolsSettings"]["fs_write"]["deniedPaths"];
        assert!(
            w.as_array()
                .unwrap()
                .iter()
                .any(|p| p == "**/.contextos/**"),
            "{w}"
        );
        assert_eq!(emit(&full(), &opts), e);
    }
}

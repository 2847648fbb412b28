//! The Gemini CLI emitter.
//!
//! - Instructions: Gemini CLI reads `GEMINI.md` unless `context.fileName` names other
//!   files. ContextOS adds `AGENTS.md` and `GEMINI.md` to that list in
//!   `.gemini/settings.json` (the user's own entries stay), so Gemini reads the same
//!   `AGENTS.md` as the other agents — nested `AGENTS.md` files included, which is how
//!   directory-scoped guides reach it — and a hand-written `GEMINI.md` keeps loading. No
//!   `GEMINI.md` copy is written. Compiling for `gemini` compiles `AGENTS.md` too.
//! - Enforcement: the `BeforeTool` hook in `.gemini/settings.json` (`contextos hook
//!   gemini`, timeout in milliseconds, no matcher: every tool reaches it, and the hook
//!   passes the ones it has nothing to judge); `AfterTool` observes results. The hook
//!   cannot ask: an ask is answered as a deny that says so.
//! - Native rules: the policy engine's workspace tier, `.gemini/policies/contextos.toml`
//!   (owned whole), one `[[rule]]` per literal exec prefix of a deny or ask rule without
//!   conditions or roles — `toolName = "run_shell_command"`, `commandPrefix`, `decision =
//!   "deny"` or `"ask_user"`, priority 999 (deny) and 998 (ask), the top of the tier, so a
//!   deny outranks an ask on a shorter prefix. `commandPrefix` matches any command starting
//!   with the text, which is wider than an exact pattern: stricter, so fine for deny and
//!   ask, with a lossy note. Allow rules get no native entry (one would outlive the
//!   conditions the hook evaluates). Path rules stay with the hook: the policy engine
//!   matches paths only through a regular expression over the JSON arguments.
//! - `.geminiignore` (a managed block): the `deny` and `ask path read`
//!   patterns (the hook denies an ask), which Gemini's file tools and search skip.
//! - MCP: `mcpServers.contextos` and `mcp.allowed` (the listed servers and `contextos`),
//!   see [`crate::wiring::gemini_settings_parts`].

use crate::text::ignore::{ignore_block, read_deny_patterns};
use crate::text::rules::{literal_words, sorted_rules};
use crate::wiring::gemini_settings_parts;
use crate::{Agent, Content, EmitOptions, Emitted, JsonPart, Lossy, Output};
use contextos_core::ir::CompiledRule;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Value};
use std::collections::BTreeSet;

pub(crate) const HOOK_COMMAND: &str = "contextos hook gemini";
pub(crate) const SETTINGS: &str = ".gemini/settings.json";
pub(crate) const POLICY: &str = ".gemini/policies/contextos.toml";
pub(crate) const IGNORE: &str = ".geminiignore";
/// The files Gemini CLI reads its instructions from, in this order.
pub(crate) const CONTEXT_FILES: [&str; 2] = ["AGENTS.md", "GEMINI.md"];
/// Policy priorities (0–999 inside the workspace tier; higher wins).
const DENY_PRIORITY: u16 = 999;
const ASK_PRIORITY: u16 = 998;

pub fn emit(set: &PolicySet, opts: &EmitOptions) -> Emitted {
    let mut lossy = Vec::new();
    let (policy, notes) = policy_toml(set);
    lossy.extend(notes);
    for r in sorted_rules(set) {
        if r.effect == Effect::Ask && matches!(r.domain, Domain::Path | Domain::Exec) {
            lossy.push(note(
                r,
                "Gemini CLI's BeforeTool hook cannot ask: the hook answers deny there (saying \
                 it would have asked)"
                    .into(),
            ));
        }
    }
    lossy.sort_by(|a, b| {
        (a.rule.as_bytes(), a.message.as_bytes()).cmp(&(b.rule.as_bytes(), b.message.as_bytes()))
    });

    let mut parts = vec![
        JsonPart::Items {
            pointer: "/context/fileName".into(),
            items: CONTEXT_FILES.iter().map(|f| json!(f)).collect(),
        },
        JsonPart::Hooks {
            pointer: "/hooks/BeforeTool".into(),
            marker: HOOK_COMMAND.into(),
            items: vec![hook_entry(
                "ContextOS decides the tool call by the project's policies",
            )],
        },
        JsonPart::Hooks {
            pointer: "/hooks/AfterTool".into(),
            marker: HOOK_COMMAND.into(),
            items: vec![hook_entry(
                "ContextOS records what the tool brought into the session",
            )],
        },
    ];
    parts.extend(gemini_settings_parts(&opts.mcp_servers));
    let mut outputs = vec![
        Output {
            path: SETTINGS.into(),
            target: Agent::Gemini,
            content: Content::Json { parts },
        },
        Output {
            path: POLICY.into(),
            target: Agent::Gemini,
            content: Content::Whole { text: policy },
        },
    ];
    let patterns = read_deny_patterns(set, true);
    if !patterns.is_empty() {
        outputs.push(Output {
            path: IGNORE.into(),
            target: Agent::Gemini,
            content: Content::Block {
                text: ignore_block("Gemini CLI", &patterns),
            },
        });
    }
    outputs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Emitted { outputs, lossy }
}

/// One hook registration (`hooks.<Event>[]` element): no matcher (every tool), the
/// timeout in milliseconds.
fn hook_entry(description: &str) -> Value {
    json!({
        "hooks": [{
            "name": "contextos",
            "type": "command",
            "command": HOOK_COMMAND,
            "timeout": 5000,
            "description": description,
        }]
    })
}

fn note(r: &CompiledRule, message: String) -> Lossy {
    Lossy {
        target: Agent::Gemini,
        rule: r.id.clone(),
        origin: r.origin.clone(),
        message,
    }
}

/// `.gemini/policies/contextos.toml` and the notes for exec rules it cannot carry.
fn policy_toml(set: &PolicySet) -> (String, Vec<Lossy>) {
    let mut rules: BTreeSet<(u16, String)> = BTreeSet::new();
    let mut lossy = Vec::new();
    for r in sorted_rules(set) {
        if r.domain != Domain::Exec || r.effect == Effect::Allow {
            continue;
        }
        let decision = if r.effect == Effect::Deny {
            (DENY_PRIORITY, "deny")
        } else {
            (ASK_PRIORITY, "ask_user")
        };
        let exact = crate::text::rules::unconditioned(r);
        if !exact {
            lossy.push(note(
                r,
                "conditions, roles and scripts are not expressible in a Gemini policy rule: no \
                 native rule, the hook enforces it"
                    .into(),
            ));
            continue;
        }
        let mut glob_noted = false;
        for ep in &r.exec_patterns {
            let Some(words) = literal_words(ep).filter(|w| !w.is_empty()) else {
                if !glob_noted {
                    lossy.push(note(
                        r,
                        "a glob word is not expressible in `commandPrefix`: no native rule, \
                         the hook enforces it"
                            .into(),
                    ));
                    glob_noted = true;
                }
                continue;
            };
            let prefix = words.join(" ");
            if !ep.rest {
                lossy.push(note(
                    r,
                    format!(
                        "`{prefix}` (exactly these words) becomes a `commandPrefix`, which also \
                         matches longer commands"
                    ),
                ));
            }
            rules.insert((
                u16::MAX - decision.0,
                rule_block(&prefix, decision.1, decision.0),
            ));
        }
    }
    let mut text = String::from(
        "# generated by contextos; do not edit: change the policies and run contextos compile\n\
         # Gemini CLI policy engine (workspace tier): the policies' literal exec rules, which\n\
         # Gemini CLI evaluates itself. The ContextOS BeforeTool hook judges every tool call.\n",
    );
    for (_, block) in &rules {
        text.push('\n');
        text.push_str(block);
    }
    (text, lossy)
}

fn rule_block(prefix: &str, decision: &str, priority: u16) -> String {
    // A JSON string is a valid TOML basic string (the same escapes).
    let q = serde_json::to_string(prefix).unwrap_or_else(|_| "\"\"".into());
    format!(
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = {q}\ndecision = \"{decision}\"\npriority = {priority}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{block_text, full, small, whole_text};

    fn opts() -> EmitOptions {
        EmitOptions::default()
    }

    #[test]
    fn policy_rules_are_the_literal_exec_denies_and_asks() {
        let set = small(
            r#"
@id("np") deny exec "git push --force *", "rm -rf" because "x";
@id("rel") ask exec "make release *" because "x";
@id("g") deny exec "curl -*k*" because "x";
@id("c") deny exec "terraform *" when role == "dev" because "x";
@id("ok") allow exec "cargo test *" because "x";
@id("q") deny exec "say \"hi\" *" because "x";
"#,
        );
        let e = emit(&set, &opts());
        let text = whole_text(&e, POLICY);
        let doc: toml::Value = toml::from_str(&text).unwrap();
        let rules = doc["rule"].as_array().unwrap();
        let got: Vec<(&str, &str, i64)> = rules
            .iter()
            .map(|r| {
                assert_eq!(r["toolName"].as_str(), Some("run_shell_command"));
                (
                    r["commandPrefix"].as_str().unwrap(),
                    r["decision"].as_str().unwrap(),
                    r["priority"].as_integer().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("git push --force", "deny", 999),
                ("rm -rf", "deny", 999),
                ("say \"hi\"", "deny", 999),
                ("make release", "ask_user", 998),
            ]
        );
        assert!(
            !text.contains("cargo test") && !text.contains("terraform"),
            "{text}"
        );
        let notes: Vec<(&str, &str)> = e
            .lossy
            .iter()
            .map(|l| (l.rule.as_str(), l.message.as_str()))
            .collect();
        assert!(notes
            .iter()
            .any(|(r, m)| *r == "np" && m.contains("`rm -rf` (exactly")));
        assert!(notes
            .iter()
            .any(|(r, m)| *r == "g" && m.contains("glob word")));
        assert!(notes.iter().any(|(r, m)| *r == "c" && m.contains("roles")));
        assert!(notes
            .iter()
            .any(|(r, m)| *r == "rel" && m.contains("cannot ask")));
        assert!(!notes.iter().any(|(r, _)| *r == "ok"));
    }

    #[test]
    fn settings_point_gemini_at_agents_md_and_register_the_hook() {
        let e = emit(&full(), &opts());
        let Some(Content::Json { parts }) = e
            .outputs
            .iter()
            .find(|o| o.path == SETTINGS)
            .map(|o| &o.content)
        else {
            panic!("{:?}", e.outputs)
        };
        let v = serde_json::to_value(parts).unwrap();
        assert_eq!(
            v[0],
            json!({"kind": "items", "pointer": "/context/fileName", "items": ["AGENTS.md", "GEMINI.md"]})
        );
        for (i, event) in [(1, "BeforeTool"), (2, "AfterTool")] {
            assert_eq!(v[i]["pointer"], format!("/hooks/{event}"));
            let h = &v[i]["items"][0]["hooks"][0];
            assert_eq!(h["type"], "command");
            assert_eq!(h["command"], "contextos hook gemini");
            assert_eq!(h["timeout"], 5000);
            assert!(v[i]["items"][0].get("matcher").is_none());
        }
        assert_eq!(v[3]["pointer"], "/mcpServers/contextos");
        assert_eq!(
            v[4],
            json!({"kind": "key", "pointer": "/mcp/allowed", "value": ["contextos"]})
        );
        // The secrets the stdlib denies reading are in the ignore file.
        let ignore = block_text(&e, IGNORE);
        assert!(ignore.lines().any(|l| l == "**/.env"), "{ignore}");
        assert_eq!(emit(&full(), &opts()), e);
        assert!(e.outputs.iter().all(|o| o.target == Agent::Gemini));
    }
}

//! The OpenAI Codex emitter.
//!
//! OpenAI Codex: `.codex/rules/contextos.rules` (exec-policy rules Codex evaluates itself)
//! and ContextOS's entry in `.codex/hooks.json` (the `PreToolUse` hook, which judges
//! everything). Instructions reach Codex through `AGENTS.md`.
//!
//! Codex's `prefix_rule` matches argv by leading tokens, so only exec rules without
//! conditions, roles or scripts whose pattern is literal words translate:
//! - deny ⇒ `decision = "forbidden"`, ask ⇒ `"prompt"`. A pattern without a trailing `*`
//!   (exactly these words) becomes a prefix, which matches more: stricter, so allowed for
//!   deny and ask, with a lossy note;
//! - allow ⇒ nothing: a native allow would hold even where a sibling rule or a condition
//!   the hook evaluates asks or denies, so it would widen the policies whenever the hook
//!   does not run (with the hook running, an explicit allow rule is answered `allow`).
//!
//! Everything else is left to the hook, with a lossy note. Codex hooks cannot ask: the hook
//! answers deny where the policy asks (saying so). `.codex/config.toml` permission
//! profiles are not written: they load only for trusted projects and need a TOML merge
//! that keeps the user's comments.

use crate::text::guides::GENERATED_HEADER;
use crate::text::rules::{literal_words, sorted_rules};
use crate::{Agent, Content, Emitted, JsonPart, Lossy, Output};
use contextos_core::ir::CompiledRule;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use std::collections::BTreeSet;

pub const HOOK_COMMAND: &str = "contextos hook codex";

pub fn emit(set: &PolicySet) -> Emitted {
    let mut lines: BTreeSet<String> = BTreeSet::new();
    let mut lossy = Vec::new();
    let note = |rule: &CompiledRule, message: String, lossy: &mut Vec<Lossy>| {
        lossy.push(Lossy {
            target: Agent::Codex,
            rule: rule.id.clone(),
            origin: rule.origin.clone(),
            message,
        });
    };
    for rule in sorted_rules(set) {
        if rule.effect == Effect::Ask && matches!(rule.domain, Domain::Path | Domain::Exec) {
            note(
                rule,
                "Codex hooks cannot ask: the hook answers deny there (saying it would have asked)"
                    .into(),
                &mut lossy,
            );
        }
        if rule.domain != Domain::Exec {
            continue;
        }
        let exact = crate::text::rules::unconditioned(rule);
        if !exact {
            if rule.effect != Effect::Allow {
                note(
                    rule,
                    "conditions, roles and scripts are not expressible in prefix_rule: no \
                     native rule, the hook enforces it"
                        .into(),
                    &mut lossy,
                );
            }
            continue;
        }
        for ep in &rule.exec_patterns {
            let Some(words) = literal_words(ep) else {
                if rule.effect != Effect::Allow {
                    note(
                        rule,
                        "a glob word is not expressible in prefix_rule: no native rule, the \
                         hook enforces it"
                            .into(),
                        &mut lossy,
                    );
                }
                continue;
            };
            if words.is_empty() {
                continue;
            }
            let decision = match rule.effect {
                Effect::Deny => "forbidden",
                Effect::Ask => "prompt",
                Effect::Allow => continue,
            };
            if !ep.rest && rule.effect != Effect::Allow {
                note(
                    rule,
                    format!(
                        "`{}` (exactly these words) becomes a prefix rule, which also matches \
                         longer commands",
                        words.join(" ")
                    ),
                    &mut lossy,
                );
            }
            lines.insert(prefix_rule(&words, decision, &justification(rule)));
        }
    }
    let mut text = String::from("# ");
    text.push_str(
        GENERATED_HEADER
            .trim()
            .trim_start_matches("<!--")
            .trim_end_matches("-->")
            .trim(),
    );
    text.push_str(
        "\n# Exec rules Codex evaluates itself; the ContextOS hook judges every call.\n\n",
    );
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    let hook = serde_json::json!({
        "matcher": "Bash|apply_patch|mcp__.*",
        "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 10}],
    });
    // Observe-only: the hook records results and never answers a post event.
    let post_hook = serde_json::json!({
        "matcher": "Bash|apply_patch|mcp__.*",
        "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 10}],
    });
    Emitted {
        outputs: vec![
            Output {
                path: ".codex/hooks.json".into(),
                target: Agent::Codex,
                content: Content::Json {
                    parts: vec![
                        JsonPart::Hooks {
                            pointer: "/hooks/PreToolUse".into(),
                            marker: HOOK_COMMAND.into(),
                            items: vec![hook],
                        },
                        JsonPart::Hooks {
                            pointer: "/hooks/PostToolUse".into(),
                            marker: HOOK_COMMAND.into(),
                            items: vec![post_hook],
                        },
                    ],
                },
            },
            Output {
                path: ".codex/rules/contextos.rules".into(),
                target: Agent::Codex,
                content: Content::Whole { text },
            },
        ],
        lossy,
    }
}

/// What Codex shows when the rule fires: the rule id and its `because`, on one line.
fn justification(rule: &CompiledRule) -> String {
    let because = rule
        .because
        .as_deref()
        .map(|b| b.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|b| !b.is_empty());
    match because {
        Some(b) => format!("ContextOS rule {}: {b}", rule.id),
        None => format!("ContextOS rule {}", rule.id),
    }
}

/// `prefix_rule(pattern = ["git", "push", "--force"], decision = "forbidden",
/// justification = "…")`; strings are written as JSON strings, which are valid Starlark
/// string literals.
fn prefix_rule(words: &[&str], decision: &str, justification: &str) -> String {
    let q = |w: &str| serde_json::to_string(w).unwrap_or_else(|_| "\"\"".into());
    let quoted: Vec<String> = words.iter().map(|w| q(w)).collect();
    format!(
        "prefix_rule(pattern = [{}], decision = \"{decision}\", justification = {})",
        quoted.join(", "),
        q(justification)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{full, whole_text};

    #[test]
    fn exec_rules_become_prefix_rules_and_never_widen() {
        let set = full();
        let e = emit(&set);
        let rules = whole_text(&e, ".codex/rules/contextos.rules");
        assert!(rules.starts_with("# generated by contextos"), "{rules}");
        for line in rules.lines().filter(|l| l.starts_with("prefix_rule")) {
            assert!(
                (line.contains("decision = \"forbidden\"")
                    || line.contains("decision = \"prompt\""))
                    && line.contains(", justification = \"ContextOS rule "),
                "{line}"
            );
        }
        // Never a native allow.
        assert!(!rules.contains("decision = \"allow\""), "{rules}");
        assert!(e.outputs.iter().any(|o| o.path == ".codex/hooks.json"));
        assert_eq!(emit(&set), emit(&set));
    }

    #[test]
    fn a_literal_deny_is_forbidden_and_words_are_quoted() {
        let out = contextos_core::build::build(
            &[contextos_core::build::PolicySource {
                name: "main.policy".into(),
                text: "language 1;\n@id(\"np\") deny exec \"git push --force *\";\n@id(\"q\") ask exec \"say \\\"hi\\\"\";\n@id(\"ok\") allow exec \"make test *\";\n".into(),
                layer: contextos_core::ir::Layer::User,
            }],
            &contextos_core::build::BuildOptions::default(),
        );
        let e = emit(&out.policy.unwrap());
        let rules = whole_text(&e, ".codex/rules/contextos.rules");
        assert!(rules.contains("prefix_rule(pattern = [\"git\", \"push\", \"--force\"], decision = \"forbidden\", justification = \"ContextOS rule np\")\n"), "{rules}");
        assert!(!rules.contains("make"), "{rules}");
        assert!(e.lossy.iter().any(|l| l.rule == "q"), "{:?}", e.lossy);
    }
}

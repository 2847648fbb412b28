//! The Cursor emitter.
//!
//! Cursor: one `.cursor/rules/ctx-<guide>.mdc` per guide and ContextOS's entries in
//! `.cursor/hooks.json`.
//!
//! Guides map onto Cursor's four rule types by their `apply` (`@apply("…")`, else derived:
//! a role ⇒ agent, a scope ⇒ auto, otherwise always):
//! - always ⇒ **Always** (`alwaysApply: true`);
//! - auto with a scope ⇒ **Auto Attached** (`globs`, comma-joined, unquoted, braces expanded
//!   — Cursor's parser is not strict YAML — and `alwaysApply: false`);
//! - agent (or auto without a scope) ⇒ **Agent Requested** (`description` only,
//!   `alwaysApply: false`): the agent pulls it in when the description fits — also how a
//!   role's guide reaches Cursor, which has no roles;
//! - manual ⇒ **Manual** (neither description nor globs): only an `@` mention brings it in.
//!
//! Rules are not repeated in `.mdc` files: Cursor reads `AGENTS.md`, which carries them —
//! and, when `AGENTS.md` is compiled too, neither are the always-applying project-wide
//! guides it carries.
//! Enforcement is the hook, registered fail-closed on every event it judges. The Cursor CLI
//! also gets native denies in `.cursor/cli.json` (`permissions.deny`: `Read(…)`,
//! `Write(…)`, `Shell(…)`, see `cli_denies`), and `.cursorignore` (a managed block) lists
//! the project paths of read denies and asks (`beforeReadFile` cannot ask).

use crate::text::globs::{comma_globs, expand_braces};
use crate::text::guides::{guide_stems, push_guide_body, GENERATED_HEADER};
use crate::text::ignore::{ignore_block, read_deny_patterns};
use crate::text::markdown::{glob_list, md_code, md_inline};
use crate::text::rules::literal_words;
use crate::text::yaml::{frontmatter, Fm};
use crate::{Agent, Content, Emitted, JsonPart, Lossy, Output};
use contextos_core::policy::GuideApply;
use contextos_core::policy::{CompiledGuide, PolicySet};
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Value};

pub(crate) const HOOK_COMMAND: &str = "contextos hook cursor";
/// The events `contextos hook cursor` judges.
pub(crate) const HOOK_EVENTS: [&str; 4] = [
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "preToolUse",
];
/// The events it observes after the fact (tool results, for the session's record):
/// never answered, so registered without `failClosed`.
pub(crate) const POST_HOOK_EVENTS: [&str; 3] =
    ["afterMCPExecution", "afterShellExecution", "postToolUse"];

/// `with_agents_md`: `AGENTS.md` is compiled too. Cursor loads it always, so a
/// project-wide guide that applies always is already there and gets no `.mdc` of its own
/// (Cursor would otherwise load it twice).
pub fn emit(set: &PolicySet, with_agents_md: bool) -> Emitted {
    let mut outputs = Vec::new();
    let stems = guide_stems(&set.guides);
    for (g, stem) in set.guides.iter().zip(&stems) {
        let in_agents_md = g.role.is_none() && g.scope.is_empty() && g.apply == GuideApply::Always;
        if with_agents_md && in_agents_md {
            continue;
        }
        outputs.push(Output {
            path: format!(".cursor/rules/{stem}.mdc"),
            target: Agent::Cursor,
            content: Content::Whole { text: mdc(g) },
        });
    }

    let mut parts = vec![JsonPart::Key {
        pointer: "/version".into(),
        value: json!(1),
    }];
    for event in HOOK_EVENTS {
        parts.push(JsonPart::Hooks {
            pointer: format!("/hooks/{event}"),
            marker: HOOK_COMMAND.into(),
            items: vec![hook_entry()],
        });
    }
    for event in POST_HOOK_EVENTS {
        parts.push(JsonPart::Hooks {
            pointer: format!("/hooks/{event}"),
            marker: HOOK_COMMAND.into(),
            items: vec![post_hook_entry()],
        });
    }
    outputs.push(Output {
        path: ".cursor/hooks.json".into(),
        target: Agent::Cursor,
        content: Content::Json { parts },
    });
    outputs.push(Output {
        path: ".cursor/cli.json".into(),
        target: Agent::Cursor,
        content: Content::Json {
            parts: vec![JsonPart::Items {
                pointer: "/permissions/deny".into(),
                items: cli_denies(set).into_iter().map(Value::String).collect(),
            }],
        },
    });
    let ignored = read_deny_patterns(set, true);
    if !ignored.is_empty() {
        outputs.push(Output {
            path: ".cursorignore".into(),
            target: Agent::Cursor,
            content: Content::Block {
                text: ignore_block("Cursor", &ignored),
            },
        });
    }
    outputs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));

    let mut lossy: Vec<Lossy> = set
        .rules
        .iter()
        .filter(|r| matches!(r.domain, Domain::Path | Domain::Exec) && r.effect == Effect::Ask)
        .map(|r| Lossy {
            target: Agent::Cursor,
            rule: r.id.clone(),
            origin: r.origin.clone(),
            message: if r.domain == Domain::Path {
                "Cursor's preToolUse and beforeReadFile hooks cannot ask: the hook answers \
                 deny there (saying it would have asked)"
            } else {
                "Cursor asks for terminal commands (beforeShellExecution) but not for the \
                 agent's Shell tool (preToolUse): the hook answers deny there (saying it \
                 would have asked)"
            }
            .into(),
        })
        .collect();
    lossy.sort_by(|a, b| a.rule.as_bytes().cmp(b.rule.as_bytes()));
    Emitted { outputs, lossy }
}

/// The Cursor CLI's native denies (`.cursor/cli.json` `permissions.deny`; the CLI has no
/// ask, and ContextOS writes no allow): `Read(glob)` and `Write(glob)` for the path denies
/// of rules without a role or a condition, and `Shell(program)` for an exec deny whose
/// pattern is one literal word (`terraform *`, `shred`) — `Shell(…)` names a command base,
/// so a longer pattern (`git push --force *`) would deny every `git` command and is left to
/// the hook. Sorted, each once.
fn cli_denies(set: &PolicySet) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for r in set.rules.iter() {
        let exact = crate::text::rules::unconditioned(r);
        if r.effect != Effect::Deny || !exact {
            continue;
        }
        match r.domain {
            Domain::Path => {
                for (bit, tool) in [(0b001, "Read"), (0b010, "Write")] {
                    if r.ops & bit == 0 {
                        continue;
                    }
                    for pat in &r.patterns {
                        for g in contextos_core::glob::head_globs(pat) {
                            for e in expand_braces(g) {
                                out.insert(format!("{tool}({e})"));
                            }
                        }
                    }
                }
            }
            Domain::Exec => {
                for ep in &r.exec_patterns {
                    if let Some([word]) = literal_words(ep).as_deref() {
                        out.insert(format!("Shell({word})"));
                    }
                }
            }
            _ => {}
        }
    }
    out.into_iter().collect()
}

/// One hook entry, the same on every judged event.
pub(crate) fn hook_entry() -> Value {
    json!({"command": HOOK_COMMAND, "failClosed": true, "timeout": 5})
}

/// The entry on an observed event: its failure must not stop anything.
pub(crate) fn post_hook_entry() -> Value {
    json!({"command": HOOK_COMMAND, "timeout": 5})
}

/// The `.mdc` file of one guide.
fn mdc(g: &CompiledGuide) -> String {
    let title = g.title.split_whitespace().collect::<Vec<_>>().join(" ");
    let described = match &g.role {
        Some(role) => format!("{title} (for role {role})"),
        None => title.clone(),
    };
    let (mut text, kind) = match g.apply {
        GuideApply::Always => (
            frontmatter(&[
                ("description", Fm::Str(&described)),
                ("alwaysApply", Fm::Bool(true)),
            ]),
            "Always (alwaysApply: true)",
        ),
        GuideApply::Auto if !g.scope.is_empty() => {
            let globs = comma_globs(&g.scope);
            (
                frontmatter(&[
                    ("description", Fm::Str(&described)),
                    ("globs", Fm::Raw(&globs)),
                    ("alwaysApply", Fm::Bool(false)),
                ]),
                "Auto Attached (globs)",
            )
        }
        // Auto without a scope has nothing to attach to: the agent decides from the title.
        GuideApply::Auto | GuideApply::Agent => (
            frontmatter(&[
                ("description", Fm::Str(&described)),
                ("alwaysApply", Fm::Bool(false)),
            ]),
            "Agent Requested (description only)",
        ),
        GuideApply::Manual => (
            frontmatter(&[("alwaysApply", Fm::Bool(false))]),
            "Manual (only when a person mentions it with @)",
        ),
    };
    text.push_str(GENERATED_HEADER);
    text.push_str(&format!("\n<!-- Cursor rule type: {kind} -->\n\n# "));
    text.push_str(&md_inline(&g.title));
    text.push('\n');
    if let Some(role) = &g.role {
        text.push_str(&format!("\nFor role {}", md_code(role)));
        if !g.scope.is_empty() {
            text.push_str(&format!(", in {}", glob_list(&g.scope)));
        }
        text.push_str(".\n");
    }
    push_guide_body(&mut text, g);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{content, full, small, whole_text};

    #[test]
    fn all_four_rule_types_are_reachable() {
        let src = r#"language 1;
@id("a") guide "Always on" { "x" }
@id("b") guide "Attached" for "src/**" { "x" }
@id("c") @apply("agent") guide "On relevance" { "x" }
@id("d") @apply("manual") guide "Release checklist" { "x" }
"#;
        let out = contextos_core::build::build(
            &[contextos_core::build::PolicySource {
                name: "main.policy".into(),
                text: src.into(),
                layer: contextos_core::ir::Layer::User,
            }],
            &contextos_core::build::BuildOptions::default(),
        );
        let set = out.policy.unwrap();
        let e = emit(&set, false);
        let kinds: Vec<(String, bool)> = ["a", "b", "c", "d"]
            .iter()
            .map(|id| {
                let t = whole_text(&e, &format!(".cursor/rules/ctx-{id}.mdc"));
                (
                    t.lines().nth(2).unwrap_or("").to_string(),
                    t.contains("description:"),
                )
            })
            .collect();
        assert!(whole_text(&e, ".cursor/rules/ctx-a.mdc").contains("alwaysApply: true"));
        assert!(whole_text(&e, ".cursor/rules/ctx-b.mdc").contains("globs: src/**"));
        let c = whole_text(&e, ".cursor/rules/ctx-c.mdc");
        assert!(
            c.contains("description: On relevance") && !c.contains("globs"),
            "{c}"
        );
        let d = whole_text(&e, ".cursor/rules/ctx-d.mdc");
        assert!(
            d.starts_with("---\nalwaysApply: false\n---\n") && d.contains("Manual"),
            "{d}"
        );
        assert_eq!(kinds.iter().filter(|(_, described)| *described).count(), 3);
        // A manual guide stays out of the files agents always load.
        let agents = crate::agents_md::emit::emit(&set);
        assert!(!format!("{:?}", agents.outputs).contains("Release checklist"));
    }

    #[test]
    fn rule_types_per_guide() {
        let set = full();
        let e = emit(&set, false);
        assert_eq!(
            whole_text(&e, ".cursor/rules/ctx-layering.mdc"),
            "---\ndescription: Service layering\nglobs: src/api/**,src/handlers/**,src/routes/**\n\
             alwaysApply: false\n---\n\
             <!-- generated by contextos; do not edit: change the policies and run contextos compile -->\n\
             <!-- Cursor rule type: Auto Attached (globs) -->\n\n\
             # Service layering\n\n\
             Handlers call services; services never import handlers.\n\n\
             - Database access lives in `src/repo/`.\n"
        );
        assert_eq!(
            whole_text(&e, ".cursor/rules/ctx-commit-style.mdc"),
            "---\ndescription: Commit messages\nalwaysApply: true\n---\n\
             <!-- generated by contextos; do not edit: change the policies and run contextos compile -->\n\
             <!-- Cursor rule type: Always (alwaysApply: true) -->\n\n\
             # Commit messages\n\n\
             Write the subject in the imperative mood.\n"
        );
        assert_eq!(
            whole_text(&e, ".cursor/rules/ctx-review-focus.mdc"),
            "---\ndescription: What to look for (for role reviewer)\nalwaysApply: false\n---\n\
             <!-- generated by contextos; do not edit: change the policies and run contextos compile -->\n\
             <!-- Cursor rule type: Agent Requested (description only) -->\n\n\
             # What to look for\n\n\
             For role `reviewer`, in `src/**`.\n\n\
             Check error handling on every I/O path.\n"
        );
        // One file per guide, rules are not repeated.
        let mdcs = e
            .outputs
            .iter()
            .filter(|o| o.path.ends_with(".mdc"))
            .count();
        assert_eq!(mdcs, set.guides.len());
    }

    /// With `AGENTS.md` compiled, a guide it always carries is not loaded twice by Cursor.
    #[test]
    fn guides_agents_md_carries_get_no_mdc() {
        let set = full();
        let with = emit(&set, true);
        assert!(!with
            .outputs
            .iter()
            .any(|o| o.path == ".cursor/rules/ctx-commit-style.mdc"));
        for kept in ["ctx-layering", "ctx-review-focus"] {
            let path = format!(".cursor/rules/{kept}.mdc");
            assert!(with.outputs.iter().any(|o| o.path == path), "{kept}");
        }
    }

    #[test]
    fn frontmatter_per_rule_type() {
        let set = small(
            r#"
@id("a") guide "Plain: with colon" { "x" }
@id("b") guide "Scoped" for "src/**/*.{ts,tsx}", "lib/**" { "x" }
role dev { @id("c") guide "Dev only" for "src/**" { "x" } }
"#,
        );
        let e = emit(&set, false);
        let fm = |path: &str| {
            let t = whole_text(&e, path);
            let end = t[4..].find("---\n").unwrap() + 4;
            t[4..end].to_string()
        };
        assert_eq!(
            fm(".cursor/rules/ctx-a.mdc"),
            "description: \"Plain: with colon\"\nalwaysApply: true\n"
        );
        assert_eq!(
            fm(".cursor/rules/ctx-b.mdc"),
            "description: Scoped\nglobs: src/**/*.ts,src/**/*.tsx,lib/**\nalwaysApply: false\n"
        );
        assert_eq!(
            fm(".cursor/rules/ctx-c.mdc"),
            "description: Dev only (for role dev)\nalwaysApply: false\n"
        );
        for o in &e.outputs {
            if let Content::Whole { text } = &o.content {
                assert!(text.starts_with("---\n") && text.ends_with('\n') && !text.contains('\r'));
            }
        }
    }

    #[test]
    fn cli_denies_are_exact_path_denies_and_single_word_commands() {
        let set = small(
            r#"
@id("a") deny path read "secrets/**", "**/*.{pem,key}" because "x";
@id("b") deny path write "migrations/*.sql" because "x";
@id("c") deny exec "terraform *", "shred", "git push --force *" because "x";
@id("d") deny path write "docs/**" unless path.name == "README.md" because "x";
@id("e") ask exec "make *" because "x";
role dev { @id("f") deny path read "infra/**" because "x"; }
"#,
        );
        assert_eq!(
            cli_denies(&set),
            [
                "Read(**/*.key)",
                "Read(**/*.pem)",
                "Read(secrets)",
                "Read(secrets/**)",
                "Shell(shred)",
                "Shell(terraform)",
                "Write(migrations/*.sql)",
            ]
        );
        let e = emit(&set, false);
        assert!(content(&e, ".cursorignore").is_some());
    }

    #[test]
    fn hooks_json_parts() {
        let e = emit(&full(), false);
        let parts = match &e
            .outputs
            .iter()
            .find(|o| o.path == ".cursor/hooks.json")
            .unwrap()
            .content
        {
            Content::Json { parts } => parts.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            serde_json::to_value(&parts).unwrap(),
            json!([
                {"kind": "key", "pointer": "/version", "value": 1},
                {"kind": "hooks", "pointer": "/hooks/beforeShellExecution", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "failClosed": true, "timeout": 5}]},
                {"kind": "hooks", "pointer": "/hooks/beforeMCPExecution", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "failClosed": true, "timeout": 5}]},
                {"kind": "hooks", "pointer": "/hooks/beforeReadFile", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "failClosed": true, "timeout": 5}]},
                {"kind": "hooks", "pointer": "/hooks/preToolUse", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "failClosed": true, "timeout": 5}]},
                {"kind": "hooks", "pointer": "/hooks/afterMCPExecution", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "timeout": 5}]},
                {"kind": "hooks", "pointer": "/hooks/afterShellExecution", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "timeout": 5}]},
                {"kind": "hooks", "pointer": "/hooks/postToolUse", "marker": "contextos hook cursor",
                 "items": [{"command": "contextos hook cursor", "timeout": 5}]}
            ])
        );
    }

    #[test]
    fn path_asks_are_lossy_and_output_is_deterministic() {
        let set = full();
        let e = emit(&set, false);
        assert_eq!(e, emit(&set, false));
        // Every path or exec ask rule, and nothing else.
        let rules: Vec<&str> = e.lossy.iter().map(|l| l.rule.as_str()).collect();
        let mut asks: Vec<&str> = set
            .rules
            .iter()
            .filter(|r| r.effect == Effect::Ask && matches!(r.domain, Domain::Path | Domain::Exec))
            .map(|r| r.id.as_str())
            .collect();
        asks.sort_unstable();
        assert_eq!(rules, asks);
        assert!(rules.contains(&"lockfiles-need-review") && rules.contains(&"std-exec-eval"));
        assert!(e.lossy.iter().all(|l| l.target == Agent::Cursor));
    }
}

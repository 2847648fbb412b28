//! The Windsurf emitter.
//!
//! - Instructions: Windsurf reads `AGENTS.md` (the root file always, one in a subdirectory
//!   for the files below it), which carries the project-wide guides. Each glob-scoped
//!   guide outside a role also gets `.windsurf/rules/ctx-<guide>.md` with `trigger: glob`
//!   and `globs:` front matter — one file per glob (braces expanded), since the documented
//!   `globs` value is a single pattern. A rule file over Windsurf's 12,000-character limit
//!   gets a lossy note.
//! - Enforcement: Cascade hooks in `.windsurf/hooks.json` on `pre_read_code`,
//!   `pre_write_code`, `pre_run_command` and `pre_mcp_tool_use`, each `contextos hook
//!   windsurf` with `show_output: true`. The verdict is the exit code alone (2 blocks, the
//!   reason on stderr); Windsurf cannot ask, so an ask is a deny that says so.
//! - No native permission file exists; `.codeiumignore` (a managed block) lists the
//!   project paths of read denies and asks, which Cascade's own file access skips.
//! - MCP: Windsurf reads MCP servers from the user's `~/.codeium/windsurf/mcp_config.json`
//!   only; nothing is registered (ContextOS writes no user-level files).

use crate::text::globs::expand_braces;
use crate::text::guides::{guide_file, path_scoped_guides};
use crate::text::ignore::{ignore_block, read_deny_patterns};
use crate::text::rules::sorted_rules;
use crate::text::yaml::{frontmatter, Fm};
use crate::{Agent, Content, Emitted, JsonPart, Lossy, Output};
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Value};

pub(crate) const HOOK_COMMAND: &str = "contextos hook windsurf";
pub(crate) const HOOKS: &str = ".windsurf/hooks.json";
pub(crate) const IGNORE: &str = ".codeiumignore";
/// The Cascade events `contextos hook windsurf` judges.
pub(crate) const HOOK_EVENTS: [&str; 4] = [
    "pre_read_code",
    "pre_write_code",
    "pre_run_command",
    "pre_mcp_tool_use",
];
/// Windsurf's limit on one rule file.
const RULE_LIMIT: usize = 12_000;

pub fn emit(set: &PolicySet) -> Emitted {
    let mut outputs = Vec::new();
    let mut lossy = Vec::new();
    for (g, stem) in path_scoped_guides(set) {
        let mut globs: Vec<String> = Vec::new();
        for s in &g.scope {
            for e in expand_braces(s) {
                if !globs.contains(&e) {
                    globs.push(e);
                }
            }
        }
        let many = globs.len() > 1;
        for (i, glob) in globs.iter().enumerate() {
            let text = guide_file(
                frontmatter(&[("trigger", Fm::Raw("glob")), ("globs", Fm::Quoted(glob))]),
                g,
            );
            if text.chars().count() > RULE_LIMIT {
                lossy.push(Lossy {
                    target: Agent::Windsurf,
                    rule: g.id.clone(),
                    origin: g.origin.clone(),
                    message: format!(
                        "the guide's rule file has more than Windsurf's {RULE_LIMIT} characters: \
                         Windsurf may cut it"
                    ),
                });
            }
            let path = if many {
                format!(".windsurf/rules/{stem}-{}.md", i + 1)
            } else {
                format!(".windsurf/rules/{stem}.md")
            };
            outputs.push(Output {
                path,
                target: Agent::Windsurf,
                content: Content::Whole { text },
            });
        }
    }
    outputs.push(Output {
        path: HOOKS.into(),
        target: Agent::Windsurf,
        content: Content::Json {
            parts: HOOK_EVENTS
                .iter()
                .map(|e| JsonPart::Hooks {
                    pointer: format!("/hooks/{e}"),
                    marker: HOOK_COMMAND.into(),
                    items: vec![hook_entry()],
                })
                .collect(),
        },
    });
    let patterns = read_deny_patterns(set, true);
    if !patterns.is_empty() {
        outputs.push(Output {
            path: IGNORE.into(),
            target: Agent::Windsurf,
            content: Content::Block {
                text: ignore_block("Windsurf", &patterns),
            },
        });
    }
    outputs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    for r in sorted_rules(set) {
        if r.effect == Effect::Ask && matches!(r.domain, Domain::Path | Domain::Exec) {
            lossy.push(Lossy {
                target: Agent::Windsurf,
                rule: r.id.clone(),
                origin: r.origin.clone(),
                message: "Windsurf's Cascade hooks cannot ask: the hook blocks there (saying it \
                          would have asked)"
                    .into(),
            });
        }
    }
    lossy.sort_by(|a, b| {
        (a.rule.as_bytes(), a.message.as_bytes()).cmp(&(b.rule.as_bytes(), b.message.as_bytes()))
    });
    Emitted { outputs, lossy }
}

/// One Cascade hook entry: the command and `show_output`, so the reason reaches the user.
fn hook_entry() -> Value {
    json!({"command": HOOK_COMMAND, "show_output": true})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{block_text, full, small, whole_text};

    #[test]
    fn scoped_guides_get_one_glob_rule_file_per_glob() {
        let set = small(
            r#"
@id("api") guide "API layer" for "src/api/**/*.{ts,tsx}" { "Validate input." }
@id("db") guide "DB" for "migrations/**" { "Append only." }
@id("style") guide "Style" { "Be brief." }
"#,
        );
        let e = emit(&set);
        assert_eq!(
            whole_text(&e, ".windsurf/rules/ctx-db.md"),
            "---\ntrigger: glob\nglobs: \"migrations/**\"\n---\n\
             <!-- generated by contextos; do not edit: change the policies and run contextos compile -->\n\n\
             # DB\n\nAppend only.\n"
        );
        let api1 = whole_text(&e, ".windsurf/rules/ctx-api-1.md");
        assert!(
            api1.starts_with("---\ntrigger: glob\nglobs: \"src/api/**/*.ts\"\n---\n"),
            "{api1}"
        );
        let api2 = whole_text(&e, ".windsurf/rules/ctx-api-2.md");
        assert!(
            api2.starts_with("---\ntrigger: glob\nglobs: \"src/api/**/*.tsx\"\n---\n"),
            "{api2}"
        );
        // Project-wide guides come from AGENTS.md.
        assert!(!e.outputs.iter().any(|o| o.path.contains("style")));
    }

    #[test]
    fn hooks_json_registers_every_pre_event() {
        let e = emit(&full());
        let Some(Content::Json { parts }) = e
            .outputs
            .iter()
            .find(|o| o.path == HOOKS)
            .map(|o| &o.content)
        else {
            panic!("{:?}", e.outputs)
        };
        let v = serde_json::to_value(parts).unwrap();
        let pointers: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pointer"].as_str().unwrap())
            .collect();
        assert_eq!(
            pointers,
            [
                "/hooks/pre_read_code",
                "/hooks/pre_write_code",
                "/hooks/pre_run_command",
                "/hooks/pre_mcp_tool_use"
            ]
        );
        for p in v.as_array().unwrap() {
            assert_eq!(
                p["items"],
                json!([{"command": "contextos hook windsurf", "show_output": true}])
            );
        }
        assert!(block_text(&e, IGNORE).lines().any(|l| l == "**/.env"));
        assert!(e.lossy.iter().any(|l| l.rule == "std-secret-read"));
        assert_eq!(emit(&full()), e);
    }
}

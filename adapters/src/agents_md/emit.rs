//! The `AGENTS.md` managed blocks: the project-wide one at the root, and one in a nested
//! `AGENTS.md` per directory a scoped guide is confined to.
//!
//! `AGENTS.md` has one scoping mechanism: a nested file applies to its directory (nearest
//! wins; Codex, Cursor, Copilot, Zed and others read them). A scoped guide whose every glob
//! starts with a literal directory (`src/api/**/*.ts`) goes into that directory's
//! `AGENTS.md` only, so it is not loaded everywhere; one that can match anywhere
//! (`**/*.ts`) stays in the root file under "Applies to", where its globs tell the model
//! when it applies.

use crate::text::globs::expand_braces;
use crate::text::guides::{push_guide_body, sorted_guides};
use crate::text::markdown::{glob_list, md_code, md_inline};
use crate::text::rules::{describe_head, rule_line, sorted_rules};
use crate::{Agent, Content, Emitted, Output};
use contextos_core::ir::CompiledRule;
use contextos_core::policy::{CompiledGuide, PolicySet};
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use std::collections::{BTreeMap, BTreeSet};

pub fn emit(set: &PolicySet) -> Emitted {
    let mut outputs = vec![Output {
        path: "AGENTS.md".into(),
        target: Agent::AgentsMd,
        content: Content::Block {
            text: agents_md(set),
        },
    }];
    for (dir, guides) in nested(set) {
        outputs.push(Output {
            path: format!("{dir}/AGENTS.md"),
            target: Agent::AgentsMd,
            content: Content::Block {
                text: nested_md(&dir, &guides),
            },
        });
    }
    outputs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Emitted {
        outputs,
        lossy: Vec::new(),
    }
}

/// The literal directories a nested `AGENTS.md` must sit in to cover `scope`, or `None`
/// when some glob (brace-expanded) can match outside every literal directory: `**/*.rs`,
/// `*.md`, an absolute or `..` pattern.
pub(crate) fn nested_dirs(scope: &[String]) -> Option<Vec<String>> {
    let mut dirs = BTreeSet::new();
    for g in scope {
        for e in expand_braces(g) {
            let segs: Vec<&str> = e.split('/').collect();
            let mut lit = Vec::new();
            // The last segment names files (or is `**`); the directories come before it.
            for seg in &segs[..segs.len().saturating_sub(1)] {
                if seg.is_empty()
                    || *seg == "."
                    || *seg == ".."
                    || seg.contains(['*', '?', '[', ']', '{', '}', '\\'])
                {
                    break;
                }
                lit.push(*seg);
            }
            if lit.is_empty() || segs.first().is_some_and(|s| s.is_empty() || *s == "..") {
                return None;
            }
            dirs.insert(lit.join("/"));
        }
    }
    (!dirs.is_empty()).then(|| dirs.into_iter().collect())
}

/// Project-wide scoped guides that nested files carry, by directory.
fn nested(set: &PolicySet) -> BTreeMap<String, Vec<&CompiledGuide>> {
    let mut out: BTreeMap<String, Vec<&CompiledGuide>> = BTreeMap::new();
    for g in sorted_guides(set) {
        if g.role.is_some() || g.scope.is_empty() {
            continue;
        }
        for dir in nested_dirs(&g.scope).unwrap_or_default() {
            out.entry(dir).or_default().push(g);
        }
    }
    out
}

/// A nested `AGENTS.md` block: the guides confined to `dir`, each with its globs.
fn nested_md(dir: &str, guides: &[&CompiledGuide]) -> String {
    let mut out = format!(
        "## Conventions for {} (ContextOS)\n\nGenerated from the project's policies \
         (`.contextos/policies/`); the project-wide rules are in the root `AGENTS.md`.\n",
        md_code(&format!("{dir}/"))
    );
    for g in guides {
        out.push_str(&format!("\n### {}\n", md_inline(&g.title)));
        out.push_str(&format!("\nApplies to: {}\n", glob_list(&g.scope)));
        push_guide_body(&mut out, g);
    }
    out
}

pub(crate) fn agents_md(set: &PolicySet) -> String {
    let rules = sorted_rules(set);
    let guides = sorted_guides(set);
    let mut out = String::from("## Project rules (ContextOS)\n\n");
    out.push_str(
        "Generated from the project's policies (`.contextos/policies/`). Agents that run the \
         ContextOS hook (Claude Code, Cursor, GitHub Copilot, Codex, Gemini CLI, Windsurf) have \
         their tool calls \
         checked against the rules below: a denied call is blocked, an asked one waits for a \
         human. Every agent is expected to stay inside them, which also saves turns.\n\n",
    );
    let defaults: Vec<String> = Domain::ALL
        .iter()
        .map(|d| format!("{} {}", d.as_str(), set.default_for(*d).as_str()))
        .collect();
    out.push_str(&format!(
        "Where no rule matches: {}.\n",
        defaults.join(", ")
    ));

    let global_rules: Vec<&CompiledRule> =
        rules.iter().copied().filter(|r| r.role.is_none()).collect();
    let global_guides: Vec<&CompiledGuide> = guides
        .iter()
        .copied()
        .filter(|g| g.role.is_none())
        .collect();
    for g in global_guides.iter().filter(|g| g.scope.is_empty()) {
        write_guide(&mut out, "###", g);
    }
    write_rules(&mut out, "###", &global_rules);

    // Scoped guides no nested file can carry, grouped by their glob list.
    let mut groups: BTreeMap<String, (Vec<String>, Vec<&CompiledGuide>)> = BTreeMap::new();
    for g in global_guides
        .iter()
        .filter(|g| !g.scope.is_empty() && nested_dirs(&g.scope).is_none())
    {
        groups
            .entry(glob_list(&g.scope))
            .or_insert_with(|| (g.scope.clone(), Vec::new()))
            .1
            .push(g);
    }
    for (list, (_, gs)) in &groups {
        out.push_str(&format!("\n## Applies to: {list}\n"));
        for g in gs {
            write_guide(&mut out, "###", g);
        }
    }

    // Roles.
    let mut roles: BTreeSet<&str> = BTreeSet::new();
    roles.extend(rules.iter().filter_map(|r| r.role.as_deref()));
    roles.extend(guides.iter().filter_map(|g| g.role.as_deref()));
    for role in roles {
        let code = md_code(role);
        out.push_str(&format!(
            "\n## Role {code}\n\nOnly when working as role {code}, on top of everything above.\n"
        ));
        let role_guides: Vec<&CompiledGuide> = guides
            .iter()
            .copied()
            .filter(|g| g.role.as_deref() == Some(role))
            .collect();
        for g in role_guides.iter().filter(|g| g.scope.is_empty()) {
            write_guide(&mut out, "###", g);
        }
        let role_rules: Vec<&CompiledRule> = rules
            .iter()
            .copied()
            .filter(|r| r.role.as_deref() == Some(role))
            .collect();
        write_rules(&mut out, "###", &role_rules);
        for g in role_guides.iter().filter(|g| !g.scope.is_empty()) {
            write_guide(&mut out, "###", g);
        }
    }
    out
}

/// `### Enforced boundaries` (deny, then ask) and `### Allowed`; empty sections are left out.
fn write_rules(out: &mut String, h: &str, rules: &[&CompiledRule]) {
    let mut enforced: Vec<&CompiledRule> = rules
        .iter()
        .copied()
        .filter(|r| r.effect != Effect::Allow)
        .collect();
    enforced.sort_by(|a, b| {
        (effect_rank(a.effect), a.id.as_bytes()).cmp(&(effect_rank(b.effect), b.id.as_bytes()))
    });
    if !enforced.is_empty() {
        out.push_str(&format!("\n{h} Enforced boundaries\n\n"));
        for r in enforced {
            out.push_str(&format!("- {}\n", rule_line(r, false)));
        }
    }
    let allowed: Vec<&CompiledRule> = rules
        .iter()
        .copied()
        .filter(|r| r.effect == Effect::Allow)
        .collect();
    if !allowed.is_empty() {
        out.push_str(&format!("\n{h} Allowed\n\n"));
        for r in allowed {
            out.push_str(&format!("- {}: {}\n", md_code(&r.id), describe_head(r)));
        }
    }
}

fn write_guide(out: &mut String, h: &str, g: &CompiledGuide) {
    out.push_str(&format!("\n{h} {}\n", md_inline(&g.title)));
    if !g.scope.is_empty() && g.role.is_some() {
        out.push_str(&format!("\nApplies to: {}\n", glob_list(&g.scope)));
    }
    push_guide_body(out, g);
}

fn effect_rank(e: Effect) -> u8 {
    match e {
        Effect::Deny => 0,
        Effect::Ask => 1,
        Effect::Allow => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{block_text, full, small};

    #[test]
    fn small_agents_md_is_exact() {
        let set = small(
            r#"
@id("no-env")
@severity(error)
deny path read "**/.env" because "Secrets stay out of context.";

@id("tests")
allow exec "cargo test *" because "Tests are fine.";

@id("style")
guide "Style" { "Use `rustfmt`." }

@id("api")
guide "API" for "src/api/**" { "Validate input." }

@id("ts")
guide "TypeScript" for "**/*.ts" { "Strict mode." }

role reviewer {
    @id("rev")
    deny path write "**" because "Reviewers never edit.";
}
"#,
        );
        let text = block_text(&emit(&set), "AGENTS.md");
        let want = "## Project rules (ContextOS)

Generated from the project's policies (`.contextos/policies/`). Agents that run the ContextOS hook (Claude Code, Cursor, GitHub Copilot, Codex, Gemini CLI, Windsurf) have their tool calls checked against the rules below: a denied call is blocked, an asked one waits for a human. Every agent is expected to stay inside them, which also saves turns.

Where no rule matches: path allow, exec ask, plugin deny, commit allow, net deny, mcp deny.

### Style

Use `rustfmt`.

### Enforced boundaries

- `no-env` (error): deny path read `**/.env` — Secrets stay out of context.

### Allowed

- `tests`: allow exec `cargo test *`

## Applies to: `**/*.ts`

### TypeScript

Strict mode.

## Role `reviewer`

Only when working as role `reviewer`, on top of everything above.

### Enforced boundaries

- `rev`: deny path write `**` — Reviewers never edit.
";
        assert_eq!(text, want);
        // The guide confined to `src/api/` is in that directory's file only.
        assert_eq!(
            block_text(&emit(&set), "src/api/AGENTS.md"),
            "## Conventions for `src/api/` (ContextOS)

Generated from the project's policies (`.contextos/policies/`); the project-wide rules are in the root `AGENTS.md`.

### API

Applies to: `src/api/**`

Validate input.
"
        );
    }

    #[test]
    fn nested_directories_cover_the_scope_exactly() {
        let d =
            |globs: &[&str]| nested_dirs(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>());
        assert_eq!(d(&["src/api/**/*.ts"]), Some(vec!["src/api".into()]));
        assert_eq!(
            d(&["src/{handlers,routes}/**"]),
            Some(vec!["src/handlers".into(), "src/routes".into()])
        );
        assert_eq!(d(&["src/a*/x.rs"]), Some(vec!["src".into()]));
        for anywhere in [
            &["**/*.ts"][..],
            &["*.md"],
            &["/etc/x/*"],
            &["../x/y"],
            &["src/**", "*.rs"],
        ] {
            assert_eq!(d(anywhere), None, "{anywhere:?}");
        }
    }

    #[test]
    fn full_agents_md_covers_every_rule_and_guide() {
        let set = full();
        let e = emit(&set);
        assert_eq!(e, emit(&set), "deterministic");
        assert!(e.lossy.is_empty());
        let text = block_text(&e, "AGENTS.md");
        assert!(text.ends_with('\n') && !text.contains('\r'));
        for r in &set.rules {
            assert!(text.contains(&md_code(&r.id)), "rule {} missing", r.id);
        }
        let everything: String = e.outputs.iter().map(|o| block_text(&e, &o.path)).collect();
        for g in &set.guides {
            assert!(
                everything.contains(&md_inline(&g.title)),
                "guide {} missing",
                g.id
            );
        }
        // That guide's directories each get it in a nested file instead.
        assert!(!text.contains("## Applies to: `src/api/**`"));
        for dir in ["src/api", "src/handlers", "src/routes"] {
            assert!(
                block_text(&e, &format!("{dir}/AGENTS.md")).contains("`src/{handlers,routes}/**`"),
                "{dir}"
            );
        }
        assert!(text.contains("## Role `reviewer`"));
        assert!(text.contains(", unless `path matches \"**/.env.example\"`"));
        assert!(text.contains("when a script condition holds"));
        assert!(text.contains("allow exec `cargo nextest run *` with `sandbox`"));
        // Deny rules come before ask rules in the boundaries.
        let deny = text.find("`std-self-protection` (error)").unwrap();
        let ask = text.find("`std-secret-read` (warning)").unwrap();
        assert!(deny < ask);
        // The role section comes after the project-wide one.
        let role = text.find("## Role `reviewer`").unwrap();
        assert!(text.find("`reviewers-never-edit`").unwrap() > role);
        assert!(text.find("`no-force-push`").unwrap() < role);
    }
}

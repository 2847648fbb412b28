//! The `AGENTS.md` managed block.

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
    Emitted {
        outputs: vec![Output {
            path: "AGENTS.md".into(),
            target: Agent::AgentsMd,
            content: Content::Block {
                text: agents_md(set),
            },
        }],
        lossy: Vec::new(),
    }
}

fn agents_md(set: &PolicySet) -> String {
    let rules = sorted_rules(set);
    let guides = sorted_guides(set);
    let mut out = String::from("## Project rules (ContextOS)\n\n");
    out.push_str(
        "Generated from the project's policies (`.contextos/policies/`). ContextOS checks every \
         tool call against the rules below: a denied call is blocked, an asked one waits for a \
         human. Staying inside them saves turns.\n\n",
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

    // Scoped guides, grouped by their glob list.
    let mut groups: BTreeMap<String, (Vec<String>, Vec<&CompiledGuide>)> = BTreeMap::new();
    for g in global_guides.iter().filter(|g| !g.scope.is_empty()) {
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

role reviewer {
    @id("rev")
    deny path write "**" because "Reviewers never edit.";
}
"#,
        );
        let text = block_text(&emit(&set), "AGENTS.md");
        let want = "## Project rules (ContextOS)

Generated from the project's policies (`.contextos/policies/`). ContextOS checks every tool call against the rules below: a denied call is blocked, an asked one waits for a human. Staying inside them saves turns.

Where no rule matches: path allow, exec ask, plugin deny, commit allow.

### Style

Use `rustfmt`.

### Enforced boundaries

- `no-env` (error): deny path read `**/.env` — Secrets stay out of context.

### Allowed

- `tests`: allow exec `cargo test *`

## Applies to: `src/api/**`

### API

Validate input.

## Role `reviewer`

Only when working as role `reviewer`, on top of everything above.

### Enforced boundaries

- `rev`: deny path write `**` — Reviewers never edit.
";
        assert_eq!(text, want);
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
        for g in &set.guides {
            assert!(
                text.contains(&md_inline(&g.title)),
                "guide {} missing",
                g.id
            );
        }
        assert!(text.contains("## Applies to: `src/api/**`, `src/{handlers,routes}/**`"));
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

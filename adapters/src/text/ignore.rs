//! Ignore files (`.geminiignore`, `.codeiumignore`, …): gitignore-syntax lists of the files
//! an agent's own tools skip. Advisory strength — the agents document them as keeping
//! files out of context and search, not as a security boundary — so they only ever add
//! to what the hook enforces.

use super::globs::{expand_braces, is_match_all_path};
use super::rules::sorted_rules;
use contextos_core::glob::head_globs;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use std::collections::BTreeSet;

/// The gitignore patterns of the policies' `deny path read` rules — and
/// `ask` ones with `with_asks`, for agents whose hook cannot ask (it denies them there, so
/// hiding them is what the agent gets anyway): braces
/// expanded, `dir/**` also as `dir`, anchored at the project root (`/…`) unless written
/// `**/…`. Conditions are dropped (stricter). Left out: role rules (an ignore file has no
/// roles), patterns naming every file, and patterns outside the project (`~/…`, absolute), which
/// no project ignore file reaches. Sorted, each once.
pub(crate) fn read_deny_patterns(set: &PolicySet, with_asks: bool) -> Vec<String> {
    let mut out = BTreeSet::new();
    for r in sorted_rules(set) {
        // A condition (`unless path.name in $templates`) only narrows a rule, so hiding
        // every file it names is stricter; a role's rule would hide files from everyone.
        let exact = r.role.is_none();
        let effect = r.effect == Effect::Deny || (with_asks && r.effect == Effect::Ask);
        if r.domain != Domain::Path || !effect || r.ops & 0b001 == 0 || !exact {
            continue;
        }
        for pat in &r.patterns {
            if is_match_all_path(pat) || pat.starts_with(['~', '/']) || pat.starts_with("..") {
                continue;
            }
            for g in head_globs(pat) {
                for e in expand_braces(g) {
                    // `!` and `#` open a negation and a comment in gitignore syntax.
                    let e = if e.starts_with(['!', '#']) {
                        format!("\\{e}")
                    } else {
                        e
                    };
                    out.insert(if e.starts_with("**/") {
                        e
                    } else {
                        format!("/{e}")
                    });
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The managed block of an ignore file: a comment saying where the lines come from, then
/// the patterns.
pub(crate) fn ignore_block(agent_name: &str, patterns: &[String]) -> String {
    let mut s = format!(
        "# {agent_name}: files ContextOS's policies deny reading (from `contextos compile`).\n\
         # The ContextOS hook enforces them; this list keeps them out of the agent's own\n\
         # file tools and search.\n"
    );
    for p in patterns {
        s.push_str(p);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::small;

    #[test]
    fn read_denies_inside_the_project_without_roles() {
        let set = small(
            r#"
@id("a") deny path read "secrets/**", "**/*.{pem,key}", "~/.ssh/**", "**" because "x";
@id("b") deny path write "src/**" because "x";
role dev { @id("c") deny path read "config/**" because "x"; }
@id("f") deny path read "keys/**" unless path.name == "README.md" because "x";
@id("d") ask path read "notes/**" because "x";
@id("e") deny path read "!odd" because "x";
"#,
        );
        assert_eq!(
            read_deny_patterns(&set, false),
            vec![
                "**/*.key",
                "**/*.pem",
                "/\\!odd",
                "/keys",
                "/keys/**",
                "/secrets",
                "/secrets/**"
            ]
        );
        assert_eq!(read_deny_patterns(&set, true).len(), 9);
        let block = ignore_block("Gemini CLI", &read_deny_patterns(&set, false));
        assert!(block.starts_with("# Gemini CLI: "), "{block}");
        assert!(block.ends_with("/secrets/**\n"), "{block}");
    }
}

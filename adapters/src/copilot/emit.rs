//! The GitHub Copilot emitter.
//!
//! GitHub Copilot: a managed block in `.github/copilot-instructions.md` (a pointer to
//! `AGENTS.md` and the enforced deny rules), one
//! `.github/instructions/ctx-<guide>.instructions.md` per glob-scoped guide, and the hook
//! registration `.github/hooks/contextos.json`, which ContextOS owns whole (Copilot loads
//! every file in `.github/hooks/` on its own).
//!
//! Copilot has no repository file for static permissions, so the hook is the only
//! enforcement; its `ask` reaches the CLI but the cloud agent acts only on `deny`.

use crate::text::globs::comma_globs;
use crate::text::guides::{guide_file, path_scoped_guides};
use crate::text::rules::{rule_line, sorted_rules};
use crate::text::yaml::{frontmatter, Fm};
use crate::{Agent, Content, Emitted, Lossy, Output};
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;

pub(crate) const HOOKS_PATH: &str = ".github/hooks/contextos.json";

/// `.github/hooks/contextos.json`, byte for byte.
pub(crate) const HOOKS_JSON: &str = r#"{
  "version": 1,
  "hooks": {
    "preToolUse": [
      {
        "type": "command",
        "bash": "contextos hook copilot",
        "powershell": "contextos.exe hook copilot",
        "cwd": ".",
        "timeoutSec": 10
      }
    ]
  }
}
"#;

pub fn emit(set: &PolicySet) -> Emitted {
    let mut outputs = vec![
        Output {
            path: ".github/copilot-instructions.md".into(),
            target: Agent::Copilot,
            content: Content::Block {
                text: instructions(set),
            },
        },
        Output {
            path: HOOKS_PATH.into(),
            target: Agent::Copilot,
            content: Content::Whole {
                text: HOOKS_JSON.into(),
            },
        },
    ];
    for (g, stem) in path_scoped_guides(set) {
        let apply_to = comma_globs(&g.scope);
        let text = guide_file(frontmatter(&[("applyTo", Fm::Quoted(&apply_to))]), g);
        outputs.push(Output {
            path: format!(".github/instructions/{stem}.instructions.md"),
            target: Agent::Copilot,
            content: Content::Whole { text },
        });
    }
    outputs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));

    let lossy = sorted_rules(set)
        .into_iter()
        .filter(|r| r.effect == Effect::Ask && matches!(r.domain, Domain::Path | Domain::Exec))
        .map(|r| Lossy {
            target: Agent::Copilot,
            rule: r.id.clone(),
            origin: r.origin.clone(),
            message: "the Copilot cloud agent honours only deny, so the hook's ask does not stop \
                      it there (the Copilot CLI asks)"
                .into(),
        })
        .collect();
    Emitted { outputs, lossy }
}

/// The managed block: where the rules are, and the deny rules the hook enforces on tool
/// calls (path and exec; plugin and commit rules are decided by `contextos` itself).
fn instructions(set: &PolicySet) -> String {
    let mut out = String::from(
        "Project conventions, guides and the full list of rules are in `AGENTS.md` at the \
         repository root; follow them.\n",
    );
    let denies: Vec<String> = sorted_rules(set)
        .into_iter()
        .filter(|r| r.effect == Effect::Deny && matches!(r.domain, Domain::Path | Domain::Exec))
        .map(|r| format!("- {}\n", rule_line(r, true)))
        .collect();
    if !denies.is_empty() {
        out.push_str(
            "\nContextOS blocks these on every tool call (`.github/hooks/contextos.json`):\n\n",
        );
        for d in denies {
            out.push_str(&d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{block_text, full, small, whole_text};

    #[test]
    fn small_outputs_are_exact() {
        let set = small(
            r#"
@id("no-env") @severity(error) deny path read "**/.env" because "Secrets stay out.";
@id("push") ask exec "git push *" because "Needs a human.";
@id("plug") deny plugin because "No plugins.";
role reviewer { @id("rev") deny path write "**" because "Reviewers never edit."; }
@id("api") guide "API layer" for "src/api/**/*.{ts,tsx}", "openapi.yaml" { "Validate input." }
@id("style") guide "Style" { "Be brief." }
"#,
        );
        let e = emit(&set);
        assert_eq!(
            block_text(&e, ".github/copilot-instructions.md"),
            "Project conventions, guides and the full list of rules are in `AGENTS.md` at the \
             repository root; follow them.\n\n\
             ContextOS blocks these on every tool call (`.github/hooks/contextos.json`):\n\n\
             - `no-env` (error): deny path read `**/.env` — Secrets stay out.\n\
             - `rev` (role `reviewer`): deny path write `**` — Reviewers never edit.\n"
        );
        assert_eq!(
            whole_text(&e, ".github/instructions/ctx-api.instructions.md"),
            "---\napplyTo: \"src/api/**/*.ts,src/api/**/*.tsx,openapi.yaml\"\n---\n\
             <!-- generated by contextos; do not edit: change the policies and run contextos compile -->\n\n\
             # API layer\n\n\
             Validate input.\n"
        );
        let paths: Vec<&str> = e.outputs.iter().map(|o| o.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                ".github/copilot-instructions.md",
                ".github/hooks/contextos.json",
                ".github/instructions/ctx-api.instructions.md",
            ]
        );
        let lossy: Vec<(&str, &str)> = e
            .lossy
            .iter()
            .map(|l| (l.rule.as_str(), l.message.as_str()))
            .collect();
        assert_eq!(
            lossy,
            vec![(
                "push",
                "the Copilot cloud agent honours only deny, so the hook's ask does not stop it \
                 there (the Copilot CLI asks)"
            )]
        );
    }

    #[test]
    fn hooks_file_is_the_documented_json() {
        let e = emit(&full());
        let text = whole_text(&e, HOOKS_PATH);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"version": 1, "hooks": {"preToolUse": [{
                "type": "command", "bash": "contextos hook copilot",
                "powershell": "contextos.exe hook copilot", "cwd": ".", "timeoutSec": 10}]}})
        );
        // Pretty-printed with two spaces, LF, trailing newline: what serde_json writes.
        assert_eq!(
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap()),
            text
        );
    }

    #[test]
    fn stdlib_denies_listed_and_deterministic() {
        let set = full();
        let e = emit(&set);
        assert_eq!(e, emit(&set));
        let text = block_text(&e, ".github/copilot-instructions.md");
        assert!(text.contains("- `std-self-protection` (error): deny path write `"));
        assert!(text.contains("- `no-force-push` (error): deny exec `git push --force *`"));
        assert!(!text.contains("std-plugin"));
        assert!(!text.contains("std-secret-read"));
        assert!(e.lossy.iter().any(|l| l.rule == "std-secret-read"));
        assert!(e.lossy.iter().any(|l| l.rule == "std-exec-force-push"));
        assert!(e.outputs.iter().all(|o| o.target == Agent::Copilot));
    }
}

//! The OpenCode emitter: ContextOS's keys in `opencode.json` (the user's other keys and
//! entries are kept).
//!
//! OpenCode reads `AGENTS.md` by itself, so no `instructions` key is written (`--target
//! opencode` compiles `AGENTS.md` along). Written keys:
//!
//! - `$schema`: `https://opencode.ai/config.json`.
//! - `permission.bash`: one entry per command pattern, in this order — `"*": "ask"` when
//!   the exec default is ask (`"*": "deny"` when it is deny), then the `ask` patterns, then
//!   the `deny` patterns, so that a later, more specific deny wins where OpenCode takes the
//!   last match. Only exact rules (no condition, role or script) made of literal words are
//!   written: `git push --force *` becomes `git push --force` and `git push --force *`
//!   (whether OpenCode's `*` matches no words is not documented); any other rule gets a
//!   located `lossy` note and no entry.
//! - `permission.edit`: `deny` for an exact `deny path write` on every file (or a deny
//!   default), `ask` for the same with ask when no write is denied anywhere (an ask would
//!   let a person approve a denied write); nothing otherwise (its value is one word for
//!   every file).
//! - `permission.webfetch`: `deny` for a deny net default or an exact deny on every host;
//!   `ask` likewise when no host is denied.
//!
//! Every permission word is written never to loosen: where the user's `opencode.json`
//! already holds a stricter word at a key ContextOS writes (`"edit": "deny"` where the
//! policies say `ask`), the user's stays.
//!
//! Allow rules are never written. OpenCode runs no ContextOS hook, and its MCP
//! registration format is not confirmed in the reference notes: no `mcp` key.

use crate::text::globs::is_match_all_path;
use crate::text::rules::{literal_words, sorted_rules};
use crate::{Agent, Content, Emitted, JsonPart, Lossy, Output};
use contextos_core::ir::CompiledRule;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::json;

pub const CONF_PATH: &str = "opencode.json";
const SCHEMA: &str = "https://opencode.ai/config.json";
/// The write bit of a path rule's `ops`.
const WRITE: u8 = 0b010;

fn word(e: Effect) -> Option<&'static str> {
    match e {
        Effect::Deny => Some("deny"),
        Effect::Ask => Some("ask"),
        Effect::Allow => None,
    }
}

/// A permission word at `pointer`. OpenCode's words go `allow` < `ask` < `deny`; a
/// stricter one the user wrote there is kept (compiling never loosens it).
fn verdict(pointer: String, word: &str) -> JsonPart {
    JsonPart::Strictest {
        pointer,
        value: json!(word),
        ladder: ["allow", "ask", "deny"].map(|w| json!(w)).to_vec(),
    }
}

/// A JSON pointer segment (RFC 6901).
fn segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

pub fn emit(set: &PolicySet) -> Emitted {
    let mut lossy = Vec::new();
    let note = |r: &CompiledRule, message: &str, lossy: &mut Vec<Lossy>| {
        lossy.push(Lossy {
            target: Agent::OpenCode,
            rule: r.id.clone(),
            origin: r.origin.clone(),
            message: message.into(),
        });
    };
    let mut asks: Vec<String> = Vec::new();
    let mut denies: Vec<String> = Vec::new();
    for r in sorted_rules(set) {
        if r.domain != Domain::Exec {
            continue;
        }
        let Some(decision) = word(r.effect) else {
            continue;
        };
        if !crate::text::rules::unconditioned(r) {
            note(
                r,
                "conditions, roles and scripts are not expressible in `permission.bash`: no \
                 native entry (OpenCode runs no ContextOS hook)",
                &mut lossy,
            );
            continue;
        }
        let mut glob_noted = false;
        for ep in &r.exec_patterns {
            let words = match literal_words(ep) {
                Some(w) if !w.is_empty() && w.iter().all(|w| !w.contains(char::is_whitespace)) => w,
                _ if glob_noted => continue,
                _ => {
                    glob_noted = true;
                    note(
                        r,
                        "a glob word is not expressible in `permission.bash`: no native entry \
                         (OpenCode runs no ContextOS hook)",
                        &mut lossy,
                    );
                    continue;
                }
            };
            let base = words.join(" ");
            let list = if decision == "deny" {
                &mut denies
            } else {
                &mut asks
            };
            let mut push = |p: String| {
                if !list.contains(&p) {
                    list.push(p);
                }
            };
            if ep.rest {
                push(base.clone());
                push(format!("{base} *"));
            } else {
                push(base);
            }
        }
    }
    // A pattern both asked and denied is denied.
    asks.retain(|p| !denies.contains(p));
    let mut parts = vec![JsonPart::Key {
        pointer: "/$schema".into(),
        value: json!(SCHEMA),
    }];
    let mut bash: Vec<(String, &str)> = Vec::new();
    if let Some(d) = word(set.defaults[Domain::Exec.index()]) {
        if !denies.iter().any(|p| p == "*") {
            bash.push(("*".into(), d));
        }
    }
    bash.extend(asks.into_iter().map(|p| (p, "ask")));
    bash.extend(denies.into_iter().map(|p| (p, "deny")));
    for (p, d) in bash {
        parts.push(verdict(format!("/permission/bash/{}", segment(&p)), d));
    }
    let broad = |domain: Domain, all: &dyn Fn(&CompiledRule) -> bool| -> Option<&'static str> {
        let rules: Vec<&CompiledRule> = set.rules.iter().filter(|r| all(r)).collect();
        let any_deny = rules.iter().any(|r| r.effect == Effect::Deny);
        let everything = |e: Effect| {
            set.rules.iter().any(|r| {
                r.domain == domain
                    && r.effect == e
                    && crate::text::rules::unconditioned(r)
                    && all(r)
                    && r.patterns.iter().any(|p| is_match_all_path(p))
            }) || set.defaults[domain.index()] == e
        };
        if everything(Effect::Deny) {
            Some("deny")
        } else if everything(Effect::Ask) && !any_deny {
            Some("ask")
        } else {
            None
        }
    };
    let writes = |r: &CompiledRule| r.domain == Domain::Path && r.ops & WRITE != 0;
    if let Some(d) = broad(Domain::Path, &writes) {
        parts.push(verdict("/permission/edit".into(), d));
    }
    let nets = |r: &CompiledRule| r.domain == Domain::Net;
    if let Some(d) = broad(Domain::Net, &nets) {
        parts.push(verdict("/permission/webfetch".into(), d));
    }
    Emitted {
        outputs: vec![Output {
            path: CONF_PATH.into(),
            target: Agent::OpenCode,
            content: Content::Json { parts },
        }],
        lossy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{content, small};
    use serde_json::Value;

    fn keys(e: &Emitted) -> Vec<(String, Value)> {
        match content(e, CONF_PATH) {
            Some(Content::Json { parts }) => parts
                .iter()
                .filter_map(|p| match p {
                    JsonPart::Key { pointer, value }
                    | JsonPart::Strictest { pointer, value, .. } => {
                        Some((pointer.clone(), value.clone()))
                    }
                    _ => None,
                })
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bash_patterns_ask_first_then_deny_and_no_edit_for_narrow_rules() {
        let set = small(
            r#"
@id("a") deny exec "git push --force *", "shred" because "x";
@id("b") ask exec "git push *" because "x";
@id("c") deny exec "rm *" unless exec.cwd == "/tmp" because "x";
@id("d") deny path write "migrations/**" because "x";
@id("e") allow exec "cargo test *" because "x";
"#,
        );
        let e = emit(&set);
        let k = keys(&e);
        let got: Vec<(&str, &str)> = k
            .iter()
            .map(|(p, v)| (p.as_str(), v.as_str().unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            [
                ("/$schema", "https://opencode.ai/config.json"),
                ("/permission/bash/*", "ask"),
                ("/permission/bash/git push", "ask"),
                ("/permission/bash/git push *", "ask"),
                ("/permission/bash/git push --force", "deny"),
                ("/permission/bash/git push --force *", "deny"),
                ("/permission/bash/shred", "deny"),
                // The fixture declares no net default: nets are denied.
                ("/permission/webfetch", "deny"),
            ]
        );
        assert!(e.lossy.iter().any(|l| l.rule == "c"), "{:?}", e.lossy);
    }

    /// The user's own stricter words in `opencode.json` survive a compile whose
    /// policies say less (`"edit": "deny"` against our `ask`), and their other keys stay;
    /// looser ones are tightened.
    #[test]
    fn a_users_stricter_value_is_kept_through_the_merge() {
        let set = small(
            r#"
default net = allow;
@id("a") ask path write "**" because "x";
@id("b") ask exec "git push *" because "x";
"#,
        );
        let Some(Content::Json { parts }) = content(&emit(&set), CONF_PATH).cloned() else {
            panic!("no opencode.json parts");
        };
        let user = r#"{
  "model": "anthropic/claude-sonnet-4-5",
  "permission": {"edit": "deny", "bash": {"git push *": "deny", "*": "allow"}}
}"#;
        let (text, _) = crate::merge::apply_json(Some(user), &parts, &Default::default()).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["model"], "anthropic/claude-sonnet-4-5");
        assert_eq!(v["permission"]["edit"], "deny", "{text}");
        assert_eq!(v["permission"]["bash"]["git push *"], "deny", "{text}");
        assert_eq!(v["permission"]["bash"]["git push"], "ask", "{text}");
        // The user's `"*": "allow"` is looser than the policies' exec default (ask).
        assert_eq!(v["permission"]["bash"]["*"], "ask", "{text}");
    }

    #[test]
    fn edit_and_webfetch_only_when_every_file_or_host_is_meant() {
        let set = small(
            r#"
default net = deny;
@id("a") deny path write "**" because "x";
"#,
        );
        let k = keys(&emit(&set));
        assert!(
            k.contains(&("/permission/edit".into(), json!("deny"))),
            "{k:?}"
        );
        assert!(
            k.contains(&("/permission/webfetch".into(), json!("deny"))),
            "{k:?}"
        );
        let set = small(
            r#"
default net = allow;
@id("a") ask path write "**" because "x";
@id("b") deny path write ".env" because "x";
"#,
        );
        let k = keys(&emit(&set));
        assert!(
            !k.iter()
                .any(|(p, _)| p == "/permission/edit" || p == "/permission/webfetch"),
            "{k:?}"
        );
        assert_eq!(segment("a/b~c"), "a~1b~0c");
    }
}

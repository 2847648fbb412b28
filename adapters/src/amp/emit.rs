//! The Amp emitter: ContextOS's entries in the workspace settings `.amp/settings.json`
//! (read and merged with the user's `~/.config/amp/settings.json`; the user's other keys
//! and entries are kept).
//!
//! - Instructions: Amp reads `AGENTS.md` (nested ones for their directories) by itself,
//!   so nothing is written for them; compiling for `amp` compiles `AGENTS.md` along.
//! - `amp.permissions`, an ordered list where the first matching entry decides: first a
//!   `reject` entry for each deny rule without conditions or roles — `Bash` with
//!   `matches.cmd` regexes for literal exec patterns (`/^git push --force( .*)?$/`),
//!   `Read` and the writing tools (`create_file`, `edit_file`, `undo_edit`) with
//!   `matches.path` regexes for path patterns — each with a `message`, so the model is
//!   told why and carries on; then `{"tool": "*", "action": "delegate", "to":
//!   "contextos"}`, which sends every other tool call to the hook ([`super::hook`]).
//!   `to` names a program, not a command line, so it is `contextos` alone: started by
//!   Amp with `AGENT=amp` and `AGENT_TOOL_NAME` set and no arguments, `contextos` answers
//!   as `contextos hook amp`. Ask and allow rules get no native entry: an `ask` entry
//!   would let the operator approve what a conditioned deny of the hook refuses, and an
//!   `allow` would skip the hook; the hook asks (for `Bash`) or rejects instead.
//! - MCP: `amp.mcpServers.contextos`. Amp has no allowlist of servers (servers in
//!   workspace settings wait for `amp mcp approve`): the hook asks for unlisted ones.
//! - No ignore file: Amp documents none.

use crate::text::globs::expand_braces;
use crate::text::regex::{exec_words, path_glob};
use crate::text::rules::{literal_words, sorted_rules};
use crate::wiring::{server, MCP_SERVER};
use crate::{Agent, Content, Emitted, JsonPart, Lossy, Output};
use contextos_core::glob::head_globs;
use contextos_core::ir::CompiledRule;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Value};

pub(crate) const SETTINGS: &str = ".amp/settings.json";
pub(crate) const PERMISSIONS: &str = "/amp.permissions";
/// The program Amp runs for the delegated decision (on `PATH`, like every hook command).
pub(crate) const DELEGATE_TO: &str = "contextos";
/// In every entry ContextOS writes to `amp.permissions` (the delegate's `"to":
/// "contextos"`, the end of each reject message), and in no entry a person writes
/// unless it delegates to ContextOS: how a re-run finds its own entries among the user's.
pub(crate) const MARKER: &str = "contextos\"";
/// Amp delimits a regex matcher with `/`.
const SLASH: &[char] = &['/'];
/// Amp's file tools that write (`undo_edit` restores an earlier content).
const WRITE_TOOLS: [&str; 3] = ["create_file", "edit_file", "undo_edit"];

fn note(r: &CompiledRule, message: &str) -> Lossy {
    Lossy {
        target: Agent::Amp,
        rule: r.id.clone(),
        origin: r.origin.clone(),
        message: message.into(),
    }
}

/// What the model reads when an entry rejects a call; ends with the [`MARKER`] text.
fn message(r: &CompiledRule) -> String {
    let why = r
        .because
        .as_deref()
        .map(|b| b.trim().trim_end_matches('.'))
        .filter(|b| !b.is_empty())
        .map(|b| format!(": {b}"))
        .unwrap_or_default();
    format!(
        "Blocked by the project's policy `{}`{why}. Enforced by contextos",
        r.id
    )
}

fn reject(tool: &str, key: &str, patterns: &[String], r: &CompiledRule) -> Value {
    let mut entry = json!({"tool": tool, "action": "reject", "message": message(r)});
    if !patterns.is_empty() {
        let regexes: Vec<String> = patterns.iter().map(|p| format!("/{p}/")).collect();
        entry["matches"] = json!({ key: regexes });
    }
    entry
}

pub fn emit(set: &PolicySet) -> Emitted {
    let mut lossy = Vec::new();
    let mut entries = Vec::new();
    for r in sorted_rules(set) {
        if !matches!(r.domain, Domain::Exec | Domain::Path) || r.effect == Effect::Allow {
            continue;
        }
        if r.effect == Effect::Ask {
            if r.domain == Domain::Path {
                lossy.push(note(
                    r,
                    "Amp asks through a delegate only for `Bash`: the hook rejects the file tool \
                     call there (saying it would have asked)",
                ));
            }
            continue;
        }
        if !crate::text::rules::unconditioned(r) {
            lossy.push(note(
                r,
                "conditions, roles and scripts are not expressible in `amp.permissions`: no \
                 native entry, the delegated hook enforces it",
            ));
            continue;
        }
        if r.domain == Domain::Exec {
            exec_entry(r, &mut entries, &mut lossy);
        } else {
            path_entries(r, &mut entries, &mut lossy);
        }
    }
    entries.push(json!({"tool": "*", "action": "delegate", "to": DELEGATE_TO}));
    let parts = vec![
        JsonPart::Hooks {
            pointer: PERMISSIONS.into(),
            marker: MARKER.into(),
            items: entries,
        },
        JsonPart::Key {
            pointer: format!("/amp.mcpServers/{MCP_SERVER}"),
            value: server(false),
        },
    ];
    Emitted {
        outputs: vec![Output {
            path: SETTINGS.into(),
            target: Agent::Amp,
            content: Content::Json { parts },
        }],
        lossy,
    }
}

fn exec_entry(r: &CompiledRule, entries: &mut Vec<Value>, lossy: &mut Vec<Lossy>) {
    let mut regexes = Vec::new();
    let mut glob_noted = false;
    for ep in &r.exec_patterns {
        match literal_words(ep).filter(|w| !w.is_empty()) {
            Some(words) => {
                let re = format!("^{}$", exec_words(&words, ep.rest, SLASH));
                if !regexes.contains(&re) {
                    regexes.push(re);
                }
            }
            None if !glob_noted => {
                glob_noted = true;
                lossy.push(note(
                    r,
                    "a glob word is not expressed in `matches.cmd`: no native entry for that \
                     pattern, the delegated hook enforces it",
                ));
            }
            None => {}
        }
    }
    // A rule without patterns denies every command.
    if r.exec_patterns.is_empty() || !regexes.is_empty() {
        entries.push(reject("Bash", "cmd", &regexes, r));
    }
    if !regexes.is_empty() {
        lossy.push(note(
            r,
            "`matches.cmd` sees the command line as written: a command chained, quoted or \
             spaced differently is not matched natively and goes to the delegated hook",
        ));
    }
}

fn path_entries(r: &CompiledRule, entries: &mut Vec<Value>, lossy: &mut Vec<Lossy>) {
    let mut tools: Vec<&str> = Vec::new();
    if r.ops & 0b001 != 0 {
        tools.push("Read");
    }
    if r.ops & 0b010 != 0 {
        tools.extend(WRITE_TOOLS);
    }
    if r.ops & 0b110 == 0b100 {
        lossy.push(note(
            r,
            "Amp has no file tool that deletes: no native entry, the delegated hook judges \
             deleting commands",
        ));
    }
    if tools.is_empty() {
        return;
    }
    let mut regexes = Vec::new();
    let mut skipped = false;
    for pat in &r.patterns {
        if pat.starts_with("..") {
            skipped = true;
            continue;
        }
        for g in head_globs(pat) {
            for e in expand_braces(g) {
                match path_glob(&e, SLASH) {
                    Some(re) if !regexes.contains(&re) => regexes.push(re),
                    Some(_) => {}
                    None => skipped = true,
                }
            }
        }
    }
    if skipped {
        lossy.push(note(
            r,
            "a character class, an escape or a path outside the project is not expressed in \
             `matches.path`: no native entry for it, the delegated hook enforces it",
        ));
    }
    if !r.patterns.is_empty() && regexes.is_empty() {
        return;
    }
    if r.patterns.iter().any(|p| !p.starts_with('/')) {
        lossy.push(note(
            r,
            "Amp's tools send absolute paths and the project root is not known when \
             compiling: a project-relative pattern is matched below any directory",
        ));
    }
    for t in tools {
        entries.push(reject(t, "path", &regexes, r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{full, small};

    fn permissions(e: &Emitted) -> Vec<Value> {
        match &e.outputs[0].content {
            Content::Json { parts } => match &parts[0] {
                JsonPart::Hooks { pointer, items, .. } if pointer == PERMISSIONS => items.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    /// Amp's own matching, as its manual states it, for the entries ContextOS writes:
    /// the first entry whose `tool` glob and every `matches` condition (a list of
    /// `/regex/`s, any of which may match) hold decides. Rust's `regex` reads the subset
    /// written (literals, `\\x` escapes, groups, `[^/]`, anchors) as JavaScript does.
    fn decide(entries: &[Value], tool: &str, args: &Value) -> String {
        for e in entries {
            let t = e["tool"].as_str().unwrap();
            if t != "*" && t != tool {
                continue;
            }
            let hold = e.get("matches").and_then(Value::as_object).is_none_or(|m| {
                m.iter().all(|(k, cond)| {
                    let Some(v) = args[k].as_str() else {
                        return false;
                    };
                    cond.as_array().unwrap().iter().any(|re| {
                        let re = re.as_str().unwrap();
                        let body = re.strip_prefix('/').and_then(|r| r.strip_suffix('/'));
                        regex::Regex::new(body.unwrap()).unwrap().is_match(v)
                    })
                })
            });
            if hold {
                return e["action"].as_str().unwrap().to_string();
            }
        }
        "none".into()
    }

    #[test]
    fn denies_become_rejects_before_the_delegate() {
        let set = small(
            r#"
@id("np") deny exec "git push --force *", "rm -rf" because "Shared history.";
@id("g") deny exec "curl -*k*" because "x";
@id("c") deny exec "terraform *" when role == "dev" because "x";
@id("rel") ask exec "make release" because "x";
@id("sec") deny path read, write "secrets/**", "**/*.pem" because "Secrets.";
@id("lock") ask path write "Cargo.lock" because "x";
@id("ok") allow exec "cargo test *" because "x";
"#,
        );
        let e = emit(&set);
        let p = permissions(&e);
        let tools: Vec<(&str, &str)> = p
            .iter()
            .map(|v| (v["tool"].as_str().unwrap(), v["action"].as_str().unwrap()))
            .collect();
        assert_eq!(
            tools,
            [
                ("Bash", "reject"),
                ("Read", "reject"),
                ("create_file", "reject"),
                ("edit_file", "reject"),
                ("undo_edit", "reject"),
                ("*", "delegate"),
            ]
        );
        assert_eq!(
            p[0]["matches"]["cmd"],
            json!([r"/^git push --force( .*)?$/", "/^rm -rf$/"])
        );
        assert_eq!(
            p[0]["message"],
            "Blocked by the project's policy `np`: Shared history. Enforced by contextos"
        );
        assert_eq!(
            p[5],
            json!({"tool": "*", "action": "delegate", "to": "contextos"})
        );
        // Every entry carries the marker the merge finds ContextOS's entries by.
        for v in &p {
            assert!(serde_json::to_string(v).unwrap().contains(MARKER), "{v}");
        }
        let rules: Vec<&str> = e.lossy.iter().map(|l| l.rule.as_str()).collect();
        for id in ["g", "c", "lock", "sec", "np"] {
            assert!(rules.contains(&id), "{id}: {rules:?}");
        }
        assert!(!rules.contains(&"ok") && !rules.contains(&"rel"));
    }

    /// The entries, read the way Amp reads them, give a deny rule's verdict for the calls
    /// the rule names and leave every other call to the delegated hook.
    #[test]
    fn amp_matching_rejects_what_the_policy_denies_and_delegates_the_rest() {
        let set = small(
            r#"
@id("np") deny exec "git push --force *", "rm -rf" because "x";
@id("sec") deny path read "secrets/**", "**/*.pem" because "x";
@id("mig") deny path write "migrations/*.sql" because "x";
"#,
        );
        let p = permissions(&emit(&set));
        let bash = |cmd: &str| decide(&p, "Bash", &json!({ "cmd": cmd }));
        assert_eq!(bash("git push --force"), "reject");
        assert_eq!(bash("git push --force origin main"), "reject");
        assert_eq!(bash("rm -rf"), "reject");
        assert_eq!(bash("rm -rf build"), "delegate");
        assert_eq!(bash("git push origin"), "delegate");
        assert_eq!(bash("git push --forced"), "delegate");
        let read = |path: &str| decide(&p, "Read", &json!({ "path": path }));
        assert_eq!(read("/home/u/repo/secrets/db.yaml"), "reject");
        assert_eq!(read("/home/u/repo/secrets"), "reject");
        assert_eq!(read("/home/u/repo/certs/a.pem"), "reject");
        assert_eq!(read("/home/u/repo/src/lib.rs"), "delegate");
        assert_eq!(read("/home/u/repo/mysecrets/x"), "delegate");
        let edit = |path: &str| decide(&p, "edit_file", &json!({ "path": path }));
        assert_eq!(edit("/r/migrations/001.sql"), "reject");
        assert_eq!(edit("/r/migrations/001.rs"), "delegate");
        assert_eq!(edit("/r/secrets/db.yaml"), "delegate");
        assert_eq!(decide(&p, "oracle", &json!({})), "delegate");
    }

    #[test]
    fn settings_register_the_mcp_server_and_stay_identical() {
        let e = emit(&full());
        assert_eq!(e.outputs.len(), 1);
        assert_eq!(e.outputs[0].path, SETTINGS);
        let Content::Json { parts } = &e.outputs[0].content else {
            panic!("{:?}", e.outputs)
        };
        assert_eq!(
            parts[1],
            JsonPart::Key {
                pointer: "/amp.mcpServers/contextos".into(),
                value: json!({"command": "contextos", "args": ["mcp"]})
            }
        );
        // The stdlib's self-protection denies writing the policies: natively rejected.
        let p = permissions(&e);
        assert_eq!(
            decide(
                &p,
                "edit_file",
                &json!({"path": "/w/p/.contextos/policies/main.policy"})
            ),
            "reject"
        );
        assert_eq!(emit(&full()), e);
    }
}

//! Zed's `agent.tool_permissions` in `.zed/settings.json` (zed.dev/docs/ai/tool-permissions,
//! Zed v0.224.0 and later): per tool under `tools.<tool>`, a `default` (`allow`, `confirm`
//! or `deny`) and `always_allow` / `always_deny` / `always_confirm` lists of
//! `{"pattern": <Rust regex>}`, matched case-insensitively against the tool's input — the
//! command for `terminal` (each sub-command of a chain), the path(s) for `edit_file`,
//! `delete_path`, `move_path`, `copy_path`, `create_directory`, the URL for `fetch`.
//! `always_deny` wins over everything, then `always_confirm`, then `always_allow`.
//!
//! What is written, and only from exact rules (no condition, role or script):
//! - exec `deny` / `ask` rules made of literal words → `terminal.always_deny` /
//!   `always_confirm`, anchored at the start of a sub-command (after `VAR=value`
//!   assignments);
//! - path `deny` / `ask` rules covering writes or deletes → the same lists of the tools
//!   that write or delete there, as a regex that matches the glob at the end of the path
//!   Zed sends (which may carry the worktree's name in front);
//! - the exec, path-write and net defaults, where `deny` or `ask`, → the tools' `default`
//!   (`ask` is `confirm`), written never to loosen a stricter value the user set.
//!
//! Lists are owned items (the user's own entries stay) and `default`s never loosen. Zed
//! runs no hook, so whatever is not written here is not enforced in Zed: every such rule
//! gets a located `lossy` note. Read rules cannot be written at all (Zed gates no read
//! tool). Where a pattern is approximated, it is widened (a character class becomes any
//! one character; matching ignores case), which makes a deny or a confirm stricter.

use crate::text::globs::{expand_braces, is_match_all_path};
use crate::text::rules::{literal_words, sorted_rules};
use crate::{Agent, JsonPart, Lossy};
use contextos_core::ir::CompiledRule;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Zed's project settings file.
pub const SETTINGS_PATH: &str = ".zed/settings.json";
const ROOT: &str = "/agent/tool_permissions/tools";

/// The path operation bits of a rule's `ops`.
const WRITE: u8 = 0b010;
const DELETE: u8 = 0b100;

/// The tools that write (create, change, copy or move onto) a path.
const WRITE_TOOLS: [&str; 4] = ["copy_path", "create_directory", "edit_file", "move_path"];
/// The tools that delete (or move away) a path.
const DELETE_TOOLS: [&str; 2] = ["delete_path", "move_path"];

/// The list an effect goes into; `None` for allow (never written).
fn list(e: Effect) -> Option<&'static str> {
    match e {
        Effect::Deny => Some("always_deny"),
        Effect::Ask => Some("always_confirm"),
        Effect::Allow => None,
    }
}

/// A tool `default` for a domain default; `None` for allow.
fn default_word(e: Effect) -> Option<&'static str> {
    match e {
        Effect::Deny => Some("deny"),
        Effect::Ask => Some("confirm"),
        Effect::Allow => None,
    }
}

/// `s` with every regex metacharacter escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The terminal pattern of a command prefix: the words at the start of a sub-command
/// (after any `VAR=value` assignments), separated by blanks; `rest`: more words may
/// follow, else the command ends there.
pub(crate) fn command_regex(words: &[&str], rest: bool) -> String {
    let body = words
        .iter()
        .map(|w| escape(w))
        .collect::<Vec<_>>()
        .join(r"\s+");
    let end = if rest { r"(\s|$)" } else { r"\s*$" };
    format!(r"^(\S+=\S*\s+)*{body}{end}")
}

/// The path pattern of one brace-free glob: it matches at the end of the path Zed sends,
/// after a `/` or at its start (`**/` in front adds nothing to that). `dir/**` also names
/// `dir` itself. An absolute glob is anchored at the start; a `~/` one matches wherever
/// the rest does, since Zed sends the home directory expanded.
pub(crate) fn path_regex(glob: &str) -> String {
    let (mut out, rest) = if let Some(abs) = glob.strip_prefix('/') {
        (String::from("^/"), abs)
    } else {
        let rel = glob.strip_prefix("~/").unwrap_or(glob);
        let mut rel = rel;
        while let Some(r) = rel.strip_prefix("**/") {
            rel = r;
        }
        (String::from("(^|/)"), rel)
    };
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                    out.push_str("(.*/)?");
                } else if out.ends_with('/') && chars.peek().is_none() {
                    // `dir/**`: the directory and everything below it.
                    out.pop();
                    out.push_str("(/.*)?");
                } else {
                    out.push_str(".*");
                }
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            // A class is widened to any one character (stricter for deny and confirm).
            '[' => {
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                }
                out.push_str("[^/]");
            }
            '\\' => {
                if let Some(d) = chars.next() {
                    out.push_str(&escape(&d.to_string()));
                }
            }
            c => out.push_str(&escape(&c.to_string())),
        }
    }
    out.push('$');
    out
}

/// What [`parts`] collects: per tool, per list, the patterns in rule order (once each),
/// and per tool its `default`.
#[derive(Default)]
struct Tools {
    lists: BTreeMap<(&'static str, &'static str), Vec<String>>,
    defaults: BTreeMap<&'static str, &'static str>,
}

impl Tools {
    fn push(&mut self, tool: &'static str, list: &'static str, pattern: String) {
        let v = self.lists.entry((tool, list)).or_default();
        if !v.contains(&pattern) {
            v.push(pattern);
        }
    }

    /// The stricter of the two words wins (`deny` over `confirm`).
    fn set_default(&mut self, tool: &'static str, word: &'static str) {
        let e = self.defaults.entry(tool).or_insert(word);
        if word == "deny" {
            *e = word;
        }
    }
}

/// ContextOS's parts of `.zed/settings.json`, and the rules Zed cannot be given.
pub fn parts(set: &PolicySet) -> (Vec<JsonPart>, Vec<Lossy>) {
    let mut t = Tools::default();
    let mut lossy = Vec::new();
    let mut note = |r: &CompiledRule, message: &str| {
        lossy.push(Lossy {
            target: Agent::Zed,
            rule: r.id.clone(),
            origin: r.origin.clone(),
            message: message.into(),
        });
    };
    for r in sorted_rules(set) {
        let (Some(list), Some(word)) = (list(r.effect), default_word(r.effect)) else {
            continue;
        };
        match r.domain {
            Domain::Exec => {
                if !crate::text::rules::unconditioned(r) {
                    note(
                        r,
                        "conditions, roles and scripts are not expressible in Zed's \
                         `tool_permissions`, and Zed runs no hook: not enforced in Zed",
                    );
                    continue;
                }
                let mut skipped = false;
                for ep in &r.exec_patterns {
                    match literal_words(ep) {
                        Some(w) if !w.is_empty() => {
                            t.push("terminal", list, command_regex(&w, ep.rest));
                        }
                        _ => skipped = true,
                    }
                }
                if r.exec_patterns.is_empty() {
                    // A rule over every command: the terminal's own default.
                    t.set_default("terminal", word);
                }
                if skipped {
                    note(
                        r,
                        "a glob word is not written to Zed's terminal patterns, and Zed runs \
                         no hook: that pattern is not enforced in Zed",
                    );
                }
            }
            Domain::Path => {
                let covered = r.ops & (WRITE | DELETE) != 0;
                if r.ops & !(WRITE | DELETE) != 0 {
                    note(
                        r,
                        "Zed gates no read tool: the read part of this rule is not enforced \
                         in Zed",
                    );
                }
                if !covered {
                    continue;
                }
                if !crate::text::rules::unconditioned(r) {
                    note(
                        r,
                        "conditions, roles and scripts are not expressible in Zed's \
                         `tool_permissions`, and Zed runs no hook: not enforced in Zed",
                    );
                    continue;
                }
                let mut tools: Vec<&'static str> = Vec::new();
                if r.ops & WRITE != 0 {
                    tools.extend(WRITE_TOOLS);
                }
                if r.ops & DELETE != 0 {
                    tools.extend(DELETE_TOOLS);
                }
                tools.sort_unstable();
                tools.dedup();
                for p in &r.patterns {
                    for g in expand_braces(p) {
                        for tool in tools.iter().copied() {
                            t.push(tool, list, path_regex(&g));
                        }
                    }
                }
                if r.patterns.is_empty() || r.patterns.iter().any(|p| is_match_all_path(p)) {
                    for tool in tools.iter().copied() {
                        t.set_default(tool, word);
                    }
                }
            }
            Domain::Net => {
                if crate::text::rules::unconditioned(r)
                    && (r.patterns.is_empty() || r.patterns.iter().any(|p| is_match_all_path(p)))
                {
                    t.set_default("fetch", word);
                } else {
                    note(
                        r,
                        "only a rule over every host is written for Zed (`fetch` default), \
                         and Zed runs no hook: not enforced in Zed",
                    );
                }
            }
            _ => {}
        }
    }
    if let Some(w) = default_word(set.defaults[Domain::Exec.index()]) {
        t.set_default("terminal", w);
    }
    if let Some(w) = default_word(set.defaults[Domain::Path.index()]) {
        for tool in WRITE_TOOLS.into_iter().chain(DELETE_TOOLS) {
            t.set_default(tool, w);
        }
    }
    if let Some(w) = default_word(set.defaults[Domain::Net.index()]) {
        t.set_default("fetch", w);
    }
    let mut parts = Vec::new();
    for (tool, word) in &t.defaults {
        parts.push(JsonPart::Strictest {
            pointer: format!("{ROOT}/{}/default", segment(tool)),
            value: json!(word),
            ladder: ["allow", "confirm", "deny"].map(|w| json!(w)).to_vec(),
        });
    }
    for ((tool, list), patterns) in &t.lists {
        parts.push(JsonPart::Items {
            pointer: format!("{ROOT}/{}/{list}", segment(tool)),
            items: patterns
                .iter()
                .map(|p| json!({ "pattern": p }))
                .collect::<Vec<Value>>(),
        });
    }
    parts.sort_by(|a, b| pointer(a).cmp(pointer(b)));
    (parts, lossy)
}

fn pointer(p: &JsonPart) -> &str {
    match p {
        JsonPart::Key { pointer, .. }
        | JsonPart::Strictest { pointer, .. }
        | JsonPart::Items { pointer, .. }
        | JsonPart::Hooks { pointer, .. } => pointer,
    }
}

/// A JSON pointer segment (RFC 6901); tool names hold `:` for MCP tools, never `/`.
fn segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::small;
    use regex::RegexBuilder;

    /// Zed's matching: Rust regex, case-insensitive by default.
    fn zed_matches(pattern: &str, input: &str) -> bool {
        RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .unwrap()
            .is_match(input)
    }

    fn lists(parts: &[JsonPart]) -> BTreeMap<String, Vec<String>> {
        parts
            .iter()
            .filter_map(|p| match p {
                JsonPart::Items { pointer, items } => Some((
                    pointer.clone(),
                    items
                        .iter()
                        .map(|i| i["pattern"].as_str().unwrap().to_owned())
                        .collect(),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn command_patterns_match_like_the_policy() {
        let deny = command_regex(&["git", "push", "--force"], true);
        for yes in [
            "git push --force",
            "git  push --force origin main",
            "FOO=1 git push --force x",
        ] {
            assert!(zed_matches(&deny, yes), "{deny} {yes}");
        }
        for no in [
            "git push origin",
            "git push --forceful",
            "echo git push --force",
        ] {
            assert!(!zed_matches(&deny, no), "{deny} {no}");
        }
        let exact = command_regex(&["shred"], false);
        assert!(zed_matches(&exact, "shred"));
        assert!(!zed_matches(&exact, "shred x"));
        assert!(zed_matches(&command_regex(&["a.b"], false), "a.b"));
        assert!(!zed_matches(&command_regex(&["a.b"], false), "axb"));
    }

    #[test]
    fn path_patterns_match_the_glob_at_the_end_of_zeds_path() {
        let m = path_regex("migrations/**");
        for yes in [
            "migrations",
            "migrations/0001.sql",
            "proj/migrations/a/b.sql",
            "/abs/proj/migrations/x",
        ] {
            assert!(zed_matches(&m, yes), "{m} {yes}");
        }
        for no in ["migrationsx/a", "src/migrations.rs"] {
            assert!(!zed_matches(&m, no), "{m} {no}");
        }
        let env = path_regex("**/.env");
        assert!(zed_matches(&env, "proj/.env") && zed_matches(&env, ".env"));
        assert!(!zed_matches(&env, "proj/.envrc"));
        let star = path_regex("src/*.rs");
        assert!(zed_matches(&star, "proj/src/lib.rs"));
        assert!(!zed_matches(&star, "proj/src/a/lib.rs"));
        assert!(zed_matches(&path_regex("key[0-9].pem"), "keyx.pem"));
        assert_eq!(path_regex("**/.env"), path_regex(".env"));
        let home = path_regex("~/.ssh/**");
        assert!(zed_matches(&home, "/home/dev/.ssh/id_ed25519"), "{home}");
        let abs = path_regex("/etc/xdg/autostart/**");
        assert!(zed_matches(&abs, "/etc/xdg/autostart/x.desktop"), "{abs}");
        assert!(!zed_matches(&abs, "/home/dev/etc/xdg/autostart/x"), "{abs}");
    }

    /// Every pattern the standard library and the example policies give Zed is a regex
    /// Zed's engine accepts (an invalid one would break the user's settings).
    #[test]
    fn every_emitted_pattern_is_a_valid_rust_regex() {
        let (parts, _) = parts(&crate::test_support::policies::full());
        let l = lists(&parts);
        assert!(l.len() > 3, "{l:?}");
        for (pointer, patterns) in &l {
            for p in patterns {
                assert!(RegexBuilder::new(p).build().is_ok(), "{pointer}: {p}");
            }
        }
    }

    #[test]
    fn deny_and_ask_rules_become_lists_and_defaults_never_loosen() {
        let set = small(
            r#"
@id("a") deny exec "git push --force *", "shred" because "x";
@id("b") ask exec "git push *" because "x";
@id("c") deny exec "rm *" unless exec.cwd == "/tmp" because "x";
@id("d") deny path write "migrations/**" because "x";
@id("e") deny path read ".env" because "x";
@id("f") allow exec "cargo test *" because "x";
"#,
        );
        let (p, lossy) = parts(&set);
        let l = lists(&p);
        assert_eq!(
            l["/agent/tool_permissions/tools/terminal/always_deny"],
            [
                command_regex(&["git", "push", "--force"], true),
                command_regex(&["shred"], false)
            ]
        );
        assert_eq!(
            l["/agent/tool_permissions/tools/terminal/always_confirm"],
            [command_regex(&["git", "push"], true)]
        );
        for tool in WRITE_TOOLS {
            assert_eq!(
                l[&format!("/agent/tool_permissions/tools/{tool}/always_deny")],
                [path_regex("migrations/**")],
                "{tool}"
            );
        }
        assert!(!l.keys().any(|k| k.contains("delete_path")), "{l:?}");
        assert!(p.contains(&JsonPart::Strictest {
            pointer: "/agent/tool_permissions/tools/terminal/default".into(),
            value: json!("confirm"),
            ladder: vec![json!("allow"), json!("confirm"), json!("deny")],
        }));
        assert!(!format!("{p:?}").contains("cargo"));
        let noted: Vec<&str> = lossy.iter().map(|l| l.rule.as_str()).collect();
        assert!(noted.contains(&"c") && noted.contains(&"e"), "{noted:?}");
    }

    /// Merged into a user's `.zed/settings.json`: their keys and their own patterns stay,
    /// ours are added, and their stricter `default` is kept.
    #[test]
    fn merging_keeps_the_users_settings() {
        let set = small(
            r#"
@id("a") deny exec "git push --force *" because "x";
"#,
        );
        let (p, _) = parts(&set);
        let user = r#"{
  "theme": "One Dark",
  "agent": {"tool_permissions": {"tools": {"terminal": {
    "default": "deny",
    "always_deny": [{"pattern": "sudo\\s"}]
  }}}}
}"#;
        let (text, _) = crate::merge::apply_json(Some(user), &p, &Default::default()).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["theme"], "One Dark");
        let term = &v["agent"]["tool_permissions"]["tools"]["terminal"];
        assert_eq!(term["default"], "deny");
        assert_eq!(
            term["always_deny"],
            json!([{"pattern": "sudo\\s"}, {"pattern": command_regex(&["git", "push", "--force"], true)}])
        );
    }
}

//! The Claude Code emitter.
//!
//! Claude Code: `CLAUDE.md` (importing `AGENTS.md`), `.claude/rules/ctx-<guide>.md` for
//! glob-scoped guides, and ContextOS's entries in `.claude/settings.json` — static
//! `permissions` and the `PreToolUse` hook registration.
//!
//! Permissions are the backstop for when the hook does not run, so they must never allow
//! what the policies deny or ask; the hook (which sees roles, conditions and scripts)
//! decides exactly. Claude evaluates `deny` → `ask` → `allow`, first match wins, like the
//! policies' own `deny > ask > allow`, so a rule Claude can express is emitted as itself:
//!
//! - path rules: `Read(p)` for `read`, `Edit(p)` for `write` (Edit covers Write and
//!   MultiEdit). Patterns are anchored — `**/…` as written, everything else `/…` (project
//!   root) — because a bare `src/**` means different things in Claude's allow and deny
//!   rules. Braces are expanded and `dir/**` also names `dir`, as in a rule head.
//! - exec rules: `Bash(w1 w2 *)` and `Bash(w1 w2)` for the literal prefix `w1 w2 *`,
//!   `Bash(w1 w2)` for an exact command, bare `Bash` for `*`.
//! - `allow`: never natively. A native allow outlives the conditions and sibling rules
//!   the hook evaluates (`allow exec "cat *"` next to an ask for commands naming `.env`),
//!   so it would widen the policies whenever the hook does not run; with the hook
//!   running, an explicit allow rule is answered `allow`, which skips the prompt anyway.
//!   ContextOS's earlier allow entries are still retracted.
//!
//! What Claude cannot express exactly (a `when`/`unless` condition, a script, a glob word
//! in an exec pattern) becomes an `ask` for the same patterns — stricter than allow, looser
//! than deny, never an allow — with a [`Lossy`] warning. Two exceptions, where a native ask
//! would stop work the policies allow and the hook could not lift it (Claude applies `ask`
//! rules whatever a hook answers): a pattern that covers every command or every file
//! (`deny exec "*" when …`), and an exec pattern overlapping one of the policies' own
//! `allow exec` rules (`deny exec "git *" when …` next to `allow exec "git status *"`).
//! Those get no native entry, only the hook and a warning. Role rules get no native entry
//! either (Claude's permissions have no roles), nor do delete-only path rules (Claude's
//! file tools do not delete; deleting commands go through the hook). `plugin` and `commit`
//! rules have no Claude form at all.

use super::sandbox::sandbox_parts;
use crate::text::globs::{expand_braces, is_match_all_path};
use crate::text::guides::{guide_file, path_scoped_guides};
use crate::text::markdown::md_code;
use crate::text::rules::{literal_words, sorted_rules};
use crate::text::yaml::{frontmatter, Fm};
use crate::wiring::{claude_settings_parts, CLAUDE_WRITE_TOOLS};
use crate::{Agent, Content, EmitOptions, Emitted, JsonPart, Lossy, Mode, Output};
use contextos_core::glob::head_globs;
use contextos_core::ir::{CompiledRule, ExecPattern, Word};
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::{json, Value};
use std::collections::BTreeSet;

pub(crate) const SCHEMA: &str = "https://json.schemastore.org/claude-code-settings.json";
pub(crate) const HOOK_COMMAND: &str = "contextos hook claude";
/// Every tool `contextos hook claude` judges (`Glob` and `Grep` are path reads too,
/// `Monitor` a shell command, `WebFetch` and `WebSearch` the network, `mcp__…` every MCP
/// server's tools); the `.*` makes Claude read the matcher as a regular expression.
pub(crate) const HOOK_MATCHER: &str = "Bash|Monitor|PowerShell|Edit|Write|MultiEdit|NotebookEdit|Read|Glob|Grep|WebFetch|WebSearch|mcp__.*";
/// The tools whose results the hook observes after they ran (`PostToolUse`): what came in
/// from the network, from files and commands, and from MCP servers.
pub(crate) const POST_HOOK_MATCHER: &str = "Bash|Monitor|Read|Grep|Glob|WebFetch|WebSearch|mcp__.*";
const SETTINGS: &str = ".claude/settings.json";

/// In boundary mode the native write tools are denied outright, so writes go through the
/// MCP tools; the `.mcp.json` server is enabled in both modes, with the project's listed
/// servers ([`crate::wiring`]).
pub fn emit(set: &PolicySet, opts: &EmitOptions) -> Emitted {
    let mode = opts.mode;
    let mut outputs = vec![Output {
        path: "CLAUDE.md".into(),
        target: Agent::Claude,
        content: Content::Block { text: claude_md() },
    }];

    for (g, stem) in path_scoped_guides(set) {
        let text = guide_file(frontmatter(&[("paths", Fm::List(&g.scope))]), g);
        outputs.push(Output {
            path: format!(".claude/rules/{stem}.md"),
            target: Agent::Claude,
            content: Content::Whole { text },
        });
    }

    let mut perms = permissions(set);
    if mode == Mode::Boundary {
        perms
            .deny
            .extend(CLAUDE_WRITE_TOOLS.iter().map(|t| (*t).to_string()));
        // A bare tool in deny already covers every narrower entry for it.
        let ask = std::mem::take(&mut perms.ask);
        perms.ask = ask.into_iter().filter(|e| !covered(e)).collect();
        let deny = std::mem::take(&mut perms.deny);
        perms.deny = deny
            .into_iter()
            .filter(|e| CLAUDE_WRITE_TOOLS.contains(&e.as_str()) || !covered(e))
            .collect();
    }
    let items = |s: &BTreeSet<String>| s.iter().cloned().map(Value::String).collect::<Vec<_>>();
    let sandbox = if opts.claude_sandbox {
        let (parts, notes) = sandbox_parts(set);
        perms.lossy.extend(notes);
        parts
    } else {
        Vec::new()
    };
    outputs.push(Output {
        path: SETTINGS.into(),
        target: Agent::Claude,
        content: Content::Json {
            parts: vec![
                JsonPart::Key {
                    pointer: "/$schema".into(),
                    value: Value::String(SCHEMA.into()),
                },
                JsonPart::Items {
                    pointer: "/permissions/deny".into(),
                    items: items(&perms.deny),
                },
                JsonPart::Items {
                    pointer: "/permissions/ask".into(),
                    items: items(&perms.ask),
                },
                JsonPart::Items {
                    pointer: "/permissions/allow".into(),
                    items: items(&perms.allow),
                },
                JsonPart::Hooks {
                    pointer: "/hooks/PreToolUse".into(),
                    marker: HOOK_COMMAND.into(),
                    items: vec![hook_entry()],
                },
                JsonPart::Hooks {
                    pointer: "/hooks/PostToolUse".into(),
                    marker: HOOK_COMMAND.into(),
                    items: vec![post_hook_entry()],
                },
            ]
            .into_iter()
            .chain(claude_settings_parts(&opts.mcp_servers))
            .chain(sandbox)
            .collect(),
        },
    });
    outputs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));

    Emitted {
        outputs,
        lossy: perms.lossy,
    }
}

fn claude_md() -> String {
    "@AGENTS.md\n\nEnforced rules live in `.claude/settings.json` (permissions) and the ContextOS \
     hook (`contextos hook claude`), both generated from the policies in `.contextos/policies/`.\n"
        .into()
}

/// Whether a permission entry names one of the write tools denied whole in boundary mode.
fn covered(entry: &str) -> bool {
    CLAUDE_WRITE_TOOLS
        .iter()
        .any(|t| entry == *t || entry.strip_prefix(t).is_some_and(|r| r.starts_with('(')))
}

/// The `PreToolUse` registration (`hooks.PreToolUse[]` element). `onFailure: "block"`
/// (Claude Code 2.1.295+) makes a crash, a timeout or a missing `contextos` block the
/// call; without it any of those lets the call through.
pub(crate) fn hook_entry() -> Value {
    json!({
        "matcher": HOOK_MATCHER,
        "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 5, "onFailure": "block"}]
    })
}

/// The `PostToolUse` registration: observe-only (the hook never answers a post event), so
/// a failure must not block anything and `onFailure` is left at its default.
pub(crate) fn post_hook_entry() -> Value {
    json!({
        "matcher": POST_HOOK_MATCHER,
        "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 5}]
    })
}

/// The translated permission lists (sorted byte-wise, deduplicated) and the lossy notes,
/// in rule-id order.
#[derive(Debug, Default)]
pub(crate) struct Permissions {
    pub deny: BTreeSet<String>,
    pub ask: BTreeSet<String>,
    pub allow: BTreeSet<String>,
    pub lossy: Vec<Lossy>,
}

pub(crate) fn permissions(set: &PolicySet) -> Permissions {
    let mut p = Permissions::default();
    let allows = exec_allows(set);
    for rule in sorted_rules(set) {
        let mut notes: BTreeSet<String> = BTreeSet::new();
        match (rule.domain, rule.effect) {
            (Domain::Plugin | Domain::Commit, _) => {}
            // Hosts and MCP tools are judged by the hook, which sees what a request
            // carries and whether the session is tainted; no native entry expresses that.
            (Domain::Net | Domain::Mcp, _) => {}
            (Domain::Path, Effect::Allow) => {}
            // No native allow: a native allow holds even where a sibling rule or a
            // condition the hook evaluates says ask or deny (`cat *` next to "ask before
            // reading .env"), so it would widen the policies whenever the hook does not
            // run. With the hook running, an explicit allow rule already skips the prompt.
            (Domain::Exec, Effect::Allow) => {}
            (_, Effect::Deny | Effect::Ask) => {
                if let Some(role) = &rule.role {
                    notes.insert(format!(
                        "applies only to role {}; Claude Code permissions have no roles: no \
                         native entry, the hook enforces the rule",
                        md_code(role)
                    ));
                } else if rule.domain == Domain::Path {
                    path_rule(rule, &mut p, &mut notes);
                } else {
                    exec_rule(rule, &allows, &mut p, &mut notes);
                }
            }
        }
        p.lossy.extend(notes.into_iter().map(|message| Lossy {
            target: Agent::Claude,
            rule: rule.id.clone(),
            origin: rule.origin.clone(),
            message,
        }));
    }
    // Each entry once, in its strongest list: Claude evaluates deny before ask before
    // allow, so a duplicate in a weaker list only adds noise.
    let deny = p.deny.clone();
    p.ask.retain(|e| !deny.contains(e));
    let ask = p.ask.clone();
    p.allow.retain(|e| !deny.contains(e) && !ask.contains(e));
    p
}

/// The policies' own `allow exec` rules: a native ask overlapping one would override it.
fn exec_allows(set: &PolicySet) -> Vec<&CompiledRule> {
    set.rules
        .iter()
        .filter(|r| r.domain == Domain::Exec && r.effect == Effect::Allow)
        .collect()
}

/// Why a deny/ask rule cannot be expressed exactly, if it cannot.
fn inexact_reason(rule: &CompiledRule) -> Option<&'static str> {
    if !rule.analyzable {
        Some("script condition not expressible")
    } else if !rule.clauses.is_empty() {
        Some("condition not expressible")
    } else {
        None
    }
}

fn list_for(p: &mut Permissions, effect: Effect) -> &mut BTreeSet<String> {
    match effect {
        Effect::Deny => &mut p.deny,
        Effect::Ask => &mut p.ask,
        Effect::Allow => &mut p.allow,
    }
}

fn path_rule(rule: &CompiledRule, p: &mut Permissions, notes: &mut BTreeSet<String>) {
    let mut tools = Vec::new();
    if rule.ops & 0b001 != 0 {
        tools.push("Read");
    }
    if rule.ops & 0b010 != 0 {
        tools.push("Edit");
    }
    if rule.ops & 0b110 == 0b100 {
        notes.insert(
            "Claude Code has no delete permission (its file tools do not delete): no native \
             entry, the hook judges deleting commands"
                .into(),
        );
    }
    if tools.is_empty() {
        return;
    }
    let reason = inexact_reason(rule);
    let patterns: Vec<String> = if rule.patterns.is_empty() {
        vec!["**".into()]
    } else {
        rule.patterns.clone()
    };
    for pat in &patterns {
        match reason {
            None if rule.patterns.is_empty() => {
                // Every path: the bare tool name.
                list_for(p, rule.effect).extend(tools.iter().map(|t| (*t).to_string()));
            }
            None => {
                for t in &tools {
                    let entries = anchored(pat).into_iter().map(|a| format!("{t}({a})"));
                    list_for(p, rule.effect).extend(entries);
                }
            }
            Some(why) if is_match_all_path(pat) => {
                notes.insert(format!(
                    "{why} and {} covers every file: no native entry (an ask there would \
                     stop work the policies allow), the hook enforces the exact rule",
                    md_code(pat)
                ));
            }
            Some(why) => {
                for t in &tools {
                    p.ask
                        .extend(anchored(pat).into_iter().map(|a| format!("{t}({a})")));
                }
                notes.insert(format!(
                    "{why}; emitted as ask, the hook enforces the exact rule"
                ));
            }
        }
    }
}

/// A rule-head path pattern as Claude permission paths: brace-expanded, `dir/**` also as
/// `dir`, and anchored (`**/…` as written, otherwise `/…`, relative to the project root).
pub(crate) fn anchored(pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    for g in head_globs(pattern) {
        for e in expand_braces(g) {
            // Claude Code's own anchors: `~/` is the home directory, `//` an absolute
            // path (an absolute pattern gets one more `/`), `/` the project root.
            let a = if e.starts_with("**/") || e.starts_with("~/") {
                e
            } else {
                format!("/{e}")
            };
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out
}

fn exec_rule(
    rule: &CompiledRule,
    allows: &[&CompiledRule],
    p: &mut Permissions,
    notes: &mut BTreeSet<String>,
) {
    let reason = inexact_reason(rule);
    for (i, ep) in rule.exec_patterns.iter().enumerate() {
        let written = rule.patterns.get(i).map(String::as_str).unwrap_or("*");
        let literal = literal_words(ep);
        if let (None, Some(words)) = (reason, &literal) {
            // Exact.
            let entries = if words.is_empty() {
                vec!["Bash".to_string()]
            } else {
                bash_forms(&words.join(" "), ep.rest)
            };
            list_for(p, rule.effect).extend(entries);
            continue;
        }
        let why = reason.unwrap_or("glob word in the exec pattern not expressible exactly");
        if !matches!(ep.words.first(), Some(Word::Literal(_))) {
            notes.insert(format!(
                "{why} and {} covers every command: no native entry (an ask there would stop \
                 work the policies allow), the hook enforces the exact rule",
                md_code(written)
            ));
            continue;
        }
        let shadowed: Vec<&str> = allows
            .iter()
            .filter(|a| a.exec_patterns.iter().any(|ap| may_overlap(ep, ap)))
            .map(|a| a.id.as_str())
            .collect();
        if let Some(first) = shadowed.first() {
            notes.insert(format!(
                "{why} and a native ask on {} would override allow rule {}: no native entry, \
                 the hook enforces the exact rule",
                md_code(written),
                md_code(first)
            ));
            continue;
        }
        let (text, rest) = claude_words(ep);
        p.ask.extend(bash_forms(&text, rest));
        notes.insert(format!(
            "{why}; emitted as ask, the hook enforces the exact rule"
        ));
    }
}

/// Claude's form of an inexact exec pattern: glob words using only `*` are kept (Claude's
/// `*` also matches spaces, so it matches more — fine for an ask); from the first word with
/// other glob syntax on, the pattern becomes a prefix (`… *`).
fn claude_words(ep: &ExecPattern) -> (String, bool) {
    let mut words = Vec::new();
    for w in &ep.words {
        match w {
            Word::Literal(l) => words.push(l.clone()),
            Word::Glob(g) => {
                let pat = g.pattern();
                if !pat.contains(['?', '[', '{', '\\']) {
                    words.push(pat.to_string());
                } else {
                    return (words.join(" "), true);
                }
            }
        }
    }
    (words.join(" "), ep.rest)
}

/// `Bash(prefix *)` and `Bash(prefix)` for a prefix pattern, `Bash(cmd)` for an exact one.
fn bash_forms(text: &str, rest: bool) -> Vec<String> {
    if rest {
        vec![format!("Bash({text} *)"), format!("Bash({text})")]
    } else {
        vec![format!("Bash({text})")]
    }
}

/// Whether some command could match both patterns (conservative: a glob word may match
/// anything, except a literal it demonstrably does not match).
fn may_overlap(a: &ExecPattern, b: &ExecPattern) -> bool {
    let (la, lb) = (a.words.len(), b.words.len());
    let lengths = match (a.rest, b.rest) {
        (true, true) => true,
        (true, false) => lb >= la,
        (false, true) => la >= lb,
        (false, false) => la == lb,
    };
    lengths
        && a.words.iter().zip(&b.words).all(|pair| match pair {
            (Word::Literal(x), Word::Literal(y)) => x == y,
            (Word::Literal(l), Word::Glob(g)) | (Word::Glob(g), Word::Literal(l)) => {
                g.is_match(l).unwrap_or(true)
            }
            (Word::Glob(_), Word::Glob(_)) => true,
        })
}

#[cfg(test)]
pub(crate) mod tests {
    fn opts(mode: Mode) -> EmitOptions {
        EmitOptions {
            mode,
            ..EmitOptions::default()
        }
    }
    use super::*;
    use crate::test_support::policies::{block_text, content, full, small, stdlib, whole_text};
    use std::collections::BTreeMap;

    pub(crate) fn parts_by_pointer(parts: &[JsonPart]) -> BTreeMap<&str, &JsonPart> {
        parts
            .iter()
            .map(|p| match p {
                JsonPart::Key { pointer, .. }
                | JsonPart::Strictest { pointer, .. }
                | JsonPart::Items { pointer, .. }
                | JsonPart::Hooks { pointer, .. } => (pointer.as_str(), p),
            })
            .collect()
    }

    fn settings(e: &Emitted) -> Vec<JsonPart> {
        match content(e, SETTINGS) {
            Some(Content::Json { parts }) => parts.clone(),
            other => panic!("expected JSON parts, got {other:?}"),
        }
    }

    fn items(parts: &[JsonPart], pointer: &str) -> Vec<String> {
        match parts_by_pointer(parts).get(pointer) {
            Some(JsonPart::Items { items, .. }) => items
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect(),
            other => panic!("{pointer}: {other:?}"),
        }
    }

    fn notes_by_rule(lossy: &[Lossy]) -> BTreeMap<&str, Vec<&str>> {
        lossy.iter().fold(BTreeMap::new(), |mut m, l| {
            m.entry(l.rule.as_str())
                .or_default()
                .push(l.message.as_str());
            m
        })
    }

    /// `[compile.claude] sandbox` adds the three closed sandbox keys and the sandbox
    /// lists ([`sandbox_parts`]); without it `sandbox` is not touched.
    #[test]
    fn the_sandbox_is_opt_in_and_closed() {
        let set = full();
        let settings = |e: &Emitted| match content(e, SETTINGS) {
            Some(Content::Json { parts }) => parts.clone(),
            other => panic!("{other:?}"),
        };
        let off = settings(&emit(&set, &opts(Mode::Guard)));
        assert!(!format!("{off:?}").contains("/sandbox"));
        let on = settings(&emit(
            &set,
            &EmitOptions {
                claude_sandbox: true,
                ..EmitOptions::default()
            },
        ));
        let keys: Vec<(String, Value)> = on
            .iter()
            .filter_map(|p| match p {
                JsonPart::Key { pointer, value } if pointer.starts_with("/sandbox") => {
                    Some((pointer.clone(), value.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            keys,
            vec![
                ("/sandbox/enabled".into(), json!(true)),
                ("/sandbox/autoAllowBashIfSandboxed".into(), json!(false)),
                ("/sandbox/allowUnsandboxedCommands".into(), json!(false)),
            ]
        );
        let (lists, _) = sandbox_parts(&set);
        assert_eq!(on.len(), off.len() + lists.len());
        // The standard library's secret files are out of the sandbox's reach too.
        // The files that govern the agents are out of a sandboxed command's reach too.
        let deny_write = items(&on, "/sandbox/filesystem/denyWrite");
        for p in [
            "./contextos.toml",
            "./.contextos/**",
            "./.claude/settings*.json",
        ] {
            assert!(deny_write.iter().any(|d| d == p), "{p}: {deny_write:?}");
        }
    }

    #[test]
    fn small_settings_are_exact() {
        let set = small(
            r#"
@id("env") deny path read, write "**/.env", "secrets/**" because "x";
@id("mig") ask path write "migrations/*.sql" because "x";
@id("push") deny exec "git push --force *" because "x";
@id("rel") ask exec "make release" because "x";
@id("fmt") allow exec "cargo fmt *", "cargo x*" because "x";
"#,
        );
        let e = emit(&set, &opts(Mode::Guard));
        let parts = settings(&e);
        assert_eq!(
            serde_json::to_string(&parts).unwrap(),
            serde_json::to_string(&json!([
                {"kind": "key", "pointer": "/$schema", "value": SCHEMA},
                {"kind": "items", "pointer": "/permissions/deny", "items": [
                    "Bash(git push --force *)", "Bash(git push --force)",
                    "Edit(**/.env)", "Edit(/secrets)", "Edit(/secrets/**)",
                    "Read(**/.env)", "Read(/secrets)", "Read(/secrets/**)"]},
                {"kind": "items", "pointer": "/permissions/ask", "items": [
                    "Bash(make release)", "Edit(/migrations/*.sql)"]},
                {"kind": "items", "pointer": "/permissions/allow", "items": []},
                {"kind": "hooks", "pointer": "/hooks/PreToolUse", "marker": "contextos hook claude",
                 "items": [{"matcher": HOOK_MATCHER,
                            "hooks": [{"type": "command", "command": "contextos hook claude", "timeout": 5, "onFailure": "block"}]}]},
                {"kind": "hooks", "pointer": "/hooks/PostToolUse", "marker": "contextos hook claude",
                 "items": [{"matcher": POST_HOOK_MATCHER,
                            "hooks": [{"type": "command", "command": "contextos hook claude", "timeout": 5}]}]},
                {"kind": "key", "pointer": "/enableAllProjectMcpServers", "value": false},
                {"kind": "items", "pointer": "/enabledMcpjsonServers", "items": ["contextos"]}
            ]))
            .unwrap()
        );
        assert!(e.lossy.is_empty(), "{:?}", e.lossy);
        assert_eq!(
            block_text(&e, "CLAUDE.md"),
            "@AGENTS.md\n\nEnforced rules live in `.claude/settings.json` (permissions) and the \
             ContextOS hook (`contextos hook claude`), both generated from the policies in \
             `.contextos/policies/`.\n"
        );
    }

    #[test]
    fn scoped_guides_become_rule_files() {
        let set = full();
        let e = emit(&set, &opts(Mode::Guard));
        let text = whole_text(&e, ".claude/rules/ctx-layering.md");
        assert_eq!(
            text,
            "---\npaths:\n  - \"src/api/**\"\n  - \"src/{handlers,routes}/**\"\n---\n\
             <!-- generated by contextos; do not edit: change the policies and run contextos compile -->\n\n\
             # Service layering\n\n\
             Handlers call services; services never import handlers.\n\n\
             - Database access lives in `src/repo/`.\n"
        );
        // Unscoped and role guides get no rule file.
        let files: Vec<&str> = e
            .outputs
            .iter()
            .map(|o| o.path.as_str())
            .filter(|p| p.starts_with(".claude/rules/"))
            .collect();
        assert_eq!(files, vec![".claude/rules/ctx-layering.md"]);
    }

    #[test]
    fn deterministic() {
        let set = full();
        assert_eq!(
            emit(&set, &opts(Mode::Guard)),
            emit(&set, &opts(Mode::Guard))
        );
        let a = serde_json::to_string(&emit(&set, &opts(Mode::Guard))).unwrap();
        let b = serde_json::to_string(&emit(&full(), &opts(Mode::Guard))).unwrap();
        assert_eq!(a, b);
    }

    /// The central property: over the stdlib and the user policy, no deny or ask rule ever
    /// yields an allow entry; an unconditioned deny lands in deny; a conditioned deny or ask
    /// lands in ask or nowhere, with a warning either way.
    #[test]
    fn deny_and_ask_never_become_allow() {
        for set in [stdlib(), full()] {
            let e = emit(&set, &opts(Mode::Guard));
            let parts = settings(&e);
            let (deny, ask, allow) = (
                items(&parts, "/permissions/deny"),
                items(&parts, "/permissions/ask"),
                items(&parts, "/permissions/allow"),
            );
            for list in [&deny, &ask, &allow] {
                let mut sorted = list.clone();
                sorted.sort();
                sorted.dedup();
                assert_eq!(&sorted, list, "sorted byte-wise and deduplicated");
            }
            let lossy: BTreeSet<&str> = e.lossy.iter().map(|l| l.rule.as_str()).collect();
            for r in &set.rules {
                if r.effect == Effect::Allow || matches!(r.domain, Domain::Plugin | Domain::Commit)
                {
                    continue;
                }
                let mine = single_rule_entries(&set, r);
                for entry in &mine {
                    assert!(!allow.contains(entry), "{}: {entry} in allow", r.id);
                }
                let exact = crate::text::rules::unconditioned(r);
                let globbed = r
                    .exec_patterns
                    .iter()
                    .any(|ep| ep.words.iter().any(|w| matches!(w, Word::Glob(_))));
                if exact && !globbed && r.ops & 0b011 != 0 {
                    let target = if r.effect == Effect::Deny {
                        &deny
                    } else {
                        &ask
                    };
                    assert!(!mine.is_empty(), "{}: nothing emitted", r.id);
                    for entry in &mine {
                        assert!(target.contains(entry), "{}: {entry} missing", r.id);
                    }
                    if r.effect == Effect::Deny && r.ops & 0b100 == 0 {
                        assert!(!lossy.contains(r.id.as_str()), "{}", r.id);
                    }
                } else {
                    assert!(lossy.contains(r.id.as_str()), "{}: no warning", r.id);
                    for entry in &mine {
                        assert!(ask.contains(entry), "{}: {entry} not in ask", r.id);
                    }
                }
            }
            // Never a native allow.
            assert!(allow.is_empty(), "{allow:?}");
        }
    }

    /// The entries one rule yields on its own (its own lossy notes aside).
    fn single_rule_entries(set: &PolicySet, r: &CompiledRule) -> Vec<String> {
        let mut p = Permissions::default();
        let mut notes = BTreeSet::new();
        let allows = exec_allows(set);
        if r.role.is_some() {
            return Vec::new();
        }
        if r.domain == Domain::Path {
            path_rule(r, &mut p, &mut notes);
        } else {
            exec_rule(r, &allows, &mut p, &mut notes);
        }
        p.deny.into_iter().chain(p.ask).chain(p.allow).collect()
    }

    #[test]
    fn stdlib_translation() {
        let set = stdlib();
        let p = permissions(&set);
        // Self-protection: writes denied natively, directories named too, anchored.
        for e in [
            "Edit(/contextos.toml)",
            "Edit(/.contextos/**)",
            "Edit(/.contextos)",
            "Edit(/.claude/settings*.json)",
            "Edit(**/.git)",
            "Edit(**/.git/**)",
            "Edit(/.github/hooks/**)",
        ] {
            assert!(p.deny.contains(e), "{e}");
        }
        assert!(!p.deny.iter().any(|e| e.starts_with("Read(")));
        // Every governance pattern, anchored independently of `anchored`.
        for pat in &set.rule("std-self-protection").unwrap().patterns {
            let a = if pat.starts_with("**/") {
                pat.clone()
            } else {
                format!("/{pat}")
            };
            assert!(p.deny.contains(&format!("Edit({a})")), "{pat}");
            assert!(!p
                .allow
                .iter()
                .chain(&p.ask)
                .any(|e| e == &format!("Edit({a})")));
        }
        // Secret reads are conditioned (templates): ask, with a warning.
        assert!(p.ask.contains("Read(**/.env)") && p.ask.contains("Read(**/*.pem)"));
        // The unconditioned eval ask is exact.
        assert!(p.ask.contains("Bash(python3 -c *)") && p.ask.contains("Bash(eval)"));
        // `rm *` when …: ask; `git push *` when --force …: ask.
        assert!(p.ask.contains("Bash(rm *)") && p.ask.contains("Bash(git push *)"));
        // `*` when …: nothing that would ask for every command.
        assert!(!p.ask.contains("Bash") && !p.ask.iter().any(|e| e == "Bash(*)"));
        // `git *` when --no-verify would override `git status *`: no native entry.
        assert!(!p.ask.contains("Bash(git *)"));
        let notes = notes_by_rule(&p.lossy);
        assert_eq!(
            notes["std-secret-read"],
            vec!["condition not expressible; emitted as ask, the hook enforces the exact rule"]
        );
        assert!(notes["std-exec-no-verify"][0].contains("allow rule `std-exec-read-only`"));
        assert!(notes["std-exec-pipe-to-shell"][0].contains("covers every command"));
        assert!(!notes.contains_key("std-self-protection"));
        assert!(!notes.contains_key("std-exec-eval"));
        assert!(!notes.keys().any(|k| k.starts_with("std-plugin")));
        // Read-only commands are allowed by the hook, never natively.
        assert!(p.allow.is_empty(), "{:?}", p.allow);
    }

    #[test]
    fn user_policy_translation() {
        let set = full();
        let e = emit(&set, &opts(Mode::Guard));
        let p = permissions(&set);
        let notes = notes_by_rule(&p.lossy);
        // Conditioned deny → ask.
        assert!(p.ask.contains("Edit(**/.env)") && p.ask.contains("Edit(/secrets/**)"));
        assert!(!p.deny.contains("Edit(**/.env)"));
        // Unconditioned path deny, write part; the delete part has no Claude form.
        assert!(p.deny.contains("Edit(/migrations/*.sql)"));
        assert!(notes["no-delete-docs"][0].contains("no delete permission"));
        assert!(!p.deny.iter().chain(&p.ask).any(|e| e.contains("docs")));
        // Conditioned ask stays ask.
        assert!(p.ask.contains("Edit(/Cargo.lock)"));
        // Glob word: ask with Claude's `*`.
        assert!(p.ask.contains("Bash(curl -*k*)"));
        assert!(notes["no-curl-insecure"][0].starts_with("glob word"));
        // Script rule over every command: no entry.
        assert!(notes["argv-sanity"][0].starts_with("script condition not expressible"));
        // Role rules: nothing native.
        assert!(notes["reviewers-never-edit"][0].contains("role `reviewer`"));
        assert!(!p.deny.contains("Edit(/**)") && !p.ask.contains("Edit(/**)"));
        // Allow: never native.
        assert!(p.allow.is_empty(), "{:?}", p.allow);
        // Exact denies.
        assert!(p.deny.contains("Bash(git push -f *)") && p.deny.contains("Bash(git push -f)"));
        assert!(p.ask.contains("Bash(make release)") && !p.ask.contains("Bash(make release *)"));
        // Every lossy entry carries the rule's origin.
        for l in &e.lossy {
            assert_eq!(l.target, Agent::Claude);
            assert_eq!(l.origin, set.rule(&l.rule).unwrap().origin);
        }
    }

    /// Boundary mode denies the native write tools whole (the narrower `Edit(…)` entries
    /// they cover go), keeps every read entry, and changes nothing else.
    #[test]
    fn boundary_mode_denies_the_write_tools() {
        let set = full();
        let guard = settings(&emit(&set, &opts(Mode::Guard)));
        let boundary = settings(&emit(&set, &opts(Mode::Boundary)));
        let deny = items(&boundary, "/permissions/deny");
        for t in CLAUDE_WRITE_TOOLS {
            assert!(deny.contains(&t.to_string()), "{t}");
        }
        for list in ["/permissions/deny", "/permissions/ask"] {
            let b = items(&boundary, list);
            assert!(!b.iter().any(|e| e.starts_with("Edit(")), "{b:?}");
            for e in items(&guard, list) {
                assert!(e.starts_with("Edit(") || b.contains(&e), "{e} lost");
            }
        }
        assert_eq!(
            parts_by_pointer(&boundary)["/enabledMcpjsonServers"],
            parts_by_pointer(&guard)["/enabledMcpjsonServers"]
        );
        assert_eq!(
            parts_by_pointer(&boundary)["/hooks/PreToolUse"],
            parts_by_pointer(&guard)["/hooks/PreToolUse"]
        );
    }

    #[test]
    fn exact_match_all_rules_use_bare_tools() {
        let set = small(
            r#"
@id("no-exec") deny exec "*" because "x";
@id("no-edit") ask path write because "x";
"#,
        );
        let p = permissions(&set);
        assert_eq!(p.deny.iter().collect::<Vec<_>>(), vec!["Bash"]);
        assert_eq!(p.ask.iter().collect::<Vec<_>>(), vec!["Edit"]);
        assert!(p.lossy.is_empty());
    }

    #[test]
    fn anchoring_and_overlap() {
        assert_eq!(anchored("**/.env"), vec!["**/.env"]);
        assert_eq!(anchored("src/**"), vec!["/src/**", "/src"]);
        assert_eq!(anchored("*.pem"), vec!["/*.pem"]);
        assert_eq!(anchored("**"), vec!["/**"]);
        assert_eq!(
            anchored("{a,**/b}/**"),
            vec!["/a/**", "**/b/**", "/a", "**/b"]
        );
        let ep = |s: &str| contextos_core::build::exec_pattern(s).unwrap();
        assert!(may_overlap(&ep("git *"), &ep("git status *")));
        assert!(may_overlap(&ep("git *"), &ep("git")));
        assert!(!may_overlap(&ep("git push *"), &ep("git status *")));
        assert!(!may_overlap(&ep("rm *"), &ep("git branch")));
        assert!(!may_overlap(&ep("git"), &ep("git branch")));
        assert!(may_overlap(&ep("curl -*k*"), &ep("curl -k")));
        assert!(!may_overlap(&ep("curl -*k*"), &ep("curl -s")));
        assert_eq!(
            claude_words(&ep("git push * --force*")),
            ("git push * --force*".into(), false)
        );
        assert_eq!(claude_words(&ep("git -[cC] x *")), ("git".into(), true));
    }

    #[test]
    fn settings_parts_are_well_formed() {
        let e = emit(&full(), &opts(Mode::Guard));
        let parts = settings(&e);
        let by = parts_by_pointer(&parts);
        assert_eq!(by.len(), 8);
        for pointer in by.keys() {
            assert!(pointer.starts_with('/'));
        }
        match by["/hooks/PreToolUse"] {
            JsonPart::Hooks { marker, items, .. } => {
                assert_eq!(items.len(), 1);
                assert!(serde_json::to_string(&items[0])
                    .unwrap()
                    .contains(marker.as_str()));
                assert_eq!(items[0]["hooks"][0]["timeout"], 5);
                assert_eq!(items[0]["hooks"][0]["onFailure"], "block");
                let matcher = items[0]["matcher"].as_str().unwrap();
                for tool in ["Monitor", "WebFetch", "WebSearch", "mcp__.*"] {
                    assert!(matcher.split('|').any(|t| t == tool), "{tool}");
                }
            }
            other => panic!("{other:?}"),
        }
        // The post-tool entry observes, so its failure never blocks.
        match by["/hooks/PostToolUse"] {
            JsonPart::Hooks { items, .. } => {
                assert!(items[0]["hooks"][0].get("onFailure").is_none());
            }
            other => panic!("{other:?}"),
        }
        // Everything the emitter writes for JSON is plain strings in the lists.
        for p in [
            "/permissions/deny",
            "/permissions/ask",
            "/permissions/allow",
        ] {
            for entry in items(&parts, p) {
                assert!(
                    entry.starts_with("Bash")
                        || entry.starts_with("Read")
                        || entry.starts_with("Edit")
                );
                assert!(!entry.contains('\n'));
            }
        }
    }
}

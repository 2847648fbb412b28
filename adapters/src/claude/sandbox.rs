//! Claude Code's OS sandbox for the Bash tool (`sandbox.*` in `.claude/settings.json`;
//! code.claude.com/docs/en/sandboxing and the settings schema), opted into with
//! `[compile.claude] sandbox`. It binds every subprocess a command starts, which neither
//! the permission rules nor the hook can see into.
//!
//! - `enabled`, and closed both ways: `autoAllowBashIfSandboxed: false` (by default a
//!   sandboxed command skips the `ask` rules, which would widen them) and
//!   `allowUnsandboxedCommands: false` (no `dangerouslyDisableSandbox` escape).
//! - `filesystem.denyRead` / `denyWrite`: the paths of the exact `deny path` rules (no
//!   condition, role or script) that cover reads, and writes. Sandbox paths have their
//!   own anchors: `./x` is the project's `x`, `//x` the absolute `/x`, `~/` the home
//!   directory; `dir/**` is written as `dir` too. A delete-only rule is left to the hook:
//!   the sandbox has no delete, and a denied write to a directory would bar every file
//!   in it (`deny path delete ".github"` would stop all work on `.github/`).
//! - `network.deniedDomains`: the hosts of the `deny` and `ask` net rules that name
//!   domains, conditions or not — the sandbox cannot ask or weigh a condition, and a
//!   blocked domain is the stricter answer (a located `lossy` note says so for each ask
//!   or conditional rule). Address ranges (`10.0.0.0/8`) are not domains and are left to
//!   the hook.
//! - `network.allowedDomains`: the hosts of exact `allow net` rules, and only when no net
//!   `deny` or `ask` rule carries a condition (a condition could refuse such a host in a
//!   session the sandbox knows nothing of, and an allowed domain skips the sandbox's own
//!   prompt). A host also denied or asked is not allowed.
//!
//! Lists are owned items: a user's own entries stay.

use crate::text::globs::expand_braces;
use crate::text::markdown::md_code;
use crate::text::rules::sorted_rules;
use crate::{Agent, JsonPart, Lossy};
use contextos_core::glob::head_globs;
use contextos_core::policy::PolicySet;
use contextos_core::request::Domain;
use contextos_grammar::ast::Effect;
use serde_json::Value;
use std::collections::BTreeSet;

const READ: u8 = 0b001;
const WRITE: u8 = 0b010;

/// A rule-head path pattern as sandbox paths (see the module notes for the anchors).
pub(crate) fn sandbox_paths(pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    for g in head_globs(pattern) {
        for e in expand_braces(g) {
            let p = if e.starts_with("~/") || e.starts_with("**/") {
                e
            } else if e.starts_with('/') {
                format!("/{e}")
            } else {
                format!("./{e}")
            };
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Whether a net pattern names domains (a host name or `*.` wildcard), not an address
/// range, a port or a URL.
fn is_domain(p: &str) -> bool {
    !p.is_empty()
        && !p.contains(['/', ':', ' '])
        && p.trim_start_matches("*.")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// The sandbox parts of `.claude/settings.json`, and the notes on what they approximate.
pub fn sandbox_parts(set: &PolicySet) -> (Vec<JsonPart>, Vec<Lossy>) {
    let mut deny_read: BTreeSet<String> = BTreeSet::new();
    let mut deny_write: BTreeSet<String> = BTreeSet::new();
    let mut denied: BTreeSet<String> = BTreeSet::new();
    let mut allowed: BTreeSet<String> = BTreeSet::new();
    let mut lossy = Vec::new();
    let conditional_net = set.rules.iter().any(|r| {
        r.domain == Domain::Net
            && r.effect != Effect::Allow
            && !crate::text::rules::unconditioned(r)
    });
    for r in sorted_rules(set) {
        match (r.domain, r.effect) {
            (Domain::Path, Effect::Deny)
                if crate::text::rules::unconditioned(r) && !r.patterns.is_empty() =>
            {
                for p in &r.patterns {
                    let paths = sandbox_paths(p);
                    if r.ops & READ != 0 {
                        deny_read.extend(paths.iter().cloned());
                    }
                    if r.ops & WRITE != 0 {
                        deny_write.extend(paths);
                    }
                }
            }
            (Domain::Net, Effect::Deny | Effect::Ask) => {
                let hosts: Vec<&String> = r.patterns.iter().filter(|p| is_domain(p)).collect();
                if hosts.is_empty() {
                    continue;
                }
                denied.extend(hosts.into_iter().cloned());
                if r.effect == Effect::Ask || !crate::text::rules::unconditioned(r) {
                    lossy.push(Lossy {
                        target: Agent::Claude,
                        rule: r.id.clone(),
                        origin: r.origin.clone(),
                        message: format!(
                            "the sandbox can neither ask nor weigh a condition: its hosts are \
                             in {} (blocked for sandboxed commands), the hook enforces the \
                             exact rule",
                            md_code("sandbox.network.deniedDomains")
                        ),
                    });
                }
            }
            (Domain::Net, Effect::Allow)
                if crate::text::rules::unconditioned(r) && !conditional_net =>
            {
                allowed.extend(r.patterns.iter().filter(|p| is_domain(p)).cloned());
            }
            _ => {}
        }
    }
    allowed.retain(|h| !denied.contains(h));
    let mut parts: Vec<JsonPart> = [
        ("/sandbox/enabled", true),
        ("/sandbox/autoAllowBashIfSandboxed", false),
        ("/sandbox/allowUnsandboxedCommands", false),
    ]
    .into_iter()
    .map(|(pointer, on)| JsonPart::Key {
        pointer: pointer.into(),
        value: Value::Bool(on),
    })
    .collect();
    for (pointer, list) in [
        ("/sandbox/filesystem/denyRead", deny_read),
        ("/sandbox/filesystem/denyWrite", deny_write),
        ("/sandbox/network/allowedDomains", allowed),
        ("/sandbox/network/deniedDomains", denied),
    ] {
        parts.push(JsonPart::Items {
            pointer: pointer.into(),
            items: list.into_iter().map(Value::String).collect(),
        });
    }
    (parts, lossy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::small;
    use serde_json::json;

    fn items<'p>(parts: &'p [JsonPart], pointer: &str) -> &'p [Value] {
        parts
            .iter()
            .find_map(|p| match p {
                JsonPart::Items { pointer: q, items } if q == pointer => Some(items.as_slice()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {pointer}"))
    }

    #[test]
    fn sandbox_paths_use_the_sandbox_anchors() {
        assert_eq!(
            sandbox_paths("migrations/**"),
            ["./migrations/**", "./migrations"]
        );
        assert_eq!(sandbox_paths("**/.env"), ["**/.env"]);
        assert_eq!(sandbox_paths("~/.ssh/**"), ["~/.ssh/**", "~/.ssh"]);
        assert_eq!(sandbox_paths("/etc/shadow"), ["//etc/shadow"]);
        assert_eq!(
            sandbox_paths("secrets/*.{pem,key}"),
            ["./secrets/*.pem", "./secrets/*.key"]
        );
    }

    #[test]
    fn lists_come_from_exact_denies_and_domain_rules() {
        let set = small(
            r#"
@id("r") deny path read "**/.env" because "x";
@id("w") deny path write "migrations/**" because "x";
@id("d") deny path delete "docs/**" because "x";
@id("c") deny path read "secrets/**" unless path.name == "README.md" because "x";
@id("a") ask path write "src/**" because "x";
@id("m") deny net "metadata.google.internal", "169.254.169.254", "10.0.0.0/8" because "x";
@id("p") ask net "*.pastebin.com" because "x";
@id("ok") allow net "*.crates.io", "*.pastebin.com" because "x";
"#,
        );
        let (parts, lossy) = sandbox_parts(&set);
        assert_eq!(
            items(&parts, "/sandbox/filesystem/denyRead"),
            [json!("**/.env")]
        );
        // The delete-only rule `d` is the hook's.
        assert_eq!(
            items(&parts, "/sandbox/filesystem/denyWrite"),
            [json!("./migrations"), json!("./migrations/**")]
        );
        assert_eq!(
            items(&parts, "/sandbox/network/deniedDomains"),
            [
                json!("*.pastebin.com"),
                json!("169.254.169.254"),
                json!("metadata.google.internal")
            ]
        );
        // The asked host is not allowed; the other one is.
        assert_eq!(
            items(&parts, "/sandbox/network/allowedDomains"),
            [json!("*.crates.io")]
        );
        let noted: Vec<&str> = lossy.iter().map(|l| l.rule.as_str()).collect();
        assert_eq!(noted, ["p"]);
    }

    /// A conditional net deny (the standard library's tainted-session rule) could refuse
    /// any host: nothing is allowed natively then.
    #[test]
    fn a_conditional_net_rule_keeps_the_allowlist_empty() {
        let set = small(
            r#"
@id("t") deny net when session.tainted because "x";
@id("ok") allow net "*.crates.io" because "x";
"#,
        );
        let (parts, _) = sandbox_parts(&set);
        assert!(items(&parts, "/sandbox/network/allowedDomains").is_empty());
    }
}

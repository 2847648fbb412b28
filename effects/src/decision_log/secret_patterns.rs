//! The one table of what the decision log masks: secret names and token shapes.
//!
//! It stays in Rust, not in stdlib policy data, because masking must hold whatever the
//! policies say: a record is masked before it is hashed, also when the project's
//! policies failed to compile or a user override weakened a detector, and the audit log
//! must never hold a secret because of a policy edit. The patterns also need what the
//! detectors do not describe: which capture group is the secret, which prefix is public
//! (`ghp_`), and literal triggers that keep a hook process from compiling any regex for
//! an ordinary record.

/// Names whose values are secrets: in `NAME=value`, `--name value`, and object keys.
pub(super) const SECRET_NAMES: &str = "password|passwd|secret|token|api_key|apikey|key";
/// Capture groups that may hold the secret part of a match (one per quoting style).
pub(super) const SECRET_GROUPS: [&str; 3] = ["s", "dq", "sq"];

/// Literals (lower-case) at least one of which every match of the paired pattern
/// contains. A pattern is compiled and run only when its literal occurs, so the common
/// record (`cargo test`, `src/lib.rs`) costs no regex compilation in a hook process.
pub(super) const NAME_TRIGGERS: &[&str] = &["pass", "secret", "token", "key"];

pub(super) fn mask_sources() -> Vec<(&'static [&'static str], String)> {
    let names = format!("(?:{SECRET_NAMES})");
    vec![
        // PEM, OpenSSH and PGP private keys; an unterminated block is masked to the end.
        (&["-----begin"], r"(?P<s>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z))".to_string()),
        (&["gh"], r"(?P<s>(?P<p>gh[pousr]_)[A-Za-z0-9]{20,})".to_string()),
        (&["github_pat_"], r"(?P<s>(?P<p>github_pat_)[A-Za-z0-9_]{20,})".to_string()),
        (&["akia", "asia"], r"(?P<s>(?P<p>A(?:KIA|SIA))[A-Z0-9]{16})".to_string()),
        (&["xox"], r"(?P<s>(?P<p>xox[abpsr]-)[A-Za-z0-9-]{10,})".to_string()),
        // OpenAI and Anthropic; `\b` keeps words like "task-…" out.
        (&["sk-"], r"\b(?P<s>(?P<p>sk-(?:ant-|proj-)?)[A-Za-z0-9_-]{16,})".to_string()),
        (&["k_live_", "k_test_"], r"\b(?P<s>(?P<p>[sr]k_(?:live|test)_)[A-Za-z0-9]{10,})".to_string()),
        (&["aiza"], r"(?P<s>(?P<p>AIza)[0-9A-Za-z_-]{35})".to_string()),
        (&["eyj"], r"(?P<s>(?P<p>eyJ)[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)".to_string()),
        (&["authorization"], r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?(?P<s>[^\s"',;]+)"#.to_string()),
        (&["bearer"], r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})".to_string()),
        // URL userinfo: greedy up to the last `@` of the authority, so an unescaped `@`
        // in the password does not leave its tail in clear.
        (&["://"], r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:(?P<s>[^\s/?#]+)@".to_string()),
        (&["-u"], r#"(?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=)["']?[^\s:"']*:(?P<s>[^\s"']+)"#.to_string()),
        (NAME_TRIGGERS, format!(
            r#"(?i)[A-Za-z0-9_.-]*{names}[A-Za-z0-9_.-]*["']?\s*(?::=|=|:)\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<s>[^\s"'&;,]+))"#
        )),
        (NAME_TRIGGERS, format!(
            r#"(?i)(?:^|\s)--?[A-Za-z0-9_-]*{names}[A-Za-z0-9_-]*\s+(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<s>[^\s"'-][^\s"']*))"#
        )),
    ]
}

//! Secrets never reach the file: every string of a record goes through [`mask_value`] /
//! [`mask_secrets`] before it is hashed, so the hash covers the masked text and the
//! clear text exists nowhere on disk. What counts as a secret is
//! [`super::secret_patterns`].

use super::secret_patterns::{mask_sources, SECRET_GROUPS, SECRET_NAMES};
use crate::safe_fs::sha256_hex;
use regex::Regex;
use serde_json::Value;
use std::sync::{LazyLock, OnceLock};

struct Mask {
    triggers: &'static [&'static str],
    source: String,
    /// `None` inside only if the pattern failed to compile.
    re: OnceLock<Option<Regex>>,
}

static MASKS: LazyLock<Vec<Mask>> = LazyLock::new(|| {
    mask_sources()
        .into_iter()
        .map(|(triggers, source)| Mask {
            triggers,
            source,
            re: OnceLock::new(),
        })
        .collect()
});

/// Whether `s` contains one of the (ASCII, lower-case) secret names, ignoring ASCII case.
fn contains_secret_name(lower: &str) -> bool {
    SECRET_NAMES.split('|').any(|n| lower.contains(n))
}

/// A shell variable reference names a secret without containing it.
fn is_var_ref(s: &str) -> bool {
    let Some(name) = s.strip_prefix('$') else {
        return false;
    };
    let name = name
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A key or variable named like a secret. Non-ASCII text counts as one: Unicode case
/// folding (`ſ`, `K`) could spell a name that ASCII comparison misses.
fn is_secret_name(s: &str) -> bool {
    !s.is_ascii() || contains_secret_name(&s.to_ascii_lowercase())
}

/// `--password`, `-api-key`, `--GITHUB_TOKEN`: a flag whose name holds a secret name.
fn is_secret_flag(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("--").or_else(|| s.strip_prefix('-')) else {
        return false;
    };
    !s.is_ascii()
        || (rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && contains_secret_name(&rest.to_ascii_lowercase()))
}

/// A byte range to mask; the first `label` bytes are a public token prefix (`ghp_`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    label: usize,
}

/// Overlapping ranges merged; `None` if the patterns are unavailable.
fn secret_spans(s: &str) -> Option<Vec<Span>> {
    let lower = s.to_ascii_lowercase();
    let ascii = s.is_ascii();
    let mut spans = Vec::new();
    for mask in MASKS.iter() {
        if ascii && !mask.triggers.iter().any(|t| lower.contains(t)) {
            continue;
        }
        let re = mask
            .re
            .get_or_init(|| Regex::new(&mask.source).ok())
            .as_ref()?;
        for caps in re.captures_iter(s) {
            let Some(m) = SECRET_GROUPS.iter().find_map(|g| caps.name(g)) else {
                continue;
            };
            if m.as_str().is_empty() || is_var_ref(m.as_str()) {
                continue;
            }
            let label = caps
                .name("p")
                .filter(|p| p.start() == m.start())
                .map_or(0, |p| p.len());
            spans.push(Span {
                start: m.start(),
                end: m.end(),
                label,
            });
        }
    }
    spans.sort_by_key(|sp| (sp.start, std::cmp::Reverse(sp.end)));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for sp in spans {
        match merged.last_mut() {
            Some(cur) if sp.start < cur.end => {
                if sp.end > cur.end {
                    // The label described the old extent, not the union.
                    cur.end = sp.end;
                    cur.label = 0;
                } else if sp.start == cur.start && sp.end == cur.end {
                    cur.label = cur.label.max(sp.label);
                }
            }
            _ => merged.push(sp),
        }
    }
    Some(merged)
}

fn tag(secret: &str) -> String {
    let digest = sha256_hex(secret.as_bytes());
    digest.get(..8).unwrap_or_default().to_string()
}

fn masked(secret: &str, label: usize) -> String {
    let prefix = secret.get(..label).unwrap_or_default();
    format!("{prefix}****{}", tag(secret))
}

/// Masks the whole of `s`, keeping a token prefix if `s` is exactly one token.
fn mask_whole(s: &str) -> String {
    let label = secret_spans(s)
        .unwrap_or_default()
        .into_iter()
        .find(|sp| sp.start == 0 && sp.end == s.len())
        .map_or(0, |sp| sp.label);
    masked(s, label)
}

/// Replaces every secret in `s` with `****` and the first 8 hex digits of the secret's
/// sha256 (after a public token prefix such as `ghp_`, which is kept), so equal secrets
/// stay correlatable without being recoverable.
pub fn mask_secrets(s: &str) -> String {
    let Some(spans) = secret_spans(s) else {
        // Without the patterns nothing can be told apart; hide everything.
        return if s.is_empty() {
            String::new()
        } else {
            masked(s, 0)
        };
    };
    if spans.is_empty() {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for sp in spans {
        out.push_str(s.get(at..sp.start).unwrap_or_default());
        out.push_str(&masked(
            s.get(sp.start..sp.end).unwrap_or_default(),
            sp.label,
        ));
        at = sp.end;
    }
    out.push_str(s.get(at..).unwrap_or_default());
    out
}

/// [`mask_secrets`] on every string (keys included), plus what only structure reveals:
/// the value of an object key named like a secret (`{"GITHUB_TOKEN": "…"}`), and the
/// argv element after `--password`, `-u user:`, `Bearer`, or `Authorization:`.
pub fn mask_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(mask_secrets(s)),
        Value::Array(items) => {
            let mut prev: Option<&str> = None;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let m = match (item, prev) {
                    (Value::String(s), Some(p)) => mask_after(p, s)
                        .map_or_else(|| Value::String(mask_secrets(s)), Value::String),
                    _ => mask_value(item),
                };
                out.push(m);
                prev = item.as_str();
            }
            Value::Array(out)
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, val)| {
                let m = match val {
                    Value::String(s) if !s.is_empty() && !is_var_ref(s) && is_secret_name(k) => {
                        Value::String(mask_whole(s))
                    }
                    _ => mask_value(val),
                };
                (mask_secrets(k), m)
            })
            .collect(),
        other => other.clone(),
    }
}

/// The masked form of argv element `s` when the element before it says it is a secret.
fn mask_after(prev: &str, s: &str) -> Option<String> {
    if s.is_empty() || is_var_ref(s) {
        return None;
    }
    let lower = prev.to_ascii_lowercase();
    if is_secret_flag(prev) && !s.starts_with('-') {
        return Some(mask_whole(s));
    }
    if matches!(lower.as_str(), "-u" | "--user" | "--proxy-user") {
        let (user, pass) = s.split_once(':')?;
        return (!pass.is_empty() && !is_var_ref(pass))
            .then(|| format!("{}:{}", mask_secrets(user), mask_whole(pass)));
    }
    if matches!(lower.as_str(), "bearer" | "basic") {
        return Some(mask_whole(s));
    }
    let scheme = matches!(
        s.to_ascii_lowercase().as_str(),
        "bearer" | "basic" | "token" | "digest" | "negotiate"
    );
    if lower.trim_end().ends_with("authorization:") && !scheme {
        return Some(mask_whole(s));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile_and_name_rules_hold() {
        for m in MASKS.iter() {
            assert!(Regex::new(&m.source).is_ok(), "{}", m.source);
        }
        assert!(is_var_ref("$GITHUB_TOKEN") && is_var_ref("${A_1}") && !is_var_ref("$1x"));
        assert!(
            is_secret_flag("--api-key")
                && is_secret_flag("-PASSWORD")
                && !is_secret_flag("--force")
        );
        assert!(is_secret_name("GITHUB_TOKEN") && !is_secret_name("session"));
    }

    #[test]
    fn masks_are_correlatable_and_ordinary_text_is_untouched() {
        let a = mask_secrets("DB_PASSWORD=hunter2hunter2 ./a");
        let b = mask_secrets("other --password hunter2hunter2");
        let c = mask_secrets("DB_PASSWORD=somethingelse1 ./a");
        let tag = &sha256_hex(b"hunter2hunter2")[..8];
        assert_eq!(a, format!("DB_PASSWORD=****{tag} ./a"));
        assert_eq!(b, format!("other --password ****{tag}"));
        assert_ne!(a, c);
        // A token inside an assignment keeps its kind and the same tag as on its own.
        let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
        let alone = mask_secrets(token);
        assert!(alone.starts_with("ghp_****"));
        assert_eq!(
            mask_secrets(&format!("GITHUB_TOKEN={token}")),
            format!("GITHUB_TOKEN={alone}")
        );
        for ordinary in [
            "cargo test --release",
            "rm -rf target",
            "git commit -m 'fix the risk-assessment-framework-handling'",
            "The basic idea is simple",
            "ls -la /tmp && echo done",
            "TOKEN=$GITHUB_TOKEN make",
            "curl -H \"Authorization: Bearer ${API_TOKEN}\" https://x",
            "https://example.com/path?q=1",
            "sort -u names.txt",
            "",
        ] {
            assert_eq!(mask_secrets(ordinary), ordinary);
        }
    }
}

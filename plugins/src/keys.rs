//! Trusted signing keys (`.contextos/trusted-keys.toml`).
//!
//! ```toml
//! [[key]]
//! id = "341b2be0bed75e27"                  # must equal the id computed from public_key
//! public_key = """-----BEGIN PUBLIC KEY-----
//! …
//! -----END PUBLIC KEY-----"""              # SPKI PEM, P-256
//! scopes = ["acme-*", "fmt-plugin"]        # plugin-name globs: `*` and `?`, whole name
//! not_before = "2026-01-01T00:00:00Z"      # optional, UTC, exactly this shape
//! not_after = "2027-01-01T00:00:00Z"       # optional
//! revoked = false                          # optional
//! ```
//!
//! The file is the trust root, so it is parsed strictly: unknown fields, duplicate ids,
//! an id that is not the key's own, a bad timestamp or an empty validity window make the
//! whole file an error rather than a partly trusted one. A revoked key stays listed (so
//! it cannot be re-added by accident) and [`TrustedKeys::get`] still returns it: the
//! verifier reports it as revoked instead of as unknown.

use crate::position::file_line_col;
use crate::signature::PublicKey;
use serde::Deserialize;
use std::collections::HashMap;
use toml::Spanned;

/// Where trusted keys live, relative to the project root.
pub const TRUSTED_KEYS_FILE: &str = ".contextos/trusted-keys.toml";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKey {
    /// Computed from `public_key` (equal to the file's `id`, which was checked).
    pub id: String,
    pub public_key: PublicKey,
    pub scopes: Vec<String>,
    /// Unix seconds, inclusive.
    pub not_before: Option<u64>,
    /// Unix seconds, inclusive.
    pub not_after: Option<u64>,
    pub revoked: bool,
}

impl TrustedKey {
    /// Whether one of the scope globs matches the whole plugin `name`.
    pub fn scope_allows(&self, name: &str) -> bool {
        self.scopes.iter().any(|g| glob_match(g, name))
    }

    /// Whether `now` (unix seconds) lies within `not_before..=not_after`.
    pub fn valid_at(&self, now: u64) -> bool {
        self.not_before.is_none_or(|nb| now >= nb) && self.not_after.is_none_or(|na| now <= na)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedKeys {
    pub keys: Vec<TrustedKey>,
}

impl TrustedKeys {
    /// The key with exactly this id. Lookup is by id only: a verifier never tries other
    /// keys until one happens to verify.
    pub fn get(&self, id: &str) -> Option<&TrustedKey> {
        self.keys.iter().find(|k| k.id == id)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeysError {
    #[error("{at}: {message}")]
    Syntax { at: String, message: String },
    #[error("{at}: key id {id:?} appears more than once")]
    DuplicateId { at: String, id: String },
    #[error("{at}: key id {given:?} does not match the public key, whose id is {computed:?}")]
    IdMismatch {
        at: String,
        given: String,
        computed: String,
    },
    #[error("{at}: {message}")]
    PublicKey { at: String, message: String },
    #[error(
        "{at}: {field} {value:?} is not an RFC 3339 UTC time of the form YYYY-MM-DDTHH:MM:SSZ"
    )]
    Timestamp {
        at: String,
        field: &'static str,
        value: String,
    },
    #[error("{at}: not_before is after not_after, so the key is never valid")]
    EmptyValidity { at: String },
    #[error("{at}: scope {scope:?} is not a plugin-name glob (letters, digits, `-`, `_`, `.`, `*`, `?`)")]
    Scope { at: String, scope: String },
}

impl KeysError {
    pub fn code(&self) -> &'static str {
        match self {
            KeysError::Syntax { .. } => "keys.syntax",
            KeysError::DuplicateId { .. } => "keys.duplicate-id",
            KeysError::IdMismatch { .. } => "keys.id-mismatch",
            KeysError::PublicKey { .. } => "keys.public-key",
            KeysError::Timestamp { .. } => "keys.timestamp",
            KeysError::EmptyValidity { .. } => "keys.validity",
            KeysError::Scope { .. } => "keys.scope",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    key: Vec<Spanned<RawKey>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKey {
    id: Spanned<String>,
    public_key: Spanned<String>,
    scopes: Vec<Spanned<String>>,
    not_before: Option<Spanned<toml::Value>>,
    not_after: Option<Spanned<toml::Value>>,
    #[serde(default)]
    revoked: bool,
}

/// Parses a trusted keys file; `file` is only used in error locations.
pub fn parse(text: &str, file: &str) -> Result<TrustedKeys, KeysError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| KeysError::Syntax {
        at: file_line_col(file, text, e.span()),
        message: e.message().to_string(),
    })?;
    let at = |span: std::ops::Range<usize>| file_line_col(file, text, Some(span));
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut keys = Vec::new();
    for k in raw.key {
        let k = k.into_inner();
        let public_key =
            PublicKey::from_spki_pem(k.public_key.get_ref()).map_err(|e| KeysError::PublicKey {
                at: at(k.public_key.span()),
                message: e.to_string(),
            })?;
        let computed = public_key.key_id();
        if k.id.get_ref() != &computed {
            return Err(KeysError::IdMismatch {
                at: at(k.id.span()),
                given: k.id.get_ref().clone(),
                computed,
            });
        }
        if seen.insert(computed.clone(), ()).is_some() {
            return Err(KeysError::DuplicateId {
                at: at(k.id.span()),
                id: computed,
            });
        }
        let mut scopes = Vec::new();
        for s in k.scopes {
            if s.get_ref().is_empty()
                || !s
                    .get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '*' | '?'))
            {
                return Err(KeysError::Scope {
                    at: at(s.span()),
                    scope: s.into_inner(),
                });
            }
            scopes.push(s.into_inner());
        }
        let not_before = timestamp(k.not_before, "not_before", &at)?;
        let not_after = timestamp(k.not_after, "not_after", &at)?;
        if let (Some(nb), Some(na)) = (not_before, not_after) {
            if nb > na {
                return Err(KeysError::EmptyValidity {
                    at: at(k.id.span()),
                });
            }
        }
        keys.push(TrustedKey {
            id: computed,
            public_key,
            scopes,
            not_before,
            not_after,
            revoked: k.revoked,
        });
    }
    Ok(TrustedKeys { keys })
}

/// Accepts the documented string form and, because people write TOML, a bare TOML
/// datetime of the same shape; both must be `YYYY-MM-DDTHH:MM:SSZ` exactly.
fn timestamp(
    v: Option<Spanned<toml::Value>>,
    field: &'static str,
    at: &dyn Fn(std::ops::Range<usize>) -> String,
) -> Result<Option<u64>, KeysError> {
    let Some(v) = v else {
        return Ok(None);
    };
    let text = match v.get_ref() {
        toml::Value::String(s) => s.clone(),
        toml::Value::Datetime(d) => d.to_string(),
        other => other.to_string(),
    };
    match parse_rfc3339_utc(&text) {
        Some(t) => Ok(Some(t)),
        None => Err(KeysError::Timestamp {
            at: at(v.span()),
            field,
            value: text,
        }),
    }
}

/// Seconds since the Unix epoch for exactly `YYYY-MM-DDTHH:MM:SSZ` (UTC, no fraction,
/// no offset, no leap second, year 1970..=9999); `None` for anything else, including
/// impossible dates such as February 30.
pub fn parse_rfc3339_utc(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 20 {
        return None;
    }
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    for (c, want) in b.iter().zip(shape) {
        let ok = if *want == b'd' {
            c.is_ascii_digit()
        } else {
            c == want
        };
        if !ok {
            return None;
        }
    }
    // The shape is ours (strict, so a typo never shifts a window); the calendar is jiff's.
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i8>().ok();
    let year = s.get(0..4)?.parse::<i16>().ok()?;
    let (month, day) = (num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let civil = jiff::civil::DateTime::new(year, month, day, hour, min, sec, 0).ok()?;
    // Civil arithmetic, not a jiff `Timestamp`: that one stops short of 9999-12-31.
    let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
    u64::try_from(civil.duration_since(epoch).as_secs()).ok()
}

/// Whole-string glob match: `*` any run of characters (including none), `?` exactly one
/// character, everything else literal.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0usize, 0usize);
    // Position of the last `*` and the name position it currently absorbs up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == n.get(ni) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::signature::SecretKey;

    fn entry(k: &SecretKey, extra: &str) -> String {
        format!(
            "[[key]]\nid = \"{}\"\npublic_key = \"\"\"\n{}\"\"\"\nscopes = [\"acme-*\", \"fmt-plugin\"]\n{extra}",
            k.public().key_id(),
            k.public().to_spki_pem().unwrap()
        )
    }

    #[test]
    fn parses() {
        let (a, b) = (SecretKey::generate(), SecretKey::generate());
        let text = format!(
            "{}\n{}",
            entry(
                &a,
                "not_before = \"2026-01-01T00:00:00Z\"\nnot_after = 2027-01-01T00:00:00Z\n"
            ),
            entry(&b, "revoked = true\n")
        );
        let keys = parse(&text, "keys.toml").unwrap();
        assert_eq!(keys.keys.len(), 2);
        let ka = keys.get(&a.public().key_id()).unwrap();
        assert_eq!(ka.public_key, a.public());
        assert_eq!(ka.not_before, Some(1_767_225_600));
        assert_eq!(ka.not_after, Some(1_798_761_600));
        assert!(!ka.revoked);
        assert!(ka.valid_at(1_767_225_600) && ka.valid_at(1_798_761_600));
        assert!(!ka.valid_at(1_767_225_599) && !ka.valid_at(1_798_761_601));
        let kb = keys.get(&b.public().key_id()).unwrap();
        assert!(kb.revoked && kb.not_before.is_none() && kb.valid_at(0));
        assert!(keys.get("0000000000000000").is_none());
        assert_eq!(parse("", "k").unwrap(), TrustedKeys::default());
    }

    #[test]
    fn duplicate_id() {
        let a = SecretKey::generate();
        let text = format!("{}\n{}", entry(&a, ""), entry(&a, ""));
        let err = parse(&text, "keys.toml").unwrap_err();
        assert_eq!(err.code(), "keys.duplicate-id");
        // Points at the second entry's id (line 8 of the text).
        let second = text.match_indices("id = ").nth(1).unwrap().0;
        let line = text[..second].matches('\n').count() + 1;
        assert!(
            err.to_string().starts_with(&format!("keys.toml:{line}:")),
            "{err}"
        );
    }

    #[test]
    fn id_mismatch() {
        let (a, b) = (SecretKey::generate(), SecretKey::generate());
        let text = entry(&a, "").replace(&a.public().key_id(), &b.public().key_id());
        let err = parse(&text, "keys.toml").unwrap_err();
        assert_eq!(err.code(), "keys.id-mismatch");
        assert!(err.to_string().starts_with("keys.toml:2:6:"), "{err}");
        let upper = entry(&a, "").replace(
            &a.public().key_id(),
            &a.public().key_id().to_ascii_uppercase(),
        );
        if upper != entry(&a, "") {
            assert_eq!(parse(&upper, "k").unwrap_err().code(), "keys.id-mismatch");
        }
    }

    #[test]
    fn bad_public_key() {
        let text = "[[key]]\nid = \"0000000000000000\"\npublic_key = \"junk\"\nscopes = []\n";
        assert_eq!(parse(text, "k").unwrap_err().code(), "keys.public-key");
    }

    #[test]
    fn bad_dates() {
        let a = SecretKey::generate();
        for extra in [
            "not_before = \"2026-01-01\"\n",
            "not_before = \"2026-01-01T00:00:00+01:00\"\n",
            "not_after = \"2026-02-30T00:00:00Z\"\n",
            "not_after = \"2026-01-01T00:00:00.5Z\"\n",
            "not_after = \"2026-01-01 00:00:00Z\"\n",
            "not_after = 2026-01-01T00:00:00+01:00\n",
            "not_after = 5\n",
        ] {
            let err = parse(&entry(&a, extra), "k").unwrap_err();
            assert_eq!(err.code(), "keys.timestamp", "{extra}");
        }
        let err = parse(
            &entry(
                &a,
                "not_before = \"2027-01-01T00:00:00Z\"\nnot_after = \"2026-01-01T00:00:00Z\"\n",
            ),
            "k",
        )
        .unwrap_err();
        assert_eq!(err.code(), "keys.validity");
    }

    #[test]
    fn unknown_field_and_syntax() {
        let a = SecretKey::generate();
        let err = parse(&entry(&a, "algorithm = \"rsa\"\n"), "keys.toml").unwrap_err();
        assert_eq!(err.code(), "keys.syntax");
        assert!(err.to_string().contains("algorithm"), "{err}");
        assert!(err.to_string().starts_with("keys.toml:"), "{err}");
        assert_eq!(parse("[[keys]]\n", "k").unwrap_err().code(), "keys.syntax");
        assert_eq!(parse("[[key]\n", "k").unwrap_err().code(), "keys.syntax");
        // Scopes are required: a key with none written would trust nothing by accident.
        let no_scopes = entry(&a, "").replace("scopes = [\"acme-*\", \"fmt-plugin\"]\n", "");
        assert_eq!(parse(&no_scopes, "k").unwrap_err().code(), "keys.syntax");
        let bad_scope = entry(&a, "").replace("\"fmt-plugin\"", "\"fmt/[a]\"");
        assert_eq!(parse(&bad_scope, "k").unwrap_err().code(), "keys.scope");
    }

    #[test]
    fn scope_globs() {
        let k = TrustedKey {
            id: String::new(),
            public_key: SecretKey::generate().public(),
            scopes: vec!["acme-*".into(), "fmt-plugin".into(), "v?".into()],
            not_before: None,
            not_after: None,
            revoked: false,
        };
        for ok in ["acme-", "acme-guard", "acme-a-b", "fmt-plugin", "v1"] {
            assert!(k.scope_allows(ok), "{ok}");
        }
        for no in [
            "acme",
            "xacme-guard",
            "fmt-plugin2",
            "fmt-plugi",
            "v",
            "v12",
            "",
        ] {
            assert!(!k.scope_allows(no), "{no}");
        }
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        assert!(!glob_match("a*b*c", "aXbYbZ"));
        assert!(glob_match("*-?", "x-y"));
        assert!(glob_match("**a", "a"));
        assert!(!glob_match("", "a"));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(parse_rfc3339_utc("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339_utc("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(
            parse_rfc3339_utc("2024-02-29T12:34:56Z"),
            Some(1_709_210_096)
        );
        assert_eq!(parse_rfc3339_utc("2100-02-29T00:00:00Z"), None);
        assert_eq!(parse_rfc3339_utc("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(parse_rfc3339_utc("1969-12-31T23:59:59Z"), None);
        assert_eq!(parse_rfc3339_utc("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339_utc("2026-01-01T24:00:00Z"), None);
        assert_eq!(parse_rfc3339_utc("2026-01-01T00:00:60Z"), None);
        assert_eq!(parse_rfc3339_utc("2026-01-01t00:00:00z"), None);
        assert_eq!(parse_rfc3339_utc("+026-01-01T00:00:00Z"), None);
        assert_eq!(
            parse_rfc3339_utc("9999-12-31T23:59:59Z"),
            Some(253_402_300_799)
        );
        // Every day of a few years, against a running count.
        let mut expect = parse_rfc3339_utc("1999-01-01T00:00:00Z").unwrap();
        let mut day = jiff::civil::date(1999, 1, 1);
        while day.year() < 2030 {
            let s = format!("{day}T00:00:00Z");
            assert_eq!(parse_rfc3339_utc(&s), Some(expect), "{s}");
            expect += 86_400;
            day = day.tomorrow().unwrap();
        }
        assert_eq!(expect, parse_rfc3339_utc("2030-01-01T00:00:00Z").unwrap());
    }
}

//! Facts about one pinned plugin pack, for the policy to judge.
//!
//! Nothing here allows or denies: [`verify`] checks the pack against its pin and
//! the trusted keys and reports what it found as stable finding codes, and a verified
//! signer only when everything about the signature held. The policy (`plugin.*`) then
//! decides — so a project can, say, tolerate unsigned packs from `dir:` sources while
//! refusing everything else, and the decision is visible in the policy, not buried here.
//!
//! Checks never stop early: every fact is established independently (a pack that fails
//! to hash is still checked for its signature), so the policy and the user see all
//! problems at once. Keys are looked up by the pin's signer id only; if that key does
//! not verify the signature, no other trusted key is tried.

use crate::digest::tree_digest;
use crate::keys::TrustedKeys;
use crate::pins::Pin;
use crate::signature::{self, SigError};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// Finding codes (see [`verify`]).
pub mod finding {
    pub const DIGEST_MISSING: &str = "digest-missing";
    pub const DIGEST_MISMATCH: &str = "digest-mismatch";
    pub const PACK_UNREADABLE: &str = "pack-unreadable";
    pub const SIGNATURE_MISSING: &str = "signature-missing";
    pub const SIGNATURE_MALFORMED: &str = "signature-malformed";
    pub const SIGNATURE_HIGH_S: &str = "signature-high-s";
    pub const SIGNATURE_INVALID: &str = "signature-invalid";
    pub const KEY_UNKNOWN: &str = "key-unknown";
    pub const KEY_REVOKED: &str = "key-revoked";
    pub const KEY_EXPIRED: &str = "key-expired";
    pub const KEY_OUT_OF_SCOPE: &str = "key-out-of-scope";
    pub const SEQUENCE_REPLAYED: &str = "sequence-replayed";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub name: String,
    pub version: String,
    pub source: String,
    /// The digest the pin records (`""` if the pin gives none).
    pub digest: String,
    /// Key id, only when the signature verified under a trusted, unrevoked, currently
    /// valid key whose scope covers the name.
    pub signer: Option<String>,
    /// Stable codes, sorted and deduplicated; empty when everything held.
    pub findings: Vec<String>,
}

impl Facts {
    /// The request the policy judges.
    pub fn request(&self) -> contextos_core::request::PluginRequest {
        contextos_core::request::PluginRequest {
            name: self.name.clone(),
            source: self.source.clone(),
            version: self.version.clone(),
            digest: self.digest.clone(),
            signer: self.signer.clone(),
            findings: self.findings.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct VerifyInput<'a> {
    pub entry: &'a Pin,
    /// The pack's files, already fetched/unpacked for this entry.
    pub pack_dir: &'a Path,
    pub keys: &'a TrustedKeys,
    /// Unix seconds.
    pub now: u64,
    /// Highest sequence previously accepted for this name.
    pub high_water: Option<u64>,
}

/// Establishes the facts about `input.entry`:
///
/// * `digest-missing` — the pin's digest is not `sha256:` + 64 lowercase hex;
/// * `digest-mismatch` — the pack's [`tree_digest`] differs from a well-formed pinned digest;
/// * `pack-unreadable` plus the digest error's own code (e.g. `plugin.symlink-escape`) —
///   the pack could not be hashed;
/// * `signature-missing` — empty signer or signature;
/// * `key-unknown`, `key-revoked`, `key-expired` (outside `not_before..=not_after`),
///   `key-out-of-scope` — about the key the pin names;
/// * `signature-malformed`, `signature-high-s`, `signature-invalid` — the signature over
///   the payload built from the pin's name, version, digest and sequence (a name or
///   version holding a control character makes the payload ambiguous and counts as
///   `signature-invalid`);
/// * `sequence-replayed` — `sequence` is below the high-water mark.
///
/// Whether the version is exact semver is for the policy (`plugin.version`); see
/// [`is_exact_semver`].
pub fn verify(input: &VerifyInput) -> Facts {
    let e = input.entry;
    let mut findings: BTreeSet<String> = BTreeSet::new();
    let mut add = |code: &str| {
        findings.insert(code.to_string());
    };

    let digest_ok = is_well_formed_digest(&e.digest);
    if !digest_ok {
        add(finding::DIGEST_MISSING);
    }
    match tree_digest(input.pack_dir) {
        Ok(actual) => {
            if digest_ok && actual != e.digest {
                add(finding::DIGEST_MISMATCH);
            }
        }
        Err(err) => {
            add(finding::PACK_UNREADABLE);
            add(err.code());
        }
    }

    let mut signer = None;
    if e.signature.is_empty() || e.signer.is_empty() {
        add(finding::SIGNATURE_MISSING);
    } else {
        if signature_problems(&mut add, input) {
            signer = Some(e.signer.clone());
        }
    }

    if input.high_water.is_some_and(|h| e.sequence < h) {
        add(finding::SEQUENCE_REPLAYED);
    }

    Facts {
        name: e.name.clone(),
        version: e.version.clone(),
        source: e.source.clone(),
        digest: if digest_ok {
            e.digest.clone()
        } else {
            String::new()
        },
        signer,
        findings: findings.into_iter().collect(),
    }
}

/// Adds the key and signature findings; true when there were none.
fn signature_problems(add: &mut dyn FnMut(&str), input: &VerifyInput) -> bool {
    let e = input.entry;
    let mut clean = true;
    let mut report = |code: &str| {
        clean = false;
        add(code);
    };
    let Some(key) = input.keys.get(&e.signer) else {
        report(finding::KEY_UNKNOWN);
        // Well-formedness does not depend on the key, so report it anyway.
        match signature::check_form(&e.signature) {
            Err(SigError::Malformed(_)) => report(finding::SIGNATURE_MALFORMED),
            Err(SigError::HighS) => report(finding::SIGNATURE_HIGH_S),
            Ok(()) | Err(SigError::Invalid) => {}
        }
        return clean;
    };
    if key.revoked {
        report(finding::KEY_REVOKED);
    }
    if !key.valid_at(input.now) {
        report(finding::KEY_EXPIRED);
    }
    if !key.scope_allows(&e.name) {
        report(finding::KEY_OUT_OF_SCOPE);
    }
    if [&e.name, &e.version]
        .iter()
        .any(|f| f.chars().any(char::is_control))
    {
        report(finding::SIGNATURE_INVALID);
        return clean;
    }
    let payload = signature::payload(&e.name, &e.version, &e.digest, e.sequence);
    match signature::verify(&key.public_key, &payload, &e.signature) {
        Ok(()) => {}
        Err(SigError::Malformed(_)) => report(finding::SIGNATURE_MALFORMED),
        Err(SigError::HighS) => report(finding::SIGNATURE_HIGH_S),
        Err(SigError::Invalid) => report(finding::SIGNATURE_INVALID),
    }
    clean
}

fn is_well_formed_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Exact semver 2.0: `MAJOR.MINOR.PATCH`, numeric parts without leading zeros, optional
/// `-prerelease` (dot-separated `[0-9A-Za-z-]+` identifiers, numeric ones without leading
/// zeros) and `+build` (dot-separated `[0-9A-Za-z-]+`). Ranges, wildcards, `v1.2.3`,
/// partial versions and tags are not exact.
pub fn is_exact_semver(v: &str) -> bool {
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    let ident =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3 || !parts.iter().all(|p| numeric(p)) {
        return false;
    }
    if let Some(pre) = pre {
        let ok = pre
            .split('.')
            .all(|id| ident(id) && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id)));
        if !ok {
            return false;
        }
    }
    build.is_none_or(|b| b.split('.').all(ident))
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::digest::SIGNATURE_FILE;
    use crate::keys;
    use crate::signature::{high_s_twin, sign, SecretKey};
    use std::fs;
    use std::path::PathBuf;

    const NOW: u64 = 1_780_000_000; // 2026-05-28
    const JAN_2026: &str = "2026-01-01T00:00:00Z";
    const JAN_2027: &str = "2027-01-01T00:00:00Z";

    struct Fixture {
        _tmp: tempfile::TempDir,
        pack: PathBuf,
        signer: SecretKey,
        entry: Pin,
    }

    impl Fixture {
        fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let pack = tmp.path().join("acme-guard");
            fs::create_dir_all(pack.join("rules")).unwrap();
            fs::write(pack.join("plugin.toml"), "name = \"acme-guard\"\n").unwrap();
            fs::write(pack.join("rules/main.cx"), "deny path.write \"/etc/**\"\n").unwrap();
            let signer = SecretKey::generate();
            let digest = tree_digest(&pack).unwrap();
            let mut entry = Pin {
                name: "acme-guard".into(),
                version: "1.2.0".into(),
                source: "dir:vendor/acme-guard".into(),
                digest,
                signer: signer.public().key_id(),
                sequence: 5,
                signature: String::new(),
            };
            entry.signature = sign_entry(&signer, &entry);
            // A detached signature in the pack changes nothing.
            fs::write(pack.join(SIGNATURE_FILE), &entry.signature).unwrap();
            Fixture {
                _tmp: tmp,
                pack,
                signer,
                entry,
            }
        }

        fn keys(&self, extra: &str) -> TrustedKeys {
            keys_file(&[(&self.signer, "[\"acme-*\"]", extra)])
        }

        fn facts(&self, keys: &TrustedKeys, high_water: Option<u64>) -> Facts {
            verify(&VerifyInput {
                entry: &self.entry,
                pack_dir: &self.pack,
                keys,
                now: NOW,
                high_water,
            })
        }

        fn findings(&self, keys: &TrustedKeys) -> Vec<String> {
            let f = self.facts(keys, None);
            if f.findings
                .iter()
                .any(|c| c.starts_with("signature-") || c.starts_with("key-"))
            {
                assert_eq!(f.signer, None, "{f:?}");
            }
            f.findings
        }
    }

    fn sign_entry(k: &SecretKey, e: &Pin) -> String {
        sign(
            k,
            &signature::payload(&e.name, &e.version, &e.digest, e.sequence),
        )
    }

    fn keys_file(list: &[(&SecretKey, &str, &str)]) -> TrustedKeys {
        let mut text = String::new();
        for (k, scopes, extra) in list {
            text.push_str(&format!(
                "[[key]]\nid = \"{}\"\npublic_key = \"\"\"\n{}\"\"\"\nscopes = {scopes}\n{extra}\n",
                k.public().key_id(),
                k.public().to_spki_pem().unwrap()
            ));
        }
        keys::parse(&text, "trusted-keys.toml").unwrap()
    }

    #[test]
    fn valid_pack() {
        let fx = Fixture::new();
        let keys = fx.keys(&format!(
            "not_before = \"{JAN_2026}\"\nnot_after = \"{JAN_2027}\""
        ));
        let f = fx.facts(&keys, Some(5));
        assert_eq!(f.findings, Vec::<String>::new());
        assert_eq!(f.signer, Some(fx.signer.public().key_id()));
        assert_eq!(f.digest, fx.entry.digest);
        assert_eq!(
            (f.name.as_str(), f.version.as_str()),
            ("acme-guard", "1.2.0")
        );
        let req = f.request();
        assert_eq!(req.signer, f.signer);
        assert_eq!(req.source, "dir:vendor/acme-guard");
        // A higher sequence than the mark is an update, not a replay.
        assert!(fx.facts(&keys, Some(4)).findings.is_empty());
    }

    #[test]
    fn tampered_byte() {
        let fx = Fixture::new();
        fs::write(
            fx.pack.join("rules/main.cx"),
            "deny path.write \"/etc/**\"\r",
        )
        .unwrap();
        let f = fx.facts(&fx.keys(""), None);
        assert_eq!(f.findings, ["digest-mismatch"]);
        // The signature itself still verified (it covers the pinned digest); the policy
        // sees both facts.
        assert!(f.signer.is_some());
    }

    #[test]
    fn digest_problems() {
        let mut fx = Fixture::new();
        for bad in [
            "",
            "sha256:",
            "md5:abc",
            &fx.entry.digest.to_ascii_uppercase(),
        ] {
            fx.entry.digest = bad.replace("SHA256:", "sha256:");
            let f = fx.facts(&fx.keys(""), None);
            assert!(f.findings.contains(&"digest-missing".to_string()), "{bad}");
            assert!(!f.findings.contains(&"digest-mismatch".to_string()));
            assert_eq!(f.digest, "");
        }
    }

    #[test]
    fn unreadable_pack() {
        let fx = Fixture::new();
        std::os::unix::fs::symlink("../../etc/passwd", fx.pack.join("rules/x")).unwrap();
        assert_eq!(
            fx.findings(&fx.keys("")),
            ["pack-unreadable", "plugin.symlink-escape"]
        );
        let mut fx = Fixture::new();
        fx.pack = fx.pack.join("missing");
        assert_eq!(fx.findings(&fx.keys("")), ["pack-unreadable", "plugin.io"]);
    }

    #[test]
    fn unsigned() {
        let mut fx = Fixture::new();
        fx.entry.signature = String::new();
        assert_eq!(fx.findings(&fx.keys("")), ["signature-missing"]);
        let mut fx = Fixture::new();
        fx.entry.signer = String::new();
        assert_eq!(fx.findings(&fx.keys("")), ["signature-missing"]);
    }

    #[test]
    fn signed_by_an_untrusted_key_under_a_trusted_id() {
        let mut fx = Fixture::new();
        fx.entry.signature = sign_entry(&SecretKey::generate(), &fx.entry);
        assert_eq!(fx.findings(&fx.keys("")), ["signature-invalid"]);
    }

    #[test]
    fn pin_names_one_key_but_another_trusted_key_signed() {
        // Lookup is by id only: the other trusted key is never tried.
        let mut fx = Fixture::new();
        let other = SecretKey::generate();
        fx.entry.signature = sign_entry(&other, &fx.entry);
        let keys = keys_file(&[(&fx.signer, "[\"*\"]", ""), (&other, "[\"*\"]", "")]);
        assert_eq!(fx.findings(&keys), ["signature-invalid"]);
    }

    #[test]
    fn unknown_key() {
        let fx = Fixture::new();
        let keys = keys_file(&[(&SecretKey::generate(), "[\"*\"]", "")]);
        assert_eq!(fx.findings(&keys), ["key-unknown"]);
        assert_eq!(fx.findings(&TrustedKeys::default()), ["key-unknown"]);
        let mut fx = Fixture::new();
        fx.entry.signature = "garbage".into();
        assert_eq!(
            fx.findings(&TrustedKeys::default()),
            ["key-unknown", "signature-malformed"]
        );
    }

    #[test]
    fn revoked_key() {
        let fx = Fixture::new();
        assert_eq!(fx.findings(&fx.keys("revoked = true")), ["key-revoked"]);
    }

    #[test]
    fn expired_and_not_yet_valid() {
        let fx = Fixture::new();
        let past = "not_after = \"2026-01-01T00:00:00Z\"";
        assert_eq!(fx.findings(&fx.keys(past)), ["key-expired"]);
        let future = "not_before = \"2027-01-01T00:00:00Z\"";
        assert_eq!(fx.findings(&fx.keys(future)), ["key-expired"]);
    }

    #[test]
    fn out_of_scope() {
        let fx = Fixture::new();
        let keys = keys_file(&[(&fx.signer, "[\"fmt-plugin\", \"acme\"]", "")]);
        assert_eq!(fx.findings(&keys), ["key-out-of-scope"]);
    }

    #[test]
    fn high_s() {
        let mut fx = Fixture::new();
        fx.entry.signature = high_s_twin(&fx.entry.signature).unwrap();
        assert_eq!(fx.findings(&fx.keys("")), ["signature-high-s"]);
    }

    #[test]
    fn malformed() {
        let mut fx = Fixture::new();
        fx.entry.signature.truncate(40);
        assert_eq!(fx.findings(&fx.keys("")), ["signature-malformed"]);
    }

    #[test]
    fn replayed_sequence() {
        let fx = Fixture::new();
        let f = fx.facts(&fx.keys(""), Some(6));
        assert_eq!(f.findings, ["sequence-replayed"]);
        // Replay is about the release, not the signature, which did verify.
        assert!(f.signer.is_some());
        assert!(fx.facts(&fx.keys(""), Some(5)).findings.is_empty());
    }

    #[test]
    fn metadata_edited_without_re_signing() {
        let edits: [&dyn Fn(&mut Pin); 4] = [
            &|e| e.version = "1.3.0".into(),
            &|e| e.name = "acme-guards".into(),
            &|e| e.sequence = 6,
            &|e| e.version = "1.2.0\nsequence=9".into(),
        ];
        for edit in edits {
            let mut fx = Fixture::new();
            edit(&mut fx.entry);
            assert_eq!(
                fx.findings(&fx.keys("")),
                ["signature-invalid"],
                "{:?}",
                fx.entry
            );
        }
        // The digest too (and then the pack no longer matches either).
        let mut fx = Fixture::new();
        fx.entry.digest = format!("sha256:{}", "0".repeat(64));
        assert_eq!(
            fx.findings(&fx.keys("")),
            ["digest-mismatch", "signature-invalid"]
        );
    }

    #[test]
    fn many_problems_at_once_are_all_reported() {
        let mut fx = Fixture::new();
        fs::write(fx.pack.join("extra"), "x").unwrap();
        fx.entry.version = "2.0.0".into();
        let keys = keys_file(&[(
            &fx.signer,
            "[\"other\"]",
            "revoked = true\nnot_after = \"2026-01-01T00:00:00Z\"",
        )]);
        let f = fx.facts(&keys, Some(9));
        assert_eq!(
            f.findings,
            [
                "digest-mismatch",
                "key-expired",
                "key-out-of-scope",
                "key-revoked",
                "sequence-replayed",
                "signature-invalid"
            ]
        );
        assert_eq!(f.signer, None);
    }

    #[test]
    fn semver() {
        for ok in [
            "0.0.0",
            "1.2.3",
            "10.20.30",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0-x.7.z.92",
            "1.0.0-x-y-z.--",
            "1.0.0-alpha+001",
            "1.0.0+20130313144700",
            "1.0.0-beta+exp.sha.5114f85",
            "1.0.0+21AF26D3----117B344092BD",
        ] {
            assert!(is_exact_semver(ok), "{ok}");
        }
        for no in [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.02.3",
            "1.2.03",
            "v1.2.3",
            "^1.2.3",
            "~1.2.3",
            ">=1.2.3",
            "1.2.x",
            "1.2.*",
            "*",
            "latest",
            "1.2.3 || 2.0.0",
            "1.2.3-",
            "1.2.3+",
            "1.2.3-01",
            "1.2.3-a..b",
            "1.2.3+a..b",
            "1.2.3-a_b",
            " 1.2.3",
            "1.2.3 ",
            "-1.2.3",
            "1.2.3-é",
            "1.2.3+b+c",
        ] {
            assert!(!is_exact_semver(no), "{no}");
        }
    }
}

//! Whether a pinned pack may load: [`verify`](crate::verify) establishes the facts, the
//! policy set's `plugin` rules decide. Only an allowed pack contributes policy files, and
//! one refused pack stops whatever was loading them (fail closed).
//!
//! The caller passes the set that judges: the stdlib and the project's own policies. A
//! pack's own policies never judge a pack (and cannot, E0120).

use crate::installed::{pack_dir, read_keys, read_pins, read_seen, InstalledError};
use crate::keys::TrustedKeys;
use crate::pins::Pin;
use crate::verify::{verify, Facts, VerifyInput};
use contextos_core::{Decision, Effect, EvalOptions, PolicySet, Request, RequestKind};
use std::path::Path;

/// One pinned pack and what became of it.
#[derive(Debug)]
pub struct Checked {
    pub entry: Pin,
    pub facts: Facts,
    pub decision: Decision,
}

impl Checked {
    pub fn allowed(&self) -> bool {
        self.decision.verdict == Effect::Allow
    }

    /// The reason codes: the deciding rules' ids (a deny) and the verification findings.
    pub fn reasons(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .decision
            .rule_ids()
            .iter()
            .map(|s| s.to_string())
            .collect();
        if v.is_empty() {
            v.push(format!("default plugin = {:?}", self.decision.verdict).to_lowercase());
        }
        v
    }
}

/// Seconds since the Unix epoch, the time keys' validity windows are checked at.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Verifies `entry` against the pack in `dir` and decides it.
pub fn check(
    set: &PolicySet,
    entry: &Pin,
    dir: &Path,
    keys: &TrustedKeys,
    high_water: Option<u64>,
) -> Checked {
    let facts = verify(&VerifyInput {
        entry,
        pack_dir: dir,
        keys,
        now: now(),
        high_water,
    });
    let request = Request::new(RequestKind::Plugin(facts.request()));
    let decision = set.decide(&request, EvalOptions::default());
    Checked {
        entry: entry.clone(),
        facts,
        decision,
    }
}

/// Verifies and decides every installed pack; `Ok(None)` when the project pins none.
pub fn check_installed(
    root: &Path,
    set: &PolicySet,
) -> Result<Option<Vec<Checked>>, InstalledError> {
    let Some(pins) = read_pins(root)? else {
        return Ok(None);
    };
    if pins.plugins.is_empty() {
        return Ok(None);
    }
    let keys = read_keys(root)?;
    let seen = read_seen(root)?;
    Ok(Some(
        pins.plugins
            .iter()
            .map(|e| {
                check(
                    set,
                    e,
                    &pack_dir(root, &e.name),
                    &keys,
                    seen.get(&e.name).copied(),
                )
            })
            .collect(),
    ))
}

/// One line per refused pack, for the error that stops a command.
pub fn describe_denials(checked: &[Checked]) -> String {
    checked
        .iter()
        .filter(|c| !c.allowed())
        .map(|c| {
            format!(
                "plugin `{}` {} is refused: {}{}",
                c.entry.name,
                c.entry.version,
                c.reasons().join(", "),
                if c.facts.findings.is_empty() {
                    String::new()
                } else {
                    format!(" (findings: {})", c.facts.findings.join(", "))
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::digest::tree_digest;
    use crate::installed::PACKS_DIR;
    use crate::keys::TRUSTED_KEYS_FILE;
    use crate::pins::{render, Pins, PINS_FILE};
    use crate::signature::{payload, sign, SecretKey};
    use contextos_core::{build, BuildOptions, Layer, PolicySource};
    use std::fs;

    fn stdlib() -> PolicySet {
        let sources: Vec<PolicySource> = contextos_stdlib::FILES
            .iter()
            .map(|(name, text)| PolicySource {
                name: name.to_string(),
                text: text.to_string().into(),
                layer: Layer::Stdlib,
            })
            .collect();
        build(&sources, &BuildOptions::default())
            .policy
            .expect("stdlib compiles")
    }

    /// A project pinning one signed pack, `acme-guard`, under a trusted key.
    fn project() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let pack = root.path().join(PACKS_DIR).join("acme-guard");
        fs::create_dir_all(&pack).unwrap();
        fs::write(pack.join("main.policy"), "language 1;\n").unwrap();
        let key = SecretKey::generate();
        let mut pin = Pin {
            name: "acme-guard".into(),
            version: "1.2.0".into(),
            source: "dir:vendor/acme-guard".into(),
            digest: tree_digest(&pack).unwrap(),
            signer: key.public().key_id(),
            sequence: 1,
            signature: String::new(),
        };
        pin.signature = sign(
            &key,
            &payload(&pin.name, &pin.version, &pin.digest, pin.sequence),
        );
        let pins = Pins { plugins: vec![pin] };
        fs::write(root.path().join(PINS_FILE), render(&pins)).unwrap();
        let keys = format!(
            "[[key]]\nid = \"{}\"\npublic_key = \"\"\"\n{}\"\"\"\nscopes = [\"acme-*\"]\n",
            key.public().key_id(),
            key.public().to_spki_pem().unwrap()
        );
        fs::create_dir_all(root.path().join(".contextos")).unwrap();
        fs::write(root.path().join(TRUSTED_KEYS_FILE), keys).unwrap();
        root
    }

    #[test]
    fn nothing_pinned_is_nothing_to_check() {
        let set = stdlib();
        let root = tempfile::tempdir().unwrap();
        assert!(check_installed(root.path(), &set).unwrap().is_none());
        fs::write(root.path().join(PINS_FILE), render(&Pins::default())).unwrap();
        assert!(check_installed(root.path(), &set).unwrap().is_none());
    }

    #[test]
    fn a_signed_pinned_pack_is_allowed() {
        let root = project();
        let checked = check_installed(root.path(), &stdlib()).unwrap().unwrap();
        assert_eq!(checked.len(), 1);
        assert!(checked[0].allowed(), "{:?}", checked[0].reasons());
        assert_eq!(checked[0].reasons(), ["std-plugin-trusted"]);
        assert_eq!(describe_denials(&checked), "");
    }

    #[test]
    fn a_changed_pack_is_refused_with_its_reasons() {
        let root = project();
        let pack = root.path().join(PACKS_DIR).join("acme-guard");
        fs::write(pack.join("main.policy"), "language 1; // edited\n").unwrap();
        let checked = check_installed(root.path(), &stdlib()).unwrap().unwrap();
        assert!(!checked[0].allowed());
        assert_eq!(
            describe_denials(&checked),
            "plugin `acme-guard` 1.2.0 is refused: std-plugin-digest-mismatch \
             (findings: digest-mismatch)"
        );
    }

    #[test]
    fn an_unreadable_pins_file_stops_the_check() {
        let root = project();
        fs::write(root.path().join(PINS_FILE), "version = 2\n").unwrap();
        let e = check_installed(root.path(), &stdlib()).unwrap_err();
        assert!(matches!(e, InstalledError::Pins(_)), "{e}");
    }
}

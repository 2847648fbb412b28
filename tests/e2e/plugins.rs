//! Plugin packs end to end: publisher keygen and sign, `plugin add`, verification on every
//! load, and every tampering we could devise rejected with its reason code.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Out {
    code: i32,
    text: String,
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_contextos"))
        .arg("--project")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

struct Key {
    secret: PathBuf,
    id: String,
    public_pem: String,
}

fn keygen(dir: &Path, name: &str) -> Key {
    let secret = dir.join(name);
    let o = run(
        dir,
        &[
            "--format",
            "json",
            "plugin",
            "keygen",
            "--out",
            secret.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.text);
    let v: Value = serde_json::from_str(&o.text).unwrap();
    Key {
        id: v["keyId"].as_str().unwrap().to_string(),
        public_pem: std::fs::read_to_string(format!("{}.pub", secret.display())).unwrap(),
        secret,
    }
}

const PACK_POLICY: &str = "language 1;\n\n@id(\"acme-generated\")\ndeny path write \"generated/**\"\n    because \"Generated code is rebuilt, not edited.\";\n";

/// A pack directory `NAME-VERSION` holding plugin.toml and one policy, signed when `key`.
fn pack(base: &Path, name: &str, version: &str, key: Option<&Key>, sequence: u64) -> PathBuf {
    let dir = base.join(format!("{name}-{version}"));
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        format!("name = \"{name}\"\nversion = \"{version}\"\ndescription = \"test pack\"\n"),
    )
    .unwrap();
    std::fs::write(dir.join("policies/main.policy"), PACK_POLICY).unwrap();
    std::fs::write(dir.join("README.md"), "Generated code stays generated.\n").unwrap();
    if let Some(k) = key {
        let o = run(
            base,
            &[
                "plugin",
                "sign",
                dir.to_str().unwrap(),
                "--key",
                k.secret.to_str().unwrap(),
                "--sequence",
                &sequence.to_string(),
            ],
        );
        assert_eq!(o.code, 0, "{}", o.text);
    }
    dir
}

fn trust(project: &Path, entries: &[(&Key, &str)]) {
    let mut text = String::new();
    for (k, extra) in entries {
        text.push_str(&format!(
            "[[key]]\nid = \"{}\"\npublic_key = \"\"\"\n{}\"\"\"\nscopes = [\"acme-*\"]\n{extra}\n",
            k.id, k.public_pem
        ));
    }
    std::fs::create_dir_all(project.join(".contextos")).unwrap();
    std::fs::write(project.join(".contextos/trusted-keys.toml"), text).unwrap();
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Key) {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    let publisher = tempfile::tempdir().unwrap();
    let key = keygen(publisher.path(), "acme.key");
    trust(project.path(), &[(&key, "")]);
    (project, publisher, key)
}

fn add(project: &Path, dir: &Path, version: &str) -> Out {
    run(
        project,
        &["plugin", "add", dir.to_str().unwrap(), "--version", version],
    )
}

fn installed(project: &Path) -> PathBuf {
    project.join(".contextos/plugins/acme-guard")
}

/// A command that loads policies: it must refuse to decide while a pack is refused.
fn loads(project: &Path) -> Out {
    run(
        project,
        &["decide", "path", "--op", "write", "generated/x.rs"],
    )
}

#[test]
fn a_signed_pinned_pack_installs_and_its_rules_take_effect() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    let before = loads(p);
    assert_eq!(
        before.code, 0,
        "no plugin yet: writes are allowed: {}",
        before.text
    );
    let o = add(p, &dir, "=1.2.0");
    assert_eq!(o.code, 0, "{}", o.text);
    assert!(o.text.contains("allow"), "{}", o.text);
    let after = loads(p);
    assert_eq!(after.code, 1, "{}", after.text);
    assert!(after.text.contains("acme-generated"), "{}", after.text);
    let v = run(p, &["plugin", "verify"]);
    assert_eq!(v.code, 0, "{}", v.text);
    assert!(v.text.contains(&key.id), "{}", v.text);
    // The lock is deterministic: the same pin gives the same bytes.
    let lock = std::fs::read_to_string(p.join("contextos.lock")).unwrap();
    assert!(
        lock.contains("name = \"acme-guard\"") && lock.contains("sequence = 1"),
        "{lock}"
    );
    assert!(
        !lock.to_ascii_lowercase().contains("time") && !lock.contains("date"),
        "no timestamps in the lock: {lock}"
    );
    let o = add(p, &dir, "=1.2.0");
    assert_eq!(o.code, 0, "{}", o.text);
    assert_eq!(
        std::fs::read_to_string(p.join("contextos.lock")).unwrap(),
        lock
    );
}

#[test]
fn every_tampering_of_an_installed_pack_is_refused_on_load() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    assert_eq!(add(p, &dir, "=1.2.0").code, 0);
    let inst = installed(p);
    let policy = inst.join("policies/main.policy");
    let original = std::fs::read(&policy).unwrap();
    let restore = || {
        std::fs::write(&policy, &original).unwrap();
        let _ = std::fs::remove_file(inst.join("extra.policy"));
        let _ = std::fs::remove_file(inst.join("policies/renamed.policy"));
        let _ = std::fs::remove_file(inst.join("escape"));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&policy, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(loads(p).code, 1, "restored pack loads again");
    };
    let expect_refused = |what: &str, code: &str| {
        let o = loads(p);
        assert_eq!(o.code, 2, "{what}: must fail closed: {}", o.text);
        assert!(o.text.contains(code), "{what}: expected {code}: {}", o.text);
        let h = run(p, &["check"]);
        assert_eq!(h.code, 2, "{what}: check must fail closed too");
        let v = run(p, &["plugin", "verify"]);
        assert_eq!(v.code, 1, "{what}: {}", v.text);
        assert!(v.text.contains(code), "{what}: {}", v.text);
    };
    // One tampered byte: the deny becomes an allow.
    let mut bytes = original.clone();
    let at = bytes.windows(4).position(|w| w == b"deny").unwrap();
    bytes[at..at + 4].copy_from_slice(b"allo");
    std::fs::write(&policy, &bytes).unwrap();
    expect_refused("a tampered byte", "std-plugin-digest-mismatch");
    restore();
    // An added file.
    std::fs::write(inst.join("extra.policy"), "language 1;\n").unwrap();
    expect_refused("an added file", "std-plugin-digest-mismatch");
    restore();
    // A renamed file.
    std::fs::rename(&policy, inst.join("policies/renamed.policy")).unwrap();
    expect_refused("a renamed file", "std-plugin-digest-mismatch");
    std::fs::rename(inst.join("policies/renamed.policy"), &policy).unwrap();
    restore();
    // A removed file.
    std::fs::remove_file(inst.join("README.md")).unwrap();
    expect_refused("a removed file", "std-plugin-digest-mismatch");
    std::fs::write(inst.join("README.md"), "Generated code stays generated.\n").unwrap();
    restore();
    // A mode change.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&policy, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    expect_refused("a mode change", "std-plugin-digest-mismatch");
    restore();
    // A symbolic link out of the pack.
    std::os::unix::fs::symlink("/etc/passwd", inst.join("escape")).unwrap();
    expect_refused("a symlink escape", "std-plugin-digest-mismatch");
    restore();
}

fn set_lock_field(project: &Path, field: &str, value: &str) {
    let lock = std::fs::read_to_string(project.join("contextos.lock")).unwrap();
    let mut in_plugin = false;
    let edited: Vec<String> = lock
        .lines()
        .map(|l| {
            in_plugin |= l == "[[plugin]]";
            if in_plugin && l.starts_with(&format!("{field} = ")) {
                format!("{field} = {value}")
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(project.join("contextos.lock"), edited.join("\n") + "\n").unwrap();
}

#[test]
fn signatures_and_keys_are_checked_with_a_reason_code_each() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 3);
    assert_eq!(add(p, &dir, "=1.2.0").code, 0);
    let lock = std::fs::read_to_string(p.join("contextos.lock")).unwrap();
    let sig = lock
        .lines()
        .find_map(|l| l.strip_prefix("signature = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    let reset = || std::fs::write(p.join("contextos.lock"), &lock).unwrap();
    let refused = |what: &str, code: &str| {
        let o = loads(p);
        assert_eq!(o.code, 2, "{what}: {}", o.text);
        assert!(o.text.contains(code), "{what}: expected {code}: {}", o.text);
    };
    // The high-S twin of the valid signature.
    let twin = contextos_engine::plugins::signature::high_s_twin(&sig).unwrap();
    set_lock_field(p, "signature", &format!("\"{twin}\""));
    refused("high-S", "std-plugin-high-s");
    reset();
    // Metadata edited without re-signing.
    set_lock_field(p, "version", "\"1.2.1\"");
    refused("edited version", "std-plugin-bad-signature");
    reset();
    set_lock_field(p, "sequence", "9");
    refused("edited sequence", "std-plugin-bad-signature");
    reset();
    // A signer the keys file does not know.
    set_lock_field(p, "signer", "\"0123456789abcdef\"");
    refused("unknown key", "std-plugin-key-unknown");
    reset();
    // Revoked, expired, not yet valid and out of scope.
    trust(p, &[(&key, "revoked = true")]);
    refused("revoked key", "std-plugin-key-revoked");
    trust(p, &[(&key, "not_after = \"2020-01-01T00:00:00Z\"")]);
    refused("expired key", "std-plugin-key-expired");
    trust(p, &[(&key, "not_before = \"2999-01-01T00:00:00Z\"")]);
    refused("not yet valid key", "std-plugin-key-expired");
    let scoped = format!(
        "[[key]]\nid = \"{}\"\npublic_key = \"\"\"\n{}\"\"\"\nscopes = [\"other-*\"]\n",
        key.id, key.public_pem
    );
    std::fs::write(p.join(".contextos/trusted-keys.toml"), scoped).unwrap();
    refused("out of scope", "std-plugin-key-scope");
    trust(p, &[(&key, "")]);
    assert_eq!(loads(p).code, 1, "trusted again, the pack loads");
    // A replayed older release: the state remembers sequence 3.
    set_lock_field(p, "sequence", "2");
    let o = loads(p);
    assert_eq!(o.code, 2);
    assert!(o.text.contains("std-plugin"), "{}", o.text);
}

#[test]
fn bad_packs_are_refused_at_install_and_nothing_is_written() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let other = keygen(publisher.path(), "other.key");
    let cases: Vec<(PathBuf, &str, &str)> = vec![
        (
            pack(publisher.path(), "acme-unsigned", "1.0.0", None, 0),
            "=1.0.0",
            "std-plugin-unsigned",
        ),
        (
            pack(publisher.path(), "acme-floating", "1.0.0", Some(&key), 1),
            "latest",
            "std-plugin-unpinned-version",
        ),
        (
            pack(publisher.path(), "acme-caret", "1.0.0", Some(&key), 1),
            "^1.0.0",
            "std-plugin-unpinned-version",
        ),
        (
            pack(publisher.path(), "acme-other", "1.0.0", Some(&other), 1),
            "=1.0.0",
            "std-plugin-key-unknown",
        ),
    ];
    for (dir, version, code) in &cases {
        let o = add(p, dir, version);
        assert_eq!(o.code, 1, "{code}: {}", o.text);
        assert!(o.text.contains(code), "expected {code}: {}", o.text);
    }
    // Tampered after signing.
    let dir = pack(publisher.path(), "acme-tampered", "1.0.0", Some(&key), 1);
    std::fs::write(dir.join("policies/main.policy"), "language 1;\n").unwrap();
    let o = add(p, &dir, "=1.0.0");
    assert_eq!(o.code, 1, "{}", o.text);
    assert!(o.text.contains("std-plugin-digest-mismatch"), "{}", o.text);
    // A symbolic link leaving the pack.
    let dir = pack(publisher.path(), "acme-link", "1.0.0", Some(&key), 1);
    std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
    let o = add(p, &dir, "=1.0.0");
    assert_ne!(o.code, 0, "{}", o.text);
    // A version that is not the pack's.
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    let o = add(p, &dir, "=1.3.0");
    assert_eq!(o.code, 2, "{}", o.text);
    assert!(!p.join("contextos.lock").exists(), "nothing was pinned");
    assert!(
        !p.join(".contextos/plugins").exists(),
        "nothing was installed"
    );
}

#[test]
fn key_rotation_and_replay_of_an_old_release() {
    let (project, publisher, old) = setup();
    let p = project.path();
    let v1 = pack(publisher.path(), "acme-guard", "1.0.0", Some(&old), 1);
    assert_eq!(add(p, &v1, "=1.0.0").code, 0);
    // Rotation: trust the new key next to the old one, release 1.1.0 with it.
    let new = keygen(publisher.path(), "new.key");
    trust(p, &[(&old, ""), (&new, "")]);
    let v2 = pack(publisher.path(), "acme-guard", "1.1.0", Some(&new), 2);
    let o = add(p, &v2, "=1.1.0");
    assert_eq!(o.code, 0, "{}", o.text);
    // Then revoke the old key: the pinned release, signed by the new key, still loads.
    trust(p, &[(&old, "revoked = true"), (&new, "")]);
    assert_eq!(loads(p).code, 1, "{}", loads(p).text);
    // The old release, validly signed by a (now revoked) key, cannot come back; nor can
    // an old release signed by a trusted key (sequence 1 < 2).
    let o = add(p, &v1, "=1.0.0");
    assert_eq!(o.code, 1, "{}", o.text);
    let v1b = pack(
        &publisher.path().join("b"),
        "acme-guard",
        "1.0.0",
        Some(&new),
        1,
    );
    let o = add(p, &v1b, "=1.0.0");
    assert_eq!(o.code, 1, "{}", o.text);
    assert!(o.text.contains("std-plugin-replay"), "{}", o.text);
}

#[test]
fn packs_come_from_tarballs_and_git_commits_too() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    // A tarball holding the pack's directory.
    let tarball = publisher.path().join("acme-guard-1.2.0.tar.gz");
    let st = Command::new("tar")
        .args([
            "-czf",
            tarball.to_str().unwrap(),
            "-C",
            publisher.path().to_str().unwrap(),
            "acme-guard-1.2.0",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let o = add(p, &tarball, "=1.2.0");
    assert_eq!(o.code, 0, "{}", o.text);
    assert!(std::fs::read_to_string(p.join("contextos.lock"))
        .unwrap()
        .contains("tar:"));
    // A git repository at a full commit id.
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "release 1.2.0"]);
    let head = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let source = format!("git+{}#{}", dir.display(), head.trim());
    let o = run(p, &["plugin", "add", &source, "--version", "=1.2.0"]);
    assert_eq!(o.code, 0, "{}", o.text);
    // A branch name is not a pin.
    let o = run(
        p,
        &[
            "plugin",
            "add",
            &format!("git+{}#main", dir.display()),
            "--version",
            "=1.2.0",
        ],
    );
    assert_eq!(o.code, 2, "{}", o.text);
    assert!(o.text.contains("40-hex commit"), "{}", o.text);
}

#[test]
fn installed_packs_never_load_as_the_projects_own_policies() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    assert_eq!(add(p, &dir, "=1.2.0").code, 0);
    // A configuration that points the policy paths at all of .contextos …
    std::fs::write(
        p.join("contextos.toml"),
        "[policies]\npaths = [\".contextos\"]\n",
    )
    .unwrap();
    assert_eq!(loads(p).code, 1, "{}", loads(p).text);
    // … still verifies the pack: a tampered copy is refused, not read as a user policy.
    std::fs::write(installed(p).join("policies/main.policy"), "language 1;\n").unwrap();
    let o = loads(p);
    assert_eq!(o.code, 2, "{}", o.text);
    assert!(o.text.contains("std-plugin-digest-mismatch"), "{}", o.text);
}

#[test]
fn the_agent_hook_verifies_packs_on_every_call() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let state = tempfile::tempdir().unwrap();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    assert_eq!(add(p, &dir, "=1.2.0").code, 0);
    let hook = |cmd: &str| {
        let payload = serde_json::json!({
            "session_id": "s", "cwd": p, "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": cmd}, "tool_use_id": "t"
        })
        .to_string();
        let h = crate::hooks::run_hook(
            p,
            state.path(),
            "claude",
            &["--trace"],
            payload.as_bytes(),
            true,
        );
        (h.code, h.stdout, h.stderr)
    };
    // The pack's rule holds in flight, first from source, then from the cache.
    for _ in 0..2 {
        let (code, out, err) = hook("echo x > generated/a.rs");
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("\"deny\"") && out.contains("acme-generated"),
            "{out} {err}"
        );
    }
    assert!(hook("ls").2.contains("policy cache hit"));
    // A tampered pack blocks every call, cache or not.
    std::fs::write(installed(p).join("README.md"), "changed\n").unwrap();
    let (code, _, err) = hook("ls");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("std-plugin-digest-mismatch"), "{err}");
}

#[test]
fn upgrades_that_drop_a_directory_still_verify_and_broken_packs_are_refused() {
    let (project, publisher, key) = setup();
    let p = project.path();
    // 1.0.0 ships an extra directory that 1.1.0 drops.
    let v1 = pack(publisher.path(), "acme-guard", "1.0.0", None, 0);
    std::fs::create_dir_all(v1.join("guides")).unwrap();
    std::fs::write(v1.join("guides/style.md"), "Keep it small.\n").unwrap();
    let o = run(
        publisher.path(),
        &[
            "plugin",
            "sign",
            v1.to_str().unwrap(),
            "--key",
            key.secret.to_str().unwrap(),
            "--sequence",
            "1",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.text);
    assert_eq!(add(p, &v1, "=1.0.0").code, 0);
    let v2 = pack(publisher.path(), "acme-guard", "1.1.0", Some(&key), 2);
    let o = add(p, &v2, "=1.1.0");
    assert_eq!(o.code, 0, "{}", o.text);
    assert!(
        !installed(p).join("guides").exists(),
        "the dropped directory is gone"
    );
    assert_eq!(loads(p).code, 1, "{}", loads(p).text);
    // A signed pack whose policies would break the project is refused at install.
    let bad = pack(publisher.path(), "acme-loose", "1.0.0", None, 0);
    std::fs::write(
        bad.join("policies/main.policy"),
        "language 1;\ndefault exec = allow;\n",
    )
    .unwrap();
    let o = run(
        publisher.path(),
        &[
            "plugin",
            "sign",
            bad.to_str().unwrap(),
            "--key",
            key.secret.to_str().unwrap(),
            "--sequence",
            "1",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.text);
    let o = add(p, &bad, "=1.0.0");
    assert_eq!(o.code, 2, "{}", o.text);
    assert!(o.text.contains("E0120"), "{}", o.text);
    assert!(!installed(p).parent().unwrap().join("acme-loose").exists());
}

#[test]
fn a_pack_signed_in_its_git_working_copy_installs_from_a_clone() {
    let (project, publisher, key) = setup();
    let p = project.path();
    let dir = pack(publisher.path(), "acme-guard", "1.2.0", None, 0);
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    // Signed in the working copy (its .git present), then committed with the signature.
    let o = run(
        publisher.path(),
        &[
            "plugin",
            "sign",
            dir.to_str().unwrap(),
            "--key",
            key.secret.to_str().unwrap(),
            "--sequence",
            "1",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.text);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "release"]);
    let head = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let o = run(
        p,
        &[
            "plugin",
            "add",
            &format!("git+{}#{}", dir.display(), head.trim()),
            "--version",
            "=1.2.0",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.text);
}

#[test]
fn the_lock_is_byte_identical_across_checkouts() {
    let publisher = tempfile::tempdir().unwrap();
    let key = keygen(publisher.path(), "acme.key");
    let signed = pack(publisher.path(), "acme-guard", "1.2.0", Some(&key), 1);
    let mut locks = Vec::new();
    // Two checkouts in different places, each vendoring the pack, pinned from inside.
    for _ in 0..2 {
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        std::fs::create_dir_all(p.join(".git")).unwrap();
        trust(p, &[(&key, "")]);
        let vendored = p.join("vendor/acme-guard");
        std::fs::create_dir_all(&vendored).unwrap();
        for f in ["plugin.toml", "README.md", "contextos-plugin.sig"] {
            std::fs::copy(signed.join(f), vendored.join(f)).unwrap();
        }
        std::fs::create_dir_all(vendored.join("policies")).unwrap();
        std::fs::copy(
            signed.join("policies/main.policy"),
            vendored.join("policies/main.policy"),
        )
        .unwrap();
        let o = add(p, &vendored, "=1.2.0");
        assert_eq!(o.code, 0, "{}", o.text);
        locks.push(std::fs::read(p.join("contextos.lock")).unwrap());
    }
    assert_eq!(locks[0], locks[1]);
    assert!(String::from_utf8_lossy(&locks[0]).contains("source = \"dir:vendor/acme-guard\""));
}

//! `contextos scan --staged` on real git repositories: every index shape, suppression,
//! output formats and exit codes. Fake credentials are assembled at run time so no
//! token-shaped literal sits in this repository.

use super::{contextos, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A deterministic pseudo-random string over `alphabet` (a fake secret's body).
fn fake(seed: u64, len: usize, alphabet: &str) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[(x % a.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// A GitHub token with a valid checksum (CRC-32 of the random part, six base62 digits), as
/// GitHub issues them; one without it is only a warning.
fn ghp(seed: u64) -> String {
    use crate::scan_corpus::corpus::generator::{base62, crc32};
    let random = fake(seed, 30, ALNUM);
    let sum = base62(crc32(random.as_bytes()), 6);
    format!("gh{}_{random}{sum}", "p")
}
fn akia(seed: u64) -> String {
    format!("AK{}{}", "IA", fake(seed, 16, UPPER32))
}

struct Repo {
    dir: tempfile::TempDir,
}

fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        git_in(dir.path(), &["init", "-q", "-b", "main"]);
        // The policy cache lives in the project; keep it out of `git add -A`.
        std::fs::write(dir.path().join(".gitignore"), ".contextos/state/\n").unwrap();
        Repo { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }
    fn git(&self, args: &[&str]) -> String {
        git_in(self.path(), args)
    }
    fn add_all(&self) -> &Self {
        self.git(&["add", "-A"]);
        self
    }
    fn commit(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--no-verify", "-m", msg]);
    }
    fn scan(&self, extra: &[&str]) -> Run {
        let mut args = vec!["scan", "--staged"];
        args.extend_from_slice(extra);
        contextos(self.path(), &args)
    }
    fn scan_json(&self, extra: &[&str]) -> (i32, Value) {
        let mut args = vec!["--format", "json"];
        args.extend_from_slice(extra);
        let r = self.scan(&args);
        assert!(
            r.code == 0 || r.code == 1,
            "scan failed ({}): {}{}",
            r.code,
            r.stdout,
            r.stderr
        );
        (r.code, r.json())
    }
}

fn findings(v: &Value) -> Vec<(String, String, Option<u64>)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["file"].as_str().unwrap().to_string(),
                f["line"].as_u64(),
            )
        })
        .collect()
}

fn has(v: &Value, rule: &str, file: &str, line: Option<u64>) -> bool {
    findings(v)
        .iter()
        .any(|(r, f, l)| r == rule && f == file && *l == line)
}

#[test]
fn first_commit_with_secrets_is_blocked_under_enforce_only() {
    let repo = Repo::new();
    let (gh, ak) = (ghp(1), akia(2));
    repo.write(
        "src/config.py",
        &format!("import os\n\nGITHUB = \"{gh}\"\nAWS_ID = '{ak}'\n"),
    )
    .write("README.md", "# demo\n")
    .add_all();
    let (code, v) = repo.scan_json(&[]);
    assert_eq!(code, 0, "without --enforce a scan is advisory");
    assert_eq!(v["verdict"], "deny");
    assert!(has(&v, "github-token", "src/config.py", Some(3)), "{v:#}");
    assert!(
        has(&v, "aws-access-key-id", "src/config.py", Some(4)),
        "{v:#}"
    );
    assert_eq!(v["findings"][0]["decidedBy"][0], "std-commit-secret");
    let (code, _) = repo.scan_json(&["--enforce"]);
    assert_eq!(code, 1, "a denied finding blocks under --enforce");

    // No output format ever carries the secret itself.
    for format in ["text", "json", "sarif", "github"] {
        let r = repo.scan(&["--format", format]);
        for secret in [&gh, &ak] {
            assert!(
                !r.stdout.contains(secret.as_str()) && !r.stderr.contains(secret.as_str()),
                "{format} output leaks a secret:\n{}",
                r.stdout
            );
        }
    }
    let col = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "github-token")
        .map(|f| f["column"].as_u64());
    assert_eq!(
        col,
        Some(Some(11)),
        "column of the token in `GITHUB = \"…\"`"
    );
}

#[test]
fn a_clean_change_passes_and_text_groups_by_file() {
    let repo = Repo::new();
    repo.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    )
    .write(
        "README.md",
        "# demo\n\nA checksum: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
    )
    .add_all();
    let r = repo.scan(&["--enforce"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("allow"), "{}", r.stdout);

    let bad = Repo::new();
    bad.write("a.py", &format!("TOKEN = \"{}\"\n", ghp(7)))
        .write("b/.env", "X=1\n")
        .add_all();
    let r = bad.scan(&[]);
    let a = r
        .stdout
        .find("\na.py\n")
        .or_else(|| r.stdout.starts_with("a.py\n").then_some(0));
    let b = r.stdout.find("b/.env\n");
    assert!(
        a.is_some() && b.is_some(),
        "grouped per file:\n{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("this commit would be blocked with --enforce"),
        "{}",
        r.stdout
    );
}

#[test]
fn only_added_lines_count_against_head() {
    let repo = Repo::new();
    let old = ghp(11);
    repo.write(
        "app.js",
        &format!("const a = 1;\nconst legacy = \"{old}\";\nconst b = 2;\n"),
    );
    repo.commit("history already holds a token");
    // The old token is untouched; a new one is added on line 4.
    let new = ghp(12);
    repo.write(
        "app.js",
        &format!(
            "const a = 1;\nconst legacy = \"{old}\";\nconst b = 2;\nconst fresh = \"{new}\";\n"
        ),
    )
    .add_all();
    let (_, v) = repo.scan_json(&[]);
    assert_eq!(
        findings(&v),
        vec![("github-token".into(), "app.js".into(), Some(4))],
        "{v:#}"
    );
}

#[test]
fn the_index_is_scanned_not_the_working_tree() {
    let repo = Repo::new();
    repo.write("k.txt", &format!("key {}\n", akia(21)))
        .add_all();
    repo.write("k.txt", "nothing to see\n");
    let (_, v) = repo.scan_json(&[]);
    assert!(
        has(&v, "aws-access-key-id", "k.txt", Some(1)),
        "staged content counts: {v:#}"
    );

    let repo = Repo::new();
    repo.write("k.txt", "clean\n").add_all();
    repo.write("k.txt", &format!("key {}\n", akia(22)));
    let (_, v) = repo.scan_json(&[]);
    assert!(
        findings(&v).is_empty(),
        "unstaged edits are not committed: {v:#}"
    );
}

#[test]
fn blocked_files_by_name_and_content() {
    let repo = Repo::new();
    repo.write(".env", "A=1\n")
        .write("svc/.env.production", "A=1\n")
        .write(".env.example", "A=\n")
        .write("web/.env.sample", "A=\n")
        .write("deploy/id_rsa", "not even a key\n")
        .write(
            "certs/ca.pem",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .write(".npmrc", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n")
        .write(
            "pkg/.npmrc",
            &format!("//registry.npmjs.org/:_authToken={}\n", fake(3, 36, ALNUM)),
        )
        .write(".aws/credentials", "[default]\n")
        .add_all();
    let (code, v) = repo.scan_json(&["--enforce"]);
    assert_eq!(code, 1);
    for (rule, file) in [
        ("env-file", ".env"),
        ("env-file", "svc/.env.production"),
        ("private-key-file", "deploy/id_rsa"),
        ("npmrc-token", "pkg/.npmrc"),
        ("credentials-file", ".aws/credentials"),
    ] {
        assert!(has(&v, rule, file, None), "{rule} on {file}: {v:#}");
    }
    let files: Vec<String> = findings(&v).into_iter().map(|f| f.1).collect();
    for clean in [".env.example", "web/.env.sample", "certs/ca.pem", ".npmrc"] {
        assert!(
            !files.iter().any(|f| f == clean),
            "{clean} is not blocked: {v:#}"
        );
    }
}

#[test]
fn renames_deletions_and_scope() {
    let repo = Repo::new();
    repo.write("src/a.rs", "fn a() {}\n")
        .write("docs/old.md", "old\n")
        .write("tools/x.sh", "echo\n");
    repo.commit("base");
    repo.git(&["mv", "docs/old.md", "src/new.md"]);
    repo.git(&["rm", "-q", "tools/x.sh"]);
    repo.write("src/b.rs", "fn b() {}\n").add_all();
    let scope = repo.path().join("task.scope");
    std::fs::write(&scope, "# the task may touch src only\nsrc/**\n").unwrap();
    let (code, v) = repo.scan_json(&["--enforce", "--scope", scope.to_str().unwrap()]);
    assert_eq!(code, 1);
    let scoped: Vec<String> = findings(&v)
        .into_iter()
        .filter(|f| f.0 == "out-of-scope")
        .map(|f| f.1)
        .collect();
    assert_eq!(
        scoped,
        vec!["docs/old.md".to_string(), "tools/x.sh".to_string()],
        "{v:#}"
    );

    // A rename into a blocked name is blocked.
    let repo = Repo::new();
    repo.write("notes.txt", "A=1\n");
    repo.commit("base");
    repo.git(&["mv", "notes.txt", ".env"]);
    let (_, v) = repo.scan_json(&[]);
    assert!(has(&v, "env-file", ".env", None), "{v:#}");

    // A scope file with a bad glob stops the scan with its line.
    let bad = repo.path().join("bad.scope");
    std::fs::write(&bad, "src/**\nsrc/[oops\n").unwrap();
    let r = repo.scan(&["--scope", bad.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(":2:"), "{}", r.stderr);
}

#[test]
fn unmerged_entries_fail_closed_naming_the_path() {
    let repo = Repo::new();
    repo.write("f.txt", "base\n");
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("f.txt", "theirs\n");
    repo.commit("theirs");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("f.txt", "ours\n");
    repo.commit("ours");
    let out = Command::new("git")
        .current_dir(repo.path())
        .args(["merge", "-q", "other"])
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the merge conflicts");
    let r = repo.scan(&["--enforce"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("f.txt") && r.stderr.contains("unmerged"),
        "{}",
        r.stderr
    );
}

#[test]
fn binary_oversize_symlink_submodule_and_non_utf8_paths() {
    let repo = Repo::new();
    // Binary: token-shaped bytes inside a blob with NULs are not text findings.
    let mut bin = vec![0u8, 1, 2, 3];
    bin.extend_from_slice(ghp(31).as_bytes());
    std::fs::write(repo.path().join("blob.bin"), &bin).unwrap();
    // A symlink is scanned as its target text.
    std::os::unix::fs::symlink(format!("/keys/{}", akia(32)), repo.path().join("link")).unwrap();
    // A big file.
    repo.write("big.txt", &"x".repeat(4096));
    // A non-UTF-8 file name that is an env file.
    let name = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"caf\xe9.env");
    std::fs::write(repo.path().join(name), "A=1\n").unwrap();
    repo.add_all();
    // A submodule gitlink, staged directly.
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        "160000,1111111111111111111111111111111111111111,vendor/lib",
    ]);
    let (code, v) = repo.scan_json(&["--enforce", "--max-blob-bytes", "1024"]);
    assert_eq!(code, 1, "{v:#}");
    let f = findings(&v);
    assert!(
        !f.iter().any(|x| x.1 == "blob.bin"),
        "binary blobs give no text findings: {v:#}"
    );
    assert!(has(&v, "aws-access-key-id", "link", Some(1)), "{v:#}");
    assert!(has(&v, "oversize-blob", "big.txt", None), "{v:#}");
    assert!(has(&v, "env-file", "caf\u{FFFD}.env", None), "{v:#}");
    assert!(
        !f.iter().any(|x| x.1 == "vendor/lib"),
        "a gitlink has no content: {v:#}"
    );
    // .gitignore, blob.bin, link, big.txt, the env file and the gitlink.
    assert_eq!(v["scanned"]["files"], 6, "{v:#}");

    // The submodule path is still a touched path for scope.
    let scope = repo.path().join("s.scope");
    std::fs::write(&scope, "*\n").unwrap();
    let (_, v) = repo.scan_json(&["--scope", scope.to_str().unwrap()]);
    assert!(has(&v, "out-of-scope", "vendor/lib", None), "{v:#}");
}

#[test]
fn stubs_only_in_added_code_lines() {
    let repo = Repo::new();
    repo.write("src/old.rs", "fn old() { todo!() }\n");
    repo.commit("legacy stub already in history");
    repo.write(
        "src/lib.rs",
        "pub fn f() -> u32 {\n    todo!()\n}\n\npub fn lint_message() -> &'static str {\n    \"avoid todo!() in commits\"\n}\n",
    )
    .write(
        "app/models.py",
        "import abc\n\nclass Base(abc.ABC):\n    @abc.abstractmethod\n    def run(self):\n        raise NotImplementedError\n\ndef handler(event):\n    raise NotImplementedError\n",
    )
    .write("web/api.ts", "export function load() {\n  // ... rest of code ...\n}\n")
    .write("docs/notes.md", "TODO: implement the docs\n")
    .add_all();
    let (code, v) = repo.scan_json(&["--enforce"]);
    assert_eq!(code, 1);
    let got: Vec<(String, String, Option<u64>)> = findings(&v)
        .into_iter()
        .filter(|f| !f.0.starts_with("env"))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "python-not-implemented".into(),
                "app/models.py".into(),
                Some(9)
            ),
            ("rust-todo".into(), "src/lib.rs".into(), Some(2)),
            ("elided-code".into(), "web/api.ts".into(), Some(2)),
        ],
        "{v:#}"
    );
}

#[test]
fn inline_markers_and_baselines() {
    let repo = Repo::new();
    let t1 = ghp(41);
    let t2 = ghp(42);
    repo.write(
        "fixtures/tokens.txt",
        &format!("{t1} # contextos:allow github-token\n{t2} # contextos:allow aws-access-key-id\n"),
    )
    .add_all();
    let (_, v) = repo.scan_json(&[]);
    assert_eq!(
        findings(&v),
        vec![("github-token".into(), "fixtures/tokens.txt".into(), Some(2))],
        "a marker must name the rule: {v:#}"
    );
    assert_eq!(v["suppressed"][0]["suppressedBy"]["by"], "inline");
    let fp = v["findings"][0]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();

    let baseline = format!(
        "[[finding]]\nfingerprint = \"{fp}\"\nrule = \"github-token\"\nreason = \"revoked test token\"\nexpires = 2999-12-31\n"
    );
    repo.write(".contextos/scan-baseline.toml", &baseline);
    let (code, v) = repo.scan_json(&["--enforce"]);
    assert_eq!(code, 0, "accepted by the baseline: {v:#}");
    assert_eq!(v["suppressed"].as_array().unwrap().len(), 2);

    let expired = baseline.replace("2999-12-31", "2001-01-01");
    repo.write(".contextos/scan-baseline.toml", &expired);
    let r = repo.scan(&["--enforce"]);
    assert_eq!(
        r.code, 2,
        "an expired entry is an error: {}{}",
        r.stdout, r.stderr
    );
    assert!(
        r.stderr.contains("scan-baseline.toml:") && r.stderr.contains("expired"),
        "{}",
        r.stderr
    );

    let missing = repo.scan(&["--baseline", "nope.toml"]);
    assert_eq!(missing.code, 2, "an explicit baseline must exist");
}

#[test]
fn worktrees_and_outside_a_repository() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit("base");
    let wt: PathBuf = repo.path().join("../").join(format!(
        "{}-wt",
        repo.path().file_name().unwrap().to_string_lossy()
    ));
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "linked",
        wt.to_str().unwrap(),
    ]);
    std::fs::write(wt.join("b.py"), format!("K = \"{}\"\n", akia(51))).unwrap();
    git_in(&wt, &["add", "b.py"]);
    let r = contextos(&wt, &["scan", "--staged", "--enforce", "--format", "json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(has(&r.json(), "aws-access-key-id", "b.py", Some(1)));
    // The main worktree's index is untouched by the linked one.
    let (code, _) = repo.scan_json(&["--enforce"]);
    assert_eq!(code, 0);
    let _ = std::fs::remove_dir_all(&wt);

    let plain = tempfile::tempdir().unwrap();
    let r = contextos(plain.path(), &["scan", "--staged"]);
    assert_eq!(r.code, 2, "no repository: could not inspect");
    assert!(r.stderr.contains("no git repository"), "{}", r.stderr);
}

#[test]
fn sarif_is_valid_and_github_annotations_carry_locations() {
    let repo = Repo::new();
    repo.write("s.py", &format!("x = \"{}\"\n", ghp(61)))
        .write(".env", "A=1\n")
        .add_all();
    let r = repo.scan(&["--format", "sarif"]);
    assert_eq!(r.code, 0);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let schema: Value =
        serde_json::from_str(include_str!("schemas/sarif-schema-2.1.0.json")).unwrap();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "SARIF violations: {errors:?}\n{}",
        r.stdout
    );
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|x| x["level"] == "error"));

    let r = repo.scan(&["--format", "github"]);
    assert!(
        r.stdout.contains("::error file=s.py,line=1,col=6,"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("::error file=.env,title="),
        "{}",
        r.stdout
    );
}

#[test]
fn commit_rules_in_the_project_decide_findings() {
    let repo = Repo::new();
    let pol = repo.path().join(".contextos/policies");
    std::fs::create_dir_all(&pol).unwrap();
    // Stubs only need review in this project; the stdlib deny is switched off.
    std::fs::write(
        pol.join("main.policy"),
        "language 1;\n\n@id(\"stubs-need-review\")\nask commit when commit.kind == \"stub\"\n    because \"Stubs are reviewed here.\";\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("contextos.toml"),
        "[policies]\ndisable = [\"std-commit-stub\"]\n",
    )
    .unwrap();
    repo.write("src/lib.rs", "fn f() { todo!() }\n").add_all();
    let (code, v) = repo.scan_json(&["--enforce"]);
    assert_eq!(code, 0, "ask does not block: {v:#}");
    assert_eq!(v["verdict"], "ask");
    assert_eq!(v["findings"][0]["decidedBy"][0], "stubs-need-review");
}

#[test]
fn unchanged_directories_are_skipped_but_every_change_is_seen() {
    // After a commit the index's cache-tree marks every directory as matching HEAD; the
    // scan skips those trees. Changes in a few directories must still all be seen.
    let repo = Repo::new();
    for d in 0..12 {
        for f in 0..5 {
            repo.write(&format!("pkg{d}/sub{f}/m.py"), &format!("X = {d}{f}\n"));
        }
    }
    repo.write("old/gone.txt", "bye\n");
    repo.commit("base");
    let (code, v) = repo.scan_json(&["--enforce"]);
    assert_eq!(
        (code, v["scanned"]["files"].as_u64()),
        (0, Some(0)),
        "nothing staged: {v:#}"
    );

    repo.write("pkg7/sub3/m.py", &format!("X = 73\nK = \"{}\"\n", ghp(71)))
        .write("fresh/dir/n.py", &format!("T = \"{}\"\n", akia(72)));
    repo.git(&["rm", "-q", "old/gone.txt"]);
    repo.add_all();
    let scope = repo.path().join("s.scope");
    std::fs::write(&scope, "pkg*/**\nfresh/**\n").unwrap();
    let (code, v) = repo.scan_json(&["--enforce", "--scope", scope.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("aws-access-key-id".into(), "fresh/dir/n.py".into(), Some(1)),
            ("out-of-scope".into(), "old/gone.txt".into(), None),
            ("github-token".into(), "pkg7/sub3/m.py".into(), Some(2)),
        ],
        "{v:#}"
    );
    assert_eq!(v["scanned"]["files"], 3, "{v:#}");
}

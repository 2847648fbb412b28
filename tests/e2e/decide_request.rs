//! `decide --request`: one JSON request or a JSONL batch; unknown roles fail closed in
//! `decide`, `explain` and `apply` as they do in the hook.

use super::{contextos, project, DESIGN};
use std::io::Write as _;
use std::process::{Command, Stdio};

#[test]
fn decide_request_answers_one_document_and_a_jsonl_batch() {
    let p = project(Some(DESIGN));
    let one = p.path().join("one.json");
    std::fs::write(
        &one,
        "{\n  \"domain\": \"path\",\n  \"op\": \"write\",\n  \"path\": \"infra/prod.pem\"\n}\n",
    )
    .unwrap();
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "decide",
            "--request",
            one.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["schemaVersion"], 1);
    assert_eq!(j["decidedBy"][0]["id"], "no-secret-writes");

    let batch = p.path().join("batch.jsonl");
    std::fs::write(
        &batch,
        concat!(
            "{\"domain\":\"path\",\"op\":\"write\",\"path\":\"Cargo.lock\",\"role\":\"maintainer\"}\n",
            "\n",
            "{\"domain\":\"exec\",\"argv\":[\"cargo\",\"test\",\"-p\",\"core\"]}\n",
            "{\"domain\":\"exec\",\"shell\":\"git push --force origin main\"}\n",
        ),
    )
    .unwrap();
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "decide",
            "--request",
            batch.to_str().unwrap(),
        ],
    );
    assert_eq!(
        r.code, 1,
        "the strongest verdict decides the exit: {}",
        r.stdout
    );
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert_eq!(lines[0]["verdict"], "allow");
    assert_eq!(lines[1]["verdict"], "allow");
    assert_eq!(lines[1]["parts"][0]["obligations"][0]["name"], "sandbox");
    assert_eq!(lines[2]["verdict"], "deny");
    assert!(lines.iter().all(|l| l["schemaVersion"] == 1));

    // From stdin.
    let mut child = Command::new(env!("CARGO_BIN_EXE_contextos"))
        .args(["--project"])
        .arg(p.path())
        .args(["decide", "--request", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"domain\":\"exec\",\"argv\":[\"make\",\"deploy\"]}")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "ask exits 3");

    // A line that is not a request names its line.
    std::fs::write(&batch, "{\"domain\":\"path\",\"op\":\"write\",\"path\":\"a\"}\n{\"domain\":\"path\",\"op\":\"move\",\"path\":\"a\"}\n").unwrap();
    let r = contextos(p.path(), &["decide", "--request", batch.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("batch.jsonl:2"), "{}", r.stderr);
}

#[test]
fn unknown_roles_fail_closed_everywhere() {
    let p = project(Some(DESIGN));
    for args in [
        &[
            "decide", "path", "--op", "write", "src/a.rs", "--role", "reviewr",
        ][..],
        &[
            "explain", "path", "--op", "write", "src/a.rs", "--role", "reviewr",
        ][..],
        &["decide", "exec", "--role", "ghost", "--", "ls"][..],
    ] {
        let r = contextos(p.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("unknown role"), "{}", r.stderr);
    }
    let r = contextos(
        p.path(),
        &[
            "decide", "path", "--op", "write", "src/a.rs", "--role", "reviewr",
        ],
    );
    assert!(
        r.stderr.contains("did you mean `reviewer`?"),
        "{}",
        r.stderr
    );
    // A role block and a role a condition names are both known.
    let r = contextos(
        p.path(),
        &[
            "decide", "path", "--op", "write", "src/a.rs", "--role", "reviewer",
        ],
    );
    assert_eq!(r.code, 1);
    let r = contextos(
        p.path(),
        &[
            "decide",
            "path",
            "--op",
            "write",
            "Cargo.lock",
            "--role",
            "maintainer",
        ],
    );
    assert_eq!(r.code, 0);
    // In a batch, and in apply.
    let batch = p.path().join("r.jsonl");
    std::fs::write(
        &batch,
        "{\"domain\":\"path\",\"op\":\"read\",\"path\":\"a\",\"role\":\"ghost\"}\n",
    )
    .unwrap();
    let r = contextos(p.path(), &["decide", "--request", batch.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "nothing is answered: {}", r.stdout);
    let cs = p.path().join("cs.json");
    std::fs::write(
        &cs,
        r#"{"changes":[{"op":"write","path":"notes.txt","content":"x"}]}"#,
    )
    .unwrap();
    let r = contextos(
        p.path(),
        &["apply", cs.to_str().unwrap(), "--role", "ghost"],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("unknown role"), "{}", r.stderr);
    assert!(!p.path().join("notes.txt").exists());
}

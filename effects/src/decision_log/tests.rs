#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]

use super::append_guard::{GUARD_FILE, GUARD_TIMEOUT};
use super::head::{Head, HEAD_BYTES, HEAD_FILE};
use super::record::{is_hex64, HASH_SUFFIX_LEN};
use super::segments::{list_segments, segment_name};
use super::*;
use crate::safe_fs::sha256_hex;
use crate::user_key::UserKeyError;
use regex::Regex;
use serde_json::{json, Value};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const NOW: &str = "2025-01-02T03:04:05.000000Z";

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    state: PathBuf,
    key: PathBuf,
}

fn fixture() -> Fixture {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    Fixture {
        state: project.path().join(".contextos").join("state"),
        key: home.path().join("contextos").join("log.key"),
        _dirs: (project, home),
    }
}

fn opts(f: &Fixture, rotate_bytes: u64) -> LogOptions {
    LogOptions {
        key_path: Some(f.key.clone()),
        rotate_bytes,
        now: Some(NOW.to_string()),
        guard_timeout: GUARD_TIMEOUT,
    }
}

fn rec(i: usize) -> DecisionRecord {
    DecisionRecord {
        agent: "claude-code".into(),
        event: "PreToolUse".into(),
        tool: "Bash".into(),
        request: json!({"domain": "exec", "argv": ["cargo", "test", "--release"], "n": i}),
        verdict: if i.is_multiple_of(3) { "deny" } else { "allow" }.into(),
        rules: vec![format!("rule-{i}")],
        duration_us: 42,
    }
}

fn fill(f: &Fixture, n: usize, rotate_bytes: u64) -> Vec<LoggedRecord> {
    (1..=n)
        .map(|i| append(&f.state, &rec(i), &opts(f, rotate_bytes)).unwrap())
        .collect()
}

fn active(f: &Fixture) -> PathBuf {
    f.state.join(ACTIVE_FILE)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    if !lines.is_empty() {
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

fn check(f: &Fixture) -> VerifyReport {
    verify(&f.state, Some(&f.key)).unwrap()
}

fn kinds(r: &VerifyReport) -> Vec<ProblemKind> {
    r.problems.iter().map(|p| p.kind).collect()
}

fn assert_clean(r: &VerifyReport, records: u64) {
    assert!(r.problems.is_empty(), "{:#?}", r.problems);
    assert_eq!(r.records, records);
}

#[test]
fn the_head_is_rewritten_in_place_and_never_through_a_symlink() {
    let f = fixture();
    fill(&f, 3, 0);
    let head = f.state.join(HEAD_FILE);
    assert_eq!(std::fs::metadata(&head).unwrap().len(), HEAD_BYTES as u64);
    assert!(verify(&f.state, Some(&f.key)).unwrap().is_valid());
    // A link planted in the head's place: the append refuses and the target is untouched.
    let victim = f.state.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::remove_file(&head).unwrap();
    std::os::unix::fs::symlink(&victim, &head).unwrap();
    assert!(append(&f.state, &rec(4), &opts(&f, 0)).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn constants_and_patterns_are_sound() {
    assert_eq!(GENESIS.len(), 64);
    assert!(is_hex64(GENESIS));
    assert_eq!(segment_name(7), "decisions.000000000007.jsonl");
}

#[test]
fn clean_chain_verifies_and_tails() {
    let f = fixture();
    let written = fill(&f, 10, 0);
    assert_eq!(written[0].prev, GENESIS);
    for pair in written.windows(2) {
        assert_eq!(pair[1].prev, pair[0].hash);
        assert_eq!(pair[1].seq, pair[0].seq + 1);
    }
    let r = check(&f);
    assert_clean(&r, 10);
    assert!(r.head_signed);
    assert_eq!(r.segments, 1);
    assert!(r.warnings.is_empty());
    let last3 = tail(&f.state, 3).unwrap();
    assert_eq!(last3.iter().map(|r| r.seq).collect::<Vec<_>>(), [8, 9, 10]);
    assert_eq!(last3[2], written[9]);
    assert_eq!(tail(&f.state, 100).unwrap().len(), 10);
}

#[test]
fn line_format_follows_the_documented_rule() {
    let f = fixture();
    fill(&f, 2, 0);
    let line = lines(&active(&f)).remove(1);
    assert!(line.starts_with("{\"seq\":2,\"time\":\"2025-01-02T03:04:05.000000Z\",\"agent\":"));
    let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&line)
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 11);
    // Independent recomputation: drop the 75-byte hash suffix, close the object.
    let (body, suffix) = line.split_at(line.len() - HASH_SUFFIX_LEN);
    assert!(suffix.starts_with(",\"hash\":\"") && suffix.ends_with("\"}"));
    let hash = &suffix[9..73];
    assert_eq!(sha256_hex(format!("{body}}}").as_bytes()), hash);
    let head: Head =
        serde_json::from_slice(&std::fs::read(f.state.join(HEAD_FILE)).unwrap()).unwrap();
    assert_eq!(head.seq, 2);
    assert_eq!(head.hash, hash);
    assert_eq!(head.mac.len(), 64);
}

#[test]
fn files_are_private() {
    let f = fixture();
    fill(&f, 1, 0);
    for p in [
        active(&f),
        f.state.join(HEAD_FILE),
        f.state.join(GUARD_FILE),
        f.key.clone(),
    ] {
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", p.display());
    }
    let key_text = std::fs::read_to_string(&f.key).unwrap();
    assert_eq!(key_text.len(), 65);
    assert!(is_hex64(key_text.trim_end()));
}

#[test]
fn edited_verdict_is_a_hash_mismatch_at_that_line() {
    let f = fixture();
    fill(&f, 5, 0);
    let mut ls = lines(&active(&f));
    assert!(ls[1].contains("\"verdict\":\"allow\""));
    ls[1] = ls[1].replacen("\"verdict\":\"allow\"", "\"verdict\":\"allox\"", 1);
    write_lines(&active(&f), &ls);
    let r = check(&f);
    assert_eq!(kinds(&r), [ProblemKind::HashMismatch]);
    assert_eq!(r.problems[0].line, Some(2));
    assert_eq!(r.problems[0].file, active(&f));
    // The head still matches the last record, so appending is possible; the edit stays
    // on record.
    append(&f.state, &rec(6), &opts(&f, 0)).unwrap();
    assert_eq!(kinds(&check(&f)), [ProblemKind::HashMismatch]);
}

#[test]
fn deleted_middle_line_breaks_the_chain() {
    let f = fixture();
    fill(&f, 5, 0);
    let mut ls = lines(&active(&f));
    ls.remove(2);
    write_lines(&active(&f), &ls);
    let r = check(&f);
    assert_eq!(kinds(&r), [ProblemKind::BrokenChain, ProblemKind::SeqGap]);
    assert!(r.problems.iter().all(|p| p.line == Some(3)));
}

#[test]
fn swapped_lines_break_the_chain() {
    let f = fixture();
    fill(&f, 5, 0);
    let mut ls = lines(&active(&f));
    ls.swap(1, 2);
    write_lines(&active(&f), &ls);
    let r = check(&f);
    assert!(kinds(&r).contains(&ProblemKind::BrokenChain));
    assert_eq!(r.problems[0].line, Some(2));
}

#[test]
fn removed_last_line_is_truncation_and_blocks_appends() {
    let f = fixture();
    fill(&f, 5, 0);
    let mut ls = lines(&active(&f));
    ls.pop();
    write_lines(&active(&f), &ls);
    assert_eq!(kinds(&check(&f)), [ProblemKind::Truncated]);
    let err = append(&f.state, &rec(6), &opts(&f, 0)).unwrap_err();
    assert!(matches!(err, LogError::Tampered { .. }), "{err}");
}

#[test]
fn head_rewritten_without_the_key_is_a_bad_mac() {
    let f = fixture();
    let written = fill(&f, 5, 0);
    let mut ls = lines(&active(&f));
    ls.pop();
    write_lines(&active(&f), &ls);
    for mac in [String::new(), "ab".repeat(32)] {
        let forged = json!({"seq": 4, "hash": written[3].hash, "mac": mac});
        std::fs::write(f.state.join(HEAD_FILE), forged.to_string()).unwrap();
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::BadMac], "{:#?}", r.problems);
        assert!(!r.head_signed);
        let err = append(&f.state, &rec(6), &opts(&f, 0)).unwrap_err();
        assert!(matches!(err, LogError::Tampered { .. }), "{err}");
    }
    // A different key is as good as none.
    let other = tempfile::tempdir().unwrap();
    let other_key = other.path().join("log.key");
    append(
        &f.state,
        &rec(6),
        &LogOptions {
            key_path: Some(other_key.clone()),
            ..opts(&f, 0)
        },
    )
    .unwrap_err();
    reseal(
        &f.state,
        &LogOptions {
            key_path: Some(other_key),
            ..opts(&f, 0)
        },
    )
    .unwrap();
    assert_eq!(kinds(&check(&f)), [ProblemKind::BadMac]);
}

#[test]
fn rotation_keeps_one_chain_across_segments() {
    let f = fixture();
    let line_len = {
        let probe = fixture();
        fill(&probe, 1, 0);
        std::fs::metadata(active(&probe)).unwrap().len()
    };
    let written = fill(&f, 20, line_len * 3 + 10);
    let segs = list_segments(&f.state).unwrap();
    assert!(segs.len() >= 5, "{segs:?}");
    assert_eq!(segs[0].0, 1);
    for (seq, path) in &segs {
        let first: LoggedRecord = serde_json::from_str(&lines(path)[0]).unwrap();
        assert_eq!(first.seq, *seq);
        assert!(std::fs::metadata(path).unwrap().len() <= line_len * 3 + 10);
    }
    // The first record of every later file chains to the last of the one before.
    let first_active: LoggedRecord = serde_json::from_str(&lines(&active(&f))[0]).unwrap();
    assert_eq!(
        first_active.prev,
        written[first_active.seq as usize - 2].hash
    );
    let r = check(&f);
    assert_clean(&r, 20);
    assert_eq!(r.segments, segs.len() + 1);
    let t = tail(&f.state, 7).unwrap();
    assert_eq!(
        t.iter().map(|r| r.seq).collect::<Vec<_>>(),
        (14..=20).collect::<Vec<_>>()
    );
    assert_eq!(tail(&f.state, 50).unwrap(), written);
}

#[test]
fn deleting_the_oldest_segment_is_detected() {
    let f = fixture();
    fill(&f, 12, 1200);
    let segs = list_segments(&f.state).unwrap();
    assert!(segs.len() >= 2);
    std::fs::remove_file(&segs[0].1).unwrap();
    let r = check(&f);
    assert_eq!(kinds(&r), [ProblemKind::BrokenChain]);
    assert_eq!(r.problems[0].file, segs[1].1);
    assert_eq!(r.problems[0].line, Some(1));
}

#[test]
fn deleting_a_middle_segment_is_detected() {
    let f = fixture();
    fill(&f, 12, 1200);
    let segs = list_segments(&f.state).unwrap();
    assert!(segs.len() >= 3);
    std::fs::remove_file(&segs[1].1).unwrap();
    let r = check(&f);
    assert_eq!(kinds(&r), [ProblemKind::BrokenChain, ProblemKind::SeqGap]);
    assert_eq!(r.problems[0].file, segs[2].1);
}

#[test]
fn deleting_the_active_file_is_truncation() {
    let f = fixture();
    fill(&f, 12, 1200);
    std::fs::remove_file(active(&f)).unwrap();
    assert_eq!(kinds(&check(&f)), [ProblemKind::Truncated]);
    append(&f.state, &rec(13), &opts(&f, 1200)).unwrap_err();
}

#[test]
fn empty_state_is_a_valid_empty_log() {
    let f = fixture();
    let r = check(&f);
    assert_clean(&r, 0);
    assert_eq!(r.segments, 0);
    assert!(tail(&f.state, 5).unwrap().is_empty());
    // Verification never creates the key.
    assert!(!f.key.exists());
}

#[test]
fn unsigned_mode_works_but_says_what_it_cannot_do() {
    let f = fixture();
    let unsigned = LogOptions {
        key_path: None,
        ..opts(&f, 0)
    };
    for i in 1..=3 {
        append(&f.state, &rec(i), &unsigned).unwrap();
    }
    let r = verify(&f.state, None).unwrap();
    assert_clean(&r, 3);
    assert!(!r.head_signed);
    assert!(r.warnings[0].contains("only as strong as the head file"));
    // With a key, an unsigned head is indistinguishable from a rewritten one.
    assert_eq!(kinds(&check(&f)), [ProblemKind::BadMac]);
    append(&f.state, &rec(4), &opts(&f, 0)).unwrap_err();
    // Signed → unsigned is refused too, and a missing head is recovered without a key.
    reseal(&f.state, &opts(&f, 0)).unwrap();
    append(&f.state, &rec(4), &unsigned).unwrap_err();
    std::fs::remove_file(f.state.join(HEAD_FILE)).unwrap();
    append(&f.state, &rec(4), &unsigned).unwrap();
    assert_clean(&verify(&f.state, None).unwrap(), 4);
}

#[test]
fn a_lost_head_update_is_adopted() {
    let f = fixture();
    fill(&f, 3, 0);
    let old_head = std::fs::read(f.state.join(HEAD_FILE)).unwrap();
    append(&f.state, &rec(4), &opts(&f, 0)).unwrap();
    std::fs::write(f.state.join(HEAD_FILE), old_head).unwrap();
    assert_eq!(kinds(&check(&f)), [ProblemKind::HeadMismatch]);
    append(&f.state, &rec(5), &opts(&f, 0)).unwrap();
    assert_clean(&check(&f), 5);
}

#[test]
fn a_torn_last_line_is_cut_and_a_whole_one_kept() {
    let f = fixture();
    fill(&f, 3, 0);
    let mut file = OpenOptions::new().append(true).open(active(&f)).unwrap();
    file.write_all(b"{\"seq\":4,\"ti").unwrap();
    let r = check(&f);
    assert_eq!(kinds(&r), [ProblemKind::Malformed]);
    assert_eq!(r.problems[0].line, Some(4));
    append(&f.state, &rec(4), &opts(&f, 0)).unwrap();
    assert_clean(&check(&f), 4);

    // Only the newline of a complete record missing: the record stays.
    let len = std::fs::metadata(active(&f)).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(active(&f))
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    append(&f.state, &rec(5), &opts(&f, 0)).unwrap();
    assert_clean(&check(&f), 5);
}

#[test]
fn a_deleted_head_blocks_a_signed_log_until_resealed() {
    let f = fixture();
    fill(&f, 3, 0);
    std::fs::remove_file(f.state.join(HEAD_FILE)).unwrap();
    assert_eq!(kinds(&check(&f)), [ProblemKind::MissingHead]);
    let err = append(&f.state, &rec(4), &opts(&f, 0)).unwrap_err();
    assert!(matches!(err, LogError::Tampered { .. }), "{err}");
    assert_eq!(reseal(&f.state, &opts(&f, 0)).unwrap(), 3);
    assert_clean(&check(&f), 3);
    append(&f.state, &rec(4), &opts(&f, 0)).unwrap();
    assert_clean(&check(&f), 4);
}

#[test]
fn a_crash_before_the_first_head_is_recovered() {
    let f = fixture();
    fill(&f, 1, 0);
    std::fs::remove_file(f.state.join(HEAD_FILE)).unwrap();
    append(&f.state, &rec(2), &opts(&f, 0)).unwrap();
    assert_clean(&check(&f), 2);
}

#[test]
fn reseal_refuses_a_log_with_edited_records() {
    let f = fixture();
    fill(&f, 3, 0);
    let mut ls = lines(&active(&f));
    ls[0] = ls[0].replacen("claude-code", "claude-codf", 1);
    write_lines(&active(&f), &ls);
    let err = reseal(&f.state, &opts(&f, 0)).unwrap_err();
    assert!(err.to_string().contains("HashMismatch"), "{err}");
}

#[test]
fn a_group_readable_key_is_refused() {
    let f = fixture();
    fill(&f, 1, 0);
    std::fs::set_permissions(&f.key, std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = append(&f.state, &rec(2), &opts(&f, 0)).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::Key(UserKeyError::Permissions { mode: 0o640, .. })
        ),
        "{err}"
    );
}

#[test]
fn malformed_line_is_reported_once() {
    let f = fixture();
    fill(&f, 4, 0);
    let mut ls = lines(&active(&f));
    ls[1] = "not json".to_string();
    write_lines(&active(&f), &ls);
    let r = check(&f);
    assert_eq!(kinds(&r), [ProblemKind::Malformed]);
    assert_eq!(r.problems[0].line, Some(2));
}

#[test]
fn an_append_without_a_given_time_records_the_clock() {
    let f = fixture();
    let logged = append(
        &f.state,
        &rec(1),
        &LogOptions {
            now: None,
            ..opts(&f, 0)
        },
    )
    .unwrap();
    let shape = Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$").unwrap();
    assert!(shape.is_match(&logged.time), "{}", logged.time);
    assert!(logged.time.as_str() > "2024");
}

/// Each entry: the text as the agent sent it, and the secret parts that must vanish.
fn secret_samples() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("git push https://ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5@github.com/o/r", vec!["aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"]),
        ("token gho_16C7e42F292c6912E7710c838347Ae178B4a", vec!["16C7e42F292c6912E7710c838347Ae178B4a"]),
        ("ghu_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", vec!["AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"]),
        ("ghs_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210", vec!["ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210"]),
        ("ghr_1234567890abcdefghijABCDEFGHIJklmnop", vec!["1234567890abcdefghijABCDEFGHIJklmnop"]),
        ("gh auth login github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOP", vec!["11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOP"]),
        ("aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", vec!["IOSFODNN7EXAMPLE"]),
        ("creds ASIAY34FZKBOKMUTVV7A expire", vec!["Y34FZKBOKMUTVV7A"]),
        ("slack xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx now", vec!["1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"]),
        ("openai sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", vec!["abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL"]),
        ("openai sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90_-xyz", vec!["Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90_-xyz"]),
        ("claude sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGh", vec!["api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGh"]),
        ("stripe sk_live_51H8abcdefghijklmnopqrstuv", vec!["51H8abcdefghijklmnopqrstuv"]),
        ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", vec!["SyA1234567890abcdefghijklmnopqrstuv"]),
        ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", vec!["hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]),
        ("cat > id <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nQyNTUxOQAAACBcRkUwbGhNOW1yQnVkZ0dFWUNKeXZF\n-----END OPENSSH PRIVATE KEY-----\nEOF", vec!["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "QyNTUxOQAAACBcRkUwbGhNOW1yQnVkZ0dFWUNKeXZF"]),
        ("echo '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAunterminatedkeymaterial", vec!["MIIEowIBAAKCAQEAunterminatedkeymaterial"]),
        ("curl -H 'Authorization: Bearer opaque-token-value-123456' https://api.example.com", vec!["opaque-token-value-123456"]),
        ("curl -H \"Authorization: Basic dXNlcjpodW50ZXIy\" https://x", vec!["dXNlcjpodW50ZXIy"]),
        ("git clone https://alice:s3cr3tPassw0rd@example.com/repo.git", vec!["s3cr3tPassw0rd"]),
        ("psql postgres://app:p@ss:w0rd@db:5432/prod", vec!["p@ss:w0rd", "ss:w0rd"]),
        ("DB_PASSWORD=hunter2hunter2 ./run", vec!["hunter2hunter2"]),
        ("mysql --password correcthorsebattery -e 'select 1'", vec!["correcthorsebattery"]),
        ("deploy --token=tok3nvalue99 --yes", vec!["tok3nvalue99"]),
        ("export MY_API_KEY=\"quoted secret value\"", vec!["quoted secret value"]),
        ("config.yaml: client_secret: 'yamlSecretValue'", vec!["yamlSecretValue"]),
        ("{\"apiKey\": \"jsonInlineKey123\"}", vec!["jsonInlineKey123"]),
        ("curl -u admin:curlPassw0rd https://x", vec!["curlPassw0rd"]),
        ("https://api.example.com/v1?api_key=queryKey777&x=1", vec!["queryKey777"]),
    ]
}

#[test]
fn masking_never_writes_a_secret_and_keeps_ordinary_text() {
    let f = fixture();
    let samples = secret_samples();
    let mut request = json!({
        "domain": "exec",
        "command": "cargo test --release && rm -rf target",
        "argv": ["mysql", "--password", "argvSecretPw1", "-u", "root:argvUserPw2", "--release"],
        "headers": ["Authorization:", "Bearer", "splitBearerToken99"],
        "env": {"GITHUB_TOKEN": "envTokenValue42", "HOME": "/home/alice", "NPM_TOKEN": "$NPM_TOKEN"},
        "samples": samples.iter().map(|(text, _)| *text).collect::<Vec<_>>(),
    });
    request["nested"] = json!([{"deep": [samples[0].0]}]);
    let logged = append(
        &f.state,
        &DecisionRecord { request, ..rec(1) },
        &opts(&f, 0),
    )
    .unwrap();
    let file = std::fs::read_to_string(active(&f)).unwrap();
    let extra = [
        "argvSecretPw1",
        "argvUserPw2",
        "splitBearerToken99",
        "envTokenValue42",
    ];
    for secret in samples.iter().flat_map(|(_, s)| s.iter()).chain(&extra) {
        assert!(!file.contains(secret), "{secret} leaked into {file}");
    }
    for (text, _) in &samples {
        assert!(!file.contains(&serde_json::to_string(text).unwrap()[1..text.len() - 1]));
    }
    for ordinary in [
        "cargo test --release && rm -rf target",
        "\"--release\"",
        "/home/alice",
        "$NPM_TOKEN",
        "\"mysql\",\"--password\"",
        "git clone https://alice:",
        "@example.com/repo.git",
        "ghp_****",
        "sk-ant-****",
        "AKIA****",
        "root:****",
        "\"Authorization:\",\"Bearer\",\"****",
    ] {
        assert!(file.contains(ordinary), "{ordinary} missing from {file}");
    }
    assert_eq!(
        logged.request["command"],
        "cargo test --release && rm -rf target"
    );
    assert_clean(&check(&f), 1);
}

#[test]
fn concurrent_appends_form_one_chain() {
    let f = Arc::new(fixture());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                for i in 0..50 {
                    append(&f.state, &rec(t * 1000 + i), &opts(&f, 0)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let r = check(&f);
    assert_clean(&r, 400);
    assert!(r.head_signed);
    let seqs: Vec<u64> = lines(&active(&f))
        .iter()
        .map(|l| serde_json::from_str::<LoggedRecord>(l).unwrap().seq)
        .collect();
    assert_eq!(seqs, (1..=400).collect::<Vec<_>>());
}

#[test]
fn readers_never_see_half_an_append() {
    let f = Arc::new(fixture());
    fill(&f, 1, 0);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..3)
        .map(|t| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                for i in 0..30 {
                    append(&f.state, &rec(t * 1000 + i), &opts(&f, 3000)).unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let (f, done) = (Arc::clone(&f), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut rounds = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) || rounds == 0 {
                let r = check(&f);
                assert!(r.problems.is_empty(), "{:#?}", r.problems);
                let t = tail(&f.state, 5).unwrap();
                assert!(t.windows(2).all(|w| w[1].prev == w[0].hash));
                rounds += 1;
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    reader.join().unwrap();
    assert_clean(&check(&f), 91);
}

#[test]
fn concurrent_appends_with_rotation_form_one_chain() {
    let f = Arc::new(fixture());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                for i in 0..25 {
                    append(&f.state, &rec(t * 1000 + i), &opts(&f, 4000)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let r = check(&f);
    assert_clean(&r, 100);
    assert!(r.segments > 3);
}

//! The execution boundary on the real Docker Engine: every guarantee is probed from
//! inside a sandbox session that `contextos run` started, and a negative control runs
//! the same probes through the docker CLI without the hardening to show they can fail.
//! A session's `/workspace` is writable; what a probe writes there comes back to the
//! host only through the journal.
//!
//! No registry is reachable, so the probe image is assembled here from host binaries
//! (dash, coreutils, grep and the libraries `ldd` names), plus a setuid-root copy of
//! `id`, and imported with `docker import`. The tar is deterministic, so the image tag
//! (derived from its sha256) is reused across runs instead of piling up.

use super::{contextos, project, Run};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const BINARIES: &[&str] = &[
    "dash", "cat", "id", "ls", "dd", "cp", "mkdir", "rm", "sleep", "head", "tr", "touch", "grep",
    "true", "wc", "chmod", "ln", "mv",
];

pub(crate) fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("the docker CLI is needed for these tests: {e}"))
}

fn which(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!("{name} not found on the host");
}

/// Shared libraries (and the loader) a binary needs, as `ldd` lists them.
fn libraries(bin: &Path) -> Vec<PathBuf> {
    let out = Command::new("ldd")
        .arg(bin)
        .output()
        .unwrap_or_else(|e| panic!("ldd: {e}"));
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

fn append(
    tar: &mut tar::Builder<Vec<u8>>,
    path: &str,
    data: &[u8],
    mode: u32,
    kind: tar::EntryType,
) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_size(data.len() as u64);
    tar.append_data(&mut h, path.trim_start_matches('/'), data)
        .unwrap_or_else(|e| panic!("tar {path}: {e}"));
}

fn rootfs_tar() -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut bins = Vec::new();
    for b in BINARIES {
        let p = which(b);
        files.extend(libraries(&p));
        bins.push((b.to_string(), p));
    }
    let mut dirs: BTreeSet<String> = ["/bin", "/etc", "/tmp", "/lib", "/lib64", "/usr", "/usr/lib"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for f in &files {
        let mut d = f.parent();
        while let Some(p) = d {
            if p != Path::new("/") {
                dirs.insert(p.display().to_string());
            }
            d = p.parent();
        }
    }
    for d in &dirs {
        let mode = if d == "/tmp" { 0o1777 } else { 0o755 };
        append(
            &mut tar,
            &format!("{d}/"),
            &[],
            mode,
            tar::EntryType::Directory,
        );
    }
    for f in &files {
        let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        append(
            &mut tar,
            &f.display().to_string(),
            &data,
            0o755,
            tar::EntryType::Regular,
        );
    }
    for (name, path) in &bins {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let target = if name == "dash" { "/bin/sh" } else { "" };
        let dest = if target.is_empty() {
            format!("/bin/{name}")
        } else {
            target.to_string()
        };
        append(&mut tar, &dest, &data, 0o755, tar::EntryType::Regular);
        if name == "id" {
            // A setuid-root binary: without no-new-privileges it runs with euid 0.
            append(
                &mut tar,
                "/bin/suid-id",
                &data,
                0o4755,
                tar::EntryType::Regular,
            );
        }
    }
    append(
        &mut tar,
        "/etc/passwd",
        b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n",
        0o644,
        tar::EntryType::Regular,
    );
    append(
        &mut tar,
        "/etc/group",
        b"root:x:0:\nnogroup:x:65534:\n",
        0o644,
        tar::EntryType::Regular,
    );
    tar.into_inner().unwrap_or_else(|e| panic!("tar: {e}"))
}

/// The probe image, imported once per content hash.
pub(crate) fn image() -> &'static str {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let tar = rootfs_tar();
        let sha = contextos_sha(&tar);
        let tag = format!("contextos-e2e-probe:{}", &sha[..12]);
        if docker(&["image", "inspect", &tag]).status.success() {
            return tag;
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("rootfs.tar");
        std::fs::write(&file, &tar).unwrap_or_else(|e| panic!("{e}"));
        let out = docker(&[
            "import",
            "--change",
            "ENV PATH=/bin",
            &file.display().to_string(),
            &tag,
        ]);
        assert!(
            out.status.success(),
            "docker import: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tag
    })
}

pub(crate) fn contextos_sha(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every guarantee as one `PROBE name value` line. The fork bomb and the memory hog
/// run separately (they take the command down by design).
const PROBES: &str = r#"
p() { echo "PROBE $1 $2"; }
if touch /rootfs-probe 2>/dev/null; then p rootfs writable; else p rootfs readonly; fi
while read k v rest; do
  case "$k" in CapEff:|CapBnd:|CapPrm:|CapAmb:|NoNewPrivs:|Seccomp:) p "${k%:}" "$v";; esac
done < /proc/self/status
p interfaces "$(ls /sys/class/net | tr '\n' ',')"
n=0; while read line; do n=$((n+1)); done < /proc/net/route; p routes $((n-1))
p euid "$(/bin/suid-id -u)"
if [ -e /var/run/docker.sock ] || [ -e /run/docker.sock ]; then p docker-sock present; else p docker-sock absent; fi
if echo "probe result" > /workspace/probe-result.txt 2>/dev/null; then p workspace writable; else p workspace readonly; fi
if [ -e /workspace/.git/HEAD ]; then p git-head visible; else p git-head hidden; fi
if touch /workspace/.git/probe 2>/dev/null; then p git writable; else p git unwritable; fi
if [ -e /workspace/.contextos/state/marker ]; then p state visible; else p state hidden; fi
if touch /workspace/.contextos/state/probe 2>/dev/null; then p state-write writable; else p state-write unwritable; fi
p tmp-before "$(ls -A /tmp | tr '\n' ',')"
if echo x > /tmp/leftover 2>/dev/null; then p tmp writable; else p tmp unwritable; fi
cp /bin/true /tmp/t 2>/dev/null
if /tmp/t 2>/dev/null; then p tmp-exec allowed; else p tmp-exec refused; fi
dd if=/dev/zero of=/tmp/fill bs=1048576 count=64 2>/dev/null
p tmp-filled "$(wc -c < /tmp/fill)"
rm -f /tmp/fill
"#;

const FORK_BOMB: &str = r#"
( n=0; while [ $n -lt 200 ]; do sleep 60 & n=$((n+1)); echo $n > /tmp/forks; done ) 2>/dev/null
read f < /tmp/forks
echo "PROBE forks $f"
"#;

const MEMORY_HOG: &str = r#"
x=$(head -c 200000000 /dev/zero | tr '\0' a)
echo "PROBE memory ${#x}"
"#;

fn probes(stdout: &str) -> std::collections::BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("PROBE "))
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn policy(image: &str) -> String {
    format!(
        r#"language 1;
@id("probes")
allow exec "sh *", "sleep *", "/bin/true"
    with sandbox {{ image: "{image}", memory: "64MiB", pids: 32, tmpfs: "8MiB", timeout: "120s" }}
    because "The probes run in the sandbox.";
@id("no-dd")
deny exec "dd *" because "Probe for deny.";
"#
    )
}

/// `git` in `dir`, which must succeed.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        // Overlay tests hand the tree to uid 1000 while the tests run as root.
        .args(["-c", "safe.directory=*"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("git is needed for these tests: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A git repository with the probe scripts committed and a file in the state directory
/// that the sandbox must never see.
fn probe_project() -> tempfile::TempDir {
    let img = image();
    let p = project(Some(&policy(img)));
    for (name, script) in [
        ("probe.sh", PROBES),
        ("forkbomb.sh", FORK_BOMB),
        ("memhog.sh", MEMORY_HOG),
    ] {
        std::fs::write(p.path().join(name), script).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(p.path().join("README.md"), "probe project\n").unwrap_or_else(|e| panic!("{e}"));
    git(p.path(), &["init", "-q"]);
    git(p.path(), &["add", "-A"]);
    git(p.path(), &["commit", "-q", "-m", "probes"]);
    let state = p.path().join(".contextos/state");
    std::fs::create_dir_all(&state).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(state.join("marker"), "state\n").unwrap_or_else(|e| panic!("{e}"));
    p
}

/// Hands the project to uid/gid 1000 so that the automatic rule (and a forced overlay)
/// runs the session as that owner.
pub(crate) fn chown_1000(dir: &Path) {
    let out = Command::new("chown")
        .args(["-R", "1000:1000"])
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("chown: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn run_json(project: &Path, args: &[&str]) -> (Run, Value) {
    run_json_env(project, args, &[])
}

pub(crate) fn run_json_env(project: &Path, args: &[&str], env: &[(&str, &str)]) -> (Run, Value) {
    let mut full = vec!["--format", "json", "run"];
    full.extend_from_slice(args);
    let r = contextos_env(project, &full, env);
    let j: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    (r, j)
}

/// Containers and volumes carrying `label` (`key` or `key=value`), as the docker CLI
/// lists them: `(containers, volumes)`.
pub(crate) fn labelled(label: &str) -> (String, String) {
    let filter = format!("label={label}");
    let c = docker(&["ps", "-a", "-q", "--filter", &filter]);
    let v = docker(&["volume", "ls", "-q", "--filter", &filter]);
    (
        String::from_utf8_lossy(&c.stdout).trim().to_string(),
        String::from_utf8_lossy(&v.stdout).trim().to_string(),
    )
}

/// Nothing of the session `id` is left on the engine.
pub(crate) fn assert_session_gone(id: &str) {
    assert_eq!(
        labelled(&format!("io.contextos.session={id}")),
        (String::new(), String::new()),
        "session {id} left a container or a volume behind"
    );
}

const MODES: [&str; 2] = ["copy", "overlay"];

#[test]
fn every_guarantee_holds_inside_the_sandbox() {
    for mode in MODES {
        let p = probe_project();
        if mode == "overlay" {
            chown_1000(p.path());
        }
        let env = [("CONTEXTOS_SESSION_MODE", mode)];
        let (r, j) = run_json_env(p.path(), &["--", "sh", "probe.sh"], &env);
        assert_eq!(r.code, 0, "{mode}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(j["mode"], "sandbox");
        assert_eq!(j["session"]["mode"], mode, "{j}");
        assert_eq!(j["session"]["oneShot"], true);
        assert_eq!(j["ran"], true);
        assert_eq!(j["exitCode"], 0);
        assert!(
            j["image"]["id"]
                .as_str()
                .is_some_and(|i| i.starts_with("sha256:")),
            "digest recorded: {j}"
        );
        let out = j["sandbox"]["stdout"]["text"].as_str().unwrap_or_default();
        let got = probes(out);
        // Overlay runs as the project's owner, copy as the floor's nobody.
        let euid = if mode == "overlay" { "1000" } else { "65534" };
        assert_eq!(j["session"]["user"], format!("{euid}:{euid}"), "{j}");
        // /tmp is a fresh tmpfs; the only entry in it is where the project itself is
        // mounted at its host path, when that lies under /tmp (a temp directory here).
        let own = p.path().canonicalize().unwrap();
        let tmp_entry = own
            .strip_prefix("/tmp")
            .ok()
            .and_then(|r| r.components().next())
            .map(|c| format!("{},", c.as_os_str().to_string_lossy()))
            .unwrap_or_default();
        let want = [
            ("rootfs", "readonly"),
            ("CapEff", "0000000000000000"),
            ("CapPrm", "0000000000000000"),
            ("CapBnd", "0000000000000000"),
            ("CapAmb", "0000000000000000"),
            ("NoNewPrivs", "1"),
            ("Seccomp", "2"),
            ("interfaces", "lo,"),
            ("routes", "0"),
            ("euid", euid),
            ("docker-sock", "absent"),
            ("workspace", "writable"),
            ("git-head", "hidden"),
            ("git", "unwritable"),
            ("state", "hidden"),
            ("state-write", "unwritable"),
            ("tmp-before", tmp_entry.as_str()),
            ("tmp", "writable"),
            ("tmp-exec", "refused"),
        ];
        for (k, v) in want {
            assert_eq!(
                got.get(k).map(String::as_str),
                Some(v),
                "{mode}: probe {k}: {out}"
            );
        }
        let filled: u64 = got["tmp-filled"].parse().unwrap_or(u64::MAX);
        assert!(filled <= 8 << 20, "tmpfs is size-capped: {filled}");
        // The one-shot session is gone, and the one write came back through the journal
        // as exactly one change.
        let name = j["sandbox"]["container"].as_str().unwrap_or_default();
        assert!(name.starts_with("ctx-s-"), "{name}");
        let sid = j["session"]["id"].as_str().unwrap_or_default();
        assert!(!sid.is_empty());
        assert_session_gone(sid);
        assert_eq!(j["apply"]["applied"], true, "{j}");
        assert!(j["apply"]["transaction"]["txid"].is_string(), "{j}");
        let changed: Vec<&str> = j["results"]["changes"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["path"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(changed, vec!["probe-result.txt"], "{j}");
        assert_eq!(
            std::fs::read_to_string(p.path().join("probe-result.txt")).unwrap_or_default(),
            "probe result\n"
        );
        assert!(!p.path().join(".git/probe").exists());
        assert!(!p.path().join(".contextos/state/probe").exists());
        assert_eq!(j["autoMerge"], "allowed");

        // The host is unchanged until the journal applies: with --no-apply the change is
        // reported and nothing lands.
        std::fs::remove_file(p.path().join("probe-result.txt")).unwrap_or_else(|e| panic!("{e}"));
        let (r, j2) = run_json_env(p.path(), &["--no-apply", "--", "sh", "probe.sh"], &env);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let got2 = probes(j2["sandbox"]["stdout"]["text"].as_str().unwrap_or_default());
        assert_eq!(got2.get("workspace").map(String::as_str), Some("writable"));
        assert_eq!(j2["apply"]["applied"], false, "{j2}");
        assert_eq!(j2["results"]["changes"][0]["path"], "probe-result.txt");
        assert!(
            !p.path().join("probe-result.txt").exists(),
            "the sandbox's write reached the host without the journal"
        );
        // The next one-shot session starts with an empty /tmp (the first left
        // /tmp/leftover).
        assert_eq!(
            got2.get("tmp-before").map(String::as_str),
            Some(tmp_entry.as_str())
        );
        assert_session_gone(j2["session"]["id"].as_str().unwrap_or_default());
    }
}

#[test]
fn the_pids_limit_stops_a_fork_bomb_and_the_memory_limit_kills_a_hog() {
    let p = probe_project();
    let (_, j) = run_json(p.path(), &["--", "sh", "forkbomb.sh"]);
    let got = probes(j["sandbox"]["stdout"]["text"].as_str().unwrap_or_default());
    let forks: u32 = got.get("forks").and_then(|f| f.parse().ok()).unwrap_or(0);
    assert!(forks > 0 && forks < 32, "forks bounded by pids 32: {j}");
    assert_session_gone(j["session"]["id"].as_str().unwrap_or_default());

    let (r, j) = run_json(p.path(), &["--", "sh", "memhog.sh"]);
    assert_eq!(j["exitCode"], 137, "{j}");
    assert_eq!(r.code, 137);
    assert!(!j["sandbox"]["stdout"]["text"]
        .as_str()
        .unwrap_or_default()
        .contains("PROBE memory"));
    assert_session_gone(j["session"]["id"].as_str().unwrap_or_default());
}

#[test]
fn the_negative_control_sees_every_probe_fail_without_the_hardening() {
    let img = image();
    let p = probe_project();
    let vol = format!("contextos-e2e-tmp-{}", std::process::id());
    let ws = format!("{}:/workspace", p.path().display());
    let tmpv = format!("{vol}:/tmp");
    // Docker's defaults (root, bridge network, writable root, default capabilities),
    // seccomp off, the project bound read-write, the socket mounted, a persistent /tmp.
    let base = [
        "run",
        "--rm",
        "--security-opt",
        "seccomp=unconfined",
        "-v",
        "/var/run/docker.sock:/var/run/docker.sock",
        "-v",
        &ws,
        "-v",
        &tmpv,
        "-w",
        "/workspace",
    ];
    let run = |user: Option<&str>, script: &str| {
        let mut args: Vec<&str> = base.to_vec();
        if let Some(u) = user {
            args.extend(["--user", u]);
        }
        args.extend([img, "sh", script]);
        let o = docker(&args);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let _ = docker(&["volume", "create", &vol]);
    let _ = docker(&["run", "--rm", "-v", &tmpv, img, "chmod", "1777", "/tmp"]);
    let root = probes(&run(None, "probe.sh"));
    let nobody = probes(&run(Some("65534:65534"), "probe.sh"));
    let second = probes(&run(Some("65534:65534"), "probe.sh"));
    let forks = probes(&run(Some("65534:65534"), "forkbomb.sh"));
    let memory = probes(&run(Some("65534:65534"), "memhog.sh"));
    let _ = docker(&["volume", "rm", "-f", &vol]);

    assert_eq!(root["rootfs"], "writable");
    assert_ne!(root["CapEff"], "0000000000000000");
    assert_ne!(nobody["CapBnd"], "0000000000000000");
    assert_eq!(nobody["NoNewPrivs"], "0");
    assert_eq!(nobody["Seccomp"], "0");
    assert_ne!(nobody["interfaces"], "lo,");
    assert_ne!(nobody["routes"], "0");
    assert_eq!(
        nobody["euid"], "0",
        "setuid raises euid without no-new-privileges"
    );
    assert_eq!(nobody["docker-sock"], "present");
    // The project bound directly: `.git` and the state directory are there and
    // writable, and a write lands on the host at once, with no journal in between.
    assert_eq!(root["workspace"], "writable");
    assert_eq!(root["git-head"], "visible");
    assert_eq!(root["git"], "writable");
    assert_eq!(root["state"], "visible");
    assert_eq!(root["state-write"], "writable");
    assert!(p.path().join(".git/probe").exists());
    assert_eq!(
        std::fs::read_to_string(p.path().join("probe-result.txt")).unwrap_or_default(),
        "probe result\n"
    );
    assert_eq!(nobody["tmp-exec"], "allowed");
    let filled: u64 = nobody["tmp-filled"].parse().unwrap_or(0);
    assert!(filled > 8 << 20, "no tmpfs cap: {filled}");
    assert_ne!(second["tmp-before"], "", "a persistent /tmp keeps files");
    assert_eq!(forks["forks"], "200", "no pids limit: {forks:?}");
    assert_eq!(memory["memory"], "200000000", "no memory limit");
}

#[test]
fn deny_means_nothing_runs_and_no_engine_means_no_fallback() {
    let p = probe_project();
    // A bogus engine address: a denied command never needs one.
    let bogus = p.path().join("no-such.sock");
    let host = format!("unix://{}", bogus.display());
    let r = contextos_env(
        p.path(),
        &[
            "--format",
            "json",
            "run",
            "--",
            "dd",
            "if=/dev/zero",
            "of=x",
        ],
        &[("DOCKER_HOST", host.as_str())],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap_or_default();
    assert_eq!(j["ran"], false);
    assert_eq!(j["verdict"], "deny");
    assert!(!p.path().join("x").exists());
    // Ask without confirmation: nothing runs either (exit 3).
    let r = contextos_env(
        p.path(),
        &["--format", "json", "run", "--", "make", "deploy"],
        &[("DOCKER_HOST", host.as_str())],
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap_or_default();
    assert_eq!(
        (j["verdict"].as_str(), j["ran"].as_bool()),
        (Some("ask"), Some(false))
    );
    // Allowed, but no engine: exit 2 and nothing runs on the host either, with or
    // without a named session.
    for extra in [&[][..], &["--session", "s-no-engine"][..]] {
        let mut args = vec!["run"];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "-c", "echo ran > marker"]);
        let r = contextos_env(p.path(), &args, &[("DOCKER_HOST", host.as_str())]);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("never falls back"), "{}", r.stderr);
        assert!(!p.path().join("marker").exists());
    }
}

#[test]
fn a_timeout_kills_the_command_and_removes_the_session() {
    let p = probe_project();
    let (r, j) = run_json(p.path(), &["--timeout", "2s", "--", "sleep", "60"]);
    assert_eq!(r.code, 124, "{}", r.stdout);
    assert_eq!(j["sandbox"]["timedOut"], true);
    assert_eq!(j["sandbox"]["reset"], true);
    let id = j["session"]["id"].as_str().unwrap_or_default();
    assert!(!id.is_empty(), "{j}");
    assert_session_gone(id);
}

#[test]
fn ctrl_c_kills_the_command_and_removes_the_session() {
    let p = probe_project();
    let child = Command::new(env!("CARGO_BIN_EXE_contextos"))
        .arg("--project")
        .arg(p.path())
        .args(["--format", "json", "run", "--", "sleep", "61"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // Wait until the command runs in a session container (bounded by attempts, not by
    // a timed assertion): the engine's `top` of each session container shows it.
    let pid = child.id().to_string();
    let mut seen = String::new();
    'wait: for _ in 0..600 {
        let out = docker(&[
            "ps",
            "--format",
            "{{.Names}}",
            "--filter",
            "label=io.contextos.session",
        ]);
        for name in String::from_utf8_lossy(&out.stdout).lines() {
            let top = docker(&["top", name]);
            if String::from_utf8_lossy(&top.stdout).contains("sleep 61") {
                seen = name.to_string();
                break 'wait;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!seen.is_empty(), "the command never appeared");
    let _ = Command::new("kill").args(["-INT", &pid]).status();
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(out.status.code(), Some(130), "{j}");
    assert_eq!(j["sandbox"]["interrupted"], true);
    assert_eq!(j["sandbox"]["container"], seen.as_str());
    let gone = docker(&["ps", "-a", "-q", "--filter", &format!("name={seen}")]);
    assert_eq!(
        String::from_utf8_lossy(&gone.stdout).trim(),
        "",
        "{seen} is gone"
    );
    assert_session_gone(j["session"]["id"].as_str().unwrap_or_default());
}

pub(crate) fn contextos_env(project: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_contextos"))
        .arg("--project")
        .arg(project)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run contextos: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A user config directory outside every project.
fn user_config(host_unsafe: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(d.path().join("contextos")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        d.path().join("contextos/config.toml"),
        format!("[run]\nhost_unsafe = {host_unsafe}\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    d
}

const HOST_POLICY: &str = r#"language 1;
@id("sh-ok")
allow exec "sh *" because "test";
"#;

/// Writes the environment a command sees into its output area.
const ENV_PROBE: &str =
    "echo \"token=${GITHUB_TOKEN:-} preload=${LD_PRELOAD:-} gitdir=${GIT_DIR:-} unsafe=${CONTEXTOS_HOST_UNSAFE:-}\" > \"$CONTEXTOS_OUTPUT/env.txt\"";

#[test]
fn a_repository_cannot_switch_on_host_unsafe() {
    let p = project(Some(HOST_POLICY));
    std::fs::write(
        p.path().join("contextos.toml"),
        "[sandbox]\nhost_unsafe = true\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let cfg = user_config(false);
    let bogus = format!("unix://{}", p.path().join("no.sock").display());
    let r = contextos_env(
        p.path(),
        &["run", "--yes", "--", "sh", "-c", ENV_PROBE],
        &[
            ("XDG_CONFIG_HOME", &cfg.path().display().to_string()),
            ("DOCKER_HOST", &bogus),
        ],
    );
    // The repository's setting is ignored: the sandbox is still required, and with no
    // engine nothing runs anywhere.
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("a repository cannot choose host-unsafe"),
        "{}",
        r.stderr
    );
    assert!(!p.path().join("env.txt").exists());

    // A "user" config planted inside the repository is refused too.
    let inside = p.path().join("cfg/contextos");
    std::fs::create_dir_all(&inside).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(inside.join("config.toml"), "[run]\nhost_unsafe = true\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let r = contextos_env(
        p.path(),
        &["run", "--yes", "--", "sh", "-c", ENV_PROBE],
        &[
            (
                "XDG_CONFIG_HOME",
                &p.path().join("cfg").display().to_string(),
            ),
            ("DOCKER_HOST", &bogus),
        ],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("inside the project"), "{}", r.stderr);
    assert!(!p.path().join("env.txt").exists());

    // The flag needs a confirmation; without a terminal or --yes nothing runs.
    let r = contextos_env(
        p.path(),
        &["run", "--host-unsafe", "--", "sh", "-c", "echo ran"],
        &[("XDG_CONFIG_HOME", &cfg.path().display().to_string())],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("needs confirmation"), "{}", r.stderr);
    assert!(!r.stdout.contains("ran"), "{}", r.stdout);

    // And an agent asking for it is denied by the stdlib.
    let r = contextos(
        p.path(),
        &[
            "decide",
            "exec",
            "--",
            "contextos",
            "run",
            "--host-unsafe",
            "--yes",
            "--",
            "make",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("std-exec-no-host-unsafe"), "{}", r.stdout);
}

#[test]
fn host_unsafe_by_the_user_scrubs_the_environment_and_blocks_auto_merge() {
    let p = project(Some(HOST_POLICY));
    let cfg = user_config(true);
    let r = contextos_env(
        p.path(),
        &[
            "--format", "json", "run", "--yes", "--", "sh", "-c", ENV_PROBE,
        ],
        &[
            ("XDG_CONFIG_HOME", &cfg.path().display().to_string()),
            ("GITHUB_TOKEN", "ghp_secret"),
            ("LD_PRELOAD", "/nonexistent.so"),
            ("GIT_DIR", "/elsewhere"),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap_or_default();
    assert_eq!(j["mode"], "host-unsafe");
    assert_eq!(j["autoMerge"], "blocked");
    assert_eq!(j["apply"]["applied"], true, "{j}");
    // The result came back through the journal, without any secret.
    assert_eq!(
        std::fs::read_to_string(p.path().join("env.txt")).unwrap_or_default(),
        "token= preload= gitdir= unsafe=1\n"
    );
    // The run is recorded, and the commit domain sees it.
    let runs: Vec<_> = std::fs::read_dir(p.path().join(".contextos/state/runs"))
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert_eq!(runs.len(), 1);
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "decide",
            "commit",
            "env.txt",
            "--auto-merge",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.json()["decidedBy"][0]["id"],
        "std-commit-host-unsafe-no-auto-merge"
    );
    // A human merging it is fine; auto-merging an unrelated file is fine.
    let r = contextos(p.path(), &["decide", "commit", "env.txt"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = contextos(p.path(), &["decide", "commit", "other.txt", "--auto-merge"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn images_are_pinned_by_id_and_never_pulled_unless_allowed() {
    let img = image();
    let p = project(Some(
        "language 1;\n@id(\"t\")\nallow exec \"/bin/true\" with sandbox { memory: \"64MiB\" } because \"t\";\n",
    ));
    let (r, j) = run_json(p.path(), &["--image", img, "--", "/bin/true"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let id = j["image"]["id"].as_str().unwrap_or_default().to_string();
    assert!(id.starts_with("sha256:") && id.len() == 71, "{j}");
    assert_eq!(j["image"]["reference"], img);
    // The strict profile requires a digest: a tag is refused, the id is accepted.
    let (r, j) = run_json(
        p.path(),
        &["--profile", "strict", "--image", img, "--", "/bin/true"],
    );
    assert_eq!(r.code, 2, "{j}");
    assert!(
        j["error"]
            .as_str()
            .unwrap_or_default()
            .contains("by digest"),
        "{j}"
    );
    assert_eq!(j["ran"], false);
    let (r, j) = run_json(
        p.path(),
        &["--profile", "strict", "--image", &id, "--", "/bin/true"],
    );
    assert_eq!(r.code, 0, "{j}");
    assert_eq!(j["image"]["id"], id.as_str());
    // A missing image is not pulled without `pull: true`.
    let (r, j) = run_json(
        p.path(),
        &["--image", "contextos-e2e-absent:never", "--", "/bin/true"],
    );
    assert_eq!(r.code, 2, "{j}");
    assert!(
        j["error"]
            .as_str()
            .unwrap_or_default()
            .contains("does not allow pulls"),
        "{j}"
    );
    // No image at all is an error, not a default.
    let (r, j) = run_json(p.path(), &["--", "/bin/true"]);
    assert_eq!(r.code, 2, "{j}");
    assert!(
        j["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("no image"),
        "{j}"
    );
}

#[test]
fn a_policy_cannot_loosen_the_floor() {
    let img = image();
    let p = project(Some(&format!(
        "language 1;\n@id(\"big\")\nallow exec \"/bin/true\" with sandbox {{ image: \"{img}\", memory: \"64GiB\" }} because \"t\";\n"
    )));
    let (r, j) = run_json(p.path(), &["--", "/bin/true"]);
    assert_eq!(r.code, 2, "{j}");
    assert!(
        j["error"]
            .as_str()
            .unwrap_or_default()
            .contains("loosens the floor"),
        "{j}"
    );
    assert_eq!(j["ran"], false);
    // A rule that pins the image: `--image` cannot replace it.
    std::fs::write(
        p.path().join(".contextos/policies/main.policy"),
        format!("language 1;\n@id(\"pin\")\nallow exec \"/bin/true\" with sandbox {{ image: \"{img}\" }} because \"t\";\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (r, j) = run_json(p.path(), &["--image", "other:1", "--", "/bin/true"]);
    assert_eq!(r.code, 2, "{j}");
    assert!(
        j["error"]
            .as_str()
            .unwrap_or_default()
            .contains("pins the image"),
        "{j}"
    );
    assert_eq!(j["ran"], false);
}

#[test]
fn output_is_capped_and_hashed_in_full_and_the_exit_code_is_exact() {
    let img = image();
    let p = project(Some(&format!(
        "language 1;\n@id(\"t\")\nallow exec \"sh *\" with sandbox {{ image: \"{img}\", output: \"1KiB\" }} because \"t\";\n"
    )));
    std::fs::write(
        p.path().join("chatty.sh"),
        "head -c 100000 /dev/zero | tr '\\0' a\necho done >&2\nexit 7\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (r, j) = run_json(p.path(), &["--", "sh", "chatty.sh"]);
    assert_eq!(r.code, 7, "{j}");
    assert_eq!(j["exitCode"], 7);
    assert_eq!(j["sandbox"]["exitCode"], 7);
    let out = &j["sandbox"]["stdout"];
    assert_eq!(out["bytes"], 100_000);
    assert_eq!(out["kept"], 1024);
    assert_eq!(out["truncated"], true);
    assert_eq!(out["text"].as_str().map(str::len), Some(1024));
    assert_eq!(
        out["sha256"].as_str().unwrap_or_default(),
        contextos_sha(&[b'a'; 100_000]),
        "the digest covers all 100000 bytes"
    );
    assert_eq!(j["sandbox"]["stderr"]["text"], "done\n");
    assert_eq!(j["sandbox"]["stderr"]["truncated"], false);
}

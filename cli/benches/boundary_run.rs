//! The warm sandbox session against the docker CLI, whole process, side by side:
//!
//! - `contextos run --session S -- /bin/true` in a session that is already warm (the
//!   route the Claude Code hook rewrites Bash into): load the policies, decide, take the
//!   session lock, check the host fingerprint, exec through the Engine API, read the
//!   changeset back, record the run;
//! - `docker exec` of `/bin/true` into the very same container (goal: ours ≤ 1.2×);
//! - `docker run --rm` with the same hardening flags (goal: ours ≤ 0.3×).
//!
//! Runs alternate, so a background load change hits every side alike. The image is
//! assembled from the host's `dash` (as `/bin/sh`, which keeps the session container
//! alive) and `true`, with their libraries, and imported with `docker import` (no
//! registry). Run with `cargo bench -p contextos --bench boundary_run`;
//! `BOUNDARY_BENCH_RUNS` sets the samples per side (default 30).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn die(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(2);
}

fn append(tar: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8], mode: u32, dir: bool) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(if dir {
        tar::EntryType::Directory
    } else {
        tar::EntryType::Regular
    });
    h.set_mode(mode);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_size(data.len() as u64);
    if tar
        .append_data(&mut h, path.trim_start_matches('/'), data)
        .is_err()
    {
        die("cannot build the image tar");
    }
}

fn host_binary(name: &str) -> PathBuf {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| die(&format!("{name} is not on this host")))
}

fn libraries(bin: &Path) -> Vec<PathBuf> {
    let ldd = Command::new("ldd")
        .arg(bin)
        .output()
        .unwrap_or_else(|e| die(&format!("ldd: {e}")));
    String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// A root filesystem with `/bin/sh` (dash), `/bin/true`, their libraries and a passwd
/// file.
fn image() -> String {
    let bins = [
        ("/bin/sh", host_binary("dash")),
        ("/bin/true", host_binary("true")),
    ];
    let mut libs = std::collections::BTreeSet::new();
    for (_, b) in &bins {
        libs.extend(libraries(b));
    }
    let mut tar = tar::Builder::new(Vec::new());
    let mut dirs = std::collections::BTreeSet::new();
    for l in &libs {
        let mut d = l.parent();
        while let Some(p) = d.filter(|p| *p != Path::new("/")) {
            dirs.insert(p.display().to_string());
            d = p.parent();
        }
    }
    dirs.extend(["/bin".to_string(), "/etc".to_string(), "/tmp".to_string()]);
    for d in &dirs {
        append(&mut tar, &format!("{d}/"), &[], 0o755, true);
    }
    for l in &libs {
        let data = std::fs::read(l).unwrap_or_else(|e| die(&format!("{}: {e}", l.display())));
        append(&mut tar, &l.display().to_string(), &data, 0o755, false);
    }
    for (dest, src) in &bins {
        let data = std::fs::read(src).unwrap_or_else(|e| die(&format!("{e}")));
        append(&mut tar, dest, &data, 0o755, false);
    }
    append(
        &mut tar,
        "/etc/passwd",
        b"nobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n",
        0o644,
        false,
    );
    let bytes = tar.into_inner().unwrap_or_else(|_| die("tar"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| die(&format!("{e}")));
    let file = dir.path().join("rootfs.tar");
    std::fs::write(&file, &bytes).unwrap_or_else(|e| die(&format!("{e}")));
    let tag = "contextos-bench-session:latest";
    let ok = Command::new("docker")
        .args(["import", &file.display().to_string(), tag])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        die("docker import failed: the bench needs a running Docker Engine");
    }
    tag.to_string()
}

fn time(cmd: &mut Command) -> f64 {
    let start = Instant::now();
    let status = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status();
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if !status.is_ok_and(|s| s.success()) {
        die(&format!("{cmd:?} failed"));
    }
    ms
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn line(name: &str, v: &[f64]) -> f64 {
    println!(
        "  {name:<34} p50 {:>7.1}  p90 {:>7.1}  min {:>7.1}",
        pct(v, 0.5),
        pct(v, 0.9),
        pct(v, 0.0)
    );
    pct(v, 0.5)
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_contextos");
    let runs: usize = std::env::var("BOUNDARY_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let img = image();
    let project = tempfile::tempdir().unwrap_or_else(|e| die(&format!("{e}")));
    let root = project.path();
    let policies = root.join(".contextos/policies");
    std::fs::create_dir_all(&policies).unwrap_or_else(|e| die(&format!("{e}")));
    std::fs::write(
        policies.join("main.policy"),
        "language 1;\n@id(\"bench\")\nallow exec \"/bin/true\" because \"bench\";\n",
    )
    .unwrap_or_else(|e| die(&format!("{e}")));
    std::fs::write(
        root.join("contextos.toml"),
        format!("[sandbox]\nimage = \"{img}\"\n"),
    )
    .unwrap_or_else(|e| die(&format!("{e}")));
    std::fs::write(root.join("README.md"), "bench\n").unwrap_or_else(|e| die(&format!("{e}")));
    let session = format!("bench-{}", std::process::id());
    let ours_as = |format: &str| {
        let mut c = Command::new(bin);
        c.arg("--project")
            .arg(root)
            .args(["--format", format])
            .args(["run", "--session", &session, "--", "/bin/true"]);
        c
    };
    let ours = || ours_as("text");
    // The first run creates the session; its JSON report names the container.
    let first = ours_as("json")
        .output()
        .unwrap_or_else(|e| die(&format!("{e}")));
    let report: serde_json::Value = serde_json::from_slice(&first.stdout)
        .unwrap_or_else(|e| die(&format!("the first run's report: {e}")));
    let container = report["session"]["container"]
        .as_str()
        .unwrap_or_else(|| die(&format!("no session container in {report}")))
        .to_string();
    let mode = report["session"]["mode"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    let user = report["session"]["user"]
        .as_str()
        .unwrap_or("65534:65534")
        .to_string();
    let exec = || {
        let mut c = Command::new("docker");
        c.args([
            "exec",
            "--user",
            &user,
            "-w",
            "/workspace",
            &container,
            "/bin/true",
        ]);
        c
    };
    let tmpfs = "rw,noexec,nosuid,nodev,size=268435456";
    let run_args: Vec<String> = [
        "run",
        "--rm",
        "--read-only",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges:true",
        "--network=none",
        "--ipc=none",
        "--init",
        "--pids-limit=256",
        "--memory=2147483648",
        "--memory-swap=2147483648",
        "--cpus=2",
        "--ulimit=nofile=1024:1024",
        "--ulimit=core=0",
        "--ulimit=fsize=67108864",
        "--user=65534:65534",
        "--workdir=/workspace",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--tmpfs=/tmp:{tmpfs}"),
        format!("--tmpfs=/home/sandbox:{tmpfs}"),
        "-v".into(),
        format!("{}:/workspace:ro", root.display()),
        "--entrypoint=/bin/true".into(),
        img.clone(),
    ])
    .collect();
    let cold = || {
        let mut c = Command::new("docker");
        c.args(&run_args);
        c
    };
    for _ in 0..2 {
        time(&mut ours());
        time(&mut exec());
        time(&mut cold());
    }
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        a.push(time(&mut ours()));
        b.push(time(&mut exec()));
        c.push(time(&mut cold()));
    }
    for v in [&mut a, &mut b, &mut c] {
        v.sort_by(f64::total_cmp);
    }
    println!("boundary: /bin/true, {runs} runs per side (ms), session mode {mode}");
    let ma = line("contextos run --session (warm)", &a);
    let mb = line("docker exec (same container)", &b);
    let mc = line("docker run --rm (same flags)", &c);
    println!(
        "  ratio ours/docker exec (p50): {:.2}   goal <= 1.2",
        ma / mb
    );
    println!(
        "  ratio ours/docker run  (p50): {:.2}   goal <= 0.3",
        ma / mc
    );
    let _ = Command::new(bin)
        .arg("--project")
        .arg(root)
        .args(["session", "close", &session])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = Command::new("docker")
        .args(["image", "rm", "-f", &img])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

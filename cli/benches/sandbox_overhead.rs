//! Whole-process cost of `contextos run -- /bin/true` against `docker run --rm` with the
//! same hardening flags, on the real Docker Engine.
//!
//! `contextos run` pays for everything it does — loading the policies, deciding the
//! exec verdict, resolving the image, copying the project snapshot, create → attach →
//! start → wait → inspect → remove through the Engine API, and recording the run; the
//! docker CLI pays for its own process start and hijacked attach. Runs alternate, so a
//! background load change hits both sides alike. The image is assembled from the host's
//! `/usr/bin/true` and its libraries and imported with `docker import` (no registry).
//! Run with `cargo bench -p contextos --bench sandbox_overhead`; `SANDBOX_BENCH_RUNS`
//! sets the samples per side (default 30).

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

/// A root filesystem with `/bin/true`, its libraries and a passwd file.
fn image() -> String {
    let bin = Path::new("/usr/bin/true");
    let ldd = Command::new("ldd")
        .arg(bin)
        .output()
        .unwrap_or_else(|e| die(&format!("ldd: {e}")));
    let libs: Vec<PathBuf> = String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    let mut tar = tar::Builder::new(Vec::new());
    let mut dirs = std::collections::BTreeSet::new();
    for l in &libs {
        let mut d = l.parent();
        while let Some(p) = d.filter(|p| *p != Path::new("/")) {
            dirs.insert(p.display().to_string());
            d = p.parent();
        }
    }
    dirs.extend(["/bin".to_string(), "/etc".to_string()]);
    for d in &dirs {
        append(&mut tar, &format!("{d}/"), &[], 0o755, true);
    }
    for l in &libs {
        let data = std::fs::read(l).unwrap_or_else(|e| die(&format!("{}: {e}", l.display())));
        append(&mut tar, &l.display().to_string(), &data, 0o755, false);
    }
    let data = std::fs::read(bin).unwrap_or_else(|e| die(&format!("{e}")));
    append(&mut tar, "/bin/true", &data, 0o755, false);
    append(
        &mut tar,
        "/etc/passwd",
        b"nobody:x:65534:65534:nobody:/nonexistent:/bin/true\n",
        0o644,
        false,
    );
    let bytes = tar.into_inner().unwrap_or_else(|_| die("tar"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| die(&format!("{e}")));
    let file = dir.path().join("rootfs.tar");
    std::fs::write(&file, &bytes).unwrap_or_else(|e| die(&format!("{e}")));
    let tag = "contextos-bench-true:latest";
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

fn main() {
    let bin = env!("CARGO_BIN_EXE_contextos");
    let runs: usize = std::env::var("SANDBOX_BENCH_RUNS")
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
        format!(
            "language 1;\n@id(\"bench\")\nallow exec \"/bin/true\" with sandbox {{ image: \"{img}\" }} because \"bench\";\n"
        ),
    )
    .unwrap_or_else(|e| die(&format!("{e}")));
    std::fs::write(root.join("README.md"), "bench\n").unwrap_or_else(|e| die(&format!("{e}")));
    // The docker CLI side gets the same mounts: a workspace directory read-only and an
    // output directory read-write.
    let dirs = tempfile::tempdir().unwrap_or_else(|e| die(&format!("{e}")));
    let ws = dirs.path().join("workspace");
    let out = dirs.path().join("output");
    for d in [&ws, &out] {
        std::fs::create_dir_all(d).unwrap_or_else(|e| die(&format!("{e}")));
    }
    let ws_bind = format!("{}:/workspace:ro", ws.display());
    let out_bind = format!("{}:/output:rw", out.display());
    let tmpfs = "rw,noexec,nosuid,nodev,size=268435456";
    let docker_args: Vec<String> = [
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
        ws_bind,
        "-v".into(),
        out_bind,
        "--entrypoint=/bin/true".into(),
        img.clone(),
    ])
    .collect();
    let ours = || {
        let mut c = Command::new(bin);
        c.arg("--project")
            .arg(root)
            .args(["run", "--", "/bin/true"]);
        c
    };
    let theirs = || {
        let mut c = Command::new("docker");
        c.args(&docker_args);
        c
    };
    for _ in 0..2 {
        time(&mut ours());
        time(&mut theirs());
    }
    let mut a = Vec::with_capacity(runs);
    let mut b = Vec::with_capacity(runs);
    for _ in 0..runs {
        a.push(time(&mut ours()));
        b.push(time(&mut theirs()));
    }
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (ma, mb) = (pct(&a, 0.5), pct(&b, 0.5));
    println!("sandbox overhead: /bin/true, {runs} runs per side (ms)");
    println!(
        "  contextos run -- /bin/true   p50 {:>7.1}  p90 {:>7.1}  min {:>7.1}",
        ma,
        pct(&a, 0.9),
        pct(&a, 0.0)
    );
    println!(
        "  docker run --rm (same flags) p50 {:>7.1}  p90 {:>7.1}  min {:>7.1}",
        mb,
        pct(&b, 0.9),
        pct(&b, 0.0)
    );
    println!("  ratio contextos/docker (p50): {:.2}", ma / mb);
    let _ = Command::new("docker")
        .args(["image", "rm", &img])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

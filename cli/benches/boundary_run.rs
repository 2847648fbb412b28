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

mod support;

use std::process::{Command, Stdio};
use support::{die, pct, time};

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
    let img = support::image("contextos-bench-session:latest");
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

//! Whole-process cost of `contextos run -- /bin/true` against `docker run --rm` with the
//! same hardening flags, on the real Docker Engine.
//!
//! `contextos run` pays for everything it does — loading the policies, deciding the
//! exec verdict, resolving the image, opening a one-shot sandbox session (copy or
//! overlay, container create and start), the exec, reading the changeset, closing the
//! session and recording the run; the
//! docker CLI pays for its own process start and hijacked attach. Runs alternate, so a
//! background load change hits both sides alike. The image (see `support`) is assembled
//! from the host's `dash` and `true` and their libraries and imported with
//! `docker import` (no registry): a session's container keeps `/bin/sh` as its main
//! process.
//! Run with `cargo bench -p contextos --bench sandbox_overhead`; `SANDBOX_BENCH_RUNS`
//! sets the samples per side (default 30).

mod support;

use std::process::{Command, Stdio};
use support::{die, pct, time};

fn main() {
    let bin = env!("CARGO_BIN_EXE_contextos");
    let runs: usize = std::env::var("SANDBOX_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let img = support::image("contextos-bench-true:latest");
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

//! Whole-process latency of `contextos hook …`: the time an agent waits per tool call.
//!
//! Spawns the release binary once per sample and reports percentiles: real payload shapes
//! in a project holding the stdlib plus 500 user rules (`scenarios`), and one call from the
//! stdlib alone to 10,000 user rules, warm and cold (`sizes`), with the flatness ratios and
//! the `--version` floor. Run with `cargo bench -p contextos --bench hook_latency` (release
//! profile); `HOOK_BENCH_RUNS` sets the samples per row (default 300), `HOOK_BENCH_ONLY`
//! picks one table (`scenarios` or `sizes`), `HOOK_BENCH_BIN` measures another build of
//! the front binary (the static one `cargo build-hook` links, or an older commit's).
//!
//! `HOOK_BENCH_AGAINST=<binary>` compares two builds *turn about* instead: each sample of
//! one is followed by the same sample of the other (warm and cold, the stdlib alone and
//! +1,000 rules, each binary in its own project), so a noisy neighbour slows both alike.
//! It prints p10 and p50 of each and the cold / warm ratio of each. Copy both binaries
//! (`cp`) right before such a run: a warm call is mostly the kernel mapping the binary's
//! pages, and a binary file written an hour ago answers up to 20 % slower than a fresh
//! copy of itself (see the benchmarks chapter, "Fewer fresh pages").

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn user_rules(n: usize) -> String {
    let mut s = String::from("language 1;\n");
    for i in 0..n {
        let rule = match i % 4 {
            0 => format!("@id(\"u-{i}\") deny path write \"gen{i}/**/*.rs\" because \"generated\";\n"),
            1 => format!("@id(\"u-{i}\") allow exec \"tool{i} build *\" because \"routine\";\n"),
            2 => format!("@id(\"u-{i}\") ask path write \"mod{i}/src/**\" when path.ext == \"toml\" because \"review\";\n"),
            _ => format!("@id(\"u-{i}\") deny exec \"danger{i} *\" because \"dangerous\";\n"),
        };
        s.push_str(&rule);
    }
    s
}

fn claude(root: &Path, tool: &str, input: serde_json::Value) -> Vec<u8> {
    serde_json::json!({
        "session_id": "5b1e7a52-8c3f-4d0e-9a6b-2f4c1d7e9a30",
        "transcript_path": "/home/dev/.claude/projects/x.jsonl",
        "cwd": root, "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01"
    })
    .to_string()
    .into_bytes()
}

fn run_once(
    bin: &str,
    root: &Path,
    state_home: &Path,
    agent: &str,
    extra: &[&str],
    payload: &[u8],
) -> f64 {
    let start = Instant::now();
    let mut child = match Command::new(bin)
        .arg("--project")
        .arg(root)
        .args(["hook", agent])
        .args(extra)
        .env("XDG_STATE_HOME", state_home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot run {bin}: {e}");
            std::process::exit(2);
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload);
    }
    let _ = child.wait();
    start.elapsed().as_secs_f64() * 1000.0
}

/// Name, agent, extra flags, payload, and whether the cache is removed before each run.
struct Scenario<'a> {
    name: &'a str,
    agent: &'a str,
    extra: Vec<&'a str>,
    payload: Vec<u8>,
    cold: bool,
}

fn sc<'a>(
    name: &'a str,
    agent: &'a str,
    extra: Vec<&'a str>,
    payload: Vec<u8>,
    cold: bool,
) -> Scenario<'a> {
    Scenario {
        name,
        agent,
        extra,
        payload,
        cold,
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// A project holding the stdlib plus `n` generated user rules (none: the stdlib alone).
fn project(n: usize) -> tempfile::TempDir {
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("cannot create a temporary directory");
        std::process::exit(2);
    };
    let root = dir.path();
    let mut setup = std::fs::create_dir_all(root.join(".git"))
        .and_then(|()| std::fs::create_dir_all(root.join(".contextos/policies")))
        .and_then(|()| std::fs::create_dir_all(root.join("src")));
    if n > 0 {
        setup = setup.and_then(|()| {
            std::fs::write(root.join(".contextos/policies/main.policy"), user_rules(n))
        });
    }
    if let Err(e) = setup {
        eprintln!("cannot set up the project: {e}");
        std::process::exit(2);
    }
    dir
}

/// Builds the project's policy cache, lets it settle and has it stamped: a cache is
/// stamped (and loaded without reading the sources) only once every file is older than
/// the cache's racy window, three seconds, as it is between an agent's tool calls.
fn settle(bin: &str, root: &Path, home: &Path, payload: &[u8]) {
    run_once(bin, root, home, "claude", &["--no-log"], payload);
    std::thread::sleep(std::time::Duration::from_millis(3_200));
    run_once(bin, root, home, "claude", &["--no-log"], payload);
}

/// Percentiles of `runs` timed calls (after five warm-up calls).
fn measure(runs: usize, mut call: impl FnMut() -> f64) -> [f64; 4] {
    for _ in 0..5 {
        call();
    }
    let mut samples: Vec<f64> = (0..runs).map(|_| call()).collect();
    samples.sort_by(f64::total_cmp);
    [
        pct(&samples, 0.5),
        pct(&samples, 0.9),
        pct(&samples, 0.99),
        samples.last().copied().unwrap_or(f64::NAN),
    ]
}

fn row(name: &str, p: [f64; 4]) {
    println!(
        "{name:<62} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
        p[0], p[1], p[2], p[3]
    );
}

fn header(title: &str) {
    println!("\n{title}");
    println!(
        "{:<62} {:>8} {:>8} {:>8} {:>8}",
        "scenario", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
}

fn main() {
    let own = env!("CARGO_BIN_EXE_contextos").to_string();
    let bin_path = std::env::var("HOOK_BENCH_BIN").unwrap_or(own);
    let bin = bin_path.as_str();
    eprintln!("measuring {bin}");
    let runs: usize = std::env::var("HOOK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    // Which tables to print: `scenarios` (payload shapes at 500 rules), `sizes` (the same
    // call from the stdlib alone to 10,000 rules, warm and cold), or both (default).
    let only = std::env::var("HOOK_BENCH_ONLY").unwrap_or_default();
    let Ok(home) = tempfile::tempdir() else {
        eprintln!("cannot create a temporary directory");
        std::process::exit(2);
    };
    if let Ok(other) = std::env::var("HOOK_BENCH_AGAINST") {
        turn_about(&[bin, other.as_str()], runs, home.path());
        return;
    }
    // The floor: the same binary doing nothing but starting.
    let floor = measure(runs, || {
        let start = Instant::now();
        let _ = Command::new(bin)
            .arg("--version")
            .stdout(Stdio::null())
            .status();
        start.elapsed().as_secs_f64() * 1000.0
    });
    if only != "sizes" {
        scenarios(bin, runs, home.path());
    }
    let mut flat = Vec::new();
    if only != "scenarios" {
        header(&format!(
            "contextos hook claude, Bash `cargo test`, by policy size, {runs} runs each"
        ));
        for n in [0usize, 1_000, 10_000] {
            let dir = project(n);
            let root = dir.path();
            let label = if n == 0 {
                "stdlib alone".to_string()
            } else {
                format!("stdlib + {n} rules")
            };
            let payload = claude(root, "Bash", serde_json::json!({"command": "cargo test"}));
            settle(bin, root, home.path(), &payload);
            let warm = measure(runs, || {
                run_once(bin, root, home.path(), "claude", &[], &payload)
            });
            row(&format!("{label}: warm, logged"), warm);
            let nolog = measure(runs, || {
                run_once(bin, root, home.path(), "claude", &["--no-log"], &payload)
            });
            row(&format!("{label}: warm, --no-log"), nolog);
            let cold_runs = if n >= 10_000 { runs.min(30) } else { runs };
            let cold = measure(cold_runs, || {
                let _ = std::fs::remove_file(root.join(".contextos/state/policy.cache"));
                run_once(bin, root, home.path(), "claude", &["--no-log"], &payload)
            });
            row(&format!("{label}: cold (cache deleted), --no-log"), cold);
            flat.push((label, warm[0], nolog[0], cold[0]));
        }
    }
    header("floor");
    row("`contextos --version` (process start only)", floor);
    if let (Some(first), Some(last)) = (flat.first(), flat.last()) {
        println!(
            "\nratios (p50): {} / {}: logged {:.2}x, --no-log {:.2}x; cold / warm (--no-log) at {}: \
             {:.2}x, at {}: {:.2}x; hook ({}, --no-log) / --version: {:.2}x",
            last.0,
            first.0,
            last.1 / first.1,
            last.2 / first.2,
            first.0,
            first.3 / first.2,
            last.0,
            last.3 / last.2,
            first.0,
            first.2 / floor[0],
        );
    }
}

/// Builds measured sample by sample, alternating, on the same calls.
fn turn_about(bins: &[&str], runs: usize, home: &Path) {
    println!(
        "\nturn about, {runs} samples per row and binary: {}",
        bins.join(" vs ")
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10} {:>10}",
        "binary", "warm p10", "warm p50", "cold p10", "cold p50"
    );
    for n in [0usize, 1_000] {
        let dirs: Vec<tempfile::TempDir> = bins.iter().map(|_| project(n)).collect();
        let payloads: Vec<Vec<u8>> = dirs
            .iter()
            .map(|d| {
                claude(
                    d.path(),
                    "Bash",
                    serde_json::json!({"command": "cargo test"}),
                )
            })
            .collect();
        for ((bin, dir), payload) in bins.iter().zip(&dirs).zip(&payloads) {
            settle(bin, dir.path(), home, payload);
        }
        let mut warm: Vec<Vec<f64>> = vec![Vec::new(); bins.len()];
        let mut cold: Vec<Vec<f64>> = vec![Vec::new(); bins.len()];
        for round in 0..runs + 5 {
            for (i, bin) in bins.iter().enumerate() {
                let (root, payload) = (dirs[i].path(), &payloads[i]);
                let w = run_once(bin, root, home, "claude", &["--no-log"], payload);
                if round >= 5 {
                    warm[i].push(w);
                }
            }
        }
        for round in 0..runs + 5 {
            for (i, bin) in bins.iter().enumerate() {
                let (root, payload) = (dirs[i].path(), &payloads[i]);
                let _ = std::fs::remove_file(root.join(".contextos/state/policy.cache"));
                let c = run_once(bin, root, home, "claude", &["--no-log"], payload);
                if round >= 5 {
                    cold[i].push(c);
                }
            }
        }
        let label = if n == 0 {
            "stdlib alone".to_string()
        } else {
            format!("stdlib + {n} rules")
        };
        println!("{label}:");
        for (i, bin) in bins.iter().enumerate() {
            warm[i].sort_by(f64::total_cmp);
            cold[i].sort_by(f64::total_cmp);
            let (w10, w50) = (pct(&warm[i], 0.1), pct(&warm[i], 0.5));
            let (c10, c50) = (pct(&cold[i], 0.1), pct(&cold[i], 0.5));
            let name: String = bin
                .chars()
                .rev()
                .take(42)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            println!(
                "  {name:<42} {w10:>10.2} {w50:>10.2} {c10:>10.2} {c50:>10.2}   cold / warm: p10 {:.2}x, p50 {:.2}x",
                c10 / w10,
                c50 / w50
            );
        }
    }
}

fn scenarios(bin: &str, runs: usize, home: &Path) {
    let dir = project(500);
    let root = dir.path();
    let r = root.to_string_lossy().into_owned();
    settle(
        bin,
        root,
        home,
        &claude(root, "Bash", serde_json::json!({"command": "cargo test"})),
    );
    let scenarios = [
        sc("Bash `cargo test` (allow), cache hit, logged", "claude", vec![],
            claude(root, "Bash", serde_json::json!({"command": "cargo test"})), false),
        sc("Write src/lib.rs (no rule: silent), cache hit, logged", "claude", vec![],
            claude(root, "Write", serde_json::json!({"file_path": format!("{r}/src/lib.rs"), "content": "x"})), false),
        sc("Bash `rm -rf ~` (deny), cache hit, logged", "claude", vec![],
            claude(root, "Bash", serde_json::json!({"command": "rm -rf ~"})), false),
        sc("Bash `sed -i … .contextos/…` (deny), cache hit, logged", "claude", vec![],
            claude(root, "Bash", serde_json::json!({"command": "sed -i s/deny/allow/ .contextos/policies/main.policy"})), false),
        sc("Cursor beforeShellExecution `cargo test`, cache hit, logged", "cursor", vec![],
            serde_json::json!({"hook_event_name": "beforeShellExecution", "conversation_id": "c", "generation_id": "g",
                "workspace_roots": [r], "command": "cargo test", "cwd": r, "sandbox": false}).to_string().into_bytes(), false),
        sc("Bash `cargo test`, cache hit, --no-log", "claude", vec!["--no-log"],
            claude(root, "Bash", serde_json::json!({"command": "cargo test"})), false),
        sc("Bash `cargo test`, cold: cache rebuilt every call", "claude", vec!["--no-log"],
            claude(root, "Bash", serde_json::json!({"command": "cargo test"})), true),
    ];
    header(&format!(
        "contextos hook: whole-process latency, stdlib + 500 user rules, {runs} runs each"
    ));
    for Scenario {
        name,
        agent,
        extra,
        payload,
        cold,
    } in scenarios
    {
        let p = measure(runs, || {
            if cold {
                let _ = std::fs::remove_file(root.join(".contextos/state/policy.cache"));
            }
            run_once(bin, root, home, agent, &extra, &payload)
        });
        row(name, p);
    }
}

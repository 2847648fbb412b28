//! Whole-process latency of `contextos hook …`: the time an agent waits per tool call.
//!
//! Spawns the release binary once per sample, in a project holding the stdlib plus 500
//! user rules, with real payload shapes, and reports percentiles. Run with
//! `cargo bench -p contextos --bench hook_latency` (release profile); `HOOK_BENCH_RUNS`
//! sets the samples per scenario (default 300).

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

fn main() {
    let bin = env!("CARGO_BIN_EXE_contextos");
    let runs: usize = std::env::var("HOOK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("cannot create a temporary directory");
        std::process::exit(2);
    };
    let Ok(home) = tempfile::tempdir() else {
        eprintln!("cannot create a temporary directory");
        std::process::exit(2);
    };
    let root = dir.path();
    let setup = std::fs::create_dir_all(root.join(".git"))
        .and_then(|()| std::fs::create_dir_all(root.join(".contextos/policies")))
        .and_then(|()| std::fs::create_dir_all(root.join("src")))
        .and_then(|()| {
            std::fs::write(
                root.join(".contextos/policies/main.policy"),
                user_rules(500),
            )
        });
    if let Err(e) = setup {
        eprintln!("cannot set up the project: {e}");
        std::process::exit(2);
    }
    let r = root.to_string_lossy().into_owned();
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
    println!("contextos hook: whole-process latency, stdlib + 500 user rules, {runs} runs each");
    println!(
        "{:<62} {:>8} {:>8} {:>8} {:>8}",
        "scenario", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
    for Scenario {
        name,
        agent,
        extra,
        payload,
        cold,
    } in scenarios
    {
        // Warm the page cache and the policy cache.
        for _ in 0..5 {
            run_once(bin, root, home.path(), agent, &extra, &payload);
        }
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            if cold {
                let _ = std::fs::remove_file(root.join(".contextos/state/policy.cache"));
            }
            samples.push(run_once(bin, root, home.path(), agent, &extra, &payload));
        }
        samples.sort_by(f64::total_cmp);
        println!(
            "{name:<62} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            pct(&samples, 0.5),
            pct(&samples, 0.9),
            pct(&samples, 0.99),
            samples.last().copied().unwrap_or(f64::NAN)
        );
    }
    // The floor: the same binary doing nothing but starting.
    let mut floor: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let _ = Command::new(bin)
                .arg("--version")
                .stdout(Stdio::null())
                .status();
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    floor.sort_by(f64::total_cmp);
    println!(
        "{:<62} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
        "floor: `contextos --version` (process start only)",
        pct(&floor, 0.5),
        pct(&floor, 0.9),
        pct(&floor, 0.99),
        floor.last().copied().unwrap_or(f64::NAN)
    );
}

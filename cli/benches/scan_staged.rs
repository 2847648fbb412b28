//! Whole-process speed of `contextos scan --staged` against other secret scanners, on the
//! same staged index of a large, realistic repository; plus the latency of a typical commit.
//!
//! ```text
//! cargo bench -p contextos --bench scan_staged
//! ```
//! 1. **Full index.** `tests/corpus/generator.rs` (profile `large`) writes ≥ 100 MB across
//!    thousands of files (source in 20 file types, lockfiles, minified bundles, CSV data,
//!    binaries, a few hundred planted secrets) into a repository whose HEAD is an empty root
//!    commit, and stages it all, so every line is an added line. Each scanner runs on that
//!    index `SCAN_BENCH_RUNS` times (default 5) after one warm-up run; the median wall time,
//!    MB/s and the ratio to contextos are reported.
//! 2. **Typical commit.** The corpus is committed, 20 source files are modified and staged,
//!    and `contextos scan --staged` runs `SCAN_BENCH_COMMIT_RUNS` times (default 50): p50,
//!    p90, p99. External tools run 10 times each on the same change.
//! 3. **Many small files.** The first 3,563 text files of the corpus, each cut after the
//!    last line break within its first 212 bytes (about 0.6 MB in all), staged on an
//!    empty root commit: the per-file cost, which dominates a commit of many small files.
//!
//! In every section `git diff --cached` runs on the same index, alternating with
//! contextos, so the scan is compared with git producing the diff it reads.
//!
//! External tools are found as described in `tests/corpus/tools.rs` (`GITLEAKS=…`,
//! `SCAN_TOOLS_DIR`, `PATH`); a missing tool is skipped with a note. detect-secrets takes
//! minutes on the full index, so it runs there only with `SCAN_BENCH_SLOW=1` (once).
//! `CONTEXTOS=path` overrides the binary under test (default: this build's release binary).
//! `SCAN_BENCH_DIR=path` keeps the repository there (default: a temporary directory, removed
//! after); it must be new or empty, since the corpus is staged on an empty root commit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]

#[path = "../../tests/corpus/mod.rs"]
mod corpus;

use corpus::generator::{self, Class, Options};
use corpus::tools::{self, Tool};
use std::path::{Path, PathBuf};

/// The 1-minute load average, to show whether the machine was quiet during a run.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Timing {
    tool: Tool,
    version: String,
    code: i32,
    samples: Vec<f64>,
    findings: usize,
}

fn measure(
    tool: Tool,
    bin: &Path,
    repo: &Path,
    reports: &Path,
    warmup: usize,
    runs: usize,
) -> Option<Timing> {
    let out = reports.join(format!("{}.json", tool.name()));
    let mut samples = Vec::with_capacity(runs);
    let mut code = 0;
    for i in 0..warmup + runs {
        let r = match tools::run(tool, bin, repo, &out) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("note: {}: {e}; skipped", tool.name());
                return None;
            }
        };
        if !tools::exit_ok(tool, r.code) {
            eprintln!(
                "note: {} exited {}; skipped\n{}",
                tool.name(),
                r.code,
                r.stderr.chars().take(1500).collect::<String>()
            );
            return None;
        }
        code = r.code;
        if i >= warmup {
            samples.push(r.elapsed.as_secs_f64());
        }
    }
    let findings = tools::findings(tool, &out).map(|f| f.len()).unwrap_or(0);
    Some(Timing {
        tool,
        version: tools::version(tool, bin),
        code,
        samples,
        findings,
    })
}

/// `detect-secrets-hook FILE…` (its pre-commit hook, next to `detect-secrets`), timed.
fn hook_files(bin: &Path, repo: &Path, files: &[String], runs: usize) -> Option<Timing> {
    let hook = bin.with_file_name("detect-secrets-hook");
    if !hook.is_file() {
        println!("note: {} not found; skipped", hook.display());
        return None;
    }
    let mut samples = Vec::new();
    let mut code = 0;
    for i in 0..runs + 2 {
        let start = std::time::Instant::now();
        let out = std::process::Command::new(&hook)
            .args(files)
            .current_dir(repo)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        code = out.code().unwrap_or(-1);
        if i >= 2 {
            samples.push(start.elapsed().as_secs_f64());
        }
    }
    Some(Timing {
        tool: Tool::DetectSecrets,
        version: tools::version(Tool::DetectSecrets, bin),
        code,
        samples,
        findings: 0,
    })
}

/// Wall-time samples (seconds) of `contextos scan --staged --format json` and of
/// `git diff --cached`, run one after the other `runs` times after one warm-up each.
fn versus_git(contextos: &Path, repo: &Path, runs: usize) -> (Vec<f64>, Vec<f64>) {
    let time = |cmd: &mut std::process::Command| {
        let start = std::time::Instant::now();
        let ok = cmd
            .current_dir(repo)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.code().is_some_and(|c| c <= 1));
        assert!(matches!(ok, Ok(true)), "{cmd:?} failed");
        start.elapsed().as_secs_f64()
    };
    let mut ours = Vec::new();
    let mut git = Vec::new();
    for i in 0..=runs {
        let a = time(
            std::process::Command::new(contextos).args(["scan", "--staged", "--format", "json"]),
        );
        let b = time(std::process::Command::new("git").args(["diff", "--cached"]));
        if i > 0 {
            ours.push(a);
            git.push(b);
        }
    }
    ours.sort_by(f64::total_cmp);
    git.sort_by(f64::total_cmp);
    (ours, git)
}

fn print_versus_git(what: &str, ours: &[f64], git: &[f64]) {
    let ms =
        |v: &[f64], q: f64| tools::percentile(&v.iter().map(|s| s * 1000.0).collect::<Vec<_>>(), q);
    println!(
        "\n{what}, against `git diff --cached` on the same index ({} alternating runs):\n\n\
         | command | p50 ms | min ms | max ms |\n|---|---|---|---|\n\
         | contextos scan --staged | {:.1} | {:.1} | {:.1} |\n\
         | git diff --cached | {:.1} | {:.1} | {:.1} |\n\
         \ncontextos / git (p50): {:.2}×",
        ours.len(),
        ms(ours, 0.5),
        ms(ours, 0.0),
        ms(ours, 1.0),
        ms(git, 0.5),
        ms(git, 0.0),
        ms(git, 1.0),
        ms(ours, 0.5) / ms(git, 0.5),
    );
}

fn main() {
    let runs = env_usize("SCAN_BENCH_RUNS", 5);
    let commit_runs = env_usize("SCAN_BENCH_COMMIT_RUNS", 50);
    let slow = std::env::var_os("SCAN_BENCH_SLOW").is_some();
    let seed = env_usize("SCAN_BENCH_SEED", 7) as u64;
    let contextos = std::env::var_os("CONTEXTOS").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_contextos")),
        PathBuf::from,
    );

    let opts = Options::large(seed);
    let corpus = generator::generate(&opts);
    let bytes = corpus.bytes();
    let mb = bytes as f64 / 1e6;
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo =
        std::env::var_os("SCAN_BENCH_DIR").map_or_else(|| tmp.path().join("repo"), PathBuf::from);
    let reports = tmp.path().join("reports");
    // A repository left by an earlier run already holds the corpus in a commit: staged on
    // top of it, the "whole index" would be a few files, and the figures would be wrong.
    if std::fs::read_dir(&repo).is_ok_and(|mut d| d.next().is_some()) {
        eprintln!(
            "SCAN_BENCH_DIR {} is not empty; the bench stages the corpus on an empty root commit, so give it a new directory",
            repo.display()
        );
        std::process::exit(2);
    }
    std::fs::create_dir_all(&repo).expect("repo dir");
    std::fs::create_dir_all(&reports).expect("reports dir");
    let t = std::time::Instant::now();
    if let Err(e) = tools::init_repo(&repo, true).and_then(|()| tools::stage(&repo, &corpus)) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    println!(
        "scan --staged speed: {} files, {mb:.1} MB staged on an empty root commit ({} secrets, {} blocked files, {} stubs planted); set up in {:.1} s; {} cores",
        corpus.files.len(),
        corpus.count(Class::Secret),
        corpus.count(Class::BlockedFile),
        corpus.count(Class::Stub),
        t.elapsed().as_secs_f64(),
        std::thread::available_parallelism().map_or(1, usize::from),
    );

    let mut list: Vec<(Tool, PathBuf)> = vec![(Tool::Contextos, contextos.clone())];
    for &tool in tools::EXTERNAL {
        match tools::find(tool) {
            Some(p) => list.push((tool, p)),
            None => println!("note: {} not found; skipped", tool.name()),
        }
    }

    // 1. The whole index.
    let mut rows: Vec<Timing> = Vec::new();
    for (tool, bin) in &list {
        let (warm, n) = if *tool == Tool::DetectSecrets {
            if !slow {
                println!("note: detect-secrets skipped on the full index (minutes); set SCAN_BENCH_SLOW=1");
                continue;
            }
            (0, 1)
        } else {
            (1, runs)
        };
        if let Some(t) = measure(*tool, bin, &repo, &reports, warm, n) {
            rows.push(t);
        }
    }
    let base = rows
        .iter()
        .find(|r| r.tool == Tool::Contextos)
        .map(|r| tools::median(r.samples.clone()));
    println!(
        "\nFull staged index ({mb:.1} MB), {runs} runs after a warm-up, median (load average now {}):\n",
        load()
    );
    println!(
        "| tool | version | median s | min s | max s | MB/s | × contextos time | exit | findings |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let med = tools::median(r.samples.clone());
        let min = r.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = r.samples.iter().copied().fold(0.0, f64::max);
        let ratio = base.map_or_else(|| "—".into(), |b| format!("{:.1}×", med / b));
        println!(
            "| {} | {} | {med:.3} | {min:.3} | {max:.3} | {:.0} | {ratio} | {} | {} |",
            r.tool.name(),
            r.version,
            mb / med,
            r.code,
            r.findings
        );
    }

    let (ours, git) = versus_git(&contextos, &repo, runs);
    print_versus_git(&format!("Full staged index ({mb:.1} MB)"), &ours, &git);

    // 2. A typical commit: 20 modified files on top of the committed corpus.
    if let Err(e) = tools::git(&repo, &["commit", "-q", "-m", "corpus"]) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let change = generator::typical_change(&corpus, 20, seed + 1);
    let changed_bytes: usize = change.iter().map(|f| f.data.len()).sum();
    let staged = generator::Corpus {
        files: change,
        labels: Vec::new(),
    };
    if let Err(e) = tools::stage(&repo, &staged) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    println!(
        "\nTypical commit: {} modified files ({:.0} KB) staged on top of the committed {mb:.0} MB repository (load average now {}):\n",
        staged.files.len(),
        changed_bytes as f64 / 1e3,
        load()
    );
    println!("| tool | runs | p50 ms | p90 ms | p99 ms | max ms | × contextos p50 | findings |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut base_p50 = None;
    let changed: Vec<String> = staged.files.iter().map(|f| f.path.clone()).collect();
    for (tool, bin) in &list {
        let n = if *tool == Tool::Contextos {
            commit_runs
        } else {
            10
        };
        // detect-secrets has no staged mode: its pre-commit hook reads the named files.
        let t = if *tool == Tool::DetectSecrets {
            hook_files(bin, &repo, &changed, n)
        } else {
            measure(*tool, bin, &repo, &reports, 2, n)
        };
        let Some(t) = t else {
            continue;
        };
        let mut ms: Vec<f64> = t.samples.iter().map(|s| s * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let p50 = tools::percentile(&ms, 0.5);
        if *tool == Tool::Contextos {
            base_p50 = Some(p50);
        }
        let ratio = base_p50.map_or_else(|| "—".into(), |b| format!("{:.1}×", p50 / b));
        println!(
            "| {} | {n} | {p50:.1} | {:.1} | {:.1} | {:.1} | {ratio} | {} |",
            tool.name(),
            tools::percentile(&ms, 0.9),
            tools::percentile(&ms, 0.99),
            ms.last().copied().unwrap_or(f64::NAN),
            t.findings
        );
    }
    let (ours, git) = versus_git(&contextos, &repo, commit_runs.min(20));
    print_versus_git("Typical commit", &ours, &git);

    // 3. Many small files on an empty root commit.
    let small_repo = tmp.path().join("small");
    let mut small = generator::Corpus {
        files: Vec::new(),
        labels: Vec::new(),
    };
    for f in corpus.files.iter().filter(|f| !f.data.contains(&0)) {
        let head = f.data.get(..212).unwrap_or(&f.data);
        let cut = head
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(head, |i| &head[..=i]);
        small.files.push(generator::File {
            path: f.path.clone(),
            data: cut.to_vec(),
        });
        if small.files.len() == 3_563 {
            break;
        }
    }
    std::fs::create_dir_all(&small_repo).expect("small repo dir");
    if let Err(e) =
        tools::init_repo(&small_repo, false).and_then(|()| tools::stage(&small_repo, &small))
    {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let (ours, git) = versus_git(&contextos, &small_repo, commit_runs.min(20));
    print_versus_git(
        &format!(
            "Many small files: {} files, {:.2} MB staged on an empty repository",
            small.files.len(),
            small.bytes() as f64 / 1e6
        ),
        &ours,
        &git,
    );
    println!("\nload average at the end: {}", load());
}

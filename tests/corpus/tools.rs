//! Running scanners on a staged git index, for the bench binaries: `contextos` itself and,
//! when they are installed, gitleaks, Betterleaks, Kingfisher and detect-secrets.
//!
//! An external tool is found through its environment variable (`GITLEAKS`, `BETTERLEAKS`,
//! `KINGFISHER`, `DETECT_SECRETS`: a path to the executable), then in `$SCAN_TOOLS_DIR`
//! (default `/work/tools/bin`), then on `PATH`. A tool that is not found is skipped.
#![allow(
    dead_code,
    reason = "shared by several test and bench crates; each uses a part"
)]

use super::generator::Corpus;
use super::score::{self, Finding};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Contextos,
    Gitleaks,
    Betterleaks,
    Kingfisher,
    DetectSecrets,
}

pub const EXTERNAL: &[Tool] = &[
    Tool::Gitleaks,
    Tool::Betterleaks,
    Tool::Kingfisher,
    Tool::DetectSecrets,
];

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Contextos => "contextos",
            Tool::Gitleaks => "gitleaks",
            Tool::Betterleaks => "betterleaks",
            Tool::Kingfisher => "kingfisher",
            Tool::DetectSecrets => "detect-secrets",
        }
    }
    fn env(self) -> &'static str {
        match self {
            Tool::Contextos => "CONTEXTOS",
            Tool::Gitleaks => "GITLEAKS",
            Tool::Betterleaks => "BETTERLEAKS",
            Tool::Kingfisher => "KINGFISHER",
            Tool::DetectSecrets => "DETECT_SECRETS",
        }
    }
    /// The command line, for the report.
    pub fn command(self) -> &'static str {
        match self {
            Tool::Contextos => "contextos --project . scan --staged --enforce --format json",
            Tool::Gitleaks => "gitleaks git --staged --no-banner --redact -f json -r OUT .",
            Tool::Betterleaks => "betterleaks git --staged --no-banner --redact -o OUT .",
            Tool::Kingfisher => "kingfisher scan . --staged --no-validate --no-update-check --no-dedup -f json -o OUT",
            Tool::DetectSecrets => "detect-secrets scan (git ls-files = the staged files)",
        }
    }
}

/// Where an external tool's executable is, if anywhere.
pub fn find(tool: Tool) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(tool.env()) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let dir = std::env::var_os("SCAN_TOOLS_DIR")
        .map_or_else(|| PathBuf::from("/work/tools/bin"), PathBuf::from);
    let p = dir.join(tool.name());
    if p.is_file() {
        return Some(p);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(tool.name()))
            .find(|p| p.is_file())
    })
}

/// The version line a tool prints, for the report.
pub fn version(tool: Tool, bin: &Path) -> String {
    let arg = match tool {
        Tool::Gitleaks | Tool::Betterleaks => "version",
        _ => "--version",
    };
    Command::new(bin)
        .arg(arg)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

pub fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Corpus",
            "-c",
            "user.email=corpus@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `git init` in `dir`; with `root_commit`, an empty first commit so HEAD exists (Kingfisher
/// cannot scan a staged index on an unborn HEAD).
pub fn init_repo(dir: &Path, root_commit: bool) -> Result<(), String> {
    git(dir, &["init", "-q", "-b", "main"])?;
    if root_commit {
        git(dir, &["commit", "-q", "--allow-empty", "-m", "root"])?;
    }
    Ok(())
}

/// Writes the corpus into the work tree and stages everything.
pub fn stage(dir: &Path, corpus: &Corpus) -> Result<(), String> {
    corpus
        .write_to(dir)
        .map_err(|e| format!("cannot write the corpus: {e}"))?;
    git(dir, &["add", "-A", "-f"])?;
    // contextos keeps its policy cache in the project; it is not part of the change.
    git(
        dir,
        &[
            "rm",
            "-r",
            "-q",
            "--cached",
            "--ignore-unmatch",
            ".contextos/state",
        ],
    )
}

/// One run of a tool on the staged index of `repo`; its report goes to `out`.
pub struct RunResult {
    pub code: i32,
    pub elapsed: Duration,
    pub stderr: String,
}

pub fn run(tool: Tool, bin: &Path, repo: &Path, out: &Path) -> Result<RunResult, String> {
    let mut cmd = Command::new(bin);
    let o = out.to_string_lossy().into_owned();
    match tool {
        Tool::Contextos => {
            cmd.arg("--project").arg(repo).args([
                "scan",
                "--staged",
                "--enforce",
                "--format",
                "json",
            ]);
        }
        Tool::Gitleaks => {
            cmd.args([
                "git",
                "--staged",
                "--no-banner",
                "--redact",
                "-f",
                "json",
                "-r",
                &o,
                ".",
            ]);
        }
        Tool::Betterleaks => {
            cmd.args(["git", "--staged", "--no-banner", "--redact", "-o", &o, "."]);
        }
        Tool::Kingfisher => {
            cmd.args([
                "scan",
                ".",
                "--staged",
                "--no-validate",
                "--no-update-check",
                "--no-dedup",
                "-f",
                "json",
                "-o",
                &o,
            ]);
        }
        Tool::DetectSecrets => {
            cmd.arg("scan");
        }
    }
    let stdout_to_file = matches!(tool, Tool::Contextos | Tool::DetectSecrets);
    let file = if stdout_to_file {
        Stdio::from(std::fs::File::create(out).map_err(|e| format!("{o}: {e}"))?)
    } else {
        Stdio::null()
    };
    let start = Instant::now();
    let output = cmd
        .current_dir(repo)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let elapsed = start.elapsed();
    Ok(RunResult {
        code: output.status.code().unwrap_or(-1),
        elapsed,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// Whether the exit code means "scanned" (with or without findings) for this tool.
pub fn exit_ok(tool: Tool, code: i32) -> bool {
    match tool {
        Tool::Contextos | Tool::Gitleaks | Tool::Betterleaks => code == 0 || code == 1,
        Tool::Kingfisher => code == 0 || code == 200 || code == 205,
        Tool::DetectSecrets => code == 0,
    }
}

/// Parses a tool's report into findings.
pub fn findings(tool: Tool, out: &Path) -> Result<Vec<Finding>, String> {
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", out.display()))?;
    Ok(match tool {
        Tool::Contextos => score::parse_contextos(&v),
        Tool::Gitleaks => score::parse_gitleaks(&v),
        Tool::Betterleaks => score::parse_betterleaks(&v),
        Tool::Kingfisher => score::parse_kingfisher(&v),
        Tool::DetectSecrets => score::parse_detect_secrets(&v),
    })
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    if xs.is_empty() {
        return f64::NAN;
    }
    xs[xs.len() / 2]
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

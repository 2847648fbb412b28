//! `contextos scan --staged`: the commit verdict on the git index.
//!
//! Reads the staged change (gix; index blobs, never the working tree), runs the policy
//! set's detectors over the added lines and touched paths, applies inline markers and
//! the baseline, and lets the `commit` rules decide every finding. Exit 0: clean, or
//! advisory (without `--enforce`, or nothing denied); 1: a finding is denied and
//! `--enforce` is set; 2: something could not be inspected — the change, the policies,
//! the scope or the baseline — which callers treat as a block.

use crate::policy_cache::{self, Loaded};
use crate::scan_report::{self, Report};
use crate::support::context::{EXIT_FINDINGS, EXIT_OK};
use crate::support::Context;
use contextos_engine::effects::decision_log;
use contextos_engine::scan::{self, detect::Detectors, scope::Scope, staged, suppress};
use contextos_engine::Effect;
use std::path::{Path, PathBuf};

/// Staged blobs over this size are not read (and block with `--enforce`).
pub const DEFAULT_MAX_BLOB_BYTES: u64 = 8 << 20;
const DEFAULT_BASELINE: &str = ".contextos/scan-baseline.toml";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scan what the next commit would record: the git index against HEAD.
    #[arg(long, required = true)]
    pub staged: bool,
    /// Exit 1 when the commit verdict is deny (the pre-commit hook sets this).
    #[arg(long)]
    pub enforce: bool,
    /// A task scope file: one path glob per line; any touched path outside it is a finding.
    #[arg(long, value_name = "FILE")]
    pub scope: Option<PathBuf>,
    /// Accepted findings (default: `.contextos/scan-baseline.toml` when present).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Staged blobs larger than this many bytes are not read and block with --enforce
    /// (default: `[scan] max_blob_bytes` in contextos.toml, else 8 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_blob_bytes: Option<u64>,
    /// Decide as this role (roles declared in the policies).
    #[arg(long)]
    pub role: Option<String>,
}

/// Today's date in UTC as (year, month, day), for baseline expiry.
fn today_utc() -> (u16, u8, u8) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = decision_log::civil_from_days(secs / 86_400);
    (
        u16::try_from(y).unwrap_or(u16::MAX),
        u8::try_from(m).unwrap_or(1),
        u8::try_from(d).unwrap_or(1),
    )
}

fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

pub fn run(ctx: &Context, args: &Args) -> u8 {
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let max_blob_bytes = args
        .max_blob_bytes
        .or(project.config.scan.max_blob_bytes)
        .unwrap_or(DEFAULT_MAX_BLOB_BYTES);

    // The inputs that decide the verdict are all read before anything is scanned, so a
    // broken one stops the scan with its location instead of weakening it.
    let scope = match &args.scope {
        None => None,
        Some(p) => {
            let path = resolve(&project.root, p);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    return ctx.fail(&format!(
                        "cannot read the scope file {}: {e}",
                        path.display()
                    ))
                }
            };
            match Scope::parse(&text, &p.display().to_string()) {
                Ok(s) => Some(s),
                Err(e) => return ctx.fail(&e.to_string()),
            }
        }
    };
    let (baseline_path, explicit) = match &args.baseline {
        Some(p) => (resolve(&project.root, p), true),
        None => (
            project.root.join(
                project
                    .config
                    .scan
                    .baseline
                    .as_deref()
                    .unwrap_or(DEFAULT_BASELINE),
            ),
            project.config.scan.baseline.is_some(),
        ),
    };
    let baseline = match std::fs::read_to_string(&baseline_path) {
        Ok(text) => {
            let name = baseline_path
                .strip_prefix(&project.root)
                .unwrap_or(&baseline_path)
                .display()
                .to_string();
            match suppress::Baseline::parse(&text, &name, today_utc()) {
                Ok(b) => b,
                Err(e) => return ctx.fail(&e.to_string()),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
            suppress::Baseline::default()
        }
        Err(e) => {
            return ctx.fail(&format!(
                "cannot read the baseline {}: {e}",
                baseline_path.display()
            ))
        }
    };

    let user_key = decision_log::default_key_path().and_then(|p| decision_log::user_key(&p).ok());
    let policy = match policy_cache::load(&project, user_key.as_ref().map(|k| &k[..])) {
        Ok(Loaded::Ready { set, .. }) => set,
        Ok(Loaded::Invalid(out)) => {
            crate::output::eprint_diagnostics(&out, false);
            return ctx.fail(
                "the policies do not compile; nothing can be decided (run `contextos check`)",
            );
        }
        Err(e) => return ctx.fail(&e.to_string()),
    };
    if let Some(role) = &args.role {
        if !policy.roles.contains(role) {
            return ctx.fail(&format!("role `{role}` is not declared in the policies"));
        }
    }
    let detectors = match Detectors::new(&policy.detectors) {
        Ok(d) => d,
        Err(e) => return ctx.fail(&e.to_string()),
    };

    let change = match staged::read(&project.root) {
        Ok(c) => c,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let scanned = match scan::scan_staged(
        &change,
        &detectors,
        scope.as_ref(),
        staged::ReadOptions { max_blob_bytes },
        threads,
    ) {
        Ok(s) => s,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    let mut suppressed = scanned.suppressed;
    let (kept, by_baseline) = baseline.apply(scanned.findings);
    suppressed.extend(by_baseline);
    let paths = change.paths();
    let facts = scan::verdict::ChangeFacts {
        role: args.role.as_deref(),
        host_unsafe: crate::support::run_records::produced_by_host_unsafe(&project.root, &paths),
    };
    let verdict = scan::verdict::decide(&policy, &paths, kept, facts);

    let report = Report {
        verdict: &verdict,
        suppressed: &suppressed,
        files: scanned.files,
        bytes: scanned.bytes,
        enforce: args.enforce,
    };
    scan_report::print(ctx.format, &report);
    // Without --enforce every verdict is advisory; an ask is reported for review.
    if args.enforce && verdict.verdict == Effect::Deny {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        let (y, m, d) = today_utc();
        assert!(y >= 2024 && (1..=12).contains(&m) && (1..=31).contains(&d));
    }
}

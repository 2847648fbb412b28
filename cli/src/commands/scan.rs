//! `contextos scan --staged`: the commit verdict on the git index.
//!
//! Reads the staged change (gix; index blobs, never the working tree), runs the policy
//! set's detectors over the added lines and touched paths, applies inline markers and
//! the baseline, and lets the `commit` rules decide every finding. Exit 0: clean, or
//! advisory (without `--enforce`, or nothing denied); 1: a finding is denied and
//! `--enforce` is set; 2: something could not be inspected — the change, the policies,
//! the scope or the baseline — which callers treat as a block.

use std::path::PathBuf;

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

#[cfg(feature = "scan")]
pub use imp::run;

/// The scan itself: only in a build with the git reader.
#[cfg(feature = "scan")]
mod imp {
    use super::Args;

    use crate::policy_cache::{self, Loaded};
    use crate::scan_report::{self, Report};
    use crate::support::{CliError, Context, Exit};
    use contextos_engine::effects::clock;
    use contextos_engine::effects::user_key::UserKey;
    use contextos_engine::scan::{self, detect::Detectors, scope::Scope, staged, suppress};
    use contextos_engine::Effect;
    use std::path::{Path, PathBuf};

    /// Staged blobs over this size are not read (and block with `--enforce`).
    pub const DEFAULT_MAX_BLOB_BYTES: u64 = 8 << 20;
    const DEFAULT_BASELINE: &str = ".contextos/scan-baseline.toml";

    fn resolve(root: &Path, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        }
    }

    pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
        let project = ctx.project()?;
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
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    CliError::io(format!("cannot read the scope file {}", path.display()), e)
                })?;
                let scope = Scope::parse(&text, &p.display().to_string())
                    .map_err(|e| CliError::Scan(Box::new(e)))?;
                Some(scope)
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
                suppress::Baseline::parse(&text, &name, clock::today_utc())
                    .map_err(|e| CliError::Scan(Box::new(e)))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
                suppress::Baseline::default()
            }
            Err(e) => {
                return Err(CliError::io(
                    format!("cannot read the baseline {}", baseline_path.display()),
                    e,
                ))
            }
        };

        let user_key = UserKey::load_or_create_default();
        let policy = match policy_cache::load(&project, user_key.as_ref())? {
            Loaded::Ready { set, .. } => set,
            Loaded::Invalid(out) => {
                return Err(CliError::policy_invalid(&out, "nothing can be decided"))
            }
        };
        if let Some(role) = &args.role {
            if !policy.roles.contains(role) {
                return Err(CliError::Input(format!(
                    "role `{role}` is not declared in the policies"
                )));
            }
        }
        // Preparing the detectors (the keyword automaton, the glob set) and reading the
        // index and HEAD take a few milliseconds each and need nothing from each other:
        // on two threads, a small commit's scan waits for the longer of the two only.
        let read_opts = staged::ReadOptions { max_blob_bytes };
        let (detectors, change) = std::thread::scope(|s| {
            let change = s.spawn(|| staged::read_limited(&project.root, read_opts));
            let detectors = policy
                .detectors
                .get()
                .map_err(|e| CliError::Scan(format!("the policy cache's detectors: {e}").into()))
                .and_then(|d| Detectors::new(d).map_err(|e| CliError::Scan(Box::new(e))));
            let change = change
                .join()
                .map_err(|_| CliError::Scan("reading the staged change failed".into()))
                .and_then(|r| r.map_err(|e| CliError::Scan(Box::new(e))));
            (detectors, change)
        });
        // A broken policy is reported before a broken index, as when the two ran in turn.
        let detectors = detectors?;
        let change = change?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let scanned = scan::scan_staged(&change, &detectors, scope.as_ref(), read_opts, threads)
            .map_err(|e| CliError::Scan(Box::new(e)))?;
        let mut suppressed = scanned.suppressed;
        let (kept, by_baseline) = baseline.apply(scanned.findings);
        suppressed.extend(by_baseline);
        let paths = change.paths();
        let facts = scan::verdict::ChangeFacts {
            role: args.role.as_deref(),
            host_unsafe: crate::support::run_records::produced_by_host_unsafe(
                &project.root,
                &paths,
            ),
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
            Ok(Exit::Findings)
        } else {
            Ok(Exit::Ok)
        }
    }
}

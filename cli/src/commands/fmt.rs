//! `contextos fmt [--check] [FILES]`: canonical formatting of policy files.
//!
//! Rewrites go through the journal under the project lock, like every other write: all
//! reformatted files land in one transaction, and each insists the file still holds the
//! text that was formatted, so an edit made meanwhile aborts the rewrite instead of being
//! overwritten.

use crate::output;
use crate::support::changeset::commit_steps;
use crate::support::{CliError, Context, Exit, Format};
use contextos_engine::effects::journal::{Change, Precondition, Step};
use contextos_engine::effects::safe_fs::sha256_hex;
use contextos_engine::grammar::{format_source, SourceFile};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Report files that are not formatted instead of rewriting them (exit 1 if any).
    #[arg(long)]
    check: bool,
    /// Seconds to wait for the project lock.
    #[arg(long, default_value_t = 30)]
    lock_timeout: u64,
    /// Files to format (default: the project's policy files).
    files: Vec<PathBuf>,
}

/// A file whose canonical form differs from its text.
struct Reformatted {
    name: String,
    path: PathBuf,
    original: String,
    formatted: String,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let files: Vec<(String, PathBuf)> = if args.files.is_empty() {
        ctx.project()?.policy_files()?
    } else {
        args.files
            .iter()
            .map(|p| (p.display().to_string(), p.clone()))
            .collect()
    };
    let mut changed = Vec::new();
    let mut broken = false;
    for (name, path) in &files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::io(format!("cannot read {name}"), e))?;
        match format_source(&text) {
            Ok(formatted) if formatted == text => {}
            Ok(formatted) => changed.push(Reformatted {
                name: name.clone(),
                path: path.clone(),
                original: text,
                formatted,
            }),
            Err(diags) => {
                broken = true;
                if ctx.format != Format::Json {
                    let f = SourceFile::new(name.clone(), text.clone());
                    for d in &diags {
                        eprint!("{}", f.render(d));
                    }
                }
            }
        }
    }
    if !args.check && !changed.is_empty() {
        rewrite(ctx, &changed, args.lock_timeout)?;
    }
    let names: Vec<String> = changed.iter().map(|c| c.name.clone()).collect();
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "check": args.check,
            "files": files.len(),
            "unformatted": if args.check { names.clone() } else { Vec::new() },
            "formatted": if args.check { Vec::new() } else { names.clone() },
            "ok": !broken && (!args.check || names.is_empty()),
        })),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            for name in &names {
                if args.check {
                    outln!("would reformat {name}");
                } else {
                    outln!("formatted {name}");
                }
            }
        }
    }
    Ok(if broken {
        Exit::Unverified
    } else if args.check && !names.is_empty() {
        Exit::Findings
    } else {
        Exit::Ok
    })
}

/// Writes every reformatted file in one journaled transaction under the project lock.
fn rewrite(ctx: &Context, changed: &[Reformatted], lock_timeout: u64) -> Result<(), CliError> {
    let project = ctx.project()?;
    let root = canonical(&project.root)?;
    let mut steps = Vec::new();
    for c in changed {
        let rel = within(&root, &canonical(&c.path)?).ok_or_else(|| {
            CliError::Input(format!(
                "{} lies outside the project {}: `contextos fmt` writes through the project's journal",
                c.name,
                project.root.display()
            ))
        })?;
        let mode = std::fs::metadata(&c.path)
            .map_err(|e| CliError::io(format!("cannot read {}", c.name), e))?
            .permissions()
            .mode()
            & 0o777;
        steps.push(Step {
            change: Change::Write {
                path: rel,
                content: c.formatted.clone().into_bytes(),
                mode,
                exact_mode: false,
            },
            precondition: Precondition::Sha256(sha256_hex(c.original.as_bytes())),
        });
    }
    commit_steps(&project.root, &steps, lock_timeout, "contextos fmt")?;
    Ok(())
}

fn canonical(p: &Path) -> Result<PathBuf, CliError> {
    std::fs::canonicalize(p).map_err(|e| CliError::io(format!("cannot resolve {}", p.display()), e))
}

/// `path` relative to `root` with `/` separators, when it lies inside it.
fn within(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().map(str::to_string))
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

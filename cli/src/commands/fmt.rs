//! `contextos fmt [--check] [FILES]`: canonical formatting of policy files.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::grammar::{format_source, SourceFile};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Report files that are not formatted instead of rewriting them (exit 1 if any).
    #[arg(long)]
    check: bool,
    /// Files to format (default: the project's policy files).
    files: Vec<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let files: Vec<(String, PathBuf)> = if args.files.is_empty() {
        let project = ctx.project()?;
        project.policy_files()?
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
            Ok(formatted) => {
                changed.push(name.clone());
                if !args.check {
                    // Write beside the file and rename, so a crash never leaves half a policy.
                    let tmp = path.with_extension("policy.fmt-tmp");
                    let written = std::fs::write(&tmp, formatted.as_bytes())
                        .and_then(|()| std::fs::rename(&tmp, path));
                    if let Err(e) = written {
                        let _ = std::fs::remove_file(&tmp);
                        return Err(CliError::io(format!("cannot write {name}"), e));
                    }
                }
            }
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
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "check": args.check,
            "files": files.len(),
            "unformatted": if args.check { changed.clone() } else { Vec::new() },
            "formatted": if args.check { Vec::new() } else { changed.clone() },
            "ok": !broken && (!args.check || changed.is_empty()),
        })),
        Format::Text | Format::Github | Format::Sarif => {
            for name in &changed {
                if args.check {
                    outln!("would reformat {name}");
                } else {
                    outln!("formatted {name}");
                }
            }
        }
    }
    if broken {
        Ok(Exit::Unverified)
    } else if args.check && !changed.is_empty() {
        Ok(Exit::Findings)
    } else {
        Ok(Exit::Ok)
    }
}

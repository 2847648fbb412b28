//! `contextos journal status|recover`: interrupted transactions.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::effects::journal;
use contextos_engine::effects::safe_fs::SafeRoot;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// List interrupted transactions.
    Status,
    /// Roll interrupted transactions back (or finish cleaning up committed ones).
    Recover,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let root = SafeRoot::open(&project.root)?;
    let (pending, recovered) = match args.what {
        What::Status => (
            journal::status(&root).map_err(CliError::JournalState)?,
            false,
        ),
        What::Recover => {
            let guard = ctx.take_lock(
                &project.root,
                "contextos journal recover",
                Duration::from_secs(30),
            )?;
            (
                journal::recover(&root, &guard).map_err(CliError::JournalState)?,
                true,
            )
        }
    };
    match ctx.format {
        Format::Json => output::print_json(
            serde_json::json!({ "recovered": recovered, "transactions": pending }),
        ),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            if pending.is_empty() {
                outln!("the journal is empty");
            }
            for p in &pending {
                let action = match (recovered, p.state) {
                    (false, _) => "pending",
                    (true, "committed") => "cleaned up",
                    (true, _) => "rolled back",
                };
                outln!("{action}: {} ({}) {}", p.txid, p.state, p.paths.join(", "));
            }
        }
    }
    Ok(Exit::Ok)
}

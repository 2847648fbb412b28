//! `contextos journal status|recover`: interrupted transactions.

use crate::output;
use crate::support::context::EXIT_OK;
use crate::support::Context;
use crate::support::Format;
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

pub fn run(ctx: &Context, args: &Args) -> u8 {
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let root = match SafeRoot::open(&project.root) {
        Ok(r) => r,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    let (pending, recovered) = match args.what {
        What::Status => match journal::status(&root) {
            Ok(p) => (p, false),
            Err(e) => return ctx.fail(&e.to_string()),
        },
        What::Recover => {
            let guard = match ctx.take_lock(
                &project.root,
                "contextos journal recover",
                Duration::from_secs(30),
            ) {
                Ok(g) => g,
                Err(code) => return code,
            };
            match journal::recover(&root, &guard) {
                Ok(p) => (p, true),
                Err(e) => return ctx.fail(&e.to_string()),
            }
        }
    };
    match ctx.format {
        Format::Json => output::print_json(
            serde_json::json!({ "recovered": recovered, "transactions": pending }),
        ),
        Format::Text | Format::Github | Format::Sarif => {
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
    EXIT_OK
}

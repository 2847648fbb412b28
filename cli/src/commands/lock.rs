//! `contextos lock status`: who holds the project lock.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::effects::project_lock::status;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Show whether the project lock is held, and by whom (or who held it last).
    Status,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let What::Status = args.what;
    let project = ctx.project()?;
    let st = status(&project.root)?;
    match ctx.format {
        Format::Json => output::print_json(serde_json::to_value(&st).unwrap_or_default()),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            match (&st.held, &st.state) {
                (true, Some(s)) => outln!("held by {s}, token {}", s.token),
                (true, None) => outln!("held (no holder recorded yet)"),
                (false, Some(s)) => outln!("free; last held by {s}"),
                (false, None) => outln!("free; never taken"),
            }
        }
    }
    Ok(Exit::Ok)
}

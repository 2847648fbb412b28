//! `contextos lock status`: who holds the project lock.

use crate::output;
use crate::support::context::EXIT_OK;
use crate::support::Context;
use crate::support::Format;
use contextos_engine::effects::lock::status;

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

pub fn run(ctx: &Context, args: &Args) -> u8 {
    let What::Status = args.what;
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let st = match status(&project.root) {
        Ok(s) => s,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    match ctx.format {
        Format::Json => output::print_json(serde_json::to_value(&st).unwrap_or_default()),
        Format::Text | Format::Github | Format::Sarif => match (&st.held, &st.state) {
            (true, Some(s)) => outln!("held by {s}, token {}", s.token),
            (true, None) => outln!("held (no holder recorded yet)"),
            (false, Some(s)) => outln!("free; last held by {s}"),
            (false, None) => outln!("free; never taken"),
        },
    }
    EXIT_OK
}

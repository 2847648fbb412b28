//! `contextos diff [--from REV] [--to REV] [--corpus FILE] [--log]`: which verdicts a policy
//! change widens or tightens, each with witness requests and the rule pair.

use crate::support::policy_diff::{self, Section, Side, Source};
use crate::support::{requests, CliError, Context, Exit};
use contextos_engine::effects::decision_log;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The revision whose policies are the old side (default: HEAD).
    #[arg(long, value_name = "REV")]
    from: Option<String>,
    /// The revision whose policies are the new side (default: the working tree).
    #[arg(long, value_name = "REV")]
    to: Option<String>,
    /// Also decide these requests (JSONL, the shape of `decide --request`) under both.
    #[arg(long, value_name = "FILE")]
    corpus: Vec<PathBuf>,
    /// Also replay the requests the decision log recorded (as recorded: masked).
    #[arg(long)]
    log: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let from = Side::Rev(args.from.clone().unwrap_or_else(|| "HEAD".into()));
    let to = args.to.clone().map_or(Side::WorkTree, Side::Rev);
    let old = policy_diff::set_of(&project, &from)?;
    let new = policy_diff::set_of(&project, &to)?;
    let mut sections: Vec<Section> = vec![policy_diff::symbolic(&old, &new)];
    for file in &args.corpus {
        let text = std::fs::read_to_string(file).map_err(|e| CliError::Io {
            doing: format!("reading the corpus {}", file.display()),
            error: e,
        })?;
        let probes = requests::parse(&file.display().to_string(), &text)?;
        sections.push(policy_diff::over(
            &old,
            &new,
            Source::Corpus,
            &probes,
            Some(file.display().to_string()),
        ));
    }
    if args.log {
        let records = decision_log::tail(&project.root.join(".contextos/state"), usize::MAX)?;
        let probes = requests::from_log(&records);
        sections.push(policy_diff::over(
            &old,
            &new,
            Source::Log,
            &probes,
            Some(format!(
                "{} record(s) replayed as recorded: URL queries and MCP arguments are masked, \
                 roles and session taint are not recorded (decided without a role, untainted)",
                records.len()
            )),
        ));
    }
    Ok(policy_diff::report(ctx.format, &from, &to, &sections))
}

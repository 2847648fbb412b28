//! `contextos log verify|tail|reseal`: the hash-chained decision log of agent hooks.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::effects::decision_log::{self, LogOptions, LoggedRecord};
use contextos_engine::effects::user_key;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Check every record, the chain, and the signed head; exit 1 on any problem.
    Verify {
        /// A checkpoint kept outside the machine (`SEQ:HASH`, as printed by an earlier
        /// verify): the log must still hold exactly this record. Catches a rewrite by
        /// someone who can also read the signing key.
        #[arg(long, value_name = "SEQ:HASH")]
        anchor: Vec<String>,
    },
    /// Show the last records, oldest first.
    Tail {
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: usize,
    },
    /// Re-sign the head after checking that every record is intact (after a key change
    /// or a refused append).
    Reseal,
    /// One agent session's timeline: what tainted it, and every verdict in it.
    Show {
        /// The agent's session id.
        #[arg(long)]
        session: String,
    },
}

fn state_dir(ctx: &Context) -> Result<PathBuf, CliError> {
    Ok(ctx.project()?.root.join(".contextos/state"))
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let dir = state_dir(ctx)?;
    match &args.what {
        What::Verify { anchor } => verify(ctx, &dir, anchor),
        What::Tail { lines } => {
            let records = decision_log::tail(&dir, *lines)?;
            match ctx.format {
                Format::Json => output::print_json(serde_json::json!({ "records": records })),
                Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                    for r in &records {
                        outln!("{}", tail_line(r));
                    }
                }
            }
            Ok(Exit::Ok)
        }
        What::Show { session } => {
            let records: Vec<LoggedRecord> = decision_log::tail(&dir, usize::MAX)?
                .into_iter()
                .filter(|r| {
                    r.request.get("session").and_then(|s| s.as_str()) == Some(session)
                        // `session clear --all` cleared this session too.
                        || (r.verdict == "taint-cleared"
                            && r.request.get("all").and_then(serde_json::Value::as_bool)
                                == Some(true))
                })
                .collect();
            match ctx.format {
                Format::Json => output::print_json(serde_json::json!({
                    "session": session,
                    "records": records,
                })),
                Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                    if records.is_empty() {
                        outln!("no records for session {session}");
                    }
                    let mut tainted = false;
                    for r in &records {
                        if r.verdict == "taint" {
                            tainted = true;
                        } else if r.verdict == "taint-cleared" {
                            tainted = false;
                        }
                        outln!("{}", timeline_line(r, tainted));
                    }
                }
            }
            Ok(Exit::Ok)
        }
        What::Reseal => {
            let n = decision_log::reseal(&dir, &LogOptions::default())?;
            match ctx.format {
                Format::Json => output::print_json(serde_json::json!({ "resealed": n })),
                Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                    outln!("resealed the decision log head at record {n}");
                }
            }
            Ok(Exit::Ok)
        }
    }
}

fn tail_line(r: &LoggedRecord) -> String {
    format!(
        "{:>6} {} {:<7} {:<18} {:<5} {} {}",
        r.seq,
        r.time,
        r.agent,
        r.tool,
        r.verdict,
        if r.rules.is_empty() {
            "-".to_string()
        } else {
            r.rules.join(",")
        },
        serde_json::to_string(&r.request).unwrap_or_default()
    )
}

fn verify(ctx: &Context, dir: &std::path::Path, anchors: &[String]) -> Result<Exit, CliError> {
    let key = user_key::default_path();
    let mut report = decision_log::verify(dir, key.as_deref())?;
    let records = decision_log::tail(dir, usize::MAX)?;
    let mut anchor_problems = Vec::new();
    for a in anchors {
        let Some((seq, hash)) = a
            .split_once(':')
            .and_then(|(s, h)| s.parse::<u64>().ok().map(|s| (s, h)))
        else {
            return Err(CliError::Input(format!("--anchor {a}: expected SEQ:HASH")));
        };
        match records.iter().find(|r| r.seq == seq) {
            Some(r) if r.hash == hash => {}
            Some(r) => anchor_problems.push(format!(
                "record {seq} hashes to {} but the anchor says {hash}: the log was rewritten",
                r.hash
            )),
            None => anchor_problems.push(format!(
                "record {seq} named by the anchor is missing: the log was truncated or replaced"
            )),
        }
    }
    let head = records.last().map(|r| format!("{}:{}", r.seq, r.hash));
    let valid = report.is_valid() && anchor_problems.is_empty();
    match ctx.format {
        Format::Json => {
            report.warnings.sort();
            output::print_json(serde_json::json!({
                "valid": valid,
                "report": report,
                "anchorProblems": anchor_problems,
                "head": head,
            }));
        }
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            for p in &report.problems {
                outln!("problem: {p}");
            }
            for p in &anchor_problems {
                outln!("problem: {p}");
            }
            for w in &report.warnings {
                outln!("warning: {w}");
            }
            outln!(
                "{}: {} record(s) in {} file(s), head {}{}",
                if valid { "valid" } else { "INVALID" },
                report.records,
                report.segments,
                head.as_deref().unwrap_or("(empty)"),
                if report.head_signed { " (signed)" } else { "" }
            );
        }
    }
    if valid {
        Ok(Exit::Ok)
    } else {
        Ok(Exit::Findings)
    }
}

/// One line of a session's timeline: taint events say what entered the session; verdicts
/// after the first taint are marked, since the taint rules may have decided them.
fn timeline_line(r: &LoggedRecord, tainted: bool) -> String {
    if r.verdict == "taint" {
        let sources: Vec<String> = r
            .request
            .get("taint")
            .and_then(|t| t.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        return format!("{} TAINT  {:<18} {}", r.time, r.tool, sources.join(", "));
    }
    if r.verdict == "taint-cleared" {
        return format!(
            "{} CLEAR  {:<18} taint cleared by a person",
            r.time, r.event
        );
    }
    let actions = r
        .request
        .get("actions")
        .map(|a| serde_json::to_string(a).unwrap_or_default())
        .unwrap_or_default();
    format!(
        "{} {:<6} {:<18} {}{}{}",
        r.time,
        r.verdict,
        r.tool,
        actions,
        if r.rules.is_empty() {
            String::new()
        } else {
            format!("  [{}]", r.rules.join(", "))
        },
        if tainted && r.verdict != "pass" && r.verdict != "allow" {
            "  (tainted session)"
        } else {
            ""
        }
    )
}

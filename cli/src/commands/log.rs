//! `contextos log verify|tail|reseal`: the hash-chained decision log of agent hooks.

use crate::output;
use crate::support::context::{EXIT_FINDINGS, EXIT_OK};
use crate::support::Context;
use crate::support::Format;
use contextos_engine::effects::decision_log::{self, LogOptions, LoggedRecord};
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
}

fn state_dir(ctx: &Context) -> Result<PathBuf, u8> {
    Ok(ctx.project()?.root.join(".contextos/state"))
}

pub fn run(ctx: &Context, args: &Args) -> u8 {
    let dir = match state_dir(ctx) {
        Ok(d) => d,
        Err(code) => return code,
    };
    match &args.what {
        What::Verify { anchor } => verify(ctx, &dir, anchor),
        What::Tail { lines } => match decision_log::tail(&dir, *lines) {
            Ok(records) => {
                match ctx.format {
                    Format::Json => output::print_json(serde_json::json!({ "records": records })),
                    Format::Text | Format::Github | Format::Sarif => {
                        for r in &records {
                            outln!("{}", tail_line(r));
                        }
                    }
                }
                EXIT_OK
            }
            Err(e) => ctx.fail(&e.to_string()),
        },
        What::Reseal => match decision_log::reseal(&dir, &LogOptions::default()) {
            Ok(n) => {
                match ctx.format {
                    Format::Json => output::print_json(serde_json::json!({ "resealed": n })),
                    Format::Text | Format::Github | Format::Sarif => {
                        outln!("resealed the decision log head at record {n}");
                    }
                }
                EXIT_OK
            }
            Err(e) => ctx.fail(&e.to_string()),
        },
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

fn verify(ctx: &Context, dir: &std::path::Path, anchors: &[String]) -> u8 {
    let key = decision_log::default_key_path();
    let mut report = match decision_log::verify(dir, key.as_deref()) {
        Ok(r) => r,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    let records = match decision_log::tail(dir, usize::MAX) {
        Ok(r) => r,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    let mut anchor_problems = Vec::new();
    for a in anchors {
        let Some((seq, hash)) = a
            .split_once(':')
            .and_then(|(s, h)| s.parse::<u64>().ok().map(|s| (s, h)))
        else {
            return ctx.fail(&format!("--anchor {a}: expected SEQ:HASH"));
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
        Format::Text | Format::Github | Format::Sarif => {
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
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}

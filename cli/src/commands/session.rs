//! `contextos session list | close ID… | close --all | sweep`: the sandbox sessions of this
//! project (see `contextos run --session`).
//!
//! A session is a warm container plus its scratch area (an overlay's upper directory or
//! a private copy) and a record under `.contextos/state/sessions`. Sessions end by
//! themselves after their idle time — swept by the next `contextos run` — or here.

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// The sessions of this project: id, capture mode, container, idle deadline.
    List,
    /// Remove sessions: container, volume, scratch area and record.
    Close {
        /// The session ids.
        #[arg(required_unless_present = "all")]
        ids: Vec<String>,
        /// Every session of this project.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
    /// Remove the sessions idle past their deadline and the orphans of removed ones.
    Sweep,
    /// The agent sessions that have read untrusted content, and what tainted them.
    Taint,
    /// Clear the taint of agent sessions (a person's decision: the stdlib denies it to
    /// agents). IDs are the agents' session ids.
    Clear {
        #[arg(required_unless_present = "all")]
        ids: Vec<String>,
        /// Every agent session of this project.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
}

#[cfg(feature = "docker")]
pub use imp::run;

#[cfg(feature = "docker")]
mod imp {
    use super::{Args, What};
    use crate::output;
    use crate::support::run_records::SESSIONS_DIR;
    use crate::support::{CliError, Context, Exit, Format};
    use contextos_engine::effects::sandbox::runner::{Runner, SandboxError};
    use contextos_engine::effects::sandbox::session::state;
    use serde_json::json;
    use std::time::SystemTime;

    fn engine_error(e: SandboxError) -> CliError {
        CliError::Input(format!("{} ({})", e.message, e.code))
    }

    /// Records in the decision log that a person cleared taint, so a session's timeline
    /// shows where its taint ended. A log that cannot be written is reported, not fatal.
    fn log_clear(root: &std::path::Path, request: serde_json::Value) {
        let rec = contextos_engine::effects::decision_log::DecisionRecord {
            agent: "person".into(),
            event: "session clear".into(),
            tool: "contextos".into(),
            request,
            verdict: "taint-cleared".into(),
            rules: Vec::new(),
            duration_us: 0,
        };
        if let Err(e) = crate::hook::record::append(root, &rec) {
            eprintln!("contextos: warning: the clearing was not logged: {e}");
        }
    }

    pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
        let project = ctx.project()?;
        let dir = project.root.join(SESSIONS_DIR);
        match &args.what {
            What::Taint => {
                let records = crate::hook::taint::list(&project.root);
                if ctx.format == Format::Json {
                    output::print_json(json!({
                        "schemaVersion": output::SCHEMA_VERSION,
                        "sessions": records,
                    }));
                } else if records.is_empty() {
                    println!("no tainted agent sessions");
                } else {
                    for r in &records {
                        let sources: Vec<&str> =
                            r.sources.iter().map(|s| s.source.as_str()).collect();
                        println!("{}…  {}  {}", r.id_hint, r.agent, sources.join(", "));
                    }
                }
                Ok(Exit::Ok)
            }
            What::Clear { ids, all } => {
                let io = |e| CliError::io("cannot clear the session's taint", e);
                let mut cleared = Vec::new();
                let mut unknown = Vec::new();
                if *all {
                    let n = crate::hook::taint::clear_all(&project.root).map_err(io)?;
                    cleared.push(format!("{n} session(s)"));
                    log_clear(&project.root, json!({ "all": true, "sessions": n }));
                } else {
                    for id in ids {
                        if crate::hook::taint::clear(&project.root, id).map_err(io)? {
                            cleared.push(id.clone());
                            log_clear(&project.root, json!({ "session": id }));
                        } else {
                            unknown.push(id.clone());
                        }
                    }
                }
                if ctx.format == Format::Json {
                    output::print_json(json!({
                        "schemaVersion": output::SCHEMA_VERSION,
                        "cleared": cleared,
                        "unknown": unknown,
                    }));
                } else {
                    for c in &cleared {
                        println!("cleared {c}");
                    }
                    for id in &unknown {
                        eprintln!("no tainted session {id}");
                    }
                }
                Ok(if unknown.is_empty() {
                    Exit::Ok
                } else {
                    Exit::Findings
                })
            }
            What::List => {
                let now = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let mut rows = Vec::new();
                for id in state::list(&dir).map_err(engine_error)? {
                    if let Some(rec) = state::load(&dir, &id).map_err(engine_error)? {
                        rows.push(json!({
                            "id": rec.id,
                            "mode": rec.mode,
                            "container": rec.container,
                            "volume": rec.volume,
                            "user": format!("{}:{}", rec.user.0, rec.user.1),
                            "imageId": rec.image_id,
                            "idleSeconds": rec.idle_secs,
                            "expiresIn": rec.deadline.saturating_sub(now),
                            "expired": rec.deadline < now,
                        }));
                    }
                }
                if ctx.format == Format::Json {
                    output::print_json(json!({
                        "schemaVersion": output::SCHEMA_VERSION,
                        "sessions": rows,
                    }));
                } else if rows.is_empty() {
                    println!("no sandbox sessions");
                } else {
                    for r in &rows {
                        println!(
                            "{}  {}  {}  {}",
                            r["id"].as_str().unwrap_or("?"),
                            r["mode"].as_str().unwrap_or("?"),
                            r["container"].as_str().unwrap_or("?"),
                            if r["expired"] == true {
                                "idle: expired".to_string()
                            } else {
                                format!("idle: ends in {}s", r["expiresIn"])
                            }
                        );
                    }
                }
                Ok(Exit::Ok)
            }
            What::Close { ids, all } => {
                let runner = Runner::connect().map_err(engine_error)?;
                let ids = if *all {
                    state::list(&dir).map_err(engine_error)?
                } else {
                    ids.clone()
                };
                let mut closed = Vec::new();
                let mut unknown = Vec::new();
                for id in &ids {
                    if runner.close_session(&dir, id).map_err(engine_error)? {
                        closed.push(id.clone());
                    } else {
                        unknown.push(id.clone());
                    }
                }
                if ctx.format == Format::Json {
                    output::print_json(json!({
                        "schemaVersion": output::SCHEMA_VERSION,
                        "closed": closed,
                        "unknown": unknown,
                    }));
                } else {
                    for id in &closed {
                        println!("closed {id}");
                    }
                    for id in &unknown {
                        eprintln!("no session {id}");
                    }
                }
                Ok(if unknown.is_empty() {
                    Exit::Ok
                } else {
                    Exit::Findings
                })
            }
            What::Sweep => {
                let runner = Runner::connect().map_err(engine_error)?;
                let removed = runner
                    .sweep_idle_sessions(&dir, SystemTime::now())
                    .map_err(engine_error)?;
                if ctx.format == Format::Json {
                    output::print_json(json!({
                        "schemaVersion": output::SCHEMA_VERSION,
                        "removed": removed,
                    }));
                } else {
                    for r in &removed {
                        println!("removed {r}");
                    }
                }
                Ok(Exit::Ok)
            }
        }
    }
}

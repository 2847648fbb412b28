//! `contextos mcp`: the MCP server over stdio (see `crate::mcp`). Here only its options
//! and the start: the project, the session id, the async runtime. The options parse in
//! every build (the front binary hands the verb over); the server is in builds with the
//! async runtime only (`contextos-full`).

/// The default of `--max-file-bytes` (the server's `DEFAULT_MAX_FILE_BYTES`, spelled
/// here so the front binary, which does not link the server, parses the same options).
const DEFAULT_MAX_FILE_BYTES: u64 = 8 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Decide as this role (roles declared in the policies).
    #[arg(long)]
    role: Option<String>,
    /// The agent session: names the sandbox session of `run` and is recorded with every
    /// decision (default: $CONTEXTOS_SESSION, else a fresh id per server process).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Largest file (in bytes) a tool reads or writes.
    #[arg(long, default_value_t = DEFAULT_MAX_FILE_BYTES, value_name = "BYTES")]
    max_file_bytes: u64,
    /// Seconds a write waits for the project lock.
    #[arg(long, default_value_t = 30)]
    lock_timeout: u64,
    /// Without a subcommand the server runs.
    #[command(subcommand)]
    pub what: Option<What>,
}

/// What `contextos mcp` does besides serving.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Approve the current definitions of listed MCP servers (everything that changes what
    /// runs: command, arguments, environment, working directory, URL, header names), after
    /// a person reviewed them. The approval is this machine's, kept in
    /// `.contextos/state/`. Agents are denied this (`std-exec-governance-commands`).
    Approve {
        /// Server names from `[mcp] servers`.
        #[arg(required_unless_present = "all")]
        names: Vec<String>,
        /// Every listed server.
        #[arg(long, conflicts_with = "names")]
        all: bool,
    },
    /// The listed servers and their definitions against the pins.
    Status,
}

/// `contextos mcp approve|status`.
pub fn manage(
    ctx: &crate::support::Context,
    what: &What,
) -> Result<crate::support::Exit, crate::support::CliError> {
    use crate::support::mcp_pins::Pins;
    use crate::support::{CliError, Exit, Format};
    let project = ctx.project()?;
    let root = &project.root;
    let listed = &project.config.mcp.servers;
    let pin_err = |e: crate::support::mcp_pins::PinError| CliError::Input(e.to_string());
    let mut pins = Pins::load(root).map_err(pin_err)?;
    match what {
        What::Status => {
            let rows: Vec<serde_json::Value> = listed
                .iter()
                .map(|n| serde_json::json!({"server": n, "definition": pins.state(root, n)}))
                .collect();
            if ctx.format == Format::Json {
                crate::output::print_json(serde_json::json!({ "servers": rows }));
            } else if rows.is_empty() {
                println!("no MCP servers are listed ([mcp] servers in contextos.toml)");
            } else {
                for r in &rows {
                    println!(
                        "{:<24} {}",
                        r["server"].as_str().unwrap_or(""),
                        r["definition"].as_str().unwrap_or("")
                    );
                }
            }
            Ok(Exit::Ok)
        }
        What::Approve { names, all } => {
            let names: Vec<String> = if *all { listed.clone() } else { names.clone() };
            let mut approved = Vec::new();
            for n in &names {
                // ContextOS's own server needs no listing; a definition of it other than
                // the one `compile` writes is approved like any other.
                if !listed.contains(n) && n != contextos_engine::emit::wiring::MCP_SERVER {
                    return Err(CliError::Input(format!(
                        "`{n}` is not listed in [mcp] servers of contextos.toml; list it first"
                    )));
                }
                let catalog = crate::support::mcp_pins::Catalog::read(root);
                if !catalog.unreadable.is_empty() {
                    return Err(CliError::Input(format!(
                        "cannot read {}: fix the file first (what it defines cannot be approved unseen)",
                        catalog.unreadable.join(", ")
                    )));
                }
                if !pins.pin(root, n, "approve") {
                    return Err(CliError::Input(format!(
                        "no project MCP file defines `{n}` (looked in {})",
                        crate::support::mcp_pins::DEFINITION_FILES
                            .iter()
                            .map(|(_, f)| *f)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                approved.push(n.clone());
            }
            pins.save(root).map_err(pin_err)?;
            if ctx.format == Format::Json {
                crate::output::print_json(serde_json::json!({ "approved": approved }));
            } else {
                for n in &approved {
                    println!("approved {n}");
                }
            }
            Ok(Exit::Ok)
        }
    }
}

#[cfg(feature = "docker")]
pub fn run(
    ctx: &crate::support::Context,
    args: &Args,
) -> Result<crate::support::Exit, crate::support::CliError> {
    use crate::mcp::{self, Limits, State};
    use crate::support::binaries::COMPANION;
    use crate::support::{CliError, Exit};
    use contextos_engine::effects::user_key::UserKey;
    const _: () = assert!(DEFAULT_MAX_FILE_BYTES == mcp::DEFAULT_MAX_FILE_BYTES);
    let project = ctx.project()?;
    let runner = std::env::current_exe()
        .map_err(|e| CliError::io("cannot find the contextos binary", e))?
        .with_file_name(COMPANION);
    let session = args
        .session
        .clone()
        .or_else(|| std::env::var("CONTEXTOS_SESSION").ok())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    eprintln!(
        "contextos mcp: serving {} (session {session})",
        project.root.display()
    );
    let state = State {
        project,
        role: args.role.clone(),
        session,
        limits: Limits {
            max_file_bytes: args.max_file_bytes,
            lock_timeout: args.lock_timeout,
        },
        user_key: UserKey::load_or_create_default(),
        runner,
    };
    // Two workers: the protocol stays responsive while a call waits for the lock or a
    // command (that work runs on the blocking pool).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::io("cannot start the async runtime", e))?;
    runtime
        .block_on(mcp::serve(state))
        .map_err(CliError::Internal)?;
    Ok(Exit::Ok)
}

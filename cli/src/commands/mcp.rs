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

//! Handing `scan`, `run`, `session`, `mcp` and `hook install|uninstall` to the companion binary installed
//! beside `contextos`.
//!
//! The front binary does not link the git reader or the container client (see the crate
//! documentation); the companion does. It replaces this process (`exec`), so the caller
//! — a shell, the git pre-commit hook, CI — sees one process with one exit status, the
//! same arguments, and the same standard streams and signals.

use crate::support::CliError;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;

use crate::support::binaries::COMPANION;

/// Replaces this process by the companion with the same arguments; returns only when it
/// cannot (then the command could not run: exit 2, never a silent pass).
pub fn exec(verb: &str) -> CliError {
    let front = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return CliError::io("cannot find the contextos binary", e),
    };
    let companion: PathBuf = front.with_file_name(COMPANION);
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| "contextos".into());
    let error = std::process::Command::new(&companion)
        .arg0(arg0)
        .args(args)
        .exec();
    CliError::io(
        format!(
            "cannot run {}, which carries out `contextos {verb}` (install it beside {})",
            companion.display(),
            front.display()
        ),
        error,
    )
}

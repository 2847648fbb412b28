//! `contextos completions <shell>` and `contextos man`: the shell completion scripts and
//! the manual pages, generated from the same command definitions the parser uses, so they
//! never fall behind the commands.

use crate::support::{CliError, Exit};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write `contextos.1` and one page per subcommand (`contextos-compile.1`, …) into
    /// this directory instead of printing `contextos.1` to standard output.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Prints the completion script of `args.shell` for `cmd`.
pub fn completions(cmd: &mut clap::Command, args: &CompletionsArgs) -> Result<Exit, CliError> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, cmd, "contextos", &mut buf);
    write_stdout(&buf)?;
    Ok(Exit::Ok)
}

/// Prints the top page, or writes every page into `args.out`.
pub fn man(cmd: clap::Command, args: &ManArgs) -> Result<Exit, CliError> {
    let cmd = cmd.name("contextos");
    match &args.out {
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut buf)
                .map_err(|e| CliError::io("rendering the manual page", e))?;
            write_stdout(&buf)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir.display().to_string(), e))?;
            let mut written = Vec::new();
            write_pages(&cmd, "contextos", dir, &mut written)?;
            for p in written {
                outln!("wrote {}", p.display());
            }
        }
    }
    Ok(Exit::Ok)
}

/// `name.1` for `cmd`, then one page per visible subcommand, named `name-sub.1`.
fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &std::path::Path,
    written: &mut Vec<PathBuf>,
) -> Result<(), CliError> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name)
        .render(&mut buf)
        .map_err(|e| CliError::io("rendering a manual page", e))?;
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, &buf).map_err(|e| CliError::io(path.display().to_string(), e))?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}

fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A closed pipe (`contextos man | head`) is not an error of ours.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::io("standard output", e)),
        Ok(()) => Ok(()),
    }
}

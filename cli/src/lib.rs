//! `contextos`: policy-as-code for AI coding agents — the command line, shared by two
//! binaries.
//!
//! `contextos` ([`front`]) is what users and agent configurations run. It links neither
//! the git reader (gix) nor the container client (bollard, tokio), so an agent hook —
//! run before every tool call — pays for neither. The two commands that need them,
//! `scan`, `run`, `session`, `mcp` and `hook install|uninstall`, it parses like every other and then hands
//! to `contextos-full`
//! ([`full`]), installed beside it, which replaces the process with the same arguments,
//! standard streams and exit status.
//!
//! Exit codes (every command): 0 allow / clean, 1 deny / findings / failing tests,
//! 2 could not verify (bad input, invalid policy, I/O error), 3 ask (`decide`, `explain`).

#![cfg_attr(
    not(all(feature = "scan", feature = "docker")),
    allow(
        dead_code,
        reason = "a build without the scanner or the sandbox leaves what only they read (their \
                  arguments, their configuration) unread; the full build checks all of it"
    )
)]

/// `println!` that ignores a closed stdout (`contextos decide … | head -1`): the exit code
/// still carries the verdict, and a broken pipe must not turn into a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod commands;
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "scan")]
mod githook;
mod hook;
mod hook_args;
#[cfg(feature = "docker")]
mod mcp;
mod output;
mod plugins;
mod policy_cache;
mod project;
#[cfg(feature = "scan")]
mod scan_report;
mod support;

pub use support::binaries::{COMPANION, FRONT};

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use support::{CliError, Context, Exit, Format};

#[derive(Debug, Parser)]
#[command(
    name = "contextos",
    version,
    about = "Policy-as-code boundaries for AI coding agents"
)]
struct Cli {
    /// Project directory (default: the nearest ancestor with contextos.toml, .contextos or .git).
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse and type-check all policies.
    Check(commands::check::Args),
    /// Format policy files canonically.
    Fmt(commands::fmt::Args),
    /// Run the policies' `test` blocks.
    Test(commands::test::Args),
    /// Decide a request: exit 0 allow, 1 deny, 3 ask.
    Decide(commands::decide::Args),
    /// Decide a request and show the full why / why-not trace.
    Explain(commands::decide::Args),
    /// Inspect the project mutation lock.
    Lock(commands::lock::Args),
    /// Apply a changeset through one journaled transaction (paths decided first).
    Apply(commands::apply::Args),
    /// Inspect or recover interrupted transactions.
    Journal(commands::journal::Args),
    /// Answer an agent's pre-tool-call hook (event on stdin, verdict in the agent's protocol),
    /// or install / uninstall the git pre-commit hook.
    Hook(HookArgs),
    /// Verify or show the hash-chained decision log.
    Log(commands::log::Args),
    /// Set the repository up: find its agents, scaffold contextos.toml and a starter
    /// policy (never overwriting a file), compile, install the git hook.
    Init(commands::init::Args),
    /// Which verdicts a policy change widens or tightens (default: HEAD against the
    /// working tree), each with witness requests and the rule pair; exit 1 on a widening
    /// no `@accept("widening")` covers.
    Diff(commands::diff::Args),
    /// What a role may do in a domain (and operation): the regions denied, asked and
    /// allowed, strongest first.
    Query(commands::query::Args),
    /// Emit every agent's native configuration from the policies.
    Compile(commands::compile::CompileArgs),
    /// CI: policies compile, tests pass, plugins verify, generated outputs in sync.
    Gate(commands::gate::GateArgs),
    /// Signed, pinned policy packs: add, verify, list, keygen, sign.
    Plugin(commands::plugin::Args),
    /// The commit verdict on the git index: secrets, blocked files, stubs, scope.
    Scan(commands::scan::Args),
    /// Run a command in the hardened sandbox (the exec verdict decides; results come
    /// back through the journal).
    Run(commands::run::Args),
    /// The sandbox sessions of this project: list, close, sweep.
    Session(commands::session::Args),
    /// Serve the boundary tools (read_file, write_file, edit_file, apply_patch, run) to an
    /// agent as an MCP server over stdio.
    Mcp(commands::mcp::Args),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::docs::CompletionsArgs),
    /// Print the manual page, or write every page with --out DIR.
    Man(commands::docs::ManArgs),
}

#[derive(Debug, clap::Args)]
struct HookArgs {
    #[command(subcommand)]
    what: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    #[command(flatten)]
    Agent(commands::hook::AgentArg),
    /// Add the contextos block (`contextos scan --staged --enforce`) to the git
    /// pre-commit hook, keeping the user's own hook lines.
    Install(commands::githook::InstallArgs),
    /// Remove the contextos block from the git pre-commit hook, and nothing else.
    Uninstall(commands::githook::UninstallArgs),
}

/// The commands that link the git reader or the async runtime: `scan` and `hook
/// install|uninstall` read git, `run` drives containers, `mcp` serves MCP on tokio.
#[derive(Debug)]
enum Heavy<'a> {
    Scan(&'a commands::scan::Args),
    Run(&'a commands::run::Args),
    Session(&'a commands::session::Args),
    Mcp(&'a commands::mcp::Args),
    HookInstall(&'a commands::githook::InstallArgs),
    HookUninstall(&'a commands::githook::UninstallArgs),
    /// `init` installs the git hook too.
    Init(&'a commands::init::Args),
}

/// How a binary carries out the [`Heavy`] commands.
type HeavyRunner = fn(&Context, Heavy<'_>) -> Result<Exit, CliError>;

/// `contextos`: every command but `scan` and `run` in this process; those two in the
/// companion binary, which replaces this process.
pub fn front() -> ExitCode {
    main(|_, heavy| {
        let verb = match heavy {
            Heavy::Scan(_) => "scan",
            Heavy::Run(_) => "run",
            Heavy::Session(_) => "session",
            Heavy::Mcp(_) => "mcp",
            Heavy::HookInstall(_) => "hook install",
            Heavy::HookUninstall(_) => "hook uninstall",
            Heavy::Init(_) => "init",
        };
        Err(support::companion::exec(verb))
    })
}

/// `contextos-full`: every command in this process.
#[cfg(all(feature = "scan", feature = "docker"))]
pub fn full() -> ExitCode {
    main(|ctx, heavy| match heavy {
        Heavy::Scan(a) => commands::scan::run(ctx, a),
        Heavy::Run(a) => commands::run::run(ctx, a),
        Heavy::Session(a) => commands::session::run(ctx, a),
        Heavy::Mcp(a) => commands::mcp::run(ctx, a),
        Heavy::HookInstall(a) => commands::githook::install(ctx, a),
        Heavy::HookUninstall(a) => commands::githook::uninstall(ctx, a),
        Heavy::Init(a) => commands::init::run(ctx, a),
    })
}

fn main(heavy: HeavyRunner) -> ExitCode {
    let args: Vec<std::ffi::OsString> = if commands::hook::amp_delegate() {
        ["contextos", "hook", "amp"].map(Into::into).to_vec()
    } else {
        std::env::args_os().collect()
    };
    let (ctx, command) = match hook_args::read(&args) {
        Some(line) => (
            Context {
                project: line.project,
                format: Format::Text,
            },
            Command::Hook(HookArgs {
                what: HookCommand::Agent(line.agent),
            }),
        ),
        None => {
            let cli = Cli::parse_from(args);
            let ctx = Context {
                project: cli.project,
                format: cli.format,
            };
            (ctx, cli.command)
        }
    };
    match dispatch(&ctx, command, heavy) {
        Ok(exit) => exit.into(),
        Err(e) => {
            e.report(ctx.format);
            Exit::Unverified.into()
        }
    }
}

/// Runs the command; its error, if any, is reported once by `main`.
fn dispatch(ctx: &Context, command: Command, heavy: HeavyRunner) -> Result<Exit, CliError> {
    match command {
        Command::Check(a) => commands::check::run(ctx, &a),
        Command::Fmt(a) => commands::fmt::run(ctx, &a),
        Command::Test(a) => commands::test::run(ctx, &a),
        Command::Decide(a) => commands::decide::run(ctx, &a, false),
        Command::Explain(a) => commands::decide::run(ctx, &a, true),
        Command::Lock(a) => commands::lock::run(ctx, &a),
        Command::Apply(a) => commands::apply::run(ctx, &a),
        Command::Journal(a) => commands::journal::run(ctx, &a),
        Command::Hook(a) => match &a.what {
            HookCommand::Agent(agent) => commands::hook::run(ctx, agent),
            HookCommand::Install(a) => heavy(ctx, Heavy::HookInstall(a)),
            HookCommand::Uninstall(a) => heavy(ctx, Heavy::HookUninstall(a)),
        },
        Command::Log(a) => commands::log::run(ctx, &a),
        Command::Plugin(a) => commands::plugin::run(ctx, &a),
        Command::Init(a) => heavy(ctx, Heavy::Init(&a)),
        Command::Diff(a) => commands::diff::run(ctx, &a),
        Command::Query(a) => commands::query::run(ctx, &a),
        Command::Compile(a) => commands::compile::compile_cmd(ctx, &a),
        Command::Gate(a) => commands::gate::run(ctx, &a),
        Command::Scan(a) => heavy(ctx, Heavy::Scan(&a)),
        Command::Run(a) => heavy(ctx, Heavy::Run(&a)),
        Command::Session(a) => heavy(ctx, Heavy::Session(&a)),
        Command::Mcp(a) => match &a.what {
            Some(what) => commands::mcp::manage(ctx, what),
            None => heavy(ctx, Heavy::Mcp(&a)),
        },
        Command::Completions(a) => commands::docs::completions(&mut Cli::command(), &a),
        Command::Man(a) => commands::docs::man(Cli::command(), &a),
    }
}

//! The command lines agents' configurations run — `contextos hook claude`, with at most
//! `--project DIR` and the hook's own options — read without building clap's command
//! tree. The hook runs before every tool call, and building the tree of every subcommand
//! to read three words was a seventh of its CPU.
//!
//! Anything else, or anything here in doubt (a repeated option, a value that starts with
//! `-`, a number with a sign, text that is not UTF-8), is left to clap, which then parses
//! the whole line as always: this reader answers only where clap would give the same
//! answer, and a differential test holds it to that.

use crate::commands::hook::{AgentArg, AgentOpts};
use std::ffi::OsString;
use std::path::PathBuf;

/// `--deadline-ms` when the line does not give it (clap's `default_value_t`).
const DEFAULT_DEADLINE_MS: u64 = 3000;

/// What a hook command line says: the global `--project`, and the agent with its options.
#[derive(Debug)]
pub(crate) struct HookLine {
    pub(crate) project: Option<PathBuf>,
    pub(crate) agent: AgentArg,
}

fn agent(name: &str, opts: AgentOpts) -> Option<AgentArg> {
    Some(match name {
        "claude" => AgentArg::Claude(opts),
        "cursor" => AgentArg::Cursor(opts),
        "copilot" => AgentArg::Copilot(opts),
        "codex" => AgentArg::Codex(opts),
        "gemini" => AgentArg::Gemini(opts),
        "windsurf" => AgentArg::Windsurf(opts),
        "cline" => AgentArg::Cline(opts),
        "kiro" => AgentArg::Kiro(opts),
        "amp" => AgentArg::Amp(opts),
        "amazonq" => AgentArg::AmazonQ(opts),
        _ => return None,
    })
}

/// Sets `slot` once; a second value (which clap refuses) or an empty one gives `None`.
fn once(slot: &mut Option<String>, value: &str) -> Option<()> {
    if slot.is_some() || value.is_empty() || value.starts_with('-') {
        return None;
    }
    *slot = Some(value.to_string());
    Some(())
}

fn flag(slot: &mut bool) -> Option<()> {
    if *slot {
        return None;
    }
    *slot = true;
    Some(())
}

/// The hook line in `args` (the program name first), or `None` to leave it to clap.
pub(crate) fn read(args: &[OsString]) -> Option<HookLine> {
    let words: Vec<&str> = args
        .get(1..)?
        .iter()
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    let mut project = None;
    let mut role = None;
    let mut deadline = None;
    let (mut no_log, mut trace) = (false, false);
    // The positional words seen so far: `hook`, then the agent's name.
    let mut positional: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(&w) = words.get(i) {
        i += 1;
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (w, None),
        };
        let mut value = || -> Option<&str> {
            if let Some(v) = inline {
                return Some(v);
            }
            let v = *words.get(i)?;
            i += 1;
            Some(v)
        };
        // The agent's own options come after its name; `--project` is global.
        let after_agent = positional.len() == 2;
        match name {
            "--project" => once(&mut project, value()?)?,
            "--role" if after_agent => once(&mut role, value()?)?,
            "--deadline-ms" if after_agent => once(&mut deadline, value()?)?,
            "--no-log" if after_agent && inline.is_none() => flag(&mut no_log)?,
            "--trace" if after_agent && inline.is_none() => flag(&mut trace)?,
            _ if w.starts_with('-') => return None,
            _ if positional.len() < 2 => positional.push(w),
            _ => return None,
        }
    }
    let deadline_ms = match deadline {
        None => DEFAULT_DEADLINE_MS,
        Some(d) if d.bytes().all(|b| b.is_ascii_digit()) => d.parse().ok()?,
        Some(_) => return None,
    };
    let [hook, name] = positional.as_slice() else {
        return None;
    };
    if *hook != "hook" {
        return None;
    }
    let opts = AgentOpts {
        role,
        deadline_ms,
        no_log,
        trace,
    };
    Some(HookLine {
        project: project.map(PathBuf::from),
        agent: agent(name, opts)?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use crate::{Cli, Command, HookCommand};
    use clap::Parser;
    use proptest::prelude::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        std::iter::once("contextos")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// What clap makes of the line, in the reader's terms, or `None` when clap refuses it
    /// or reads another command.
    fn clap(args: &[OsString]) -> Option<String> {
        let cli = Cli::try_parse_from(args).ok()?;
        if cli.format != crate::Format::Text {
            return None;
        }
        match cli.command {
            Command::Hook(h) => match h.what {
                HookCommand::Agent(agent) => Some(format!(
                    "{:?}",
                    HookLine {
                        project: cli.project,
                        agent
                    }
                )),
                _ => None,
            },
            _ => None,
        }
    }

    fn agrees(words: &[&str]) -> Option<String> {
        let args = os(words);
        let fast = read(&args).map(|l| format!("{l:?}"));
        if fast.is_some() {
            assert_eq!(fast, clap(&args), "{words:?}");
        }
        fast
    }

    #[test]
    fn the_lines_agents_run_are_read_as_clap_reads_them() {
        for words in [
            &["hook", "claude"][..],
            &["hook", "cursor"],
            &["hook", "amazonq"],
            &["--project", "/p", "hook", "codex", "--no-log"],
            &[
                "--project=/p",
                "hook",
                "gemini",
                "--trace",
                "--role",
                "reviewer",
            ],
            &["hook", "kiro", "--project", "/p", "--deadline-ms", "250"],
            &[
                "hook",
                "windsurf",
                "--deadline-ms=7",
                "--role=x",
                "--no-log",
                "--trace",
            ],
        ] {
            assert!(agrees(words).is_some(), "{words:?} is left to clap");
        }
    }

    #[test]
    fn anything_in_doubt_is_left_to_clap() {
        for words in [
            &["hook"][..],
            &["hook", "nobody"],
            &["hook", "install"],
            &["hook", "claude", "extra"],
            &["--no-log", "hook", "claude"],
            &["hook", "--no-log", "claude"],
            &["hook", "claude", "--no-log", "--no-log"],
            &["hook", "claude", "--no-log=true"],
            &["hook", "claude", "--role"],
            &["hook", "claude", "--role", "-x"],
            &["hook", "claude", "--deadline-ms", "+5"],
            &["hook", "claude", "--deadline-ms", "99999999999999999999999"],
            &["--project", "", "hook", "claude"],
            &["--project", "/a", "--project", "/b", "hook", "claude"],
            &["--format", "json", "hook", "claude"],
            &["hook", "claude", "--"],
            &["hook", "claude", "-h"],
            &["--version"],
            &["check"],
            &[],
        ] {
            assert!(read(&os(words)).is_none(), "{words:?}");
        }
    }

    fn word() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("hook"),
            Just("claude"),
            Just("amp"),
            Just("install"),
            Just("--project"),
            Just("--project=/q"),
            Just("/p"),
            Just("--role"),
            Just("--role=r"),
            Just("r"),
            Just("--deadline-ms"),
            Just("--deadline-ms=12"),
            Just("12"),
            Just("012"),
            Just("--no-log"),
            Just("--trace"),
            Just("--format"),
            Just("json"),
            Just("-x"),
            Just(""),
            Just("="),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Whatever the reader answers, clap answers the same.
        #[test]
        fn the_reader_never_disagrees_with_clap(words in prop::collection::vec(word(), 0..8)) {
            agrees(&words);
        }
    }
}

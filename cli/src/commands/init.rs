//! `contextos init`: sets a repository up in one command.
//!
//! 1. Finds the agents the repository and the user work with, from their configuration
//!    files and directories (`--agents` chooses instead).
//! 2. Scaffolds `contextos.toml` (with those agents as the compile targets) and a starter
//!    policy with tests, each only where the file does not exist: a file of the user's is
//!    never overwritten, and a second run changes nothing.
//! 3. Compiles for those agents (`contextos compile`, which keeps the user's content).
//! 4. Installs the git pre-commit hook (`contextos hook install`).
//! 5. Says what it did and what to do next.

use contextos_engine::emit::Agent;
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agents to set up, comma-separated (agents, claude, cursor, copilot, codex, gemini, windsurf, cline, zed, junie, kiro, continue, aider, opencode, amp, amazonq).
    /// Default: the ones whose files are found in the repository or the home directory.
    #[arg(long, value_delimiter = ',', value_name = "A,…")]
    pub agents: Vec<String>,
    /// Leave the git pre-commit hook alone.
    #[arg(long)]
    pub no_git_hook: bool,
}

/// Where each agent leaves its mark: in the repository, then in the home directory.
const SIGNS: &[(Agent, &[&str], &[&str])] = &[
    (
        Agent::Claude,
        &[".claude", "CLAUDE.md", ".mcp.json"],
        &[".claude", ".claude.json"],
    ),
    (
        Agent::Cursor,
        &[".cursor", ".cursorrules", ".cursorignore"],
        &[".cursor"],
    ),
    (
        Agent::Copilot,
        &[
            ".github/copilot-instructions.md",
            ".github/instructions",
            ".github/hooks",
            ".github/workflows/copilot-setup-steps.yml",
            ".vscode/mcp.json",
        ],
        &[".copilot", ".config/github-copilot"],
    ),
    (Agent::Codex, &[".codex"], &[".codex"]),
    (
        Agent::Gemini,
        &[".gemini", "GEMINI.md", ".geminiignore"],
        &[".gemini"],
    ),
    (
        Agent::Windsurf,
        &[
            ".windsurf",
            ".windsurfrules",
            ".codeiumignore",
            ".devin",
            ".devinignore",
        ],
        &[".codeium/windsurf"],
    ),
    (Agent::Cline, &[".clinerules", ".clineignore"], &[]),
    (Agent::Zed, &[".zed", ".rules"], &[".config/zed"]),
    (Agent::Junie, &[".junie"], &[]),
    (Agent::Kiro, &[".kiro"], &[".kiro"]),
    (Agent::Continue, &[".continue"], &[".continue"]),
    (
        Agent::Aider,
        &[".aider.conf.yml", ".aiderignore"],
        &[".aider.conf.yml"],
    ),
    (
        Agent::OpenCode,
        &["opencode.json", "opencode.jsonc", ".opencode"],
        &[".config/opencode"],
    ),
    (Agent::Amp, &[".amp"], &[".config/amp"]),
    (
        Agent::AmazonQ,
        &[".amazonq", "AmazonQ.md"],
        &[".aws/amazonq"],
    ),
];

/// The agents found, each with the file that gave it away. `AGENTS.md` is always among
/// them: every agent reads it, and `CLAUDE.md` imports it.
pub fn detect(root: &Path, home: Option<&Path>) -> Vec<(Agent, String)> {
    let mut found = vec![(Agent::AgentsMd, "every agent reads AGENTS.md".to_string())];
    for (agent, in_repo, in_home) in SIGNS {
        let hit = in_repo
            .iter()
            .find(|p| root.join(p).exists())
            .map(|p| format!("{p} in the repository"))
            .or_else(|| {
                let home = home?;
                in_home
                    .iter()
                    .find(|p| home.join(p).exists())
                    .map(|p| format!("~/{p}"))
            });
        if let Some(why) = hit {
            found.push((*agent, why));
        }
    }
    found
}

/// `contextos.toml` as init writes it.
fn config_text(targets: &[Agent]) -> String {
    let names: Vec<String> = targets
        .iter()
        .map(|t| format!("\"{}\"", t.as_str()))
        .collect();
    format!(
        "# ContextOS: policy-as-code boundaries for this repository's AI coding agents.\n\
         # Written by `contextos init`; edit freely (it is never overwritten).\n\n\
         [policies]\n\
         # The standard library (secrets, self-protection, destructive commands) plus the\n\
         # project's own policies below.\n\
         stdlib = true\n\
         paths = [\".contextos/policies\"]\n\n\
         [compile]\n\
         # The agents `contextos compile` writes configuration for.\n\
         targets = [{}]\n",
        names.join(", ")
    )
}

/// What recording the chosen targets in an existing `contextos.toml` comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Record {
    /// The new text: the user's, byte for byte, with `targets` added under `[compile]`.
    Add(String),
    /// `[compile] targets` is already there (the user's choice, kept as it is).
    Present(Vec<String>),
    /// The file cannot be given the key without rewriting what the user wrote (`compile`
    /// as an inline table or dotted keys, or text that does not parse): the reason.
    Cannot(String),
}

/// The `targets = [...]` line.
fn targets_line(targets: &[Agent]) -> String {
    let names: Vec<String> = targets
        .iter()
        .map(|t| format!("\"{}\"", t.as_str()))
        .collect();
    format!("targets = [{}]\n", names.join(", "))
}

/// Records `targets` in the user's `contextos.toml` as `[compile] targets`, so a later
/// `contextos compile` writes for the same agents. Every byte the user wrote stays: the
/// key goes in right below an explicit `[compile]` header, or a `[compile]` table is
/// appended; a file that already names its targets is left alone.
fn record_targets(text: &str, targets: &[Agent]) -> Record {
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => return Record::Cannot(format!("it does not parse as TOML: {}", e.message())),
    };
    let compile = table.get("compile");
    if let Some(existing) = compile.and_then(|c| c.get("targets")) {
        let names = existing
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        return Record::Present(names);
    }
    let line = targets_line(targets);
    let header = text.lines().scan(0usize, |at, l| {
        let start = *at;
        *at += l.len() + 1;
        Some((start, l))
    });
    let mut new = None;
    for (start, l) in header {
        let t = l.trim();
        let rest = t.strip_prefix("[compile]").map(str::trim_start);
        if rest.is_some_and(|r| r.is_empty() || r.starts_with('#')) {
            let end = (start + l.len() + 1).min(text.len());
            let sep = if text[..end].ends_with('\n') {
                ""
            } else {
                "\n"
            };
            new = Some(format!("{}{sep}{line}{}", &text[..end], &text[end..]));
            break;
        }
    }
    let new = match new {
        Some(n) => n,
        // `compile = { … }` or `compile.x = …`: a `[compile]` header would define it twice.
        None if compile.is_some()
            && !text
                .lines()
                .any(|l| l.trim_start().starts_with("[compile.")) =>
        {
            return Record::Cannot(
                "`compile` is written there as an inline table or dotted keys".into(),
            )
        }
        None => {
            let sep = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            format!(
                "{text}{sep}\n[compile]\n# The agents `contextos compile` writes configuration for \
                 (recorded by `contextos init`).\n{line}"
            )
        }
    };
    // Only a file that still parses and now says exactly this is written.
    let recorded = new
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("compile")?.get("targets").cloned());
    let want = toml::Value::Array(
        targets
            .iter()
            .map(|t| toml::Value::String(t.as_str().into()))
            .collect(),
    );
    if recorded.as_ref() == Some(&want) {
        Record::Add(new)
    } else {
        Record::Cannot("the key could not be added without changing what is there".into())
    }
}

/// The starter policy: a few rules of the project's own, each with a test that would fail
/// if the rule stopped doing its job.
pub const STARTER_POLICY: &str = r#"language 1;

// The project's own rules, on top of the standard library. Run `contextos test` after a
// change, and `contextos compile` to carry it into every agent's configuration.

@id("no-prod-config-edits")
@severity(error)
deny path write, delete "config/production/**"
  because "Production configuration changes go through review, not through an agent.";

@id("confirm-publish")
ask exec "cargo publish *", "npm publish *"
  because "Publishing a release needs a human.";

@id("project-tests")
allow exec "cargo test *", "npm test *"
  because "Running the project's tests is ordinary work.";

test "the starter rules hold" {
  path write "config/production/db.toml" => deny(no-prod-config-edits);
  exec "cargo publish --dry-run"          => ask(confirm-publish);
  exec "cargo test -p core"               => allow(project-tests);
}
"#;

const CONFIG_PATH: &str = "contextos.toml";
const POLICY_PATH: &str = ".contextos/policies/main.policy";

#[cfg(feature = "scan")]
pub use imp::run;

/// Installing the git hook reads git: only in a build with the git reader.
#[cfg(feature = "scan")]
mod imp {
    use super::{
        config_text, detect, has_policies, record_targets, targets_line, Args, Record, CONFIG_PATH,
        POLICY_PATH, STARTER_POLICY,
    };
    use crate::commands::compile;
    use crate::project::Project;
    use crate::support::{CliError, Context, Exit, Format};
    use contextos_engine::effects::journal::{self, Change, Precondition, Step};
    use contextos_engine::effects::safe_fs::SafeRoot;
    use contextos_engine::emit::merge::sha256_hex;
    use contextos_engine::emit::Agent;
    use std::path::PathBuf;
    use std::time::Duration;

    /// The step that records `targets` in the user's `contextos.toml` (none when it names
    /// its targets already or cannot take the key), and what to report.
    fn record_in_config(
        root: &std::path::Path,
        targets: &[Agent],
    ) -> Result<(Option<Step>, String), CliError> {
        let text = std::fs::read_to_string(root.join(CONFIG_PATH))
            .map_err(|e| CliError::Input(format!("{CONFIG_PATH}: cannot be read: {e}")))?;
        let names = |ts: &[String]| ts.join(", ");
        Ok(match record_targets(&text, targets) {
            Record::Add(new) => (
                Some(Step {
                    change: Change::Write {
                        path: CONFIG_PATH.into(),
                        content: new.into_bytes(),
                        mode: 0o644,
                        exact_mode: false,
                    },
                    // Written only over the very text read here.
                    precondition: Precondition::Sha256(sha256_hex(&text)),
                }),
                format!(
                    "kept, with `[compile] targets` added ({}) so `contextos compile` \
                     writes for these agents",
                    names(
                        &targets
                            .iter()
                            .map(|t| t.as_str().to_owned())
                            .collect::<Vec<_>>()
                    )
                ),
            ),
            Record::Present(existing) => (
                None,
                format!(
                    "kept (already there; never overwritten; its `[compile] targets` = [{}])",
                    names(&existing)
                ),
            ),
            Record::Cannot(why) => (
                None,
                format!(
                    "kept, without recording the agents ({why}): add `{}` under `[compile]` \
                     for `contextos compile` to use them",
                    targets_line(targets).trim_end()
                ),
            ),
        })
    }

    /// What init did to one thing, for the summary.
    struct Done {
        what: String,
        done: String,
    }

    pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
        let root = Project::find_root(ctx.project.as_deref())?;
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let chosen: Vec<(Agent, String)> = if args.agents.is_empty() {
            detect(&root, home.as_deref())
        } else {
            let mut out = Vec::new();
            for name in &args.agents {
                let a = Agent::parse(name.trim()).ok_or_else(|| {
                    CliError::Input(format!(
                        "unknown agent `{name}` (known: {})",
                        Agent::ALL.map(Agent::as_str).join(", ")
                    ))
                })?;
                if !out.iter().any(|(x, _)| *x == a) {
                    out.push((a, "chosen with --agents".to_string()));
                }
            }
            // CLAUDE.md imports AGENTS.md; Gemini CLI is pointed at it.
            if out.iter().any(|(a, _)| a.needs_agents_md())
                && !out.iter().any(|(a, _)| *a == Agent::AgentsMd)
            {
                out.push((
                    Agent::AgentsMd,
                    "CLAUDE.md and Gemini CLI read it".to_string(),
                ));
            }
            out.sort();
            out
        };
        let targets: Vec<Agent> = chosen.iter().map(|(a, _)| *a).collect();

        let mut report = Vec::new();
        let mut scaffold = Vec::new();
        for (path, text) in [
            (CONFIG_PATH, config_text(&targets)),
            (POLICY_PATH, STARTER_POLICY.to_string()),
        ] {
            // A starter policy only where the project has no policy of its own yet.
            let present = root.join(path).exists()
                || (path == POLICY_PATH && has_policies(&root.join(".contextos/policies")));
            if present && path == CONFIG_PATH {
                let (step, done) = record_in_config(&root, &targets)?;
                scaffold.extend(step);
                report.push(Done {
                    what: path.into(),
                    done,
                });
            } else if present {
                report.push(Done {
                    what: path.into(),
                    done: "kept (already there; never overwritten)".into(),
                });
            } else {
                scaffold.push(Step {
                    change: Change::Write {
                        path: path.into(),
                        content: text.into_bytes(),
                        mode: 0o644,
                        exact_mode: false,
                    },
                    // Written only if still absent when the transaction runs.
                    precondition: Precondition::MustNotExist,
                });
                report.push(Done {
                    what: path.into(),
                    done: "created".into(),
                });
            }
        }
        if !scaffold.is_empty() {
            let guard = ctx.take_lock(&root, "contextos init", Duration::from_secs(30))?;
            let safe = SafeRoot::open(&root)?;
            journal::recover(&safe, &guard).map_err(|error| CliError::Journal {
                doing: "recovering the journal",
                error,
            })?;
            journal::commit(&safe, &guard, &scaffold, &mut |_| {}).map_err(|error| {
                CliError::Journal {
                    doing: "nothing was written",
                    error,
                }
            })?;
        }

        // Compile through the project now on disk; its own output lists what it wrote.
        let project_ctx = Context {
            project: Some(root.clone()),
            format: Format::Text,
        };
        let quiet = ctx.format == Format::Json;
        let compiled = compile::compile_targets(&project_ctx, &targets, quiet)?;
        report.push(Done {
            what: "agent configuration".into(),
            done: compiled,
        });

        if args.no_git_hook {
            report.push(Done {
                what: "git pre-commit hook".into(),
                done: "left alone (--no-git-hook)".into(),
            });
        } else if root.join(".git").exists() {
            let bin = crate::githook::resolve_binary(None)?;
            let out = crate::githook::install(&root, &bin)?;
            report.push(Done {
                what: format!("git pre-commit hook ({})", out.location.hook.display()),
                done: out.action.as_str().into(),
            });
        } else {
            report.push(Done {
            what: "git pre-commit hook".into(),
            done: "not installed: not a git repository (run `git init`, then `contextos hook install`)".into(),
        });
        }

        let next = [
            "contextos test        # the policies' tests pass",
            "contextos explain exec --shell 'git push --force'   # see a decision and why",
            "edit .contextos/policies/*.policy, then: contextos compile",
            "commit contextos.toml, .contextos/ and the generated agent files",
        ];
        match ctx.format {
            Format::Json => crate::output::print_json(serde_json::json!({
                "root": root.display().to_string(),
                "agents": chosen.iter().map(|(a, why)| serde_json::json!({"agent": a.as_str(), "why": why})).collect::<Vec<_>>(),
                "steps": report.iter().map(|s| serde_json::json!({"what": s.what, "done": s.done})).collect::<Vec<_>>(),
                "next": next,
            })),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                outln!("ContextOS set up in {}", root.display());
                outln!("agents:");
                for (a, why) in &chosen {
                    outln!("  {:<8} ({why})", a.as_str());
                }
                for s in &report {
                    outln!("{}: {}", s.what, s.done);
                }
                outln!("next:");
                for n in next {
                    outln!("  {n}");
                }
            }
        }
        Ok(Exit::Ok)
    }
}

/// Whether `dir` already holds a `*.policy` file (at any depth).
fn has_policies(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            has_policies(&p)
        } else {
            p.extension().is_some_and(|x| x == "policy")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_reads_the_repository_then_the_home_directory() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".cursor")).unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        let found = detect(repo.path(), Some(home.path()));
        let agents: Vec<Agent> = found.iter().map(|(a, _)| *a).collect();
        assert_eq!(agents, vec![Agent::AgentsMd, Agent::Cursor, Agent::Codex]);
        assert_eq!(found[1].1, ".cursor in the repository");
        assert_eq!(found[2].1, "~/.codex");
        let none = detect(repo.path(), None);
        assert_eq!(none.len(), 2);
    }

    /// The user's text stays byte for byte; the key lands under their `[compile]`
    /// header, or in a `[compile]` table appended; a file naming its targets is left as
    /// it is, and one whose `compile` cannot take a header is not touched.
    #[test]
    fn targets_are_recorded_without_rewriting_the_users_file() {
        let two = [Agent::Claude, Agent::Cursor];
        let mine = "# mine\n[policies]\nstdlib = true\n";
        let Record::Add(new) = record_targets(mine, &two) else {
            panic!("not added");
        };
        assert!(new.starts_with(mine), "{new}");
        assert!(new.ends_with("[compile]\n# The agents `contextos compile` writes configuration for (recorded by `contextos init`).\ntargets = [\"claude\", \"cursor\"]\n"), "{new}");
        // Running again finds the key: nothing changes.
        assert_eq!(
            record_targets(&new, &[Agent::Zed]),
            Record::Present(vec!["claude".into(), "cursor".into()])
        );
        let with_table = "[compile] # ours\n\n[compile.claude]\nsandbox = true\n";
        assert_eq!(
            record_targets(with_table, &two),
            Record::Add(
                "[compile] # ours\ntargets = [\"claude\", \"cursor\"]\n\n[compile.claude]\nsandbox = true\n"
                    .into()
            )
        );
        let sub_only = "[compile.claude]\nsandbox = true";
        let Record::Add(new) = record_targets(sub_only, &two) else {
            panic!("not added");
        };
        assert!(
            new.starts_with("[compile.claude]\nsandbox = true\n\n[compile]\n"),
            "{new}"
        );
        assert!(matches!(
            record_targets("compile = { targets_x = 1 }\n", &two),
            Record::Cannot(_)
        ));
        assert!(matches!(
            record_targets("[compile\n", &two),
            Record::Cannot(_)
        ));
    }

    /// Amp's workspace settings directory, Amazon Q's workspace directory and rules file,
    /// and their user directories (`~/.config/amp`, `~/.aws/amazonq`).
    #[test]
    fn amp_and_amazon_q_are_detected() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".amp")).unwrap();
        std::fs::write(repo.path().join("AmazonQ.md"), "# Rules\n").unwrap();
        let found = detect(repo.path(), Some(home.path()));
        assert_eq!(
            found[1..],
            [
                (Agent::Amp, ".amp in the repository".to_string()),
                (Agent::AmazonQ, "AmazonQ.md in the repository".to_string())
            ]
        );
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".config/amp")).unwrap();
        std::fs::create_dir_all(home.path().join(".aws/amazonq/cli-agents")).unwrap();
        let found = detect(repo.path(), Some(home.path()));
        assert_eq!(
            found[1..],
            [
                (Agent::Amp, "~/.config/amp".to_string()),
                (Agent::AmazonQ, "~/.aws/amazonq".to_string())
            ]
        );
        assert_eq!(detect(repo.path(), None).len(), 1);
    }

    #[test]
    fn the_config_names_the_targets() {
        let text = config_text(&[Agent::AgentsMd, Agent::Claude]);
        assert!(text.contains("[compile]\n"), "{text}");
        assert!(
            text.ends_with("targets = [\"agents\", \"claude\"]\n"),
            "{text}"
        );
    }
}

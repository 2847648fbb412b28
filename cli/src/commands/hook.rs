//! `contextos hook claude|cursor|copilot|codex`: answers an agent's pre-tool-call hook.
//! (`contextos hook install|uninstall`, the git pre-commit hook, lives in `githook`.)
//!
//! Reads one event on stdin, judges it with the project's policies (loaded through the
//! policy cache) and answers in the agent's protocol. Every failure — unreadable input,
//! an invalid policy, an internal error, running out of time — is answered with the
//! agent's blocking form (fail closed). Every judged event is appended to the
//! hash-chained decision log.
//!
//! In boundary mode (`[boundary] mode = "boundary"`), what the verdict lets through is
//! kept off the host: a shell command is routed into the agent's sandbox session (Claude
//! Code: rewritten; other agents: denied with a pointer to the MCP `run` tool), unless
//! every part of it was decided by the project's `with host` rules or the person turned on
//! host-unsafe mode in their user configuration; a native file write is denied with a
//! pointer to the MCP write tools.

use crate::hook::egress::{McpFacts, Secrets};
use crate::hook::judge::{judge, Judgement, Place, Scope};
use crate::hook::{content, governance, mode, record, search, taint};
use crate::policy_cache::{self, Loaded};
use crate::project::{BoundaryMode, Project};
use crate::support::user_config::user_config;
use crate::support::{CliError, Context, Exit};
use contextos_engine::effects::decision_log::{DecisionRecord, LogError};
use contextos_engine::effects::user_key::UserKey;
use contextos_engine::emit::{
    amp, can_rewrite, parse_event, render, render_failure, render_routed, wiring, Action, Agent,
    Answer, HookEvent, Rendered, Route,
};
use contextos_engine::PathOp;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum AgentArg {
    /// Claude Code `PreToolUse` / `PermissionRequest` hooks.
    Claude(AgentOpts),
    /// Cursor `beforeShellExecution`, `beforeReadFile`, `beforeMCPExecution`, `preToolUse`.
    Cursor(AgentOpts),
    /// GitHub Copilot (CLI and cloud agent) `preToolUse`.
    Copilot(AgentOpts),
    /// OpenAI Codex `PreToolUse` (`Bash`, `apply_patch`, MCP tools); an ask is a deny.
    Codex(AgentOpts),
    /// Gemini CLI `BeforeTool` (every tool; `AfterTool` observed); an ask is a deny.
    Gemini(AgentOpts),
    /// Windsurf Cascade `pre_read_code`, `pre_write_code`, `pre_run_command`,
    /// `pre_mcp_tool_use`; the verdict is the exit code (2 blocks), an ask blocks.
    Windsurf(AgentOpts),
    /// Cline `PreToolUse` (`.clinerules/hooks/PreToolUse`); a `cancel` document, an ask
    /// cancels.
    Cline(AgentOpts),
    /// Kiro CLI `PreToolUse` (`.kiro/hooks/contextos.json`); the verdict is the exit code
    /// (2 blocks), an ask blocks.
    Kiro(AgentOpts),
    /// Amp's `delegate` permission rule: the tool's arguments on stdin, its name in
    /// `AGENT_TOOL_NAME`; exit 0 allows, 1 asks (`Bash` only), 2 rejects. Amp starts
    /// `contextos` with no arguments for it, which runs this.
    Amp(AgentOpts),
    /// Amazon Q Developer CLI `preToolUse` (`postToolUse` observed); the verdict is the
    /// exit code (2 blocks), an ask blocks.
    #[command(name = "amazonq")]
    AmazonQ(AgentOpts),
}

/// Whether this process is Amp's delegated permission check: Amp runs the program named
/// in a `delegate` rule's `to` without arguments, with `AGENT=amp` and the tool's name in
/// `AGENT_TOOL_NAME`. `contextos` alone then answers as `contextos hook amp`; anywhere
/// else it prints its usage (exit 2, which Amp reads as a rejection).
pub fn amp_delegate() -> bool {
    std::env::args_os().len() == 1
        && std::env::var_os("AGENT").is_some_and(|a| a == "amp")
        && std::env::var_os("AGENT_TOOL_NAME").is_some_and(|t| !t.is_empty())
}

#[derive(Debug, Clone, clap::Args)]
pub struct AgentOpts {
    /// Decide as this role (roles declared in the policies).
    #[arg(long)]
    pub role: Option<String>,
    /// Answer with the blocking form after this many milliseconds, before the agent's own
    /// timeout turns silence into "allow" (ContextOS emits 5 s timeouts; 60 % of that).
    #[arg(long, default_value_t = 3000, value_name = "MS")]
    pub deadline_ms: u64,
    /// Do not append to the decision log.
    #[arg(long)]
    pub no_log: bool,
    /// Report on stderr how the policies were loaded (cache hit, rebuilt, bypassed).
    #[arg(long)]
    pub trace: bool,
}

/// Largest event accepted on stdin; a bigger one is refused (fail closed), not truncated.
const MAX_EVENT_BYTES: u64 = 16 << 20;

/// Set by whichever answers first: the decision or the watchdog.
static ANSWERED: AtomicBool = AtomicBool::new(false);

fn emit(r: &Rendered) -> bool {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return false;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(r.stdout.as_bytes());
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(r.stderr.as_bytes());
    let _ = err.flush();
    true
}

pub fn run(ctx: &Context, agent: &AgentArg) -> Result<Exit, CliError> {
    let project = ctx.project.as_deref();
    let (agent, opts) = match agent {
        AgentArg::Claude(o) => (Agent::Claude, o),
        AgentArg::Cursor(o) => (Agent::Cursor, o),
        AgentArg::Copilot(o) => (Agent::Copilot, o),
        AgentArg::Codex(o) => (Agent::Codex, o),
        AgentArg::Gemini(o) => (Agent::Gemini, o),
        AgentArg::Windsurf(o) => (Agent::Windsurf, o),
        AgentArg::Cline(o) => (Agent::Cline, o),
        AgentArg::Kiro(o) => (Agent::Kiro, o),
        AgentArg::Amp(o) => (Agent::Amp, o),
        AgentArg::AmazonQ(o) => (Agent::AmazonQ, o),
    };
    // A bug must not fail open: a panic answers with the blocking form (exit 101 would
    // be read as "proceed" by every agent but Cursor with failClosed).
    std::panic::set_hook(Box::new(move |info| {
        let r = render_failure(agent, &format!("ContextOS hit an internal error: {info}"));
        if emit(&r) {
            std::process::exit(i32::from(r.exit));
        }
    }));
    let deadline = Duration::from_millis(opts.deadline_ms.max(1));
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        let r = render_failure(
            agent,
            &format!(
                "ContextOS could not decide within {} ms",
                deadline.as_millis()
            ),
        );
        if emit(&r) {
            std::process::exit(i32::from(r.exit));
        }
    });
    let r = answer(agent, project, opts);
    if emit(&r) {
        Ok(Exit::Status(r.exit))
    } else {
        // The watchdog answered; it also ends the process.
        std::thread::sleep(Duration::from_secs(1));
        Ok(Exit::Unverified)
    }
}

fn answer(agent: Agent, explicit_project: Option<&Path>, opts: &AgentOpts) -> Rendered {
    let started = Instant::now();
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin()
        .take(MAX_EVENT_BYTES + 1)
        .read_to_end(&mut input)
    {
        return render_failure(agent, &format!("ContextOS cannot read the hook event: {e}"));
    }
    if input.len() as u64 > MAX_EVENT_BYTES {
        return render_failure(
            agent,
            &format!("ContextOS refuses a hook event larger than {MAX_EVENT_BYTES} bytes"),
        );
    }
    // Amp passes the tool's name in the environment and only its arguments on stdin.
    if agent == Agent::Amp {
        let var = |k: &str| std::env::var(k).ok();
        input = amp::hook::envelope(
            var("AGENT_TOOL_NAME").as_deref(),
            var("AMP_THREAD_ID").as_deref(),
            &input,
        );
    }
    let ev = match parse_event(agent, &input) {
        Ok(ev) => ev,
        Err(e) => {
            return render_failure(agent, &format!("ContextOS cannot read the hook event: {e}"))
        }
    };
    if ev.actions.is_empty() {
        // Nothing to judge, but the session is at work: its taint does not expire.
        if let Ok(root) = project_root(explicit_project, &ev.roots, ev.cwd.as_deref()) {
            note_activity(&root, &ev);
        }
        return render(&ev, &Answer::Pass);
    }
    if ev.observe_only {
        // A post-tool event cannot veto; it tells what entered the agent's context.
        observe(agent, explicit_project, &ev, opts, started);
        return render(&ev, &Answer::Pass);
    }
    let root = match project_root(explicit_project, &ev.roots, ev.cwd.as_deref()) {
        Ok(r) => r,
        Err(e) => return render_failure(agent, &format!("ContextOS cannot find the project: {e}")),
    };
    let project = match Project::discover(Some(&root)) {
        Ok(p) => p,
        Err(e) => return render_failure(agent, &format!("ContextOS: {e}")),
    };
    // Without a user key the cache is bypassed (compiled from source every time), never
    // trusted unauthenticated.
    let user_key = UserKey::load_or_create_default();
    let (loaded, write) = match policy_cache::load_deferring_write(&project, user_key.as_ref()) {
        Ok((loaded, write)) => (Ok(loaded), write),
        Err(e) => (Err(e), None),
    };
    // A rebuilt cache is MAC'd and written on another thread while this one decides;
    // `writing` waits for it before the process ends, whichever way this call returns.
    let writing = write.map(policy_cache::CacheWrite::start);
    let set = match loaded {
        Ok(Loaded::Ready { set, status, note }) => {
            if opts.trace {
                eprintln!(
                    "contextos: policy cache {}{}",
                    status.as_str(),
                    note.map(|n| format!(" ({n})")).unwrap_or_default()
                );
            }
            set
        }
        Ok(Loaded::Invalid(out)) => {
            let first = out
                .diagnostics
                .iter()
                .find(|d| d.diagnostic.is_error())
                .map(|d| out.render(d))
                .unwrap_or_default();
            let message = format!("ContextOS: the policies do not compile, so every action is blocked until they do (run `contextos check`).\n{first}");
            return fail_logged(
                agent,
                &project.root,
                &ev,
                opts,
                started,
                "policy-invalid",
                &message,
            );
        }
        Err(e) => return render_failure(agent, &format!("ContextOS: {e}")),
    };
    // The process ends with this call: freeing every rule, glob set and detector the
    // set decoded would be spent time and nothing else.
    let set = std::mem::ManuallyDrop::new(set);
    // A role no policy declares would silently skip the role's own rules: refuse it.
    let known = set.known_roles();
    if let Some(role) = opts.role.as_deref().filter(|r| !known.contains(*r)) {
        let message = format!(
            "ContextOS: the hook runs as role `{role}`, which no policy declares (known roles: {})",
            known.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        return fail_logged(
            agent,
            &project.root,
            &ev,
            opts,
            started,
            "role-unknown",
            &message,
        );
    }
    let boundary = match boundary(&project) {
        Ok(b) => b,
        Err(message) => {
            return fail_logged(
                agent,
                &project.root,
                &ev,
                opts,
                started,
                "boundary-config",
                &message,
            )
        }
    };
    // Claude's PermissionRequest comes after its PreToolUse has already routed the
    // command: what it shows is the routed command, answered as usual.
    let route_shell = boundary.routing && ev.event != "PermissionRequest" && is_shell(&ev);
    let place = Place::new(&project.root, ev.cwd.as_deref());
    // A routed line is judged where it will run: in the sandbox, where `/tmp/x` is the
    // container's. A line that `with host` rules send to the host is judged as a host
    // line again (never wider: the host judgement has every part the sandbox one has).
    // A search's glob is judged as the files it picks (the path checks refuse globs).
    let actions = search::expand(&ev.actions, &place);
    let secrets = Secrets::new(&set);
    let mcp = McpFacts::new(&project);
    let session = taint::session(&project.root, ev.session.as_deref());
    note_activity(&project.root, &ev);
    let scope = Scope {
        role: opts.role.as_deref(),
        session: session.as_ref(),
        secrets: &secrets,
        mcp: &mcp,
    };
    let mut judgement = if route_shell {
        let sandboxed = judge(&set, &place.contained(), &actions, &scope, true);
        if sandboxed.host_only() {
            judge(&set, &place, &actions, &scope, true)
        } else {
            sandboxed
        }
    } else {
        judge(&set, &place, &actions, &scope, false)
    };
    // What the policies cannot see in the actions alone: the text an edit adds, and the
    // files the last compile generated.
    judgement.parts.extend(content::parts(&ev, &place));
    judgement.parts.extend(governance::parts(&ev, &place));
    // Silence means "the agent decides", which outside its default mode is "it runs" —
    // on the host; a routed line runs in the sandbox session instead.
    let mut ans = mode::answer(&judgement, &ev, route_shell && !judgement.host_only());
    // Claude's PermissionRequest fires while the user is being asked: saying nothing lets
    // that prompt stand, which is what `ask` means (its protocol cannot answer `ask`).
    if ev.event == "PermissionRequest" && matches!(ans, Answer::Ask { .. }) {
        ans = Answer::Pass;
    }
    let denied = matches!(ans, Answer::Deny { .. });
    // What goes out: the usual verdict first; in boundary mode what it lets through is
    // routed into the sandbox (or, for a native file write, sent to the MCP tools).
    let (rendered, routed) = if route_shell && !denied && !judgement.host_only() {
        match route(&ev) {
            Ok(r) => {
                let out = render_routed(&ev, &ans, &r);
                let rewritten = ev.tool_input.is_some()
                    && can_rewrite(ev.agent, &ev.event, &ev.tool)
                    && !matches!(ans, Answer::Ask { .. } if !ev.can_ask);
                if !rewritten {
                    ans = Answer::Deny {
                        reason: wiring::run_tool_hint(),
                    };
                }
                (out, rewritten)
            }
            Err(message) => {
                return fail_logged(agent, &project.root, &ev, opts, started, "route", &message)
            }
        }
    } else if boundary.mode == BoundaryMode::Boundary && !denied && writes_natively(&ev) {
        ans = Answer::Deny {
            reason: wiring::write_tool_hint(),
        };
        (render(&ev, &ans), false)
    } else {
        (render(&ev, &ans), false)
    };
    if !opts.no_log {
        if let Err(e) = log(&project.root, agent, &ev, &judgement, &ans, routed, started) {
            // The verdict stands; a log that cannot be written is reported, not fatal:
            // blocking every action would let anyone who can break the log stop all work.
            eprintln!("contextos: warning: the decision was not logged: {e}");
        }
    }
    // What an allowed (or asked) call brings in taints the session from now on; recorded
    // before the tool runs, so agents without post-tool hooks are covered too.
    if !denied {
        let sources = taint::of_judgement(&set, &actions, &judgement, &mcp);
        record_taint(&project.root, agent, &ev, &sources, opts, started);
    }
    if let Some(Err(e)) = writing.map(policy_cache::Writing::finish) {
        if opts.trace {
            eprintln!("contextos: policy cache not written: {e}");
        }
    }
    rendered
}

/// A post-tool event: records what it brought into the session (the same sources a
/// pre-tool event records; recording twice changes nothing).
fn observe(
    agent: Agent,
    explicit_project: Option<&Path>,
    ev: &HookEvent,
    opts: &AgentOpts,
    started: Instant,
) {
    let Ok(root) = project_root(explicit_project, &ev.roots, ev.cwd.as_deref()) else {
        return;
    };
    let Ok(project) = Project::discover(Some(&root)) else {
        return;
    };
    let user_key = UserKey::load_or_create_default();
    let Ok(Loaded::Ready { set, .. }) = policy_cache::load(&project, user_key.as_ref()) else {
        return;
    };
    note_activity(&project.root, ev);
    let place = Place::new(&project.root, ev.cwd.as_deref());
    let actions = search::expand(&ev.actions, &place);
    let secrets = Secrets::new(&set);
    let mcp = McpFacts::new(&project);
    let scope = Scope {
        role: opts.role.as_deref(),
        session: None,
        secrets: &secrets,
        mcp: &mcp,
    };
    let judgement = judge(&set, &place, &actions, &scope, false);
    let sources = taint::of_judgement(&set, &actions, &judgement, &mcp);
    record_taint(&project.root, agent, ev, &sources, opts, started);
}

/// A hook call of the session: its taint expires only once it is idle.
fn note_activity(root: &Path, ev: &HookEvent) {
    if let Some(session) = ev.session.as_deref() {
        if let Err(e) = taint::touch(root, session) {
            eprintln!("contextos: warning: the session's activity was not recorded: {e}");
        }
    }
}

/// Adds `sources` to the session's taint and logs the new ones.
fn record_taint(
    root: &Path,
    agent: Agent,
    ev: &HookEvent,
    sources: &[String],
    opts: &AgentOpts,
    started: Instant,
) {
    let Some(session) = ev.session.as_deref().filter(|s| !s.is_empty()) else {
        return;
    };
    match taint::record(root, session, agent.as_str(), &ev.tool, sources) {
        Ok(new) if !new.is_empty() && !opts.no_log => {
            let rec = DecisionRecord {
                agent: agent.as_str().to_string(),
                event: ev.event.clone(),
                tool: ev.tool.clone(),
                request: serde_json::json!({ "session": session, "taint": new }),
                verdict: "taint".into(),
                rules: Vec::new(),
                duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            };
            if let Err(e) = record::append(root, &rec) {
                eprintln!("contextos: warning: the taint was not logged: {e}");
            }
        }
        Ok(_) => {}
        Err(e) => eprintln!("contextos: warning: the session's taint was not recorded: {e}"),
    }
}

/// The project's boundary mode, and whether shell commands are routed into the sandbox:
/// in boundary mode unless the person turned on host-unsafe mode in their own user
/// configuration (never the repository). A configuration that cannot be used is the
/// reason to block.
struct Boundary {
    mode: BoundaryMode,
    routing: bool,
}

fn boundary(project: &Project) -> Result<Boundary, String> {
    let mode = project.config.boundary.mode();
    if mode == BoundaryMode::Guard {
        return Ok(Boundary {
            mode,
            routing: false,
        });
    }
    project
        .check_config()
        .map_err(|e| format!("ContextOS: {e}"))?;
    let (_, user) = user_config(&project.root).map_err(|e| format!("ContextOS: {e}"))?;
    Ok(Boundary {
        mode,
        routing: !user.run.host_unsafe,
    })
}

/// Whether the event is one shell command line.
fn is_shell(ev: &HookEvent) -> bool {
    matches!(ev.actions.as_slice(), [Action::Shell { .. }])
}

/// Whether the event is a native file tool changing files (not a shell command).
fn writes_natively(ev: &HookEvent) -> bool {
    ev.actions
        .iter()
        .any(|a| matches!(a, Action::Path { op, .. } if *op != PathOp::Read))
}

/// Where a routed command goes: this very executable (the one the agent's hook entry
/// started, so the same installation runs the command) and the agent's session.
fn route(ev: &HookEvent) -> Result<Route, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("ContextOS cannot route the command into the sandbox: {e}"))?;
    let exe = exe.to_str().ok_or_else(|| {
        format!(
            "ContextOS cannot route the command into the sandbox: its own path {} is not UTF-8",
            exe.display()
        )
    })?;
    let session = ev.session.as_deref().filter(|s| !s.is_empty()).ok_or(
        "ContextOS cannot route the command into the sandbox: the agent sent no session id",
    )?;
    Ok(Route {
        exe: exe.to_owned(),
        session: session.to_owned(),
    })
}

/// The blocking form, recorded in the decision log as a fail-closed deny.
fn fail_logged(
    agent: Agent,
    root: &Path,
    ev: &HookEvent,
    opts: &AgentOpts,
    started: Instant,
    cause: &str,
    message: &str,
) -> Rendered {
    if !opts.no_log {
        let j = Judgement {
            parts: vec![crate::hook::judge::Part {
                verdict: contextos_engine::Effect::Deny,
                explicit: true,
                reason: message.to_string(),
                rules: vec![format!("fail-closed:{cause}")],
                host: false,
            }],
            ..Judgement::default()
        };
        let ans = Answer::Deny {
            reason: message.to_string(),
        };
        if let Err(e) = log(root, agent, ev, &j, &ans, false, started) {
            eprintln!("contextos: warning: the decision was not logged: {e}");
        }
    }
    render_failure(agent, message)
}

/// The project root: `--project`, else what the agent says (Cursor's workspace root,
/// Claude's `$CLAUDE_PROJECT_DIR`), else the nearest ancestor of the working directory
/// holding `contextos.toml`, `.contextos` or `.git`.
fn project_root(
    explicit: Option<&Path>,
    roots: &[String],
    cwd: Option<&str>,
) -> std::io::Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(r) = roots.first() {
        return Ok(PathBuf::from(r));
    }
    if let Some(d) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    let start = match cwd {
        Some(c) => PathBuf::from(c),
        None => std::env::current_dir()?,
    };
    Ok(start
        .ancestors()
        .find(|d| {
            d.join("contextos.toml").is_file()
                || d.join(".contextos").is_dir()
                || d.join(".git").exists()
        })
        .map_or(start.clone(), Path::to_path_buf))
}

fn log(
    root: &Path,
    agent: Agent,
    ev: &HookEvent,
    j: &Judgement,
    ans: &Answer,
    routed: bool,
    started: Instant,
) -> Result<(), LogError> {
    let actions = record::actions(&ev.actions);
    // What the agent was told: an ask it cannot honour went out as a deny.
    let verdict = match ans {
        Answer::Pass => "pass",
        Answer::Allow { .. } => "allow",
        Answer::Ask { .. } if ev.can_ask => "ask",
        Answer::Ask { .. } | Answer::Deny { .. } => "deny",
    };
    let rec = DecisionRecord {
        agent: agent.as_str().to_string(),
        event: ev.event.clone(),
        tool: ev.tool.clone(),
        request: if routed {
            serde_json::json!({ "actions": actions, "session": ev.session, "routed": "sandbox" })
        } else {
            serde_json::json!({ "actions": actions, "session": ev.session })
        },
        verdict: verdict.to_string(),
        rules: j.rules(),
        duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    };
    record::append(root, &rec)
}

//! `contextos run [--session ID] [--profile P] [--image IMAGE] [--yes] -- CMD…`: the
//! execution boundary.
//!
//! 1. The exec verdict decides first: deny ⇒ nothing runs (exit 1); ask ⇒ only after an
//!    interactive confirmation or `--yes` (else exit 3); allow ⇒ the command runs. Inside
//!    the sandbox only files that land in the project are host paths: `/tmp/x` is the
//!    container's own.
//! 2. The profile is the stdlib floor with the rules' `with sandbox { … }` obligations
//!    laid over it, tightening only.
//! 3. The command runs in a sandbox **session**: a warm, hardened container whose
//!    `/workspace` is writable and whose changes are captured exactly (an overlay over the
//!    project, or a private copy diffed after each command). `--session ID` names a
//!    session that outlives this process (the agent's); without it a one-shot session is
//!    opened and closed around the command. When the *user* chose host-unsafe mode it runs
//!    on the host with a scrubbed environment instead. No engine ⇒ exit 2, never a
//!    fallback to the host.
//! 4. The command's changes to the project — writes, deletions, mode changes — are
//!    decided path by path and applied as one journaled transaction under the project
//!    lock, all or nothing; paths git ignores (build outputs) stay in the session. A
//!    refused changeset is reset in the session, so the next command does not see it.
//!
//! Exit codes: 1 deny, 2 could not run or could not bring results back, 3 ask without
//! confirmation; when the command ran and its changes were settled, its own exit status
//! (124 after a timeout, 130 after Ctrl-C), as `timeout(1)` and `docker run` do.
//! `--format json` says which. What ContextOS reports goes to stderr (or the JSON
//! document), never into the command's own stdout.

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run in the sandbox session ID (created on first use, kept warm, removed after
    /// `--idle` without use or by `contextos session close ID`).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// How long a new session may stay unused before it is removed (e.g. `30m`).
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    idle: String,
    /// A named profile laid over the floor (`default`, `strict`); it can only tighten.
    #[arg(long)]
    profile: Option<String>,
    /// The image, when no rule's `with sandbox { image: … }` names one.
    #[arg(long)]
    image: Option<String>,
    /// Confirm an `ask` verdict (for the command and for its results) without a prompt.
    #[arg(long)]
    yes: bool,
    /// The command's `ask` was approved by a person in the agent's own permission dialog
    /// (the hook routed it as an ask); the asks of its changes still need `--yes` or a
    /// prompt.
    #[arg(long)]
    approved: bool,
    /// Tighten the timeout (e.g. `30s`, `5m`); never beyond the profile's.
    #[arg(long)]
    timeout: Option<String>,
    /// Run on the host instead of the sandbox (asks for confirmation unless `--yes`).
    /// Results are marked `auto_merge: blocked`.
    #[arg(long)]
    host_unsafe: bool,
    /// Report the changes, but do not apply them (they are reset in the session).
    #[arg(long)]
    no_apply: bool,
    /// Role the requests carry.
    #[arg(long)]
    role: Option<String>,
    /// Seconds to wait for the project lock when applying results.
    #[arg(long, default_value_t = 30)]
    lock_timeout: u64,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    argv: Vec<String>,
}

#[cfg(feature = "docker")]
pub use imp::run;

/// The run itself: only in a build with the container client.
#[cfg(feature = "docker")]
mod imp {
    use super::Args;

    use crate::output;
    use crate::policy_cache::{self, Loaded};
    use crate::project::Project;
    use crate::support::changeset::{self, Op, Planned};
    use crate::support::run_records::{RUNS_DIR, SESSIONS_DIR};
    use crate::support::user_config::user_config;
    use crate::support::Format;
    use crate::support::{CliError, Context, Exit};
    use contextos_engine::decision::ShellDecision;
    use contextos_engine::effects::safe_fs::SafeRoot;
    use contextos_engine::effects::sandbox::host::{self, HostOutcome};
    use contextos_engine::effects::sandbox::profile::{self, Profile};
    use contextos_engine::effects::sandbox::runner::{ResolvedImage, Runner, Stream};
    use contextos_engine::effects::sandbox::session::{
        self, CaptureMode, Change, ExecOptions, ExecOutcome, Session, SessionConfig,
    };
    use contextos_engine::effects::sandbox::workspace::{excluded, RunDir, WORKSPACE_MOUNT};
    use contextos_engine::effects::user_key::UserKey;
    use contextos_engine::{Effect, EvalOptions, PathOp, Request, ShellOptions};
    use contextos_engine::{PolicySet, ShellBase};
    use serde::Serialize;
    use serde_json::{json, Value};
    use std::io::{IsTerminal, Write};
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    fn confirm(question: &str) -> bool {
        if !std::io::stdin().is_terminal() {
            return false;
        }
        eprint!("{question} [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line).is_err() {
            return false;
        }
        matches!(line.trim(), "y" | "Y" | "yes")
    }

    /// The session a sandboxed command ran in.
    #[derive(Debug, Serialize)]
    #[serde(rename_all = "camelCase")]
    struct SessionReport {
        id: String,
        /// How its changes are captured: `overlay` or `copy`.
        mode: CaptureMode,
        container: String,
        /// Created for this command.
        fresh: bool,
        /// Opened and closed around this command (no `--session`).
        one_shot: bool,
        /// Why the session fell back to copy mode, when it did.
        #[serde(skip_serializing_if = "Option::is_none")]
        fallback: Option<String>,
        /// `uid:gid` the commands run as.
        user: String,
    }

    /// Everything `--format json` reports; also the run record.
    #[derive(Debug, Default, Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Report {
        id: String,
        argv: Vec<String>,
        verdict: Option<Effect>,
        #[serde(skip_serializing_if = "Option::is_none")]
        decision: Option<ShellDecision>,
        ran: bool,
        mode: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        profile: Option<Profile>,
        #[serde(skip_serializing_if = "Option::is_none")]
        image: Option<ResolvedImage>,
        #[serde(skip_serializing_if = "Option::is_none")]
        session: Option<SessionReport>,
        #[serde(rename = "sandbox", skip_serializing_if = "Option::is_none")]
        sandbox_exec: Option<ExecOutcome>,
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<HostOutcome>,
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        results: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        apply: Option<Value>,
        /// `blocked` for anything produced under host-unsafe mode.
        auto_merge: &'static str,
        warnings: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    }

    impl Report {
        fn emit(&self, ctx: &Context, code: Exit) -> Exit {
            match ctx.format {
                Format::Json => output::print_json(serde_json::to_value(self).unwrap_or_default()),
                Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                    for w in &self.warnings {
                        eprintln!("warning: {w}");
                    }
                    if let Some(e) = &self.error {
                        eprintln!("error: {e}");
                    }
                }
            }
            code
        }
    }

    pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
        let project = ctx.project()?;
        // The hook's authenticated cache: a routed command pays for a snapshot load, not
        // for compiling every policy again.
        let user_key = UserKey::load_or_create_default();
        let set = match policy_cache::load(&project, user_key.as_ref())? {
            Loaded::Ready { set, .. } => set,
            Loaded::Invalid(out) => {
                return Err(CliError::policy_invalid(&out, "nothing can be decided"))
            }
        };
        crate::support::context::check_role(&set, args.role.as_deref())?;
        Ok(execute(ctx, args, &set, &project))
    }

    /// The working directory of this process relative to the project root, when it lies
    /// inside it: a routed command runs where the agent ran it.
    fn workdir(root: &Path) -> Option<String> {
        let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
        let root = root.canonicalize().ok()?;
        let rel = cwd.strip_prefix(&root).ok()?;
        let rel = rel.to_str()?.replace('\\', "/");
        (!rel.is_empty() && !excluded(&rel)).then_some(rel)
    }

    /// Everything after the policies loaded: from here on, whatever happens is reported in
    /// the run's own report (and record), not as a bare error.
    fn execute(ctx: &Context, args: &Args, set: &PolicySet, project: &Project) -> Exit {
        let id = uuid::Uuid::new_v4().to_string();
        let mut report = Report {
            id: id.clone(),
            argv: args.argv.clone(),
            mode: "sandbox",
            auto_merge: "allowed",
            ..Report::default()
        };
        let fail = |mut report: Report, msg: String| {
            report.error = Some(msg);
            report.emit(ctx, Exit::Unverified)
        };
        if let Some(s) = &args.session {
            if let Err(e) = session::state::validate_id(s) {
                return fail(report, format!("--session: {}", e.message));
            }
        }
        let idle = match profile::parse_duration(&args.idle) {
            Ok(d) => d,
            Err(e) => return fail(report, format!("--idle: {e}")),
        };

        // 1. The exec verdict.
        // The command runs as argv (no shell in between), so it is decided as those
        // words; `line` is only how messages show it. In the sandbox `/workspace/x` is the
        // project's `x`, and every other absolute path is the container's own.
        let line = contextos_engine::shell::quote(&args.argv);
        let cwd = workdir(&project.root);
        let mut roots = vec![
            WORKSPACE_MOUNT.to_string(),
            project.root.display().to_string(),
        ];
        if let Ok(c) = project.root.canonicalize() {
            roots.push(c.display().to_string());
        }
        let (cfg_path, user) = match user_config(&project.root) {
            Ok(c) => c,
            Err(e) => return fail(report, e.to_string()),
        };
        let on_host = args.host_unsafe || user.run.host_unsafe;
        let base = ShellBase {
            roots,
            cwd: cwd.clone().unwrap_or_default(),
            contained: !on_host,
            home: contextos_engine::effects::home_dir(),
        };
        let decision = set.decide_argv(
            &args.argv,
            args.role.as_deref(),
            ShellOptions {
                base: Some(&base),
                ..ShellOptions::default()
            },
        );
        let verdict = decision.verdict;
        report.verdict = Some(verdict);
        let obligations: Vec<_> = decision
            .parts
            .iter()
            .flat_map(|p| p.obligations.iter().cloned())
            .collect();
        let rules: Vec<String> = decision.decided_by().iter().map(|h| h.id.clone()).collect();
        report.decision = Some(decision);
        match verdict {
            Effect::Deny => {
                if ctx.format != Format::Json {
                    eprintln!(
                        "deny  {line}  ({}): nothing ran",
                        if rules.is_empty() {
                            "default".to_string()
                        } else {
                            rules.join(", ")
                        }
                    );
                }
                return report.emit(ctx, Exit::Findings);
            }
            Effect::Ask
                if !args.yes && !args.approved && !confirm(&format!("ask   {line}: run it?")) =>
            {
                if ctx.format != Format::Json {
                    eprintln!(
                        "ask   {line}: not confirmed (pass --yes or answer the prompt); nothing ran"
                    );
                }
                return report.emit(ctx, Exit::Ask);
            }
            _ => {}
        }

        // 2. The profile.
        let mut prof = match profile::resolve(&obligations, args.profile.as_deref()) {
            Ok(p) => p,
            Err(e) => return fail(report, e.to_string()),
        };
        let mut timeout = None;
        if let Some(t) = &args.timeout {
            match profile::parse_duration(t) {
                Ok(d) => {
                    prof.tighten_timeout(d);
                    timeout = Some(d);
                }
                Err(e) => return fail(report, format!("--timeout: {e}")),
            }
        }
        let repo_image = project.config.sandbox.image.clone();
        if let Some(img) = args.image.as_deref().or(if prof.image.is_none() {
            repo_image.as_deref()
        } else {
            None
        }) {
            if let Err(e) = prof.set_image(img) {
                return fail(
                    report,
                    format!("{e} (the policy pins the image; --image cannot replace it)"),
                );
            }
        }

        // 3. Where it runs: host-unsafe only by the user's own choice.
        if project.config.sandbox.host_unsafe.is_some() {
            report.warnings.push(
                "contextos.toml sets [sandbox] host_unsafe: ignored — a repository cannot choose \
                 host-unsafe mode; only the user can (user config or --host-unsafe)"
                    .into(),
            );
        }
        let host_unsafe = if args.host_unsafe {
            if !args.yes
                && !confirm(&format!(
                    "run `{line}` on the HOST, outside the sandbox? Its results can never be auto-merged."
                ))
            {
                return fail(
                    report,
                    "--host-unsafe needs confirmation: answer the prompt or pass --yes".into(),
                );
            }
            true
        } else if user.run.host_unsafe {
            report.warnings.push(format!(
                "host-unsafe mode is on in {}: the command runs on the host",
                cfg_path
                    .as_deref()
                    .map_or_else(|| "the user config".into(), |p| p.display().to_string())
            ));
            true
        } else {
            false
        };
        let mut readable = |rel: &str| {
            set.decide(
                &Request::path(PathOp::Read, rel.to_string()).with_role(args.role.clone()),
                EvalOptions::default(),
            )
            .verdict
                == Effect::Allow
        };
        if host_unsafe {
            return on_host_unsafe(ctx, args, set, project, report, prof, &mut readable);
        }
        let mut withhold = |rel: &str| !readable(rel);
        sandboxed(
            ctx,
            args,
            set,
            project,
            report,
            prof,
            Sandboxed {
                idle,
                timeout,
                cwd,
                withhold: &mut withhold,
            },
        )
    }

    /// How often a project's leftovers are looked for: sweeping costs several engine
    /// round trips, and a routed command should not pay them every time.
    const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

    /// Whether the last sweep of this project is older than [`SWEEP_EVERY`]; marks it
    /// done. An unreadable mark means a sweep is due.
    fn sweep_due(state_dir: &Path) -> bool {
        let mark = state_dir.join(".swept");
        let recent = std::fs::metadata(&mark)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < SWEEP_EVERY);
        if recent {
            return false;
        }
        let _ = std::fs::create_dir_all(state_dir);
        let _ = std::fs::write(&mark, b"");
        true
    }

    /// Removes what earlier runs left: one-shot containers of the first design, sessions
    /// idle past their deadline and the orphans of removed ones.
    fn sweep(runner: &Runner, state_dir: &Path, report: &mut Report) {
        // No one-shot run lives longer than the floor's timeout; a minute's grace covers
        // the kill and removal of one that just timed out.
        let max_age = Profile::floor().timeout + std::time::Duration::from_secs(60);
        match runner.sweep_stale(max_age) {
            Ok(swept) if !swept.is_empty() => report.warnings.push(format!(
                "removed {} container(s) left by an earlier run that could not clean up: {}",
                swept.len(),
                swept.join(", ")
            )),
            Ok(_) => {}
            Err(e) => report
                .warnings
                .push(format!("could not look for leftover containers: {e}")),
        }
        match runner.sweep_idle_sessions(state_dir, std::time::SystemTime::now()) {
            Ok(swept) if !swept.is_empty() => report.warnings.push(format!(
                "removed {} idle or orphaned session(s): {}",
                swept.len(),
                swept.join(", ")
            )),
            Ok(_) => {}
            Err(e) => report
                .warnings
                .push(format!("could not look for idle sessions: {e}")),
        }
    }

    /// What [`sandboxed`] needs besides the report and the profile.
    struct Sandboxed<'a> {
        idle: std::time::Duration,
        timeout: Option<std::time::Duration>,
        cwd: Option<String>,
        withhold: &'a mut dyn FnMut(&str) -> bool,
    }

    /// `CONTEXTOS_SESSION_MODE=overlay|copy` chooses the capture mode of a new session
    /// (tests, and engines where the automatic choice is wrong).
    fn forced_mode() -> Result<Option<CaptureMode>, String> {
        match std::env::var("CONTEXTOS_SESSION_MODE").as_deref() {
            Err(_) | Ok("") => Ok(None),
            Ok("overlay") => Ok(Some(CaptureMode::Overlay)),
            Ok("copy") => Ok(Some(CaptureMode::Copy)),
            Ok(other) => Err(format!(
                "CONTEXTOS_SESSION_MODE={other:?}: expected `overlay` or `copy`"
            )),
        }
    }

    fn echo(ctx: &Context) -> impl FnMut(Stream, &[u8]) + '_ {
        move |stream: Stream, bytes: &[u8]| {
            if ctx.format == Format::Json {
                return;
            }
            let _ = match stream {
                Stream::Stdout => std::io::stdout().write_all(bytes),
                Stream::Stderr => std::io::stderr().write_all(bytes),
            };
        }
    }

    /// The command in a sandbox session, and its changeset settled.
    fn sandboxed(
        ctx: &Context,
        args: &Args,
        set: &PolicySet,
        project: &Project,
        mut report: Report,
        prof: Profile,
        opts: Sandboxed<'_>,
    ) -> Exit {
        let fail = |mut report: Report, msg: String| {
            report.error = Some(msg);
            report.emit(ctx, Exit::Unverified)
        };
        let force_mode = match forced_mode() {
            Ok(m) => m,
            Err(e) => return fail(report, e),
        };
        let runner = match Runner::connect() {
            Ok(r) => r,
            Err(e) => return fail(report, e.message),
        };
        let state_dir = project.root.join(SESSIONS_DIR);
        if sweep_due(&state_dir) {
            sweep(&runner, &state_dir, &mut report);
        }
        let Some(reference) = prof.image.clone() else {
            report.profile = Some(prof);
            return fail(
                report,
                "no image: name one with `with sandbox { image: \"…\" }` in the rule, \
                 [sandbox] image in contextos.toml, or --image"
                    .into(),
            );
        };
        let image = match runner.resolve_image(&reference, &prof) {
            Ok(i) => i,
            Err(e) => {
                report.profile = Some(prof);
                return fail(report, e.message);
            }
        };
        let one_shot = args.session.is_none();
        let session_id = args
            .session
            .clone()
            .unwrap_or_else(|| format!("run-{}", report.id));
        report.profile = Some(prof.clone());
        let image_id = image.id.clone();
        let mut session = match runner.open_session(SessionConfig {
            id: &session_id,
            project: &project.root,
            state_dir: &state_dir,
            scratch_base: None,
            image_id: &image_id,
            profile: &prof,
            idle: opts.idle,
            force_mode,
            withhold: opts.withhold,
        }) {
            Ok(s) => s,
            Err(e) => {
                report.image = Some(image);
                return fail(report, e.message);
            }
        };
        report.image = Some(image);
        report.session = Some(SessionReport {
            id: session.id().to_string(),
            mode: session.mode(),
            container: session.container().to_string(),
            fresh: session.fresh(),
            one_shot,
            fallback: session.fallback().map(str::to_string),
            user: format!("{}:{}", session.user().0, session.user().1),
        });
        let mut echo = echo(ctx);
        let outcome = session.exec(
            &args.argv,
            ExecOptions {
                timeout: opts.timeout,
                handle_signals: true,
                workdir: opts.cwd,
            },
            &mut echo,
        );
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                let code = settle_failure(&mut report, session, one_shot);
                report.error = Some(e.message);
                return finish(ctx, &project.root, report, code, None);
            }
        };
        report.ran = true;
        let finished = !outcome.timed_out && !outcome.interrupted && !outcome.reset;
        report.exit_code = outcome
            .exit_code
            .or(outcome.timed_out.then_some(124))
            .or(outcome.interrupted.then_some(130));
        report.sandbox_exec = Some(outcome);
        let code =
            Exit::Status(u8::try_from(report.exit_code.unwrap_or(1).clamp(0, 255)).unwrap_or(1));

        // 4. The changeset, through the journal only.
        let pending = match session.pending() {
            Ok(p) => p,
            Err(e) => {
                let code = settle_failure(&mut report, session, one_shot);
                report.error = Some(format!("reading the session's changes: {}", e.message));
                return finish(ctx, &project.root, report, code, None);
            }
        };
        report.results = Some(json!({
            "changes": &pending.changes,
            "keptInSession": &pending.kept_in_session,
            "refused": &pending.refused,
            "bytes": pending.bytes,
        }));
        let changes = Changes {
            planned: pending.changes.iter().map(planned).collect(),
            refused: !pending.refused.is_empty(),
            discard: (!finished).then_some(
                "the command did not finish (timeout or interrupt); its changes were discarded",
            ),
        };
        let (code, applied) = settle(ctx, args, set, project, &mut report, changes, code);
        let settled = if applied {
            session.accept(&pending)
        } else {
            session.discard(&pending)
        };
        if let Err(e) = settled {
            report.warnings.push(format!(
                "the session could not record the outcome ({}); close it with `contextos session close {}`",
                e.message,
                session.id()
            ));
        }
        if one_shot {
            if let Err(e) = session.close() {
                report.warnings.push(format!(
                    "the one-shot session could not be removed: {}",
                    e.message
                ));
            }
        }
        finish(ctx, &project.root, report, code, None)
    }

    /// After a failure with the session open: a one-shot session goes; a named one stays
    /// for the next command (its state is whatever the engine left).
    fn settle_failure(report: &mut Report, session: Session<'_>, one_shot: bool) -> Exit {
        if one_shot {
            if let Err(e) = session.close() {
                report.warnings.push(format!(
                    "the one-shot session could not be removed: {}",
                    e.message
                ));
            }
        }
        Exit::Unverified
    }

    /// A command's changes, ready to be settled.
    struct Changes {
        planned: Vec<Planned>,
        /// Some change cannot come back: nothing of the command's changes may land.
        refused: bool,
        /// Why the changes are discarded without being decided, if they are.
        discard: Option<&'static str>,
    }

    /// Decides and applies a command's changes as one transaction; returns the exit code
    /// (`code`, the command's own, unless the changes failed) and whether they landed.
    fn settle(
        ctx: &Context,
        args: &Args,
        set: &PolicySet,
        project: &Project,
        report: &mut Report,
        changes: Changes,
        code: Exit,
    ) -> (Exit, bool) {
        if changes.planned.is_empty() && !changes.refused {
            return (code, false);
        }
        if let Some(reason) = changes.discard {
            report.apply = Some(json!({ "applied": false, "reason": reason }));
            return (code, false);
        }
        if changes.refused {
            report.apply = Some(json!({
                "applied": false,
                "reason": "some changes cannot come back (see results.refused); nothing of this command's changes was applied",
            }));
            return (Exit::Unverified, false);
        }
        let (decisions, verdict, steps) =
            match changeset::plan_bytes(set, &project.root, &changes.planned, args.role.as_deref())
            {
                Ok(x) => x,
                Err(e) => {
                    report.error = Some(e.to_string());
                    return (Exit::Unverified, false);
                }
            };
        let confirmed = args.yes
            || (verdict == Effect::Ask
                && confirm("the command's changes need confirmation: apply them?"));
        let blocked = verdict == Effect::Deny || (verdict == Effect::Ask && !confirmed);
        if args.no_apply || blocked {
            report.apply = Some(json!({
                "verdict": verdict,
                "applied": false,
                "decisions": decisions,
            }));
            let code = match (args.no_apply, verdict) {
                (true, _) => code,
                (false, Effect::Deny) => Exit::Findings,
                (false, _) => Exit::Ask,
            };
            return (code, false);
        }
        match changeset::commit_steps(
            &project.root,
            &steps,
            args.lock_timeout,
            "contextos run (results)",
        ) {
            Ok(c) => {
                if ctx.format != Format::Json {
                    eprintln!(
                        "contextos run: applied {} change(s) in transaction {}",
                        c.files, c.txid
                    );
                }
                report.apply = Some(json!({
                    "verdict": verdict,
                    "applied": true,
                    "transaction": c,
                    "decisions": decisions,
                }));
                (code, true)
            }
            Err(e) => {
                report.apply = Some(json!({ "verdict": verdict, "applied": false }));
                report.error = Some(e.to_string());
                (Exit::Unverified, false)
            }
        }
    }

    /// A session change as the planner takes it.
    fn planned(c: &Change) -> Planned {
        match c {
            Change::Write {
                path,
                content,
                mode,
                expect_sha256,
                must_not_exist,
            } => Planned {
                op: Op::Write,
                path: path.clone(),
                content: Some(content.clone()),
                mode: Some(*mode),
                expect_sha256: expect_sha256.clone(),
                must_not_exist: *must_not_exist,
            },
            Change::Delete {
                path,
                expect_sha256,
            } => Planned {
                op: Op::Delete,
                path: path.clone(),
                content: None,
                mode: None,
                expect_sha256: expect_sha256.clone(),
                must_not_exist: false,
            },
        }
    }

    /// Host-unsafe: the command runs on the host, in a snapshot of the project, and hands
    /// results back through the output area as before sessions existed.
    fn on_host_unsafe(
        ctx: &Context,
        args: &Args,
        set: &PolicySet,
        project: &Project,
        mut report: Report,
        prof: Profile,
        readable: &mut dyn FnMut(&str) -> bool,
    ) -> Exit {
        let fail = |mut report: Report, msg: String| {
            report.error = Some(msg);
            report.emit(ctx, Exit::Unverified)
        };
        report.mode = "host-unsafe";
        report.auto_merge = "blocked";
        let run_dir = match RunDir::prepare(&project.root, None, &report.id, readable) {
            Ok(d) => d,
            Err(e) => return fail(report, format!("preparing the run directory: {e}")),
        };
        let env = host::scrubbed_env(
            std::env::vars(),
            &run_dir.workspace,
            &run_dir.output,
            &prof.env,
        );
        let stop = AtomicBool::new(false);
        let mut echo = echo(ctx);
        let outcome = match host::run_on_host(
            &args.argv,
            &run_dir.workspace,
            &env,
            prof.timeout,
            prof.output,
            &stop,
            &mut echo,
        ) {
            Ok(o) => o,
            Err(e) => {
                let line = contextos_engine::shell::quote(&args.argv);
                return fail(report, format!("cannot start `{line}`: {e}"));
            }
        };
        report.ran = true;
        let ok = outcome.exit_code == Some(0) && !outcome.timed_out && !outcome.interrupted;
        report.exit_code = outcome
            .exit_code
            .or(outcome.timed_out.then_some(124))
            .or(outcome.signal.map(|s| 128 + i64::from(s)));
        report.host = Some(outcome);
        report.profile = Some(prof.clone());
        let code =
            Exit::Status(u8::try_from(report.exit_code.unwrap_or(1).clamp(0, 255)).unwrap_or(1));
        let results = match run_dir.collect(prof.results) {
            Ok(r) => r,
            Err(e) => {
                return finish(
                    ctx,
                    &project.root,
                    report,
                    Exit::Unverified,
                    Some(e.to_string()),
                )
            }
        };
        let withheld = run_dir.withheld.clone();
        drop(run_dir);
        let planned: Vec<Planned> = results
            .changes
            .iter()
            .map(|c| Planned {
                op: Op::Write,
                path: c.path.clone(),
                content: Some(c.content.clone()),
                mode: Some(c.mode),
                expect_sha256: c.expect_sha256.clone(),
                must_not_exist: c.must_not_exist,
            })
            .collect();
        report.results = Some(json!({
            "changes": planned.iter().map(|p| json!({"op": "write", "path": p.path, "mode": p.mode})).collect::<Vec<_>>(),
            "refused": results.refused,
            "unchanged": results.unchanged,
            "withheld": withheld,
            "bytes": results.bytes,
        }));
        let changes = Changes {
            planned,
            refused: !results.refused.is_empty(),
            discard: (!ok).then_some("the command did not succeed; its results were discarded"),
        };
        let (code, _) = settle(ctx, args, set, project, &mut report, changes, code);
        finish(ctx, &project.root, report, code, None)
    }

    /// Records the run, prints the report, returns the exit code.
    fn finish(
        ctx: &Context,
        root: &Path,
        mut report: Report,
        code: Exit,
        error: Option<String>,
    ) -> Exit {
        if error.is_some() {
            report.error = error;
        }
        let code = if report.error.is_some() {
            Exit::Unverified
        } else {
            code
        };
        if let Err(e) = record(root, &report) {
            report
                .warnings
                .push(format!("the run could not be recorded: {e}"));
        }
        if ctx.format != Format::Json {
            summary(&report);
        }
        report.emit(ctx, code)
    }

    fn summary(r: &Report) {
        let how = match (&r.sandbox_exec, &r.host, &r.session) {
            (Some(o), _, Some(s)) => format!(
                "in {} ({}, {} session {}{})",
                o.container,
                r.image.as_ref().map_or("", |i| i.id.as_str()),
                s.mode,
                s.id,
                if s.fresh { ", new" } else { "" }
            ),
            (_, Some(_), _) => "on the HOST (host-unsafe; auto-merge blocked)".to_string(),
            _ => String::new(),
        };
        let (end, notable) = match (&r.sandbox_exec, &r.host) {
            (Some(o), _) if o.timed_out => (
                "timed out; the session's container was killed".to_string(),
                true,
            ),
            (Some(o), _) if o.interrupted => (
                "interrupted; the session's container was killed".to_string(),
                true,
            ),
            (_, Some(h)) if h.timed_out => {
                ("timed out; the process group was killed".to_string(), true)
            }
            _ => (format!("exited {}", r.exit_code.unwrap_or(-1)), false),
        };
        // A routed command (a named session) stays quiet unless something happened that
        // the agent must know about; a one-shot run always says how it ended.
        let quiet = r.session.as_ref().is_some_and(|s| !s.one_shot);
        if !quiet || notable || r.apply.is_some() {
            eprintln!("contextos run: {end} {how}");
        }
        if let Some(a) = &r.apply {
            if a["applied"] != true {
                let n = r
                    .results
                    .as_ref()
                    .and_then(|x| x["changes"].as_array())
                    .map_or(0, Vec::len);
                let why = a["reason"].as_str().map_or_else(
                    || {
                        format!(
                            "the results' verdict is {}",
                            a["verdict"].as_str().unwrap_or("?")
                        )
                    },
                    str::to_string,
                );
                eprintln!("contextos run: {n} change(s) not applied: {why}");
            }
        }
        if let Some(refused) = r
            .results
            .as_ref()
            .and_then(|x| x["refused"].as_array())
            .filter(|a| !a.is_empty())
        {
            for x in refused {
                eprintln!(
                    "contextos run: refused {}: {}",
                    x["path"].as_str().unwrap_or("?"),
                    x["reason"].as_str().unwrap_or("?")
                );
            }
        }
        for (name, cap) in [
            ("stdout", r.sandbox_exec.as_ref().map(|o| &o.stdout)),
            ("stderr", r.sandbox_exec.as_ref().map(|o| &o.stderr)),
        ] {
            if let Some(c) = cap.filter(|c| c.truncated) {
                eprintln!(
                    "contextos run: {name} truncated to {} of {} bytes (sha256 {})",
                    c.kept, c.bytes, c.sha256
                );
            }
        }
    }

    /// `.contextos/state/runs/<id>.json`: what ran, how, and which paths it changed.
    fn record(root: &Path, report: &Report) -> Result<(), CliError> {
        let applied: Vec<String> = report
            .apply
            .as_ref()
            .filter(|a| a["applied"] == true)
            .and(report.results.as_ref())
            .and_then(|r| r["changes"].as_array())
            .map(|c| {
                c.iter()
                    .filter_map(|e| e["path"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let rec = json!({
            "schemaVersion": output::SCHEMA_VERSION,
            "id": report.id,
            "argv": report.argv,
            "mode": report.mode,
            "ran": report.ran,
            "exitCode": report.exit_code,
            "image": report.image,
            "autoMerge": report.auto_merge,
            "session": report.session.as_ref().map(|s| &s.id),
            "paths": applied,
        });
        let text = serde_json::to_string_pretty(&rec)
            .map_err(|e| CliError::Internal(format!("the run record cannot be serialised: {e}")))?;
        let safe = SafeRoot::open(root)?;
        safe.write_atomic(
            &format!("{RUNS_DIR}/{}.json", report.id),
            text.as_bytes(),
            0o644,
        )?;
        Ok(())
    }
}

//! `contextos run [--profile P] [--image IMAGE] [--yes] -- CMD…`: the execution boundary.
//!
//! 1. The exec verdict decides first: deny ⇒ nothing runs (exit 1); ask ⇒ only after an
//!    interactive confirmation or `--yes` (else exit 3); allow ⇒ the command runs.
//! 2. The profile is the stdlib floor with the rules' `with sandbox { … }` obligations
//!    laid over it, tightening only.
//! 3. The command runs in a hardened container (or, when the *user* chose host-unsafe
//!    mode, on the host with a scrubbed environment). No engine ⇒ exit 2, never a
//!    fallback to the host.
//! 4. Files the command wrote to its output area come back as a changeset applied
//!    through `contextos apply`'s path: path verdicts, the lock, one journaled
//!    transaction. Nothing else reaches the project.
//!
//! Exit codes: 1 deny, 2 could not run or could not bring results back, 3 ask without
//! confirmation; when the command ran, its own exit status (124 after a timeout, 130
//! after Ctrl-C), as `timeout(1)` and `docker run` do. `--format json` says which.

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A named profile laid over the floor (`default`, `strict`); it can only tighten.
    #[arg(long)]
    profile: Option<String>,
    /// The image, when no rule's `with sandbox { image: … }` names one.
    #[arg(long)]
    image: Option<String>,
    /// Confirm an `ask` verdict (for the command and for its results) without a prompt.
    #[arg(long)]
    yes: bool,
    /// Tighten the timeout (e.g. `30s`, `5m`); never beyond the profile's.
    #[arg(long)]
    timeout: Option<String>,
    /// Run on the host instead of the sandbox (asks for confirmation unless `--yes`).
    /// Results are marked `auto_merge: blocked`.
    #[arg(long)]
    host_unsafe: bool,
    /// Report the results, but do not apply them.
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
    use crate::project::Project;
    use crate::support::changeset::{self, Entry, Op};
    use crate::support::run_records::RUNS_DIR;
    use crate::support::Format;
    use crate::support::{CliError, Context, Exit};
    use contextos_engine::decision::ShellDecision;
    use contextos_engine::effects::safe_fs::SafeRoot;
    use contextos_engine::effects::sandbox::host::{self, HostOutcome};
    use contextos_engine::effects::sandbox::profile::{self, Profile};
    use contextos_engine::effects::sandbox::runner::{
        Outcome, ResolvedImage, RunOptions, Runner, Stream,
    };
    use contextos_engine::effects::sandbox::spec::RunPlan;
    use contextos_engine::effects::sandbox::workspace::{Results, RunDir};
    use contextos_engine::{Effect, EvalOptions, PathOp, Request, ShellOptions};
    use contextos_engine::{PolicySet, ShellBase};
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};
    use std::io::{IsTerminal, Write};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::AtomicBool;

    /// The user-scope configuration (`$XDG_CONFIG_HOME/contextos/config.toml`, else
    /// `~/.config/contextos/config.toml`): the only place host-unsafe mode can be switched
    /// on without a flag. A repository's `contextos.toml` never can.
    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct UserConfig {
        #[serde(default)]
        run: UserRun,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct UserRun {
        #[serde(default)]
        host_unsafe: bool,
    }

    fn user_config_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("contextos/config.toml"))
    }

    /// Reads the user config. A file inside the project is refused: that would let the
    /// repository speak for the user.
    fn user_config(project_root: &Path) -> Result<(Option<PathBuf>, UserConfig), CliError> {
        let Some(path) = user_config_path() else {
            return Ok((None, UserConfig::default()));
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((None, UserConfig::default()))
            }
            Err(e) => return Err(CliError::io(format!("cannot read {}", path.display()), e)),
        };
        let inside = match (
            std::fs::canonicalize(&path),
            std::fs::canonicalize(project_root),
        ) {
            (Ok(c), Ok(r)) => c.starts_with(&r),
            _ => true,
        };
        if inside {
            return Err(CliError::Input(format!(
                "{} lies inside the project: the user configuration must live outside the \
                 repository (a repository cannot choose host-unsafe mode)",
                path.display()
            )));
        }
        let cfg = toml::from_str(&text).map_err(|e| {
            CliError::Input(format!(
                "{}: invalid configuration: {}",
                path.display(),
                e.message()
            ))
        })?;
        Ok((Some(path), cfg))
    }

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
        sandbox: Option<Outcome>,
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
                Format::Text | Format::Github | Format::Sarif => {
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
        let (_out, set) = ctx.load()?;
        let project = ctx.project()?;
        Ok(execute(ctx, args, &set, &project))
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

        // 1. The exec verdict.
        // The command runs as argv (no shell in between), so it is decided as those
        // words; `line` is only how messages show it.
        let line = contextos_engine::shell::quote(&args.argv);
        // Inside the sandbox, `/output/x` becomes the project's `x` and `/workspace/x` is
        // the project's `x` as the command saw it: a write to either is judged as a write
        // of `x`.
        let base = ShellBase {
            roots: vec![
                contextos_engine::effects::sandbox::workspace::OUTPUT_MOUNT.to_string(),
                contextos_engine::effects::sandbox::workspace::WORKSPACE_MOUNT.to_string(),
                project.root.display().to_string(),
            ],
            cwd: String::new(),
        };
        let decision = set.decide_argv(
            &args.argv,
            args.role.as_deref(),
            ShellOptions {
                strict: false,
                explain: false,
                base: Some(&base),
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
            Effect::Ask if !args.yes && !confirm(&format!("ask   {line}: run it?")) => {
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
        if let Some(t) = &args.timeout {
            match profile::parse_duration(t) {
                Ok(d) => prof.tighten_timeout(d),
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
        let (cfg_path, user) = match user_config(&project.root) {
            Ok(c) => c,
            Err(e) => return fail(report, e.to_string()),
        };
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

        // The snapshot the command sees: files whose read verdict is not allow stay out.
        let mut withheld_by_policy = |rel: &str| {
            set.decide(
                &Request::path(PathOp::Read, rel.to_string()).with_role(args.role.clone()),
                EvalOptions::default(),
            )
            .verdict
                == Effect::Allow
        };
        let mut echo = |stream: Stream, bytes: &[u8]| {
            if ctx.format == Format::Json {
                return;
            }
            let _ = match stream {
                Stream::Stdout => std::io::stdout().write_all(bytes),
                Stream::Stderr => std::io::stderr().write_all(bytes),
            };
        };

        let run_dir;
        let ok: bool;
        if host_unsafe {
            report.mode = "host-unsafe";
            report.auto_merge = "blocked";
            run_dir = match RunDir::prepare(&project.root, None, &id, &mut withheld_by_policy) {
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
            let mut echo_send = |s: Stream, b: &[u8]| echo(s, b);
            let outcome = match host::run_on_host(
                &args.argv,
                &run_dir.workspace,
                &env,
                prof.timeout,
                prof.output,
                &stop,
                &mut echo_send,
            ) {
                Ok(o) => o,
                Err(e) => return fail(report, format!("cannot start `{}`: {e}", line)),
            };
            report.ran = true;
            ok = outcome.exit_code == Some(0) && !outcome.timed_out && !outcome.interrupted;
            report.exit_code = outcome
                .exit_code
                .or(outcome.timed_out.then_some(124))
                .or(outcome.signal.map(|s| 128 + i64::from(s)));
            report.host = Some(outcome);
        } else {
            let runner = match Runner::connect() {
                Ok(r) => r,
                Err(e) => return fail(report, e.message),
            };
            // No run lives longer than the floor's timeout; a minute's grace covers the kill
            // and removal of one that just timed out.
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
            run_dir = match RunDir::prepare(&project.root, None, &id, &mut withheld_by_policy) {
                Ok(d) => d,
                Err(e) => return fail(report, format!("preparing the run directory: {e}")),
            };
            let plan = RunPlan {
                id: id.clone(),
                image_id: image.id.clone(),
                argv: args.argv.clone(),
                workspace: run_dir.workspace.display().to_string(),
                output: run_dir.output.display().to_string(),
            };
            report.image = Some(image);
            let outcome = match runner.run(
                &prof,
                &plan,
                RunOptions {
                    handle_signals: true,
                },
                &mut echo,
            ) {
                Ok(o) => o,
                Err(e) => {
                    report.profile = Some(prof);
                    return fail(report, e.message);
                }
            };
            report.ran = true;
            ok = outcome.exit_code == Some(0) && !outcome.timed_out && !outcome.interrupted;
            report.exit_code = outcome
                .exit_code
                .or(outcome.timed_out.then_some(124))
                .or(outcome.interrupted.then_some(130));
            report.sandbox = Some(outcome);
        }
        report.profile = Some(prof.clone());

        // 4. Results, through the journal only.
        let mut code =
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
        let (entries, results_json) = changeset(&results, &withheld);
        report.results = Some(results_json);
        if entries.is_empty() {
            return finish(ctx, &project.root, report, code, None);
        }
        if !ok {
            report.apply = Some(json!({
                "applied": false,
                "reason": "the command did not succeed; its results were discarded",
            }));
            return finish(ctx, &project.root, report, code, None);
        }
        if !results.refused.is_empty() {
            report.apply = Some(json!({
                "applied": false,
                "reason": "some results cannot come back (see results.refused); nothing was applied",
            }));
            return finish(ctx, &project.root, report, Exit::Unverified, None);
        }
        let (decisions, verdict, steps) = match changeset::plan(set, &entries, args.role.as_deref())
        {
            Ok(x) => x,
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
        let confirmed = args.yes
            || (verdict == Effect::Ask && confirm("the results need confirmation: apply them?"));
        let blocked = verdict == Effect::Deny || (verdict == Effect::Ask && !confirmed);
        if args.no_apply || blocked {
            report.apply = Some(json!({
                "verdict": verdict,
                "applied": false,
                "decisions": decisions,
            }));
            if !args.no_apply {
                code = if verdict == Effect::Deny {
                    Exit::Findings
                } else {
                    Exit::Ask
                };
            }
            return finish(ctx, &project.root, report, code, None);
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
                        "applied {} result file(s) in transaction {}",
                        c.files, c.txid
                    );
                }
                report.apply = Some(json!({
                    "verdict": verdict,
                    "applied": true,
                    "transaction": c,
                    "decisions": decisions,
                }));
                finish(ctx, &project.root, report, code, None)
            }
            Err(e) => {
                report.apply = Some(json!({ "verdict": verdict, "applied": false }));
                finish(
                    ctx,
                    &project.root,
                    report,
                    Exit::Unverified,
                    Some(e.to_string()),
                )
            }
        }
    }

    /// The results as `contextos apply` entries, and their report.
    fn changeset(results: &Results, withheld: &[String]) -> (Vec<Entry>, Value) {
        let entries: Vec<Entry> = results
            .changes
            .iter()
            .map(|c| Entry {
                op: Op::Write,
                path: c.path.clone(),
                content: Some(String::from_utf8_lossy(&c.content).into_owned()),
                mode: Some(c.mode),
                expect_sha256: c.expect_sha256.clone(),
                must_not_exist: c.must_not_exist,
            })
            .collect();
        let report = json!({
            "changeset": { "changes": &entries },
            "refused": results.refused,
            "unchanged": results.unchanged,
            "withheld": withheld,
            "bytes": results.bytes,
        });
        (entries, report)
    }

    /// Records the run, prints the report, returns the exit code.
    fn finish(
        ctx: &Context,
        root: &Path,
        mut report: Report,
        code: Exit,
        error: Option<String>,
    ) -> Exit {
        let code = if error.is_some() {
            Exit::Unverified
        } else {
            code
        };
        report.error = error;
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
        let how = match (&r.sandbox, &r.host) {
            (Some(o), _) => format!(
                "in {} ({})",
                o.container,
                r.image.as_ref().map_or("", |i| i.id.as_str())
            ),
            (_, Some(_)) => "on the HOST (host-unsafe; auto-merge blocked)".to_string(),
            _ => String::new(),
        };
        let end = match (&r.sandbox, &r.host) {
            (Some(o), _) if o.timed_out => "timed out; the container was killed and removed".into(),
            (Some(o), _) if o.interrupted => {
                "interrupted; the container was killed and removed".into()
            }
            (Some(o), _) if o.oom_killed => format!(
                "killed by the memory limit (exit {})",
                o.exit_code.unwrap_or(137)
            ),
            (_, Some(h)) if h.timed_out => "timed out; the process group was killed".into(),
            _ => format!("exited {}", r.exit_code.unwrap_or(-1)),
        };
        eprintln!("contextos run: {end} {how}");
        if let Some(a) = &r.apply {
            if a["applied"] != true {
                let n = r
                    .results
                    .as_ref()
                    .and_then(|x| x["changeset"]["changes"].as_array())
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
                eprintln!("contextos run: {n} result file(s) not applied: {why}");
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
            ("stdout", r.sandbox.as_ref().map(|o| &o.stdout)),
            ("stderr", r.sandbox.as_ref().map(|o| &o.stderr)),
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
            .and_then(|r| r["changeset"]["changes"].as_array())
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

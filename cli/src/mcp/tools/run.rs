//! `run {command, timeout?}`: a shell line decided with the exec verdict (as the hooks
//! decide a Bash call), then run in the agent's sandbox session by the sibling binary
//! `contextos-full run --session ID --approved --format json -- /bin/sh -c LINE`, whose
//! results come back through the journal. The command's own stdout/stderr/exit code are
//! the first content item; what ContextOS reports about the run (mode, changeset) is the
//! structured content, never mixed into the command's output.

use super::super::gate;
use super::super::limits::{Failure, ToolError, MAX_RUN_OUTPUT_BYTES};
use super::super::state::State;
use contextos_engine::emit::Action;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{Peer, RoleServer};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

pub const NAME: &str = "run";
pub const DESCRIPTION: &str = "Run a shell command line (/bin/sh -c) in this agent's ContextOS sandbox session: a hardened container over the project, whose file changes come back through the policies and the journal. The ContextOS policies decide the command first (a denied command does not run; one that needs confirmation is asked). Optional `timeout` in seconds. Returns the command's stdout, stderr and exit code.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The shell command line.
    pub command: String,
    /// Seconds before the command is stopped (default: the sandbox profile's).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// Grace past the command's own timeout for the runner to stop the container and bring
/// results back before this server gives up on it.
const RUNNER_GRACE: Duration = Duration::from_secs(60);
/// Without a `timeout` argument the runner's profile bounds the command; this bounds the
/// runner itself.
const DEFAULT_WALL: Duration = Duration::from_secs(3600);

pub async fn call(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    args: Args,
) -> Result<CallToolResult, Failure> {
    if args.command.trim().is_empty() {
        return Err(ToolError::new("`command` is empty").into());
    }
    let actions = [Action::Shell {
        line: args.command.clone(),
    }];
    let passed = gate::decide(state, peer, NAME, &actions).await?;
    let result = execute(state, &args).await;
    passed.finish(state, NAME, &actions, result)
}

/// The runner's arguments — the one place they are spelled, so the sandbox-session
/// interface of `contextos run` can change without touching the rest of the tool.
/// `--approved` because the exec verdict was already decided (and any ask confirmed)
/// here; the asks of the command's changes are not confirmed by it, so they are refused
/// (and reported) rather than applied unseen.
pub fn runner_argv(state: &State, command: &str, timeout: Option<u64>) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        "--project".into(),
        state.project.root.clone().into_os_string(),
        "--format".into(),
        "json".into(),
        "run".into(),
        "--session".into(),
        state.session.clone().into(),
        "--approved".into(),
    ];
    if let Some(role) = &state.role {
        argv.push("--role".into());
        argv.push(role.into());
    }
    if let Some(t) = timeout {
        argv.push("--timeout".into());
        argv.push(format!("{t}s").into());
    }
    argv.extend(["--".into(), "/bin/sh".into(), "-c".into(), command.into()]);
    argv
}

async fn execute(state: &Arc<State>, args: &Args) -> Result<CallToolResult, ToolError> {
    let argv = runner_argv(state, &args.command, args.timeout);
    let wall = args
        .timeout
        .map_or(DEFAULT_WALL, |t| Duration::from_secs(t) + RUNNER_GRACE);
    let child = tokio::process::Command::new(&state.runner)
        .args(&argv)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = match tokio::time::timeout(wall, child).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            return Err(ToolError::new(format!(
                "cannot start the sandbox runner {}: {e}",
                state.runner.display()
            )))
        }
        Err(_) => {
            return Err(ToolError::new(format!(
                "the sandbox runner did not finish within {} s and was stopped",
                wall.as_secs()
            )))
        }
    };
    let report: Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        ToolError::new(format!(
            "the sandbox runner did not report (exit {}): {}",
            out.status.code().unwrap_or(-1),
            cut(&String::from_utf8_lossy(&out.stderr))
        ))
    })?;
    if let Some(e) = report.get("error").and_then(Value::as_str) {
        return Err(ToolError::new(format!("the command could not run: {e}")));
    }
    Ok(result_of(&report))
}

/// The command's own output as the first content item, the runner's report as the
/// structured content.
fn result_of(report: &Value) -> CallToolResult {
    let outcome = report
        .get("sandbox")
        .or_else(|| report.get("host"))
        .unwrap_or(&Value::Null);
    let stream = |name: &str| {
        outcome
            .get(name)
            .and_then(|s| s.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let exit = report
        .get("exitCode")
        .or_else(|| outcome.get("exitCode"))
        .and_then(Value::as_i64);
    let ran = report.get("ran").and_then(Value::as_bool).unwrap_or(false);
    let text = format!(
        "exit code: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        exit.map_or_else(|| "none (not run or killed)".into(), |c| c.to_string()),
        cut(&stream("stdout")),
        cut(&stream("stderr")),
    );
    let summary = json!({
        "ran": ran,
        "exitCode": exit,
        "mode": report.get("mode"),
        "apply": report.get("apply"),
        "results": report.get("results"),
        "warnings": report.get("warnings"),
    });
    let mut r = if ran && exit == Some(0) {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(summary);
    r
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_RUN_OUTPUT_BYTES {
        return s.to_string();
    }
    let mut end = MAX_RUN_OUTPUT_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… {} more bytes cut by ContextOS]",
        s.get(..end).unwrap_or_default(),
        s.len() - end
    )
}

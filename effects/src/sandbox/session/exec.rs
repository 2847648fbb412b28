//! One command in a session container through the Engine API's exec: create_exec with
//! the sandbox user, working directory and fixed environment, start_exec attached with
//! the output streamed through [`Capture`], inspect_exec for the exit code.
//!
//! A command past its timeout (or interrupted, when signals are handled) cannot be
//! killed through exec — the API has no kill for an exec — so the container itself is
//! killed: the session is reset, and the next command starts it again on the same
//! scratch area.

use crate::sandbox::capture::{Capture, Captured, Stream};
use crate::sandbox::runner::{signal, SandboxError};
use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use bollard::query_parameters::KillContainerOptionsBuilder;
use bollard::Docker;
use futures_util::StreamExt as _;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Options of one command in a session.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Tightens the profile's timeout.
    pub timeout: Option<Duration>,
    /// Treat Ctrl-C and SIGTERM as "kill the container", then report.
    pub handle_signals: bool,
    /// Working directory relative to `/workspace` (`/`-separated, no `..`); the
    /// workspace itself when `None`.
    pub workdir: Option<String>,
}

/// How one command in a session ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecOutcome {
    pub container: String,
    /// `None` when the command was killed before it exited on its own.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub interrupted: bool,
    /// The container was killed (timeout or interrupt): the session was reset.
    pub reset: bool,
    /// The container was (re)started before the command, to show host changes or
    /// after a reset.
    pub restarted: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration_ms: u64,
}

pub(crate) struct Request<'a> {
    pub container: &'a str,
    pub user: (u32, u32),
    pub workdir: String,
    pub env: Vec<String>,
    pub argv: &'a [String],
    pub cap: u64,
    pub timeout: Duration,
    pub handle_signals: bool,
}

enum End {
    Exited,
    TimedOut,
    Interrupted,
}

fn api(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError {
        code: "sandbox.api",
        message: format!("{what}: {e}"),
    }
}

pub(crate) async fn run(
    docker: &Docker,
    req: Request<'_>,
    on_output: &mut dyn FnMut(Stream, &[u8]),
) -> Result<ExecOutcome, SandboxError> {
    let started = Instant::now();
    let name = req.container;
    let created = docker
        .create_exec(
            name,
            ExecConfig {
                attach_stdin: Some(false),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                tty: Some(false),
                env: Some(req.env.clone()),
                cmd: Some(req.argv.to_vec()),
                privileged: Some(false),
                user: Some(format!("{}:{}", req.user.0, req.user.1)),
                working_dir: Some(req.workdir.clone()),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| api(&format!("creating an exec in {name}"), e))?;
    let exec_id = created.id;
    let mut stdout = Capture::new(req.cap);
    let mut stderr = Capture::new(req.cap);
    let body = async {
        let started = docker
            .start_exec(
                &exec_id,
                Some(StartExecOptions {
                    detach: false,
                    tty: false,
                    output_capacity: None,
                }),
            )
            .await
            .map_err(|e| api(&format!("starting the exec in {name}"), e))?;
        let StartExecResults::Attached { mut output, .. } = started else {
            return Err(api(name, "the engine detached the exec"));
        };
        while let Some(chunk) = output.next().await {
            match chunk {
                Ok(bollard::container::LogOutput::StdOut { message }) => {
                    on_output(Stream::Stdout, stdout.push(&message));
                }
                Ok(bollard::container::LogOutput::StdErr { message }) => {
                    on_output(Stream::Stderr, stderr.push(&message));
                }
                Ok(_) => {}
                Err(e) => return Err(api(&format!("reading the output of {name}"), e)),
            }
        }
        Ok::<(), SandboxError>(())
    };
    let end = tokio::select! {
        r = body => r.map(|()| End::Exited),
        () = tokio::time::sleep(req.timeout) => Ok(End::TimedOut),
        () = signal(), if req.handle_signals => Ok(End::Interrupted),
    };
    let end = match end {
        Ok(e) => e,
        Err(e) => {
            kill(docker, name).await;
            return Err(e);
        }
    };
    let (exit_code, timed_out, interrupted) = match end {
        End::Exited => {
            // The stream ends when the process closes its output; the exit code is set
            // a moment later, so poll briefly while the engine still says running.
            let mut code = None;
            for _ in 0..50 {
                let i = docker
                    .inspect_exec(&exec_id)
                    .await
                    .map_err(|e| api(&format!("inspecting the exec in {name}"), e))?;
                if i.running != Some(true) {
                    code = i.exit_code;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            (code, false, false)
        }
        End::TimedOut => {
            kill(docker, name).await;
            (None, true, false)
        }
        End::Interrupted => {
            kill(docker, name).await;
            (None, false, true)
        }
    };
    Ok(ExecOutcome {
        container: name.to_string(),
        exit_code,
        timed_out,
        interrupted,
        reset: timed_out || interrupted,
        restarted: false,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

async fn kill(docker: &Docker, name: &str) {
    let _ = docker
        .kill_container(
            name,
            Some(KillContainerOptionsBuilder::new().signal("SIGKILL").build()),
        )
        .await;
}

/// `/workspace` or a subdirectory of it; anything that could leave it is refused.
pub fn workdir(base: &str, sub: Option<&str>) -> Result<String, SandboxError> {
    let Some(sub) = sub.map(|s| s.trim_matches('/')).filter(|s| !s.is_empty()) else {
        return Ok(base.to_string());
    };
    let ok = sub
        .split('/')
        .all(|seg| !seg.is_empty() && seg != "." && seg != ".." && !seg.contains('\0'));
    if !ok {
        return Err(SandboxError {
            code: "sandbox.session-workdir",
            message: format!("working directory {sub:?} must be a plain path under the project"),
        });
    }
    Ok(format!("{base}/{sub}"))
}

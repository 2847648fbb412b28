//! Host-unsafe execution: the command runs on the host, chosen by the *user* (never by
//! a repository), with a scrubbed environment, in its own process group so a timeout or
//! Ctrl-C ends the whole tree. Its results still come back only through the output
//! area and the journal, and every result is marked `auto_merge: blocked`.

use super::capture::{Capture, Captured, Stream};
use serde::Serialize;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Variables passed through from the host, if set (after the name filter below).
const PASS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TZ",
];

/// Name fragments that mark a credential, checked case-insensitively.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "AUTH",
    "CREDENTIAL",
    "COOKIE",
    "SESSION",
];

/// Prefixes of variables that change what a program loads or which repository git
/// touches.
const UNSAFE_PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_", "SSH_", "GPG_", "DOCKER_"];

/// Whether a host variable may reach a host-unsafe command.
pub fn passes(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    PASS.contains(&upper.as_str())
        && !SECRET_WORDS.iter().any(|w| upper.contains(w))
        && !UNSAFE_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// The environment of a host-unsafe command: the allow-listed host variables, then the
/// fixed ones. Nothing else from the host.
pub fn scrubbed_env(
    host: impl IntoIterator<Item = (String, String)>,
    workspace: &Path,
    output: &Path,
    extra: &[String],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = host.into_iter().filter(|(k, _)| passes(k)).collect();
    env.push(("CI".into(), "true".into()));
    env.push(("CONTEXTOS_HOST_UNSAFE".into(), "1".into()));
    env.push((
        "CONTEXTOS_WORKSPACE".into(),
        workspace.display().to_string(),
    ));
    env.push(("CONTEXTOS_OUTPUT".into(), output.display().to_string()));
    for e in extra {
        if let Some((k, v)) = e.split_once('=') {
            env.push((k.to_string(), v.to_string()));
        }
    }
    env.sort();
    env.dedup_by(|a, b| a.0 == b.0);
    env
}

/// How a host-unsafe run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostOutcome {
    pub exit_code: Option<i64>,
    /// Signal that ended the command, if any.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub interrupted: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration_ms: u64,
}

/// Runs `argv` on the host in `cwd` with exactly `env`, killing its process group on
/// timeout or when `interrupt` becomes true.
pub fn run_on_host(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
    output_cap: u64,
    interrupt: &AtomicBool,
    on_output: &mut (dyn FnMut(Stream, &[u8]) + Send),
) -> std::io::Result<HostOutcome> {
    let Some((program, args)) = argv.split_first() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the command is empty",
        ));
    };
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: the whole tree can be signalled at once.
        .process_group(0)
        .spawn()?;
    let pgid = child.id();
    let out = child.stdout.take();
    let err = child.stderr.take();
    let (tx, rx) = std::sync::mpsc::channel::<(Stream, Vec<u8>)>();
    let mut readers = Vec::new();
    for (stream, pipe) in [
        (
            Stream::Stdout,
            out.map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            Stream::Stderr,
            err.map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ] {
        let Some(mut pipe) = pipe else { continue };
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx
                            .send((stream, buf.get(..n).unwrap_or(&[]).to_vec()))
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
        }));
    }
    drop(tx);
    let mut stdout = Capture::new(output_cap);
    let mut stderr = Capture::new(output_cap);
    let mut group_killed = false;
    let mut timed_out = false;
    let mut interrupted = false;
    let mut status = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok((Stream::Stdout, b)) => {
                let kept = stdout.push(&b);
                on_output(Stream::Stdout, kept);
            }
            Ok((Stream::Stderr, b)) => {
                let kept = stderr.push(&b);
                on_output(Stream::Stderr, kept);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                if status.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if status.is_none() {
            status = child.try_wait()?;
        }
        if status.is_none() {
            let over = started.elapsed() >= timeout;
            let stop = interrupt.load(Ordering::SeqCst);
            if over || stop {
                timed_out = over && !stop;
                interrupted = stop;
                kill_group(pgid);
                status = Some(child.wait()?);
            }
        } else if !group_killed {
            group_killed = true;
            // Exited: a background grandchild may still hold the pipes open; it belongs
            // to the same group and goes with it.
            kill_group(pgid);
        }
    }
    for r in readers {
        let _ = r.join();
    }
    let status = status.unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    Ok(HostOutcome {
        exit_code: status.code().map(i64::from),
        signal: status.signal(),
        timed_out,
        interrupted,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

fn kill_group(pgid: u32) {
    let pid = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    reason = "tests fail loudly at the first unexpected value"
)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_loader_variables_never_pass() {
        for name in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "GIT_DIR",
            "GIT_CONFIG_GLOBAL",
            "SSH_AUTH_SOCK",
            "DOCKER_HOST",
            "NPM_TOKEN",
            "OPENAI_API_KEY",
            "DYLD_INSERT_LIBRARIES",
            "RANDOM_VAR",
        ] {
            assert!(!passes(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "TERM"] {
            assert!(passes(name), "{name}");
        }
    }

    #[test]
    fn the_environment_is_the_allow_list_plus_fixed_values() {
        let host = vec![
            ("PATH".to_string(), "/usr/bin".to_string()),
            ("GITHUB_TOKEN".to_string(), "ghp_x".to_string()),
            ("LD_PRELOAD".to_string(), "/evil.so".to_string()),
            ("GIT_DIR".to_string(), "/x".to_string()),
        ];
        let env = scrubbed_env(host, Path::new("/w"), Path::new("/o"), &["A=1".into()]);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "A",
                "CI",
                "CONTEXTOS_HOST_UNSAFE",
                "CONTEXTOS_OUTPUT",
                "CONTEXTOS_WORKSPACE",
                "PATH"
            ]
        );
    }

    #[test]
    fn a_host_run_reports_its_exit_code_and_a_timeout_ends_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let env = scrubbed_env(std::env::vars(), dir.path(), dir.path(), &[]);
        let stop = AtomicBool::new(false);
        let r = run_on_host(
            &[
                "sh".into(),
                "-c".into(),
                "echo out; echo err >&2; exit 7".into(),
            ],
            dir.path(),
            &env,
            Duration::from_secs(60),
            1024,
            &stop,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(r.exit_code, Some(7));
        assert_eq!(r.stdout.text, "out\n");
        assert_eq!(r.stderr.text, "err\n");
        assert!(!r.timed_out);
        let r = run_on_host(
            &[
                "sh".into(),
                "-c".into(),
                "sleep 30 & sleep 30; echo never".into(),
            ],
            dir.path(),
            &env,
            Duration::from_millis(200),
            1024,
            &stop,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(r.timed_out);
        assert_eq!(r.exit_code, None);
        assert_eq!(r.signal, Some(9));
        assert!(!r.stdout.text.contains("never"));
    }
}

//! The network requests of a command line: every destination the shell model finds
//! (`curl URL`, `git push URL`, `ssh HOST`, `dig NAME`) is decided as a `net` request of
//! the line, carrying what the line reads. A file the policy guards for reading (any
//! verdict but allow) that the line reads is secret material the request may carry
//! (`file:PATH`): the policy itself says which files are secret, so deny-secret-egress
//! needs no list of its own.

use crate::decision::Decision;
use crate::eval::{self, EvalOptions};
use crate::policy::PolicySet;
use crate::request::{ExecRequest, NetOp, NetRequest, PathOp, Request, RequestKind, Session};
use contextos_grammar::ast::Effect;

/// One destination a command reaches, with what the command tells about how.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    pub(crate) target: String,
    pub(crate) op: NetOp,
    pub(crate) tool: String,
    pub(crate) method: String,
}

impl Reach {
    /// The destination `dest` of the command `req`.
    pub(crate) fn of(req: &ExecRequest, dest: &str) -> Reach {
        let tool = req
            .argv
            .first()
            .map(|p| contextos_shell::basename(p).to_string())
            .unwrap_or_default();
        let scheme = dest
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default();
        let web = matches!(scheme.as_str(), "http" | "https" | "ftp" | "ftps");
        let op = if web { NetOp::Fetch } else { NetOp::Connect };
        Reach {
            target: dest.to_string(),
            op,
            method: method(&tool, req, web),
            tool,
        }
    }
}

/// The HTTP method a web client uses, or the verb of another tool (`git push`).
fn method(tool: &str, req: &ExecRequest, web: bool) -> String {
    let value = |names: &[&str]| {
        req.options.iter().find_map(|o| {
            names
                .iter()
                .find_map(|n| o.strip_prefix(n).and_then(|v| v.strip_prefix('=')))
        })
    };
    match tool {
        "git" => return req.subcommand.first().cloned().unwrap_or_default(),
        "scp" | "rsync" | "sftp" => return "copy".into(),
        "ssh" => return "shell".into(),
        _ => {}
    }
    if let Some(m) = value(&["--request", "-X", "--method"]) {
        return m.to_ascii_uppercase();
    }
    let sends_body = req.options.iter().any(|o| {
        [
            "--data",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "--data-ascii",
            "--form",
            "--form-string",
            "--json",
            "-d",
            "-F",
            "--post-data",
            "--post-file",
            "--body-data",
            "--body-file",
        ]
        .iter()
        .any(|n| o == n || o.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
    });
    let uploads = req.options.iter().any(|o| {
        ["--upload-file", "-T"]
            .iter()
            .any(|n| o == n || o.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
    });
    if uploads {
        "PUT".into()
    } else if sends_body {
        "POST".into()
    } else if web {
        "GET".into()
    } else {
        String::new()
    }
}

/// Decides every destination of the line as a `net` request.
pub(crate) fn decide_reaches(
    set: &PolicySet,
    reaches: &[Reach],
    line_reads: &[String],
    carries: &[String],
    role: Option<&str>,
    session: Option<&Session>,
    opts: EvalOptions,
) -> Vec<Decision> {
    let mut sends: Vec<String> = Vec::new();
    for r in line_reads {
        if !sends.contains(r) {
            sends.push(r.clone());
        }
    }
    let mut carried: Vec<String> = carries.to_vec();
    for f in &sends {
        let read = Request::path(PathOp::Read, f.clone())
            .with_role(role.map(str::to_string))
            .with_session(session.cloned());
        if eval::decide(set, &read, opts).verdict != Effect::Allow {
            let tag = format!("file:{f}");
            if !carried.contains(&tag) {
                carried.push(tag);
            }
        }
    }
    reaches
        .iter()
        .map(|r| {
            let req = NetRequest {
                op: r.op,
                target: r.target.clone(),
                tool: r.tool.clone(),
                method: r.method.clone(),
                carries: carried.clone(),
                sends: sends.clone(),
                ..NetRequest::default()
            };
            let req = Request::new(RequestKind::Net(req))
                .with_role(role.map(str::to_string))
                .with_session(session.cloned());
            eval::decide(set, &req, opts)
        })
        .collect()
}

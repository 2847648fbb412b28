//! Typed requests, one shape per domain. A request is plain data; the evaluator never
//! looks anywhere else (no environment, no clock, no file system).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    Path,
    Exec,
    Plugin,
    Commit,
}

impl Domain {
    pub const ALL: [Domain; 4] = [Domain::Path, Domain::Exec, Domain::Plugin, Domain::Commit];
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Path => "path",
            Domain::Exec => "exec",
            Domain::Plugin => "plugin",
            Domain::Commit => "commit",
        }
    }
    pub fn parse(s: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.as_str() == s)
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathOp {
    Read,
    Write,
    Delete,
}

impl From<contextos_shell::FileOp> for PathOp {
    fn from(op: contextos_shell::FileOp) -> Self {
        match op {
            contextos_shell::FileOp::Read => PathOp::Read,
            contextos_shell::FileOp::Write => PathOp::Write,
            contextos_shell::FileOp::Delete => PathOp::Delete,
        }
    }
}

impl PathOp {
    pub const ALL: [PathOp; 3] = [PathOp::Read, PathOp::Write, PathOp::Delete];
    pub fn as_str(self) -> &'static str {
        match self {
            PathOp::Read => "read",
            PathOp::Write => "write",
            PathOp::Delete => "delete",
        }
    }
    pub fn parse(s: &str) -> Option<PathOp> {
        PathOp::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRequest {
    pub op: PathOp,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    /// Programs feeding this command through a pipe (`curl … | sh` gives `sh` ["curl"]).
    #[serde(default, rename = "pipedFrom")]
    pub piped_from: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PluginRequest {
    pub name: String,
    pub source: String,
    pub version: String,
    pub digest: String,
    /// Key id of a verified signature, if any. Verification happens before the request is built.
    pub signer: Option<String>,
    /// What verification established against the pack (stable codes such as
    /// `digest-mismatch`, `signature-missing`, `key-revoked`); the policy decides on them.
    #[serde(default)]
    pub findings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommitRequest {
    pub files: Vec<String>,
    /// Rule ids of scanner findings in the change.
    pub findings: Vec<String>,
    pub message: String,
    /// What the finding is (`secret`, `blocked-file`, `stub`, `scope`, `oversize`), or
    /// `change` for the verdict on the change as a whole.
    #[serde(default)]
    pub kind: String,
    /// The finding's severity (`error`, `warning`); empty for the whole change when it has
    /// no findings.
    #[serde(default)]
    pub severity: String,
    /// Some change in the set was produced by a host-unsafe run (outside the sandbox).
    #[serde(default, rename = "hostUnsafe")]
    pub host_unsafe: bool,
    /// The change set is to be merged without a human (an auto-merge request).
    #[serde(default, rename = "autoMerge")]
    pub auto_merge: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "domain", rename_all = "lowercase")]
pub enum RequestKind {
    Path(PathRequest),
    Exec(ExecRequest),
    Plugin(PluginRequest),
    Commit(CommitRequest),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    #[serde(flatten)]
    pub kind: RequestKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

impl Request {
    pub fn new(kind: RequestKind) -> Self {
        Request { kind, role: None }
    }
    pub fn with_role(mut self, role: Option<String>) -> Self {
        self.role = role;
        self
    }
    pub fn path(op: PathOp, path: impl Into<String>) -> Self {
        Request::new(RequestKind::Path(PathRequest {
            op,
            path: path.into(),
        }))
    }
    pub fn exec<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Self {
        Request::new(RequestKind::Exec(ExecRequest {
            argv: argv.into_iter().map(Into::into).collect(),
            piped_from: Vec::new(),
        }))
    }
    pub fn domain(&self) -> Domain {
        match &self.kind {
            RequestKind::Path(_) => Domain::Path,
            RequestKind::Exec(_) => Domain::Exec,
            RequestKind::Plugin(_) => Domain::Plugin,
            RequestKind::Commit(_) => Domain::Commit,
        }
    }
}

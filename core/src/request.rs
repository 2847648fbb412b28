//! Typed requests, one shape per domain. A request is plain data; the evaluator never
//! looks anywhere else (no environment, no clock, no file system).

use serde::{Deserialize, Serialize};

/// The kind of action a request asks about; each domain has its own request shape, rule
/// patterns, schema attributes and `default` effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Reading, writing or deleting one file, named by its canonical path.
    Path,
    /// Running one simple command, given as argv.
    Exec,
    /// Loading a third-party policy pack.
    Plugin,
    /// A change set about to be committed or merged.
    Commit,
    /// Reaching a host over the network: a URL fetched or a host connected to.
    Net,
    /// Calling a tool of an MCP server.
    Mcp,
}

impl Domain {
    /// How many domains there are: the length of per-domain tables.
    pub const COUNT: usize = Domain::ALL.len();
    /// Every domain, in the order of [`Domain::index`].
    pub const ALL: [Domain; 6] = [
        Domain::Path,
        Domain::Exec,
        Domain::Plugin,
        Domain::Commit,
        Domain::Net,
        Domain::Mcp,
    ];
    /// The keyword naming the domain in policy text, JSON and the CLI (`"path"`, `"exec"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Path => "path",
            Domain::Exec => "exec",
            Domain::Plugin => "plugin",
            Domain::Commit => "commit",
            Domain::Net => "net",
            Domain::Mcp => "mcp",
        }
    }
    /// The domain named by a keyword of [`Domain::as_str`]; `None` for anything else.
    pub fn parse(s: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.as_str() == s)
    }
    /// Dense index `0..6`, in declaration order, for per-domain tables such as the set's defaults.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a `path` request does to its file; `path` rules without operations cover all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathOp {
    /// Reading the file's contents.
    Read,
    /// Creating or changing the file.
    Write,
    /// Removing the file.
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
    /// Every operation, in declaration order.
    pub const ALL: [PathOp; 3] = [PathOp::Read, PathOp::Write, PathOp::Delete];
    /// The keyword naming the operation in policy text, JSON and the CLI (`"read"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PathOp::Read => "read",
            PathOp::Write => "write",
            PathOp::Delete => "delete",
        }
    }
    /// The operation named by a keyword of [`PathOp::as_str`]; `None` for anything else.
    pub fn parse(s: &str) -> Option<PathOp> {
        PathOp::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// A request to read, write or delete one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRequest {
    /// What is done to the file.
    pub op: PathOp,
    /// The file as given by the caller; the evaluator canonicalises it (repository-relative,
    /// `/`-separated) before matching and rejects the request when that fails.
    pub path: String,
}

/// A request to run one simple command; a shell line is split into these first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecRequest {
    /// The command's words, `argv[0]` first; an empty argv is rejected as `exec.empty`.
    pub argv: Vec<String>,
    /// Programs feeding this command through a pipe (`curl … | sh` gives `sh` ["curl"]).
    #[serde(default, rename = "pipedFrom")]
    pub piped_from: Vec<String>,
    /// Environment assignments it runs with, `NAME=value` (prefixes, `env`/`sudo`
    /// wrappers, earlier `export`s of the line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Working directory, project-relative (`""` at the root); `"?"` when only known at run
    /// time; outside the project as `~/…` or absolute.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cwd: String,
    /// Files it reads, resolved like path requests (project-relative, `~/…` or absolute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// Files it writes or deletes, resolved likewise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
    /// Network destinations (URL, host, `host:port`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    /// Code strings and script files it runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// The code strings alone (`python3 -c CODE`, `perl -e CODE`, awk programs, SQL given
    /// with `psql -c`), without the script files of `runs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<String>,
    /// Options in normal form (long options in full, values joined with `=`, combined
    /// short flags split).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Subcommand words after the global options (`["s3", "rm"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subcommand: Vec<String>,
    /// Words after the subcommand that are neither options nor option values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operands: Vec<String>,
    /// Why what it runs is not visible to the policy; empty when it is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<String>,
    /// Every part of the command is modelled: no environment prefix that changes
    /// programs, no code the policy cannot see, no unknown option of a modelled program,
    /// no file target known only at run time, no read outside the project that no rule
    /// allows. An allow of a command that is not modelled is not answered as an allow.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub modelled: bool,
}

fn yes() -> bool {
    true
}

impl Default for ExecRequest {
    /// An argv-only request: nothing beyond the words is known, so nothing is unmodelled.
    fn default() -> Self {
        ExecRequest {
            argv: Vec::new(),
            piped_from: Vec::new(),
            env: Vec::new(),
            cwd: String::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            network: Vec::new(),
            runs: Vec::new(),
            code: Vec::new(),
            options: Vec::new(),
            subcommand: Vec::new(),
            operands: Vec::new(),
            opaque: Vec::new(),
            modelled: true,
        }
    }
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A request to load a policy pack, built after its digest and signature were verified.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PluginRequest {
    /// The pack's name (e.g. `github.com/acme/rules`); what `plugin` rule globs match.
    pub name: String,
    /// Where the pack comes from (registry, git URL or path).
    pub source: String,
    /// The requested version requirement, e.g. `=1.2.3`.
    pub version: String,
    /// The pack's `sha256:…` tree digest; empty when missing.
    pub digest: String,
    /// Key id of a verified signature, if any. Verification happens before the request is built.
    pub signer: Option<String>,
    /// What verification established against the pack (stable codes such as
    /// `digest-mismatch`, `signature-missing`, `key-revoked`); the policy decides on them.
    #[serde(default)]
    pub findings: Vec<String>,
}

/// A request about a change set: the commit hook and the scanner build one for the change
/// as a whole and one per finding.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommitRequest {
    /// Paths the change touches; each is canonicalised like a path request, and one bad path
    /// rejects the whole request.
    pub files: Vec<String>,
    /// Rule ids of scanner findings in the change.
    pub findings: Vec<String>,
    /// The commit message; empty when not known.
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

/// What a `net` request does: fetch a URL (HTTP and the like) or open a connection to a
/// host (ssh, git over ssh, DNS, raw sockets).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum NetOp {
    /// Fetching or posting to a URL.
    #[default]
    Fetch,
    /// Connecting to `HOST[:PORT]` (a DNS lookup of the host included).
    Connect,
}

impl NetOp {
    /// Every operation, in declaration order.
    pub const ALL: [NetOp; 2] = [NetOp::Fetch, NetOp::Connect];
    /// The keyword naming the operation in policy text, JSON and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            NetOp::Fetch => "fetch",
            NetOp::Connect => "connect",
        }
    }
    /// The operation named by a keyword of [`NetOp::as_str`]; `None` for anything else.
    pub fn parse(s: &str) -> Option<NetOp> {
        NetOp::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// A request to reach a host: from an agent's web tools (WebFetch, WebSearch) or from a
/// command's network destinations in the exec model. The evaluator canonicalises `target`
/// into `host`, `port` and `scheme` before matching; rule patterns match `host`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NetRequest {
    /// What is done.
    pub op: NetOp,
    /// The URL for `fetch`; `HOST[:PORT]` (or a URL) for `connect`, as given.
    pub target: String,
    /// The tool or program reaching out (`WebFetch`, `WebSearch`, `curl`, `git`, `ssh`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool: String,
    /// The HTTP method or the tool's verb (`GET`, `POST`, `PUT`, `push`); `""` unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub method: String,
    /// Secret material the request carries: `secret:DETECTOR` for a secret detector's
    /// finding in the URL, headers, body or arguments, `file:PATH` for a file the policy
    /// guards whose content the same command line reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<String>,
    /// Files whose content the same command line reads (and so may send), resolved like
    /// path requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sends: Vec<String>,
    /// The destination is built at run time (a command substitution or a variable in the
    /// host name): what it reaches, and what the name itself carries, is unknown.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dynamic: bool,
    /// Lower-case host name or IP address, filled in by canonicalisation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// The port: given, or the scheme's default; `0` when unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub port: u16,
    /// The URL scheme (`https`, `ssh`, …), `""` for a bare host.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheme: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(p: &u16) -> bool {
    *p == 0
}

/// A request to call one tool of an MCP server. What the hook knows of the server from
/// the project's configuration comes with it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct McpRequest {
    /// The server's name as the agent knows it (`github` in `mcp__github__create_issue`).
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// The call's arguments as compact JSON text (`""` when none were sent).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub args: String,
    /// Secret material in the arguments, as for [`NetRequest::carries`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<String>,
    /// The project lists the server (`[mcp] servers` in `contextos.toml`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub listed: bool,
    /// The project marks the server trusted: its results do not taint a session.
    #[serde(default, skip_serializing_if = "is_false")]
    pub trusted: bool,
    /// The server's definition against its pin: `pinned` (unchanged since approved),
    /// `changed` (command, arguments or environment differ), `unpinned` (never approved),
    /// `unknown` (no definition found); `""` when not looked up.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub definition: String,
}

impl McpRequest {
    /// The tool's name as lower-case words: split at every character that is not a letter
    /// or a digit, and at camelCase humps (`slackPostMessage`, `HTTPRequest`), so a verb is
    /// found wherever it sits (`slack_post_message`, `github.create_issue`).
    pub fn tool_words(&self) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        for part in self.tool.split(|c: char| !c.is_alphanumeric()) {
            let chars: Vec<char> = part.chars().collect();
            let mut word = String::new();
            for (i, &c) in chars.iter().enumerate() {
                let hump = i > 0
                    && c.is_uppercase()
                    && (chars[i - 1].is_lowercase()
                        || chars[i - 1].is_ascii_digit()
                        || chars.get(i + 1).is_some_and(|n| n.is_lowercase()));
                if hump && !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                word.extend(c.to_lowercase());
            }
            if !word.is_empty() {
                words.push(word);
            }
        }
        words
    }

    /// What `mcp` rule patterns match: `SERVER/TOOL`.
    pub fn subject(&self) -> String {
        format!("{}/{}", self.server, self.tool)
    }
}

/// The domain-specific part of a request; serialised with a `domain` tag next to the
/// domain's own fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "domain", rename_all = "lowercase")]
pub enum RequestKind {
    /// A `path` request.
    Path(PathRequest),
    /// An `exec` request.
    Exec(ExecRequest),
    /// A `plugin` request.
    Plugin(PluginRequest),
    /// A `commit` request.
    Commit(CommitRequest),
    /// A `net` request.
    Net(NetRequest),
    /// An `mcp` request.
    Mcp(McpRequest),
}

/// One question put to the policy: the subject of a domain plus the role it is asked under.
/// Plain data; the evaluator looks nowhere else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// What is asked, in its domain's shape.
    #[serde(flatten)]
    pub kind: RequestKind,
    /// The role the request carries (`--role`, `as role "…"`); role-block rules are
    /// candidates only when it equals their role exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// What the agent's session has seen so far (see [`Session`]); `None` outside a
    /// session (the CLI, CI), which reads as an untainted one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
}

/// The part of an agent session's history a decision may depend on: whether untrusted
/// content has entered the agent's context, and from where. The hook reads it from the
/// session store; the evaluator only sees this value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Session {
    /// The session id as the agent sent it.
    #[serde(default)]
    pub id: String,
    /// Untrusted content has entered the agent's context in this session.
    #[serde(default)]
    pub tainted: bool,
    /// Where it came from: `fetch:HOST`, `search`, `mcp:SERVER`, `read:PATH`.
    #[serde(default, rename = "taintSources")]
    pub taint_sources: Vec<String>,
}

impl Session {
    /// The session a `tainted` test case is decided in.
    pub fn tainted_for_tests() -> Session {
        Session {
            id: "test".into(),
            tainted: true,
            taint_sources: vec!["test".into()],
        }
    }
}

impl Request {
    /// A request without a role.
    pub fn new(kind: RequestKind) -> Self {
        Request {
            kind,
            role: None,
            session: None,
        }
    }
    /// The same request seen from a session (`None`: outside any).
    pub fn with_session(mut self, session: Option<Session>) -> Self {
        self.session = session;
        self
    }
    /// The same request carried under `role` (`None` removes it).
    pub fn with_role(mut self, role: Option<String>) -> Self {
        self.role = role;
        self
    }
    /// A role-less `path` request.
    pub fn path(op: PathOp, path: impl Into<String>) -> Self {
        Request::new(RequestKind::Path(PathRequest {
            op,
            path: path.into(),
        }))
    }
    /// A role-less `exec` request for `argv`, not fed by a pipe.
    pub fn exec<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Self {
        Request::new(RequestKind::Exec(ExecRequest {
            argv: argv.into_iter().map(Into::into).collect(),
            ..ExecRequest::default()
        }))
    }
    /// The domain of the request's kind.
    pub fn domain(&self) -> Domain {
        match &self.kind {
            RequestKind::Path(_) => Domain::Path,
            RequestKind::Exec(_) => Domain::Exec,
            RequestKind::Plugin(_) => Domain::Plugin,
            RequestKind::Commit(_) => Domain::Commit,
            RequestKind::Net(_) => Domain::Net,
            RequestKind::Mcp(_) => Domain::Mcp,
        }
    }
}

//! The typed request schema: which attributes each domain exposes, their types, the
//! operations of each domain and the obligations a rule may carry. The checker resolves
//! every attribute in a condition against this table, so a typo is a check-time error.

use crate::request::Domain;

/// The type of an attribute, operand or script variable; the checker rejects conditions
/// whose operands do not fit their operator (E0110), so ordinary conditions cannot fail at
/// run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    /// A string.
    Str,
    /// A 64-bit signed integer (literals and `len()`).
    Int,
    /// A boolean: usable on its own as a condition.
    Bool,
    /// A list of strings (`argv`, `files`, `findings`, list literals).
    List,
}

impl Ty {
    /// The type as named in diagnostics ("string", "list of strings", …).
    pub fn name(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::Int => "integer",
            Ty::Bool => "boolean",
            Ty::List => "list of strings",
        }
    }
}

/// Every attribute a condition can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Attr {
    /// `role`: the role the request carries, `""` when none.
    Role,
    /// `path`/`path.path`: the canonical repository-relative path.
    PathPath,
    /// `path.op`: `"read"`, `"write"` or `"delete"`.
    PathOp,
    /// `path.name`: the last path segment.
    PathName,
    /// `path.ext`: the last segment's extension without the dot; `""` for none and for
    /// dotfiles such as `.env`.
    PathExt,
    /// `argv`/`exec.argv`: the command's words, `argv[0]` first.
    ExecArgv,
    /// `exec.program`: the basename of `argv[0]`.
    ExecProgram,
    /// `exec.args`: `argv` without `argv[0]`.
    ExecArgs,
    /// `exec.line`: `argv` joined with single spaces, for substring tests; not a faithful
    /// shell line.
    ExecLine,
    /// `exec.piped_from`: basenames of the programs earlier in the same pipeline.
    ExecPipedFrom,
    /// `exec.env`: `NAME=value` environment assignments the command runs with.
    ExecEnv,
    /// `exec.env_names`: the names of `exec.env`.
    ExecEnvNames,
    /// `exec.cwd`: the working directory, project-relative (`""` at the root, `"?"` unknown).
    ExecCwd,
    /// `exec.reads`: files the command reads, resolved like path requests.
    ExecReads,
    /// `exec.writes`: files the command writes or deletes, resolved likewise.
    ExecWrites,
    /// `exec.network`: network destinations as written (URL, host, `host:port`).
    ExecNetwork,
    /// `exec.hosts`: the host names of `exec.network`, lower-cased, without port or user.
    ExecHosts,
    /// `exec.runs`: code strings and script files the command runs.
    ExecRuns,
    /// `exec.code`: the code strings of `exec.runs`, without script files.
    ExecCode,
    /// `exec.options`: options in normal form (`--no-verify`, `--output=F`, `-f`).
    ExecOptions,
    /// `exec.subcommand`: the subcommand words joined with one space (`"s3 rm"`).
    ExecSubcommand,
    /// `exec.operands`: words after the subcommand that are neither options nor values.
    ExecOperands,
    /// `exec.opaque`: the command runs code the policy cannot see.
    ExecOpaque,
    /// `exec.modelled`: every part of the command is modelled (see the exec chapter).
    ExecModelled,
    /// `plugin.name`: the pack's name.
    PluginName,
    /// `plugin.source`: where the pack comes from.
    PluginSource,
    /// `plugin.version`: the requested version.
    PluginVersion,
    /// `plugin.digest`: the `sha256:…` tree digest, `""` when missing.
    PluginDigest,
    /// `plugin.signer`: key id of the verified signature, `""` when unsigned.
    PluginSigner,
    /// `plugin.signed`: a verified signature is present.
    PluginSigned,
    /// `plugin.findings`: stable codes of what verification established against the pack.
    PluginFindings,
    /// `commit.files`: the canonical paths the change touches.
    CommitFiles,
    /// `commit.findings`: rule ids of scanner findings in the change.
    CommitFindings,
    /// `commit.message`: the commit message, `""` when not known.
    CommitMessage,
    /// `commit.kind`: what the finding is (`secret`, `blocked-file`, …) or `change` for the
    /// verdict on the whole change.
    CommitKind,
    /// `commit.severity`: the finding's severity (`error`, `warning`).
    CommitSeverity,
    /// `commit.host_unsafe`: some change was produced by a run outside the sandbox.
    CommitHostUnsafe,
    /// `commit.auto_merge`: the change set is to be merged without a human.
    CommitAutoMerge,
    /// `net.url`: the destination as given (URL, `host:port` or host).
    NetUrl,
    /// `net.host`: the canonical host (lower case, punycode, no trailing dot) or IP address.
    NetHost,
    /// `net.port`: the port, given or the scheme's default; `0` when unknown.
    NetPort,
    /// `net.scheme`: `https`, `ssh`, …; `""` for a bare host.
    NetScheme,
    /// `net.method`: `GET`, `POST`, `push`, …; `""` when unknown.
    NetMethod,
    /// `net.tool`: the agent tool or program reaching out (`WebFetch`, `curl`, `git`).
    NetTool,
    /// `net.op`: `fetch` or `connect`.
    NetOp,
    /// `net.carries`: secret material the request carries (`secret:ID`, `file:PATH`).
    NetCarries,
    /// `net.sends`: files the same command line reads.
    NetSends,
    /// `net.dynamic`: the destination is built at run time.
    NetDynamic,
    /// `net.ip`: the host is an IP address literal.
    NetIp,
    /// `mcp.server`: the MCP server's name.
    McpServer,
    /// `mcp.tool`: the tool's name.
    McpTool,
    /// `mcp.tool_words`: the tool's name split into lower-case words.
    McpToolWords,
    /// `mcp.args`: the call's arguments as compact JSON text.
    McpArgs,
    /// `mcp.carries`: secret material in the arguments.
    McpCarries,
    /// `mcp.listed`: the project lists the server.
    McpListed,
    /// `mcp.trusted`: the project marks the server trusted.
    McpTrusted,
    /// `mcp.definition`: `pinned`, `changed`, `unpinned`, `unknown` or `""`.
    McpDefinition,
    /// `session.tainted`: untrusted content has entered the agent's context.
    SessionTainted,
    /// `session.taint_sources`: where it came from (`fetch:HOST`, `mcp:SERVER`, `read:PATH`).
    SessionTaintSources,
}

/// One row of the schema: how an attribute is spelled, its type and where it is valid.
#[derive(Debug)]
pub struct AttrInfo {
    /// Every spelling a condition may use (`path` and `path.path` are one attribute).
    pub names: &'static [&'static str],
    /// The attribute the spellings resolve to.
    pub attr: Attr,
    /// The attribute's type, which the checker types operators against.
    pub ty: Ty,
    /// `None`: available in every domain.
    pub domain: Option<Domain>,
    /// One-line meaning of the attribute for people reading the schema.
    pub doc: &'static str,
}

/// The whole schema: every attribute of every domain; an attribute missing here cannot be
/// read by a condition (E0108), one of another domain is E0109.
pub const ATTRS: &[AttrInfo] = &[
    AttrInfo {
        names: &["role"],
        attr: Attr::Role,
        ty: Ty::Str,
        domain: None,
        doc: "role the request carries (\"\" when none)",
    },
    AttrInfo {
        names: &["path", "path.path"],
        attr: Attr::PathPath,
        ty: Ty::Str,
        domain: Some(Domain::Path),
        doc: "canonical repository-relative path",
    },
    AttrInfo {
        names: &["path.op"],
        attr: Attr::PathOp,
        ty: Ty::Str,
        domain: Some(Domain::Path),
        doc: "read, write or delete",
    },
    AttrInfo {
        names: &["path.name"],
        attr: Attr::PathName,
        ty: Ty::Str,
        domain: Some(Domain::Path),
        doc: "last path segment",
    },
    AttrInfo {
        names: &["path.ext"],
        attr: Attr::PathExt,
        ty: Ty::Str,
        domain: Some(Domain::Path),
        doc: "extension without the dot (\"\" when none)",
    },
    AttrInfo {
        names: &["argv", "exec.argv"],
        attr: Attr::ExecArgv,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "the command's words",
    },
    AttrInfo {
        names: &["exec.program"],
        attr: Attr::ExecProgram,
        ty: Ty::Str,
        domain: Some(Domain::Exec),
        doc: "basename of argv[0]",
    },
    AttrInfo {
        names: &["exec.args"],
        attr: Attr::ExecArgs,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "argv without argv[0]",
    },
    AttrInfo {
        names: &["exec.line"],
        attr: Attr::ExecLine,
        ty: Ty::Str,
        domain: Some(Domain::Exec),
        doc: "argv joined with single spaces",
    },
    AttrInfo {
        names: &["exec.piped_from"],
        attr: Attr::ExecPipedFrom,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "programs piping into this command",
    },
    AttrInfo {
        names: &["exec.env"],
        attr: Attr::ExecEnv,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "NAME=value environment assignments it runs with",
    },
    AttrInfo {
        names: &["exec.env_names"],
        attr: Attr::ExecEnvNames,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "names of the environment assignments",
    },
    AttrInfo {
        names: &["exec.cwd"],
        attr: Attr::ExecCwd,
        ty: Ty::Str,
        domain: Some(Domain::Exec),
        doc: "working directory, project-relative (\"?\" when unknown)",
    },
    AttrInfo {
        names: &["exec.reads"],
        attr: Attr::ExecReads,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "files it reads",
    },
    AttrInfo {
        names: &["exec.writes"],
        attr: Attr::ExecWrites,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "files it writes or deletes",
    },
    AttrInfo {
        names: &["exec.network"],
        attr: Attr::ExecNetwork,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "network destinations",
    },
    AttrInfo {
        names: &["exec.hosts"],
        attr: Attr::ExecHosts,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "host names of the network destinations",
    },
    AttrInfo {
        names: &["exec.runs"],
        attr: Attr::ExecRuns,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "code strings and script files it runs",
    },
    AttrInfo {
        names: &["exec.code"],
        attr: Attr::ExecCode,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "code strings it runs (interpreter -c/-e, awk programs, SQL)",
    },
    AttrInfo {
        names: &["exec.options"],
        attr: Attr::ExecOptions,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "options in normal form (--name, --name=value, -x)",
    },
    AttrInfo {
        names: &["exec.subcommand"],
        attr: Attr::ExecSubcommand,
        ty: Ty::Str,
        domain: Some(Domain::Exec),
        doc: "subcommand words, space-separated",
    },
    AttrInfo {
        names: &["exec.operands"],
        attr: Attr::ExecOperands,
        ty: Ty::List,
        domain: Some(Domain::Exec),
        doc: "operands after the subcommand",
    },
    AttrInfo {
        names: &["exec.opaque"],
        attr: Attr::ExecOpaque,
        ty: Ty::Bool,
        domain: Some(Domain::Exec),
        doc: "runs code the policy cannot see",
    },
    AttrInfo {
        names: &["exec.modelled"],
        attr: Attr::ExecModelled,
        ty: Ty::Bool,
        domain: Some(Domain::Exec),
        doc: "every part of the command is modelled",
    },
    AttrInfo {
        names: &["plugin.name"],
        attr: Attr::PluginName,
        ty: Ty::Str,
        domain: Some(Domain::Plugin),
        doc: "plugin name",
    },
    AttrInfo {
        names: &["plugin.source"],
        attr: Attr::PluginSource,
        ty: Ty::Str,
        domain: Some(Domain::Plugin),
        doc: "where the plugin comes from",
    },
    AttrInfo {
        names: &["plugin.version"],
        attr: Attr::PluginVersion,
        ty: Ty::Str,
        domain: Some(Domain::Plugin),
        doc: "requested version, e.g. =1.2.3",
    },
    AttrInfo {
        names: &["plugin.digest"],
        attr: Attr::PluginDigest,
        ty: Ty::Str,
        domain: Some(Domain::Plugin),
        doc: "sha256:… tree digest (\"\" when missing)",
    },
    AttrInfo {
        names: &["plugin.signer"],
        attr: Attr::PluginSigner,
        ty: Ty::Str,
        domain: Some(Domain::Plugin),
        doc: "key id of the verified signature (\"\" when unsigned)",
    },
    AttrInfo {
        names: &["plugin.signed"],
        attr: Attr::PluginSigned,
        ty: Ty::Bool,
        domain: Some(Domain::Plugin),
        doc: "a verified signature is present",
    },
    AttrInfo {
        names: &["plugin.findings"],
        attr: Attr::PluginFindings,
        ty: Ty::List,
        domain: Some(Domain::Plugin),
        doc: "verification findings (digest-mismatch, signature-missing, key-revoked, …)",
    },
    AttrInfo {
        names: &["commit.files"],
        attr: Attr::CommitFiles,
        ty: Ty::List,
        domain: Some(Domain::Commit),
        doc: "paths the change touches",
    },
    AttrInfo {
        names: &["commit.findings"],
        attr: Attr::CommitFindings,
        ty: Ty::List,
        domain: Some(Domain::Commit),
        doc: "rule ids of scanner findings",
    },
    AttrInfo {
        names: &["commit.message"],
        attr: Attr::CommitMessage,
        ty: Ty::Str,
        domain: Some(Domain::Commit),
        doc: "commit message",
    },
    AttrInfo {
        names: &["commit.kind"],
        attr: Attr::CommitKind,
        ty: Ty::Str,
        domain: Some(Domain::Commit),
        doc: "what a scanner finding is: secret, blocked-file, stub, scope, oversize; change for the whole change",
    },
    AttrInfo {
        names: &["commit.severity"],
        attr: Attr::CommitSeverity,
        ty: Ty::Str,
        domain: Some(Domain::Commit),
        doc: "severity of a scanner finding: error or warning",
    },
    AttrInfo {
        names: &["commit.host_unsafe"],
        attr: Attr::CommitHostUnsafe,
        ty: Ty::Bool,
        domain: Some(Domain::Commit),
        doc: "a change in the set was produced by a host-unsafe run",
    },
    AttrInfo {
        names: &["commit.auto_merge"],
        attr: Attr::CommitAutoMerge,
        ty: Ty::Bool,
        domain: Some(Domain::Commit),
        doc: "the set is to be merged without a human",
    },
    AttrInfo {
        names: &["net.url"],
        attr: Attr::NetUrl,
        ty: Ty::Str,
        domain: Some(Domain::Net),
        doc: "the destination as given (URL, host:port or host)",
    },
    AttrInfo {
        names: &["net.host"],
        attr: Attr::NetHost,
        ty: Ty::Str,
        domain: Some(Domain::Net),
        doc: "canonical host name (lower case, punycode) or IP address",
    },
    AttrInfo {
        names: &["net.port"],
        attr: Attr::NetPort,
        ty: Ty::Int,
        domain: Some(Domain::Net),
        doc: "port, given or the scheme default (0 when unknown)",
    },
    AttrInfo {
        names: &["net.scheme"],
        attr: Attr::NetScheme,
        ty: Ty::Str,
        domain: Some(Domain::Net),
        doc: "URL scheme (\"\" for a bare host)",
    },
    AttrInfo {
        names: &["net.method"],
        attr: Attr::NetMethod,
        ty: Ty::Str,
        domain: Some(Domain::Net),
        doc: "HTTP method or the tool's verb (\"\" when unknown)",
    },
    AttrInfo {
        names: &["net.tool"],
        attr: Attr::NetTool,
        ty: Ty::Str,
        domain: Some(Domain::Net),
        doc: "agent tool or program reaching out (WebFetch, curl, git, ssh)",
    },
    AttrInfo {
        names: &["net.op"],
        attr: Attr::NetOp,
        ty: Ty::Str,
        domain: Some(Domain::Net),
        doc: "fetch or connect",
    },
    AttrInfo {
        names: &["net.carries"],
        attr: Attr::NetCarries,
        ty: Ty::List,
        domain: Some(Domain::Net),
        doc: "secret material carried (secret:ID, file:PATH)",
    },
    AttrInfo {
        names: &["net.sends"],
        attr: Attr::NetSends,
        ty: Ty::List,
        domain: Some(Domain::Net),
        doc: "files the same command line reads",
    },
    AttrInfo {
        names: &["net.dynamic"],
        attr: Attr::NetDynamic,
        ty: Ty::Bool,
        domain: Some(Domain::Net),
        doc: "the destination is built at run time",
    },
    AttrInfo {
        names: &["net.ip"],
        attr: Attr::NetIp,
        ty: Ty::Bool,
        domain: Some(Domain::Net),
        doc: "the host is an IP address literal",
    },
    AttrInfo {
        names: &["mcp.server"],
        attr: Attr::McpServer,
        ty: Ty::Str,
        domain: Some(Domain::Mcp),
        doc: "MCP server name",
    },
    AttrInfo {
        names: &["mcp.tool"],
        attr: Attr::McpTool,
        ty: Ty::Str,
        domain: Some(Domain::Mcp),
        doc: "MCP tool name",
    },
    AttrInfo {
        names: &["mcp.tool_words"],
        attr: Attr::McpToolWords,
        ty: Ty::List,
        domain: Some(Domain::Mcp),
        doc: "the tool's name split into lower-case words (at `_`, `-`, `.`, `/` and camelCase humps)",
    },
    AttrInfo {
        names: &["mcp.args"],
        attr: Attr::McpArgs,
        ty: Ty::Str,
        domain: Some(Domain::Mcp),
        doc: "arguments as compact JSON text",
    },
    AttrInfo {
        names: &["mcp.carries"],
        attr: Attr::McpCarries,
        ty: Ty::List,
        domain: Some(Domain::Mcp),
        doc: "secret material in the arguments",
    },
    AttrInfo {
        names: &["mcp.listed"],
        attr: Attr::McpListed,
        ty: Ty::Bool,
        domain: Some(Domain::Mcp),
        doc: "the project lists the server",
    },
    AttrInfo {
        names: &["mcp.trusted"],
        attr: Attr::McpTrusted,
        ty: Ty::Bool,
        domain: Some(Domain::Mcp),
        doc: "the project marks the server trusted",
    },
    AttrInfo {
        names: &["mcp.definition"],
        attr: Attr::McpDefinition,
        ty: Ty::Str,
        domain: Some(Domain::Mcp),
        doc: "pinned, changed, unpinned, unknown or \"\"",
    },
    AttrInfo {
        names: &["session.tainted"],
        attr: Attr::SessionTainted,
        ty: Ty::Bool,
        domain: None,
        doc: "untrusted content has entered the agent's context",
    },
    AttrInfo {
        names: &["session.taint_sources"],
        attr: Attr::SessionTaintSources,
        ty: Ty::List,
        domain: None,
        doc: "where untrusted content came from",
    },
];

/// The schema row of an attribute as written in a condition (`"exec.program"`); `None` for
/// an unknown name.
pub fn lookup_attr(dotted: &str) -> Option<&'static AttrInfo> {
    ATTRS.iter().find(|a| a.names.contains(&dotted))
}

/// Methods callable on attributes (`exec.argv.len()`) and functions (`plugin.signed_by(k)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Method {
    /// `len()`: characters of a string or elements of a list.
    Len,
    /// `starts_with(s)` on a string.
    StartsWith,
    /// `ends_with(s)` on a string.
    EndsWith,
    /// `contains(s)`: substring of a string or element of a list.
    Contains,
    /// `plugin.signed_by(k)`: the pack carries a verified signature by key id `k`.
    SignedBy,
}

/// Method names as written in conditions, with what they resolve to.
pub const METHODS: &[(&str, Method)] = &[
    ("len", Method::Len),
    ("starts_with", Method::StartsWith),
    ("ends_with", Method::EndsWith),
    ("contains", Method::Contains),
    ("signed_by", Method::SignedBy),
];

/// Operations of each domain. Domains without operations take none in a rule head.
pub fn domain_ops(domain: Domain) -> &'static [&'static str] {
    match domain {
        Domain::Path => &["read", "write", "delete"],
        Domain::Net => &["fetch", "connect"],
        Domain::Exec | Domain::Plugin | Domain::Commit | Domain::Mcp => &[],
    }
}

/// Obligations a rule may carry, with the keys each accepts.
pub fn obligation_keys(domain: Domain, name: &str) -> Option<&'static [&'static str]> {
    match (domain, name) {
        (Domain::Exec, "sandbox") => Some(&[
            "profile", "image", "network", "memory", "cpus", "pids", "timeout", "user", "readonly",
            "tmpfs", "env", "output", "pull", "digest",
        ]),
        _ => None,
    }
}

/// Variables visible to Rhai scripts per domain (all strings or arrays of strings).
pub fn script_vars(domain: Domain) -> &'static [(&'static str, Ty)] {
    match domain {
        Domain::Path => &[("role", Ty::Str), ("path", Ty::Str), ("op", Ty::Str)],
        Domain::Exec => &[
            ("role", Ty::Str),
            ("argv", Ty::List),
            ("program", Ty::Str),
            ("piped_from", Ty::List),
            ("env", Ty::List),
            ("cwd", Ty::Str),
            ("reads", Ty::List),
            ("writes", Ty::List),
            ("network", Ty::List),
            ("runs", Ty::List),
            ("code", Ty::List),
            ("options", Ty::List),
            ("subcommand", Ty::Str),
            ("operands", Ty::List),
        ],
        Domain::Plugin => &[
            ("role", Ty::Str),
            ("name", Ty::Str),
            ("source", Ty::Str),
            ("version", Ty::Str),
            ("digest", Ty::Str),
            ("signer", Ty::Str),
            ("findings", Ty::List),
        ],
        Domain::Commit => &[
            ("role", Ty::Str),
            ("files", Ty::List),
            ("findings", Ty::List),
            ("message", Ty::Str),
            ("kind", Ty::Str),
            ("severity", Ty::Str),
        ],
        Domain::Net => &[
            ("role", Ty::Str),
            ("url", Ty::Str),
            ("host", Ty::Str),
            ("scheme", Ty::Str),
            ("method", Ty::Str),
            ("tool", Ty::Str),
            ("op", Ty::Str),
            ("carries", Ty::List),
            ("sends", Ty::List),
        ],
        Domain::Mcp => &[
            ("role", Ty::Str),
            ("server", Ty::Str),
            ("tool", Ty::Str),
            ("args", Ty::Str),
            ("carries", Ty::List),
            ("definition", Ty::Str),
        ],
    }
}

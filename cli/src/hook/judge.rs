//! From an agent's actions to one answer: every action becomes policy requests (paths
//! relative to the project, as the file system would resolve them), the evaluator
//! decides each, and the strongest verdict wins.
//!
//! What the agent hears (see the in-flight chapter of the book):
//! - `deny` whenever any part is denied — by a rule, a path rejection, or a `deny` default;
//! - `ask` when a rule (or an unanalysable command) asks;
//! - `allow` only when every part was allowed by an explicit allow rule;
//! - nothing at all when no rule spoke, so the agent's own permission flow decides.

use crate::hook::egress::{self, McpFacts, Secrets};
use crate::support::physical::{physical, Physical};
use contextos_engine::core::ir::HOST_OBLIGATION;
use contextos_engine::emit::{Action, Answer, McpEndpoint};
use contextos_engine::ShellBase;
use contextos_engine::{
    canon, Decision, Effect, EvalOptions, PathOp, PolicySet, Request, RequestKind, Session,
    ShellOptions,
};
use std::path::Path;

/// Every decision behind an answer, for the answer's reason and the decision log.
#[derive(Debug, Default)]
pub struct Judgement {
    pub parts: Vec<Part>,
    /// The requests a shell line was decided as (for what taints the session).
    pub shell_requests: Vec<Request>,
    /// The paths the event's file tools read, as decided (project-relative or outside).
    pub read_paths: Vec<String>,
    /// The server of each MCP call of the event, named or identified; `None` when the
    /// event does not tell.
    pub mcp_servers: Vec<Option<String>>,
}

/// Who asks and what the hook knows beside the actions: the role, the agent session,
/// the secret detectors and the project's MCP servers.
pub struct Scope<'a> {
    pub role: Option<&'a str>,
    pub session: Option<&'a Session>,
    pub secrets: &'a Secrets<'a>,
    pub mcp: &'a McpFacts,
}

impl Scope<'_> {
    fn request(&self, r: Request) -> Request {
        r.with_role(self.role.map(str::to_string))
            .with_session(self.session.cloned())
    }
}

/// One decided piece of an action.
#[derive(Debug)]
pub struct Part {
    pub verdict: Effect,
    /// A rule, a rejection or a `deny` default decided it (not a permissive default).
    pub explicit: bool,
    pub reason: String,
    pub rules: Vec<String>,
    /// Every rule that decided it sends the command to the host (`with host {}`): in
    /// boundary mode such a part is not routed into the sandbox.
    pub host: bool,
}

/// Where the project is, in every spelling an agent may use for it.
#[derive(Debug)]
pub struct Place {
    pub root: std::path::PathBuf,
    pub base: ShellBase,
}

impl Place {
    pub fn new(root: &Path, cwd: Option<&str>) -> Place {
        let mut roots = vec![trim(&root.to_string_lossy())];
        if let Ok(c) = std::fs::canonicalize(root) {
            let c = trim(&c.to_string_lossy());
            if !roots.contains(&c) {
                roots.push(c);
            }
        }
        let home = contextos_engine::effects::home_dir();
        let base = ShellBase {
            roots: roots.clone(),
            cwd: String::new(),
            contained: false,
            home: home.clone(),
        };
        // The working directory, relative to the root; outside the project the root is
        // used, so relative targets cannot silently escape.
        let cwd_rel = cwd
            .map(|c| base.resolve(&trim(c)))
            .filter(|r| !r.starts_with('/') && !r.starts_with(".."))
            .map(|r| if r == "." { String::new() } else { r })
            .unwrap_or_default();
        Place {
            root: root.to_path_buf(),
            base: ShellBase {
                roots,
                cwd: cwd_rel,
                contained: false,
                home,
            },
        }
    }
}

impl Place {
    /// The same place as seen by a command routed into the sandbox session: the project
    /// (by its host spellings or as `/workspace`) is the only host-backed directory, and
    /// every other absolute path is the container's own.
    pub fn contained(&self) -> Place {
        let mut base = self.base.clone();
        base.roots
            .push(contextos_engine::effects::sandbox::workspace::WORKSPACE_MOUNT.to_string());
        base.contained = true;
        Place {
            root: self.root.clone(),
            base,
        }
    }
}

fn trim(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        "/".into()
    } else {
        t.to_string()
    }
}

impl Judgement {
    pub fn verdict(&self) -> Option<Effect> {
        self.parts.iter().map(|p| p.verdict).max()
    }

    /// Whether every part was decided by `with host` rules (and there is a part): the
    /// line then runs on the host, as the project's own policies asked.
    pub fn host_only(&self) -> bool {
        !self.parts.is_empty() && self.parts.iter().all(|p| p.host)
    }

    pub fn rules(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .parts
            .iter()
            .filter(|p| Some(p.verdict) == self.verdict())
            .flat_map(|p| p.rules.iter().cloned())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    pub fn answer(&self) -> Answer {
        let Some(v) = self.verdict() else {
            return Answer::Pass;
        };
        let deciding: Vec<&Part> = self.parts.iter().filter(|p| p.verdict == v).collect();
        let mut reasons: Vec<String> = Vec::new();
        for p in &deciding {
            if p.explicit && !reasons.contains(&p.reason) {
                reasons.push(p.reason.clone());
            }
        }
        let reason = format!("ContextOS: {}", reasons.join("; "));
        match v {
            // Every deny part carries a reason; were one ever missing, the verdict is
            // still a deny, never silence.
            Effect::Deny => Answer::Deny {
                reason: if reasons.is_empty() {
                    "ContextOS: denied by the policies".into()
                } else {
                    reason
                },
            },
            Effect::Ask if !reasons.is_empty() => Answer::Ask { reason },
            Effect::Allow if self.parts.iter().all(|p| p.explicit) => Answer::Allow { reason },
            _ => Answer::Pass,
        }
    }
}

/// One decision as a part. `routed`: the command will run in the sandbox session (boundary
/// mode), so a sandbox obligation is honoured there rather than turned into an ask.
fn part_of(set: &PolicySet, d: &Decision, routed: bool) -> Part {
    let explicit = !d.default_applied || d.rejection.is_some() || d.verdict == Effect::Deny;
    let subject = subject(&d.request);
    let host = d.verdict != Effect::Deny
        && d.rejection.is_none()
        && !d.decided_by.is_empty()
        && d.decided_by.iter().all(|h| {
            set.rule(&h.id)
                .is_some_and(|r| r.obligations.iter().any(|o| o.name == HOST_OBLIGATION))
        });
    // An allow that holds only inside the sandbox does not hold for the agent's own host
    // shell: a human decides instead (never widen).
    let on_host = !routed || host;
    if on_host && d.verdict != Effect::Deny && d.obligations.iter().any(|o| o.name == "sandbox") {
        return Part {
            verdict: Effect::Ask,
            explicit: true,
            reason: format!(
                "{subject}: the policy allows this only inside the ContextOS sandbox ({}); run on the host, it needs a human's confirmation",
                d.decided_by
                    .iter()
                    .map(|h| h.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            rules: d.decided_by.iter().map(|h| h.id.clone()).collect(),
            host,
        };
    }
    let reason = if let Some(r) = &d.rejection {
        format!("{subject}: {} [{}]", r.message, r.code)
    } else if d.default_applied {
        format!(
            "{subject}: no rule matched and the default for `{}` is {}",
            d.domain,
            effect_word(d.verdict)
        )
    } else {
        let why: Vec<String> = d
            .decided_by
            .iter()
            .map(|h| match &h.because {
                Some(b) => format!("{b} [{}]", h.id),
                None => format!("rule {} ({})", h.id, h.origin),
            })
            .collect();
        format!("{subject}: {}", why.join("; "))
    };
    Part {
        verdict: d.verdict,
        explicit,
        reason,
        rules: d.decided_by.iter().map(|h| h.id.clone()).collect(),
        host,
    }
}

fn effect_word(e: Effect) -> &'static str {
    match e {
        Effect::Allow => "allow",
        Effect::Ask => "ask",
        Effect::Deny => "deny",
    }
}

fn subject(r: &Request) -> String {
    match &r.kind {
        contextos_engine::RequestKind::Path(p) => format!("{} `{}`", p.op.as_str(), p.path),
        contextos_engine::RequestKind::Exec(e) => format!("`{}`", e.argv.join(" ")),
        contextos_engine::RequestKind::Plugin(p) => format!("plugin `{}`", p.name),
        contextos_engine::RequestKind::Commit(_) => "commit".into(),
        contextos_engine::RequestKind::Net(n) => format!("{} `{}`", n.op.as_str(), n.target),
        contextos_engine::RequestKind::Mcp(m) => format!("MCP tool `{}`", m.subject()),
    }
}

fn rejected(op: PathOp, path: &str, code: &str, message: String) -> Part {
    Part {
        verdict: Effect::Deny,
        explicit: true,
        reason: format!("{} `{path}`: {message} [{code}]", op.as_str()),
        rules: Vec::new(),
        host: false,
    }
}

/// Decides a project-relative (or outside) path and, when symbolic links move it, the
/// place it really lands.
fn judge_path(
    set: &PolicySet,
    place: &Place,
    op: PathOp,
    path: &str,
    scope: &Scope,
    out: &mut Vec<Part>,
) {
    let req = scope.request(Request::path(op, path));
    let d = set.decide(&req, EvalOptions::default());
    out.push(part_of(set, &d, false));
    // Outside the project only outside-anchored rules speak (temp directories, toolchain
    // caches, credential stores); links are followed beneath the project root only.
    if is_outside(path) {
        return;
    }
    if let Ok(canonical) = canon::canonical_path(path) {
        judge_link_only(set, place, op, &canonical, scope, out);
    }
}

/// Decides every action of a hook event. `routed`: shell commands will run in the sandbox
/// session (boundary mode), not on the host.
pub fn judge(
    set: &PolicySet,
    place: &Place,
    actions: &[Action],
    scope: &Scope,
    routed: bool,
) -> Judgement {
    let mut parts = Vec::new();
    let mut shell_requests = Vec::new();
    let mut read_paths = Vec::new();
    let mut mcp_servers = Vec::new();
    for a in actions {
        match a {
            Action::Shell { line } => {
                let decide = |carries: &[String]| {
                    set.decide_shell(
                        line,
                        scope.role,
                        ShellOptions {
                            strict: false,
                            explain: false,
                            base: Some(&place.base),
                            session: scope.session,
                            carries,
                        },
                    )
                };
                // The detectors only matter for a line that reaches the network: it is
                // decided again with what they find, and a line that reaches nowhere never
                // pays for them.
                let mut d = decide(&[]);
                let reaches = d
                    .parts
                    .iter()
                    .any(|p| matches!(p.request.kind, RequestKind::Net(_)));
                if reaches {
                    let carries = scope.secrets.carries(line);
                    if !carries.is_empty() {
                        d = decide(&carries);
                    }
                }
                shell_requests.extend(d.parts.iter().map(|p| p.request.clone()));
                if let Some(r) = &d.rejection {
                    parts.push(Part {
                        verdict: d.verdict,
                        explicit: true,
                        reason: format!("`{}`: {} [{}]", line, r.message, r.code),
                        rules: Vec::new(),
                        host: false,
                    });
                }
                for (i, p) in d.parts.iter().enumerate() {
                    if d.guesses.contains(&i) && !lands_in_a_directory(&place.root, &p.request) {
                        continue;
                    }
                    parts.push(part_of(set, p, routed));
                    // A file the command writes may sit behind a symbolic link.
                    if let contextos_engine::RequestKind::Path(pr) = &p.request.kind {
                        if is_outside(&pr.path) {
                            continue;
                        }
                        if let Ok(c) = canon::canonical_path(&pr.path) {
                            let mut extra = Vec::new();
                            judge_link_only(set, place, pr.op, &c, scope, &mut extra);
                            parts.extend(extra);
                        }
                    }
                }
            }
            Action::Path { op, path } => {
                let path = path.replace('\\', "/");
                let rel = place.base.resolve(&path);
                if *op == PathOp::Read {
                    read_paths.push(canon::canonical_path(&rel).unwrap_or_else(|_| rel.clone()));
                }
                judge_path(set, place, *op, &rel, scope, &mut parts);
            }
            // Not analysed (PowerShell's syntax is not POSIX shell): a person decides.
            Action::PowerShell { line } => parts.push(Part {
                verdict: Effect::Ask,
                explicit: true,
                reason: format!(
                    "`{line}`: PowerShell command lines are not analysed by ContextOS [exec.powershell]"
                ),
                rules: Vec::new(),
                host: false,
            }),
            Action::Fetch { url } => {
                let req = egress::fetch("WebFetch", url, scope.secrets.carries(url));
                let d = set.decide(
                    &scope.request(Request::new(RequestKind::Net(req))),
                    EvalOptions::default(),
                );
                parts.push(part_of(set, &d, false));
            }
            Action::Search { query } => {
                let req = egress::search("WebSearch", query, scope.secrets.carries(query));
                let d = set.decide(
                    &scope.request(Request::new(RequestKind::Net(req))),
                    EvalOptions::default(),
                );
                parts.push(part_of(set, &d, false));
            }
            Action::Mcp {
                server,
                tool,
                args,
                endpoint,
            } => {
                // A page the server fetches for the call is reached as a web fetch is.
                for url in egress::mcp_urls(args.as_ref()) {
                    let req = egress::fetch(tool, &url, scope.secrets.carries(&url));
                    let d = set.decide(
                        &scope.request(Request::new(RequestKind::Net(req))),
                        EvalOptions::default(),
                    );
                    parts.push(part_of(set, &d, false));
                }
                let args = args
                    .as_ref()
                    .map(serde_json::Value::to_string)
                    .unwrap_or_default();
                let carries = scope.secrets.carries(&args);
                let (named, tool) = scope.mcp.resolve(server.as_deref(), tool, endpoint);
                let tool = tool.as_str();
                mcp_servers.push(named.clone());
                // Cursor's `preToolUse` names no server, and the same call's
                // `beforeMCPExecution` judges it: here only what the arguments carry.
                if *endpoint == McpEndpoint::JudgedElsewhere && named.is_none() {
                    if !carries.is_empty() {
                        let req = scope.mcp.request("?", tool, &args, carries);
                        let d = set.decide(
                            &scope.request(Request::new(RequestKind::Mcp(req))),
                            EvalOptions::default(),
                        );
                        parts.push(part_of(set, &d, false));
                    }
                    continue;
                }
                // A server neither named nor found among the project's definitions is
                // not one the project lists.
                let req = scope
                    .mcp
                    .request(named.as_deref().unwrap_or("?"), tool, &args, carries);
                let d = set.decide(
                    &scope.request(Request::new(RequestKind::Mcp(req))),
                    EvalOptions::default(),
                );
                parts.push(part_of(set, &d, false));
            }
        }
    }
    Judgement {
        parts,
        shell_requests,
        read_paths,
        mcp_servers,
    }
}

/// A path request's path is outside the project (absolute or under `~`).
fn is_outside(path: &str) -> bool {
    path.starts_with('/') || path.starts_with('~')
}

/// Whether a `DST/name` guess of a copy or move names a real file: its `DST` is not an
/// existing non-directory (`cp a.txt existing.txt` writes `existing.txt`, not
/// `existing.txt/a.txt`). A destination that does not exist yet may still be created as
/// a directory by an earlier step, so the guess is kept.
fn lands_in_a_directory(root: &Path, req: &Request) -> bool {
    let contextos_engine::RequestKind::Path(p) = &req.kind else {
        return true;
    };
    let Some((parent, _)) = p.path.rsplit_once('/') else {
        return true;
    };
    let dir = if is_outside(parent) {
        return true;
    } else {
        root.join(parent)
    };
    match std::fs::metadata(&dir) {
        Ok(m) => m.is_dir(),
        Err(_) => true,
    }
}

/// The physical stage every front end shares ([`physical`]): where symbolic links move a
/// path, that destination is decided too; a path leaving the project, unresolvable, or on
/// a file the journal would refuse (a hard link changed, a device) is rejected.
fn judge_link_only(
    set: &PolicySet,
    place: &Place,
    op: PathOp,
    canonical: &str,
    scope: &Scope,
    out: &mut Vec<Part>,
) {
    match physical(&place.root, op, canonical) {
        Physical::Same => {}
        Physical::Lands(real) => {
            let req = scope.request(Request::path(op, real));
            out.push(part_of(
                set,
                &set.decide(&req, EvalOptions::default()),
                false,
            ));
        }
        Physical::Refused { code, message } => out.push(rejected(op, canonical, code, message)),
    }
}

//! `contextos decide …` and `contextos explain …`: one request, one verdict.

use crate::output;
use crate::support::context::check_role;
use crate::support::physical::{self, Judged};
use crate::support::{requests, run_records, Format};
use crate::support::{CliError, Context, Exit};
use contextos_engine::core::diff::{is_argv_only, Probe};
use contextos_engine::core::explain::{trace_rule, RuleTrace};
use contextos_engine::decision::{Decision, ShellDecision};
use contextos_engine::{
    CommitRequest, EvalOptions, McpRequest, NetOp, NetRequest, PathOp, PluginRequest, Request,
    RequestKind, Session, ShellOptions,
};
use contextos_engine::{Effect, PolicySet};
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `explain` only: show this rule against the request — its head and conditions with
    /// `$vars` resolved, and whether (and why not) it applied.
    #[arg(long, value_name = "ID")]
    rule: Option<String>,
    /// Requests as JSON (the `request` of a decision: `{"domain":"path","op":"write",
    /// "path":"a.rs"}`; exec also `{"domain":"exec","shell":"LINE"}`) from FILE or `-`
    /// (stdin): one document, or one request per line (JSONL), each answered on its own line.
    #[arg(long, value_name = "FILE|-")]
    request: Option<String>,
    #[command(subcommand)]
    what: Option<What>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Op {
    Read,
    Write,
    Delete,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum NetOpArg {
    Fetch,
    Connect,
}

/// What `net` and `mcp` requests share: the secrets they carry and the session.
#[derive(Debug, clap::Args)]
struct Egress {
    /// Secret material the request carries (repeatable): `secret:DETECTOR`, `file:PATH`.
    #[arg(long = "carries")]
    carries: Vec<String>,
    /// Decide as from a session that has read untrusted content.
    #[arg(long)]
    tainted: bool,
    #[arg(long)]
    role: Option<String>,
}

impl Egress {
    fn request(&self, kind: RequestKind) -> Request {
        Request::new(kind)
            .with_role(self.role.clone())
            .with_session(self.tainted.then(|| Session {
                id: "cli".into(),
                tainted: true,
                taint_sources: vec!["cli".into()],
            }))
    }
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// A file read, write or delete.
    Path {
        #[arg(long, value_enum)]
        op: Op,
        path: String,
        #[arg(long)]
        role: Option<String>,
    },
    /// A command, as argv after `--` or as a shell line with `--shell`.
    Exec {
        #[arg(long)]
        role: Option<String>,
        /// A shell command line, split into simple commands that are each decided.
        #[arg(long, conflicts_with = "argv")]
        shell: Option<String>,
        /// Deny (instead of ask) what cannot be analysed.
        #[arg(long)]
        strict: bool,
        #[arg(last = true, required_unless_present = "shell")]
        argv: Vec<String>,
    },
    /// Loading a plugin pack.
    Plugin {
        name: String,
        #[arg(long, default_value = "")]
        source: String,
        #[arg(long, default_value = "")]
        version: String,
        #[arg(long, default_value = "")]
        digest: String,
        /// Key id of an already verified signature.
        #[arg(long)]
        signer: Option<String>,
        /// A verification finding (repeatable), e.g. `digest-mismatch`.
        #[arg(long = "finding")]
        findings: Vec<String>,
        #[arg(long)]
        role: Option<String>,
    },
    /// Reaching the network: `fetch URL` or `connect HOST[:PORT]`.
    Net {
        #[arg(value_enum)]
        op: NetOpArg,
        /// The URL (fetch) or `HOST[:PORT]` (connect).
        target: String,
        /// The tool or program reaching out (`WebFetch`, `curl`, `git`).
        #[arg(long, default_value = "")]
        tool: String,
        /// The HTTP method or the tool's verb.
        #[arg(long, default_value = "")]
        method: String,
        #[command(flatten)]
        egress: Egress,
    },
    /// Calling an MCP tool, named `SERVER/TOOL`.
    Mcp {
        name: String,
        /// The call's arguments as JSON text.
        #[arg(long, default_value = "")]
        args: String,
        /// The project lists the server.
        #[arg(long)]
        listed: bool,
        /// The project marks the server trusted.
        #[arg(long)]
        trusted: bool,
        /// The definition against its pin: pinned, changed, unpinned, unknown.
        #[arg(long, default_value = "")]
        definition: String,
        #[command(flatten)]
        egress: Egress,
    },
    /// A change set touching FILES.
    Commit {
        files: Vec<String>,
        /// Rule id of a scanner finding in the change (repeatable).
        #[arg(long = "finding")]
        findings: Vec<String>,
        #[arg(long, default_value = "")]
        message: String,
        /// What the finding is: secret, blocked-file, stub, scope, oversize, change.
        #[arg(long, default_value = "")]
        kind: String,
        /// The finding's severity: error or warning.
        #[arg(long, default_value = "")]
        severity: String,
        #[arg(long)]
        role: Option<String>,
        /// The change was produced by a host-unsafe run (also inferred from the runs
        /// `contextos run` recorded for these files).
        #[arg(long)]
        host_unsafe: bool,
        /// The change is to be merged without a human.
        #[arg(long)]
        auto_merge: bool,
    },
}

pub fn run(ctx: &Context, args: &Args, explain: bool) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let set = crate::support::context::load_cached(&project)?;
    let root = project.root.as_path();
    if args.rule.is_some() && !explain {
        return Err(CliError::Input(
            "--rule shows a rule against the request: use `contextos explain --rule ID …`".into(),
        ));
    }
    let what = match (&args.what, &args.request) {
        (Some(_), Some(_)) => {
            return Err(CliError::Input(
                "give a request either as a subcommand or with --request, not both".into(),
            ))
        }
        (Some(w), None) => w,
        (None, Some(from)) => return batch(ctx, &set, root, from, explain),
        (None, None) => {
            return Err(CliError::Input(
                "nothing to decide: name a request (path, exec, plugin, net, mcp, commit) or give --request FILE|-".into(),
            ))
        }
    };
    check_role(&set, role_of(what))?;
    let opts = EvalOptions { explain };
    match what {
        What::Exec {
            role,
            shell,
            strict,
            argv,
        } => {
            let opts = ShellOptions {
                strict: *strict,
                explain,
                ..ShellOptions::default()
            };
            // argv is decided as the words it is, never quoted back into a line.
            let d = match shell {
                Some(line) => set.decide_shell(line, role.as_deref(), opts),
                None => set.decide_argv(argv, role.as_deref(), opts),
            };
            let reqs: Vec<Request> = d.parts.iter().map(|p| p.request.clone()).collect();
            let trace = match &args.rule {
                Some(id) => Some(rule_trace(&set, id, &reqs)?),
                None => None,
            };
            match ctx.format {
                Format::Json => output::print_json(with_trace(
                    serde_json::to_value(&d).unwrap_or_default(),
                    trace.as_ref(),
                )),
                Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                    print_shell(&d, explain);
                    if let Some(t) = &trace {
                        print_trace(t);
                    }
                }
            }
            Ok(Exit::of(d.verdict))
        }
        other => {
            let req = match other {
                What::Path { op, path, role } => {
                    let op = match op {
                        Op::Read => PathOp::Read,
                        Op::Write => PathOp::Write,
                        Op::Delete => PathOp::Delete,
                    };
                    Request::path(op, path.clone()).with_role(role.clone())
                }
                What::Plugin {
                    name,
                    source,
                    version,
                    digest,
                    signer,
                    findings,
                    role,
                } => Request::new(RequestKind::Plugin(PluginRequest {
                    name: name.clone(),
                    source: source.clone(),
                    version: version.clone(),
                    digest: digest.clone(),
                    signer: signer.clone(),
                    findings: findings.clone(),
                }))
                .with_role(role.clone()),
                What::Commit {
                    files,
                    findings,
                    message,
                    kind,
                    severity,
                    role,
                    host_unsafe,
                    auto_merge,
                } => Request::new(RequestKind::Commit(CommitRequest {
                    files: files.clone(),
                    findings: findings.clone(),
                    message: message.clone(),
                    kind: kind.clone(),
                    severity: severity.clone(),
                    host_unsafe: *host_unsafe
                        || ctx
                            .project()
                            .is_ok_and(|p| run_records::produced_by_host_unsafe(&p.root, files)),
                    auto_merge: *auto_merge,
                }))
                .with_role(role.clone()),
                What::Net {
                    op,
                    target,
                    tool,
                    method,
                    egress,
                } => egress.request(RequestKind::Net(NetRequest {
                    op: match op {
                        NetOpArg::Fetch => NetOp::Fetch,
                        NetOpArg::Connect => NetOp::Connect,
                    },
                    target: target.clone(),
                    tool: tool.clone(),
                    method: method.clone(),
                    carries: egress.carries.clone(),
                    ..NetRequest::default()
                })),
                What::Mcp {
                    name,
                    args,
                    listed,
                    trusted,
                    definition,
                    egress,
                } => {
                    let (server, tool) = name
                        .split_once('/')
                        .ok_or_else(|| CliError::Input(format!("`{name}` is not SERVER/TOOL")))?;
                    egress.request(RequestKind::Mcp(McpRequest {
                        server: server.into(),
                        tool: tool.into(),
                        args: args.clone(),
                        carries: egress.carries.clone(),
                        listed: *listed,
                        trusted: *trusted,
                        definition: definition.clone(),
                    }))
                }
                What::Exec { .. } => {
                    return Err(CliError::Internal("exec is handled above".into()))
                }
            };
            // The physical stage the hooks and `apply` go through: one verdict everywhere.
            let j = physical::decide(&set, root, &req, opts);
            let trace = match &args.rule {
                Some(id) => Some(rule_trace(
                    &set,
                    id,
                    std::slice::from_ref(&j.decision.request),
                )?),
                None => None,
            };
            match ctx.format {
                Format::Json => output::print_json(with_trace(judged_json(&j), trace.as_ref())),
                Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                    print_judged(&j, explain);
                    if let Some(t) = &trace {
                        print_trace(t);
                    }
                }
            }
            Ok(Exit::of(j.verdict()))
        }
    }
}

/// `explain --rule ID`: the rule against the request it speaks about (of a shell line's
/// parts, the first of the rule's domain that its head matches, else the first of its
/// domain, else the first).
fn rule_trace(set: &PolicySet, id: &str, reqs: &[Request]) -> Result<RuleTrace, CliError> {
    let Some(rule) = set.rule(id) else {
        let hint =
            contextos_engine::grammar::did_you_mean(id, set.rules.iter().map(|r| r.id.as_str()))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
        return Err(CliError::Input(format!("no rule has the id `{id}`{hint}")));
    };
    let traces: Vec<RuleTrace> = reqs.iter().map(|r| trace_rule(set, rule, r)).collect();
    let pick = traces
        .iter()
        .position(|t| t.head_matched)
        .or_else(|| traces.iter().position(|t| t.domain_matched))
        .unwrap_or(0);
    traces
        .into_iter()
        .nth(pick)
        .ok_or_else(|| CliError::Input("there is no request to hold the rule against".into()))
}

fn with_trace(mut v: serde_json::Value, t: Option<&RuleTrace>) -> serde_json::Value {
    if let (Some(t), serde_json::Value::Object(m)) = (t, &mut v) {
        m.insert("rule".into(), serde_json::to_value(t).unwrap_or_default());
    }
    v
}

fn print_trace(t: &RuleTrace) {
    outln!(
        "rule {} ({}): {}",
        t.rule.id,
        t.rule.origin,
        if t.applied {
            "APPLIED"
        } else {
            "did not apply"
        }
    );
    outln!("  head: {}", t.head);
    outln!(
        "  head {}",
        if t.head_matched {
            "matched".to_string()
        } else {
            format!(
                "did not match: {}",
                t.hint.as_deref().unwrap_or("no pattern matches")
            )
        }
    );
    if let Some(r) = &t.role_mismatch {
        outln!("  role: applies only to role {r:?}, which the request does not carry");
    }
    for c in &t.clauses {
        let state = match (c.held, &c.error) {
            (Some(true), _) => "held".to_string(),
            (Some(false), _) => "did not hold".to_string(),
            (None, Some(e)) => format!("could not be evaluated ({e})"),
            (None, None) => "could not be evaluated".to_string(),
        };
        outln!("  {}: {state}", c.text);
        if c.resolved != c.text {
            outln!("    resolved: {}", c.resolved);
        }
    }
    if let Some(b) = &t.rule.because {
        outln!("  because: {b}");
    }
}

/// The role a request names on the command line.
fn role_of(w: &What) -> Option<&str> {
    match w {
        What::Path { role, .. }
        | What::Exec { role, .. }
        | What::Plugin { role, .. }
        | What::Commit { role, .. } => role.as_deref(),
        What::Net { egress, .. } | What::Mcp { egress, .. } => egress.role.as_deref(),
    }
}

/// `--request FILE|-`: every request decided in order; one answer per request (in JSON,
/// one compact line each when there is more than one). Exit by the strongest verdict.
fn batch(
    ctx: &Context,
    set: &PolicySet,
    root: &Path,
    from: &str,
    explain: bool,
) -> Result<Exit, CliError> {
    let text = if from == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map_err(|e| CliError::Io {
            doing: "reading requests from stdin".into(),
            error: e,
        })?;
        t
    } else {
        std::fs::read_to_string(from).map_err(|e| CliError::Io {
            doing: format!("reading requests from {from}"),
            error: e,
        })?
    };
    let name = if from == "-" { "stdin" } else { from };
    let probes = requests::parse(name, &text)?;
    if probes.is_empty() {
        return Err(CliError::Input(format!("{name}: no request")));
    }
    // Every role is checked before anything is answered: a batch is refused as a whole.
    for (i, p) in probes.iter().enumerate() {
        check_role(set, requests::role_of(p))
            .map_err(|e| CliError::Input(format!("{name}: request {}: {e}", i + 1)))?;
    }
    let many = probes.len() > 1;
    let mut strongest: Option<Effect> = None;
    for p in &probes {
        let shell_opts = |session| ShellOptions {
            explain,
            session,
            ..ShellOptions::default()
        };
        let (verdict, json, text): (Effect, serde_json::Value, Box<dyn Fn()>) = match p {
            Probe::Shell { line, role } => {
                let d = set.decide_shell(line, role.as_deref(), shell_opts(None));
                let j = serde_json::to_value(&d).unwrap_or_default();
                (d.verdict, j, Box::new(move || print_shell(&d, explain)))
            }
            Probe::Request(r) => match &r.kind {
                RequestKind::Exec(e) if is_argv_only(e) => {
                    let d =
                        set.decide_argv(&e.argv, r.role.as_deref(), shell_opts(r.session.as_ref()));
                    let j = serde_json::to_value(&d).unwrap_or_default();
                    (d.verdict, j, Box::new(move || print_shell(&d, explain)))
                }
                _ => {
                    let judged = physical::decide(set, root, r, EvalOptions { explain });
                    let j = judged_json(&judged);
                    (
                        judged.verdict(),
                        j,
                        Box::new(move || print_judged(&judged, explain)),
                    )
                }
            },
        };
        strongest = strongest.max(Some(verdict));
        match ctx.format {
            Format::Json if many => output::print_json_line(json),
            Format::Json => output::print_json(json),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => text(),
        }
    }
    Ok(strongest.map_or(Exit::Ok, Exit::of))
}

/// A decision document of the named path (with the landing's verdict when stronger) and,
/// when symbolic links move the path, the landing's own document under `landing`.
fn judged_json(j: &Judged) -> serde_json::Value {
    let mut v = serde_json::to_value(j.merged()).unwrap_or_default();
    if let (Some(l), serde_json::Value::Object(m)) = (&j.landing, &mut v) {
        m.insert(
            "landing".into(),
            serde_json::to_value(l).unwrap_or_default(),
        );
    }
    v
}

fn print_judged(j: &Judged, explain: bool) {
    print_decision(&j.merged(), explain, "");
    if let Some(l) = &j.landing {
        outln!("  symbolic links lead it to:");
        print_decision(l, explain, "    ");
    }
}

fn subject(d: &Decision) -> String {
    match &d.request.kind {
        RequestKind::Path(p) => format!("path {} {}", p.op.as_str(), p.path),
        RequestKind::Exec(e) => {
            let mut s = format!("exec {}", contextos_engine::shell::quote(&e.argv));
            if !e.piped_from.is_empty() {
                s.push_str(&format!("  (piped from {})", e.piped_from.join(", ")));
            }
            s
        }
        RequestKind::Plugin(p) => format!("plugin {} {}", p.name, p.version),
        RequestKind::Commit(c) => format!("commit of {} file(s)", c.files.len()),
        RequestKind::Net(n) => format!("net {} {}", n.op.as_str(), n.target),
        RequestKind::Mcp(m) => format!("mcp {}", m.subject()),
    }
}

fn print_decision(d: &Decision, explain: bool, indent: &str) {
    outln!("{indent}{:<5} {}", d.verdict.as_str(), subject(d));
    if let Some(r) = &d.rejection {
        outln!("{indent}  rejected [{}]: {}", r.code, r.message);
    }
    for h in &d.decided_by {
        outln!(
            "{indent}  decided by {} ({}){}",
            h.id,
            h.origin,
            h.because
                .as_ref()
                .map(|b| format!(": {b}"))
                .unwrap_or_default()
        );
    }
    if d.default_applied {
        outln!(
            "{indent}  no rule matched: the {} default is {}",
            d.domain,
            d.verdict
        );
    }
    for o in &d.obligations {
        let entries: Vec<String> = o.entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        outln!(
            "{indent}  obligation: {} {{ {} }}",
            o.name,
            entries.join(", ")
        );
    }
    for e in &d.errors {
        outln!(
            "{indent}  error in {} ({}): {}",
            e.rule,
            e.resolved_as,
            e.message
        );
    }
    if explain {
        for h in &d.overruled {
            outln!("{indent}  overruled: {} {} ({})", h.effect, h.id, h.origin);
        }
        for w in &d.why_not {
            outln!(
                "{indent}  why not {} {} ({}): {}",
                w.rule.effect,
                w.rule.id,
                w.origin,
                w.clause
            );
        }
    }
}

fn print_shell(d: &ShellDecision, explain: bool) {
    outln!("{:<5} {}", d.verdict.as_str(), d.line);
    if let Some(r) = &d.rejection {
        outln!("  cannot analyse [{}]: {}", r.code, r.message);
    }
    for p in &d.parts {
        print_decision(p, explain, "  ");
    }
}

//! The evaluator: pure, no I/O. canonicalise → index → conditions → decision.

use crate::canon::{canonical_path, canonical_path_cow};
use crate::decision::*;
use crate::ir::{Clause, CompiledRule, Cond, Val};
use crate::policy::PolicySet;
use crate::request::{PathOp, Request, RequestKind};
use crate::schema::{Attr, Method};
use crate::script::ScriptHost;
use contextos_grammar::ast::{CmpOp, Effect};

/// Switches for one evaluation; none of them changes the verdict.
#[derive(Debug, Clone, Copy, Default)]
pub struct EvalOptions {
    /// Collect why-not entries for candidate rules that did not apply.
    pub explain: bool,
}

/// Runtime value of an operand.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum V<'a> {
    Str(std::borrow::Cow<'a, str>),
    Int(i64),
    Bool(bool),
    List(std::borrow::Cow<'a, [String]>),
}

/// How a rule relates to a request once its head matched.
pub(crate) enum Applies {
    Yes,
    /// The index of the failing clause, or `None` for a role mismatch.
    No(Option<usize>),
}

/// Decides one request. This is the single decision path of ContextOS
/// ([`PolicySet::decide`] calls it).
pub(crate) fn decide(set: &PolicySet, req: &Request, opts: EvalOptions) -> Decision {
    if let RequestKind::Path(p) = &req.kind {
        if crate::outside::is_outside_spelling(&p.path) {
            return decide_outside(set, req, opts);
        }
    }
    let mut req = req.clone();
    if let Some(rejection) = canonicalise(&mut req) {
        return rejected(req, rejection);
    }
    let decision = decide_canonical(set, req, opts);
    // On a case-insensitive file system `.Claude/settings.json` is `.claude/settings.json`:
    // the folded spelling is decided too and wins when it is stricter.
    if let RequestKind::Path(p) = &decision.request.kind {
        if folds_to_governance(&p.path) {
            let mut folded = decision.request.clone();
            if let RequestKind::Path(fp) = &mut folded.kind {
                fp.path = fp.path.to_ascii_lowercase();
            }
            let request = decision.request.clone();
            let stricter = decide_canonical(set, folded, opts);
            if stricter.verdict > decision.verdict {
                return Decision {
                    request,
                    ..stricter
                };
            }
        }
    }
    decision
}

/// Whether a path is a case variant a case-insensitive file system would take for a
/// dot-directory or dot-file (`.Claude/…`, `.GIT/hooks`, `.CONTEXTOS/…`) or for
/// ContextOS's own root files (`CONTEXTOS.toml`). Only these are folded: folding every
/// name would change what conditions on `path.name` see (`README.md`).
fn folds_to_governance(path: &str) -> bool {
    if !path.bytes().any(|b| b.is_ascii_uppercase()) {
        return false;
    }
    path.split('/')
        .any(|seg| seg.starts_with('.') && seg.bytes().any(|b| b.is_ascii_uppercase()))
        || path.to_ascii_lowercase().starts_with("contextos.")
}

/// Decides a request already in canonical form.
fn decide_canonical(set: &PolicySet, req: Request, opts: EvalOptions) -> Decision {
    let candidates = set.index.candidates(&set.rules, &req);
    let rules: Vec<&CompiledRule> = candidates
        .into_iter()
        .filter_map(|i| set.rules.get(i))
        .filter(|r| head_matches(r, &req))
        .collect();
    finish(set, req, rules.into_iter(), opts)
}

/// Decides a path outside the project: only outside-anchored rules speak about it (see
/// [`crate::outside`]); without one, a read is asked and a write or delete denied.
fn decide_outside(set: &PolicySet, req: &Request, opts: EvalOptions) -> Decision {
    let mut req = req.clone();
    let RequestKind::Path(p) = &mut req.kind else {
        return decide_canonical(set, req, opts);
    };
    let op = p.op;
    match crate::outside::canonical_outside(&p.path) {
        Ok(c) => p.path = c,
        Err(e) => {
            return rejected(
                req,
                Rejection {
                    code: e.code.to_string(),
                    message: e.message,
                },
            )
        }
    }
    let path = p.path.clone();
    let candidates = set.index.candidates(&set.rules, &req);
    let rules: Vec<&CompiledRule> = candidates
        .into_iter()
        .filter_map(|i| set.rules.get(i))
        .filter(|r| crate::outside::rule_reaches(r, &path))
        .collect();
    let mut d = finish(set, req, rules.into_iter(), opts);
    if d.default_applied {
        d.verdict = crate::outside::unruled(op);
        d.default_applied = false;
        d.obligations.clear();
        d.rejection = Some(Rejection {
            code: "path.outside-project".into(),
            message: format!(
                "`{path}` is outside the project and no rule covers it, so it is {}",
                if op == PathOp::Read {
                    "asked"
                } else {
                    "refused"
                }
            ),
        });
    }
    d
}

/// Canonicalises the subject in place; `Some` when it must be rejected outright.
pub(crate) fn canonicalise(req: &mut Request) -> Option<Rejection> {
    match &mut req.kind {
        RequestKind::Path(p) => match canonical_path_cow(&p.path) {
            Ok(std::borrow::Cow::Borrowed(_)) => None,
            Ok(std::borrow::Cow::Owned(c)) => {
                p.path = c;
                None
            }
            Err(e) => Some(Rejection {
                code: e.code.to_string(),
                message: e.message,
            }),
        },
        RequestKind::Exec(e) if e.argv.is_empty() => Some(Rejection {
            code: "exec.empty".into(),
            message: "the command is empty".into(),
        }),
        RequestKind::Commit(c) => {
            for f in c.files.iter_mut() {
                match canonical_path(f) {
                    Ok(p) => *f = p,
                    Err(e) => {
                        return Some(Rejection {
                            code: e.code.to_string(),
                            message: format!("{f:?}: {}", e.message),
                        })
                    }
                }
            }
            None
        }
        RequestKind::Net(n) => crate::net::canonicalise(n).err().map(|e| Rejection {
            code: e.code.to_string(),
            message: e.message,
        }),
        RequestKind::Mcp(m) if m.server.is_empty() || m.tool.is_empty() => Some(Rejection {
            code: "mcp.bad-tool".into(),
            message: format!(
                "the MCP call names no {}",
                if m.server.is_empty() {
                    "server"
                } else {
                    "tool"
                }
            ),
        }),
        _ => None,
    }
}

pub(crate) fn rejected(req: Request, rejection: Rejection) -> Decision {
    Decision {
        domain: req.domain(),
        verdict: Effect::Deny,
        request: req,
        decided_by: Vec::new(),
        overruled: Vec::new(),
        default_applied: false,
        obligations: Vec::new(),
        rejection: Some(rejection),
        errors: Vec::new(),
        why_not: Vec::new(),
    }
}

/// Exec heads are verified against the full pattern (the trie only narrows by prefix).
/// A pattern that cannot be compiled is taken to match a deny/ask rule and not to match
/// an allow rule: the stricter outcome.
pub(crate) fn head_matches(r: &CompiledRule, req: &Request) -> bool {
    match &req.kind {
        RequestKind::Exec(e) => {
            r.exec_patterns.is_empty()
                || r.exec_patterns
                    .iter()
                    .any(|p| p.matches(&e.argv).unwrap_or(r.effect != Effect::Allow))
        }
        _ => true,
    }
}

/// Combines the candidate rules whose heads matched into a decision.
pub(crate) fn finish<'a>(
    set: &PolicySet,
    req: Request,
    rules: impl Iterator<Item = &'a CompiledRule>,
    opts: EvalOptions,
) -> Decision {
    let mut matched: Vec<&CompiledRule> = Vec::new();
    let mut errors = Vec::new();
    let mut why_not = Vec::new();
    for r in rules {
        match applies(&set.scripts, r, &req, &mut errors) {
            Applies::Yes => matched.push(r),
            Applies::No(clause) if opts.explain => {
                let (text, origin) = match clause.and_then(|i| r.clauses.get(i)) {
                    Some(c) => (
                        format!(
                            "{} {}",
                            c.text,
                            if c.negated { "held" } else { "did not hold" }
                        ),
                        c.origin.clone(),
                    ),
                    None => (
                        format!("applies only to role {:?}", r.role.as_deref().unwrap_or("")),
                        r.origin.clone(),
                    ),
                };
                why_not.push(WhyNot {
                    rule: RuleHit::of(r),
                    clause: text,
                    origin,
                });
            }
            Applies::No(_) => {}
        }
    }
    let verdict = matched.iter().map(|r| r.effect).max();
    let default_applied = verdict.is_none();
    let verdict = verdict.unwrap_or_else(|| set.defaults[req.domain().index()]);
    // Obligations of every matched allow/ask rule are kept, not only the deciding ones:
    // an `ask` that a human approves must still run under the sandbox an allow rule demanded.
    let obligations = match verdict {
        Effect::Deny => Vec::new(),
        _ => matched
            .iter()
            .flat_map(|r| r.obligations.iter().cloned())
            .collect(),
    };
    let hits = |deciding: bool| {
        matched
            .iter()
            .filter(|r| (r.effect == verdict) == deciding)
            .map(|r| RuleHit::of(r))
            .collect()
    };
    Decision {
        domain: req.domain(),
        verdict,
        decided_by: hits(true),
        overruled: hits(false),
        request: req,
        default_applied,
        obligations,
        rejection: None,
        errors,
        why_not,
    }
}

/// Role filter, then every `when` must hold and no `unless` may hold. An error in a
/// clause resolves to the stricter outcome: a deny/ask rule applies, an allow rule does not.
pub(crate) fn applies(
    scripts: &ScriptHost,
    r: &CompiledRule,
    req: &Request,
    errors: &mut Vec<EvalError>,
) -> Applies {
    if let Some(role) = &r.role {
        if req.role.as_deref() != Some(role.as_str()) {
            return Applies::No(None);
        }
    }
    for (i, c) in r.clauses.iter().enumerate() {
        match clause_holds(scripts, c, req) {
            Ok(true) => {}
            Ok(false) => return Applies::No(Some(i)),
            Err(message) => {
                let strict = r.effect != Effect::Allow;
                errors.push(EvalError {
                    rule: r.id.clone(),
                    message,
                    resolved_as: if strict { "applied" } else { "not applied" },
                });
                if !strict {
                    return Applies::No(Some(i));
                }
            }
        }
    }
    Applies::Yes
}

pub(crate) fn clause_holds(
    scripts: &ScriptHost,
    c: &Clause,
    req: &Request,
) -> Result<bool, String> {
    cond(scripts, &c.cond, req).map(|b| b != c.negated)
}

fn cond(scripts: &ScriptHost, c: &Cond, req: &Request) -> Result<bool, String> {
    Ok(match c {
        Cond::Or(items) => {
            for i in items {
                if cond(scripts, i, req)? {
                    return Ok(true);
                }
            }
            false
        }
        Cond::And(items) => {
            for i in items {
                if !cond(scripts, i, req)? {
                    return Ok(false);
                }
            }
            true
        }
        Cond::Not(inner) => !cond(scripts, inner, req)?,
        Cond::Truthy(v) => matches!(val(v, req)?, V::Bool(true)),
        Cond::Script(i) => scripts.eval(*i, req)?,
        Cond::Matches(lhs, globs) => match val(lhs, req)? {
            V::Str(s) => globs.is_match(&s)?,
            V::List(l) => {
                let mut any = false;
                for s in l.iter() {
                    if globs.is_match(s)? {
                        any = true;
                        break;
                    }
                }
                any
            }
            other => return Err(format!("cannot match {other:?} against globs")),
        },
        Cond::Cmp(l, op, r) => compare(val(l, req)?, *op, val(r, req)?)?,
    })
}

fn compare(l: V, op: CmpOp, r: V) -> Result<bool, String> {
    Ok(match (op, &l, &r) {
        (CmpOp::Eq, _, _) => l == r,
        (CmpOp::Ne, _, _) => l != r,
        (CmpOp::Lt, V::Int(a), V::Int(b)) => a < b,
        (CmpOp::Le, V::Int(a), V::Int(b)) => a <= b,
        (CmpOp::Gt, V::Int(a), V::Int(b)) => a > b,
        (CmpOp::Ge, V::Int(a), V::Int(b)) => a >= b,
        (CmpOp::In, V::Str(s), V::List(l)) => l.iter().any(|x| x == s),
        (CmpOp::Contains, V::List(l), V::Str(s)) => l.iter().any(|x| x == s),
        (CmpOp::Contains, V::Str(h), V::Str(n)) => h.contains(n.as_ref()),
        _ => return Err(format!("cannot apply `{}` to {l:?} and {r:?}", op.as_str())),
    })
}

fn val<'a>(v: &'a Val, req: &'a Request) -> Result<V<'a>, String> {
    use std::borrow::Cow;
    Ok(match v {
        Val::Str(s) => V::Str(Cow::Borrowed(s)),
        Val::Int(i) => V::Int(*i),
        Val::Bool(b) => V::Bool(*b),
        Val::List(l) => V::List(Cow::Borrowed(l)),
        Val::Attr(a) => attr(*a, req)?,
        Val::Call(m, recv, args) => {
            let recv = val(recv, req)?;
            let arg = match args.first() {
                Some(a) => Some(val(a, req)?),
                None => None,
            };
            match (m, &recv, &arg) {
                (Method::Len, V::Str(s), None) => {
                    V::Int(i64::try_from(s.chars().count()).unwrap_or(i64::MAX))
                }
                (Method::Len, V::List(l), None) => {
                    V::Int(i64::try_from(l.len()).unwrap_or(i64::MAX))
                }
                (Method::StartsWith, V::Str(s), Some(V::Str(p))) => {
                    V::Bool(s.starts_with(p.as_ref()))
                }
                (Method::EndsWith, V::Str(s), Some(V::Str(p))) => V::Bool(s.ends_with(p.as_ref())),
                (Method::Contains, V::Str(s), Some(V::Str(p))) => V::Bool(s.contains(p.as_ref())),
                (Method::Contains, V::List(l), Some(V::Str(p))) => {
                    V::Bool(l.iter().any(|x| x == p))
                }
                (Method::SignedBy, V::Str(s), Some(V::Str(k))) => V::Bool(!s.is_empty() && s == k),
                _ => return Err(format!("method {m:?} cannot be applied here")),
            }
        }
    })
}

fn attr<'a>(a: Attr, req: &'a Request) -> Result<V<'a>, String> {
    use std::borrow::Cow;
    let s = |x: &'a str| V::Str(Cow::Borrowed(x));
    let owned = |x: String| V::Str(Cow::Owned(x));
    Ok(match (a, &req.kind) {
        (Attr::Role, _) => s(req.role.as_deref().unwrap_or("")),
        (Attr::PathPath, RequestKind::Path(p)) => s(&p.path),
        (Attr::PathOp, RequestKind::Path(p)) => s(p.op.as_str()),
        (Attr::PathName, RequestKind::Path(p)) => s(p.path.rsplit('/').next().unwrap_or("")),
        (Attr::PathExt, RequestKind::Path(p)) => {
            let name = p.path.rsplit('/').next().unwrap_or("");
            s(match name.rfind('.') {
                Some(0) | None => "",
                Some(i) => &name[i + 1..],
            })
        }
        (Attr::ExecArgv, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.argv)),
        (Attr::ExecProgram, RequestKind::Exec(e)) => s(e
            .argv
            .first()
            .map(|a| contextos_shell::basename(a))
            .unwrap_or("")),
        (Attr::ExecArgs, RequestKind::Exec(e)) => {
            V::List(Cow::Borrowed(e.argv.get(1..).unwrap_or(&[])))
        }
        (Attr::ExecLine, RequestKind::Exec(e)) => owned(e.argv.join(" ")),
        (Attr::ExecPipedFrom, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.piped_from)),
        (Attr::ExecEnv, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.env)),
        (Attr::ExecEnvNames, RequestKind::Exec(e)) => V::List(Cow::Owned(
            e.env
                .iter()
                .map(|a| a.split_once('=').map_or(a.as_str(), |(n, _)| n))
                .map(|n| n.trim_end_matches('+').to_string())
                .collect(),
        )),
        (Attr::ExecCwd, RequestKind::Exec(e)) => s(&e.cwd),
        (Attr::ExecReads, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.reads)),
        (Attr::ExecWrites, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.writes)),
        (Attr::ExecNetwork, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.network)),
        (Attr::ExecHosts, RequestKind::Exec(e)) => V::List(Cow::Owned(
            e.network
                .iter()
                .filter_map(|d| crate::net::host_of(d))
                .collect(),
        )),
        (Attr::ExecRuns, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.runs)),
        (Attr::ExecCode, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.code)),
        (Attr::ExecOptions, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.options)),
        (Attr::ExecSubcommand, RequestKind::Exec(e)) => owned(e.subcommand.join(" ")),
        (Attr::ExecOperands, RequestKind::Exec(e)) => V::List(Cow::Borrowed(&e.operands)),
        (Attr::ExecOpaque, RequestKind::Exec(e)) => V::Bool(!e.opaque.is_empty()),
        (Attr::ExecModelled, RequestKind::Exec(e)) => V::Bool(e.modelled),
        (Attr::PluginName, RequestKind::Plugin(p)) => s(&p.name),
        (Attr::PluginSource, RequestKind::Plugin(p)) => s(&p.source),
        (Attr::PluginVersion, RequestKind::Plugin(p)) => s(&p.version),
        (Attr::PluginDigest, RequestKind::Plugin(p)) => s(&p.digest),
        (Attr::PluginSigner, RequestKind::Plugin(p)) => s(p.signer.as_deref().unwrap_or("")),
        (Attr::PluginSigned, RequestKind::Plugin(p)) => {
            V::Bool(p.signer.as_deref().is_some_and(|k| !k.is_empty()))
        }
        (Attr::PluginFindings, RequestKind::Plugin(p)) => V::List(Cow::Borrowed(&p.findings)),
        (Attr::CommitFiles, RequestKind::Commit(c)) => V::List(Cow::Borrowed(&c.files)),
        (Attr::CommitFindings, RequestKind::Commit(c)) => V::List(Cow::Borrowed(&c.findings)),
        (Attr::CommitMessage, RequestKind::Commit(c)) => s(&c.message),
        (Attr::CommitKind, RequestKind::Commit(c)) => s(&c.kind),
        (Attr::CommitSeverity, RequestKind::Commit(c)) => s(&c.severity),
        (Attr::CommitHostUnsafe, RequestKind::Commit(c)) => V::Bool(c.host_unsafe),
        (Attr::CommitAutoMerge, RequestKind::Commit(c)) => V::Bool(c.auto_merge),
        (Attr::NetUrl, RequestKind::Net(n)) => s(&n.target),
        (Attr::NetHost, RequestKind::Net(n)) => s(&n.host),
        (Attr::NetPort, RequestKind::Net(n)) => V::Int(i64::from(n.port)),
        (Attr::NetScheme, RequestKind::Net(n)) => s(&n.scheme),
        (Attr::NetMethod, RequestKind::Net(n)) => s(&n.method),
        (Attr::NetTool, RequestKind::Net(n)) => s(&n.tool),
        (Attr::NetOp, RequestKind::Net(n)) => s(n.op.as_str()),
        (Attr::NetCarries, RequestKind::Net(n)) => V::List(Cow::Borrowed(&n.carries)),
        (Attr::NetSends, RequestKind::Net(n)) => V::List(Cow::Borrowed(&n.sends)),
        (Attr::NetDynamic, RequestKind::Net(n)) => V::Bool(n.dynamic),
        (Attr::NetIp, RequestKind::Net(n)) => V::Bool(crate::net::is_ip(&n.host)),
        (Attr::McpServer, RequestKind::Mcp(m)) => s(&m.server),
        (Attr::McpTool, RequestKind::Mcp(m)) => s(&m.tool),
        (Attr::McpToolWords, RequestKind::Mcp(m)) => V::List(Cow::Owned(m.tool_words())),
        (Attr::McpArgs, RequestKind::Mcp(m)) => s(&m.args),
        (Attr::McpCarries, RequestKind::Mcp(m)) => V::List(Cow::Borrowed(&m.carries)),
        (Attr::McpListed, RequestKind::Mcp(m)) => V::Bool(m.listed),
        (Attr::McpTrusted, RequestKind::Mcp(m)) => V::Bool(m.trusted),
        (Attr::McpDefinition, RequestKind::Mcp(m)) => s(&m.definition),
        (Attr::SessionTainted, _) => V::Bool(req.session.as_ref().is_some_and(|s| s.tainted)),
        (Attr::SessionTaintSources, _) => match &req.session {
            Some(sess) => V::List(Cow::Borrowed(&sess.taint_sources)),
            None => V::List(Cow::Owned(Vec::new())),
        },
        (a, _) => {
            return Err(format!(
                "attribute {a:?} is not part of a {} request",
                req.domain()
            ))
        }
    })
}

/// Reference evaluator for differential tests: visits every rule, matching heads with
/// freshly compiled globs instead of the index. Same clause semantics.
pub fn decide_naive(set: &PolicySet, req: &Request) -> Decision {
    let mut req = req.clone();
    if let Some(rejection) = canonicalise(&mut req) {
        return rejected(req, rejection);
    }
    let domain = req.domain();
    let rules: Vec<&CompiledRule> = set
        .rules
        .iter()
        .filter(|r| r.domain == domain && naive_head(r, &req))
        .collect();
    finish(set, req, rules.into_iter(), EvalOptions::default())
}

fn naive_head(r: &CompiledRule, req: &Request) -> bool {
    let any_glob = |subject: &str| {
        r.patterns.is_empty()
            || r.patterns
                .iter()
                .flat_map(|p| crate::glob::head_globs(p))
                .any(|p| {
                    crate::glob::path_glob(p).is_ok_and(|g| g.compile_matcher().is_match(subject))
                })
    };
    match &req.kind {
        RequestKind::Path(p) => r.ops & (1 << (p.op as u8)) != 0 && any_glob(&p.path),
        RequestKind::Plugin(p) => any_glob(&p.name),
        RequestKind::Commit(c) => r.patterns.is_empty() || c.files.iter().any(|f| any_glob(f)),
        RequestKind::Exec(_) => head_matches(r, req),
        RequestKind::Net(n) => {
            r.ops & (1 << (n.op as u8)) != 0
                && (r.patterns.is_empty()
                    || r.patterns.iter().any(|p| match crate::net::cidr(p) {
                        Some(net) => n
                            .host
                            .parse::<std::net::IpAddr>()
                            .is_ok_and(|ip| net.contains(&ip)),
                        None => any_glob(&n.host),
                    }))
        }
        RequestKind::Mcp(m) => any_glob(&m.subject()),
    }
}

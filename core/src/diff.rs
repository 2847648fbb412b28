//! What a policy change does: which verdicts two policy sets give differently, and whether
//! each difference widens (`deny` → `ask`/`allow`, `ask` → `allow`) or tightens.
//!
//! Two sources of requests are compared. [`symbolic`] enumerates witnesses from the
//! patterns of both sets — every path and exec head pattern, the globs and literals their
//! conditions name, for every operation and every role either set knows — and decides
//! each under both sets. A region whose verdict changes contains at least one of those
//! witnesses whenever the change is in a head pattern, an effect, a removed or added rule
//! or a condition over a literal the policies name; a change hidden in a script or in an
//! attribute no literal names can escape it, which is why [`compare`] also replays real
//! requests (a corpus, the decision log). Pure: no I/O.

use crate::decision::{RuleHit, ShellDecision};
use crate::eval::EvalOptions;
use crate::glob::{head_globs, samples};
use crate::ir::{CompiledRule, Cond, ExecPattern, Val, Word};
use crate::policy::PolicySet;
use crate::request::{Domain, PathOp, Request, RequestKind};
use crate::schema::Attr;
use crate::shell_decide::ShellOptions;
use contextos_grammar::ast::{CmpOp, Effect};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The annotation value that accepts a widening (`@accept("widening")`).
pub const ACCEPT_WIDENING: &str = "widening";

/// One request to decide under both sets.
#[derive(Debug, Clone)]
pub enum Probe {
    /// A request decided as it is (exec requests: as argv through the shell model).
    Request(Box<Request>),
    /// A shell line, as the hook decides one.
    Shell {
        /// The line.
        line: String,
        /// The role it runs as.
        role: Option<String>,
    },
}

impl Probe {
    fn describe(&self) -> (Domain, Option<PathOp>, String, Option<String>) {
        match self {
            Probe::Shell { line, role } => (Domain::Exec, None, line.clone(), role.clone()),
            Probe::Request(r) => {
                let (op, subject) = match &r.kind {
                    RequestKind::Path(p) => (Some(p.op), p.path.clone()),
                    RequestKind::Exec(e) => (None, contextos_shell::quote(&e.argv)),
                    RequestKind::Plugin(p) => (None, p.name.clone()),
                    RequestKind::Commit(c) => (None, c.files.join(" ")),
                    RequestKind::Net(n) => (None, format!("{} {}", n.op.as_str(), n.target)),
                    RequestKind::Mcp(m) => (None, m.subject()),
                };
                (r.domain(), op, subject, r.role.clone())
            }
        }
    }
}

/// A verdict and the rules that gave it (none: the domain's default).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Effect,
    /// Ids of the deciding rules; empty when the default decided.
    pub rules: Vec<String>,
}

/// Whether a change makes a verdict weaker or stronger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// `deny` → `ask`/`allow`, or `ask` → `allow`.
    Widening,
    /// The other way.
    Tightening,
    /// Same verdict, decided by other rules.
    Rerouted,
}

/// A request that shows a change.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Witness {
    /// The subject: a path, a command line, a host.
    pub subject: String,
    /// The role it was decided as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// The requests whose verdict changes the same way, decided by the same rule pair.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Widening, tightening, or the same verdict from other rules.
    pub direction: Direction,
    /// The domain of the requests.
    pub domain: Domain,
    /// The path operation, for path requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<PathOp>,
    /// Under the old set.
    pub from: Outcome,
    /// Under the new set.
    pub to: Outcome,
    /// A rule taking part carries `@accept("widening")` in the new set: the new deciding
    /// rule, or the old deciding rule as the new set has it.
    pub accepted: bool,
    /// The requests that show it, in order.
    pub witnesses: Vec<Witness>,
}

type Key = (Domain, Option<PathOp>, Outcome, Outcome);

/// The changes of verdict between `old` and `new` over witnesses drawn from both sets'
/// patterns. Changes of deciding rule alone (same verdict) are kept when `rerouted`.
pub fn symbolic(old: &PolicySet, new: &PolicySet, rerouted: bool) -> Vec<Change> {
    compare(old, new, &witnesses(old, new), rerouted)
}

/// The changes of verdict between `old` and `new` over `probes`.
pub fn compare(old: &PolicySet, new: &PolicySet, probes: &[Probe], rerouted: bool) -> Vec<Change> {
    let mut groups: BTreeMap<Key, BTreeSet<Witness>> = BTreeMap::new();
    for p in probes {
        let a = outcome(old, p);
        let b = outcome(new, p);
        if a == b || (a.verdict == b.verdict && !rerouted) {
            continue;
        }
        let (domain, op, subject, role) = p.describe();
        groups
            .entry((domain, op, a, b))
            .or_default()
            .insert(Witness { subject, role });
    }
    let mut out: Vec<Change> = groups
        .into_iter()
        .map(|((domain, op, from, to), ws)| {
            let direction = match to.verdict.cmp(&from.verdict) {
                std::cmp::Ordering::Less => Direction::Widening,
                std::cmp::Ordering::Greater => Direction::Tightening,
                std::cmp::Ordering::Equal => Direction::Rerouted,
            };
            let accepts = |id: &String| {
                new.rule(id)
                    .is_some_and(|r| r.accepts.iter().any(|a| a == ACCEPT_WIDENING))
            };
            let accepted = to.rules.iter().chain(&from.rules).any(accepts);
            let mut witnesses: Vec<Witness> = ws.into_iter().collect();
            // Shortest first: the simplest request that shows the change leads.
            witnesses.sort_by(|x, y| {
                (x.subject.len(), &x.subject, &x.role).cmp(&(y.subject.len(), &y.subject, &y.role))
            });
            Change {
                direction,
                domain,
                op,
                from,
                to,
                accepted,
                witnesses,
            }
        })
        .collect();
    out.sort_by_key(|c| c.direction);
    out
}

fn ids(hits: Vec<&RuleHit>) -> Vec<String> {
    let set: BTreeSet<String> = hits.into_iter().map(|h| h.id.clone()).collect();
    set.into_iter().collect()
}

fn shell_outcome(d: &ShellDecision) -> Outcome {
    Outcome {
        verdict: d.verdict,
        rules: ids(d.decided_by()),
    }
}

/// The verdict of one probe under `set`, as `decide` would give it.
pub fn outcome(set: &PolicySet, p: &Probe) -> Outcome {
    let opts = ShellOptions::default();
    match p {
        Probe::Shell { line, role } => {
            shell_outcome(&set.decide_shell(line, role.as_deref(), opts))
        }
        Probe::Request(r) => match &r.kind {
            RequestKind::Exec(e) if is_argv_only(e) => {
                let opts = ShellOptions {
                    session: r.session.as_ref(),
                    ..opts
                };
                shell_outcome(&set.decide_argv(&e.argv, r.role.as_deref(), opts))
            }
            _ => {
                let d = set.decide(r, EvalOptions::default());
                Outcome {
                    verdict: d.verdict,
                    rules: ids(d.decided_by.iter().collect()),
                }
            }
        },
    }
}

/// An exec request that carries nothing but its words: the shell model fills in the rest
/// (options, subcommand, file effects), as `decide exec -- ARGV` does.
pub fn is_argv_only(e: &crate::request::ExecRequest) -> bool {
    let bare = crate::request::ExecRequest {
        argv: e.argv.clone(),
        ..crate::request::ExecRequest::default()
    };
    *e == bare
}

/// The roles to try: none, every role block, every role a condition names.
pub fn roles_of(sets: &[&PolicySet]) -> Vec<Option<String>> {
    let mut roles = BTreeSet::new();
    for s in sets {
        roles.extend(s.known_roles());
    }
    std::iter::once(None)
        .chain(roles.into_iter().map(Some))
        .collect()
}

/// Witness requests from both sets' path and exec patterns, for every op and role, kept
/// only where a rule that differs between the sets (or a changed default) could speak:
/// elsewhere both sets decide alike by construction.
pub fn witnesses(old: &PolicySet, new: &PolicySet) -> Vec<Probe> {
    let mut paths = BTreeSet::new();
    let mut argvs = BTreeSet::new();
    for r in old.rules.iter().chain(&new.rules) {
        match r.domain {
            Domain::Path => {
                for p in &r.patterns {
                    paths.extend(path_witnesses(p));
                }
                let mut globs = BTreeSet::new();
                for c in &r.clauses {
                    clause_paths(&c.cond, &mut paths);
                    clause_globs(&c.cond, &mut globs);
                }
                // Where a head and a condition glob meet (`"**/.env" unless path matches
                // "test/**"` meets in `test/.env`): one inside the other's directory.
                for g in &globs {
                    for p in &r.patterns {
                        paths.extend(inside(g, p));
                        paths.extend(inside(p, g));
                    }
                }
            }
            Domain::Exec => {
                let mut extra = BTreeSet::new();
                for c in &r.clauses {
                    clause_words(&c.cond, &mut extra);
                }
                for p in &r.exec_patterns {
                    argvs.extend(exec_witnesses(p, &extra));
                }
            }
            _ => {}
        }
    }
    paths.retain(|p| !p.is_empty());
    let changed = Changed::between(old, new);
    let roles = roles_of(&[old, new]);
    let mut out = Vec::new();
    for role in &roles {
        for path in &paths {
            for op in [PathOp::Read, PathOp::Write, PathOp::Delete] {
                let req = Request::path(op, path.clone()).with_role(role.clone());
                if changed.reaches(&req) {
                    out.push(Probe::Request(Box::new(req)));
                }
            }
        }
        for argv in &argvs {
            let req = Request::exec(argv.iter().cloned()).with_role(role.clone());
            if changed.reaches(&req) {
                out.push(Probe::Request(Box::new(req)));
            }
        }
    }
    out
}

/// The rules of either set that the other does not have exactly, and the domains whose
/// default changed.
struct Changed<'a> {
    /// Each changed rule with its head globs compiled once (`None`: one does not compile,
    /// taken to match).
    rules: Vec<(&'a CompiledRule, Option<Vec<globset::GlobMatcher>>)>,
    defaults: Vec<Domain>,
}

impl<'a> Changed<'a> {
    fn between(old: &'a PolicySet, new: &'a PolicySet) -> Changed<'a> {
        let sig = |set: &PolicySet, r: &CompiledRule| {
            let clauses: Vec<String> = r
                .clauses
                .iter()
                .map(|c| {
                    format!(
                        "{}{}",
                        c.negated,
                        serde_json::to_string(&c.cond).unwrap_or_else(|_| c.text.clone())
                    )
                })
                .collect();
            let scripts = if r.analyzable {
                String::new()
            } else {
                format!("{:?}", set.scripts.sources())
            };
            format!(
                "{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}|{}",
                r.id, r.effect, r.domain, r.ops, r.role, r.patterns, clauses, scripts
            )
        };
        let old_sigs: BTreeSet<String> = old.rules.iter().map(|r| sig(old, r)).collect();
        let new_sigs: BTreeSet<String> = new.rules.iter().map(|r| sig(new, r)).collect();
        let mut rules: Vec<&CompiledRule> = old
            .rules
            .iter()
            .filter(|r| !new_sigs.contains(&sig(old, r)))
            .collect();
        rules.extend(
            new.rules
                .iter()
                .filter(|r| !old_sigs.contains(&sig(new, r))),
        );
        let rules = rules
            .into_iter()
            .map(|r| {
                let globs = r
                    .patterns
                    .iter()
                    .flat_map(|g| head_globs(g))
                    .map(|g| crate::glob::path_glob(g).map(|g| g.compile_matcher()))
                    .collect::<Result<Vec<_>, _>>()
                    .ok();
                (r, globs)
            })
            .collect();
        let defaults = [Domain::Path, Domain::Exec, Domain::Net, Domain::Mcp]
            .into_iter()
            .filter(|d| old.default_for(*d) != new.default_for(*d))
            .collect();
        Changed { rules, defaults }
    }

    /// Whether a changed rule or default could take part in deciding `req`. An exec
    /// request is also decided through the paths, hosts and calls it reaches, so any
    /// changed rule outside `exec` reaches every command.
    fn reaches(&self, req: &Request) -> bool {
        let domain = req.domain();
        if self.defaults.contains(&domain) || (domain == Domain::Exec && !self.defaults.is_empty())
        {
            return true;
        }
        let hits = |globs: &Option<Vec<globset::GlobMatcher>>, r: &CompiledRule, s: &str| {
            r.patterns.is_empty()
                || globs
                    .as_ref()
                    .is_none_or(|gs| gs.iter().any(|g| g.is_match(s)))
        };
        self.rules.iter().any(|(r, globs)| match &req.kind {
            RequestKind::Path(p) => {
                r.domain == Domain::Path
                    && r.ops & (1 << (p.op as u8)) != 0
                    && (crate::outside::is_outside_spelling(&p.path) || hits(globs, r, &p.path))
            }
            RequestKind::Exec(e) => match r.domain {
                Domain::Exec => crate::eval::head_matches(r, req),
                // Through a file the command names (`rm secrets/x`, `> out.txt`).
                Domain::Path => e
                    .argv
                    .iter()
                    .skip(1)
                    .any(|w| hits(globs, r, w.trim_start_matches("./"))),
                // Through a host or URL it names.
                Domain::Net => e.argv.iter().skip(1).any(|w| w.contains('.')),
                _ => true,
            },
            _ => r.domain == domain,
        })
    }
}

/// Paths a head pattern matches: `**` as nothing and as one directory, `*` as nothing
/// and as a letter (see [`samples`]); a `DIR/**` pattern also names `DIR`.
pub fn path_witnesses(pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    for g in head_globs(pattern) {
        for expanded in double_star(g) {
            for s in samples(&expanded) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// `g` with each `**` segment replaced by nothing and by `x` (all alike).
fn double_star(g: &str) -> Vec<String> {
    if !g.contains("**") {
        return vec![g.to_string()];
    }
    let none = g
        .replace("/**/", "/")
        .trim_start_matches("**/")
        .trim_end_matches("/**")
        .replace("**", "x");
    let one = g.replace("**", "x");
    let two = g.replace("**", "x/x");
    let mut out = vec![none];
    for s in [one, two] {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Globs and literals a path rule's conditions compare the path with.
fn clause_paths(c: &Cond, out: &mut BTreeSet<String>) {
    match c {
        Cond::Or(v) | Cond::And(v) => v.iter().for_each(|c| clause_paths(c, out)),
        Cond::Not(inner) => clause_paths(inner, out),
        Cond::Matches(lhs, globs) if matches!(**lhs, Val::Attr(Attr::PathPath)) => {
            for g in globs.patterns() {
                out.extend(path_witnesses(g));
            }
        }
        Cond::Cmp(a, _, b) => {
            if let (Val::Attr(Attr::PathPath), Val::Str(s))
            | (Val::Str(s), Val::Attr(Attr::PathPath)) = (&**a, &**b)
            {
                out.insert(s.clone());
            }
        }
        _ => {}
    }
}

/// Globs a path rule's conditions match the path against.
fn clause_globs(c: &Cond, out: &mut BTreeSet<String>) {
    match c {
        Cond::Or(v) | Cond::And(v) => v.iter().for_each(|c| clause_globs(c, out)),
        Cond::Not(inner) => clause_globs(inner, out),
        Cond::Matches(lhs, globs) if matches!(**lhs, Val::Attr(Attr::PathPath)) => {
            out.extend(globs.patterns().iter().cloned());
        }
        _ => {}
    }
}

/// Witnesses of `inner` placed inside the directory `outer` names (`outer` = `DIR/**`).
fn inside(outer: &str, inner: &str) -> Vec<String> {
    let Some(dir) = outer.strip_suffix("/**") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in double_star(dir).iter().flat_map(|d| samples(d)) {
        for w in path_witnesses(inner) {
            let w = w.trim_start_matches('/');
            if !w.is_empty() {
                out.push(format!("{d}/{w}"));
            }
        }
    }
    out
}

/// Words an exec rule's conditions name (`exec.options contains "--force"`), which a
/// witness then carries as one more argument.
fn clause_words(c: &Cond, out: &mut BTreeSet<String>) {
    match c {
        Cond::Or(v) | Cond::And(v) => v.iter().for_each(|c| clause_words(c, out)),
        Cond::Not(inner) => clause_words(inner, out),
        Cond::Cmp(a, op, b) => {
            let exec_attr = |v: &Val| {
                matches!(
                    v,
                    Val::Attr(
                        Attr::ExecArgv
                            | Attr::ExecArgs
                            | Attr::ExecOptions
                            | Attr::ExecOperands
                            | Attr::ExecSubcommand
                    )
                )
            };
            if !matches!(op, CmpOp::Eq | CmpOp::Ne | CmpOp::In | CmpOp::Contains) {
                return;
            }
            let (lit, other) = match (&**a, &**b) {
                (Val::Str(s), o) | (o, Val::Str(s)) => (vec![s.clone()], o),
                (Val::List(l), o) | (o, Val::List(l)) => (l.clone(), o),
                _ => return,
            };
            if exec_attr(other) {
                out.extend(lit.into_iter().filter(|w| !w.contains(' ')));
            }
        }
        Cond::Matches(lhs, globs)
            if matches!(
                **lhs,
                Val::Attr(Attr::ExecArgs | Attr::ExecArgv | Attr::ExecOperands)
            ) =>
        {
            for g in globs.patterns() {
                out.extend(samples(g));
            }
        }
        _ => {}
    }
}

/// Commands an exec pattern matches: each glob word as its samples, and after a `*` rest
/// also one more word and each word the rule's conditions name.
pub fn exec_witnesses(p: &ExecPattern, extra: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for pick in 0..2 {
        let argv: Vec<String> = p
            .words
            .iter()
            .map(|w| match w {
                Word::Literal(l) => l.clone(),
                Word::Glob(g) => {
                    let s = samples(g.pattern());
                    s.get(pick)
                        .or_else(|| s.first())
                        .cloned()
                        .unwrap_or_else(|| "x".into())
                }
            })
            .map(|w| if w.is_empty() { "x".into() } else { w })
            .collect();
        if argv.is_empty() {
            continue;
        }
        let mut variants = vec![argv.clone()];
        if p.rest {
            variants.push(argv.iter().cloned().chain(["x".to_string()]).collect());
            for w in extra {
                variants.push(argv.iter().cloned().chain([w.clone()]).collect());
                variants.push(
                    argv.iter()
                        .cloned()
                        .chain(["x".to_string(), w.clone()])
                        .collect(),
                );
            }
        }
        for v in variants {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

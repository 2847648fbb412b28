//! Explanations beyond the verdict: one rule against one request (`explain --rule`), and
//! the "near misses" — rules whose head pattern did not match, with a hint when the
//! pattern almost did (`*` does not cross `/`; options matched in order). Pure: no I/O.

use crate::decision::{RuleHit, WhyNot};
use crate::eval::{canonicalise, clause_holds, head_matches, EvalOptions};
use crate::glob::{has_glob_meta, head_globs, path_glob};
use crate::ir::{CompiledRule, Cond, ExecPattern, Val, Word};
use crate::policy::PolicySet;
use crate::request::{Domain, Request, RequestKind};
use crate::schema::{Attr, ATTRS, METHODS};
use serde::Serialize;

/// One clause of a rule, resolved and evaluated against a request.
#[derive(Debug, Clone, Serialize)]
pub struct ClauseTrace {
    /// The clause as written (`when exec.program in $shells`).
    pub text: String,
    /// The condition with every `$var` replaced by its values.
    pub resolved: String,
    /// Whether the condition held (for `unless`, holding keeps the rule from applying);
    /// `None` when it could not be evaluated.
    pub held: Option<bool>,
    /// `unless`: the rule applies only when it does not hold.
    pub negated: bool,
    /// The evaluation error, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One rule against one request: its head as compiled, each clause, and the outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RuleTrace {
    /// The rule.
    pub rule: RuleHit,
    /// `effect domain ops patterns`, with `$vars` resolved.
    pub head: String,
    /// The request's domain (and op) is the rule's.
    #[serde(rename = "domainMatched")]
    pub domain_matched: bool,
    /// A head pattern matches the request's subject.
    #[serde(rename = "headMatched")]
    pub head_matched: bool,
    /// Why the head did not match, with a hint when the pattern almost did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The rule's role block, when the request does not carry that role.
    #[serde(rename = "roleMismatch", skip_serializing_if = "Option::is_none")]
    pub role_mismatch: Option<String>,
    /// Every clause in order.
    pub clauses: Vec<ClauseTrace>,
    /// The rule applied to the request (it then took part in the decision).
    pub applied: bool,
}

/// How `rule` relates to `req` (which is canonicalised first, as the evaluator does).
pub fn trace_rule(set: &PolicySet, rule: &CompiledRule, req: &Request) -> RuleTrace {
    let mut req = req.clone();
    let _ = canonicalise(&mut req);
    let domain_matched = rule.domain == req.domain()
        && match &req.kind {
            RequestKind::Path(p) => rule.ops & (1 << (p.op as u8)) != 0,
            RequestKind::Net(n) => rule.ops & (1 << (n.op as u8)) != 0,
            _ => true,
        };
    let head_matched = domain_matched && head_hits(rule, &req);
    let hint = if domain_matched && !head_matched {
        Some(miss_hint(rule, &req).unwrap_or_else(|| "no head pattern matches".into()))
    } else if !domain_matched {
        Some(format!(
            "the rule is about {} {}, the request is {}",
            rule.domain,
            ops_text(rule),
            req_what(&req)
        ))
    } else {
        None
    };
    let role_mismatch = rule
        .role
        .as_ref()
        .filter(|r| req.role.as_deref() != Some(r.as_str()))
        .cloned();
    let clauses: Vec<ClauseTrace> = rule
        .clauses
        .iter()
        .map(|c| {
            // `clause_holds` says whether the clause lets the rule apply; the condition
            // itself held when that differs from `unless`.
            let (held, error) = match clause_holds(&set.scripts, c, &req) {
                Ok(b) => (Some(b != c.negated), None),
                Err(e) => (None, Some(e)),
            };
            ClauseTrace {
                text: c.text.clone(),
                resolved: format!(
                    "{} {}",
                    if c.negated { "unless" } else { "when" },
                    render(&c.cond)
                ),
                held,
                negated: c.negated,
                error,
            }
        })
        .collect();
    let applied = head_matched
        && role_mismatch.is_none()
        && clauses.iter().all(|c| match c.held {
            Some(h) => h != c.negated,
            // An error counts as the stricter outcome: a deny/ask applies.
            None => rule.effect != contextos_grammar::ast::Effect::Allow,
        });
    RuleTrace {
        rule: RuleHit::of(rule),
        head: head_text(rule),
        domain_matched,
        head_matched,
        hint,
        role_mismatch,
        clauses,
        applied,
    }
}

fn ops_text(rule: &CompiledRule) -> String {
    if !matches!(rule.domain, Domain::Path | Domain::Net) || rule.ops == crate::ir::ALL_OPS {
        return String::new();
    }
    crate::schema::domain_ops(rule.domain)
        .iter()
        .enumerate()
        .filter(|(i, _)| rule.ops & (1 << i) != 0)
        .map(|(_, o)| *o)
        .collect::<Vec<_>>()
        .join(", ")
}

fn req_what(req: &Request) -> String {
    match &req.kind {
        RequestKind::Path(p) => format!("path {}", p.op.as_str()),
        RequestKind::Net(n) => format!("net {}", n.op.as_str()),
        other => Request::new(other.clone()).domain().to_string(),
    }
}

/// `deny path write "secrets/**", "**/*.pem"` as compiled.
pub fn head_text(rule: &CompiledRule) -> String {
    let mut s = format!("{} {}", rule.effect, rule.domain);
    let ops = ops_text(rule);
    if !ops.is_empty() {
        s.push(' ');
        s.push_str(&ops);
    }
    if rule.patterns.is_empty() {
        s.push_str(" (every subject)");
    } else {
        let pats: Vec<String> = rule.patterns.iter().map(|p| format!("{p:?}")).collect();
        s.push(' ');
        s.push_str(&pats.join(", "));
    }
    if let Some(r) = &rule.role {
        s.push_str(&format!("  (in role {r})"));
    }
    s
}

fn head_hits(rule: &CompiledRule, req: &Request) -> bool {
    if rule.patterns.is_empty() {
        return true;
    }
    let any = |s: &str| {
        rule.patterns
            .iter()
            .flat_map(|p| head_globs(p))
            .any(|p| path_glob(p).is_ok_and(|g| g.compile_matcher().is_match(s)))
    };
    match &req.kind {
        RequestKind::Exec(_) => head_matches(rule, req),
        RequestKind::Path(p) => any(&p.path),
        RequestKind::Plugin(p) => any(&p.name),
        RequestKind::Commit(c) => c.files.iter().any(|f| any(f)),
        RequestKind::Net(n) => rule.patterns.iter().any(|p| match crate::net::cidr(p) {
            Some(net) => n
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| net.contains(&ip)),
            None => path_glob(p).is_ok_and(|g| g.compile_matcher().is_match(&n.host)),
        }),
        RequestKind::Mcp(m) => any(&m.subject()),
    }
}

/// Why a head pattern that almost matched did not, with the fix; `None` when no pattern
/// comes close.
pub fn miss_hint(rule: &CompiledRule, req: &Request) -> Option<String> {
    match &req.kind {
        RequestKind::Path(p) => rule.patterns.iter().find_map(|pat| path_hint(pat, &p.path)),
        RequestKind::Exec(e) => rule
            .exec_patterns
            .iter()
            .zip(&rule.patterns)
            .find_map(|(ep, text)| exec_hint(ep, text, &e.argv)),
        _ => None,
    }
}

fn glob_matches(pattern: &str, s: &str) -> bool {
    head_globs(pattern).any(|p| path_glob(p).is_ok_and(|g| g.compile_matcher().is_match(s)))
}

/// `*.pem` vs `certs/a.pem`: `*` does not cross `/`.
fn path_hint(pattern: &str, path: &str) -> Option<String> {
    if glob_matches(pattern, path) {
        return None;
    }
    let crossing = if pattern.contains('/') {
        // Each single `*` segment widened to `**`.
        pattern
            .split('/')
            .map(|seg| if seg == "*" { "**" } else { seg })
            .collect::<Vec<_>>()
            .join("/")
    } else {
        format!("**/{pattern}")
    };
    if crossing != pattern && glob_matches(&crossing, path) {
        return Some(format!(
            "pattern {pattern:?} does not match `{path}`: `*` does not cross `/`; did you mean {crossing:?}?"
        ));
    }
    if !pattern.contains('/') && has_glob_meta(pattern) {
        let name = path.rsplit('/').next().unwrap_or(path);
        if glob_matches(pattern, name) {
            return Some(format!(
                "pattern {pattern:?} does not match `{path}`: it matches only at the project root; did you mean {:?}?",
                format!("**/{pattern}")
            ));
        }
    }
    if glob_matches(&pattern.to_lowercase(), &path.to_lowercase()) {
        return Some(format!(
            "pattern {pattern:?} does not match `{path}`: patterns are case-sensitive"
        ));
    }
    if let Some(stripped) = pattern.strip_prefix("./") {
        if glob_matches(stripped, path) {
            return Some(format!(
                "pattern {pattern:?} does not match `{path}`: paths are project-relative without `./`; write {stripped:?}"
            ));
        }
    }
    None
}

/// `git push --force *` vs `git push origin --force`: words are matched in order.
fn exec_hint(p: &ExecPattern, text: &str, argv: &[String]) -> Option<String> {
    if p.matches(argv).unwrap_or(false) {
        return None;
    }
    fn lit(w: &Word) -> Option<&str> {
        match w {
            Word::Literal(l) => Some(l.as_str()),
            Word::Glob(_) => None,
        }
    }
    let program = p.words.first().and_then(lit)?;
    let first = argv.first()?;
    if program != first && program != contextos_shell::basename(first) {
        return None;
    }
    let words: Vec<&str> = p.words.iter().skip(1).filter_map(lit).collect();
    let all_present = words.iter().all(|w| argv.iter().skip(1).any(|a| a == w));
    if all_present && !words.is_empty() {
        let options: Vec<&&str> = words.iter().filter(|w| w.starts_with('-')).collect();
        if let Some(opt) = options.first() {
            return Some(format!(
                "pattern {text:?} does not match `{}`: options are matched in order, word by word; use `exec.options contains {opt:?}` in a condition to find it anywhere",
                argv.join(" ")
            ));
        }
        if !p.rest && argv.len() > p.words.len() {
            return Some(format!(
                "pattern {text:?} does not match `{}`: without a trailing `*` it matches exactly {} word(s); write \"{text} *\"",
                argv.join(" "),
                p.words.len()
            ));
        }
        return Some(format!(
            "pattern {text:?} does not match `{}`: words are matched in order from the program on",
            argv.join(" ")
        ));
    }
    None
}

/// Near misses for a why-not trace: rules of the request's domain (and op) whose head
/// pattern almost matched, each with its hint.
pub fn near_misses(set: &PolicySet, req: &Request) -> Vec<WhyNot> {
    let domain = req.domain();
    set.rules
        .iter()
        .filter(|r| r.domain == domain && !r.patterns.is_empty())
        .filter(|r| match &req.kind {
            RequestKind::Path(p) => r.ops & (1 << (p.op as u8)) != 0,
            _ => true,
        })
        .filter(|r| r.role.is_none() || r.role == req.role)
        .filter(|r| !head_hits(r, req))
        .filter_map(|r| {
            miss_hint(r, req).map(|hint| WhyNot {
                rule: RuleHit::of(r),
                clause: hint,
                origin: r.origin.clone(),
            })
        })
        .collect()
}

/// A condition with `$vars` already resolved (the compiled form keeps values, not names).
pub fn render(c: &Cond) -> String {
    match c {
        Cond::Or(v) => v.iter().map(render).collect::<Vec<_>>().join(" or "),
        Cond::And(v) => v
            .iter()
            .map(|c| match c {
                Cond::Or(_) => format!("({})", render(c)),
                _ => render(c),
            })
            .collect::<Vec<_>>()
            .join(" and "),
        Cond::Not(inner) => format!("not ({})", render(inner)),
        Cond::Cmp(a, op, b) => format!("{} {} {}", val(a), op.as_str(), val(b)),
        Cond::Matches(a, globs) => format!("{} matches {:?}", val(a), globs.patterns()),
        Cond::Truthy(v) => val(v),
        Cond::Script(_) => "script { … }".into(),
    }
}

fn attr_name(a: Attr) -> String {
    ATTRS
        .iter()
        .find(|i| i.attr == a)
        .and_then(|i| i.names.last())
        .map_or_else(|| format!("{a:?}"), |n| (*n).to_string())
}

fn val(v: &Val) -> String {
    match v {
        Val::Str(s) => format!("{s:?}"),
        Val::Int(i) => i.to_string(),
        Val::Bool(b) => b.to_string(),
        Val::List(l) => format!("{l:?}"),
        Val::Attr(a) => attr_name(*a),
        Val::Call(m, recv, args) => {
            let name = METHODS
                .iter()
                .find(|(_, mm)| mm == m)
                .map_or("?", |(n, _)| *n);
            let args: Vec<String> = args.iter().map(val).collect();
            format!("{}.{name}({})", val(recv), args.join(", "))
        }
    }
}

/// [`crate::eval::decide`], and when explaining, the rules whose pattern almost matched,
/// with the fix: where authors err most. Kept out of the evaluator, which this module
/// builds on.
pub(crate) fn decide(
    set: &PolicySet,
    req: &Request,
    opts: EvalOptions,
) -> crate::decision::Decision {
    let mut d = crate::eval::decide(set, req, opts);
    if opts.explain {
        d.why_not.extend(near_misses(set, &d.request));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::path_hint;

    #[test]
    fn star_that_does_not_cross_a_slash_gets_a_hint() {
        let h = path_hint("*.pem", "certs/a.pem").unwrap_or_default();
        assert!(h.contains("did you mean \"**/*.pem\""), "{h}");
        let h = path_hint("src/*", "src/a/b.rs").unwrap_or_default();
        assert!(h.contains("\"src/**\""), "{h}");
        assert_eq!(path_hint("**/*.pem", "certs/a.pem"), None);
        assert_eq!(path_hint("*.pem", "certs/a.txt"), None);
    }
}

//! What a role may do in one domain and operation: the regions (head patterns) the policies
//! deny, ask and allow, strongest first, each with its conditions and — where a stronger
//! unconditional rule covers it entirely — the rule that always overrules it (the same
//! exact coverage as lint W0303). Pure: no I/O.

use crate::decision::RuleHit;
use crate::eval::clause_holds;
use crate::ir::{Clause, CompiledRule, Cond, Val};
use crate::policy::PolicySet;
use crate::request::{Domain, PathOp, Request, RequestKind};
use crate::schema::Attr;
use contextos_grammar::ast::Effect;
use serde::Serialize;

/// One rule's region.
#[derive(Debug, Clone, Serialize)]
pub struct Region {
    /// The rule's effect on the region.
    pub effect: Effect,
    /// The rule.
    pub rule: RuleHit,
    /// Its head patterns, `$vars` resolved; empty: every subject of the domain.
    pub patterns: Vec<String>,
    /// Clauses that still depend on the request (clauses about the role alone are decided
    /// for the role asked about and left out).
    pub conditions: Vec<String>,
    /// The region is only part of the story: a condition or a script decides per request.
    pub conditional: bool,
    /// A stronger rule without conditions that matches every request of this region.
    #[serde(rename = "overruledBy", skip_serializing_if = "Option::is_none")]
    pub overruled_by: Option<String>,
}

/// The answer to a query.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The domain asked about.
    pub domain: Domain,
    /// The path operation asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<PathOp>,
    /// The role asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// What no region covers gets.
    pub default: Effect,
    /// Deny regions, then ask, then allow; within one effect in load order.
    pub regions: Vec<Region>,
}

/// The regions of `domain` (and `op`, for `path`) for a request carrying `role`.
pub fn query(set: &PolicySet, domain: Domain, op: Option<PathOp>, role: Option<&str>) -> Answer {
    let probe = role_probe(domain, role);
    let mut regions: Vec<(Region, &CompiledRule)> = Vec::new();
    for r in &set.rules {
        if r.domain != domain {
            continue;
        }
        if let Some(op) = op {
            if r.ops & (1 << (op as u8)) == 0 {
                continue;
            }
        }
        if r.role.as_deref().is_some_and(|rr| Some(rr) != role) {
            continue;
        }
        let mut conditions = Vec::new();
        let mut excluded = false;
        for c in &r.clauses {
            match role_only(set, c, &probe) {
                Some(true) => {}
                Some(false) => excluded = true,
                None => conditions.push(c.text.clone()),
            }
        }
        if excluded {
            continue;
        }
        regions.push((
            Region {
                effect: r.effect,
                rule: RuleHit::of(r),
                patterns: r.patterns.clone(),
                conditional: !conditions.is_empty() || !r.analyzable,
                conditions,
                overruled_by: None,
            },
            r,
        ));
    }
    // For the role asked about, its own rules apply like global ones: a role's deny
    // covers a global allow here (W0303 cannot say so without knowing the role).
    let rules: Vec<CompiledRule> = regions
        .iter()
        .map(|(_, r)| {
            let mut r = (*r).clone();
            r.role = None;
            r
        })
        .collect();
    for (region, _) in &mut regions {
        let Some(a) = rules.iter().find(|r| r.id == region.rule.id) else {
            continue;
        };
        region.overruled_by = rules
            .iter()
            .find(|b| b.id != a.id && crate::lint::shadow::covers(b, a))
            .map(|b| b.id.clone());
    }
    let mut regions: Vec<Region> = regions.into_iter().map(|(r, _)| r).collect();
    regions.sort_by_key(|r| std::cmp::Reverse(r.effect));
    Answer {
        domain,
        op,
        role: role.map(str::to_string),
        default: set.default_for(domain),
        regions,
    }
}

/// A request of `domain` carrying `role`, for deciding clauses about the role alone.
fn role_probe(domain: Domain, role: Option<&str>) -> Request {
    let kind = match domain {
        Domain::Exec => RequestKind::Exec(crate::request::ExecRequest::default()),
        Domain::Plugin => RequestKind::Plugin(Default::default()),
        Domain::Commit => RequestKind::Commit(Default::default()),
        Domain::Net => RequestKind::Net(Default::default()),
        Domain::Mcp => RequestKind::Mcp(Default::default()),
        Domain::Path => RequestKind::Path(crate::request::PathRequest {
            op: PathOp::Read,
            path: String::new(),
        }),
    };
    Request::new(kind).with_role(role.map(str::to_string))
}

/// Whether a clause that reads nothing but `role` lets the rule apply; `None` when the
/// clause reads anything else.
fn role_only(set: &PolicySet, c: &Clause, probe: &Request) -> Option<bool> {
    fn only_role(c: &Cond) -> bool {
        match c {
            Cond::Or(v) | Cond::And(v) => v.iter().all(only_role),
            Cond::Not(inner) => only_role(inner),
            Cond::Cmp(a, _, b) => {
                let ok = |v: &Val| matches!(v, Val::Attr(Attr::Role) | Val::Str(_) | Val::List(_));
                ok(a) && ok(b) && (matches!(**a, Val::Attr(_)) || matches!(**b, Val::Attr(_)))
            }
            _ => false,
        }
    }
    if !only_role(&c.cond) {
        return None;
    }
    clause_holds(&set.scripts, c, probe).ok()
}

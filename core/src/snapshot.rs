//! A compiled policy set as bytes, for the policy cache of short-lived processes (the
//! agent hooks). The snapshot holds the checked IR — rules with resolved patterns and
//! typed conditions, defaults, guides, roles and script bodies — and never the index or
//! compiled regexes: those are rebuilt (lazily) on load, and every glob is re-validated
//! while decoding. Policy `test` blocks are not part of a snapshot; `contextos test`
//! always compiles from source.
//!
//! The bytes are not authenticated here: the caller keys and MACs the cache file, and a
//! snapshot that does not decode is an error, never a partial policy set.

use crate::index::Index;
use crate::ir::{Clause, CompiledRule, ExecPattern, Layer, ObligationIr, OpMask, Origin};
use crate::policy::{CompiledGuide, PolicySet};
use crate::request::Domain;
use crate::script::ScriptHost;
use contextos_grammar::ast::Effect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Bumped whenever the encoding of the IR changes; part of every cache key.
pub const SNAPSHOT_FORMAT: u32 = 5;

#[derive(Serialize, Deserialize)]
struct Snapshot {
    format: u32,
    rules: Vec<RuleSnap>,
    defaults: [Effect; Domain::COUNT],
    guides: Vec<GuideSnap>,
    detectors: Vec<crate::detector::CompiledDetector>,
    roles: BTreeSet<String>,
    scripts: Vec<(Domain, String)>,
    runtime_lets: std::collections::BTreeMap<String, Vec<String>>,
}

#[derive(Serialize, Deserialize)]
struct RuleSnap {
    id: String,
    effect: Effect,
    domain: Domain,
    ops: OpMask,
    role: Option<String>,
    patterns: Vec<String>,
    exec_patterns: Vec<ExecPattern>,
    clauses: Vec<Clause>,
    because: Option<String>,
    severity: Option<String>,
    /// Obligation values as JSON text: the binary encoding is not self-describing.
    obligations: Vec<(String, Vec<(String, String)>)>,
    #[serde(with = "crate::ir::origin_full")]
    origin: Origin,
    layer: Layer,
    analyzable: bool,
    accepts: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct GuideSnap {
    apply: crate::policy::GuideApply,
    id: String,
    title: String,
    scope: Vec<String>,
    text: String,
    role: Option<String>,
    #[serde(with = "crate::ir::origin_full")]
    origin: Origin,
}

/// Why a snapshot could not be made or loaded.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The set could not be serialised (an obligation value that does not encode).
    #[error("cannot encode the policy set: {0}")]
    Encode(String),
    /// The bytes are not a snapshot of this format (truncated, corrupt, or a glob that no
    /// longer validates).
    #[error("the snapshot does not decode: {0}")]
    Decode(String),
    /// The snapshot was written by a build with another [`SNAPSHOT_FORMAT`]; recompile
    /// from source.
    #[error("the snapshot has format {found}, this build reads {SNAPSHOT_FORMAT}")]
    Format {
        /// The format number found in the bytes.
        found: u32,
    },
    /// The content decoded but does not form a set: a script that does not compile, an index
    /// that cannot be built, or a rule referring to a missing script.
    #[error("the snapshot does not rebuild: {0}")]
    Rebuild(String),
}

/// Encodes the compiled set (without its tests); [`PolicySet::to_snapshot`] calls it.
pub(crate) fn encode(set: &PolicySet) -> Result<Vec<u8>, SnapshotError> {
    let rules = set
        .rules
        .iter()
        .map(|r| {
            let obligations = r
                .obligations
                .iter()
                .map(|o| {
                    let entries = o
                        .entries
                        .iter()
                        .map(|(k, v)| {
                            serde_json::to_string(v)
                                .map(|t| (k.clone(), t))
                                .map_err(|e| SnapshotError::Encode(e.to_string()))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((o.name.clone(), entries))
                })
                .collect::<Result<Vec<_>, SnapshotError>>()?;
            Ok(RuleSnap {
                id: r.id.clone(),
                effect: r.effect,
                domain: r.domain,
                ops: r.ops,
                role: r.role.clone(),
                patterns: r.patterns.clone(),
                exec_patterns: r.exec_patterns.clone(),
                clauses: r.clauses.clone(),
                because: r.because.clone(),
                severity: r.severity.clone(),
                obligations,
                origin: r.origin.clone(),
                layer: r.layer,
                analyzable: r.analyzable,
                accepts: r.accepts.clone(),
            })
        })
        .collect::<Result<Vec<_>, SnapshotError>>()?;
    let snap = Snapshot {
        format: SNAPSHOT_FORMAT,
        rules,
        defaults: set.defaults,
        guides: set
            .guides
            .iter()
            .map(|g| GuideSnap {
                apply: g.apply,
                id: g.id.clone(),
                title: g.title.clone(),
                scope: g.scope.clone(),
                text: g.text.clone(),
                role: g.role.clone(),
                origin: g.origin.clone(),
            })
            .collect(),
        detectors: set.detectors.clone(),
        roles: set.roles.clone(),
        scripts: set.scripts.sources().to_vec(),
        runtime_lets: set.runtime_lets.clone(),
    };
    postcard::to_stdvec(&snap).map_err(|e| SnapshotError::Encode(e.to_string()))
}

/// Decodes a snapshot into a policy set whose glob sets compile on first use;
/// [`PolicySet::from_snapshot`] calls it.
pub(crate) fn decode(bytes: &[u8]) -> Result<PolicySet, SnapshotError> {
    // The format is checked first so an old cache reports itself instead of failing
    // somewhere inside the rules.
    let (format, _) = postcard::take_from_bytes::<u32>(bytes)
        .map_err(|e| SnapshotError::Decode(e.to_string()))?;
    if format != SNAPSHOT_FORMAT {
        return Err(SnapshotError::Format { found: format });
    }
    let snap: Snapshot =
        postcard::from_bytes(bytes).map_err(|e| SnapshotError::Decode(e.to_string()))?;
    let mut scripts = ScriptHost::new();
    for (domain, body) in &snap.scripts {
        scripts
            .compile(*domain, body)
            .map_err(|e| SnapshotError::Rebuild(format!("script: {}", e.message)))?;
    }
    let rules = snap
        .rules
        .into_iter()
        .map(|r| {
            let obligations = r
                .obligations
                .into_iter()
                .map(|(name, entries)| {
                    let entries = entries
                        .into_iter()
                        .map(|(k, t)| {
                            serde_json::from_str(&t)
                                .map(|v| (k, v))
                                .map_err(|e| SnapshotError::Decode(e.to_string()))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(ObligationIr { name, entries })
                })
                .collect::<Result<Vec<_>, SnapshotError>>()?;
            Ok(CompiledRule {
                id: r.id,
                effect: r.effect,
                domain: r.domain,
                ops: r.ops,
                role: r.role,
                patterns: r.patterns,
                exec_patterns: r.exec_patterns,
                clauses: r.clauses,
                because: r.because,
                severity: r.severity,
                obligations,
                origin: r.origin,
                layer: r.layer,
                analyzable: r.analyzable,
                accepts: r.accepts,
            })
        })
        .collect::<Result<Vec<_>, SnapshotError>>()?;
    check_script_refs(&rules, snap.scripts.len())?;
    let index = Index::build(&rules).map_err(SnapshotError::Rebuild)?;
    Ok(PolicySet {
        rules,
        defaults: snap.defaults,
        guides: snap
            .guides
            .into_iter()
            .map(|g| CompiledGuide {
                apply: g.apply,
                id: g.id,
                title: g.title,
                scope: g.scope,
                text: g.text,
                role: g.role,
                origin: g.origin,
            })
            .collect(),
        detectors: snap.detectors,
        tests: Vec::new(),
        roles: snap.roles,
        runtime_lets: snap.runtime_lets,
        index,
        scripts,
    })
}

/// A rule pointing at a script that is not in the snapshot would be evaluated as an error
/// every time; refuse the snapshot instead.
fn check_script_refs(rules: &[CompiledRule], scripts: usize) -> Result<(), SnapshotError> {
    fn walk(c: &crate::ir::Cond, n: usize) -> bool {
        use crate::ir::Cond;
        match c {
            Cond::Or(v) | Cond::And(v) => v.iter().all(|c| walk(c, n)),
            Cond::Not(inner) => walk(inner, n),
            Cond::Script(i) => *i < n,
            Cond::Cmp(..) | Cond::Matches(..) | Cond::Truthy(_) => true,
        }
    }
    match rules
        .iter()
        .find(|r| !r.clauses.iter().all(|c| walk(&c.cond, scripts)))
    {
        Some(r) => Err(SnapshotError::Rebuild(format!(
            "rule `{}` refers to a script that is not in the snapshot",
            r.id
        ))),
        None => Ok(()),
    }
}

//! A compiled policy set as bytes, for the policy cache of short-lived processes (the
//! agent hooks). The snapshot holds the checked IR — rules with resolved patterns and
//! typed conditions, defaults, guides, roles and script bodies — and the rule index,
//! frozen (see [`crate::frozen`]); never compiled regexes, which are built on first use.
//! Policy `test` blocks are not part of a snapshot; `contextos test` always compiles from
//! source.
//!
//! Loading does not grow with the policy: the head (defaults, roles, scripts, guides) is
//! decoded, the rules, the index and the detectors stay bytes. A rule is decoded when a
//! request's candidates first name it, an index node when a request first reaches it,
//! the detectors when a scan or an egress check first reads them.
//! Layout: `format` (postcard varint) | head length (u32 LE) | head (postcard) | body,
//! where the head locates the body's sections (rule table, rule encodings, one frozen
//! trie per domain × operation, the detectors) and states the body's length, so a
//! truncated snapshot is refused whole.
//!
//! The stdlib's detectors, when the set borrows them unchanged from the binary's
//! precompiled image, may be left out and named by digest instead
//! ([`EmbeddedDetectors`]); such a snapshot decodes only where they are given.
//!
//! The bytes are not authenticated here: the caller keys and MACs the cache file. A
//! snapshot whose head or section table does not decode is an error; damage inside a rule
//! or an index node found later reads as a deny rule (see [`crate::rules::Rules::get`]),
//! never as a missing one.

use crate::frozen::Bytes;
use crate::index::{Index, Slot};
use crate::ir::{Clause, CompiledRule, ExecPattern, Layer, ObligationIr, OpMask, Origin};
use crate::policy::{CompiledGuide, PolicySet};
use crate::request::Domain;
use crate::rules::Rules;
use crate::script::ScriptHost;
use crate::section::{ReadAt, Section};
use contextos_grammar::ast::Effect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Bumped whenever the encoding of the IR changes; part of every cache key.
pub const SNAPSHOT_FORMAT: u32 = 8;

/// The standard library's detectors as the binary holds them, in its precompiled image
/// ([`crate::build::embedded_detectors`]), with their sha256 (recorded in the image when
/// it was made).
///
/// They are half of a stdlib-only snapshot. A snapshot of a set that borrows them
/// unchanged can refer to them instead of holding a copy
/// ([`crate::PolicySet::to_snapshot_sharing`]): a cold hook then writes and MACs half the
/// bytes. Such a snapshot names them by digest, and decodes only where the same
/// detectors are at hand; anywhere else it is refused, never read without its detectors.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedDetectors {
    pub(crate) bytes: &'static [u8],
    pub(crate) digest: [u8; 32],
}

#[derive(Serialize, Deserialize)]
struct Head {
    /// The body's length: a shorter body is a truncated snapshot.
    body: u64,
    rule_count: u64,
    /// `(start, length)` in the body: the rule table, the rule encodings, one frozen trie
    /// per [`Slot::ALL`] entry, then the detectors.
    sections: Vec<(u64, u64)>,
    /// The roles conditions compare with, so [`PolicySet::known_roles`] needs no rule.
    role_literals: BTreeSet<String>,
    defaults: [Effect; Domain::COUNT],
    guides: Vec<GuideSnap>,
    roles: BTreeSet<String>,
    scripts: Vec<(Domain, String)>,
    runtime_lets: std::collections::BTreeMap<String, Vec<String>>,
    /// The digest of the [`EmbeddedDetectors`] the set's detectors are, when the snapshot
    /// refers to them; the detectors' section is then empty.
    shared_detectors: Option<[u8; 32]>,
}

/// A rule's encoding, as decoded ([`RuleSnapRef`] writes it).
#[derive(Deserialize)]
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
pub(crate) struct GuideSnap {
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
}

/// A rule as [`RuleSnap`] encodes it, borrowed from the compiled rule: the same fields in
/// the same order and the same encoding (a `&str` and a slice are written as a `String`
/// and a `Vec` are), without copying the conditions and their glob lists, which was a
/// twelfth of a cold hook.
#[derive(Serialize)]
struct RuleSnapRef<'a> {
    id: &'a str,
    effect: Effect,
    domain: Domain,
    ops: OpMask,
    role: Option<&'a str>,
    patterns: &'a [String],
    exec_patterns: &'a [ExecPattern],
    clauses: &'a [Clause],
    because: Option<&'a str>,
    severity: Option<&'a str>,
    obligations: Vec<(&'a str, Vec<(&'a str, String)>)>,
    #[serde(serialize_with = "origin_ref")]
    origin: &'a Origin,
    layer: Layer,
    analyzable: bool,
    accepts: &'a [String],
}

fn origin_ref<S: serde::Serializer>(o: &&Origin, s: S) -> Result<S::Ok, S::Error> {
    crate::ir::origin_full::serialize(o, s)
}

fn rule_snap(r: &CompiledRule) -> Result<RuleSnapRef<'_>, SnapshotError> {
    let obligations = r
        .obligations
        .iter()
        .map(|o| {
            let entries = o
                .entries
                .iter()
                .map(|(k, v)| {
                    serde_json::to_string(v)
                        .map(|t| (k.as_str(), t))
                        .map_err(|e| SnapshotError::Encode(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((o.name.as_str(), entries))
        })
        .collect::<Result<Vec<_>, SnapshotError>>()?;
    Ok(RuleSnapRef {
        id: &r.id,
        effect: r.effect,
        domain: r.domain,
        ops: r.ops,
        role: r.role.as_deref(),
        patterns: &r.patterns,
        exec_patterns: &r.exec_patterns,
        clauses: &r.clauses,
        because: r.because.as_deref(),
        severity: r.severity.as_deref(),
        obligations,
        origin: &r.origin,
        layer: r.layer,
        analyzable: r.analyzable,
        accepts: &r.accepts,
    })
}

/// A guide as snapshots encode it.
pub(crate) fn guide_snap(g: &CompiledGuide) -> GuideSnap {
    GuideSnap {
        apply: g.apply,
        id: g.id.clone(),
        title: g.title.clone(),
        scope: g.scope.clone(),
        text: g.text.clone(),
        role: g.role.clone(),
        origin: g.origin.clone(),
    }
}

/// A guide back from its encoding.
pub(crate) fn guide_from(g: GuideSnap) -> CompiledGuide {
    CompiledGuide {
        apply: g.apply,
        id: g.id,
        title: g.title,
        scope: g.scope,
        text: g.text,
        role: g.role,
        origin: g.origin,
    }
}

/// A rule's encoding, as a snapshot's rule section holds it.
pub(crate) fn encode_rule(r: &CompiledRule) -> Result<Vec<u8>, SnapshotError> {
    postcard::to_stdvec(&rule_snap(r)?).map_err(|e| SnapshotError::Encode(e.to_string()))
}

/// One rule back from its encoding; `None` for bytes that do not decode, a glob that no
/// longer validates, or a condition naming a script the snapshot does not hold.
pub(crate) fn rule_from(bytes: &[u8], scripts: usize) -> Option<CompiledRule> {
    let r: RuleSnap = postcard::from_bytes(bytes).ok()?;
    let obligations = r
        .obligations
        .into_iter()
        .map(|(name, entries)| {
            let entries = entries
                .into_iter()
                .map(|(k, t)| serde_json::from_str(&t).map(|v| (k, v)).ok())
                .collect::<Option<Vec<_>>>()?;
            Some(ObligationIr { name, entries })
        })
        .collect::<Option<Vec<_>>>()?;
    let rule = CompiledRule {
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
    };
    scripts_known(&rule, scripts).then_some(rule)
}

/// From this many rules on, [`encode`] freezes the index on a second thread while it
/// encodes the rules. The stdlib alone has some 230: its tries freeze in a fraction of a
/// millisecond, less than the thread and its malloc arena cost.
const PARALLEL_ENCODE_RULES: usize = 512;

// `encode` freezes the last slot apart from the others, as the exec trie.
const _: () = assert!(matches!(Slot::ALL[Slot::ALL.len() - 1], Slot::Exec));

/// Encodes the compiled set (without its tests); [`PolicySet::to_snapshot`] calls it, and
/// [`PolicySet::to_snapshot_sharing`] with the detectors it may refer to.
pub(crate) fn encode(
    set: &PolicySet,
    embedded: Option<&EmbeddedDetectors>,
) -> Result<SnapshotParts, SnapshotError> {
    encode_with(set, embedded, PARALLEL_ENCODE_RULES)
}

/// [`encode`], with the tries frozen on a second thread from `parallel_from` rules on.
fn encode_with(
    set: &PolicySet,
    embedded: Option<&EmbeddedDetectors>,
    parallel_from: usize,
) -> Result<SnapshotParts, SnapshotError> {
    let freeze_rules = || {
        set.rules.freeze(|r, blob| {
            let snap = rule_snap(r).map_err(|e| e.to_string())?;
            postcard::to_extend(&snap, blob).map_err(|e| e.to_string())
        })
    };
    // Through the set's index, which keeps what it freezes: the request a cold call then
    // decides reads the same tries.
    let freeze_tries = |slots: &[Slot]| {
        slots
            .iter()
            .map(|slot| set.index.frozen(&set.rules, *slot))
            .collect::<Result<Vec<_>, _>>()
    };
    // The rules and the tries are frozen from the same rules but independently of each
    // other: with enough rules (a project of its own; a cold hook call encodes before it
    // decides) the glob tries freeze on a second thread while this one encodes the rules
    // and then freezes the exec trie, which makes the two shares about even.
    let (rules, tries) = if set.rules.len() < parallel_from {
        (freeze_rules(), freeze_tries(&Slot::ALL))
    } else {
        let (globs, exec) = Slot::ALL.split_at(Slot::ALL.len() - 1);
        let (glob_tries, (rules, exec_trie)) = crate::beside::both(
            || freeze_tries(globs),
            || (freeze_rules(), freeze_tries(exec)),
        );
        let tries = glob_tries.and_then(|mut t| {
            t.extend(exec_trie?);
            Ok(t)
        });
        (rules, tries)
    };
    let (table, blob) = rules.map_err(SnapshotError::Encode)?;
    let tries = tries.map_err(SnapshotError::Encode)?;
    // Detectors the binary holds encoded (a precompiled stdlib's) are written as they are,
    // not decoded to be encoded again: postcard's encoding of a list is canonical, so the
    // bytes are the same.
    let came_encoded = set.detectors.encoding();
    // The very bytes of the embedded detectors (same address, same length), not merely
    // equal ones: only those are known to be what the digest names.
    let shared = embedded.filter(|e| {
        came_encoded
            .as_ref()
            .is_some_and(|b| std::ptr::eq(b.as_slice(), e.bytes))
    });
    let detectors = match came_encoded {
        Some(_) if shared.is_some() => Part::Empty,
        Some(bytes) => Part::Held(bytes),
        None => {
            let detectors = set.detectors.get().map_err(SnapshotError::Encode)?;
            Part::Owned(
                postcard::to_stdvec(detectors).map_err(|e| SnapshotError::Encode(e.to_string()))?,
            )
        }
    };
    let mut sections = Vec::with_capacity(3 + tries.len());
    let mut body = 0u64;
    let lengths = [table.len(), blob.len()]
        .into_iter()
        .chain(tries.iter().map(|t| t.as_slice().len()))
        .chain([detectors.as_slice().len()]);
    for len in lengths {
        sections.push((body, len as u64));
        body += len as u64;
    }
    let head = Head {
        body,
        rule_count: set.rules.len() as u64,
        sections,
        role_literals: set.role_literals(),
        defaults: set.defaults,
        guides: set.guides.iter().map(guide_snap).collect(),
        roles: set.roles.clone(),
        scripts: set.scripts.sources().to_vec(),
        runtime_lets: set.runtime_lets.clone(),
        shared_detectors: shared.map(|e| e.digest),
    };
    let head = postcard::to_stdvec(&head).map_err(|e| SnapshotError::Encode(e.to_string()))?;
    let head_len = u32::try_from(head.len())
        .map_err(|_| SnapshotError::Encode("the snapshot head exceeds 4 GiB".into()))?;
    let mut lead = postcard::to_extend(&SNAPSHOT_FORMAT, Vec::with_capacity(16 + head.len()))
        .map_err(|e| SnapshotError::Encode(e.to_string()))?;
    lead.extend_from_slice(&head_len.to_le_bytes());
    lead.extend_from_slice(&head);
    Ok(SnapshotParts {
        lead,
        table,
        blob,
        tries,
        detectors,
    })
}

/// A snapshot as the encoder leaves it: its format and head, then its sections, to be
/// written or hashed one after the other ([`SnapshotParts::chunks`]). The body is the
/// sections end to end and the head states where each lies, so nothing needs copying
/// into one buffer: for a cold hook call with a project of its own that copy was a third
/// of a megabyte of fresh pages, written once and read once.
#[derive(Debug)]
pub struct SnapshotParts {
    lead: Vec<u8>,
    table: Vec<u8>,
    blob: Vec<u8>,
    tries: Vec<Bytes>,
    detectors: Part,
}

/// The detectors' section.
#[derive(Debug)]
enum Part {
    /// Referred to by digest instead.
    Empty,
    /// The encoding the set holds (a precompiled image's).
    Held(Bytes),
    /// Encoded now.
    Owned(Vec<u8>),
}

impl Part {
    fn as_slice(&self) -> &[u8] {
        match self {
            Part::Empty => &[],
            Part::Held(b) => b.as_slice(),
            Part::Owned(v) => v,
        }
    }
}

impl SnapshotParts {
    /// The snapshot's bytes, in order, in a few slices.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        [self.lead.as_slice(), &self.table, &self.blob]
            .into_iter()
            .chain(self.tries.iter().map(Bytes::as_slice))
            .chain([self.detectors.as_slice()])
    }

    /// The snapshot's length in bytes.
    pub fn len(&self) -> usize {
        self.chunks().map(<[u8]>::len).sum()
    }

    /// Whether the snapshot is empty (never: it has at least its format and head).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The snapshot's bytes in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for c in self.chunks() {
            out.extend_from_slice(c);
        }
        out
    }
}

/// Where a snapshot's format and head end: the head's offset and length within `bytes`
/// (which start at the snapshot's first byte).
fn locate_head(bytes: &[u8]) -> Result<(usize, usize), SnapshotError> {
    let bad = |what: &str| SnapshotError::Decode(what.to_string());
    // The format is checked first so an old cache reports itself instead of failing
    // somewhere inside the rules.
    let (format, rest) = postcard::take_from_bytes::<u32>(bytes)
        .map_err(|e| SnapshotError::Decode(e.to_string()))?;
    if format != SNAPSHOT_FORMAT {
        return Err(SnapshotError::Format { found: format });
    }
    let head_len = crate::frozen::u32_at(rest, 0)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| bad("truncated before the head"))?;
    Ok((bytes.len() - rest.len() + 4, head_len))
}

/// Decodes a snapshot held in `buf` from byte `start` on, keeping the rules and the index
/// as bytes of `buf`; [`PolicySet::from_snapshot`] calls it. `embedded`: the detectors a
/// snapshot may refer to.
pub(crate) fn decode(
    buf: Arc<Vec<u8>>,
    start: usize,
    embedded: Option<&EmbeddedDetectors>,
) -> Result<PolicySet, SnapshotError> {
    let whole = Bytes::new(buf);
    let bytes = whole.as_slice().get(start..).unwrap_or_default();
    let bad = |what: &str| SnapshotError::Decode(what.to_string());
    let (head_at, head_len) = locate_head(bytes)?;
    let head_bytes = bytes
        .get(head_at..head_at.saturating_add(head_len))
        .ok_or_else(|| bad("truncated in the head"))?;
    let head: Head =
        postcard::from_bytes(head_bytes).map_err(|e| SnapshotError::Decode(e.to_string()))?;
    let body_at = start + head_at + head_len;
    let body_len = whole.as_slice().len() - body_at;
    if u64::try_from(body_len).ok() != Some(head.body) {
        return Err(bad("the body's length is not the one the head states"));
    }
    let body = whole
        .sub(body_at, body_len)
        .ok_or_else(|| bad("truncated in the body"))?;
    assemble(head, embedded, |at, len| {
        body.sub(at, len)
            .map(Section::Held)
            .ok_or_else(|| bad("a section lies outside the body"))
    })
}

/// Decodes the snapshot `reader` reads from offset `start` on, `total` bytes in all,
/// reading only its head now: each section is read when a request first needs it, and
/// a rule's bytes alone; [`PolicySet::from_snapshot_reader`] calls it.
pub(crate) fn decode_stored(
    reader: Arc<dyn ReadAt>,
    start: u64,
    total: u64,
    embedded: Option<&EmbeddedDetectors>,
) -> Result<PolicySet, SnapshotError> {
    let bad = |what: &str| SnapshotError::Decode(what.to_string());
    let size = total
        .checked_sub(start)
        .ok_or_else(|| bad("the snapshot starts past its end"))?;
    // A postcard u32 takes at most 5 bytes, then the head's u32 length.
    let mut prefix = vec![0; usize::try_from(size.min(9)).unwrap_or(9)];
    reader
        .read_at(start, &mut prefix)
        .map_err(SnapshotError::Decode)?;
    let (head_at, head_len) = locate_head(&prefix)?;
    let body_at = (head_at as u64)
        .checked_add(head_len as u64)
        .filter(|end| *end <= size)
        .ok_or_else(|| bad("truncated in the head"))?;
    let mut head_bytes = vec![0; head_len];
    reader
        .read_at(start + head_at as u64, &mut head_bytes)
        .map_err(SnapshotError::Decode)?;
    let head: Head =
        postcard::from_bytes(&head_bytes).map_err(|e| SnapshotError::Decode(e.to_string()))?;
    if size - body_at != head.body {
        return Err(bad("the body's length is not the one the head states"));
    }
    let body_start = start + body_at;
    let body_len = head.body;
    assemble(head, embedded, |at, len| {
        let end = (at as u64).checked_add(len as u64);
        if end.is_none_or(|end| end > body_len) {
            return Err(bad("a section lies outside the body"));
        }
        Ok(Section::stored(
            Arc::clone(&reader),
            body_start + at as u64,
            len,
        ))
    })
}

/// The set from its decoded head and a way to reach each body section (`at`, `len`
/// relative to the body).
fn assemble(
    head: Head,
    embedded: Option<&EmbeddedDetectors>,
    body_section: impl Fn(usize, usize) -> Result<Section, SnapshotError>,
) -> Result<PolicySet, SnapshotError> {
    let bad = |what: &str| SnapshotError::Decode(what.to_string());
    let section = |i: usize| -> Result<Section, SnapshotError> {
        let (at, len) = head
            .sections
            .get(i)
            .copied()
            .ok_or_else(|| bad("a section is missing"))?;
        let (at, len) = usize::try_from(at)
            .ok()
            .zip(usize::try_from(len).ok())
            .ok_or_else(|| bad("a section lies outside the body"))?;
        body_section(at, len)
    };
    if head.sections.len() != 3 + Slot::ALL.len() {
        return Err(bad("the section table has the wrong length"));
    }
    let script_count = head.scripts.len();
    // Compiled at the first evaluation: most requests reach no script, and building the
    // engine was a twentieth of a warm hook. A script that no longer compiles makes its
    // conditions errors, resolved to the stricter outcome.
    let scripts = ScriptHost::deferred(head.scripts);
    let rule_count =
        usize::try_from(head.rule_count).map_err(|_| bad("too many rules for this machine"))?;
    // The table is small (nine bytes a rule) and read whole; the rules stay where they are.
    let table = section(0)?
        .bytes()
        .ok_or_else(|| bad("the rule table cannot be read"))?;
    let rules = Rules::frozen(
        table,
        section(1)?,
        rule_count,
        Box::new(move |b| rule_from(b, script_count)),
    )
    .ok_or_else(|| bad("the rule table is shorter than the rule count"))?;
    let frozen = (0..Slot::ALL.len())
        .map(|i| section(2 + i))
        .collect::<Result<Vec<_>, _>>()?;
    let detectors = section(2 + Slot::ALL.len())?;
    let detectors = match head.shared_detectors {
        None => detectors,
        // Refused unless these very detectors are at hand (and the section is empty, as
        // the encoder leaves it): a set never loads without its detectors, or with others.
        Some(digest) => match embedded {
            Some(e) if e.digest == digest && detectors.is_empty() => {
                Section::Held(Bytes::of_static(e.bytes))
            }
            _ => {
                return Err(bad(
                    "the snapshot refers to detectors this binary does not embed",
                ))
            }
        },
    };
    let role_literals = std::sync::OnceLock::new();
    let _ = role_literals.set(head.role_literals);
    Ok(PolicySet {
        rules,
        defaults: head.defaults,
        guides: head.guides.into_iter().map(guide_from).collect(),
        detectors: crate::lazy_list::LazyList::encoded(detectors),
        tests: Vec::new(),
        roles: head.roles,
        runtime_lets: head.runtime_lets,
        index: Index::from_frozen(frozen),
        role_literals,
        scripts,
    })
}

/// Whether every script a rule's conditions name is in the snapshot: a rule pointing at a
/// missing script would be evaluated as an error every time, so it is refused (read as
/// damaged) instead.
fn scripts_known(rule: &CompiledRule, scripts: usize) -> bool {
    fn walk(c: &crate::ir::Cond, n: usize) -> bool {
        use crate::ir::Cond;
        match c {
            Cond::Or(v) | Cond::And(v) => v.iter().all(|c| walk(c, n)),
            Cond::Not(inner) => walk(inner, n),
            Cond::Script(i) => *i < n,
            Cond::Cmp(..) | Cond::Matches(..) | Cond::Truthy(_) => true,
        }
    }
    rule.clauses.iter().all(|c| walk(&c.cond, scripts))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use crate::build::{build, BuildOptions, PolicySource};
    use crate::rule_head::{rule_head, ExecHead};
    use std::fmt::Write;

    /// A lazily built set of `n` rules of every domain with tries: enough, from
    /// [`PARALLEL_ENCODE_RULES`] on, for `encode` to freeze the tries on a second thread.
    fn set_of(n: usize) -> PolicySet {
        let mut text = String::from("language 1;\n");
        for i in 0..n {
            let _ = match i % 5 {
                0 => writeln!(text, "deny path write \"gen{i}/**/*.rs\" because \"g\";"),
                1 => writeln!(text, "allow exec \"tool{i} build *\" because \"r\";"),
                2 => writeln!(text, "ask path read, delete \"m{i}/src/**\" when path.ext == \"toml\" because \"r\";"),
                3 => writeln!(text, "deny net fetch \"h{i}.example.com\", \"10.{}.0.0/16\" because \"n\";", i % 250),
                _ => writeln!(text, "deny mcp \"srv{i}/tool*\" because \"m\";"),
            };
        }
        lazy_set(text)
    }

    /// `text`, a user's policy file, built lazily.
    fn lazy_set(text: String) -> PolicySet {
        let source = PolicySource {
            name: "main.policy".into(),
            text: text.into(),
            layer: Layer::User,
        };
        let options = BuildOptions {
            lazy: true,
            ..BuildOptions::default()
        };
        build(&[source], &options)
            .policy
            .expect("the rules compile")
    }

    #[test]
    fn tries_frozen_beside_the_rules_encode_as_frozen_in_turn() {
        for n in [PARALLEL_ENCODE_RULES - 1, PARALLEL_ENCODE_RULES, 1_500] {
            let set = set_of(n);
            let beside = encode(&set, None).expect("encodes");
            // A set of its own: the first encoding kept the tries it froze.
            let in_turn = encode_with(&set_of(n), None, usize::MAX).expect("encodes");
            assert_eq!(beside.to_vec(), in_turn.to_vec(), "{n} rules");
            assert_eq!(beside.len(), beside.to_vec().len());
            // The parts are the snapshot, end to end: it decodes, with every rule.
            let back = PolicySet::from_snapshot(&beside.to_vec()).expect("decodes");
            assert_eq!(back.rules.len(), n);
        }
    }

    #[test]
    fn a_rule_head_reads_the_leading_fields_of_its_encoding() {
        let text = r#"language 1;
@id("a") deny path write, delete "gen/**/*.rs", "x/*" because "g";
@id("b") allow exec "tool build *", "/usr/bin/git pu* --force", "ca?go test" because "r";
@id("c") ask exec because "any command";
@id("d") deny net fetch "h.example.com", "10.0.0.0/16" when role == "ci" because "n";
role ops { @id("e") allow path read when path.ext == "md" because "docs"; }
"#;
        let set = lazy_set(text.to_string());
        assert_eq!(set.rules.len(), 5);
        for r in &set.rules {
            let bytes = encode_rule(r).expect("encodes");
            let head = rule_head(&bytes).expect("the head decodes");
            assert_eq!(head.id, r.id);
            assert_eq!(
                (head.effect, head.domain, head.ops),
                (r.effect, r.domain, r.ops)
            );
            assert_eq!(head.patterns, r.patterns);
            let prefixes: Vec<Vec<&str>> = head
                .exec_patterns
                .iter()
                .map(ExecHead::literal_prefix)
                .collect();
            let want: Vec<Vec<&str>> = r
                .exec_patterns
                .iter()
                .map(ExecPattern::literal_prefix)
                .collect();
            assert_eq!(prefixes, want, "rule {}", r.id);
        }
        // The exec patterns' glob words end the literal prefix: `/usr/bin/git` then `pu*`.
        let b = set.rules.iter().find(|r| r.id == "b").expect("rule b");
        let bytes = encode_rule(b).expect("encodes");
        let head = rule_head(&bytes).expect("the head decodes");
        let prefixes: Vec<Vec<&str>> = head
            .exec_patterns
            .iter()
            .map(ExecHead::literal_prefix)
            .collect();
        assert_eq!(
            prefixes,
            vec![vec!["tool", "build"], vec!["/usr/bin/git"], vec![]]
        );
        assert!(
            rule_head(&bytes[..3]).is_none(),
            "a truncated head is refused"
        );
    }
}

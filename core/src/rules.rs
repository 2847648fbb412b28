//! The rules of a policy set: owned when compiled from source, decoded one by one on
//! first use when loaded from a snapshot.
//!
//! A hook process looks at the few rules its requests' candidates name; decoding all of
//! them (every id, pattern, clause and origin: a dozen allocations each) is what made
//! loading grow with the policy. A snapshot's rules are therefore kept as bytes with a
//! fixed-width table of offsets, and a rule is decoded the first time it is asked for.

use crate::frozen::{u32_at, Bytes};
use crate::ir::{CompiledRule, Layer, Origin, ALL_OPS};
use crate::request::Domain;
use crate::rule_head::{rule_head, ExecHead, RuleHead};
use crate::section::Section;
use contextos_grammar::ast::Effect;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The id of the rule that stands for damaged snapshot bytes.
pub const DAMAGED_RULE_ID: &str = "contextos.snapshot-damaged";

/// The candidate the index reports for a node whose bytes do not decode: [`Rules::get`]
/// answers it with a deny rule, never with no rule.
pub(crate) const DAMAGED: usize = usize::MAX;

/// Decodes one rule's bytes; `None` when they do not decode.
pub(crate) type DecodeRule = Box<dyn Fn(&[u8]) -> Option<CompiledRule> + Send + Sync>;

/// The rules of a set, in load order.
#[derive(Debug)]
pub struct Rules {
    repr: Repr,
    /// What [`Rules::get`] answers for damaged bytes: a deny that matches every request.
    damaged: OnceLock<Box<CompiledRule>>,
}

#[derive(Debug)]
enum Repr {
    Owned(Vec<CompiledRule>),
    Frozen(Frozen),
    /// A precompiled stdlib's rules, still encoded, then the rules compiled from source.
    Layered(EncodedRules, Vec<CompiledRule>),
}

/// Rules kept in their snapshot encoding, in bytes the binary holds (a precompiled
/// standard library's): only their heads are read up front, for the ids and the index;
/// a rule is decoded when it is first asked for, and a snapshot copies its bytes.
///
/// A cold hook call used to decode every stdlib rule (a few hundred kilobytes of
/// conditions and glob lists, on fresh pages) only to encode each again for its cache.
pub(crate) struct EncodedRules {
    rules: Vec<(&'static [u8], RuleHead<'static>)>,
    cells: Box<[OnceLock<Box<CompiledRule>>]>,
    decode: DecodeRule,
    /// The roles the rules' conditions compare with, recorded when they were encoded.
    role_literals: BTreeSet<String>,
    /// The index's tries over these rules alone, one per slot, frozen when they were
    /// encoded (see [`EncodedRules::with_tries`]); empty when not given.
    tries: Vec<&'static [u8]>,
}

impl std::fmt::Debug for EncodedRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodedRules")
            .field("count", &self.rules.len())
            .finish()
    }
}

impl EncodedRules {
    /// The rules encoded in `rules`, each decoded by `decode` when first asked for; `None`
    /// when a rule's head does not decode.
    pub(crate) fn new(
        rules: Vec<&'static [u8]>,
        decode: DecodeRule,
        role_literals: BTreeSet<String>,
    ) -> Option<EncodedRules> {
        let rules = rules
            .into_iter()
            .map(|bytes| Some((bytes, rule_head(bytes)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(EncodedRules {
            cells: (0..rules.len()).map(|_| OnceLock::new()).collect(),
            rules,
            decode,
            role_literals,
            tries: Vec::new(),
        })
    }

    /// These rules with the index's tries frozen over them alone, one per slot in the
    /// index's order: a slot that no rule after them joins has the same trie in a set
    /// that layers rules over them (see [`Rules::precomputed_tries`]).
    pub(crate) fn with_tries(self, tries: Vec<&'static [u8]>) -> EncodedRules {
        EncodedRules { tries, ..self }
    }

    /// Each rule's id, in order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.rules.iter().map(|(_, h)| h.id)
    }

    /// How many rules there are.
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// Rule `i`, decoded on first use; bytes that do not decode give the damaged rule.
    pub(crate) fn get(&self, i: usize) -> Option<&CompiledRule> {
        let (bytes, head) = self.rules.get(i)?;
        let cell = self.cells.get(i)?;
        Some(cell.get_or_init(|| {
            Box::new((self.decode)(bytes).unwrap_or_else(|| damaged_rule(Some(head.domain))))
        }))
    }

    /// Every rule decoded, in order; `None` when one does not decode.
    pub(crate) fn decode_all(&self) -> Option<Vec<CompiledRule>> {
        self.rules
            .iter()
            .map(|(bytes, _)| (self.decode)(bytes))
            .collect()
    }
}

/// What the index is built from, of one rule: the rule, or the head of its encoding.
#[derive(Clone, Copy)]
pub(crate) enum Head<'a> {
    Rule(&'a CompiledRule),
    Encoded(&'a RuleHead<'static>),
}

impl<'a> Head<'a> {
    pub(crate) fn domain(self) -> Domain {
        match self {
            Head::Rule(r) => r.domain,
            Head::Encoded(h) => h.domain,
        }
    }

    pub(crate) fn ops(self) -> crate::ir::OpMask {
        match self {
            Head::Rule(r) => r.ops,
            Head::Encoded(h) => h.ops,
        }
    }

    pub(crate) fn effect(self) -> Effect {
        match self {
            Head::Rule(r) => r.effect,
            Head::Encoded(h) => h.effect,
        }
    }

    /// The head's patterns, in order.
    pub(crate) fn patterns(self) -> impl Iterator<Item = &'a str> {
        let (owned, encoded): (&'a [String], &'a [&'static str]) = match self {
            Head::Rule(r) => (&r.patterns, &[]),
            Head::Encoded(h) => (&[], &h.patterns),
        };
        owned
            .iter()
            .map(String::as_str)
            .chain(encoded.iter().copied())
    }

    /// Whether the head has no pattern (the rule matches every subject of its domain).
    pub(crate) fn matches_all(self) -> bool {
        match self {
            Head::Rule(r) => r.patterns.is_empty(),
            Head::Encoded(h) => h.patterns.is_empty(),
        }
    }

    /// Each exec pattern's leading literal words, in order (none for a rule that matches
    /// every command).
    pub(crate) fn exec_prefixes(self) -> impl Iterator<Item = Vec<&'a str>> {
        let (owned, encoded): (&'a [crate::ir::ExecPattern], &'a [ExecHead<'static>]) = match self {
            Head::Rule(r) => (&r.exec_patterns, &[]),
            Head::Encoded(h) => (&[], &h.exec_patterns),
        };
        let owned = owned.iter().map(crate::ir::ExecPattern::literal_prefix);
        owned.chain(encoded.iter().map(ExecHead::literal_prefix))
    }
}

/// A table entry is `offset u32 | length u32 | domain u8`, offsets into `blob`.
const ENTRY: usize = 9;

struct Frozen {
    table: Bytes,
    blob: Section,
    count: usize,
    cells: Box<[OnceLock<Box<CompiledRule>>]>,
    decode: DecodeRule,
}

impl std::fmt::Debug for Frozen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frozen")
            .field("count", &self.count)
            .finish()
    }
}

impl From<Vec<CompiledRule>> for Rules {
    fn from(rules: Vec<CompiledRule>) -> Rules {
        Rules {
            repr: Repr::Owned(rules),
            damaged: OnceLock::new(),
        }
    }
}

impl Rules {
    /// `below` (a precompiled stdlib's rules, encoded) followed by `above`.
    /// For rules layered over encoded ones that came with their tries: those tries, and
    /// the rules above them. Rules above join the index after the encoded ones, so a slot
    /// none of them joins has exactly the encoded rules' trie, at the same rule indices.
    pub(crate) fn precomputed_tries(&self) -> Option<(&[&'static [u8]], &[CompiledRule])> {
        match &self.repr {
            Repr::Layered(below, above) if !below.tries.is_empty() => Some((&below.tries, above)),
            _ => None,
        }
    }

    pub(crate) fn layered(below: EncodedRules, above: Vec<CompiledRule>) -> Rules {
        Rules {
            repr: Repr::Layered(below, above),
            damaged: OnceLock::new(),
        }
    }

    /// Rules kept as bytes: `table` holds `count` fixed-width entries locating each rule's
    /// encoding in `blob`. `None` when the table is shorter than `count` entries.
    pub(crate) fn frozen(
        table: Bytes,
        blob: Section,
        count: usize,
        decode: DecodeRule,
    ) -> Option<Rules> {
        if table.as_slice().len() < count.checked_mul(ENTRY)? {
            return None;
        }
        Some(Rules {
            repr: Repr::Frozen(Frozen {
                table,
                blob,
                count,
                cells: (0..count).map(|_| OnceLock::new()).collect(),
                decode,
            }),
            damaged: OnceLock::new(),
        })
    }

    /// The frozen table and blob of `rules`, for a snapshot. `encode` appends one rule's
    /// bytes to the blob: encoding each rule into a vector of its own, then copying it,
    /// was a tenth of a cold hook call (allocations and the copies of growing vectors).
    pub(crate) fn freeze(
        &self,
        mut encode: impl FnMut(&CompiledRule, Vec<u8>) -> Result<Vec<u8>, String>,
    ) -> Result<(Vec<u8>, Vec<u8>), String> {
        let mut table = Vec::with_capacity(self.len() * ENTRY);
        let mut blob = Vec::with_capacity(self.len() * 256);
        let encoded = match &self.repr {
            Repr::Layered(below, _) => below.rules.as_slice(),
            _ => &[],
        };
        for i in 0..self.len() {
            let start = blob.len();
            // A rule still in its encoding is its own bytes: the same that encoding it
            // once decoded would write (postcard's encoding is canonical).
            let domain = match encoded.get(i) {
                Some((bytes, head)) => {
                    blob.extend_from_slice(bytes);
                    head.domain
                }
                None => {
                    let r = self.get(i).ok_or("a rule is missing")?;
                    blob = encode(r, blob)?;
                    r.domain
                }
            };
            let at = u32::try_from(start).map_err(|_| "the rules exceed 4 GiB")?;
            let len = blob
                .len()
                .checked_sub(start)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or("a rule exceeds 4 GiB")?;
            table.extend_from_slice(&at.to_le_bytes());
            table.extend_from_slice(&len.to_le_bytes());
            table.push(domain.index() as u8);
        }
        Ok((table, blob))
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Owned(v) => v.len(),
            Repr::Frozen(f) => f.count,
            Repr::Layered(below, above) => below.len() + above.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rule `i` in load order. For a snapshot's rules, bytes that do not decode, and an
    /// index past the table, come back as a deny rule with id [`DAMAGED_RULE_ID`] (never
    /// as no rule, which could let a request through that the lost rule denied).
    pub fn get(&self, i: usize) -> Option<&CompiledRule> {
        if i == DAMAGED {
            return Some(self.damaged(None));
        }
        match &self.repr {
            Repr::Owned(v) => v.get(i),
            Repr::Layered(below, above) => match i.checked_sub(below.len()) {
                None => below.get(i),
                Some(j) => above.get(j),
            },
            Repr::Frozen(f) => {
                // An index naming a rule past the table is damage too: a deny, not nothing.
                let Some(cell) = f.cells.get(i) else {
                    return Some(self.damaged(None));
                };
                Some(cell.get_or_init(|| {
                    let entry = i * ENTRY;
                    let t = f.table.as_slice();
                    let domain = t
                        .get(entry + 8)
                        .and_then(|d| Domain::ALL.get(usize::from(*d)));
                    let rule = (|| {
                        let at = usize::try_from(u32_at(t, entry)?).ok()?;
                        let len = usize::try_from(u32_at(t, entry + 4)?).ok()?;
                        f.blob.with_range(at, len, |bytes| (f.decode)(bytes))?
                    })();
                    Box::new(rule.unwrap_or_else(|| damaged_rule(domain.copied())))
                }))
            }
        }
    }

    fn damaged(&self, domain: Option<Domain>) -> &CompiledRule {
        self.damaged.get_or_init(|| Box::new(damaged_rule(domain)))
    }

    /// Every rule in load order (decoding each one of a snapshot's rules).
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            rules: self,
            next: 0,
        }
    }

    /// Each rule's head, in load order: a rule still encoded is read no further than that
    /// (a snapshot's rules are decoded whole, as [`Rules::get`] does).
    pub(crate) fn heads(&self) -> impl Iterator<Item = (usize, Head<'_>)> + '_ {
        let encoded = match &self.repr {
            Repr::Layered(below, _) => below.rules.as_slice(),
            _ => &[],
        };
        (0..self.len()).filter_map(move |i| match encoded.get(i) {
            Some((_, head)) => Some((i, Head::Encoded(head))),
            None => self.get(i).map(|r| (i, Head::Rule(r))),
        })
    }

    /// The roles the rules' conditions compare with (`role == "x"`): for rules still
    /// encoded, as recorded with them; for the others, read from their conditions.
    pub(crate) fn role_literals(&self) -> BTreeSet<String> {
        let (mut out, read) = match &self.repr {
            Repr::Layered(below, above) => (below.role_literals.clone(), above.iter().collect()),
            _ => (BTreeSet::new(), self.iter().collect::<Vec<_>>()),
        };
        for c in read.iter().flat_map(|r| &r.clauses) {
            crate::ir::role_literals(&c.cond, &mut out);
        }
        out
    }

    /// The owned rules; a snapshot's rules are decoded.
    pub fn to_vec(&self) -> Vec<CompiledRule> {
        self.iter().cloned().collect()
    }
}

/// A deny rule with no pattern and no condition, standing for bytes that do not decode.
fn damaged_rule(domain: Option<Domain>) -> CompiledRule {
    CompiledRule {
        id: DAMAGED_RULE_ID.to_string(),
        effect: Effect::Deny,
        domain: domain.unwrap_or(Domain::Path),
        ops: ALL_OPS,
        role: None,
        patterns: Vec::new(),
        exec_patterns: Vec::new(),
        clauses: Vec::new(),
        because: Some(
            "the policy cache is damaged; delete .contextos/state/policy.cache to rebuild it"
                .to_string(),
        ),
        severity: None,
        obligations: Vec::new(),
        origin: Origin {
            file: "<policy cache>".to_string(),
            line: 0,
            col: 0,
            start: 0,
            end: 0,
        },
        layer: Layer::Stdlib,
        analyzable: true,
        accepts: Vec::new(),
    }
}

/// Iterator over [`Rules`].
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    rules: &'a Rules,
    next: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a CompiledRule;

    fn next(&mut self) -> Option<&'a CompiledRule> {
        if self.next >= self.rules.len() {
            return None;
        }
        let r = self.rules.get(self.next)?;
        self.next += 1;
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.rules.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Rules {
    type Item = &'a CompiledRule;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

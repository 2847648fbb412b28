//! The rule index. For every domain × operation a trie of glob sets over the patterns of
//! the rules that could apply, and for exec a trie over the literal leading words of each
//! pattern. A lookup returns the candidate rules only; conditions are evaluated for those
//! alone, so the cost follows the rules that *could* match, not all rules.
//!
//! Each trie is [frozen](crate::frozen) into bytes and read in place. A set compiled from
//! source freezes each domain × operation on its first request; a set loaded from a
//! snapshot finds them frozen already, so a hook process neither builds nor decodes an
//! index over every rule — it reads the few nodes on its requests' paths and compiles
//! the glob sets of those nodes alone.

use crate::frozen::{put_u32, u32s, Bytes, Node, Trie, TrieBuilder};
use crate::ir::ALL_OPS;
use crate::request::{Domain, NetOp, PathOp, Request, RequestKind};
use crate::rules::{Head, Rules, DAMAGED};
use contextos_grammar::ast::Effect;
use globset::{Candidate, GlobSet, GlobSetBuilder};
use std::sync::{Arc, OnceLock};

/// The tries of one index, in a fixed order: the sections of a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    Path(PathOp),
    Plugin,
    Commit,
    Net(NetOp),
    Mcp,
    Exec,
}

impl Slot {
    pub(crate) const ALL: [Slot; 9] = [
        Slot::Path(PathOp::Read),
        Slot::Path(PathOp::Write),
        Slot::Path(PathOp::Delete),
        Slot::Plugin,
        Slot::Commit,
        Slot::Net(NetOp::Fetch),
        Slot::Net(NetOp::Connect),
        Slot::Mcp,
        Slot::Exec,
    ];

    fn position(self) -> usize {
        match self {
            Slot::Path(op) => op as usize,
            Slot::Plugin => 3,
            Slot::Commit => 4,
            Slot::Net(op) => 5 + op as usize,
            Slot::Mcp => 7,
            Slot::Exec => 8,
        }
    }

    /// Whether the rule of head `h` is filed in this slot.
    fn holds(self, h: Head<'_>) -> bool {
        let (domain, ops) = (h.domain(), h.ops());
        let op_bit = |op: u8| ops & (1u8 << op) != 0 || ops == ALL_OPS;
        match self {
            Slot::Path(op) => domain == Domain::Path && op_bit(op as u8),
            Slot::Net(op) => domain == Domain::Net && op_bit(op as u8),
            Slot::Plugin => domain == Domain::Plugin,
            Slot::Commit => domain == Domain::Commit,
            Slot::Mcp => domain == Domain::Mcp,
            Slot::Exec => domain == Domain::Exec,
        }
    }

    /// The slot's trie over `rules`, frozen.
    pub(crate) fn freeze(self, rules: &Rules) -> Result<Vec<u8>, String> {
        let held = rules.heads().filter(|(_, h)| self.holds(*h));
        match self {
            Slot::Exec => freeze_exec(held),
            Slot::Net(_) => freeze_globs(held, true),
            _ => freeze_globs(held, false),
        }
    }
}

/// The slot's trie over `rules`, made from them: the one a precompiled stdlib froze when
/// no rule after the stdlib's is in the slot (a cold call with a project of its own
/// spent a third of its encoding on tries made of the stdlib's rules alone), frozen now
/// otherwise.
fn made(rules: &Rules, slot: Slot) -> Result<Bytes, String> {
    let precomputed = rules.precomputed_tries().and_then(|(tries, above)| {
        let joined = above.iter().any(|r| slot.holds(Head::Rule(r)));
        tries.get(slot.position()).filter(|_| !joined)
    });
    match precomputed {
        Some(trie) => Ok(Bytes::of_static(trie)),
        None => slot.freeze(rules).map(|b| Bytes::new(Arc::new(b))),
    }
}

#[derive(Debug, Default)]
pub struct Index {
    /// Frozen tries handed over by a snapshot, by [`Slot`] position; empty for a set
    /// compiled from source (each slot is frozen from the rules on first use).
    frozen: Vec<crate::section::Section>,
    /// For a set compiled from source: each slot's trie once frozen, by [`Slot`] position.
    /// A cold call freezes every slot to write its cache and then decides; kept here, the
    /// slot it decides on is not frozen a second time.
    made: [OnceLock<Result<Bytes, String>>; 9],
    globs: [OnceLock<GlobIndex>; 8],
    exec: OnceLock<ArgvTrie>,
}

impl Index {
    /// An index whose tries are frozen from the rules on first use.
    pub(crate) fn lazy() -> Index {
        Index::default()
    }

    /// An index over tries a snapshot holds, one per [`Slot::ALL`] entry.
    pub(crate) fn from_frozen(frozen: Vec<crate::section::Section>) -> Index {
        Index {
            frozen,
            ..Index::default()
        }
    }

    /// The slot's frozen trie: the snapshot's section, or the one frozen from `rules` (once).
    /// A section that cannot be read is an error: every lookup through it is damaged.
    pub(crate) fn frozen(&self, rules: &Rules, slot: Slot) -> Result<Bytes, String> {
        let at = slot.position();
        match self.frozen.get(at) {
            Some(s) => s
                .bytes()
                .ok_or_else(|| format!("the index section {at} cannot be read")),
            None => match self.made.get(at) {
                Some(cell) => cell.get_or_init(|| made(rules, slot)).clone(),
                None => made(rules, slot),
            },
        }
    }

    fn trie(&self, rules: &Rules, slot: Slot) -> Option<Trie> {
        Trie::open(self.frozen(rules, slot).ok()?)
    }

    fn glob_index(&self, rules: &Rules, slot: Slot) -> &GlobIndex {
        let at = slot.position();
        // Exec has its own trie; every other slot is below 8.
        let cell = &self.globs[at.min(7)];
        cell.get_or_init(|| GlobIndex::open(self.trie(rules, slot)))
    }

    fn exec_index(&self, rules: &Rules) -> &ArgvTrie {
        self.exec.get_or_init(|| ArgvTrie {
            trie: self.trie(rules, Slot::Exec),
        })
    }

    /// Files and compiles every glob set now; the first failure is returned.
    pub fn warm(&self, rules: &Rules) -> Result<(), String> {
        for slot in Slot::ALL {
            match slot {
                Slot::Exec => {
                    if self.exec_index(rules).trie.is_none() {
                        return Err("the exec index cannot be built".into());
                    }
                }
                _ => self.glob_index(rules, slot).warm()?,
            }
        }
        Ok(())
    }

    /// Candidate rule indices for a request, sorted and de-duplicated ([`DAMAGED`] among
    /// them when a node on the way does not decode).
    pub fn candidates(&self, rules: &Rules, req: &Request) -> Vec<usize> {
        // Room for the few candidates of a typical request, so the vector grows once.
        let mut out = Vec::with_capacity(16);
        match &req.kind {
            RequestKind::Path(p) => {
                self.glob_index(rules, Slot::Path(p.op))
                    .candidates(&p.path, &mut out);
            }
            RequestKind::Plugin(p) => self
                .glob_index(rules, Slot::Plugin)
                .candidates(&p.name, &mut out),
            RequestKind::Commit(c) => {
                let commit = self.glob_index(rules, Slot::Commit);
                for f in &c.files {
                    commit.candidates(f, &mut out);
                }
                out.extend_from_slice(&commit.always);
            }
            RequestKind::Net(n) => self
                .glob_index(rules, Slot::Net(n.op))
                .candidates(&n.host, &mut out),
            RequestKind::Mcp(m) => self
                .glob_index(rules, Slot::Mcp)
                .candidates(&crate::request::McpRequest::subject(m), &mut out),
            RequestKind::Exec(e) => {
                let exec = self.exec_index(rules);
                let words = || e.argv.iter().map(String::as_str);
                exec.walk(words(), &mut out);
                if let Some(first) = e.argv.first() {
                    let base = contextos_shell::basename(first);
                    if base != first {
                        exec.walk(std::iter::once(base).chain(words().skip(1)), &mut out);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

// ---------------------------------------------------------------------------
// Glob tries (path, plugin, commit, net, mcp)
// ---------------------------------------------------------------------------

/// The leading directories of a glob that are plain literals (the last segment is
/// always left to the glob itself).
fn literal_dirs(pattern: &str) -> impl Iterator<Item = &str> {
    let dirs = pattern.matches('/').count();
    pattern
        .split('/')
        .take(dirs)
        .take_while(|s| !s.is_empty() && !crate::glob::has_glob_meta(s))
}

/// Patterns filed in a trie under their literal leading directories (`docs/api/*.md`
/// under `docs` → `api`), so a lookup only runs the small glob sets along the request
/// path's own directories instead of one large set whose regex part grows with every
/// rule. A node's payload is its globs: `rule u32 | strict u8 | len u32 | glob bytes`.
/// The header holds the rules without patterns, and for `net` the address ranges.
fn freeze_globs<'a>(
    rules: impl Iterator<Item = (usize, Head<'a>)>,
    ranges_apart: bool,
) -> Result<Vec<u8>, String> {
    let mut root = TrieBuilder::default();
    let mut always = Vec::new();
    let mut ranges: Vec<(usize, &str)> = Vec::new();
    for (i, h) in rules {
        if h.matches_all() {
            always.push(i);
        }
        let strict = h.effect() != Effect::Allow;
        for p in h.patterns() {
            if ranges_apart && crate::net::cidr(p).is_some() {
                ranges.push((i, p));
                continue;
            }
            // Patterns were validated by the compiler; they are parsed again only when
            // their node is first used.
            for g in crate::glob::head_globs(p) {
                root.file(literal_dirs(g), |payload| {
                    put_u32(payload, i);
                    payload.push(u8::from(strict));
                    put_u32(payload, g.len());
                    payload.extend_from_slice(g.as_bytes());
                });
            }
        }
    }
    let mut extra = Vec::new();
    put_u32(&mut extra, always.len());
    always.iter().for_each(|i| put_u32(&mut extra, *i));
    for (i, p) in ranges {
        put_u32(&mut extra, i);
        put_u32(&mut extra, p.len());
        extra.extend_from_slice(p.as_bytes());
    }
    root.freeze(&extra)
}

/// A node's globs, decoded and compiled on first use.
#[derive(Debug)]
struct NodeSet {
    globs: Vec<String>,
    /// `globs` index -> (rule index, whether the rule is deny/ask).
    owners: Vec<(usize, bool)>,
    set: Result<GlobSet, String>,
    /// The payload did not decode: every lookup through this node yields [`DAMAGED`].
    damaged: bool,
}

impl NodeSet {
    fn decode(payload: &[u8]) -> NodeSet {
        let mut globs = Vec::new();
        let mut owners = Vec::new();
        let mut at = 0;
        let mut damaged = false;
        while at < payload.len() {
            let entry = (|| {
                let rule = crate::frozen::u32_at(payload, at)?;
                let strict = *payload.get(at + 4)? != 0;
                let len = usize::try_from(crate::frozen::u32_at(payload, at + 5)?).ok()?;
                let text = payload.get(at + 9..(at + 9).checked_add(len)?)?;
                let glob = std::str::from_utf8(text).ok()?.to_string();
                Some((usize::try_from(rule).ok()?, strict, glob, at + 9 + len))
            })();
            match entry {
                Some((rule, strict, glob, next)) => {
                    globs.push(glob);
                    owners.push((rule, strict));
                    at = next;
                }
                None => {
                    damaged = true;
                    break;
                }
            }
        }
        let set = (|| {
            let mut b = GlobSetBuilder::new();
            for g in &globs {
                b.add(crate::glob::path_glob(g).map_err(|e| format!("glob `{g}`: {e}"))?);
            }
            b.build().map_err(|e| e.to_string())
        })();
        NodeSet {
            globs,
            owners,
            set,
            damaged,
        }
    }

    /// `subject` is the request's subject, `seen` its globset form, made at the first
    /// node that has globs and shared by the nodes after it (it splits off the file name
    /// and extension), `hits` scratch space for the set's matches.
    fn candidates<'s>(
        &self,
        subject: &'s str,
        seen: &mut Option<Candidate<'s>>,
        hits: &mut Vec<usize>,
        out: &mut Vec<usize>,
    ) {
        if self.damaged {
            out.push(DAMAGED);
        }
        if self.globs.is_empty() {
            return;
        }
        match &self.set {
            Ok(set) => {
                let candidate = seen.get_or_insert_with(|| Candidate::new(subject));
                set.matches_candidate_into(candidate, hits);
                for m in hits.iter() {
                    if let Some((rule, _)) = self.owners.get(*m) {
                        out.push(*rule);
                    }
                }
            }
            // A set that cannot be built must not drop deny rules: match glob by glob,
            // and where even one glob cannot be compiled, count it as matching for a
            // deny/ask rule and as not matching for an allow rule (the stricter outcome).
            Err(_) => {
                for (g, (rule, strict)) in self.globs.iter().zip(&self.owners) {
                    let matcher = crate::glob::path_glob(g)
                        .ok()
                        .and_then(|g| std::panic::catch_unwind(|| g.compile_matcher()).ok());
                    let hit = match matcher {
                        Some(m) => m.is_match(subject),
                        None => *strict,
                    };
                    if hit {
                        out.push(*rule);
                    }
                }
            }
        }
    }
}

/// One domain × operation's glob trie, with each node's set compiled on first use.
#[derive(Debug, Default)]
struct GlobIndex {
    /// `None`: the trie could not be built or opened; every lookup yields [`DAMAGED`].
    trie: Option<Trie>,
    /// Rules without patterns: candidates for every subject.
    always: Vec<usize>,
    /// `net` address ranges (`10.0.0.0/8`), tested against IP hosts by containment.
    ranges: Vec<(ipnet::IpNet, usize)>,
    /// By node ordinal.
    sets: Box<[OnceLock<Box<NodeSet>>]>,
    header_damaged: bool,
}

impl GlobIndex {
    fn open(trie: Option<Trie>) -> GlobIndex {
        let Some(trie) = trie else {
            return GlobIndex {
                header_damaged: true,
                ..GlobIndex::default()
            };
        };
        let extra = trie.extra();
        let mut always = Vec::new();
        let mut ranges = Vec::new();
        let header = (|| {
            let n = usize::try_from(crate::frozen::u32_at(extra, 0)?).ok()?;
            let end = n.checked_mul(4)?.checked_add(4)?;
            always.extend(u32s(extra.get(4..end)?));
            let mut at = end;
            while at < extra.len() {
                let rule = usize::try_from(crate::frozen::u32_at(extra, at)?).ok()?;
                let len = usize::try_from(crate::frozen::u32_at(extra, at + 4)?).ok()?;
                let text = extra.get(at + 8..(at + 8).checked_add(len)?)?;
                ranges.push((crate::net::cidr(std::str::from_utf8(text).ok()?)?, rule));
                at += 8 + len;
            }
            Some(())
        })();
        let sets = (0..trie.node_count()).map(|_| OnceLock::new()).collect();
        GlobIndex {
            trie: Some(trie),
            always,
            ranges,
            sets,
            header_damaged: header.is_none(),
        }
    }

    fn node(&self, trie: &Trie, n: Node) -> Option<&NodeSet> {
        let cell = self.sets.get(trie.ordinal(n)?)?;
        Some(cell.get_or_init(|| Box::new(NodeSet::decode(trie.payload(n)))))
    }

    fn candidates(&self, subject: &str, out: &mut Vec<usize>) {
        out.extend_from_slice(&self.always);
        if self.header_damaged {
            out.push(DAMAGED);
        }
        if !self.ranges.is_empty() {
            if let Ok(ip) = subject.parse::<std::net::IpAddr>() {
                out.extend(
                    self.ranges
                        .iter()
                        .filter(|(net, _)| net.contains(&ip))
                        .map(|(_, i)| *i),
                );
            }
        }
        let Some(trie) = &self.trie else {
            return;
        };
        let mut node = trie.root();
        let mut segments = subject.split('/');
        let (mut seen, mut hits) = (None, Vec::new());
        loop {
            match self.node(trie, node) {
                Some(set) => set.candidates(subject, &mut seen, &mut hits, out),
                None => out.push(DAMAGED),
            }
            match segments.next().and_then(|seg| trie.child(node, seg)) {
                Some(child) => node = child,
                None => break,
            }
        }
    }

    fn warm(&self) -> Result<(), String> {
        let Some(trie) = &self.trie else {
            return Err("a rule index cannot be built".into());
        };
        let mut todo = vec![trie.root()];
        while let Some(n) = todo.pop() {
            let set = self
                .node(trie, n)
                .ok_or_else(|| "a rule index node is damaged".to_string())?;
            if set.damaged {
                return Err("a rule index node is damaged".into());
            }
            if !set.globs.is_empty() {
                set.set.as_ref().map_err(Clone::clone)?;
            }
            todo.extend(trie.children(n));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The exec trie
// ---------------------------------------------------------------------------

/// Exec rules filed under the literal leading words of their patterns; a node's payload
/// is the u32 indices of the rules filed there.
fn freeze_exec<'a>(rules: impl Iterator<Item = (usize, Head<'a>)>) -> Result<Vec<u8>, String> {
    let mut root = TrieBuilder::default();
    for (i, h) in rules {
        let mut prefixes = h.exec_prefixes().peekable();
        if prefixes.peek().is_none() {
            root.file([], |payload| put_u32(payload, i));
        }
        for p in prefixes {
            root.file(p, |payload| put_u32(payload, i));
        }
    }
    root.freeze(&[])
}

#[derive(Debug)]
struct ArgvTrie {
    trie: Option<Trie>,
}

impl ArgvTrie {
    fn walk<'w>(&self, words: impl Iterator<Item = &'w str>, out: &mut Vec<usize>) {
        let Some(trie) = &self.trie else {
            out.push(DAMAGED);
            return;
        };
        let mut node = trie.root();
        out.extend(u32s(trie.payload(node)));
        for w in words {
            match trie.child(node, w) {
                Some(n) => {
                    node = n;
                    out.extend(u32s(trie.payload(node)));
                }
                None => break,
            }
        }
    }
}

//! Tries frozen into bytes: the rule index as a policy snapshot stores it.
//!
//! A hook process decides a handful of requests and exits, so it must not pay for
//! building (or even decoding) an index over every rule. A frozen trie is read in place:
//! a lookup finds a child by binary search over a fixed-width table and reads only the
//! nodes on the request's own path, so loading is O(1) in the number of rules and a
//! lookup is O(depth × log fan-out). Node payloads (a node's globs, or its rule ids) are
//! opaque bytes to this module; [`crate::index`] gives them meaning.
//!
//! The layout is ours rather than a zero-copy archive crate's: those validate a whole
//! archive up front (O(size), the cost this module exists to avoid) or need `unsafe` to
//! skip it. Every read here is bounds-checked and damage never panics: a node whose
//! number or payload does not decode reads as a deny candidate, a damaged child table as
//! "no such child". That is defence in depth, not the integrity check: the policy cache
//! is MAC'd by the caller, so damaged bytes never reach this module from a genuine
//! cache.
//!
//! Layout, all integers u32 little-endian, offsets relative to the start of the trie:
//! ```text
//! trie   := magic "CTXT" | node_count | root_offset | extra_len | extra | node*
//! node   := ordinal | payload_len | payload | child_count | child* | key bytes
//! child  := key_offset | key_len | node_offset      (sorted by key bytes)
//! ```

use std::sync::{Arc, OnceLock};

const MAGIC: &[u8; 4] = b"CTXT";

/// A shared byte buffer and a range of it: snapshot sections without copying.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bytes {
    buf: Buf,
    start: usize,
    end: usize,
}

/// Where the bytes live: a buffer read or built at run time, or the binary itself (the
/// precompiled stdlib's detectors, used as they are embedded).
#[derive(Clone, Debug)]
enum Buf {
    Shared(Arc<Vec<u8>>),
    Static(&'static [u8]),
}

impl Default for Buf {
    fn default() -> Self {
        Buf::Static(&[])
    }
}

impl Bytes {
    /// The whole of `buf`.
    pub(crate) fn new(buf: Arc<Vec<u8>>) -> Bytes {
        let end = buf.len();
        Bytes {
            buf: Buf::Shared(buf),
            start: 0,
            end,
        }
    }

    /// The whole of `bytes`, borrowed for the life of the program.
    pub(crate) fn of_static(bytes: &'static [u8]) -> Bytes {
        Bytes {
            buf: Buf::Static(bytes),
            start: 0,
            end: bytes.len(),
        }
    }

    /// Whether the bytes are the binary's own (see [`Bytes::of_static`]).
    pub(crate) fn is_static(&self) -> bool {
        matches!(self.buf, Buf::Static(_))
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        let whole: &[u8] = match &self.buf {
            Buf::Shared(v) => v,
            Buf::Static(s) => s,
        };
        whole.get(self.start..self.end).unwrap_or_default()
    }

    /// `len` bytes from `at` (relative to this range), or `None` past the end.
    pub(crate) fn sub(&self, at: usize, len: usize) -> Option<Bytes> {
        let start = self.start.checked_add(at)?;
        let end = start.checked_add(len)?;
        (end <= self.end).then(|| Bytes {
            buf: self.buf.clone(),
            start,
            end,
        })
    }
}

/// Reads the u32 at `at`, if the bytes reach that far.
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let end = at.checked_add(4)?;
    let raw: [u8; 4] = b.get(at..end)?.try_into().ok()?;
    Some(u32::from_le_bytes(raw))
}

fn usize_at(b: &[u8], at: usize) -> Option<usize> {
    u32_at(b, at).and_then(|v| usize::try_from(v).ok())
}

/// A trie under construction: string keys per level, an opaque payload per node. Keys
/// are borrowed from the rules being filed, which outlive the builder.
///
/// Filing only records the key path and appends the payload bytes to one buffer; the
/// tree is formed when the trie is frozen, by sorting the filings by path. A cold hook
/// call freezes every slot's trie over every rule before it answers, and a tree of
/// per-node maps and payload vectors cost an allocation or two per node and rule, which
/// made freezing the largest share of writing the cache.
#[derive(Default)]
pub(crate) struct TrieBuilder<'k> {
    /// Every filing's key path, one after the other.
    keys: Vec<&'k str>,
    /// Every filing's payload bytes, one after the other.
    payload: Vec<u8>,
    filings: Vec<Filing>,
}

/// One filing: its key path and payload, as ranges of the builder's two buffers.
#[derive(Clone, Copy)]
struct Filing {
    keys: (usize, usize),
    payload: (usize, usize),
}

impl<'k> TrieBuilder<'k> {
    /// Files bytes under the node reached by following `path` from the root (the root
    /// itself for an empty path): `write` appends them. A node's payload is what was
    /// filed under it, in filing order.
    pub(crate) fn file(
        &mut self,
        path: impl IntoIterator<Item = &'k str>,
        write: impl FnOnce(&mut Vec<u8>),
    ) {
        let keys = self.keys.len();
        self.keys.extend(path);
        let payload = self.payload.len();
        write(&mut self.payload);
        self.filings.push(Filing {
            keys: (keys, self.keys.len()),
            payload: (payload, self.payload.len()),
        });
    }

    /// Freezes the trie, with `extra` stored in its header. Fails only when the trie does
    /// not fit u32 offsets (over 4 GiB).
    pub(crate) fn freeze(self, extra: &[u8]) -> Result<Vec<u8>, String> {
        let TrieBuilder {
            keys,
            payload,
            filings: mut sorted,
        } = self;
        let path = |f: &Filing| keys.get(f.keys.0..f.keys.1).unwrap_or_default();
        // Stable: filings of one node keep their order, which is its payload's. Paths
        // compare key by key, so a node's own filings come before its descendants', and
        // each child's subtree is one run, in key order.
        sorted.sort_by(|a, b| path(a).cmp(path(b)));
        let key_bytes: usize = keys.iter().map(|k| k.len()).sum();
        // At most one node per key filed (plus the root), 24 bytes of header and child
        // entry each: the output is written without growing.
        let mut out = Vec::with_capacity(
            28 + extra.len() + payload.len() + key_bytes + 24 * (keys.len() + 1),
        );
        out.extend_from_slice(MAGIC);
        let header = out.len();
        out.extend_from_slice(&[0; 8]);
        put_len(&mut out, extra.len())?;
        out.extend_from_slice(extra);
        let mut w = Writer {
            keys: &keys,
            payload: &payload,
            out,
            ordinal: 0,
            table: Vec::new(),
        };
        let root = w.node(&sorted, 0)?;
        let (ordinal, mut out) = (w.ordinal, w.out);
        out.splice(
            header..header + 8,
            ordinal.to_le_bytes().into_iter().chain(root.to_le_bytes()),
        );
        Ok(out)
    }
}

fn put_len(out: &mut Vec<u8>, n: usize) -> Result<(), String> {
    let n = u32::try_from(n).map_err(|_| "the rule index is larger than 4 GiB".to_string())?;
    out.extend_from_slice(&n.to_le_bytes());
    Ok(())
}

/// Writes the nodes of a [`TrieBuilder`] from its filings sorted by path.
struct Writer<'b, 'k> {
    keys: &'b [&'k str],
    payload: &'b [u8],
    out: Vec<u8>,
    ordinal: u32,
    /// The child tables of the nodes being written, innermost last: one buffer for the
    /// whole walk instead of one per node.
    table: Vec<(&'k str, u32)>,
}

impl<'k> Writer<'_, 'k> {
    /// Writes the node at `depth` whose subtree's filings are `filings` (all sharing
    /// their first `depth` keys): its children first, whose offsets its table needs, in
    /// key order, then the node; returns the node's offset.
    fn node(&mut self, filings: &[Filing], depth: usize) -> Result<u32, String> {
        let key_at = |f: &Filing, d: usize| -> Option<&'k str> {
            let at = f.keys.0.checked_add(d)?;
            (at < f.keys.1)
                .then(|| self.keys.get(at).copied())
                .flatten()
        };
        let own = filings
            .iter()
            .take_while(|f| key_at(f, depth).is_none())
            .count();
        let (mine, mut rest) = filings.split_at(own);
        let base = self.table.len();
        while let Some(first) = rest.first() {
            let key = key_at(first, depth).unwrap_or_default();
            let run = rest
                .iter()
                .take_while(|f| key_at(f, depth) == Some(key))
                .count();
            let (child, after) = rest.split_at(run);
            let at = self.node(child, depth + 1)?;
            self.table.push((key, at));
            rest = after;
        }
        let out = &mut self.out;
        let at = u32::try_from(out.len()).map_err(|_| "the rule index is larger than 4 GiB")?;
        out.extend_from_slice(&self.ordinal.to_le_bytes());
        self.ordinal = self.ordinal.checked_add(1).ok_or("too many index nodes")?;
        let bytes = |f: &Filing| {
            self.payload
                .get(f.payload.0..f.payload.1)
                .unwrap_or_default()
        };
        put_len(out, mine.iter().map(|f| bytes(f).len()).sum())?;
        mine.iter().for_each(|f| out.extend_from_slice(bytes(f)));
        let table = self.table.get(base..).unwrap_or_default();
        put_len(out, table.len())?;
        // Keys follow the table: key offsets are known once the table's size is.
        let mut key_at = out.len() + table.len() * 12;
        for (key, child) in table {
            put_len(out, key_at)?;
            put_len(out, key.len())?;
            out.extend_from_slice(&child.to_le_bytes());
            key_at += key.len();
        }
        for (key, _) in table {
            out.extend_from_slice(key.as_bytes());
        }
        self.table.truncate(base);
        Ok(at)
    }
}

/// A frozen trie, read in place.
#[derive(Clone, Debug, Default)]
pub(crate) struct Trie {
    bytes: Bytes,
    nodes: usize,
    root: usize,
    extra: (usize, usize),
    wide: WideNodes,
}

/// Lookups a trie serves by binary search before its wide nodes get hash maps: a
/// one-shot process (a hook) looks up a handful of keys and never pays for a map, a
/// long-lived one (an MCP server, an embedding tool) soon does.
const WIDE_AFTER: u32 = 64;

/// Children from which a node is wide. A root of 10,000 exec rules (`tool0` …
/// `tool9999`) took 14 probes per lookup, the largest share of an exec decision.
const WIDE_CHILDREN: usize = 64;

/// The hash maps of a trie's wide nodes, by node ordinal, each built on first use.
#[derive(Debug, Default)]
struct WideNodes {
    asked: std::sync::atomic::AtomicU32,
    /// `None` in a cell: the node is narrow, or an entry did not decode (binary search
    /// then answers, as it always can).
    maps: OnceLock<Box<[OnceLock<Option<ChildMap>>]>>,
}

/// foldhash: std's SipHash over a short key cost about what the 14 probes it replaced
/// did; keys come from the policy's own trie, not from an adversary picking collisions
/// against a process's fixed seed (foldhash seeds per process).
type ChildMap = std::collections::HashMap<Box<[u8]>, usize, foldhash::fast::RandomState>;

impl Clone for WideNodes {
    /// A copy starts counting afresh: the maps are a cache, not part of the trie.
    fn clone(&self) -> Self {
        WideNodes::default()
    }
}

/// A node of a [`Trie`]: its offset in the trie's bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node(usize);

impl Trie {
    /// Opens frozen bytes; `None` when the header is not a trie's.
    pub(crate) fn open(bytes: Bytes) -> Option<Trie> {
        let b = bytes.as_slice();
        if b.get(..4)? != MAGIC {
            return None;
        }
        let nodes = usize_at(b, 4)?;
        let root = usize_at(b, 8)?;
        let extra_len = usize_at(b, 12)?;
        let extra = (16, extra_len);
        b.get(16..16usize.checked_add(extra_len)?)?;
        // Every node takes at least 12 bytes: a larger count is damage, and would size
        // the callers' per-node tables beyond the bytes that could back them.
        if nodes > b.len() / 12 {
            return None;
        }
        Some(Trie {
            bytes,
            nodes,
            root,
            extra,
            wide: WideNodes::default(),
        })
    }

    /// How many nodes the trie has: the bound of [`Trie::ordinal`].
    pub(crate) fn node_count(&self) -> usize {
        self.nodes
    }

    /// The bytes stored beside the nodes by [`TrieBuilder::freeze`].
    pub(crate) fn extra(&self) -> &[u8] {
        let (at, len) = self.extra;
        self.bytes.as_slice().get(at..at + len).unwrap_or_default()
    }

    pub(crate) fn root(&self) -> Node {
        Node(self.root)
    }

    /// The node's number, below [`Trie::node_count`]; `None` for a damaged node.
    pub(crate) fn ordinal(&self, n: Node) -> Option<usize> {
        usize_at(self.bytes.as_slice(), n.0).filter(|o| *o < self.nodes)
    }

    /// The node's payload (empty for a damaged node).
    pub(crate) fn payload(&self, n: Node) -> &[u8] {
        let b = self.bytes.as_slice();
        let Some(len) = usize_at(b, n.0 + 4) else {
            return &[];
        };
        let start = n.0 + 8;
        start
            .checked_add(len)
            .and_then(|end| b.get(start..end))
            .unwrap_or_default()
    }

    /// Every child of `n`, in key order (for warming every node).
    pub(crate) fn children(&self, n: Node) -> Vec<Node> {
        let b = self.bytes.as_slice();
        let Some(table) = usize_at(b, n.0 + 4).map(|len| n.0 + 8 + len) else {
            return Vec::new();
        };
        let count = usize_at(b, table).unwrap_or(0);
        (0..count)
            .map_while(|i| usize_at(b, table + 4 + i * 12 + 8).map(Node))
            .collect()
    }

    /// The child under `key`: from the node's hash map when it is wide and the trie has
    /// served [`WIDE_AFTER`] lookups, otherwise by binary search.
    pub(crate) fn child(&self, n: Node, key: &str) -> Option<Node> {
        let key = key.as_bytes();
        if let Some(map) = self.wide_map(n) {
            return map.get(key).map(|c| Node(*c));
        }
        let entries = self.entries(n)?;
        let (mut lo, mut hi) = (0usize, entries.len() / 12);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (k, child) = self.entry(entries, mid)?;
            match compare_short(k, key) {
                std::cmp::Ordering::Equal => return Some(Node(child)),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    /// The node's child table, bounds-checked once: 12 bytes per child.
    fn entries(&self, n: Node) -> Option<&[u8]> {
        let b = self.bytes.as_slice();
        let table = n.0 + 8 + usize_at(b, n.0 + 4)?;
        let count = usize_at(b, table)?;
        b.get(table + 4..(table + 4).checked_add(count.checked_mul(12)?)?)
    }

    /// The `i`th child of a child table: its key and node offset.
    fn entry<'t>(&'t self, entries: &[u8], i: usize) -> Option<(&'t [u8], usize)> {
        let e = entries.get(i * 12..i * 12 + 12)?;
        let field = |at: usize| -> Option<usize> {
            let w = <[u8; 4]>::try_from(e.get(at..at + 4)?).ok()?;
            usize::try_from(u32::from_le_bytes(w)).ok()
        };
        let k_at = field(0)?;
        let k = self
            .bytes
            .as_slice()
            .get(k_at..k_at.checked_add(field(4)?)?)?;
        Some((k, field(8)?))
    }

    fn wide_map(&self, n: Node) -> Option<&ChildMap> {
        let maps = match self.wide.maps.get() {
            Some(maps) => maps,
            None => {
                let asked = self
                    .wide
                    .asked
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if asked < WIDE_AFTER {
                    return None;
                }
                self.wide
                    .maps
                    .get_or_init(|| (0..self.nodes).map(|_| OnceLock::new()).collect())
            }
        };
        maps.get(self.ordinal(n)?)?
            .get_or_init(|| self.child_map(n))
            .as_ref()
    }

    /// The map of a wide node's children; `None` for a narrow node, or when an entry
    /// does not decode or a key repeats (binary search answers those as before).
    fn child_map(&self, n: Node) -> Option<ChildMap> {
        let entries = self.entries(n)?;
        let count = entries.len() / 12;
        if count < WIDE_CHILDREN {
            return None;
        }
        let mut map = ChildMap::with_capacity_and_hasher(count, Default::default());
        for i in 0..count {
            let (k, child) = self.entry(entries, i)?;
            if map.insert(k.into(), child).is_some() {
                return None;
            }
        }
        Some(map)
    }
}

/// `a.cmp(b)` for the short keys of a trie (path segments, argv words), inline: a call
/// to `memcmp` per probe cost more than the compare itself.
fn compare_short(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Appends `v` as a u32 (rule indices and counts in payloads).
pub(crate) fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes());
}

/// Reads a payload of u32s.
pub(crate) fn u32s(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    b.chunks_exact(4)
        .filter_map(|c| <[u8; 4]>::try_from(c).ok())
        .filter_map(|c| usize::try_from(u32::from_le_bytes(c)).ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    fn build(paths: &[(&[&str], u32)]) -> Trie {
        let mut b = TrieBuilder::default();
        for (path, v) in paths {
            b.file(path.iter().copied(), |p| {
                p.extend_from_slice(&v.to_le_bytes())
            });
        }
        Trie::open(Bytes::new(Arc::new(b.freeze(b"extra").unwrap()))).unwrap()
    }

    /// A wide node's map answers every lookup as binary search did: hits at every depth,
    /// misses before, between and after the keys, and keys that are prefixes of others.
    #[test]
    fn a_wide_node_answers_from_its_map_as_binary_search_does() {
        let names: Vec<String> = (0..300).map(|i| format!("tool{i}")).collect();
        let mut paths: Vec<(Vec<&str>, u32)> = Vec::new();
        for (i, n) in names.iter().enumerate() {
            paths.push((vec![n.as_str()], i as u32));
            paths.push((vec![n.as_str(), "push"], 1000 + i as u32));
        }
        let refs: Vec<(&[&str], u32)> = paths.iter().map(|(p, v)| (p.as_slice(), *v)).collect();
        let trie = build(&refs);
        let asked: Vec<String> = names
            .iter()
            .cloned()
            .chain(["", "a", "tool", "tool3000", "tool29x", "zzz", "tool1 "].map(String::from))
            .collect();
        let found = |path: &[&str]| {
            let mut node = trie.root();
            for k in path {
                node = trie.child(node, k)?;
            }
            Some(trie.payload(node).to_vec())
        };
        let filed = |path: &[&str]| {
            paths
                .iter()
                .find(|(p, _)| p.as_slice() == path)
                .map(|(_, v)| v.to_le_bytes().to_vec())
        };
        // The first round is answered by binary search until `WIDE_AFTER` lookups, the
        // later ones by the root's map.
        for round in 0..3 {
            for k in &asked {
                for path in [
                    vec![k.as_str()],
                    vec![k.as_str(), "push"],
                    vec![k.as_str(), "pull"],
                ] {
                    assert_eq!(found(&path), filed(&path), "round {round}: {path:?}");
                }
            }
        }
        let maps = trie
            .wide
            .maps
            .get()
            .expect("the trie served enough lookups");
        let root = trie.ordinal(trie.root()).unwrap();
        assert!(
            maps[root].get().is_some_and(Option::is_some),
            "the root has no map"
        );
    }

    /// The layout written the plain way, a map per node filled as the paths come: what
    /// [`TrieBuilder`]'s sorted walk must reproduce byte for byte.
    #[derive(Default)]
    struct MapNode<'k> {
        payload: Vec<u8>,
        children: std::collections::BTreeMap<&'k str, MapNode<'k>>,
    }

    fn write_map_node(node: MapNode<'_>, out: &mut Vec<u8>, ordinal: &mut u32) -> u32 {
        let table: Vec<(&str, u32)> = node
            .children
            .into_iter()
            .map(|(key, child)| (key, write_map_node(child, out, ordinal)))
            .collect();
        let at = out.len() as u32;
        out.extend_from_slice(&ordinal.to_le_bytes());
        *ordinal += 1;
        out.extend_from_slice(&(node.payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&node.payload);
        out.extend_from_slice(&(table.len() as u32).to_le_bytes());
        let mut key_at = out.len() + table.len() * 12;
        for (key, child) in &table {
            out.extend_from_slice(&(key_at as u32).to_le_bytes());
            out.extend_from_slice(&(key.len() as u32).to_le_bytes());
            out.extend_from_slice(&child.to_le_bytes());
            key_at += key.len();
        }
        for (key, _) in &table {
            out.extend_from_slice(key.as_bytes());
        }
        at
    }

    fn by_map(filings: &[(Vec<String>, Vec<u8>)], extra: &[u8]) -> Vec<u8> {
        let mut root = MapNode::default();
        for (path, bytes) in filings {
            let mut node = &mut root;
            for key in path {
                node = node.children.entry(key.as_str()).or_default();
            }
            node.payload.extend_from_slice(bytes);
        }
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(extra.len() as u32).to_le_bytes());
        out.extend_from_slice(extra);
        let mut ordinal = 0;
        let root = write_map_node(root, &mut out, &mut ordinal);
        out[4..8].copy_from_slice(&ordinal.to_le_bytes());
        out[8..12].copy_from_slice(&root.to_le_bytes());
        out
    }

    proptest::proptest! {
        /// Paths from a small alphabet, so that filings share nodes, repeat paths and
        /// end at one another's ancestors; keys include the empty one and ones that are
        /// prefixes of others (`a` and `ab` sort apart from `a` then `b`).
        #[test]
        fn freezing_sorted_filings_writes_the_tree_a_map_per_node_writes(
            filings in proptest::collection::vec(
                (
                    proptest::collection::vec("|a|ab|b|src|é", 0..4),
                    proptest::collection::vec(proptest::num::u8::ANY, 0..6),
                ),
                0..40,
            ),
            extra in proptest::collection::vec(proptest::num::u8::ANY, 0..8),
        ) {
            let mut b = TrieBuilder::default();
            for (path, bytes) in &filings {
                b.file(path.iter().map(String::as_str), |p| p.extend_from_slice(bytes));
            }
            proptest::prop_assert_eq!(b.freeze(&extra).unwrap(), by_map(&filings, &extra));
        }
    }

    fn lookup(t: &Trie, path: &[&str]) -> Option<Vec<usize>> {
        let mut n = t.root();
        for k in path {
            n = t.child(n, k)?;
        }
        Some(u32s(t.payload(n)).collect())
    }

    #[test]
    fn finds_every_inserted_path_and_nothing_else() {
        let many: Vec<String> = (0..500).map(|i| format!("dir{i}")).collect();
        let mut paths: Vec<(Vec<&str>, u32)> = many
            .iter()
            .enumerate()
            .map(|(i, d)| (vec![d.as_str(), "src"], i as u32))
            .collect();
        paths.push((vec![], 7));
        paths.push((vec!["docs"], 9));
        let refs: Vec<(&[&str], u32)> = paths.iter().map(|(p, v)| (p.as_slice(), *v)).collect();
        let t = build(&refs);
        assert_eq!(t.extra(), b"extra");
        assert_eq!(lookup(&t, &[]), Some(vec![7]));
        assert_eq!(lookup(&t, &["docs"]), Some(vec![9]));
        for (i, d) in many.iter().enumerate() {
            assert_eq!(lookup(&t, &[d, "src"]), Some(vec![i]));
            assert_eq!(lookup(&t, &[d]), Some(vec![]));
        }
        assert_eq!(lookup(&t, &["dir500"]), None);
        assert_eq!(lookup(&t, &["dir1", "lib"]), None);
        assert_eq!(lookup(&t, &[""]), None);
        // Ordinals are distinct and below the count.
        let mut seen = std::collections::BTreeSet::new();
        for d in &many {
            let n = t.child(t.root(), d).unwrap();
            assert!(seen.insert(t.ordinal(n).unwrap()));
        }
        assert!(seen.iter().all(|o| *o < t.node_count()));
    }

    #[test]
    fn damaged_bytes_never_panic() {
        let t = build(&[(&["a", "b"], 1), (&["a", "c"], 2), (&["d"], 3)]);
        let bytes = t.bytes.as_slice().to_vec();
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                if let Some(t) = Trie::open(Bytes::new(Arc::new(b))) {
                    for path in [&["a", "b"][..], &["a", "c"], &["d"], &[]] {
                        let _ = lookup(&t, path);
                    }
                    let _ = t.ordinal(t.root());
                }
            }
        }
        for cut in 0..bytes.len() {
            if let Some(t) = Trie::open(Bytes::new(Arc::new(bytes[..cut].to_vec()))) {
                let _ = lookup(&t, &["a", "b"]);
            }
        }
    }
}

//! Every detector's keywords in one automaton, walked once over the added text.
//!
//! Keywords match ASCII case-insensitively, except those of `case_sensitive` secret
//! detectors, which match only as written (a Discord token's base64 `NTEx` must not fire
//! on every `context`). Both kinds share one automaton, built over the lower-cased
//! keywords: a hit on a keyword somebody wants as written is confirmed by comparing the
//! bytes the hit covers with that spelling. Before, the case-sensitive keywords had an
//! automaton of their own, and every added byte was walked twice.
//!
//! The walk itself is ours. With some 1,800 keywords, an automaton stepped over every byte
//! waits on memory: its table is megabytes, larger than the second-level cache, and each
//! step's load depends on the one before. So every position first passes a [`Gate`]: a
//! 32 KiB bit set of the keywords' first four bytes, hashed, which stays in the
//! first-level cache and whose tests do not depend on each other. The few positions it
//! lets through (about 4 % of ordinary source) meet a second, independent hash, and those
//! that pass it too are checked by an anchored walk of the automaton from that position;
//! most walks end within four bytes, in the automaton's top states, which stay cached.

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::{Anchored, MatchKind};
use std::collections::HashMap;

/// Bits of the gate's hash (2^18 bits, 32 KiB).
const GATE_BITS: u32 = 18;
const GATE_WORDS: usize = 1 << (GATE_BITS - 6);

/// Positions gated per block: the gate's loop writes the candidates of one block, then
/// the walks run. Kept apart, the gate's loop has the registers to itself.
const BLOCK: usize = 4096;

/// Texts shorter than this are gated position by position, without the block's array.
const SHORT_TEXT: usize = 256;

/// Room for a block's candidates, a power of two so the write's index needs no check.
const CANDIDATES: usize = 2 * BLOCK;

thread_local! {
    /// The candidates' array of [`Keywords::for_each_hit`] on this thread. Stale entries
    /// are harmless: the gate writes a block's candidates before they are read, and only
    /// the first `n` it reports are.
    static CANDIDATE_BLOCK: std::cell::RefCell<[u16; CANDIDATES]> =
        const { std::cell::RefCell::new([0; CANDIDATES]) };
}

/// Who listed one (lower-cased) keyword.
#[derive(Debug, Default)]
struct Owners {
    /// Detectors (indices into the prepared list) that match it in any case.
    any_case: Vec<usize>,
    /// Spellings some detectors match only as written, each with those detectors.
    exact: Vec<(Vec<u8>, Vec<usize>)>,
}

/// One keyword hit: where it is and which detectors it wakes.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// Byte offset of the keyword's first byte in the searched text.
    pub start: usize,
    pattern: usize,
}

/// The keyword automaton and, per keyword, the detectors that listed it.
#[derive(Debug)]
pub struct Keywords {
    /// Walked anchored, from the positions the gate lets through; dense to depth 4,
    /// which is as deep as most walks go.
    automaton: NFA,
    start: aho_corasick::automaton::StateID,
    owners: Vec<Owners>,
    /// `None` when a keyword is a single byte: every position is then a candidate.
    gate: Option<Gate>,
}

/// Which positions may start a keyword: a bit per hash of the position's next four bytes,
/// folded to lower case (and, when a keyword has two bytes only, one per hash of its
/// next three). A position whose bits are clear starts no keyword; a set bit may be a
/// collision, which the second hash and then the walk sort out.
///
/// Folding is `| 0x20` on every byte, for the text and the keywords alike. It maps each
/// ASCII capital onto its small letter, as the automaton's case-insensitive matching does,
/// and merges a few punctuation pairs (`@` and `` ` ``, `[` and `{`) too, which only lets
/// more positions through: no keyword occurrence is ever kept out.
#[derive(Debug)]
struct Gate {
    words: Box<[u64; GATE_WORDS]>,
    /// The same words under a second, independent hash, asked only about the positions
    /// `words` lets through: about two in three of those are collisions, and this second
    /// bit turns nearly all of them away before a walk (it is off in the three-byte form).
    confirm: Box<[u64; GATE_WORDS]>,
    /// A keyword of two bytes needs the second test, on three bytes; without one, a
    /// three-byte keyword is entered under every four-byte word it can begin, and each
    /// position costs one test.
    three: bool,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            words: Box::new([0; GATE_WORDS]),
            confirm: Box::new([0; GATE_WORDS]),
            three: false,
        }
    }

    /// The position's four bytes, folded, as a little-endian word.
    #[inline(always)]
    fn word(four: [u8; 4]) -> u32 {
        u32::from_le_bytes(four) | 0x2020_2020
    }

    #[inline(always)]
    fn slot4(word: u32) -> u32 {
        word.wrapping_mul(0x9E37_79B1) >> (32 - GATE_BITS)
    }

    #[inline(always)]
    fn slot4_again(word: u32) -> u32 {
        word.wrapping_mul(0x2C1B_3C6D) >> (32 - GATE_BITS)
    }

    #[inline(always)]
    fn slot3(word: u32) -> u32 {
        (word & 0x00FF_FFFF).wrapping_mul(0x85EB_CA77) >> (32 - GATE_BITS)
    }

    /// The word holding `slot`'s bit; the mask keeps the index in bounds (a slot is
    /// below 2^GATE_BITS anyway), so the hot loop has no bounds check.
    #[inline(always)]
    fn index(slot: u32) -> usize {
        (slot >> 6) as usize & (GATE_WORDS - 1)
    }

    fn set_in(table: &mut [u64; GATE_WORDS], slot: u32) {
        table[Gate::index(slot)] |= 1 << (slot & 63);
    }

    #[inline(always)]
    fn test_in(table: &[u64; GATE_WORDS], slot: u32) -> bool {
        (table[Gate::index(slot)] >> (slot & 63)) & 1 == 1
    }

    fn set(&mut self, slot: u32) {
        Gate::set_in(&mut self.words, slot);
    }

    /// Enters a four-byte word under both hashes.
    fn set4(&mut self, word: u32) {
        self.set(Gate::slot4(word));
        Gate::set_in(&mut self.confirm, Gate::slot4_again(word));
    }

    /// The second test for a position the first let through; true in the three-byte
    /// form, which has no second table, and for a position too close to the end.
    #[inline(always)]
    fn confirmed(&self, text: &[u8], at: usize) -> bool {
        if self.three {
            return true;
        }
        let Some(Ok(four)) = text.get(at..at + 4).map(<[u8; 4]>::try_from) else {
            return true;
        };
        Gate::test_in(&self.confirm, Gate::slot4_again(Gate::word(four)))
    }

    #[inline(always)]
    fn test(&self, slot: u32) -> bool {
        Gate::test_in(&self.words, slot)
    }

    /// The gate for `keywords` (lower-cased, none shorter than two bytes).
    fn of(keywords: &[String]) -> Gate {
        let mut gate = Gate::new();
        gate.three = keywords.iter().any(|k| k.len() == 2);
        for k in keywords {
            match *k.as_bytes() {
                [a, b, c, d, ..] => gate.set4(Gate::word([a, b, c, d])),
                [a, b, c] if gate.three => gate.set(Gate::slot3(Gate::word([a, b, c, 0]))),
                [a, b, c] => {
                    for d in 0..=u8::MAX {
                        gate.set4(Gate::word([a, b, c, d]));
                    }
                }
                // Every third byte may follow a two-byte keyword.
                [a, b] => {
                    for c in 0..=u8::MAX {
                        gate.set(Gate::slot3(Gate::word([a, b, c, 0])));
                    }
                }
                _ => {}
            }
        }
        gate
    }

    #[inline(always)]
    fn open<const THREE: bool>(&self, word: u32) -> bool {
        if THREE {
            self.test(Gate::slot4(word)) | self.test(Gate::slot3(word))
        } else {
            self.test(Gate::slot4(word))
        }
    }

    fn open_any(&self, word: u32) -> bool {
        if self.three {
            self.open::<true>(word)
        } else {
            self.open::<false>(word)
        }
    }

    fn candidates(&self, chunk: &[u8], out: &mut [u16; CANDIDATES]) -> usize {
        if self.three {
            self.candidates_with::<true>(chunk, out)
        } else {
            self.candidates_with::<false>(chunk, out)
        }
    }

    /// Writes to `out` the offsets of `chunk` (at most [`BLOCK`] of them, plus the three
    /// bytes the last one's word reads) where a keyword may start; returns how many.
    ///
    /// One eight-byte load serves five positions. Every offset is written and the count
    /// advances only when the gate is open: no branch to mispredict on the few that pass
    /// (a five-position mask with one branch was slower). The arithmetic wraps on
    /// purpose: `n` and the offsets stay below [`CANDIDATES`] (a chunk holds at most
    /// [`BLOCK`] positions), and an overflow check here is a branch per position.
    #[inline(always)]
    fn candidates_with<const THREE: bool>(
        &self,
        chunk: &[u8],
        out: &mut [u16; CANDIDATES],
    ) -> usize {
        let mut n: usize = 0;
        let mut i: usize = 0;
        let mut keep = |n: &mut usize, at: usize, word: u32| {
            out[*n & (CANDIDATES - 1)] = at as u16;
            *n = n.wrapping_add(usize::from(self.open::<THREE>(word)));
        };
        while let Some(eight) = chunk.get(i..i.wrapping_add(8)) {
            let Ok(eight) = <[u8; 8]>::try_from(eight) else {
                break;
            };
            let x = u64::from_le_bytes(eight) | 0x2020_2020_2020_2020;
            for k in 0..5 {
                keep(&mut n, i.wrapping_add(k), (x >> (8 * k)) as u32);
            }
            i = i.wrapping_add(5);
        }
        while let Some(four) = chunk.get(i..i.wrapping_add(4)) {
            let Ok(four) = <[u8; 4]>::try_from(four) else {
                break;
            };
            keep(&mut n, i, Gate::word(four));
            i = i.wrapping_add(1);
        }
        n
    }
}

/// Collects keywords before the automaton is built.
#[derive(Debug, Default)]
pub struct KeywordsBuilder {
    list: Vec<String>,
    index: HashMap<String, usize>,
    owners: Vec<Owners>,
}

impl KeywordsBuilder {
    /// Records that detector `owner` wakes on `keyword`, in any case or only as written.
    pub fn add(&mut self, keyword: &str, owner: usize, case_sensitive: bool) {
        let lower = keyword.to_ascii_lowercase();
        let i = match self.index.get(&lower) {
            Some(&i) => i,
            None => {
                let i = self.list.len();
                self.index.insert(lower.clone(), i);
                self.list.push(lower);
                self.owners.push(Owners::default());
                i
            }
        };
        let o = &mut self.owners[i];
        if case_sensitive {
            let spelling = keyword.as_bytes();
            match o.exact.iter_mut().find(|(s, _)| s == spelling) {
                Some((_, ds)) => ds.push(owner),
                None => o.exact.push((spelling.to_vec(), vec![owner])),
            }
        } else {
            o.any_case.push(owner);
        }
    }

    /// The automaton, or `None` when no detector listed a keyword. An empty keyword is an
    /// error: it would wake its detector everywhere, and the compiler rejects it (E0124).
    pub fn build(self) -> Result<Option<Keywords>, String> {
        if self.list.is_empty() {
            return Ok(None);
        }
        if self.list.iter().any(String::is_empty) {
            return Err("a keyword is empty".into());
        }
        // Walked anchored: the gate picks the positions, and the walk from each ends at
        // the first byte no keyword continues with. A contiguous NFA builds in a fraction
        // of a DFA's time (which every small commit pays), and dense to depth 4 it walks
        // as fast here (184 against 181 MiB/s in the detect bench). No prefilter: the
        // gate is ours.
        let automaton = NFA::builder()
            .dense_depth(4)
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(&self.list)
            .map_err(|e| e.to_string())?;
        let start = automaton
            .start_state(Anchored::Yes)
            .map_err(|e| e.to_string())?;
        let gate = if self.list.iter().any(|k| k.len() < 2) {
            None
        } else {
            Some(Gate::of(&self.list))
        };
        Ok(Some(Keywords {
            automaton,
            start,
            owners: self.owners,
            gate,
        }))
    }
}

impl Keywords {
    /// Calls `f` with every keyword occurrence in `text`, overlapping ones included
    /// (`apikey` holds `key` too, and both may have owners), in no particular order.
    pub fn for_each_hit(&self, text: &[u8], mut f: impl FnMut(Hit)) {
        let Some(gate) = &self.gate else {
            for at in 0..text.len() {
                self.walk_from(text, at, &mut f);
            }
            return;
        };
        if text.len() < SHORT_TEXT {
            // A value or a short line: not worth clearing the candidates' array.
            for (at, four) in text.windows(4).enumerate() {
                let Ok(four) = <[u8; 4]>::try_from(four) else {
                    continue;
                };
                if gate.open_any(Gate::word(four)) && gate.confirmed(text, at) {
                    self.walk_from(text, at, &mut f);
                }
            }
        } else {
            let mut gated = |candidates: &mut [u16; CANDIDATES]| {
                let hashed = text.len() - 3;
                let mut from = 0;
                while from < hashed {
                    let to = (from + BLOCK).min(hashed);
                    let chunk = text.get(from..to + 3).unwrap_or_default();
                    let n = gate.candidates(chunk, candidates);
                    for &i in candidates.get(..n).unwrap_or_default() {
                        let at = from + usize::from(i);
                        if gate.confirmed(text, at) {
                            self.walk_from(text, at, &mut f);
                        }
                    }
                    from = to;
                }
            };
            // The thread's array, cleared once: clearing 16 KiB for every text gated was
            // about 1.5 % of a large scan's instructions. Only a nested call (a hit's
            // callback gating another text) finds it taken and uses an array of its own.
            CANDIDATE_BLOCK.with(|cell| match cell.try_borrow_mut() {
                Ok(mut candidates) => gated(&mut candidates),
                Err(_) => gated(&mut [0u16; CANDIDATES]),
            });
        }
        // The last three positions have no four bytes to hash; only a short keyword can
        // start there, and they are few.
        for at in text.len().saturating_sub(3)..text.len() {
            self.walk_from(text, at, &mut f);
        }
    }

    /// Reports every keyword that starts at `text[at]`.
    #[inline(always)]
    fn walk_from(&self, text: &[u8], at: usize, f: &mut impl FnMut(Hit)) {
        let mut sid = self.start;
        for (len, &b) in text.get(at..).unwrap_or_default().iter().enumerate() {
            sid = self.automaton.next_state(Anchored::Yes, sid, b);
            if !self.automaton.is_special(sid) {
                continue;
            }
            if self.automaton.is_dead(sid) {
                return;
            }
            if self.automaton.is_match(sid) {
                // A match state also lists the keywords that are suffixes of the walked
                // text; those start later and are reported from their own position.
                for i in 0..self.automaton.match_len(sid) {
                    let pid = self.automaton.match_pattern(sid, i);
                    if self.automaton.pattern_len(pid) == len + 1 {
                        f(Hit {
                            start: at,
                            pattern: pid.as_usize(),
                        });
                    }
                }
            }
        }
    }

    /// Every keyword occurrence in `text`, as [`Keywords::for_each_hit`] finds them.
    pub fn hits(&self, text: &[u8]) -> Vec<Hit> {
        let mut out = Vec::new();
        self.for_each_hit(text, |h| out.push(h));
        out
    }

    /// The detectors `hit` (found in `text`) wakes, as groups of one keyword each: the
    /// any-case owners, then the owners of each spelling the text has exactly. (Before the
    /// two passes were folded, these were separate keywords; deferral still asks about
    /// each on its own.)
    pub fn owner_groups<'s>(
        &'s self,
        hit: Hit,
        text: &'s [u8],
    ) -> impl Iterator<Item = &'s [usize]> + Clone + 's {
        let o = &self.owners[hit.pattern];
        let exact = o.exact.iter().filter(move |(spelling, _)| {
            text.get(hit.start..hit.start + spelling.len()) == Some(spelling.as_slice())
        });
        std::iter::once(o.any_case.as_slice())
            .filter(|g| !g.is_empty())
            .chain(exact.map(|(_, ds)| ds.as_slice()))
    }

    /// The detectors `hit` (found in `text`) wakes: every any-case owner, and the owners
    /// of a spelling the text has exactly.
    pub fn owners<'s>(&'s self, hit: Hit, text: &'s [u8]) -> impl Iterator<Item = usize> + 's {
        self.owner_groups(hit, text).flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn woken(k: &Keywords, text: &[u8]) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = k
            .hits(text)
            .into_iter()
            .flat_map(|h| k.owners(h, text).map(move |d| (h.start, d)))
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn any_case_and_exact_keywords_share_one_pass() {
        let mut b = KeywordsBuilder::default();
        b.add("Token", 0, false);
        b.add("NTEx", 1, true);
        b.add("ntex", 2, false);
        b.add("key", 3, false);
        let k = b.build().unwrap().unwrap();
        // `context` holds `ntex` in lower case: only the any-case owner wakes.
        assert_eq!(woken(&k, b"context"), [(2, 2)]);
        assert_eq!(woken(&k, b"x NTEx"), [(2, 1), (2, 2)]);
        assert_eq!(woken(&k, b"NTEX"), [(0, 2)]);
        assert_eq!(woken(&k, b"TOKEN"), [(0, 0)]);
        // Overlapping keywords are all reported.
        assert_eq!(woken(&k, b"apikey token"), [(3, 3), (7, 0)]);
    }

    /// Every occurrence, by aho-corasick's own overlapping search (case-insensitive):
    /// what the gate and the anchored walks must find, no more and no less.
    fn reference(list: &[&str], text: &[u8]) -> Vec<(usize, usize)> {
        let ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(list)
            .unwrap();
        let mut out: Vec<(usize, usize)> = ac
            .find_overlapping_iter(text)
            .map(|m| (m.start(), m.pattern().as_usize()))
            .collect();
        out.sort_unstable();
        out
    }

    fn found(list: &[&str], text: &[u8]) -> Vec<(usize, usize)> {
        let mut b = KeywordsBuilder::default();
        for (i, k) in list.iter().enumerate() {
            b.add(k, i, false);
        }
        let k = b.build().unwrap().unwrap();
        let mut got: Vec<(usize, usize)> =
            k.hits(text).iter().map(|h| (h.start, h.pattern)).collect();
        got.sort_unstable();
        got
    }

    #[test]
    fn gate_keeps_no_occurrence_out() {
        let list = [
            "key",
            "apikey",
            "pass",
            "...",
            "://",
            "ntex",
            "eyj",
            "q~",
            "-----begin",
            "@scope",
            "[sec",
            "ab",
        ];
        let long: Vec<&str> = list.iter().copied().filter(|k| k.len() > 2).collect();
        let unit = "let apiKEY = \"x\"; // PASS ... http://h NTEx eyJhb KEY Q~x\n\
                    -----BEGIN `scope {SEC ab";
        for n in [0usize, 1, 7, 100] {
            let mut text = unit.repeat(n).into_bytes();
            // Occurrences in the last three bytes, which the gate does not hash.
            for tail in ["", "k", "ke", "key", "q~", "ab", "...", "://"] {
                let mut t = text.clone();
                t.extend_from_slice(tail.as_bytes());
                assert_eq!(
                    found(&list, &t),
                    reference(&list, &t),
                    "n = {n}, tail {tail:?}"
                );
                // Without the two-byte keywords the gate takes its one-test form.
                assert_eq!(
                    found(&long, &t),
                    reference(&long, &t),
                    "n = {n}, tail {tail:?}"
                );
            }
            text.truncate(text.len() / 2);
            assert_eq!(
                found(&list, &text),
                reference(&list, &text),
                "n = {n}, half"
            );
        }
    }

    #[test]
    fn one_byte_keyword_turns_the_gate_off() {
        let list = ["x", "key"];
        let text = b"xkeyx KEY x";
        assert_eq!(found(&list, text), reference(&list, text));
    }

    #[test]
    fn empty_keyword_is_an_error() {
        let mut b = KeywordsBuilder::default();
        b.add("", 0, false);
        assert!(b.build().is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Random keywords (short ones, punctuation the fold merges, non-ASCII) over
        /// random text drawn from the same bytes in both cases.
        #[test]
        fn gate_and_walk_find_what_a_full_search_finds(
            list in proptest::collection::vec("[aAbB@`\\[{~.:/é0-9]{2,6}", 1..12),
            text in "[aAbBcC@`\\[{~.:/é0-9 \n]{0,600}",
        ) {
            agree(&list, &text)?;
        }

        /// Without a two-byte keyword the gate tests four bytes only, and a three-byte
        /// keyword is entered under every word it can begin.
        #[test]
        fn one_test_gate_finds_what_a_full_search_finds(
            list in proptest::collection::vec("[aAbB@`\\[{~.:/é0-9]{3,6}", 1..12),
            text in "[aAbBcC@`\\[{~.:/é0-9 \n]{0,600}",
        ) {
            agree(&list, &text)?;
        }
    }

    fn agree(list: &[String], text: &str) -> Result<(), proptest::test_runner::TestCaseError> {
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        let mut want = reference(&refs, text.as_bytes());
        // The builder merges keywords equal up to case into one pattern.
        let mut got = found(&refs, text.as_bytes());
        let canon = |v: &mut Vec<(usize, usize)>| {
            for (_, p) in v.iter_mut() {
                let lower = refs[*p].to_ascii_lowercase();
                *p = refs
                    .iter()
                    .position(|k| k.to_ascii_lowercase() == lower)
                    .unwrap();
            }
            v.sort_unstable();
            v.dedup();
        };
        canon(&mut want);
        // `found` numbers patterns by first appearance of each lower-cased keyword.
        let mut distinct: Vec<String> = Vec::new();
        for k in &refs {
            let l = k.to_ascii_lowercase();
            if !distinct.contains(&l) {
                distinct.push(l);
            }
        }
        for (_, p) in got.iter_mut() {
            *p = refs
                .iter()
                .position(|k| k.to_ascii_lowercase() == distinct[*p])
                .unwrap();
        }
        canon(&mut got);
        proptest::prop_assert_eq!(got, want);
        Ok(())
    }

    #[test]
    fn no_keywords_no_automaton() {
        assert!(KeywordsBuilder::default().build().unwrap().is_none());
    }
}

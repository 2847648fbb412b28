//! Every detector's keywords in one automaton, walked once over the added text.
//!
//! Keywords match ASCII case-insensitively, except those of `case_sensitive` secret
//! detectors, which match only as written (a Discord token's base64 `NTEx` must not fire
//! on every `context`). Both kinds share one automaton, built over the lower-cased
//! keywords: a hit on a keyword somebody wants as written is confirmed by comparing the
//! bytes the hit covers with that spelling. Before, the case-sensitive keywords had an
//! automaton of their own, and every added byte was walked twice.
//!
//! The walk itself is ours, over the crate's DFA ([`Keywords::for_each_hit`]): a DFA step
//! is one table load that depends on the previous one, and with hundreds of keywords the
//! table is larger than the first-level cache, so one walk mostly waits on memory. Long
//! texts are cut at line breaks into [`LANES`] pieces walked in lockstep: their loads are
//! independent, and the processor overlaps them.

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind, StartKind};
use std::collections::HashMap;

/// How many pieces of a long text are walked in lockstep. Eight measured 4 % faster than
/// four in `cargo bench -p contextos-scan --bench detect` (130 against 122 MiB/s).
const LANES: usize = 8;

/// Texts shorter than this are walked in one piece: cutting them costs more than it saves.
const MIN_LANE_TEXT: usize = 4096;

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
    dfa: DFA,
    start: aho_corasick::automaton::StateID,
    owners: Vec<Owners>,
    /// No keyword holds a newline, so no hit spans one and the automaton is back at its
    /// start state after every newline: a text may be cut after any newline.
    cut_at_newlines: bool,
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

    /// The automaton, or `None` when no detector listed a keyword.
    pub fn build(self) -> Result<Option<Keywords>, String> {
        if self.list.is_empty() {
            return Ok(None);
        }
        // Every added byte passes through this automaton: a DFA walks it several times
        // faster than an NFA for hundreds of keywords, for a build of a few milliseconds
        // per process. No prefilter (none helps with this many keywords, and without one
        // the start state is an ordinary state the walk need not stop at); unanchored
        // searches only, which keeps the table at half the size.
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .start_kind(StartKind::Unanchored)
            .prefilter(false)
            .build(&self.list)
            .map_err(|e| e.to_string())?;
        let start = dfa.start_state(Anchored::No).map_err(|e| e.to_string())?;
        let cut_at_newlines = !self.list.iter().any(|k| k.contains('\n'));
        Ok(Some(Keywords {
            dfa,
            start,
            owners: self.owners,
            cut_at_newlines,
        }))
    }
}

impl Keywords {
    /// Calls `f` with every keyword occurrence in `text`, overlapping ones included
    /// (`apikey` holds `key` too, and both may have owners), in no particular order.
    #[allow(
        clippy::needless_range_loop,
        reason = "the lockstep walk steps every lane at the same offset; one iterator per lane would walk them one after another"
    )]
    pub fn for_each_hit(&self, text: &[u8], mut f: impl FnMut(Hit)) {
        if !self.cut_at_newlines || text.len() < MIN_LANE_TEXT {
            let mut sid = self.start;
            for (at, &b) in text.iter().enumerate() {
                sid = self.step(sid, b, at, &mut f);
            }
            return;
        }
        // Cut after the first newline at or past each even share of the text; a piece
        // may come out empty (a text with few newlines), which costs nothing.
        let mut bounds = [text.len(); LANES + 1];
        bounds[0] = 0;
        for (i, b) in bounds.iter_mut().enumerate().take(LANES).skip(1) {
            let from = text.len() / LANES * i;
            *b = memchr::memchr(b'\n', text.get(from..).unwrap_or_default())
                .map_or(text.len(), |j| from + j + 1);
        }
        for i in 1..=LANES {
            bounds[i] = bounds[i].max(bounds[i - 1]);
        }
        let lanes: [&[u8]; LANES] =
            std::array::from_fn(|i| text.get(bounds[i]..bounds[i + 1]).unwrap_or_default());
        let common = lanes.iter().map(|l| l.len()).min().unwrap_or(0);
        let mut sids = [self.start; LANES];
        for k in 0..common {
            for (lane, sid) in sids.iter_mut().enumerate() {
                *sid = self.step(*sid, lanes[lane][k], bounds[lane] + k, &mut f);
            }
        }
        for (lane, sid) in sids.iter_mut().enumerate() {
            for (k, &b) in lanes[lane].iter().enumerate().skip(common) {
                *sid = self.step(*sid, b, bounds[lane] + k, &mut f);
            }
        }
    }

    /// One DFA step on byte `b` at offset `at`, reporting the keywords that end there.
    #[inline(always)]
    fn step(
        &self,
        sid: aho_corasick::automaton::StateID,
        b: u8,
        at: usize,
        f: &mut impl FnMut(Hit),
    ) -> aho_corasick::automaton::StateID {
        let next = self.dfa.next_state(Anchored::No, sid, b);
        // Match states are "special"; without a prefilter, and with no dead state in an
        // unanchored search, nothing else is.
        if self.dfa.is_special(next) && self.dfa.is_match(next) {
            for i in 0..self.dfa.match_len(next) {
                let pid = self.dfa.match_pattern(next, i);
                f(Hit {
                    start: at + 1 - self.dfa.pattern_len(pid),
                    pattern: pid.as_usize(),
                });
            }
        }
        next
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

    /// The lanes find what one walk from the start finds, wherever the cuts fall.
    #[test]
    fn lanes_find_what_one_walk_finds() {
        let mut b = KeywordsBuilder::default();
        for (i, k) in ["key", "apikey", "pass", "...", "://", "NTEx", "eyJ", "x"]
            .iter()
            .enumerate()
        {
            b.add(k, i, i == 5);
        }
        let k = b.build().unwrap().unwrap();
        let unit = "let apikey = \"x\"; // pass ... http://h NTEx eyJhb KEY\n";
        for n in [1usize, 7, 100, 300] {
            let mut text = unit.repeat(n).into_bytes();
            // A long last line without newlines, and one with no newline at all.
            text.extend(std::iter::repeat_n(b'k', n * 13));
            text.extend_from_slice(b"ey pass");
            for t in [&text[..], &text[..text.len() / 2], unit.as_bytes()] {
                let mut got: Vec<(usize, usize)> =
                    k.hits(t).iter().map(|h| (h.start, h.pattern)).collect();
                got.sort_unstable();
                let mut want = Vec::new();
                let mut sid = k.start;
                for (at, &byte) in t.iter().enumerate() {
                    sid = k.step(sid, byte, at, &mut |h: Hit| want.push((h.start, h.pattern)));
                }
                want.sort_unstable();
                assert_eq!(got, want, "n = {n}, len = {}", t.len());
            }
        }
    }

    #[test]
    fn no_keywords_no_automaton() {
        assert!(KeywordsBuilder::default().build().unwrap().is_none());
    }
}

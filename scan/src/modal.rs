//! A detector regex compiled lazily in two modes: ASCII (the regex crate's Unicode mode
//! off) where the pattern allows, and as written.
//!
//! Unicode mode costs the scan on every woken line: `\b` makes the lazy DFA give up at the
//! first non-ASCII byte, `(?i)` folds `k` with the Kelvin sign and `s` with `ſ`, and every
//! negated class becomes a UTF-8 automaton, so each worker builds many more states. Over
//! ASCII text the two modes match exactly the same, so ASCII text (nearly all of a
//! change) gets the ASCII form. Text with a non-ASCII byte gets the form as written, so a
//! scan finds there everything it found before ASCII mode existed: `\s` still takes a
//! no-break space as a separator. A detector's own patterns search such text in both
//! forms, since the ASCII form finds some matches the written one misses (`\bKEY` in
//! `éKEY…`, where Unicode mode counts `é` as a word character).

use regex::bytes::{Regex, RegexBuilder};
use std::sync::OnceLock;

/// Upper bound for a compiled detector regex: the compiler's, so a pattern `check`
/// accepted compiles here too.
pub use contextos_core::build::REGEX_SIZE_LIMIT;

/// One pattern's two compiled forms, each built the first time it is asked for.
#[derive(Debug, Default)]
pub(crate) struct ModalRegex {
    /// `None` when the pattern needs Unicode mode: the written form serves ASCII text too,
    /// compiled once and searched once.
    ascii: OnceLock<Option<Regex>>,
    written: OnceLock<Result<Regex, regex::Error>>,
}

fn compile(pattern: &str, unicode: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(unicode)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

impl ModalRegex {
    /// The form for ASCII text: Unicode mode off, or the pattern as written when it needs
    /// Unicode (`\p{Greek}`, a class holding `é`).
    pub(crate) fn ascii(&self, pattern: &str) -> Result<&Regex, regex::Error> {
        match self.ascii.get_or_init(|| compile(pattern, false).ok()) {
            Some(re) => Ok(re),
            None => self.written(pattern),
        }
    }

    /// The ASCII form when it differs from the written one.
    fn distinct_ascii(&self, pattern: &str) -> Option<&Regex> {
        self.ascii
            .get_or_init(|| compile(pattern, false).ok())
            .as_ref()
    }

    /// The pattern as written (Unicode mode on), as `check` compiles it.
    pub(crate) fn written(&self, pattern: &str) -> Result<&Regex, regex::Error> {
        self.written
            .get_or_init(|| compile(pattern, true))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The form that answers for `text` exactly as the pattern as written would.
    pub(crate) fn exact_for(&self, pattern: &str, text: &[u8]) -> Result<&Regex, regex::Error> {
        if text.is_ascii() {
            self.ascii(pattern)
        } else {
            self.written(pattern)
        }
    }

    /// The forms a detector's pattern searches `text` with: the ASCII form, and on text
    /// with a non-ASCII byte the written form too (once, when the two are one).
    pub(crate) fn searchers(
        &self,
        pattern: &str,
        text: &[u8],
    ) -> Result<(&Regex, Option<&Regex>), regex::Error> {
        if text.is_ascii() {
            return Ok((self.ascii(pattern)?, None));
        }
        let written = self.written(pattern)?;
        Ok(match self.distinct_ascii(pattern) {
            Some(ascii) => (ascii, Some(written)),
            None => (written, None),
        })
    }

    /// Compiles both forms now.
    pub(crate) fn warm(&self, pattern: &str) -> Result<(), regex::Error> {
        self.ascii(pattern)?;
        self.written(pattern)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_text_gets_the_ascii_form_and_other_text_the_written_one() {
        let m = ModalRegex::default();
        // `\s` as written takes a no-break space; the ASCII form does not.
        let p = r"a\sb";
        assert!(!m.ascii(p).unwrap().is_match("a\u{a0}b".as_bytes()));
        assert!(m
            .exact_for(p, "a\u{a0}b".as_bytes())
            .unwrap()
            .is_match("a\u{a0}b".as_bytes()));
        assert!(m.exact_for(p, b"a b").unwrap().is_match(b"a b"));
        let (_, written) = m.searchers(p, b"a b").unwrap();
        assert!(written.is_none());
        let (_, written) = m.searchers(p, "a\u{a0}b".as_bytes()).unwrap();
        assert!(written.is_some());
    }

    #[test]
    fn a_pattern_that_needs_unicode_compiles_as_written() {
        let m = ModalRegex::default();
        let re = m.ascii(r"\p{Greek}+").unwrap();
        assert!(re.is_match("αβγ".as_bytes()));
        assert!(m.warm(r"\p{Greek}+").is_ok());
        // One form, searched once, on any text.
        let (_, second) = m.searchers(r"\p{Greek}+", "αβγ".as_bytes()).unwrap();
        assert!(second.is_none());
        // A cell holds one pattern's forms: a broken pattern gets its own.
        assert!(ModalRegex::default().warm(r"(").is_err());
    }
}

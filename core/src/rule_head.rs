//! The head of a rule's snapshot encoding, read without the rest: what a build on the
//! precompiled stdlib reads of the image's rules (their ids and what the index is built
//! from), leaving each rule's conditions in its bytes until a request names it.

use crate::ir::OpMask;
use crate::request::Domain;
use contextos_grammar::ast::Effect;
use serde::Deserialize;

/// The leading fields of a rule's encoding (`snapshot::RuleSnap`'s, in its order), borrowed from
/// the bytes: the id and what the index is built from. A precompiled stdlib's rules are
/// read this far only; the rest of a rule is decoded when a request's candidates name it.
#[derive(Deserialize, Debug)]
pub(crate) struct RuleHead<'a> {
    #[serde(borrow)]
    pub(crate) id: &'a str,
    pub(crate) effect: Effect,
    pub(crate) domain: Domain,
    pub(crate) ops: OpMask,
    #[serde(borrow)]
    _role: Option<&'a str>,
    #[serde(borrow)]
    pub(crate) patterns: Vec<&'a str>,
    #[serde(borrow)]
    pub(crate) exec_patterns: Vec<ExecHead<'a>>,
}

/// An [`crate::ir::ExecPattern`]'s encoding, borrowed.
#[derive(Deserialize, Debug)]
pub(crate) struct ExecHead<'a> {
    #[serde(borrow)]
    words: Vec<WordHead<'a>>,
    _rest: bool,
}

/// A [`crate::ir::Word`]'s encoding, borrowed: a glob word is written as its pattern.
#[derive(Deserialize, Debug)]
enum WordHead<'a> {
    Literal(#[serde(borrow)] &'a str),
    Glob(
        #[serde(borrow)]
        #[allow(dead_code, reason = "read only to step over a glob word's encoding")]
        &'a str,
    ),
}

impl<'a> ExecHead<'a> {
    /// The leading literal words, as [`crate::ir::ExecPattern::literal_prefix`] gives them.
    pub(crate) fn literal_prefix(&self) -> Vec<&'a str> {
        self.words
            .iter()
            .map_while(|w| match w {
                WordHead::Literal(l) => Some(*l),
                WordHead::Glob(_) => None,
            })
            .collect()
    }
}

/// The head of one rule's encoding; `None` for bytes that do not decode that far.
pub(crate) fn rule_head(bytes: &[u8]) -> Option<RuleHead<'_>> {
    postcard::take_from_bytes(bytes).ok().map(|(head, _)| head)
}

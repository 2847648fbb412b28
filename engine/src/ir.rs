//! The compiled form of a policy set: rules with resolved patterns and typed conditions,
//! ready for the index and the evaluator. Built by `compile`, never by hand.

use crate::glob::PathGlobs;
use crate::request::Domain;
use crate::schema::{Attr, Method};
use contextos_grammar::ast::{CmpOp, Effect};
use serde::Serialize;

/// Where a rule or guide was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub file: String,
    pub line: usize,
    pub col: usize,
    #[serde(skip)]
    pub start: usize,
    #[serde(skip)]
    pub end: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Stdlib,
    Plugin,
    User,
}

/// Bit set of path operations (`read` = 1, `write` = 2, `delete` = 4); domains without
/// operations use `ALL_OPS`.
pub type OpMask = u8;
pub const ALL_OPS: OpMask = 0b111;

#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub id: String,
    pub effect: Effect,
    pub domain: Domain,
    pub ops: OpMask,
    pub role: Option<String>,
    /// Patterns as written after `$var` expansion (empty: the rule matches every subject).
    pub patterns: Vec<String>,
    pub exec_patterns: Vec<ExecPattern>,
    pub clauses: Vec<Clause>,
    pub because: Option<String>,
    pub severity: Option<String>,
    pub obligations: Vec<ObligationIr>,
    pub origin: Origin,
    pub layer: Layer,
    /// False when a condition is a Rhai script: emitters must treat the rule conservatively.
    pub analyzable: bool,
}

#[derive(Debug, Clone)]
pub struct Clause {
    pub negated: bool,
    pub cond: Cond,
    /// Source text of the clause (`when role != "maintainer"`), for why-not traces.
    pub text: String,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObligationIr {
    pub name: String,
    pub entries: Vec<(String, serde_json::Value)>,
}

/// An exec head pattern: literal or glob words, optionally followed by `*` = any rest.
#[derive(Debug, Clone)]
pub struct ExecPattern {
    pub words: Vec<Word>,
    pub rest: bool,
}

#[derive(Debug, Clone)]
pub enum Word {
    Literal(String),
    Glob(globset::GlobMatcher),
}

impl Word {
    fn is_match(&self, w: &str) -> bool {
        match self {
            Word::Literal(l) => l == w,
            Word::Glob(g) => g.is_match(w),
        }
    }
}

impl ExecPattern {
    /// Leading literal words, used as the argv-prefix index key.
    pub fn literal_prefix(&self) -> Vec<&str> {
        self.words
            .iter()
            .map_while(|w| match w {
                Word::Literal(l) => Some(l.as_str()),
                Word::Glob(_) => None,
            })
            .collect()
    }

    /// argv[0] also matches by basename, so `/usr/bin/rm -rf /` is caught by `rm -rf /`.
    pub fn matches(&self, argv: &[String]) -> bool {
        if argv.len() < self.words.len() || (!self.rest && argv.len() != self.words.len()) {
            return false;
        }
        self.words
            .iter()
            .zip(argv)
            .enumerate()
            .all(|(i, (p, a))| p.is_match(a) || (i == 0 && p.is_match(crate::exec::basename(a))))
    }
}

#[derive(Debug, Clone)]
pub enum Cond {
    Or(Vec<Cond>),
    And(Vec<Cond>),
    Not(Box<Cond>),
    Cmp(Box<Val>, CmpOp, Box<Val>),
    /// `lhs matches [globs]`; lhs is a string or a list (any element).
    Matches(Box<Val>, PathGlobs),
    Truthy(Val),
    Script(usize),
}

#[derive(Debug, Clone)]
pub enum Val {
    Str(String),
    Int(i64),
    Bool(bool),
    List(Vec<String>),
    Attr(Attr),
    Call(Method, Box<Val>, Vec<Val>),
}

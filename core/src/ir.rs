//! The compiled form of a policy set: rules with resolved patterns and typed conditions,
//! ready for the index and the evaluator. Built by `compile`, never by hand.

use crate::glob::PathGlobs;
use crate::request::Domain;
use crate::schema::{Attr, Method};
use contextos_grammar::ast::{CmpOp, Effect};
use serde::{Deserialize, Serialize};

/// Where a rule or guide was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// `Origin` with its byte span, for the policy cache (JSON reports omit the span).
pub mod origin_full {
    use crate::ir::Origin;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(o: &Origin, s: S) -> Result<S::Ok, S::Error> {
        (&o.file, o.line, o.col, o.start, o.end).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Origin, D::Error> {
        let (file, line, col, start, end) = <(String, usize, usize, usize, usize)>::deserialize(d)?;
        Ok(Origin {
            file,
            line,
            col,
            start,
            end,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Clause {
    pub negated: bool,
    pub cond: Cond,
    /// Source text of the clause (`when role != "maintainer"`), for why-not traces.
    pub text: String,
    #[serde(with = "origin_full")]
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObligationIr {
    pub name: String,
    pub entries: Vec<(String, serde_json::Value)>,
}

/// An exec head pattern: literal or glob words, optionally followed by `*` = any rest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecPattern {
    pub words: Vec<Word>,
    pub rest: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Word {
    Literal(String),
    Glob(crate::glob::LazyWordGlob),
}

impl Word {
    fn is_match(&self, w: &str) -> Result<bool, String> {
        match self {
            Word::Literal(l) => Ok(l == w),
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

    /// `argv[0]` also matches by basename, so `/usr/bin/rm -rf /` is caught by `rm -rf /`.
    /// An error means a word glob could not be compiled; the caller decides stricter.
    pub fn matches(&self, argv: &[String]) -> Result<bool, String> {
        if argv.len() < self.words.len() || (!self.rest && argv.len() != self.words.len()) {
            return Ok(false);
        }
        for (i, (p, a)) in self.words.iter().zip(argv).enumerate() {
            let hit = p.is_match(a)? || (i == 0 && p.is_match(contextos_shell::basename(a))?);
            if !hit {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Val {
    Str(String),
    Int(i64),
    Bool(bool),
    List(Vec<String>),
    Attr(Attr),
    Call(Method, Box<Val>, Vec<Val>),
}

//! The compiled form of a policy set: rules with resolved patterns and typed conditions,
//! ready for the index and the evaluator. Built by [`build`](crate::build()), never by hand.

use crate::glob::PathGlobs;
use crate::request::Domain;
use crate::schema::{Attr, Method};
use contextos_grammar::ast::{CmpOp, Effect};
use serde::{Deserialize, Serialize};

/// A location in a policy source: of a rule, clause, guide, detector or test case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The source's name as loaded (project files relative to the project root).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub col: usize,
    /// Byte offset where the item starts in its source, so set-wide checks (duplicate ids)
    /// can point at it; left out of JSON reports.
    #[serde(skip)]
    pub start: usize,
    /// Byte offset just past the item's end.
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

    /// Writes `(file, line, col, start, end)`.
    pub fn serialize<S: Serializer>(o: &Origin, s: S) -> Result<S::Ok, S::Error> {
        (&o.file, o.line, o.col, o.start, o.end).serialize(s)
    }

    /// Reads what [`serialize`] wrote.
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

/// Where a policy source comes from. Layers never change precedence (deny > ask > allow
/// holds across them); they decide what a source may do (a plugin may not write `plugin`
/// rules) and which `test` blocks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// The built-in standard library shipped with ContextOS.
    Stdlib,
    /// A third-party policy pack (`contextos-plugins`).
    Plugin,
    /// The project's own policies.
    User,
}

/// Bit set of path operations (`read` = 1, `write` = 2, `delete` = 4); domains without
/// operations use `ALL_OPS`.
pub type OpMask = u8;
/// Every path operation: the mask of a rule without operations and of non-`path` rules.
pub const ALL_OPS: OpMask = 0b111;

/// A rule after checking: resolved head, typed clauses and reporting metadata.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    /// The `@id`, or `FILE:LINE` of the effect keyword; unique across the set.
    pub id: String,
    /// What the rule decides when it applies.
    pub effect: Effect,
    /// The only domain whose requests the rule can match.
    pub domain: Domain,
    /// Path operations the rule covers ([`ALL_OPS`] when it names none).
    pub ops: OpMask,
    /// The `role` block it is in: a candidate only for requests carrying exactly that role.
    pub role: Option<String>,
    /// Patterns as written after `$var` expansion (empty: the rule matches every subject).
    pub patterns: Vec<String>,
    /// `patterns` parsed into words, for `exec` rules; empty for other domains and for an
    /// exec rule without patterns (which matches every command).
    pub exec_patterns: Vec<ExecPattern>,
    /// `when` and `unless` clauses in source order; the rule applies when all hold.
    pub clauses: Vec<Clause>,
    /// The `because` reason, carried into every decision the rule takes part in; a rule
    /// without one compiles with warning W0201.
    pub because: Option<String>,
    /// The `@severity` value, carried into decisions for presentation.
    pub severity: Option<String>,
    /// `with` obligations (only on allow/ask rules).
    pub obligations: Vec<ObligationIr>,
    /// Where the rule starts (its first annotation).
    pub origin: Origin,
    /// The layer of the source the rule comes from.
    pub layer: Layer,
    /// False when a condition is a Rhai script: emitters must treat the rule conservatively.
    pub analyzable: bool,
    /// `@accept(…)` values: what the rule's author accepts on purpose (`widening`: the rule
    /// makes a verdict weaker than before, and `gate --no-widening` lets that through).
    pub accepts: Vec<String>,
}

/// One `when` or `unless` clause.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Clause {
    /// `unless`: the rule applies only when the condition does not hold.
    pub negated: bool,
    /// The type-checked condition.
    pub cond: Cond,
    /// Source text of the clause (`when role != "maintainer"`), for why-not traces.
    pub text: String,
    /// Where the clause's condition is written; why-not traces point here.
    #[serde(with = "origin_full")]
    pub origin: Origin,
}

/// The name of `with host {}`: the project sends this exec to the host instead of the
/// sandbox the agent's commands are otherwise routed into (project policies only).
pub const HOST_OBLIGATION: &str = "host";

/// A `with NAME { … }` obligation an effect handler must honour before carrying out the action.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObligationIr {
    /// The obligation's name (`sandbox` in language 1).
    pub name: String,
    /// `key: value` pairs in source order, checked against the schema; the handler interprets
    /// the values (a bare identifier becomes a string).
    pub entries: Vec<(String, serde_json::Value)>,
}

/// An exec head pattern: literal or glob words, optionally followed by `*` = any rest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecPattern {
    /// Patterns for `argv[0]`, `argv[1]`, … in order.
    pub words: Vec<Word>,
    /// The pattern ended in `*`: any number of further words (including none) may follow;
    /// otherwise argv must have exactly as many words as the pattern.
    pub rest: bool,
}

/// One word of an exec pattern.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Word {
    /// Matches exactly this word.
    Literal(String),
    /// A word with glob metacharacters, compiled on first use. Boxed: a literal word is
    /// the common case and would otherwise take the glob's 176 bytes, per word of every
    /// exec pattern a cold compile lowers.
    Glob(Box<crate::glob::LazyWordGlob>),
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
            // The basename is asked only when it differs: most programs are written bare.
            let hit = p.is_match(a)?
                || (i == 0 && {
                    let base = contextos_shell::basename(a);
                    base.len() < a.len() && p.is_match(base)?
                });
            if !hit {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A type-checked condition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Cond {
    /// Holds when any part holds (evaluated left to right, short-circuiting).
    Or(Vec<Cond>),
    /// Holds when every part holds (left to right, short-circuiting).
    And(Vec<Cond>),
    /// Holds when the inner condition does not.
    Not(Box<Cond>),
    /// A comparison (`==`, `!=`, `<`, `in`, `contains`, …); an operand type mismatch is an
    /// evaluation error.
    Cmp(Box<Val>, CmpOp, Box<Val>),
    /// `lhs matches [globs]`; lhs is a string or a list (any element). The globs are
    /// boxed so that every other condition (and clause) is not sized to them.
    Matches(Box<Val>, Box<PathGlobs>),
    /// A boolean operand used as a condition (e.g. `plugin.signed`).
    Truthy(Val),
    /// A `script { … }` block, by its index in the set's compiled scripts.
    Script(usize),
}

/// An operand of a condition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Val {
    /// A string literal.
    Str(String),
    /// An integer literal.
    Int(i64),
    /// A boolean literal.
    Bool(bool),
    /// A list of strings (`$variables` already spliced in).
    List(Vec<String>),
    /// A request attribute from the schema, read from the request at evaluation.
    Attr(Attr),
    /// A method call on a receiver with its arguments (at most one in language 1).
    Call(Method, Box<Val>, Vec<Val>),
}

/// Adds the role names `c` compares `role` with (`role == "x"`, `role in ["a", "b"]`).
pub fn role_literals(c: &Cond, out: &mut std::collections::BTreeSet<String>) {
    match c {
        Cond::Or(v) | Cond::And(v) => v.iter().for_each(|c| role_literals(c, out)),
        Cond::Not(inner) => role_literals(inner, out),
        Cond::Cmp(a, _, b) => match (&**a, &**b) {
            (Val::Attr(Attr::Role), Val::Str(s)) | (Val::Str(s), Val::Attr(Attr::Role))
                if !s.is_empty() =>
            {
                out.insert(s.clone());
            }
            (Val::Attr(Attr::Role), Val::List(l)) | (Val::List(l), Val::Attr(Attr::Role)) => {
                out.extend(l.iter().filter(|s| !s.is_empty()).cloned());
            }
            _ => {}
        },
        Cond::Matches(..) | Cond::Truthy(_) | Cond::Script(_) => {}
    }
}

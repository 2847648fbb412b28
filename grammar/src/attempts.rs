//! Where a failed parse went furthest, and which grammar rules it tried there.
//!
//! This is pest's own bookkeeping (`ParserState::track` in pest 2), reproduced so that
//! the hand-written parser reports the position and "expected …" set the normative
//! grammar (`policy.pest`, tested as the oracle) would: only named rules count, a rule is
//! recorded at the position it started from, the furthest position wins, and a rule whose
//! children made exactly one attempt at its own position is replaced by that child.

/// The named rules of `policy.pest` that can fail where a diagnostic may point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Production {
    Eoi,
    File,
    SingleStmt,
    LanguageDecl,
    DefaultDecl,
    LetDecl,
    Effect,
    Annotated,
    Annotation,
    Rule,
    Ops,
    Patterns,
    WhenClause,
    UnlessClause,
    BecauseClause,
    WithClause,
    Obligation,
    Guide,
    GuideFor,
    Detector,
    DetectorBody,
    RoleBlock,
    Ident,
    Name,
    RuleRef,
    Int,
    String,
    TripleStr,
    PlainStr,
    Boolean,
    VarRef,
    ListLit,
    Expr,
    AndExpr,
    Unary,
    OrOp,
    AndOp,
    NotOp,
    Paren,
    Comparison,
    CmpOp,
    Access,
    Call,
    ScriptBlock,
    TestBlock,
    TestCase,
    Request,
    PathReq,
    ExecReq,
    PluginReq,
    CommitReq,
    NetReq,
    McpReq,
    AsRole,
    Tainted,
    Expectation,
}

/// The furthest position a rule failed at and the rules that failed there, in order.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    pub(crate) pos: usize,
    pub(crate) rules: Vec<Production>,
}

/// What `Attempts::start` remembers about the state before a rule runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    index: usize,
    before: usize,
}

impl Attempts {
    fn at(&self, pos: usize) -> usize {
        if self.pos == pos {
            self.rules.len()
        } else {
            0
        }
    }

    /// Called when a rule starts at `pos`.
    pub(crate) fn start(&self, pos: usize) -> Mark {
        Mark {
            index: if pos == self.pos { self.rules.len() } else { 0 },
            before: self.at(pos),
        }
    }

    /// Called when the rule started at `pos` (with `mark`) failed.
    pub(crate) fn failed(&mut self, rule: Production, pos: usize, mark: Mark) {
        let now = self.at(pos);
        if now > mark.before && now - mark.before == 1 {
            return;
        }
        if pos == self.pos {
            self.rules.truncate(mark.index);
        }
        if pos > self.pos {
            self.rules.clear();
            self.pos = pos;
        }
        if pos == self.pos {
            self.rules.push(rule);
        }
    }
}

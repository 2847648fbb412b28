//! Typed syntax tree of a policy file. Every node carries the byte span it came from so
//! diagnostics, `explain` and the IDE emitters can point back into the source.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into the source text of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
}

/// A value together with where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

/// A parsed policy file.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PolicyFile {
    pub statements: Vec<Statement>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Statement {
    Language(Spanned<u32>),
    Default(DefaultDecl),
    Let(LetDecl),
    Rule(Rule),
    Guide(Guide),
    Detector(Detector),
    Role(RoleBlock),
    Test(TestBlock),
}

impl Statement {
    pub fn span(&self) -> Span {
        match self {
            Statement::Language(s) => s.span,
            Statement::Default(d) => d.span,
            Statement::Let(l) => l.span,
            Statement::Rule(r) => r.span,
            Statement::Guide(g) => g.span,
            Statement::Detector(d) => d.span,
            Statement::Role(r) => r.span,
            Statement::Test(t) => t.span,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
    pub fn parse(text: &str) -> Option<Effect> {
        match text {
            "allow" => Some(Effect::Allow),
            "ask" => Some(Effect::Ask),
            "deny" => Some(Effect::Deny),
            _ => None,
        }
    }
}

impl std::fmt::Display for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DefaultDecl {
    pub domain: Spanned<String>,
    pub effect: Spanned<Effect>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LetDecl {
    pub name: Spanned<String>,
    pub value: Spanned<Vec<ListItem>>,
    /// `let x = "a";` rather than `let x = ["a"];` (kept so the formatter round-trips).
    pub scalar: bool,
    pub span: Span,
}

/// An element of a list literal: a string or a `$name` reference spliced in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ListItem {
    Str(Spanned<String>),
    Var(Spanned<String>),
}

/// One entry in a rule's pattern list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Pattern {
    Str(Spanned<String>),
    Var(Spanned<String>),
    List(Spanned<Vec<ListItem>>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    pub name: Spanned<String>,
    pub value: Spanned<String>,
    /// Written as a bare identifier (`@severity(error)`) rather than a string.
    pub bare: bool,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub annotations: Vec<Annotation>,
    pub effect: Spanned<Effect>,
    pub domain: Spanned<String>,
    pub ops: Vec<Spanned<String>>,
    pub patterns: Vec<Pattern>,
    pub clauses: Vec<Clause>,
    pub span: Span,
    /// Span of the head (effect through patterns), the part the index is built from.
    pub head_span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Clause {
    When(Expr),
    Unless(Expr),
    Because(Spanned<String>),
    With(Obligation),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Obligation {
    pub name: Spanned<String>,
    pub entries: Vec<(Spanned<String>, Spanned<Value>)>,
    pub span: Span,
}

/// Literal values in obligations and test requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    Ident(String),
    List(Vec<ListItem>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guide {
    pub annotations: Vec<Annotation>,
    pub title: Spanned<String>,
    pub scope: Vec<Pattern>,
    pub body: Vec<Spanned<String>>,
    pub span: Span,
}

/// `detector KIND PATTERNS { key: value, … } because "…";`: what `contextos scan --staged`
/// looks for. The kind and the body keys are checked by the compiler, not the grammar.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detector {
    pub annotations: Vec<Annotation>,
    /// `secret`, `file` or `stub`.
    pub kind: Spanned<String>,
    pub patterns: Vec<Pattern>,
    /// The `{ … }` body in source order (empty when there is none).
    pub fields: Vec<(Spanned<String>, Spanned<Value>)>,
    pub because: Option<Spanned<String>>,
    /// From the first annotation (or `detector`) through the `;`.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleBlock {
    pub name: Spanned<String>,
    pub rules: Vec<Rule>,
    pub guides: Vec<Guide>,
    /// Rules and guides in source order, as indices into `rules`/`guides` (for the formatter).
    pub order: Vec<RoleItem>,
    pub span: Span,
}

impl RoleBlock {
    /// Adds a rule or guide in source order; any other statement is handed back.
    pub fn push(&mut self, item: Statement) -> Option<Statement> {
        match item {
            Statement::Rule(r) => {
                self.order.push(RoleItem::Rule(self.rules.len()));
                self.rules.push(r);
            }
            Statement::Guide(g) => {
                self.order.push(RoleItem::Guide(self.guides.len()));
                self.guides.push(g);
            }
            other => return Some(other),
        }
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RoleItem {
    Rule(usize),
    Guide(usize),
}

/// Condition expressions. Nesting is bounded by [`crate::MAX_NESTING`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Expr {
    Or(Vec<Expr>, Span),
    And(Vec<Expr>, Span),
    Not(Box<Expr>, Span),
    /// Parenthesised, kept so the formatter reproduces the user's grouping.
    Paren(Box<Expr>, Span),
    Compare {
        lhs: Operand,
        op: Spanned<CmpOp>,
        rhs: Operand,
        span: Span,
    },
    /// A single operand used as a boolean (`plugin.signed`, `true`, `x.starts_with("a")`).
    Truthy(Operand),
    Script(Spanned<String>),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Or(_, s) | Expr::And(_, s) | Expr::Not(_, s) | Expr::Paren(_, s) => *s,
            Expr::Compare { span, .. } => *span,
            Expr::Truthy(o) => o.span(),
            Expr::Script(s) => s.span,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Matches,
    Contains,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::In => "in",
            CmpOp::Matches => "matches",
            CmpOp::Contains => "contains",
        }
    }
    pub fn parse(text: &str) -> Option<CmpOp> {
        Some(match text {
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            ">" => CmpOp::Gt,
            ">=" => CmpOp::Ge,
            "in" => CmpOp::In,
            "matches" => CmpOp::Matches,
            "contains" => CmpOp::Contains,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Operand {
    Str(Spanned<String>),
    Int(Spanned<i64>),
    Bool(Spanned<bool>),
    List(Spanned<Vec<ListItem>>),
    Var(Spanned<String>),
    /// A dotted attribute path such as `path.op` or `role`.
    Attr(Spanned<Vec<String>>),
    /// A method or function call: `exec.argv.len()`, `plugin.signed_by("k")`.
    Call {
        target: Spanned<Vec<String>>,
        args: Vec<Operand>,
        span: Span,
    },
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Str(s) => s.span,
            Operand::Int(s) => s.span,
            Operand::Bool(s) => s.span,
            Operand::List(s) => s.span,
            Operand::Var(s) => s.span,
            Operand::Attr(s) => s.span,
            Operand::Call { span, .. } => *span,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestBlock {
    pub name: Spanned<String>,
    pub cases: Vec<TestCase>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestCase {
    pub request: TestRequest,
    pub role: Option<Spanned<String>>,
    pub expect: Spanned<Effect>,
    pub expect_rules: Vec<Spanned<String>>,
    /// `=> deny()` and `=> deny` differ only in spelling; kept for the formatter.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum TestRequest {
    Path {
        op: Spanned<String>,
        path: Spanned<String>,
    },
    /// Shell form: a command line split like `decide exec --shell`.
    ExecShell(Spanned<String>),
    /// Argv form: `exec ["git", "push"]`.
    ExecArgv(Spanned<Vec<ListItem>>),
    Plugin {
        name: Spanned<String>,
        fields: Vec<(Spanned<String>, Spanned<Value>)>,
    },
    Commit {
        files: Spanned<Vec<ListItem>>,
        fields: Vec<(Spanned<String>, Spanned<Value>)>,
    },
}

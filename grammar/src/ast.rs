//! Typed syntax tree of a policy file. Every node carries the byte span it came from so
//! diagnostics, `explain` and the IDE emitters can point back into the source.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into the source text of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Span {
    /// Byte offset of the first byte covered.
    pub start: usize,
    /// Byte offset just past the last byte covered (equal to `start` for an empty span).
    pub end: usize,
}

impl Span {
    /// Span of the bytes `start..end`; the caller keeps `start <= end`.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
}

/// A value together with where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spanned<T> {
    /// The parsed value (for strings: the text after unescaping or dedenting).
    pub node: T,
    /// Where the value was written, delimiters included (quotes, `$`, brackets).
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a parsed value with the source range it came from.
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

/// A parsed policy file.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PolicyFile {
    /// Top-level statements in source order; order never changes a verdict, only formatting.
    pub statements: Vec<Statement>,
}

/// One top-level statement of a policy file (the `statement` production of the grammar).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Statement {
    /// `language N;`: the language version the file is written for.
    Language(Spanned<u32>),
    /// `default DOMAIN = EFFECT;`: the verdict when no rule of the domain matches.
    Default(DefaultDecl),
    /// `let NAME = …;`: a named list (or string) that `$NAME` splices into patterns.
    Let(LetDecl),
    /// A rule outside any role block, applying to every request of its domain.
    Rule(Rule),
    /// `guide "TITLE" … { … }`: advice for agents, not a verdict.
    Guide(Guide),
    /// `detector KIND …;`: something `contextos scan --staged` looks for in a change.
    Detector(Detector),
    /// `role NAME { … }`: rules and guides that apply only to requests with that role.
    Role(RoleBlock),
    /// `test "NAME" { … }`: expected verdicts checked by `contextos test`.
    Test(TestBlock),
}

impl Statement {
    /// Source range of the whole statement, annotations and terminator included.
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

/// The verdict a rule, a default or a test expectation names; when several rules apply,
/// the strongest wins (`deny` > `ask` > `allow`), which the derived `Ord` encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The action may go ahead without asking.
    Allow,
    /// A human must confirm the action first.
    Ask,
    /// The action is refused.
    Deny,
}

impl Effect {
    /// The keyword as written in policy text (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
    /// The effect a keyword names, or `None` for any other word (matching is exact and
    /// case-sensitive).
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

/// `default DOMAIN = EFFECT;`: the verdict for a request that no rule of the domain
/// matches; a later layer's default replaces an earlier one's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DefaultDecl {
    /// The domain name as written (`path`, `exec`, …); the compiler, not the grammar, checks it.
    pub domain: Spanned<String>,
    /// The verdict given when nothing matches.
    pub effect: Spanned<Effect>,
    /// From `default` through the `;`.
    pub span: Span,
}

/// `let NAME = [ … ];` or `let NAME = "…";`: a named list that `$NAME` splices into
/// patterns, lists and conditions. A later layer replaces an earlier layer's `let` only
/// with `override let` (the compiler refuses a silent replacement).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LetDecl {
    /// Written `override let`: the declaration means to replace an earlier layer's `let`.
    pub overrides: bool,
    /// The name without `$`, as `$NAME` references it.
    pub name: Spanned<String>,
    /// The items; a scalar `let` holds its one string as a one-item list.
    pub value: Spanned<Vec<ListItem>>,
    /// `let x = "a";` rather than `let x = ["a"];` (kept so the formatter round-trips).
    pub scalar: bool,
    /// From `let` through the `;`.
    pub span: Span,
}

/// An element of a list literal: a string or a `$name` reference spliced in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ListItem {
    /// A string literal, unescaped.
    Str(Spanned<String>),
    /// A `$name` reference to a `let` (name without `$`); a list is spliced in place.
    Var(Spanned<String>),
}

/// One entry in a rule's pattern list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Pattern {
    /// A glob (`path`, `plugin`, `commit`) or word pattern (`exec`), or a detector regex.
    Str(Spanned<String>),
    /// A `$name` reference to a `let`, expanded to its items by the compiler.
    Var(Spanned<String>),
    /// A `[ … ]` list literal, flattened into the rule's pattern list.
    List(Spanned<Vec<ListItem>>),
}

/// `@NAME(VALUE)` before a rule, guide or detector, such as `@id("…")` or
/// `@severity(warning)`; the compiler decides which names each statement accepts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    /// The identifier after `@` (`id`, `severity`).
    pub name: Spanned<String>,
    /// The argument, unescaped if it was a string.
    pub value: Spanned<String>,
    /// Written as a bare identifier (`@severity(error)`) rather than a string.
    pub bare: bool,
    /// From `@` through the closing `)`.
    pub span: Span,
}

/// `EFFECT DOMAIN [OPS] [PATTERNS] [clauses];`: the head says which requests the rule can
/// match (and is what the index is built from); the clauses say when it applies and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    /// The `@id`/`@severity` annotations written before the rule, in source order.
    pub annotations: Vec<Annotation>,
    /// The verdict the rule gives when it applies.
    pub effect: Spanned<Effect>,
    /// The request kind (`path`, `exec`, `plugin`, `commit`), checked by the compiler (E0101).
    pub domain: Spanned<String>,
    /// Operations (`read`, `write`, `delete`; `path` only); empty means all of them.
    pub ops: Vec<Spanned<String>>,
    /// What the subject must match; empty means every subject of the domain.
    pub patterns: Vec<Pattern>,
    /// `when`, `unless`, `because` and `with` clauses in source order, which the why-not
    /// trace follows.
    pub clauses: Vec<Clause>,
    /// From the first annotation (or the effect) through the `;`.
    pub span: Span,
    /// Span of the head (effect through patterns), the part the index is built from.
    pub head_span: Span,
}

/// One clause after a rule's head.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Clause {
    /// `when CONDITION`: the rule applies only if the condition holds.
    When(Expr),
    /// `unless CONDITION`: the rule does not apply if the condition holds.
    Unless(Expr),
    /// `because "REASON"`: the explanation shown to the agent and recorded with the decision.
    Because(Spanned<String>),
    /// `with NAME { … }`: an obligation the effect handler must honour.
    With(Obligation),
}

/// `with NAME { KEY: VALUE, … }` on an `allow` or `ask` rule: an instruction the handler
/// carrying out the action must honour (in version 1 only `sandbox`, on `exec` rules).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Obligation {
    /// The obligation's identifier (`sandbox`), checked by the compiler (E0113).
    pub name: Spanned<String>,
    /// The `key: value` settings in source order, duplicates kept for the compiler to reject.
    pub entries: Vec<(Spanned<String>, Spanned<Value>)>,
    /// From `with` through the closing `}`.
    pub span: Span,
}

/// Literal values in obligations and test requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A string literal, unescaped.
    Str(String),
    /// An integer literal such as `pids: 256`.
    Int(i64),
    /// `true` or `false`.
    Bool(bool),
    /// A bare identifier (`network: none`), which the compiler takes as the string `"none"`.
    Ident(String),
    /// A list literal, with `$name` references still unexpanded.
    List(Vec<ListItem>),
}

/// `guide "TITLE" [for PATTERNS] { "TEXT" … }`: advice the emitters hand to agents
/// working on matching files; it never changes a verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guide {
    /// The annotations written before `guide` (normally just `@id`).
    pub annotations: Vec<Annotation>,
    /// The heading the emitters show.
    pub title: Spanned<String>,
    /// Path globs after `for` that the advice applies to; empty means the whole project.
    pub scope: Vec<Pattern>,
    /// The text strings of the body in order, triple-quoted ones already dedented.
    pub body: Vec<Spanned<String>>,
    /// From the first annotation (or `guide`) through the closing `}`.
    pub span: Span,
}

/// `detector KIND PATTERNS { key: value, … } because "…";`: what `contextos scan --staged`
/// looks for. The kind and the body keys are checked by the compiler, not the grammar.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detector {
    /// The `@id`/`@severity` annotations written before `detector`.
    pub annotations: Vec<Annotation>,
    /// `secret`, `file` or `stub`.
    pub kind: Spanned<String>,
    /// Regexes (`secret`, `stub`) or path globs (`file`) that produce a finding.
    pub patterns: Vec<Pattern>,
    /// The `{ … }` body in source order (empty when there is none).
    pub fields: Vec<(Spanned<String>, Spanned<Value>)>,
    /// The message a finding carries, when the detector has a `because`.
    pub because: Option<Spanned<String>>,
    /// From the first annotation (or `detector`) through the `;`.
    pub span: Span,
}

/// `role NAME { … }`: rules and guides that apply only to requests made with that role.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleBlock {
    /// The role name (identifier characters plus `-`), matched against a request's role.
    pub name: Spanned<String>,
    /// The block's rules in source order.
    pub rules: Vec<Rule>,
    /// The block's guides in source order.
    pub guides: Vec<Guide>,
    /// Rules and guides in source order, as indices into `rules`/`guides` (for the formatter).
    pub order: Vec<RoleItem>,
    /// From `role` through the closing `}`.
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

/// Position of one item of a role block, so the formatter can interleave rules and guides
/// as they were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RoleItem {
    /// Index into [`RoleBlock::rules`].
    Rule(usize),
    /// Index into [`RoleBlock::guides`].
    Guide(usize),
}

/// Condition expressions. Nesting is bounded by [`crate::MAX_NESTING`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Expr {
    /// `a or b` / `a || b`: at least two operands, true if any holds.
    Or(Vec<Expr>, Span),
    /// `a and b` / `a && b`: at least two operands, true if all hold.
    And(Vec<Expr>, Span),
    /// `not a` / `!a`: one `Not` per operator written, so `not not a` keeps both.
    Not(Box<Expr>, Span),
    /// Parenthesised, kept so the formatter reproduces the user's grouping.
    Paren(Box<Expr>, Span),
    /// `lhs OP rhs`: a comparison or membership test; the compiler checks the operand types.
    Compare {
        /// The left-hand operand, usually an attribute such as `path.op`.
        lhs: Operand,
        /// The comparison operator and where it was written.
        op: Spanned<CmpOp>,
        /// The right-hand operand (for `matches`, literal glob patterns).
        rhs: Operand,
        /// From the start of `lhs` through the end of `rhs`.
        span: Span,
    },
    /// A single operand used as a boolean (`plugin.signed`, `true`, `x.starts_with("a")`).
    Truthy(Operand),
    /// `script { … }`: the Rhai source between the braces, run sandboxed and marked
    /// non-analyzable.
    Script(Spanned<String>),
}

impl Expr {
    /// Source range of the expression; for a script, the range of its Rhai body.
    pub fn span(&self) -> Span {
        match self {
            Expr::Or(_, s) | Expr::And(_, s) | Expr::Not(_, s) | Expr::Paren(_, s) => *s,
            Expr::Compare { span, .. } => *span,
            Expr::Truthy(o) => o.span(),
            Expr::Script(s) => s.span,
        }
    }
}

/// The operator of a comparison in a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    /// `==`: the operands are equal.
    Eq,
    /// `!=`: the operands differ.
    Ne,
    /// `<` on integers.
    Lt,
    /// `<=` on integers.
    Le,
    /// `>` on integers.
    Gt,
    /// `>=` on integers.
    Ge,
    /// `in`: the string equals an element of the list on the right.
    In,
    /// `matches`: the string (or any element of a list) matches one of the globs on the right.
    Matches,
    /// `contains`: the list has the string as an element, or the string has it as a substring.
    Contains,
}

impl CmpOp {
    /// The operator as written in policy text (`==`, `in`, …).
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
    /// The operator a token spells, or `None` for anything else; the inverse of [`CmpOp::as_str`].
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

/// A value in a condition: a literal, a `$name`, a request attribute or a method call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Operand {
    /// A string literal, unescaped.
    Str(Spanned<String>),
    /// An integer literal, compared with `<`, `<=`, `>`, `>=`, `==` and `!=`.
    Int(Spanned<i64>),
    /// `true` or `false`.
    Bool(Spanned<bool>),
    /// A `[ … ]` list literal, typically the right side of `in` or `matches`.
    List(Spanned<Vec<ListItem>>),
    /// A `$name` reference to a `let` (name without `$`).
    Var(Spanned<String>),
    /// A dotted attribute path such as `path.op` or `role`.
    Attr(Spanned<Vec<String>>),
    /// A method or function call: `exec.argv.len()`, `plugin.signed_by("k")`.
    Call {
        /// The dotted path up to the `(`, method name last (`["exec", "argv", "len"]`).
        target: Spanned<Vec<String>>,
        /// The arguments between the parentheses, in order.
        args: Vec<Operand>,
        /// From the first segment of `target` through the `)`.
        span: Span,
    },
}

impl Operand {
    /// Source range of the operand, for type errors and the why-not trace.
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

/// `test "NAME" { cases }`: requests with their expected verdicts, run by `contextos test`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestBlock {
    /// The name `contextos test` reports the block under.
    pub name: Spanned<String>,
    /// The cases in source order.
    pub cases: Vec<TestCase>,
    /// From `test` through the closing `}`.
    pub span: Span,
}

/// `REQUEST [as role "ROLE"] => EFFECT [(RULE-ID, …)];`: one request and the verdict it
/// must get.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestCase {
    /// The request to decide.
    pub request: TestRequest,
    /// The role given by `as role "ROLE"`, if any.
    pub role: Option<Spanned<String>>,
    /// `tainted`: the request comes from an agent session that has seen untrusted content.
    pub tainted: Option<Span>,
    /// The verdict the request must get.
    pub expect: Spanned<Effect>,
    /// Rule ids (bare or quoted) that must be among the deciding rules; empty for
    /// `=> deny` and `=> deny()` alike, so the formatter writes both as `=> deny`.
    pub expect_rules: Vec<Spanned<String>>,
    /// From the start of the request through the `;`.
    pub span: Span,
}

/// The request part of a test case, one variant per form in the book's test chapter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum TestRequest {
    /// `path OP "PATH"`: a path request, canonicalised like any other.
    Path {
        /// `read`, `write` or `delete`, checked by the compiler (E0102).
        op: Spanned<String>,
        /// The path as written, before canonicalisation.
        path: Spanned<String>,
    },
    /// Shell form: a command line split like `decide exec --shell`.
    ExecShell(Spanned<String>),
    /// Argv form: `exec ["git", "push"]`.
    ExecArgv(Spanned<Vec<ListItem>>),
    /// `plugin "NAME" { … }`: a plugin request.
    Plugin {
        /// The plugin's name, matched against `plugin` rule patterns.
        name: Spanned<String>,
        /// `source`, `version`, `digest`, `signer` entries (others are E0117), in source order.
        fields: Vec<(Spanned<String>, Spanned<Value>)>,
    },
    /// `net OP "TARGET" { … }`: a network request (`fetch` a URL, `connect` to a host).
    Net {
        /// `fetch` or `connect`, checked by the compiler (E0102).
        op: Spanned<String>,
        /// The URL or `host[:port]`.
        target: Spanned<String>,
        /// `tool`, `method`, `carries`, `sends` entries, in source order.
        fields: Vec<(Spanned<String>, Spanned<Value>)>,
    },
    /// `mcp "SERVER/TOOL" { … }`: a call of an MCP server's tool.
    Mcp {
        /// `SERVER/TOOL`.
        name: Spanned<String>,
        /// `args`, `carries`, `listed`, `trusted`, `definition` entries, in source order.
        fields: Vec<(Spanned<String>, Spanned<Value>)>,
    },
    /// `commit [FILE, …] { … }`: a commit request for a change set.
    Commit {
        /// The files of the change, canonicalised by the compiler.
        files: Spanned<Vec<ListItem>>,
        /// `message` and `findings` entries (others are E0117), in source order.
        fields: Vec<(Spanned<String>, Spanned<Value>)>,
    },
}

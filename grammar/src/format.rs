//! The canonical formatter behind `contextos fmt`.
//!
//! The formatter parses the file, refuses to touch it when there are errors, and prints
//! the typed AST back in one canonical layout:
//!
//! * top-level statements are separated by exactly one blank line, except that runs of
//!   `default` declarations and runs of `let` declarations stay together;
//! * inside `role`, `test`, `guide` and detector blocks items are indented by four spaces and keep
//!   at most one blank line where the author had one;
//! * a rule prints its annotations one per line, then its head
//!   `effect domain op, op pattern, pattern`, then each clause on its own continuation
//!   line (four more spaces) in the order `when`, `unless`, `with`, `because`;
//! * a detector prints its annotations one per line, then `detector KIND PATTERNS {`, its
//!   body one `key: value,` per line (a block item, so comments inside stay there) and
//!   `} because "…";` — or, without a body, `detector KIND PATTERNS because "…";`;
//! * `&&`, `||` and `!` become `and`, `or` and `not`; parentheses are kept as written;
//! * strings are re-escaped minimally, triple-quoted strings stay triple-quoted blocks
//!   (indented with the line they open on) whenever their text survives the round trip;
//!   in a detector's patterns and body, one-line triple-quoted text stays on one line;
//! * `script { … }` bodies are reproduced byte for byte;
//! * a list stays on one line while that line fits in 100 columns, otherwise it is
//!   printed one item per line with a trailing comma.
//!
//! Every `//` comment is kept: comments before a statement stay before it, a comment at
//! the end of a statement's last line stays there, comments between the tokens of a
//! statement move to just before it, and comments after the last item of a block or
//! file stay at its end.
//!
//! ```
//! let out = contextos_grammar::format_source("deny exec \"x\" because \"no\" when a && !b;");
//! assert_eq!(out, Ok("deny exec \"x\"\n    when a and not b\n    because \"no\";\n".to_string()));
//! ```

use crate::ast::{
    Annotation, Clause, DefaultDecl, Detector, Expr, Guide, LetDecl, ListItem, Obligation, Operand,
    Pattern, PolicyFile, RoleBlock, RoleItem, Rule, Span, Spanned, Statement, TestBlock, TestCase,
    TestRequest, Value,
};
use crate::diagnostic::Diagnostic;
use crate::lexical::Comment;
use crate::literal::dedent;
use crate::parse::parse;

/// Lists are broken one item per line when their line would be wider than this.
const MAX_WIDTH: usize = 100;
/// Indentation step for block contents and continuation lines.
const INDENT: usize = 4;

/// Formats a policy source canonically. Returns Err with the parse diagnostics if the
/// source does not parse cleanly (never formats a file with errors).
///
/// The result ends with exactly one newline (a file without statements or comments
/// formats to the empty string), has no trailing whitespace outside verbatim
/// `script { … }` bodies, and formatting it again returns it unchanged.
pub fn format_source(src: &str) -> Result<String, Vec<Diagnostic>> {
    let parsed = parse(src);
    if parsed.has_errors() {
        return Err(parsed.diagnostics);
    }
    let mut f = Formatter {
        src,
        comments: collect_comments(src, &parsed.file),
        next: 0,
        last: 0,
        out: String::new(),
    };
    let nodes: Vec<Node<'_>> = parsed.file.statements.iter().map(Node::from).collect();
    f.sequence(&nodes, 0, true, src.len());
    Ok(f.out)
}

// ---------------------------------------------------------------------------------------
// Items of a statement sequence
// ---------------------------------------------------------------------------------------

/// Anything that is printed as its own line group: a statement, an item of a role, a
/// test case or a string of a guide body.
#[derive(Clone, Copy)]
enum Node<'a> {
    Language(&'a Spanned<u32>),
    Default(&'a DefaultDecl),
    Let(&'a LetDecl),
    Rule(&'a Rule),
    Guide(&'a Guide),
    Detector(&'a Detector),
    Role(&'a RoleBlock),
    Test(&'a TestBlock),
    Case(&'a TestCase),
    Text(&'a Spanned<String>),
    /// A `key: value` line of a detector's body.
    Entry(&'a (Spanned<String>, Spanned<Value>)),
}

impl<'a> From<&'a Statement> for Node<'a> {
    fn from(s: &'a Statement) -> Self {
        match s {
            Statement::Language(l) => Node::Language(l),
            Statement::Default(d) => Node::Default(d),
            Statement::Let(l) => Node::Let(l),
            Statement::Rule(r) => Node::Rule(r),
            Statement::Guide(g) => Node::Guide(g),
            Statement::Detector(d) => Node::Detector(d),
            Statement::Role(r) => Node::Role(r),
            Statement::Test(t) => Node::Test(t),
        }
    }
}

impl<'a> Node<'a> {
    /// Source range of the whole item, annotations included.
    fn span(self) -> Span {
        match self {
            Node::Language(l) => l.span,
            Node::Default(d) => d.span,
            Node::Let(l) => l.span,
            Node::Rule(r) => r.span,
            Node::Guide(g) => Span::new(
                g.annotations
                    .first()
                    .map_or(g.span.start, |a| a.span.start.min(g.span.start)),
                g.span.end,
            ),
            Node::Detector(d) => d.span,
            Node::Role(r) => r.span,
            Node::Test(t) => t.span,
            Node::Case(c) => c.span,
            Node::Text(s) => s.span,
            Node::Entry((k, v)) => Span::new(k.span.start, v.span.end),
        }
    }

    /// For block items: the source offset just after the last token before `{`, and the
    /// items inside the braces.
    fn block(self) -> Option<(usize, Vec<Node<'a>>)> {
        match self {
            Node::Role(r) => {
                let children = r
                    .order
                    .iter()
                    .filter_map(|item| match *item {
                        RoleItem::Rule(i) => r.rules.get(i).map(Node::Rule),
                        RoleItem::Guide(i) => r.guides.get(i).map(Node::Guide),
                    })
                    .collect();
                Some((r.name.span.end, children))
            }
            Node::Test(t) => Some((t.name.span.end, t.cases.iter().map(Node::Case).collect())),
            Node::Guide(g) => {
                let header_end = g
                    .scope
                    .last()
                    .map_or(g.title.span.end, |p| pattern_span(p).end);
                Some((header_end, g.body.iter().map(Node::Text).collect()))
            }
            Node::Detector(d) if !d.fields.is_empty() => {
                let header_end = d
                    .patterns
                    .last()
                    .map_or(d.kind.span.end, |p| pattern_span(p).end);
                Some((header_end, d.fields.iter().map(Node::Entry).collect()))
            }
            _ => None,
        }
    }

    /// Runs of `default` declarations and of `let` declarations are not separated by a
    /// blank line at top level.
    fn groups_with(self, prev: Node<'_>) -> bool {
        matches!(
            (prev, self),
            (Node::Default(_), Node::Default(_)) | (Node::Let(_), Node::Let(_))
        )
    }
}

fn pattern_span(p: &Pattern) -> Span {
    match p {
        Pattern::Str(s) | Pattern::Var(s) => s.span,
        Pattern::List(l) => l.span,
    }
}

/// Offset of the `{` that opens a block, searching from `from` past whitespace and
/// comments.
fn find_open_brace(src: &str, from: usize) -> usize {
    let bytes = src.as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'{' => return i,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = src
                    .get(i..)
                    .and_then(|rest| rest.find('\n'))
                    .map_or(src.len(), |e| i + e);
            }
            _ => i += 1,
        }
    }
    src.len()
}

// ---------------------------------------------------------------------------------------
// Line groups, blank lines and comments
// ---------------------------------------------------------------------------------------

struct Formatter<'a> {
    src: &'a str,
    comments: Vec<Comment>,
    /// Index of the first comment not printed yet.
    next: usize,
    /// Source offset just after the last thing printed (token or comment), used to see
    /// whether the author left a blank line or put a comment on the same line.
    last: usize,
    out: String,
}

impl<'a> Formatter<'a> {
    fn peek(&self) -> Option<&Comment> {
        self.comments.get(self.next)
    }

    /// Whether the author left at least one blank line between `self.last` and `pos`.
    fn blank_before(&self, pos: usize) -> bool {
        self.src
            .get(self.last..pos)
            .is_some_and(|gap| gap.matches('\n').count() >= 2)
    }

    /// Takes the next comment when it sits on the same line right after `self.last`,
    /// returning it prefixed with a space (or an empty string).
    fn take_trailing(&mut self) -> String {
        let Some(c) = self.comments.get(self.next) else {
            return String::new();
        };
        let same_line = c.span.start >= self.last
            && self.src.get(self.last..c.span.start).is_some_and(|gap| {
                gap.chars()
                    .all(|ch| matches!(ch, ' ' | '\t' | '\r' | '\u{FEFF}'))
            });
        if !same_line {
            return String::new();
        }
        let text = format!(" {}", c.text);
        self.last = c.span.end;
        self.next += 1;
        text
    }

    /// Appends one line group (which may span several lines), preceded by a blank line
    /// when `blank` is set and something was printed before.
    fn emit(&mut self, blank: bool, text: &str) {
        if blank && !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Prints `nodes` at `indent`, with the comments that come before `end`.
    fn sequence(&mut self, nodes: &[Node<'a>], indent: usize, top: bool, end: usize) {
        let pad = " ".repeat(indent);
        let mut prev: Option<Node<'a>> = None;
        for &node in nodes {
            let span = node.span();
            // Comments before the item, then comments inside its head (moved before it).
            let mut pre: Vec<(bool, usize)> = Vec::new();
            while let Some(c) = self.peek() {
                if c.span.start >= span.start {
                    break;
                }
                let (start, cend) = (c.span.start, c.span.end);
                pre.push((self.blank_before(start), self.next));
                self.last = cend;
                self.next += 1;
            }
            let mut item_blank = self.blank_before(span.start);
            let hoist_end = match node.block() {
                Some((header_end, _)) => find_open_brace(self.src, header_end),
                None => span.end,
            };
            let mut hoisted = false;
            while let Some(c) = self.peek() {
                if c.span.start >= hoist_end {
                    break;
                }
                pre.push((item_blank && !hoisted, self.next));
                hoisted = true;
                self.next += 1;
            }
            if hoisted {
                item_blank = false;
            }
            let separator = match prev {
                None => Some(false),
                Some(p) if top => Some(!node.groups_with(p)),
                Some(_) => None,
            };
            if let Some(sep) = separator {
                match pre.first_mut() {
                    Some(first) => first.0 = sep,
                    None => item_blank = sep,
                }
            }
            for (blank, idx) in pre {
                if let Some(c) = self.comments.get(idx) {
                    let line = format!("{pad}{}", c.text);
                    self.emit(blank, &line);
                }
            }
            self.node(node, indent, item_blank);
            prev = Some(node);
        }
        // Comments after the last item of the scope.
        let mut first = prev.is_none();
        while let Some(c) = self.peek() {
            if c.span.start >= end {
                break;
            }
            let (start, cend) = (c.span.start, c.span.end);
            let blank = !first && self.blank_before(start);
            let line = format!("{pad}{}", c.text);
            self.emit(blank, &line);
            self.last = cend;
            self.next += 1;
            first = false;
        }
    }

    /// Prints one item with its trailing comment; blocks recurse into their contents.
    fn node(&mut self, node: Node<'a>, indent: usize, blank: bool) {
        let span = node.span();
        let src = self.src;
        let head = layout(src, indent, |r| r.node(node));
        let Some((header_end, children)) = node.block() else {
            self.last = span.end;
            if let Node::Entry(_) = node {
                // The comma after a body entry belongs to it: a comment after it trails it.
                let rest = src.get(span.end..).unwrap_or("");
                let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                if rest.get(gap..).is_some_and(|r| r.starts_with(',')) {
                    self.last = span.end + gap + 1;
                }
            }
            let tail = self.take_trailing();
            self.emit(blank, &format!("{head}{tail}"));
            return;
        };
        self.last = find_open_brace(src, header_end) + 1;
        let head_tail = self.take_trailing();
        // Where the block's comments end, and its closing line. A detector's closing line
        // is `} because "…";`: comments between its `}` and `;` go to the end of the body.
        let (close, closing) = match node {
            Node::Detector(d) => (span.end, layout(src, indent, |r| r.detector_close(d))),
            _ => (
                span.end.saturating_sub(1),
                format!("{}}}", " ".repeat(indent)),
            ),
        };
        let has_inner = !children.is_empty()
            || !head_tail.is_empty()
            || self.peek().is_some_and(|c| c.span.start < close);
        if has_inner {
            self.emit(blank, &format!("{head}{head_tail}"));
            self.sequence(&children, indent + INDENT, false, close);
            self.last = span.end;
            let tail = self.take_trailing();
            self.emit(false, &format!("{closing}{tail}"));
        } else {
            self.last = span.end;
            let tail = self.take_trailing();
            self.emit(blank, &format!("{head}}}{tail}"));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rendering one line group, with list breaking
// ---------------------------------------------------------------------------------------

/// A list printed on one line: its number in drawing order and the lines it occupies.
struct FlatList {
    index: usize,
    first_line: usize,
    last_line: usize,
}

/// Draws a line group starting at column `indent`. The group is first drawn with every
/// list on one line; while some one-line list sits on a line wider than [`MAX_WIDTH`],
/// the first such list is broken and the group drawn again. Each round breaks one more
/// list, so this terminates, and the result depends only on the syntax tree.
fn layout(src: &str, indent: usize, draw: impl Fn(&mut Render<'_>)) -> String {
    let mut broken: Vec<usize> = Vec::new();
    loop {
        let mut r = Render {
            src,
            buf: " ".repeat(indent),
            broken: &broken,
            lists: 0,
            flat: Vec::new(),
            inline_triple: false,
        };
        draw(&mut r);
        let widths: Vec<usize> = r.buf.split('\n').map(|l| l.chars().count()).collect();
        let too_wide = r
            .flat
            .iter()
            .find(|l| {
                widths
                    .get(l.first_line..=l.last_line)
                    .is_some_and(|ws| ws.iter().any(|&w| w > MAX_WIDTH))
            })
            .map(|l| l.index);
        match too_wide {
            Some(index) => broken.push(index),
            None => return r.buf,
        }
    }
}

struct Render<'a> {
    src: &'a str,
    buf: String,
    /// Lists (by drawing order) to print one item per line.
    broken: &'a [usize],
    /// Lists drawn so far.
    lists: usize,
    flat: Vec<FlatList>,
    /// Inside a detector: one-line triple-quoted strings (regexes) stay on one line.
    inline_triple: bool,
}

impl Render<'_> {
    fn push(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    fn line_no(&self) -> usize {
        self.buf.bytes().filter(|&b| b == b'\n').count()
    }

    /// Indentation (in spaces) of the line being drawn.
    fn indent(&self) -> usize {
        let start = self.buf.rfind('\n').map_or(0, |p| p + 1);
        self.buf
            .get(start..)
            .map_or(0, |line| line.bytes().take_while(|&b| b == b' ').count())
    }

    fn newline(&mut self, indent: usize) {
        self.buf.push('\n');
        self.buf.push_str(&" ".repeat(indent));
    }

    fn node(&mut self, node: Node<'_>) {
        match node {
            Node::Language(v) => self.push(&format!("language {};", v.node)),
            Node::Default(d) => {
                self.push(&format!("default {} = {};", d.domain.node, d.effect.node));
            }
            Node::Let(l) => self.let_decl(l),
            Node::Rule(r) => self.rule(r),
            Node::Guide(g) => self.guide_head(g),
            Node::Detector(d) => self.detector(d),
            Node::Role(r) => self.push(&format!("role {} {{", r.name.node)),
            Node::Test(t) => {
                self.push("test ");
                self.string(&t.name);
                self.push(" {");
            }
            Node::Case(c) => self.case(c),
            Node::Text(s) => self.string(s),
            Node::Entry((key, value)) => {
                self.inline_triple = true;
                self.push(&format!("{}: ", key.node));
                self.value(value);
                self.push(",");
                self.inline_triple = false;
            }
        }
    }

    fn let_decl(&mut self, l: &LetDecl) {
        if l.overrides {
            self.push("override ");
        }
        self.push(&format!("let {} = ", l.name.node));
        match (l.scalar, l.value.node.as_slice()) {
            (true, [ListItem::Str(s)]) => self.string(s),
            _ => self.list(&l.value.node),
        }
        self.push(";");
    }

    fn rule(&mut self, rule: &Rule) {
        let base = self.indent();
        self.annotations(&rule.annotations, base);
        self.push(&format!("{} {}", rule.effect.node, rule.domain.node));
        if !rule.ops.is_empty() {
            let ops: Vec<&str> = rule.ops.iter().map(|o| o.node.as_str()).collect();
            self.push(" ");
            self.push(&ops.join(", "));
        }
        if !rule.patterns.is_empty() {
            self.push(" ");
            self.patterns(&rule.patterns);
        }
        let rank = |c: &Clause| match c {
            Clause::When(_) => 0,
            Clause::Unless(_) => 1,
            Clause::With(_) => 2,
            Clause::Because(_) => 3,
        };
        for wanted in 0..4 {
            for clause in rule.clauses.iter().filter(|c| rank(c) == wanted) {
                self.newline(base + INDENT);
                self.clause(clause);
            }
        }
        self.push(";");
    }

    /// A detector without a body, or the head of one with a body: `detector KIND
    /// PATTERNS {` (the body's entries are block items, see [`Node::block`]). Regexes
    /// written triple-quoted on one line stay on one line.
    fn detector(&mut self, d: &Detector) {
        let base = self.indent();
        self.annotations(&d.annotations, base);
        self.inline_triple = true;
        self.push(&format!("detector {} ", d.kind.node));
        self.patterns(&d.patterns);
        self.inline_triple = false;
        if d.fields.is_empty() {
            self.because(d);
        } else {
            self.push(" {");
        }
    }

    /// The line closing a detector's body: `} because "…";`.
    fn detector_close(&mut self, d: &Detector) {
        self.push("}");
        self.because(d);
    }

    fn because(&mut self, d: &Detector) {
        if let Some(because) = &d.because {
            self.push(" because ");
            self.string(because);
        }
        self.push(";");
    }

    fn annotations(&mut self, annotations: &[Annotation], base: usize) {
        for a in annotations {
            self.push(&format!("@{}(", a.name.node));
            if a.bare {
                self.push(&a.value.node);
            } else {
                self.string(&a.value);
            }
            self.push(")");
            self.newline(base);
        }
    }

    fn clause(&mut self, clause: &Clause) {
        match clause {
            Clause::When(e) => {
                self.push("when ");
                self.expr(e);
            }
            Clause::Unless(e) => {
                self.push("unless ");
                self.expr(e);
            }
            Clause::With(o) => self.obligation(o),
            Clause::Because(s) => {
                self.push("because ");
                self.string(s);
            }
        }
    }

    fn obligation(&mut self, o: &Obligation) {
        self.push(&format!("with {} ", o.name.node));
        self.entries(&o.entries);
    }

    /// `{ key: value, key: value }`, or `{}`.
    fn entries(&mut self, entries: &[(Spanned<String>, Spanned<Value>)]) {
        if entries.is_empty() {
            self.push("{}");
            return;
        }
        self.push("{ ");
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.push(&format!("{}: ", key.node));
            self.value(value);
        }
        self.push(" }");
    }

    fn value(&mut self, v: &Spanned<Value>) {
        match &v.node {
            Value::Str(s) => self.text(s, v.span),
            Value::Int(n) => self.push(&n.to_string()),
            Value::Bool(b) => self.push(if *b { "true" } else { "false" }),
            Value::Ident(i) => self.push(i),
            Value::List(items) => self.list(items),
        }
    }

    fn guide_head(&mut self, g: &Guide) {
        let base = self.indent();
        self.annotations(&g.annotations, base);
        self.push("guide ");
        self.string(&g.title);
        if !g.scope.is_empty() {
            self.push(" for ");
            self.patterns(&g.scope);
        }
        self.push(" {");
    }

    fn patterns(&mut self, patterns: &[Pattern]) {
        for (i, p) in patterns.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            match p {
                Pattern::Str(s) => self.string(s),
                Pattern::Var(v) => self.push(&format!("${}", v.node)),
                Pattern::List(l) => self.list(&l.node),
            }
        }
    }

    fn list(&mut self, items: &[ListItem]) {
        let index = self.lists;
        self.lists += 1;
        if items.is_empty() {
            self.push("[]");
        } else if self.broken.contains(&index) {
            let base = self.indent();
            self.push("[");
            for item in items {
                self.newline(base + INDENT);
                self.list_item(item);
                self.push(",");
            }
            self.newline(base);
            self.push("]");
        } else {
            let first_line = self.line_no();
            self.push("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    self.push(", ");
                }
                self.list_item(item);
            }
            self.push("]");
            let last_line = self.line_no();
            self.flat.push(FlatList {
                index,
                first_line,
                last_line,
            });
        }
    }

    fn list_item(&mut self, item: &ListItem) {
        match item {
            ListItem::Str(s) => self.string(s),
            ListItem::Var(v) => self.push(&format!("${}", v.node)),
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Or(parts, _) => self.joined(parts, " or "),
            Expr::And(parts, _) => self.joined(parts, " and "),
            Expr::Not(inner, _) => {
                self.push("not ");
                self.expr(inner);
            }
            Expr::Paren(inner, _) => {
                self.push("(");
                self.expr(inner);
                self.push(")");
            }
            Expr::Compare { lhs, op, rhs, .. } => {
                self.operand(lhs);
                self.push(&format!(" {} ", op.node.as_str()));
                self.operand(rhs);
            }
            Expr::Truthy(o) => self.operand(o),
            Expr::Script(body) => {
                self.push("script {");
                self.push(&body.node);
                self.push("}");
            }
        }
    }

    fn joined(&mut self, parts: &[Expr], sep: &str) {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.push(sep);
            }
            self.expr(p);
        }
    }

    fn operand(&mut self, o: &Operand) {
        match o {
            Operand::Str(s) => self.string(s),
            Operand::Int(n) => self.push(&n.node.to_string()),
            Operand::Bool(b) => self.push(if b.node { "true" } else { "false" }),
            Operand::List(l) => self.list(&l.node),
            Operand::Var(v) => self.push(&format!("${}", v.node)),
            Operand::Attr(a) => self.push(&a.node.join(".")),
            Operand::Call { target, args, .. } => {
                self.push(&target.node.join("."));
                self.push("(");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.operand(a);
                }
                self.push(")");
            }
        }
    }

    fn case(&mut self, c: &TestCase) {
        match &c.request {
            TestRequest::Path { op, path } => {
                self.push(&format!("path {} ", op.node));
                self.string(path);
            }
            TestRequest::ExecShell(s) => {
                self.push("exec ");
                self.string(s);
            }
            TestRequest::ExecArgv(l) => {
                self.push("exec ");
                self.list(&l.node);
            }
            TestRequest::Plugin { name, fields } => {
                self.push("plugin ");
                self.string(name);
                if !fields.is_empty() {
                    self.push(" ");
                    self.entries(fields);
                }
            }
            TestRequest::Commit { files, fields } => {
                self.push("commit ");
                self.list(&files.node);
                if !fields.is_empty() {
                    self.push(" ");
                    self.entries(fields);
                }
            }
            TestRequest::Net { op, target, fields } => {
                self.push(&format!("net {} ", op.node));
                self.string(target);
                if !fields.is_empty() {
                    self.push(" ");
                    self.entries(fields);
                }
            }
            TestRequest::Mcp { name, fields } => {
                self.push("mcp ");
                self.string(name);
                if !fields.is_empty() {
                    self.push(" ");
                    self.entries(fields);
                }
            }
        }
        if let Some(role) = &c.role {
            self.push(" as role ");
            self.string(role);
        }
        if c.tainted.is_some() {
            self.push(" tainted");
        }
        self.push(&format!(" => {}", c.expect.node));
        if !c.expect_rules.is_empty() {
            self.push("(");
            for (i, r) in c.expect_rules.iter().enumerate() {
                if i > 0 {
                    self.push(", ");
                }
                if is_bare_rule_ref(&r.node) {
                    self.push(&r.node);
                } else {
                    self.string(r);
                }
            }
            self.push(")");
        }
        self.push(";");
    }

    fn string(&mut self, s: &Spanned<String>) {
        self.text(&s.node, s.span);
    }

    /// A string literal whose token is at `span`: triple-quoted if it was written so
    /// and its text survives the round trip, else a plain string.
    fn text(&mut self, text: &str, span: Span) {
        let was_triple = self
            .src
            .get(span.start..span.end)
            .is_some_and(|tok| tok.starts_with("\"\"\""));
        if was_triple {
            if self.inline_triple {
                if let Some(inline) = triple_quoted_inline(text) {
                    self.push(&inline);
                    return;
                }
            }
            if let Some(block) = triple_quoted(text, self.indent()) {
                self.push(&block);
                return;
            }
        }
        let quoted = quote(text);
        self.push(&quoted);
    }
}

/// Rule ids in test expectations are printed bare when the grammar's `rule_ref` token
/// accepts them (and they cannot be mistaken for a comment), quoted otherwise.
fn is_bare_rule_ref(id: &str) -> bool {
    !id.is_empty()
        && !id.contains("//")
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/'))
}

/// A plain string literal with the minimal escapes.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `"""text"""` on one line, or None when the text has a line break or the parser would
/// not give it back (a leading blank is dedented away; a closing `"` would end it early).
fn triple_quoted_inline(text: &str) -> Option<String> {
    let ok = !text.is_empty()
        && !text.contains(['\n', '\r'])
        && !text.contains("\"\"\"")
        && !text.ends_with('"')
        && dedent(text) == text;
    ok.then(|| format!("\"\"\"{text}\"\"\""))
}

/// `"""` block with the text's lines indented by `indent` spaces (blank lines left
/// empty), or None when the parser's dedent would not give the text back.
fn triple_quoted(text: &str, indent: usize) -> Option<String> {
    if text.is_empty() || text.contains("\"\"\"") {
        return None;
    }
    let pad = " ".repeat(indent);
    let mut raw = String::from("\n");
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            raw.push('\n');
        }
        if !line.is_empty() {
            raw.push_str(&pad);
            raw.push_str(line);
        }
    }
    raw.push('\n');
    raw.push_str(&pad);
    (dedent(&raw) == text).then(|| format!("\"\"\"{raw}\"\"\""))
}

// ---------------------------------------------------------------------------------------
// Comments
// ---------------------------------------------------------------------------------------

/// The `//` comments of a file that parsed. Offsets of strings, rule ids and script
/// bodies come from the syntax tree, so a `//` is a comment exactly when the parser skipped
/// it as one (a `//` inside a rule id such as `deny(a//b)`, or inside a multi-line Rhai
/// string, is not).
fn collect_comments(src: &str, file: &PolicyFile) -> Vec<Comment> {
    let mut opaque = Vec::new();
    for s in &file.statements {
        opaque_statement(s, &mut opaque);
    }
    opaque.sort_by_key(|s| s.start);
    let bytes = src.as_bytes();
    let mut comments = Vec::new();
    let mut i = 0;
    let mut k = 0;
    while i < bytes.len() {
        while opaque.get(k).is_some_and(|s| s.end <= i) {
            k += 1;
        }
        if let Some(s) = opaque.get(k) {
            if s.start <= i {
                i = s.end;
                continue;
            }
        }
        if bytes.get(i) == Some(&b'/') && bytes.get(i + 1) == Some(&b'/') {
            let end = src
                .get(i..)
                .and_then(|r| r.find('\n'))
                .map_or(src.len(), |e| i + e);
            let line_start = src
                .get(..i)
                .and_then(|b| b.rfind('\n'))
                .map_or(0, |p| p + 1);
            let trailing = src.get(line_start..i).is_some_and(|before| {
                !before
                    .trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}')
                    .is_empty()
            });
            comments.push(Comment {
                span: Span::new(i, end),
                text: src.get(i..end).unwrap_or("").trim_end().to_string(),
                trailing,
            });
            i = end;
            continue;
        }
        i += 1;
    }
    comments
}

fn opaque_statement(s: &Statement, out: &mut Vec<Span>) {
    match s {
        Statement::Language(_) | Statement::Default(_) => {}
        Statement::Let(l) => opaque_items(&l.value.node, out),
        Statement::Rule(r) => opaque_rule(r, out),
        Statement::Guide(g) => opaque_guide(g, out),
        Statement::Detector(d) => {
            opaque_annotations(&d.annotations, out);
            opaque_patterns(&d.patterns, out);
            opaque_entries(&d.fields, out);
            out.extend(d.because.iter().map(|b| b.span));
        }
        Statement::Role(r) => {
            for rule in &r.rules {
                opaque_rule(rule, out);
            }
            for g in &r.guides {
                opaque_guide(g, out);
            }
        }
        Statement::Test(t) => {
            out.push(t.name.span);
            for c in &t.cases {
                opaque_case(c, out);
            }
        }
    }
}

fn opaque_items(items: &[ListItem], out: &mut Vec<Span>) {
    for item in items {
        if let ListItem::Str(s) = item {
            out.push(s.span);
        }
    }
}

fn opaque_patterns(patterns: &[Pattern], out: &mut Vec<Span>) {
    for p in patterns {
        match p {
            Pattern::Str(s) => out.push(s.span),
            Pattern::Var(_) => {}
            Pattern::List(l) => opaque_items(&l.node, out),
        }
    }
}

fn opaque_annotations(annotations: &[Annotation], out: &mut Vec<Span>) {
    for a in annotations {
        if !a.bare {
            out.push(a.value.span);
        }
    }
}

fn opaque_entries(entries: &[(Spanned<String>, Spanned<Value>)], out: &mut Vec<Span>) {
    for (_, v) in entries {
        match &v.node {
            Value::Str(_) => out.push(v.span),
            Value::List(items) => opaque_items(items, out),
            Value::Int(_) | Value::Bool(_) | Value::Ident(_) => {}
        }
    }
}

fn opaque_rule(r: &Rule, out: &mut Vec<Span>) {
    opaque_annotations(&r.annotations, out);
    opaque_patterns(&r.patterns, out);
    for c in &r.clauses {
        match c {
            Clause::When(e) | Clause::Unless(e) => opaque_expr(e, out),
            Clause::Because(s) => out.push(s.span),
            Clause::With(o) => opaque_entries(&o.entries, out),
        }
    }
}

fn opaque_guide(g: &Guide, out: &mut Vec<Span>) {
    opaque_annotations(&g.annotations, out);
    out.push(g.title.span);
    opaque_patterns(&g.scope, out);
    out.extend(g.body.iter().map(|b| b.span));
}

fn opaque_expr(e: &Expr, out: &mut Vec<Span>) {
    match e {
        Expr::Or(parts, _) | Expr::And(parts, _) => {
            for p in parts {
                opaque_expr(p, out);
            }
        }
        Expr::Not(inner, _) | Expr::Paren(inner, _) => opaque_expr(inner, out),
        Expr::Compare { lhs, rhs, .. } => {
            opaque_operand(lhs, out);
            opaque_operand(rhs, out);
        }
        Expr::Truthy(o) => opaque_operand(o, out),
        Expr::Script(body) => out.push(body.span),
    }
}

fn opaque_operand(o: &Operand, out: &mut Vec<Span>) {
    match o {
        Operand::Str(s) => out.push(s.span),
        Operand::List(l) => opaque_items(&l.node, out),
        Operand::Call { args, .. } => {
            for a in args {
                opaque_operand(a, out);
            }
        }
        Operand::Int(_) | Operand::Bool(_) | Operand::Var(_) | Operand::Attr(_) => {}
    }
}

fn opaque_case(c: &TestCase, out: &mut Vec<Span>) {
    match &c.request {
        TestRequest::Path { path, .. } => out.push(path.span),
        TestRequest::ExecShell(s) => out.push(s.span),
        TestRequest::ExecArgv(l) => opaque_items(&l.node, out),
        TestRequest::Plugin { name, fields } => {
            out.push(name.span);
            opaque_entries(fields, out);
        }
        TestRequest::Commit { files, fields } => {
            opaque_items(&files.node, out);
            opaque_entries(fields, out);
        }
        TestRequest::Net { target, fields, .. } => {
            out.push(target.span);
            opaque_entries(fields, out);
        }
        TestRequest::Mcp { name, fields } => {
            out.push(name.span);
            opaque_entries(fields, out);
        }
    }
    if let Some(role) = &c.role {
        out.push(role.span);
    }
    out.extend(c.expect_rules.iter().map(|r| r.span));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_minimally() {
        assert_eq!(
            quote("a\"b\\c\n\t\r\0\u{1}\u{7f}é"),
            "\"a\\\"b\\\\c\\n\\t\\r\\0\\u{1}\\u{7f}é\""
        );
    }

    #[test]
    fn triple_quoted_refuses_what_dedent_would_change() {
        assert_eq!(
            triple_quoted("a\n\n  b", 4).as_deref(),
            Some("\"\"\"\n    a\n\n      b\n    \"\"\"")
        );
        assert_eq!(triple_quoted("  a\n  b", 4), None);
        assert_eq!(triple_quoted("a \nb", 4), None);
        assert_eq!(triple_quoted("a\n", 4), None);
        assert_eq!(triple_quoted("say \"\"\"hi\"\"\"", 4), None);
        assert_eq!(triple_quoted("", 4), None);
    }

    #[test]
    fn bare_rule_refs() {
        assert!(is_bare_rule_ref("no-secret-writes"));
        assert!(is_bare_rule_ref("std:fs/write.v1"));
        assert!(!is_bare_rule_ref("a//b"));
        assert!(!is_bare_rule_ref("has space"));
        assert!(!is_bare_rule_ref(""));
    }

    #[test]
    fn comments_in_strings_and_rule_ids_are_not_comments() {
        let src = "let x = [\"//a\"]; // real\ntest \"t\" { exec \"x\" => deny(\"a//b\"); }\n";
        let parsed = parse(src);
        assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
        let texts: Vec<String> = collect_comments(src, &parsed.file)
            .into_iter()
            .map(|c| c.text)
            .collect();
        assert_eq!(texts, ["// real"]);
    }
}

//! The parser's state and the byte-level moves every rule shares: the one wrapper all
//! named rules run through (`r`), literals, pest's implicit whitespace skip, brackets.

use std::cell::{Cell, RefCell};

use crate::ast::*;
use crate::attempts::{Attempts, Production as R};
use crate::diagnostic::Diagnostic;
use crate::lexical::MAX_NESTING;

/// The statements that parsed and the errors found while building the others.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub(crate) statements: Vec<Statement>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// Why a parse gave no statements.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The grammar does not match; `parser::syntax_error` says where and what was expected.
    Syntax,
    /// A limit that ends parsing outright (nesting the lexical scan could not see).
    Fatal(Box<Diagnostic>),
}

/// One parse of one part of a file. `TRACK` records pest's attempt bookkeeping: off for
/// the production run, on only for the rerun that explains a syntax error.
pub(super) struct Parser<'a, const TRACK: bool> {
    /// The source up to the end of the part being parsed.
    pub(super) s: &'a str,
    pub(super) b: &'a [u8],
    pub(super) start: usize,
    /// Open `(`, `[` and `{` outside strings, comments and scripts (as `lexical::scan` counts).
    pub(super) depth: Cell<usize>,
    /// No build error recorded in the current top-level statement.
    pub(super) clean: Cell<bool>,
    pub(super) built: RefCell<Option<Diagnostic>>,
    pub(super) fatal: RefCell<Option<Box<Diagnostic>>>,
    pub(super) attempts: RefCell<Attempts>,
    /// Room for this many statements in a file's list, when the caller knows better than
    /// a count of `;` (the head of a file split across threads, sized for the whole).
    pub(super) room: Option<usize>,
}

pub(super) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

pub(super) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

pub(super) type Entry = (Spanned<String>, Spanned<Value>);
pub(super) type Entries = Vec<Entry>;

impl<'a, const TRACK: bool> Parser<'a, TRACK> {
    pub(super) fn new(src: &'a str, part: Span) -> Self {
        let s = src.get(..part.end).unwrap_or(src);
        Parser {
            s,
            b: s.as_bytes(),
            start: part.start.min(s.len()),
            depth: Cell::new(0),
            clean: Cell::new(true),
            built: RefCell::new(None),
            fatal: RefCell::new(None),
            attempts: RefCell::new(Attempts {
                pos: part.start,
                rules: Vec::new(),
            }),
            room: None,
        }
    }

    pub(super) fn run(&self, single: bool) -> Result<Parsed, Failure> {
        let out = if single {
            self.r(R::SingleStmt, self.start, || self.single_stmt())
        } else {
            self.r(R::File, self.start, || self.file())
        };
        if let Some(d) = self.fatal.borrow_mut().take() {
            return Err(Failure::Fatal(d));
        }
        out.ok_or(Failure::Syntax)
    }

    /// A named rule starting at `pos`: on failure, undo what `f` did and record the attempt.
    #[inline(always)]
    pub(super) fn r<T>(&self, rule: R, pos: usize, f: impl FnOnce() -> Option<T>) -> Option<T> {
        let mark = TRACK.then(|| self.attempts.borrow().start(pos));
        let out = self.group(f);
        if let (None, Some(mark)) = (&out, mark) {
            self.attempts.borrow_mut().failed(rule, pos, mark);
        }
        out
    }

    /// An optional or repeated part: on failure, undo what `f` did.
    #[inline(always)]
    pub(super) fn group<T>(&self, f: impl FnOnce() -> Option<T>) -> Option<T> {
        let depth = self.depth.get();
        let clean = self.clean.get();
        let out = f();
        if out.is_none() {
            self.depth.set(depth);
            if clean && !self.clean.get() {
                self.clean.set(true);
                *self.built.borrow_mut() = None;
            }
        }
        out
    }

    /// Keeps the first build error of the current top-level statement.
    pub(super) fn build_error(&self, d: Diagnostic) {
        if self.clean.get() {
            self.clean.set(false);
            *self.built.borrow_mut() = Some(d);
        }
    }

    /// Keeps `stmt`, or the build error found in it.
    pub(super) fn keep(&self, out: &mut Parsed, stmt: Statement) {
        self.clean.set(true);
        match self.built.borrow_mut().take() {
            Some(d) => out.diagnostics.push(d),
            None => out.statements.push(stmt),
        }
    }

    pub(super) fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    pub(super) fn eof(&self, i: usize) -> bool {
        i >= self.b.len()
    }

    pub(super) fn starts(&self, i: usize, lit: &str) -> bool {
        self.b
            .get(i..)
            .is_some_and(|rest| rest.starts_with(lit.as_bytes()))
    }

    /// A literal: the offset after it.
    pub(super) fn lit(&self, i: usize, lit: &str) -> Option<usize> {
        self.starts(i, lit).then_some(i + lit.len())
    }

    /// `lit` followed by something that is not `ASCII_ALPHANUMERIC | "_"`.
    pub(super) fn starts_word(&self, i: usize, lit: &str) -> bool {
        self.starts(i, lit) && !is_word(self.at(i + lit.len()))
    }

    pub(super) fn text(&self, start: usize, end: usize) -> &'a str {
        self.s.get(start..end).unwrap_or("")
    }

    pub(super) fn owned(&self, start: usize, end: usize) -> Spanned<String> {
        Spanned::new(self.text(start, end).to_string(), Span::new(start, end))
    }

    /// `span_of`: the pair `start..end` without trailing whitespace.
    pub(super) fn sp(&self, start: usize, end: usize) -> Span {
        let len = self.s.get(start..end).map_or(0, |t| t.trim_end().len());
        Span::new(start, start + len)
    }

    /// pest's implicit `(WHITESPACE | COMMENT)*`.
    pub(super) fn skip(&self, mut i: usize) -> usize {
        loop {
            match self.at(i) {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                0xEF if self.at(i + 1) == 0xBB && self.at(i + 2) == 0xBF => i += 3,
                b'/' if self.at(i + 1) == b'/' => {
                    i = match self
                        .b
                        .get(i..)
                        .and_then(|r| r.iter().position(|&c| c == b'\n'))
                    {
                        Some(n) => i + n,
                        None => self.b.len(),
                    };
                }
                _ => return i,
            }
        }
    }

    pub(super) fn expect(&self, i: usize, c: u8) -> Option<usize> {
        (self.at(i) == c && !self.eof(i)).then_some(i + 1)
    }

    pub(super) fn open(&self, i: usize, c: u8) -> Option<usize> {
        let next = self.expect(i, c)?;
        let depth = self.depth.get() + 1;
        self.depth.set(depth);
        if depth > MAX_NESTING {
            let d = Diagnostic::error(
                "E0002",
                Span::new(i, i + 1),
                format!("brackets nest deeper than {MAX_NESTING} levels"),
            )
            .with_label("too deep");
            self.fatal.borrow_mut().get_or_insert(Box::new(d));
            return None;
        }
        Some(next)
    }

    pub(super) fn close(&self, i: usize, c: u8) -> Option<usize> {
        let next = self.expect(i, c)?;
        self.depth.set(self.depth.get().saturating_sub(1));
        Some(next)
    }
}

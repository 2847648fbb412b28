//! The shell parser: text to the syntax tree of [`crate::ast`].
//!
//! The parser is a hand-written recursive-descent parser working directly on
//! the bytes of the input (all shell syntax is ASCII; other characters are
//! copied through). It was preferred over `brush-parser` because that crate
//! (0.4) panics on some inputs (`echo 99999999999>f`), recurses without a
//! depth limit in three layers whose quoting rules differ (so no pre-scan can
//! bound its stack use reliably), mis-splits `$(…)` that contains a
//! here-document with an unbalanced `)` (common in `git commit -m "$(cat
//! <<'EOF' …)"`), keeps `\$` inside backticks escaped (hiding commands), and
//! needs Rust 1.88. Every recursive construct here goes through a single depth
//! counter ([`MAX_DEPTH`]); there is no backtracking, so parsing is linear in
//! the input apart from a bounded raw scan for `((`.
//!
//! The parser is one struct whose methods are spread over files by job: this file
//! holds the cursor, depth accounting and here-document bodies; `commands` the
//! grammar of lists and commands, `redirects` redirections, `words` words, quoting
//! and expansions.

mod commands;
mod redirects;
mod words;

#[cfg(test)]
mod tests;

use crate::ast::{List, Shared, Word};
use crate::error::{Res, ShellError};
use crate::limits::MAX_DEPTH;

/// Parses `text` (found at byte `base` of the whole line, `depth` levels deep) into a
/// command list; here-document bodies land in `shared`.
pub(crate) fn parse(text: &str, base: usize, depth: usize, shared: &mut Shared) -> Res<List> {
    Parser::new(text, base, depth, shared).parse_script()
}

#[derive(Debug)]
struct Pending {
    delim: String,
    strip_tabs: bool,
    quoted: bool,
    id: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Unquoted,
    Dq,
    Heredoc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordMode {
    Normal,
    /// Right-hand side of `=~` in `[[ ]]`: parentheses and `|` belong to the word.
    Regex,
}

const KEYWORDS: [&str; 22] = [
    "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
];

fn is_meta(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

struct Parser<'a, 's> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Absolute offset of `src` in the top-level input (for errors).
    base: usize,
    depth: usize,
    /// Here-documents whose bodies start after the next newline.
    pending: Vec<Pending>,
    /// Number of enclosing substitutions that have pending here-documents.
    outer_pending: usize,
    shared: &'s mut Shared,
}

impl<'a, 's> Parser<'a, 's> {
    fn new(src: &'a str, base: usize, depth: usize, shared: &'s mut Shared) -> Self {
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            base,
            depth,
            pending: Vec::new(),
            outer_pending: 0,
            shared,
        }
    }

    // ----- helpers -------------------------------------------------------

    fn err_at<T>(&self, pos: usize, msg: impl Into<String>) -> Res<T> {
        Err(ShellError::Syntax {
            offset: self.base + pos.min(self.b.len()),
            message: msg.into(),
        })
    }

    fn err<T>(&self, msg: impl Into<String>) -> Res<T> {
        self.err_at(self.pos, msg)
    }

    fn err_unexpected<T>(&self) -> Res<T> {
        match self.peek_keyword() {
            Some(k) => self.err(format!("unexpected '{k}'")),
            None => match self.peek() {
                None => self.err("unexpected end of input"),
                Some(b'\n') => self.err("unexpected newline"),
                Some(c) => self.err(format!("unexpected '{}'", char::from(c))),
            },
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        self.b
            .get(self.pos..)
            .is_some_and(|r| r.starts_with(s.as_bytes()))
    }

    fn slice(&self, a: usize, b: usize) -> Res<&'a str> {
        let src = self.src;
        match src.get(a..b) {
            Some(s) => Ok(s),
            None => self.err_at(a, "internal error: invalid text boundary"),
        }
    }

    /// Consumes and returns the character at the current position.
    fn bump_char(&mut self) -> char {
        match self.src.get(self.pos..).and_then(|s| s.chars().next()) {
            Some(c) => {
                self.pos += c.len_utf8();
                c
            }
            None => {
                self.pos += 1;
                char::REPLACEMENT_CHARACTER
            }
        }
    }

    fn find_byte(&self, from: usize, c: u8) -> Option<usize> {
        self.b
            .get(from..)
            .and_then(|r| r.iter().position(|&x| x == c))
            .map(|i| from + i)
    }

    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ShellError::TooDeep { limit: MAX_DEPTH });
        }
        Ok(())
    }

    /// Parentheses counted inside arithmetic / patterns also obey [`MAX_DEPTH`].
    fn check_paren_depth(&self, parens: usize) -> Res<()> {
        if self.depth + parens > MAX_DEPTH {
            return Err(ShellError::TooDeep { limit: MAX_DEPTH });
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The reserved word at the current position, if any.
    fn peek_keyword(&self) -> Option<&'static str> {
        let rest = self.b.get(self.pos..)?;
        let n = rest
            .iter()
            .position(|&c| is_meta(c) || matches!(c, b'\'' | b'"' | b'\\' | b'`' | b'$'))
            .unwrap_or(rest.len());
        if rest.get(n).is_some_and(|&c| !is_meta(c)) {
            return None;
        }
        let run = rest.get(..n)?;
        KEYWORDS.iter().find(|k| k.as_bytes() == run).copied()
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                _ => break,
            }
        }
    }

    fn skip_comment(&mut self) {
        if self.peek() == Some(b'#') {
            self.pos = self.find_byte(self.pos, b'\n').unwrap_or(self.b.len());
        }
    }

    fn skip_blanks_comments(&mut self) {
        self.skip_blanks();
        self.skip_comment();
    }

    /// Skips blanks, comments and newlines (reading pending here-documents).
    fn linebreak(&mut self) -> Res<()> {
        loop {
            self.skip_blanks_comments();
            if self.peek() == Some(b'\n') {
                self.consume_newline()?;
            } else {
                return Ok(());
            }
        }
    }

    fn consume_newline(&mut self) -> Res<()> {
        self.pos += 1;
        if self.outer_pending > 0 {
            return self.err_at(
                self.pos - 1,
                "newline inside a substitution while a here-document is pending",
            );
        }
        for p in std::mem::take(&mut self.pending) {
            self.read_heredoc(p)?;
        }
        Ok(())
    }

    fn read_heredoc(&mut self, p: Pending) -> Res<()> {
        let body_start = self.pos;
        let mut body = String::new();
        loop {
            if self.pos >= self.b.len() {
                return self.err_at(
                    body_start,
                    format!("here-document delimited by '{}' is not terminated", p.delim),
                );
            }
            let end = self.find_byte(self.pos, b'\n').unwrap_or(self.b.len());
            let line = self.slice(self.pos, end)?;
            let line = if p.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            self.pos = if end < self.b.len() { end + 1 } else { end };
            if line == p.delim {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        let word = if p.quoted {
            let mut w = Word::new(self.base + body_start);
            w.quoted_str(&body);
            w
        } else {
            self.parse_heredoc_text(&body, self.base + body_start)?
        };
        match self.shared.bodies.get_mut(p.id) {
            Some(slot) => *slot = Some(word),
            None => return self.err("internal error: unknown here-document"),
        }
        Ok(())
    }

    /// Parses `text` like an unquoted here-document body: only `$…`, backticks
    /// and `\$`, `` \` ``, `\\`, `\<newline>` are special.
    fn parse_heredoc_text(&mut self, text: &str, base: usize) -> Res<Word> {
        let mut sub = Parser::new(text, base, self.depth, self.shared);
        let mut w = Word::new(base);
        w.plain = false;
        while let Some(c) = sub.peek() {
            match c {
                b'\\' => match sub.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'\\')) => {
                        w.text.push(char::from(e));
                        sub.pos += 2;
                    }
                    Some(b'\n') => sub.pos += 2,
                    _ => {
                        w.text.push('\\');
                        sub.pos += 1;
                    }
                },
                b'$' => sub.parse_dollar(&mut w, Ctx::Heredoc)?,
                b'`' => sub.parse_backtick(&mut w, false)?,
                _ => {
                    let ch = sub.bump_char();
                    w.text.push(ch);
                }
            }
        }
        Ok(w)
    }

    /// Runs `f` as a nested command list (`$(…)`, `<(…)`), isolating the
    /// here-documents pending outside of it.
    fn with_nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        let saved = std::mem::take(&mut self.pending);
        let had = !saved.is_empty();
        if had {
            self.outer_pending += 1;
        }
        let r = f(self);
        if had {
            self.outer_pending = self.outer_pending.saturating_sub(1);
        }
        let inner = std::mem::replace(&mut self.pending, saved);
        let v = r?;
        if !inner.is_empty() {
            return self.err("here-document inside a substitution is not terminated inside it");
        }
        Ok(v)
    }

    /// A whole script: a list that must use up the text.
    fn parse_script(&mut self) -> Res<List> {
        let list = self.parse_list()?;
        self.skip_blanks_comments();
        if self.peek().is_some() {
            return self.err_unexpected();
        }
        if !self.pending.is_empty() {
            return self.err("here-document is not terminated");
        }
        Ok(list)
    }
}

/// A `>&` target that names a file descriptor (`2`, `-`, `3-`) rather than a file.
fn is_fd_like(s: &str) -> bool {
    if s == "-" {
        return true;
    }
    let digits = s.strip_suffix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

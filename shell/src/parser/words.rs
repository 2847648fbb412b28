//! Words: quoting, escapes, parameter and arithmetic expansions, command and process
//! substitutions, extended globs.

use super::{is_meta, Ctx, Parser, WordMode};
use crate::ast::{Glob, List, Sub, SubKind, Word};
use crate::error::Res;
use crate::names::{is_name_char, is_name_start};

const UNTERMINATED_ANSI: &str = "unterminated $'…' quote";
const UNTERMINATED_EXTGLOB: &str = "unterminated extended glob pattern";

impl Parser<'_, '_> {
    pub(super) fn parse_word(&mut self, mode: WordMode) -> Res<Word> {
        let start = self.pos;
        let mut w = Word::new(self.base + start);
        let mut g = Glob::default();
        let mut rdepth = 0usize;
        while let Some(c) = self.peek() {
            if is_meta(c) {
                if matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(') {
                    self.parse_procsub(&mut w)?;
                    g.last_ext = false;
                    continue;
                }
                if c == b'(' && g.last_ext {
                    self.parse_extglob(&mut w)?;
                    g.last_ext = false;
                    continue;
                }
                if mode == WordMode::Regex {
                    match c {
                        b'(' => {
                            rdepth += 1;
                            self.pos += 1;
                            w.literal('(', &mut g);
                            continue;
                        }
                        b')' if rdepth > 0 => {
                            rdepth -= 1;
                            self.pos += 1;
                            w.literal(')', &mut g);
                            continue;
                        }
                        b'|' => {
                            self.pos += 1;
                            w.literal('|', &mut g);
                            continue;
                        }
                        b')' | b'\n' => {}
                        _ if rdepth > 0 => {
                            self.pos += 1;
                            w.literal(char::from(c), &mut g);
                            continue;
                        }
                        _ => {}
                    }
                }
                break;
            }
            g.last_ext = false;
            match c {
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => self.pos += 2,
                    None => {
                        self.pos += 1;
                        w.quoted_char('\\');
                    }
                    Some(_) => {
                        self.pos += 1;
                        let ch = self.bump_char();
                        w.quoted_char(ch);
                    }
                },
                b'\'' => self.parse_single(&mut w)?,
                b'"' => self.parse_dq(&mut w)?,
                b'$' => match self.peek_at(1) {
                    Some(b'\'') => self.parse_ansi(&mut w)?,
                    Some(b'"') => {
                        self.pos += 1;
                        self.parse_dq(&mut w)?;
                    }
                    _ => self.parse_dollar(&mut w, Ctx::Unquoted)?,
                },
                b'`' => self.parse_backtick(&mut w, false)?,
                _ => {
                    let ch = self.bump_char();
                    w.literal(ch, &mut g);
                }
            }
        }
        if self.pos == start {
            return self.err("expected a word");
        }
        Ok(w)
    }

    pub(super) fn parse_single(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        let Some(close) = self.find_byte(open + 1, b'\'') else {
            return self.err_at(open, "unterminated single quote");
        };
        let s = self.slice(open + 1, close)?;
        w.quoted_str(s);
        self.pos = close + 1;
        Ok(())
    }

    /// `$'…'` (ANSI-C quoting).
    pub(super) fn parse_ansi(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        self.pos += 2;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err_at(open, UNTERMINATED_ANSI);
            };
            self.pos += 1;
            match c {
                b'\'' => break,
                b'\\' => self.ansi_escape(open, &mut out)?,
                c => out.push(c),
            }
        }
        w.quoted_str(&String::from_utf8_lossy(&out));
        Ok(())
    }

    /// One escape of the `$'…'` opened at `open`, after its backslash, decoded into
    /// `out`.
    fn ansi_escape(&mut self, open: usize, out: &mut Vec<u8>) -> Res<()> {
        let Some(e) = self.peek() else {
            return self.err_at(open, UNTERMINATED_ANSI);
        };
        self.pos += 1;
        match e {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'e' | b'E' => out.push(27),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' | b'u' | b'U' => {
                let max = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max {
                    match self.peek().and_then(|d| char::from(d).to_digit(16)) {
                        Some(d) => {
                            v = v.saturating_mul(16).saturating_add(d);
                            self.pos += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else if e == b'x' {
                    out.push((v & 0xff) as u8);
                } else {
                    let ch = char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER);
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
            b'c' => {
                let Some(x) = self.peek() else {
                    return self.err_at(open, UNTERMINATED_ANSI);
                };
                self.pos += 1;
                out.push(x & 0x1f);
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
        Ok(())
    }

    /// `"…"`; the position is at the opening quote.
    pub(super) fn parse_dq(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        self.pos += 1;
        w.plain = false;
        w.quoted = true;
        loop {
            match self.peek() {
                None => return self.err_at(open, "unterminated double quote"),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => match self.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'"' | b'\\')) => {
                        w.text.push(char::from(e));
                        self.pos += 2;
                    }
                    Some(b'\n') => self.pos += 2,
                    Some(_) => {
                        w.text.push('\\');
                        self.pos += 1;
                    }
                    None => return self.err_at(open, "unterminated double quote"),
                },
                Some(b'$') => self.parse_dollar(w, Ctx::Dq)?,
                Some(b'`') => self.parse_backtick(w, true)?,
                Some(_) => {
                    let ch = self.bump_char();
                    w.text.push(ch);
                }
            }
        }
    }

    /// `$…` expansions; the position is at the `$`.
    pub(super) fn parse_dollar(&mut self, w: &mut Word, ctx: Ctx) -> Res<()> {
        let start = self.pos;
        match self.peek_at(1) {
            Some(b'(') => {
                if self.peek_at(2) == Some(b'(') && self.dparen_is_arith(self.pos + 3) {
                    self.pos += 3;
                    self.enter()?;
                    let r = self.arith_body(w, b')');
                    self.leave();
                    r?;
                } else {
                    self.pos += 2;
                    self.enter()?;
                    let r = self.nested_list(start, "unterminated command substitution");
                    self.leave();
                    w.subs.push(Sub {
                        kind: SubKind::Command,
                        list: r?,
                    });
                }
            }
            Some(b'{') => {
                self.pos += 2;
                self.enter()?;
                let r = self.param_body(w, ctx, start);
                self.leave();
                r?;
            }
            Some(b'[') => {
                self.pos += 2;
                self.enter()?;
                let r = self.arith_body(w, b']');
                self.leave();
                r?;
            }
            Some(c) if is_name_start(c) => {
                self.pos += 1;
                while self.peek().is_some_and(is_name_char) {
                    self.pos += 1;
                }
            }
            Some(c)
                if c.is_ascii_digit()
                    || matches!(c, b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') =>
            {
                self.pos += 2;
            }
            _ => {
                self.pos += 1;
                w.text.push('$');
                return Ok(());
            }
        }
        let raw = self.slice(start, self.pos)?;
        w.expansion(raw);
        Ok(())
    }

    /// A command list up to the closing `)` of `$(`, `<(` or `>(`.
    pub(super) fn nested_list(&mut self, open: usize, unterminated: &str) -> Res<List> {
        self.with_nested(|p| {
            let list = p.parse_list()?;
            p.skip_blanks_comments();
            match p.peek() {
                Some(b')') => {
                    p.pos += 1;
                    Ok(list)
                }
                None => p.err_at(open, unterminated),
                Some(_) => p.err_unexpected(),
            }
        })
    }

    pub(super) fn parse_procsub(&mut self, w: &mut Word) -> Res<()> {
        let start = self.pos;
        let kind = if self.peek() == Some(b'<') {
            SubKind::ProcIn
        } else {
            SubKind::ProcOut
        };
        self.pos += 2;
        self.enter()?;
        let r = self.nested_list(start, "unterminated process substitution");
        self.leave();
        w.subs.push(Sub { kind, list: r? });
        let raw = self.slice(start, self.pos)?;
        w.expansion(raw);
        Ok(())
    }

    /// `` `…` ``: unescape like bash, then parse the result as a script.
    pub(super) fn parse_backtick(&mut self, w: &mut Word, in_dq: bool) -> Res<()> {
        let start = self.pos;
        self.pos += 1;
        let mut content = String::new();
        loop {
            match self.peek() {
                None => return self.err_at(start, "unterminated backquote"),
                Some(b'`') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => match self.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'\\')) => {
                        content.push(char::from(e));
                        self.pos += 2;
                    }
                    Some(b'"') if in_dq => {
                        content.push('"');
                        self.pos += 2;
                    }
                    Some(_) => {
                        content.push('\\');
                        self.pos += 1;
                    }
                    None => return self.err_at(start, "unterminated backquote"),
                },
                Some(_) => {
                    let ch = self.bump_char();
                    content.push(ch);
                }
            }
        }
        self.enter()?;
        let r = {
            let mut sub = Parser::new(&content, self.base + start, self.depth, self.shared);
            sub.parse_script()
        };
        self.leave();
        w.subs.push(Sub {
            kind: SubKind::Command,
            list: r?,
        });
        let raw = self.slice(start, self.pos)?;
        w.expansion(raw);
        Ok(())
    }

    /// Body of `${…}` after the `${`; collects commands of nested expansions.
    pub(super) fn param_body(&mut self, w: &mut Word, ctx: Ctx, start: usize) -> Res<()> {
        let mut braces = 0usize;
        loop {
            match self.peek() {
                None => return self.err_at(start, "unterminated '${'"),
                Some(b'}') => {
                    self.pos += 1;
                    if braces == 0 {
                        return Ok(());
                    }
                    braces -= 1;
                }
                Some(b'{') => {
                    braces += 1;
                    self.pos += 1;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return self.err_at(start, "unterminated '${'");
                    }
                    self.bump_char();
                }
                Some(b'\'') => {
                    let open = self.pos;
                    let Some(close) = self.find_byte(open + 1, b'\'') else {
                        return self.err_at(open, "unterminated single quote");
                    };
                    if ctx != Ctx::Unquoted {
                        // Inside double quotes the single quotes are literal and
                        // their content is still expanded.
                        let content = self.slice(open + 1, close)?;
                        let inner = self.parse_heredoc_text(content, self.base + open + 1)?;
                        w.subs.extend(inner.subs);
                    }
                    self.pos = close + 1;
                }
                Some(b'"') => {
                    let mut scratch = Word::new(0);
                    self.parse_dq(&mut scratch)?;
                    w.subs.extend(scratch.subs);
                }
                Some(b'$') => {
                    let mut scratch = Word::new(0);
                    if self.peek_at(1) == Some(b'\'') && ctx == Ctx::Unquoted {
                        self.parse_ansi(&mut scratch)?;
                    } else {
                        self.parse_dollar(&mut scratch, ctx)?;
                    }
                    w.subs.extend(scratch.subs);
                }
                Some(b'`') => {
                    let mut scratch = Word::new(0);
                    self.parse_backtick(&mut scratch, ctx == Ctx::Dq)?;
                    w.subs.extend(scratch.subs);
                }
                Some(_) => {
                    self.bump_char();
                }
            }
        }
    }

    /// Arithmetic text up to `))` (`close == b')'`) or `]` (`$[…]`).
    pub(super) fn arith_body(&mut self, w: &mut Word, close: u8) -> Res<()> {
        let open = self.pos;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return self.err_at(open, "unterminated arithmetic expression"),
                Some(b'(') if close == b')' => {
                    depth += 1;
                    self.pos += 1;
                    self.check_paren_depth(depth)?;
                }
                Some(b'[') if close == b']' => {
                    depth += 1;
                    self.pos += 1;
                    self.check_paren_depth(depth)?;
                }
                Some(c) if c == close => {
                    if depth > 0 {
                        depth -= 1;
                        self.pos += 1;
                    } else if close == b']' {
                        self.pos += 1;
                        return Ok(());
                    } else if self.peek_at(1) == Some(b')') {
                        self.pos += 2;
                        return Ok(());
                    } else {
                        return self.err("expected '))' to close arithmetic expression");
                    }
                }
                Some(b'$' | b'`' | b'"' | b'\'') => {
                    let mut scratch = Word::new(0);
                    match self.peek() {
                        Some(b'$') if self.peek_at(1) == Some(b'\'') => {
                            self.parse_ansi(&mut scratch)?;
                        }
                        Some(b'$') => self.parse_dollar(&mut scratch, Ctx::Unquoted)?,
                        Some(b'`') => self.parse_backtick(&mut scratch, false)?,
                        Some(b'"') => self.parse_dq(&mut scratch)?,
                        _ => self.parse_single(&mut scratch)?,
                    }
                    w.subs.extend(scratch.subs);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return self.err_at(open, "unterminated arithmetic expression");
                    }
                    self.bump_char();
                }
                Some(_) => {
                    self.bump_char();
                }
            }
        }
    }

    /// Decides whether `((` / `$((` starts arithmetic (bash: when the
    /// parenthesis opened at `from - 1` is closed by `))`), by a raw scan.
    pub(super) fn dparen_is_arith(&self, from: usize) -> bool {
        let b = self.b;
        let mut depth = 0usize;
        let mut i = from;
        while let Some(&c) = b.get(i) {
            match c {
                b'\\' => i += 2,
                b'\'' | b'`' => match self.find_byte(i + 1, c) {
                    Some(j) => i = j + 1,
                    None => return false,
                },
                b'"' => {
                    i += 1;
                    loop {
                        match b.get(i) {
                            None => return false,
                            Some(b'\\') => i += 2,
                            Some(b'"') => {
                                i += 1;
                                break;
                            }
                            Some(_) => i += 1,
                        }
                    }
                }
                b'(' => {
                    depth += 1;
                    i += 1;
                }
                b')' => {
                    if depth == 0 {
                        return b.get(i + 1) == Some(&b')');
                    }
                    depth -= 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        false
    }

    /// `@(…)`, `!(…)`, `?(…)`, `*(…)`, `+(…)` after the pattern character.
    pub(super) fn parse_extglob(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        let mut depth = 0usize;
        w.dynamic = true;
        w.plain = false;
        loop {
            let Some(c) = self.peek() else {
                return self.err_at(open, UNTERMINATED_EXTGLOB);
            };
            match c {
                b'(' => {
                    depth += 1;
                    self.pos += 1;
                    w.text.push('(');
                    self.check_paren_depth(depth)?;
                }
                b')' => {
                    self.pos += 1;
                    w.text.push(')');
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                b'\\' => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return self.err_at(open, UNTERMINATED_EXTGLOB);
                    }
                    let ch = self.bump_char();
                    w.quoted_char(ch);
                }
                b'\'' => self.parse_single(w)?,
                b'"' => self.parse_dq(w)?,
                b'$' if self.peek_at(1) == Some(b'\'') => self.parse_ansi(w)?,
                b'$' => self.parse_dollar(w, Ctx::Unquoted)?,
                b'`' => self.parse_backtick(w, false)?,
                _ => {
                    let ch = self.bump_char();
                    w.text.push(ch);
                }
            }
        }
    }
}

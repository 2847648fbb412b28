//! The grammar of command lists, pipelines, simple and compound commands.

use super::{is_meta, Parser, WordMode};
use crate::ast::{Command, Compound, List, Pipeline, Simple, Word};
use crate::error::Res;
use crate::names::{is_name_char, is_name_start};

impl Parser<'_, '_> {
    pub(super) fn at_terminator(&self) -> bool {
        match self.peek() {
            None | Some(b')') => true,
            Some(b';') => matches!(self.peek_at(1), Some(b';' | b'&')),
            _ => matches!(
                self.peek_keyword(),
                Some("}" | "then" | "elif" | "else" | "fi" | "do" | "done" | "esac")
            ),
        }
    }

    pub(super) fn parse_list(&mut self) -> Res<List> {
        let mut list = Vec::new();
        loop {
            self.linebreak()?;
            if self.at_terminator() {
                break;
            }
            self.parse_and_or(&mut list)?;
            self.skip_blanks_comments();
            match self.peek() {
                Some(b';') if !matches!(self.peek_at(1), Some(b';' | b'&')) => self.pos += 1,
                Some(b'&') if !matches!(self.peek_at(1), Some(b'&' | b'>')) => self.pos += 1,
                Some(b'\n') => self.consume_newline()?,
                _ => break,
            }
        }
        Ok(list)
    }

    /// A list that must contain at least one command (compound bodies).
    pub(super) fn body_list(&mut self) -> Res<List> {
        let list = self.parse_list()?;
        if list.is_empty() {
            return self.err_unexpected();
        }
        Ok(list)
    }

    pub(super) fn parse_and_or(&mut self, out: &mut List) -> Res<()> {
        out.push(self.parse_pipeline()?);
        loop {
            self.skip_blanks();
            if self.starts_with("&&") || self.starts_with("||") {
                let after_or = self.starts_with("||");
                self.pos += 2;
                self.linebreak()?;
                let mut p = self.parse_pipeline()?;
                p.after_or = after_or;
                out.push(p);
            } else {
                return Ok(());
            }
        }
    }

    pub(super) fn parse_pipeline(&mut self) -> Res<Pipeline> {
        self.skip_blanks();
        let mut timed = Vec::new();
        if self.peek_keyword() == Some("time") {
            self.pos += 4;
            timed.push("time".to_string());
            self.skip_blanks();
            let is_p = self
                .b
                .get(self.pos..)
                .is_some_and(|r| r.starts_with(b"-p") && r.get(2).is_none_or(|&c| is_meta(c)));
            if is_p {
                self.pos += 2;
                timed.push("-p".to_string());
                self.skip_blanks();
            }
        }
        let mut bang = false;
        while self.peek_keyword() == Some("!") {
            self.pos += 1;
            bang = true;
            self.skip_blanks();
        }
        if (bang || !timed.is_empty())
            && (self.at_terminator() || matches!(self.peek(), Some(b';' | b'&' | b'\n' | b'#')))
        {
            return Ok(Pipeline {
                after_or: false,
                timed,
                cmds: Vec::new(),
            });
        }
        let mut cmds = vec![self.parse_command()?];
        loop {
            self.skip_blanks();
            if self.starts_with("||") {
                break;
            }
            if self.starts_with("|&") {
                self.pos += 2;
            } else if self.peek() == Some(b'|') {
                self.pos += 1;
            } else {
                break;
            }
            self.linebreak()?;
            cmds.push(self.parse_command()?);
        }
        Ok(Pipeline {
            after_or: false,
            timed,
            cmds,
        })
    }

    // ----- commands --------------------------------------------------------

    pub(super) fn parse_command(&mut self) -> Res<Command> {
        self.skip_blanks();
        if let Some(kw) = self.peek_keyword() {
            match kw {
                "{" => return self.compound(Self::brace_group),
                "if" => return self.compound(Self::if_clause),
                "while" | "until" => return self.compound(Self::while_clause),
                "for" | "select" => return self.compound(Self::for_clause),
                "case" => return self.compound(Self::case_clause),
                "[[" => return self.compound(Self::cond_command),
                "function" => return self.function_keyword(),
                "coproc" => return self.coproc(),
                "}" | "then" | "elif" | "else" | "fi" | "do" | "done" | "esac" | "]]" | "!" => {
                    return self.err(format!("unexpected '{kw}'"));
                }
                _ => {}
            }
        }
        if self.peek() == Some(b'(') {
            if self.peek_at(1) == Some(b'(') && self.dparen_is_arith(self.pos + 2) {
                // Bash reads `((…))` as arithmetic, a POSIX `sh` (dash) as two nested
                // subshells that run commands: when the text parses as commands too, those
                // are reported (at worst a needless ask, never a hidden `rm`).
                let (pos, depth, pending, outer) =
                    (self.pos, self.depth, self.pending.len(), self.outer_pending);
                let bodies = self.shared.bodies.len();
                if let Ok(c) = self.compound(Self::subshell) {
                    return Ok(c);
                }
                self.pos = pos;
                self.depth = depth;
                self.pending.truncate(pending);
                self.outer_pending = outer;
                self.shared.bodies.truncate(bodies);
                return self.compound(Self::arith_command);
            }
            return self.compound(Self::subshell);
        }
        self.parse_simple()
    }

    /// Parses a compound command with `f` (one nesting level), then its
    /// trailing redirections.
    pub(super) fn compound(&mut self, f: fn(&mut Self) -> Res<Compound>) -> Res<Command> {
        self.enter()?;
        let r = f(self);
        self.leave();
        let mut c = r?;
        loop {
            self.skip_blanks();
            match self.try_parse_redirect()? {
                Some(r) => c.redirs.push(r),
                None => break,
            }
        }
        Ok(Command::Compound(c))
    }

    pub(super) fn expect_keyword(&mut self, kw: &str) -> Res<()> {
        self.skip_blanks_comments();
        if self.peek_keyword() == Some(kw) {
            self.pos += kw.len();
            Ok(())
        } else if self.peek().is_none() {
            self.err(format!("expected '{kw}' before end of input"))
        } else {
            self.err(format!("expected '{kw}'"))
        }
    }

    pub(super) fn brace_group(&mut self) -> Res<Compound> {
        self.pos += 1;
        let list = self.body_list()?;
        self.expect_keyword("}")?;
        Ok(Compound::of(list))
    }

    pub(super) fn subshell(&mut self) -> Res<Compound> {
        let open = self.pos;
        self.pos += 1;
        let list = self.body_list()?;
        self.skip_blanks_comments();
        if self.peek() != Some(b')') {
            if self.peek().is_none() {
                return self.err_at(open, "unterminated '('");
            }
            return self.err_unexpected();
        }
        self.pos += 1;
        Ok(Compound::of(list))
    }

    /// At `((`: the arithmetic up to `))`, as one dynamic word of its source text.
    fn arith_word(&mut self) -> Res<Word> {
        let start = self.pos;
        self.pos += 2;
        let mut w = Word::new(self.base + start);
        self.arith_body(&mut w, b')')?;
        w.text = self.slice(start, self.pos)?.to_string();
        w.dynamic = true;
        Ok(w)
    }

    pub(super) fn arith_command(&mut self) -> Res<Compound> {
        let mut w = self.arith_word()?;
        w.plain = false;
        Ok(Compound {
            words: vec![w],
            ..Compound::default()
        })
    }

    pub(super) fn if_clause(&mut self) -> Res<Compound> {
        self.pos += 2;
        let mut c = Compound::default();
        c.lists.push(self.body_list()?);
        self.expect_keyword("then")?;
        c.lists.push(self.body_list()?);
        loop {
            self.skip_blanks_comments();
            match self.peek_keyword() {
                Some("elif") => {
                    self.pos += 4;
                    c.lists.push(self.body_list()?);
                    self.expect_keyword("then")?;
                    c.lists.push(self.body_list()?);
                }
                Some("else") => {
                    self.pos += 4;
                    c.lists.push(self.body_list()?);
                    self.expect_keyword("fi")?;
                    return Ok(c);
                }
                Some("fi") => {
                    self.pos += 2;
                    return Ok(c);
                }
                _ => return self.expect_keyword("fi").map(|()| c),
            }
        }
    }

    pub(super) fn while_clause(&mut self) -> Res<Compound> {
        self.pos += 5; // "while" and "until" have the same length
        let mut c = Compound::default();
        c.lists.push(self.body_list()?);
        self.do_group(&mut c)?;
        Ok(c)
    }

    pub(super) fn do_group(&mut self, c: &mut Compound) -> Res<()> {
        self.skip_blanks_comments();
        match self.peek_keyword() {
            Some("do") => {
                self.pos += 2;
                c.lists.push(self.body_list()?);
                self.expect_keyword("done")
            }
            Some("{") => {
                self.pos += 1;
                c.lists.push(self.body_list()?);
                self.expect_keyword("}")
            }
            _ => self.expect_keyword("do"),
        }
    }

    pub(super) fn for_clause(&mut self) -> Res<Compound> {
        let is_for = self.starts_with("for");
        self.pos += if is_for { 3 } else { 6 };
        self.skip_blanks();
        let mut c = Compound::default();
        if is_for && self.starts_with("((") {
            let w = self.arith_word()?;
            c.words.push(w);
            self.skip_blanks();
            if self.peek() == Some(b';') {
                self.pos += 1;
            }
            self.linebreak()?;
            self.do_group(&mut c)?;
            return Ok(c);
        }
        if self.peek().is_none_or(is_meta) {
            return self.err("expected a variable name after 'for'");
        }
        let name = self.parse_word(WordMode::Normal)?;
        if !name.plain {
            return self.err_at(name.start - self.base, "invalid variable name in 'for'");
        }
        self.skip_blanks_comments();
        if self.peek() == Some(b';') {
            self.pos += 1;
        } else {
            self.linebreak()?;
            if self.peek_keyword() == Some("in") {
                self.pos += 2;
                loop {
                    self.skip_blanks_comments();
                    match self.peek() {
                        Some(b';') => {
                            self.pos += 1;
                            break;
                        }
                        Some(b'\n') => {
                            self.consume_newline()?;
                            break;
                        }
                        None => return self.err("expected 'do' before end of input"),
                        Some(c2)
                            if is_meta(c2)
                                && !(matches!(c2, b'<' | b'>')
                                    && self.peek_at(1) == Some(b'(')) =>
                        {
                            return self.err_unexpected()
                        }
                        _ => c.words.push(self.parse_word(WordMode::Normal)?),
                    }
                }
            }
        }
        self.linebreak()?;
        self.do_group(&mut c)?;
        Ok(c)
    }

    pub(super) fn case_clause(&mut self) -> Res<Compound> {
        self.pos += 4;
        self.skip_blanks();
        if self.peek().is_none_or(is_meta) {
            return self.err("expected a word after 'case'");
        }
        let mut c = Compound::default();
        c.words.push(self.parse_word(WordMode::Normal)?);
        self.linebreak()?;
        self.expect_keyword("in")?;
        loop {
            self.linebreak()?;
            if self.peek_keyword() == Some("esac") {
                self.pos += 4;
                return Ok(c);
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            loop {
                self.skip_blanks();
                if self.peek().is_none_or(is_meta) {
                    return self.err("expected a case pattern");
                }
                c.words.push(self.parse_word(WordMode::Normal)?);
                self.skip_blanks();
                match self.peek() {
                    Some(b'|') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return self.err("expected ')' after case pattern"),
                }
            }
            c.lists.push(self.parse_list()?);
            self.skip_blanks_comments();
            if self.starts_with(";;&") {
                self.pos += 3;
            } else if self.starts_with(";;") || self.starts_with(";&") {
                self.pos += 2;
            } else if self.peek_keyword() != Some("esac") {
                if self.peek().is_none() {
                    return self.err("expected 'esac' before end of input");
                }
                return self.err_unexpected();
            }
        }
    }

    pub(super) fn cond_command(&mut self) -> Res<Compound> {
        let open = self.pos;
        self.pos += 2;
        let mut c = Compound::default();
        loop {
            self.linebreak()?;
            if self.peek_keyword() == Some("]]") {
                self.pos += 2;
                return Ok(c);
            }
            match self.peek() {
                None => return self.err_at(open, "unterminated '[['"),
                Some(b'(' | b')') => self.pos += 1,
                Some(b'&') if self.peek_at(1) == Some(b'&') => self.pos += 2,
                Some(b'|') if self.peek_at(1) == Some(b'|') => self.pos += 2,
                Some(b'<' | b'>') if self.peek_at(1) != Some(b'(') => self.pos += 1,
                Some(ch) if is_meta(ch) && !matches!(ch, b'<' | b'>') => {
                    return self.err_unexpected()
                }
                _ => {
                    let w = self.parse_word(WordMode::Normal)?;
                    let regex_op = w.plain && w.text == "=~";
                    c.words.push(w);
                    if regex_op {
                        self.skip_blanks();
                        if self.peek().is_none_or(|ch| is_meta(ch) && ch != b'(') {
                            return self.err("expected a regular expression after '=~'");
                        }
                        c.words.push(self.parse_word(WordMode::Regex)?);
                    }
                }
            }
        }
    }

    pub(super) fn function_keyword(&mut self) -> Res<Command> {
        self.pos += 8;
        self.skip_blanks();
        if self.peek().is_none_or(is_meta) {
            return self.err("expected a function name");
        }
        let name = self.parse_word(WordMode::Normal)?;
        if name.dynamic {
            return self.err_at(name.start - self.base, "invalid function name");
        }
        self.skip_blanks();
        if self.peek() == Some(b'(') {
            return self.empty_parens_then_body();
        }
        self.function_body()
    }

    /// At the `(` of a function definition: `)` must follow, then the body.
    fn empty_parens_then_body(&mut self) -> Res<Command> {
        self.pos += 1;
        self.skip_blanks();
        if self.peek() != Some(b')') {
            return self.err("expected ')' in function definition");
        }
        self.pos += 1;
        self.function_body()
    }

    pub(super) fn function_body(&mut self) -> Res<Command> {
        self.linebreak()?;
        let body_pos = self.pos;
        match self.parse_command()? {
            Command::Compound(c) => Ok(Command::Compound(c)),
            Command::Simple(_) => self.err_at(body_pos, "function body must be a compound command"),
        }
    }

    pub(super) fn coproc(&mut self) -> Res<Command> {
        self.pos += 6;
        self.skip_blanks();
        // `coproc NAME { …; }` / `coproc NAME ( … )`: skip the name.
        let rest = self.b.get(self.pos..).unwrap_or_default();
        if rest.first().is_some_and(|&c| is_name_start(c)) {
            let n = rest.iter().take_while(|&&c| is_name_char(c)).count();
            let after = rest.get(n..).unwrap_or_default();
            let blanks = after
                .iter()
                .take_while(|&&c| c == b' ' || c == b'\t')
                .count();
            let next = after.get(blanks..).unwrap_or_default();
            let opens = next.first() == Some(&b'(')
                || (next.first() == Some(&b'{') && next.get(1).is_none_or(|&c| is_meta(c)));
            if blanks > 0 && opens {
                self.pos += n + blanks;
            }
        }
        self.parse_command()
    }

    pub(super) fn parse_simple(&mut self) -> Res<Command> {
        let mut s = Simple::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            if c == b'#' {
                self.skip_comment();
                break;
            }
            if let Some(r) = self.try_parse_redirect()? {
                s.redirs.push(r);
                continue;
            }
            let procsub = matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(');
            if is_meta(c) && !procsub {
                if c == b'(' {
                    if s.words.len() == 1 && s.assigns.is_empty() && s.redirs.is_empty() {
                        return self.function_parens(&s.words);
                    }
                    return self.err("unexpected '('");
                }
                break;
            }
            let is_assign = self.assignment_prefix_len().is_some();
            if is_assign {
                let w = self.parse_assignment_word()?;
                if s.words.is_empty() {
                    s.assigns.push(w);
                } else {
                    s.words.push(w);
                }
            } else {
                let w = self.parse_word(WordMode::Normal)?;
                s.words.push(w);
            }
        }
        if s.words.is_empty() && s.assigns.is_empty() && s.redirs.is_empty() {
            return self.err_unexpected();
        }
        Ok(Command::Simple(s))
    }

    /// `name ( )` seen after a single word: a function definition.
    pub(super) fn function_parens(&mut self, words: &[Word]) -> Res<Command> {
        if words.iter().any(|w| w.dynamic) {
            return self.err("invalid function name");
        }
        self.empty_parens_then_body()
    }

    /// Length of `NAME=`, `NAME+=` or `NAME[…]=` at the current position.
    pub(super) fn assignment_prefix_len(&self) -> Option<usize> {
        let rest = self.b.get(self.pos..)?;
        if !is_name_start(*rest.first()?) {
            return None;
        }
        let mut i = rest.iter().take_while(|&&c| is_name_char(c)).count();
        if rest.get(i) == Some(&b'[') {
            let close = rest
                .get(i..)?
                .iter()
                .position(|&c| c == b']' || c == b' ' || c == b'\t' || c == b'\n')?;
            if rest.get(i + close) != Some(&b']') {
                return None;
            }
            i += close + 1;
        }
        if rest.get(i) == Some(&b'+') {
            i += 1;
        }
        (rest.get(i) == Some(&b'=')).then_some(i + 1)
    }

    /// `NAME=value`, or `NAME=( elements… )`.
    pub(super) fn parse_assignment_word(&mut self) -> Res<Word> {
        let start = self.pos;
        let prefix = self.assignment_prefix_len().unwrap_or(0);
        let mut w = self.parse_word(WordMode::Normal)?;
        if self.pos == start + prefix && self.peek() == Some(b'(') {
            self.pos += 1;
            self.enter()?;
            let r = self.array_elements(&mut w);
            self.leave();
            r?;
            w.text = self.slice(start, self.pos)?.to_string();
            w.plain = false;
        }
        Ok(w)
    }

    pub(super) fn array_elements(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        loop {
            self.linebreak()?;
            match self.peek() {
                Some(b')') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return self.err_at(open, "unterminated array assignment"),
                Some(c)
                    if is_meta(c)
                        && !(matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(')) =>
                {
                    return self.err_unexpected()
                }
                _ => {
                    let e = self.parse_word(WordMode::Normal)?;
                    w.dynamic |= e.dynamic;
                    w.subs.extend(e.subs);
                }
            }
        }
    }
}

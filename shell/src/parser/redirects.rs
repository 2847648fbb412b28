//! Redirections (`>`, `>>`, `<`, `<<`, `<<<`, `N>&M`, …).

use super::{is_fd_like, is_meta, Parser, Pending, WordMode};
use crate::ast::{Redir, RedirKind};
use crate::error::Res;
use crate::names::is_name_char;

/// Redirection operators, each before the ones it starts with; `&>` and `&>>` take no
/// file descriptor number.
const OPERATORS: [&str; 14] = [
    "&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", "<(", "<", ">>", ">|", ">&", ">(", ">",
];

impl Parser<'_, '_> {
    pub(super) fn try_parse_redirect(&mut self) -> Res<Option<Redir>> {
        let b = self.b;
        let mut op = self.pos;
        let mut has_fd = false;
        let mut stdin = true;
        let digits = b
            .get(self.pos..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 && matches!(b.get(self.pos + digits), Some(b'<' | b'>')) {
            op = self.pos + digits;
            has_fd = true;
            stdin = b
                .get(self.pos..op)
                .is_some_and(|d| d.iter().all(|&c| c == b'0'));
        } else if b.get(self.pos) == Some(&b'{') {
            let name = b
                .get(self.pos + 1..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&c| is_name_char(c))
                .count();
            if name > 0
                && b.get(self.pos + 1 + name) == Some(&b'}')
                && matches!(b.get(self.pos + 2 + name), Some(b'<' | b'>'))
            {
                op = self.pos + 2 + name;
                has_fd = true;
                stdin = false;
            }
        }
        let rest = b.get(op..).unwrap_or_default();
        let Some(text) = OPERATORS
            .iter()
            .find(|o| rest.starts_with(o.as_bytes()) && !(has_fd && o.starts_with('&')))
        else {
            return Ok(None);
        };
        let kind = match *text {
            // Process substitutions are words, not redirections.
            "<(" | ">(" => return Ok(None),
            "<<<" => RedirKind::HereString,
            "<<-" | "<<" => RedirKind::HereDoc,
            "<&" | ">&" => RedirKind::Dup,
            "<" => RedirKind::Read,
            _ => RedirKind::Write,
        };
        let (len, strip_tabs) = (text.len(), *text == "<<-");
        let is_out_dup = kind == RedirKind::Dup && rest.first() == Some(&b'>');
        self.pos = op + len;
        self.skip_blanks();
        match self.peek() {
            None => return self.err("missing redirection target"),
            Some(c)
                if is_meta(c) && !(matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(')) =>
            {
                return self.err("missing redirection target")
            }
            _ => {}
        }
        let target = self.parse_word(WordMode::Normal)?;
        let mut kind = kind;
        let mut heredoc = None;
        match kind {
            RedirKind::HereDoc => {
                let id = self.shared.bodies.len();
                self.shared.bodies.push(None);
                self.pending.push(Pending {
                    delim: target.text.clone(),
                    strip_tabs,
                    quoted: target.quoted,
                    id,
                });
                heredoc = Some(id);
            }
            RedirKind::Dup => {
                let fd_like = !target.dynamic && is_fd_like(&target.text);
                if !fd_like {
                    // `>&file` writes to file; `<&file` is at worst a read.
                    kind = if is_out_dup {
                        RedirKind::Write
                    } else {
                        RedirKind::Read
                    };
                }
            }
            _ => {}
        }
        Ok(Some(Redir {
            kind,
            target,
            heredoc,
            stdin,
        }))
    }
}

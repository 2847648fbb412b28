//! `test "…" { … }` blocks: requests, roles and expected verdicts.

use super::state::{is_word, Entries, Parser};
use crate::ast::*;
use crate::attempts::Production as R;

impl<'a, const TRACK: bool> Parser<'a, TRACK> {
    pub(super) fn test_block(&self, p: usize) -> Option<(Statement, usize)> {
        let (name, e) = self.string(self.skip(self.lit(p, "test")?))?;
        let mut q = self.skip(self.open(self.skip(e), b'{')?);
        let mut cases = Vec::new();
        while let Some((c, e)) = self.r(R::TestCase, q, || self.test_case(q)) {
            cases.push(c);
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        let t = TestBlock {
            name,
            cases,
            span: Span::new(p, end),
        };
        Some((Statement::Test(t), end))
    }

    /// The optional `("{" ~ (obligation ~ …)? ~ "}")?` after a plugin or commit request.
    pub(super) fn opt_fields(&self, e: usize) -> (Entries, usize) {
        let r = self.skip(e);
        self.group(|| self.obligations(r))
            .unwrap_or((Vec::new(), e))
    }

    pub(super) fn request(&self, p: usize) -> Option<(TestRequest, usize)> {
        let path = self.r(R::PathReq, p, || {
            let (op, e) = self.ident_s(self.skip(self.lit(p, "path")?))?;
            let (path, e) = self.string(self.skip(e))?;
            Some((TestRequest::Path { op, path }, e))
        });
        path.or_else(|| {
            self.r(R::ExecReq, p, || {
                let q = self.skip(self.lit(p, "exec")?);
                if let Some((l, e)) = self.list(q) {
                    return Some((TestRequest::ExecArgv(l), e));
                }
                let (s, e) = self.string(q)?;
                Some((TestRequest::ExecShell(s), e))
            })
        })
        .or_else(|| {
            self.r(R::PluginReq, p, || {
                let (name, e) = self.string(self.skip(self.lit(p, "plugin")?))?;
                let (fields, e) = self.opt_fields(e);
                Some((TestRequest::Plugin { name, fields }, e))
            })
        })
        .or_else(|| {
            self.r(R::NetReq, p, || {
                let (op, e) = self.ident_s(self.skip(self.lit(p, "net")?))?;
                let (target, e) = self.string(self.skip(e))?;
                let (fields, e) = self.opt_fields(e);
                Some((TestRequest::Net { op, target, fields }, e))
            })
        })
        .or_else(|| {
            self.r(R::McpReq, p, || {
                let (name, e) = self.string(self.skip(self.lit(p, "mcp")?))?;
                let (fields, e) = self.opt_fields(e);
                Some((TestRequest::Mcp { name, fields }, e))
            })
        })
        .or_else(|| {
            self.r(R::CommitReq, p, || {
                let (files, e) = self.list(self.skip(self.lit(p, "commit")?))?;
                let (fields, e) = self.opt_fields(e);
                Some((TestRequest::Commit { files, fields }, e))
            })
        })
    }

    pub(super) fn test_case(&self, p: usize) -> Option<(TestCase, usize)> {
        let (request, e) = self.r(R::Request, p, || self.request(p))?;
        let mut q = self.skip(e);
        let mut role = None;
        let as_role = self.r(R::AsRole, q, || {
            let r = self.skip(self.lit(q, "as")?);
            self.string(self.skip(self.lit(r, "role")?))
        });
        if let Some((s, e)) = as_role {
            role = Some(s);
            q = self.skip(e);
        }
        let mut tainted = None;
        if let Some(e) = self.r(R::Tainted, q, || self.lit(q, "tainted")) {
            tainted = Some(Span::new(q, e));
            q = self.skip(e);
        }
        let q = self.skip(self.lit(q, "=>")?);
        let ((expect, expect_rules), e) = self.r(R::Expectation, q, || self.expectation(q))?;
        let end = self.expect(self.skip(e), b';')?;
        Some((
            TestCase {
                request,
                role,
                tainted,
                expect,
                expect_rules,
                span: Span::new(p, end),
            },
            end,
        ))
    }

    /// `effect ~ ("(" ~ (rule_ref_item ~ ("," ~ rule_ref_item)*)? ~ ")")?`.
    #[allow(
        clippy::type_complexity,
        reason = "the two parts of one verdict, as the grammar rule gives them"
    )]
    pub(super) fn expectation(
        &self,
        q: usize,
    ) -> Option<((Spanned<Effect>, Vec<Spanned<String>>), usize)> {
        let (expect, e) = self.effect(q)?;
        let q = self.skip(e);
        let rules = self.group(|| {
            let r = self.skip(self.open(q, b'(')?);
            let (items, r) = self.comma_list(r, false, |r| self.rule_ref_item(r));
            Some((items, self.close(r, b')')?))
        });
        match rules {
            Some((items, end)) => Some(((expect, items), end)),
            None => Some(((expect, Vec::new()), q)),
        }
    }

    pub(super) fn rule_ref_item(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if let Some(s) = self.string(i) {
            return Some(s);
        }
        self.r(R::RuleRef, i, || {
            let mut j = i;
            loop {
                let c = self.at(j);
                if is_word(c)
                    || matches!(c, b'-' | b'.' | b':')
                    || (c == b'/' && self.at(j + 1) != b'/')
                {
                    j += 1;
                } else {
                    break;
                }
            }
            (j > i).then(|| (self.owned(i, j), j))
        })
    }
}

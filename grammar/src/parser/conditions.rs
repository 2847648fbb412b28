//! Conditions: `or`/`and`/`not`, comparisons, operands, calls and `script { … }`
//! bodies, with the nesting limit checked as pest's pairs were built.

use super::state::Parser;
use crate::ast::*;
use crate::attempts::Production as R;
use crate::diagnostic::Diagnostic;
use crate::lexical::MAX_NESTING;

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        "E0002",
        span,
        format!("condition nests deeper than {MAX_NESTING} levels"),
    )
    .with_label("too deep")
}

impl<'a, const TRACK: bool> Parser<'a, TRACK> {
    pub(super) fn or_op(&self, i: usize) -> Option<usize> {
        self.r(R::OrOp, i, || {
            (self.starts_word(i, "or") || self.starts(i, "||")).then_some(i + 2)
        })
    }

    pub(super) fn and_op(&self, i: usize) -> Option<usize> {
        self.r(R::AndOp, i, || {
            if self.starts_word(i, "and") {
                Some(i + 3)
            } else {
                self.lit(i, "&&")
            }
        })
    }

    pub(super) fn not_op(&self, i: usize) -> Option<usize> {
        self.r(R::NotOp, i, || {
            if self.starts_word(i, "not") {
                Some(i + 3)
            } else if self.at(i) == b'!' && self.at(i + 1) != b'=' {
                Some(i + 1)
            } else {
                None
            }
        })
    }

    pub(super) fn cmp_op(&self, i: usize) -> Option<(CmpOp, usize)> {
        self.r(R::CmpOp, i, || {
            let two = |op| Some((op, i + 2));
            match (self.at(i), self.at(i + 1)) {
                (b'=', b'=') => two(CmpOp::Eq),
                (b'!', b'=') => two(CmpOp::Ne),
                (b'<', b'=') => two(CmpOp::Le),
                (b'>', b'=') => two(CmpOp::Ge),
                (b'<', _) => Some((CmpOp::Lt, i + 1)),
                (b'>', _) => Some((CmpOp::Gt, i + 1)),
                _ => {
                    for (lit, op) in [
                        ("in", CmpOp::In),
                        ("matches", CmpOp::Matches),
                        ("contains", CmpOp::Contains),
                    ] {
                        if self.starts_word(i, lit) {
                            return Some((op, i + lit.len()));
                        }
                    }
                    None
                }
            }
        })
    }

    /// Parses a condition node at build depth `d` (as pest's pairs were built); beyond
    /// [`MAX_NESTING`] the node still parses but its statement fails with E0002.
    pub(super) fn nested(
        &self,
        p: usize,
        too_deep_here: bool,
        f: impl FnOnce() -> Option<(Expr, usize)>,
    ) -> Option<(Expr, usize)> {
        if !too_deep_here {
            return f();
        }
        let clean = self.clean.get();
        let (x, e) = f()?;
        if clean {
            // This node is built before anything inside it: its error comes first.
            self.clean.set(true);
            self.build_error(too_deep(self.sp(p, e)));
        }
        Some((x, e))
    }

    /// `expr` at build depth `d`.
    pub(super) fn expr(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        self.r(R::Expr, p, || {
            self.nested(p, d > MAX_NESTING, || {
                let (first, mut e) = self.and_expr(p, d + 1)?;
                let mut parts = vec![first];
                loop {
                    let r = self.skip(e);
                    let next = self
                        .or_op(r)
                        .and_then(|oe| self.and_expr(self.skip(oe), d + 1));
                    let Some((x, e2)) = next else {
                        if parts.len() == 1 {
                            return parts.pop().map(|x| (x, r));
                        }
                        return Some((Expr::Or(parts, self.sp(p, e)), e));
                    };
                    parts.push(x);
                    e = e2;
                }
            })
        })
    }

    pub(super) fn and_expr(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        self.r(R::AndExpr, p, || {
            self.nested(p, d > MAX_NESTING, || {
                let (first, mut e) = self.unary(p, d + 1)?;
                let mut parts = vec![first];
                loop {
                    let r = self.skip(e);
                    let next = self
                        .and_op(r)
                        .and_then(|ae| self.unary(self.skip(ae), d + 1));
                    let Some((x, e2)) = next else {
                        if parts.len() == 1 {
                            return parts.pop().map(|x| (x, r));
                        }
                        return Some((Expr::And(parts, self.sp(p, e)), e));
                    };
                    parts.push(x);
                    e = e2;
                }
            })
        })
    }

    pub(super) fn unary(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        self.r(R::Unary, p, || {
            let mut nots = Vec::new();
            let mut q = p;
            while let Some(ne) = self.not_op(q) {
                nots.push(q);
                q = self.skip(ne);
            }
            let deep = d > MAX_NESTING || nots.len() + d > MAX_NESTING;
            self.nested(p, deep, || {
                let (mut x, e) = self.atom(q, d + 1)?;
                // Too deep, the statement is dropped: building the chain could only
                // overflow the stack (when it is dropped) for a hostile input.
                if !deep {
                    let end = self.sp(p, e).end;
                    for start in nots.into_iter().rev() {
                        x = Expr::Not(Box::new(x), Span::new(start, end));
                    }
                }
                Some((x, e))
            })
        })
    }

    pub(super) fn atom(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        let deep = d > MAX_NESTING;
        let script = self.r(R::ScriptBlock, p, || {
            self.nested(p, deep, || self.script_block(p))
        });
        script
            .or_else(|| {
                self.r(R::Paren, p, || {
                    self.nested(p, deep, || {
                        let q = self.skip(self.open(p, b'(')?);
                        let (inner, e) = self.expr(q, d + 1)?;
                        let end = self.close(self.skip(e), b')')?;
                        Some((Expr::Paren(Box::new(inner), Span::new(p, end)), end))
                    })
                })
            })
            .or_else(|| {
                self.r(R::Comparison, p, || {
                    self.nested(p, deep, || self.comparison(p))
                })
            })
    }

    /// `"script" ~ WHITESPACE* ~ "{" ~ script_body ~ "}"`.
    pub(super) fn script_block(&self, p: usize) -> Option<(Expr, usize)> {
        let mut q = self.lit(p, "script")?;
        loop {
            match self.at(q) {
                b' ' | b'\t' | b'\r' | b'\n' => q += 1,
                0xEF if self.at(q + 1) == 0xBB && self.at(q + 2) == 0xBF => q += 3,
                _ => break,
            }
        }
        self.script(self.expect(q, b'{')?)
    }

    /// A Rhai body starting after its `{`; the expression ends after the closing `}`.
    pub(super) fn script(&self, start: usize) -> Option<(Expr, usize)> {
        let mut i = start;
        let mut level = 0usize;
        loop {
            match *self.b.get(i)? {
                b'}' => {
                    if level == 0 {
                        let body = self.owned(start, i);
                        return Some((Expr::Script(body), i + 1));
                    }
                    level -= 1;
                    i += 1;
                }
                b'{' => {
                    level += 1;
                    if level > MAX_NESTING {
                        // Not a grammar limit: a body this deep is hostile.
                        let d = Diagnostic::error(
                            "E0001",
                            Span::new(i, i + 1),
                            format!(
                                "syntax error: braces in a `script` body nest deeper than \
                                 {MAX_NESTING} levels"
                            ),
                        )
                        .with_label("too deep");
                        self.fatal.borrow_mut().get_or_insert(Box::new(d));
                        return None;
                    }
                    i += 1;
                }
                b'"' => {
                    i += 1;
                    loop {
                        match *self.b.get(i)? {
                            b'"' => break,
                            b'\n' => return None,
                            b'\\' => {
                                self.b.get(i + 1)?;
                                i += 2;
                            }
                            _ => i += 1,
                        }
                    }
                    i += 1;
                }
                b'\'' => {
                    i += 1;
                    loop {
                        match *self.b.get(i)? {
                            b'\'' => break,
                            b'\\' => {
                                self.b.get(i + 1)?;
                                i += 2;
                            }
                            _ => i += 1,
                        }
                    }
                    i += 1;
                }
                b'`' => {
                    let n = self.b.get(i + 1..)?.iter().position(|&c| c == b'`')?;
                    i += n + 2;
                }
                b'/' if self.at(i + 1) == b'/' => {
                    i = match self
                        .b
                        .get(i..)
                        .and_then(|r| r.iter().position(|&c| c == b'\n'))
                    {
                        Some(n) => i + n,
                        None => return None,
                    };
                }
                _ => i += 1,
            }
        }
    }

    pub(super) fn comparison(&self, p: usize) -> Option<(Expr, usize)> {
        let (lhs, e) = self.operand(p)?;
        let q = self.skip(e);
        let rhs = self.group(|| {
            let (op, oe) = self.cmp_op(q)?;
            Some((op, oe, self.operand(self.skip(oe))?))
        });
        let Some((op, oe, (rhs, re))) = rhs else {
            return Some((Expr::Truthy(lhs), q));
        };
        Some((
            Expr::Compare {
                lhs,
                op: Spanned::new(op, Span::new(q, oe)),
                rhs,
                span: self.sp(p, re),
            },
            re,
        ))
    }

    pub(super) fn operand(&self, p: usize) -> Option<(Operand, usize)> {
        if let Some((s, e)) = self.string(p) {
            return Some((Operand::Str(s), e));
        }
        if let Some((n, e)) = self.int(p) {
            return Some((Operand::Int(Spanned::new(n, Span::new(p, e))), e));
        }
        if let Some((b, e)) = self.boolean(p) {
            return Some((Operand::Bool(Spanned::new(b, Span::new(p, e))), e));
        }
        if let Some((l, e)) = self.list(p) {
            return Some((Operand::List(l), e));
        }
        if let Some((v, e)) = self.var(p) {
            return Some((Operand::Var(v), e));
        }
        // `call` is tried before `access`; the non-tracking instance keeps the access it parsed.
        let mut plain = None;
        let call = self.r(R::Call, p, || {
            let (target, access_end) = self.access(p)?;
            let q = self.skip(access_end);
            let Some(open) = self.open(q, b'(') else {
                if !TRACK {
                    plain = Some((target, access_end));
                }
                return None;
            };
            let (args, r) = self.comma_list(self.skip(open), false, |r| self.operand(r));
            let end = self.close(r, b')')?;
            Some((
                Operand::Call {
                    target,
                    args,
                    span: Span::new(p, end),
                },
                end,
            ))
        });
        if call.is_some() {
            return call;
        }
        let (target, end) = match plain {
            Some(done) => done,
            None => self.access(p)?,
        };
        Some((Operand::Attr(target), end))
    }

    /// `access = { ident ~ ("." ~ ident)* }`: the names and the pair end.
    pub(super) fn access(&self, p: usize) -> Option<(Spanned<Vec<String>>, usize)> {
        self.r(R::Access, p, || {
            let e1 = self.ident(p)?;
            let mut names = vec![self.text(p, e1).to_string()];
            let mut e = e1;
            let end = loop {
                let r = self.skip(e);
                let next = self.expect(r, b'.').and_then(|r2| {
                    let r2 = self.skip(r2);
                    self.ident(r2).map(|e2| (r2, e2))
                });
                let Some((r2, e2)) = next else {
                    break if names.len() == 1 { r } else { e };
                };
                names.push(self.text(r2, e2).to_string());
                e = e2;
            };
            Some((Spanned::new(names, self.sp(p, end)), end))
        })
    }
}

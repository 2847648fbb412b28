//! The file, its statements, rules with their clauses, guides, detectors and roles.

use super::state::{Parsed, Parser};
use crate::ast::*;
use crate::attempts::Production as R;
use crate::diagnostic::Diagnostic;

impl<'a, const TRACK: bool> Parser<'a, TRACK> {
    pub(super) fn file(&self) -> Option<Parsed> {
        // Most statements end in `;`: sized by their count, the list is not copied into
        // a twice-as-large one at every doubling (a statement is 192 bytes, a project of
        // a thousand rules some 200 KB of copies and their fresh pages). Places left over
        // (`;` inside strings and test blocks) are never written, so never touched.
        let semicolons = self.b.get(self.start..).unwrap_or_default();
        let room = self
            .room
            .unwrap_or_else(|| semicolons.iter().filter(|b| **b == b';').count());
        let mut out = Parsed {
            statements: Vec::with_capacity(room),
            ..Parsed::default()
        };
        let mut p = self.skip(self.start);
        while let Some((stmt, e)) = self.statement(p) {
            self.keep(&mut out, stmt);
            p = self.skip(e);
        }
        self.end_of_input(p)?;
        Some(out)
    }

    pub(super) fn single_stmt(&self) -> Option<Parsed> {
        let mut out = Parsed::default();
        let (stmt, e) = self.statement(self.skip(self.start))?;
        self.end_of_input(self.skip(e))?;
        self.keep(&mut out, stmt);
        Some(out)
    }

    pub(super) fn end_of_input(&self, p: usize) -> Option<()> {
        self.r(R::Eoi, p, || self.eof(p).then_some(()))
    }

    pub(super) fn statement(&self, p: usize) -> Option<(Statement, usize)> {
        self.r(R::LanguageDecl, p, || self.language_decl(p))
            .or_else(|| self.r(R::DefaultDecl, p, || self.default_decl(p)))
            .or_else(|| self.r(R::LetDecl, p, || self.let_decl(p)))
            .or_else(|| self.r(R::RoleBlock, p, || self.role(p)))
            .or_else(|| self.r(R::TestBlock, p, || self.test_block(p)))
            .or_else(|| self.r(R::Annotated, p, || self.annotated(p)))
    }

    pub(super) fn language_decl(&self, p: usize) -> Option<(Statement, usize)> {
        let (n, e) = self.int(self.skip(self.lit(p, "language")?))?;
        let end = self.expect(self.skip(e), b';')?;
        let span = Span::new(p, end);
        let n = u32::try_from(n).unwrap_or_else(|_| {
            self.build_error(Diagnostic::error(
                "E0005",
                span,
                "language version out of range",
            ));
            0
        });
        Some((Statement::Language(Spanned::new(n, span)), end))
    }

    pub(super) fn default_decl(&self, p: usize) -> Option<(Statement, usize)> {
        let (domain, e) = self.ident_s(self.skip(self.lit(p, "default")?))?;
        let q = self.expect(self.skip(e), b'=')?;
        let (effect, e) = self.effect(self.skip(q))?;
        let end = self.expect(self.skip(e), b';')?;
        let d = DefaultDecl {
            domain,
            effect,
            span: Span::new(p, end),
        };
        Some((Statement::Default(d), end))
    }

    pub(super) fn let_decl(&self, p: usize) -> Option<(Statement, usize)> {
        let overrides = self.starts_word(p, "override");
        let q = if overrides {
            self.skip(p + "override".len())
        } else {
            p
        };
        let (name, e) = self.ident_s(self.skip(self.lit(q, "let")?))?;
        let q = self.skip(self.expect(self.skip(e), b'=')?);
        let (value, scalar, e) = if let Some((l, e)) = self.list(q) {
            (l, false, e)
        } else {
            let (s, e) = self.string(q)?;
            let span = s.span;
            (Spanned::new(vec![ListItem::Str(s)], span), true, e)
        };
        let end = self.expect(self.skip(e), b';')?;
        let l = LetDecl {
            overrides,
            name,
            value,
            scalar,
            span: Span::new(p, end),
        };
        Some((Statement::Let(l), end))
    }

    pub(super) fn role(&self, p: usize) -> Option<(Statement, usize)> {
        let q = self.skip(self.lit(p, "role")?);
        let ne = self.name(q)?;
        let name = self.owned(q, ne);
        let mut q = self.skip(self.open(self.skip(ne), b'{')?);
        let mut block = RoleBlock {
            name,
            rules: Vec::new(),
            guides: Vec::new(),
            order: Vec::new(),
            span: Span::default(),
        };
        while let Some((item, e)) = self.r(R::Annotated, q, || self.annotated(q)) {
            if let Some(other) = block.push(item) {
                self.build_error(misplaced_in_role(&other));
            }
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        block.span = Span::new(p, end);
        Some((Statement::Role(block), end))
    }

    pub(super) fn annotated(&self, mut p: usize) -> Option<(Statement, usize)> {
        let mut annotations = Vec::new();
        while let Some((a, e)) = self.annotation(p) {
            push_few(&mut annotations, a);
            p = self.skip(e);
        }
        if let Some((r, end)) = self.r(R::Rule, p, || self.rule(p, &mut annotations)) {
            return Some((Statement::Rule(r), end));
        }
        if let Some((g, end)) = self.r(R::Guide, p, || self.guide(p, &mut annotations)) {
            return Some((Statement::Guide(g), end));
        }
        let (d, end) = self.r(R::Detector, p, || self.detector(p, &mut annotations))?;
        Some((Statement::Detector(d), end))
    }

    /// `"detector" ~ ident ~ patterns ~ detector_body? ~ because_clause? ~ ";"` at `p`.
    pub(super) fn detector(
        &self,
        p: usize,
        annotations: &mut Vec<Annotation>,
    ) -> Option<(Detector, usize)> {
        let (kind, e) = self.ident_s(self.skip(self.lit(p, "detector")?))?;
        let (patterns, e) = self.patterns(self.skip(e))?;
        let mut q = self.skip(e);
        let mut fields = Vec::new();
        if let Some((entries, e)) = self.r(R::DetectorBody, q, || self.obligations(q)) {
            fields = entries;
            q = self.skip(e);
        }
        let mut because = None;
        if let Some((s, e)) = self.because_clause(q) {
            because = Some(s);
            q = self.skip(e);
        }
        let end = self.expect(q, b';')?;
        let start = annotations.first().map_or(p, |a| a.span.start);
        Some((
            Detector {
                annotations: std::mem::take(annotations),
                kind,
                patterns,
                fields,
                because,
                span: Span::new(start, end),
            },
            end,
        ))
    }

    pub(super) fn annotation(&self, p: usize) -> Option<(Annotation, usize)> {
        self.r(R::Annotation, p, || {
            let (name, e) = self.ident_s(self.skip(self.expect(p, b'@')?))?;
            let q = self.skip(self.open(self.skip(e), b'(')?);
            let (value, bare, e) = if let Some((s, e)) = self.string(q) {
                (s, false, e)
            } else {
                let (s, e) = self.ident_s(q)?;
                (s, true, e)
            };
            let end = self.close(self.skip(e), b')')?;
            Some((
                Annotation {
                    name,
                    value,
                    bare,
                    span: Span::new(p, end),
                },
                end,
            ))
        })
    }

    /// `ident ~ ("," ~ ident)*` at `i`: the operations and the pair end.
    pub(super) fn ops(&self, i: usize) -> Option<(Vec<Spanned<String>>, usize)> {
        self.r(R::Ops, i, || {
            let e1 = self.ident(i)?;
            let mut ops = vec![self.owned(i, e1)];
            let mut e = e1;
            loop {
                let r = self.skip(e);
                let next = self.expect(r, b',').and_then(|r2| {
                    let r2 = self.skip(r2);
                    self.ident(r2).map(|e2| (r2, e2))
                });
                let Some((r2, e2)) = next else {
                    let end = if ops.len() == 1 { r } else { e };
                    return Some((ops, end));
                };
                ops.push(self.owned(r2, e2));
                e = e2;
            }
        })
    }

    pub(super) fn rule(
        &self,
        p: usize,
        annotations: &mut Vec<Annotation>,
    ) -> Option<(Rule, usize)> {
        let (effect, e) = self.effect(p)?;
        let (domain, de) = self.ident_s(self.skip(e))?;
        let mut head_end = domain.span.end;
        let mut q = self.skip(de);
        let mut ops = Vec::new();
        if let Some((o, end)) = self.ops(q) {
            ops = o;
            head_end = self.sp(q, end).end;
            q = self.skip(end);
        }
        let mut patterns = Vec::new();
        if let Some((ps, end)) = self.patterns(q) {
            patterns = ps;
            head_end = self.sp(q, end).end;
            q = self.skip(end);
        }
        let mut clauses = Vec::new();
        while let Some((clause, e)) = self.clause(q) {
            push_few(&mut clauses, clause);
            q = self.skip(e);
        }
        let end = self.expect(q, b';')?;
        let start = annotations
            .first()
            .map_or(effect.span.start, |a| a.span.start);
        let head_span = Span::new(effect.span.start, head_end);
        Some((
            Rule {
                annotations: std::mem::take(annotations),
                effect,
                domain,
                ops,
                patterns,
                clauses,
                span: Span::new(start, end),
                head_span,
            },
            end,
        ))
    }

    pub(super) fn clause(&self, q: usize) -> Option<(Clause, usize)> {
        let when = self.r(R::WhenClause, q, || {
            let (x, e) = self.expr(self.skip(self.lit(q, "when")?), 0)?;
            Some((Clause::When(x), e))
        });
        when.or_else(|| {
            self.r(R::UnlessClause, q, || {
                let (x, e) = self.expr(self.skip(self.lit(q, "unless")?), 0)?;
                Some((Clause::Unless(x), e))
            })
        })
        .or_else(|| {
            self.r(R::WithClause, q, || {
                let (name, e) = self.ident_s(self.skip(self.lit(q, "with")?))?;
                // An obligation without keys may leave its braces out (`with host`): the
                // block is optional, as in the grammar, so a block that does not parse
                // leaves the clause ending at the name.
                let depth = self.depth.get();
                let (entries, end) = self.obligations(self.skip(e)).unwrap_or_else(|| {
                    self.depth.set(depth);
                    (Vec::new(), e)
                });
                let o = Obligation {
                    name,
                    entries,
                    span: Span::new(q, end),
                };
                Some((Clause::With(o), end))
            })
        })
        .or_else(|| self.because_clause(q).map(|(s, e)| (Clause::Because(s), e)))
    }

    pub(super) fn because_clause(&self, q: usize) -> Option<(Spanned<String>, usize)> {
        self.r(R::BecauseClause, q, || {
            self.string(self.skip(self.lit(q, "because")?))
        })
    }

    pub(super) fn guide(
        &self,
        p: usize,
        annotations: &mut Vec<Annotation>,
    ) -> Option<(Guide, usize)> {
        let (title, e) = self.string(self.skip(self.lit(p, "guide")?))?;
        let mut q = self.skip(e);
        let mut scope = Vec::new();
        let guide_for = self.r(R::GuideFor, q, || {
            self.pattern_list(self.skip(self.lit(q, "for")?))
        });
        if let Some((ps, end)) = guide_for {
            scope = ps;
            q = self.skip(end);
        }
        q = self.skip(self.open(q, b'{')?);
        let mut body = Vec::new();
        while let Some((s, e)) = self.string(q) {
            body.push(s);
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        Some((
            Guide {
                annotations: std::mem::take(annotations),
                title,
                scope,
                body,
                span: Span::new(p, end),
            },
            end,
        ))
    }
}

/// The error for a statement other than a rule or guide inside a `role` block.
fn misplaced_in_role(other: &Statement) -> Diagnostic {
    if let Statement::Detector(d) = other {
        return Diagnostic::error(
            "E0121",
            Span::new(d.span.start, d.kind.span.end),
            "a detector may not appear inside a role",
        )
        .with_label("inside `role`")
        .with_help(
            "detectors apply to every commit, whoever makes it: \
             declare it outside the `role` block",
        );
    }
    Diagnostic::error(
        "E0001",
        other.span(),
        "only rules and guides may appear inside a role",
    )
}

/// Pushes onto a list that usually stays short (a rule's annotations, its clauses): the
/// first push reserves two places, where `Vec` would reserve four. A project's every rule
/// holds these lists, and a cold compile of a thousand rules then touches some 600 KB of
/// heap fewer.
fn push_few<T>(list: &mut Vec<T>, item: T) {
    if list.capacity() == 0 {
        list.reserve_exact(2);
    }
    list.push(item);
}

//! `let` expansion: a `$var` becomes the list it names, through other `let`s, and a
//! definition in terms of itself is reported once. Inside `override let x = …`, `$x`
//! names the definition it overrides, so a list can be extended without restating it.

use super::context::Ctx;
use contextos_grammar::ast::{ListItem, Span, Spanned};
use contextos_grammar::{did_you_mean, Diagnostic};

impl Ctx<'_> {
    /// Expands a list with `$var` references, detecting cycles.
    pub(super) fn expand(
        &mut self,
        file: usize,
        items: &[ListItem],
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut ok = true;
        for item in items {
            match item {
                ListItem::Str(s) => out.push(s.node.clone()),
                ListItem::Var(v) => match self.var(file, v, stack) {
                    Some((vals, _)) => out.extend(vals),
                    None => ok = false,
                },
            }
        }
        ok.then_some(out)
    }

    pub(super) fn var(
        &mut self,
        file: usize,
        v: &Spanned<String>,
        stack: &mut Vec<String>,
    ) -> Option<(Vec<String>, bool)> {
        if stack.last() == Some(&v.node) {
            if let Some(prev) = self.previous(&v.node) {
                let (items, scalar, def_file) = (prev.items, prev.scalar, prev.file);
                // The earlier layer's definition cannot name this one: it was complete
                // before the override existed.
                stack.push(format!("{}#overridden", v.node));
                let out = self.expand(def_file, &items, stack);
                stack.pop();
                return out.map(|o| (o, scalar));
            }
        }
        if stack.contains(&v.node) {
            let fresh = !self.cycles_reported.contains(&v.node);
            self.cycles_reported.extend(stack.iter().cloned());
            if !fresh {
                return None;
            }
            self.err(
                file,
                Diagnostic::error(
                    "E0118",
                    v.span,
                    format!("`${}` is defined in terms of itself", v.node),
                )
                .with_label("cycle"),
            );
            return None;
        }
        self.decode_let(&v.node);
        let Some(def) = self.lets.get(&v.node) else {
            let names = self.let_names();
            let mut d =
                Diagnostic::error("E0105", v.span, format!("undefined variable `${}`", v.node))
                    .with_label("not defined by any `let`");
            if let Some(s) = did_you_mean(&v.node, names.iter().map(String::as_str)) {
                d = d.with_help(format!("did you mean `${s}`?"));
            }
            self.err(file, d);
            return None;
        };
        let (items, scalar, def_file) = (def.items.clone(), def.scalar, def.file);
        stack.push(v.node.clone());
        let out = self.expand(def_file, &items, stack);
        stack.pop();
        out.map(|o| (o, scalar))
    }
}

impl Ctx<'_> {
    /// The definition an `override let NAME` replaced.
    fn previous(&self, name: &str) -> Option<super::context::LetDef> {
        self.overrides
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.old.clone())
    }
}

/// Resolves every `let` declared in file `first` or later, used or not, so a broken
/// definition is reported where it is. The `let`s of earlier files were resolved when
/// those were compiled (a [precompiled](super::precompiled) stdlib): they can name only
/// each other, and no later file can change them without `override let`, which a
/// precompiled build does not take.
pub(super) fn check_all(ctx: &mut Ctx, first: usize) {
    let let_names: Vec<(String, usize, Span)> = {
        let mut v: Vec<_> = ctx
            .lets
            .iter()
            .filter(|(_, d)| d.file >= first)
            .map(|(k, d)| (k.clone(), d.file, d.span))
            .collect();
        v.sort_by_key(|a| (a.1, a.2.start));
        v
    };
    for (name, file, span) in let_names {
        ctx.var(file, &Spanned::new(name, span), &mut Vec::new());
    }
}

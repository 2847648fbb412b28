//! Located diagnostics with stable codes, rendered rustc-style:
//!
//! ```text
//! error[E0001]: expected `;`
//!   --> policies/main.policy:3:19
//!    |
//!  3 | deny path write "x"
//!    |                   ^ expected `;`
//! ```

use crate::ast::Span;
use serde::Serialize;

/// How serious a diagnostic is; ordered so that `Error` sorts above `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Codes `W…`: compilation goes on; `contextos check --strict` treats it as an error.
    Warning,
    /// Codes `E…`: nothing is decided from a policy set with an error (fail closed).
    Error,
}

/// One finding about a source file. `code` is stable across releases (documented in the book).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable code such as `E0001` or `W0201`, listed in the book's diagnostics chapter.
    pub code: &'static str,
    /// Whether the finding rejects the file or only warns.
    pub severity: Severity,
    /// One-line headline printed after `error[CODE]:`.
    pub message: String,
    /// Primary location, underlined with `^` in the rendered snippet.
    pub span: Span,
    /// Short text printed beside the carets (empty for none).
    pub label: String,
    /// Secondary locations with their labels, such as the first of two duplicate definitions.
    pub notes: Vec<(Span, String)>,
    /// A suggested fix, printed as a trailing `= help:` line.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `span` with no label, notes or help yet (add them with the `with_*` builders).
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        let message = message.into();
        Diagnostic {
            code,
            severity: Severity::Error,
            label: String::new(),
            message,
            span,
            notes: Vec::new(),
            help: None,
        }
    }
    /// Like [`Diagnostic::error`], with severity [`Severity::Warning`].
    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, span, message)
        }
    }
    /// Sets the text shown beside the primary carets.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }
    /// Sets the suggested fix (replacing any earlier one).
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    /// Adds a secondary location, rendered after the primary one in the order added.
    pub fn with_note(mut self, span: Span, note: impl Into<String>) -> Self {
        self.notes.push((span, note.into()));
        self
    }
    /// True when the diagnostic rejects the file.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A named source text with a line index, so locations are computed by binary search.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// How the file is named in locations, usually its path relative to the project root.
    pub name: String,
    /// The full source text that spans index into; borrowed when it is the binary's own.
    pub text: std::borrow::Cow<'static, str>,
    /// Built on the first location asked for: a compile that reports nothing about a file
    /// (a precompiled stdlib's 330 KB) never scans it for line breaks.
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

/// 1-based line and column (column counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineCol {
    /// Line number, counted from 1.
    pub line: usize,
    /// Column, counted from 1 in characters (not bytes), as editors show it.
    pub col: usize,
}

impl SourceFile {
    /// A source whose line starts are indexed once, on the first location asked for, so
    /// every lookup is a binary search.
    pub fn new(name: impl Into<String>, text: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            line_starts: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(self.text.match_indices('\n').map(|(i, _)| i + 1));
            starts
        })
    }

    /// Line and column of a byte offset; offsets past the end are clamped to the end of the text.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts().binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts().get(line).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(0);
        LineCol {
            line: line + 1,
            col: col + 1,
        }
    }

    /// `name:line:col` of a byte offset.
    pub fn location(&self, offset: usize) -> String {
        let lc = self.line_col(offset);
        format!("{}:{}:{}", self.name, lc.line, lc.col)
    }

    fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts().get(line - 1).copied().unwrap_or(0);
        let end = self
            .line_starts()
            .get(line)
            .map(|e| e.saturating_sub(1))
            .unwrap_or(self.text.len());
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches('\r')
    }

    /// Renders a diagnostic with a caret snippet.
    pub fn render(&self, d: &Diagnostic) -> String {
        let mut out = String::new();
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!("{kind}[{}]: {}\n", d.code, d.message));
        self.render_snippet(&mut out, d.span, &d.label, "-->");
        for (span, note) in &d.notes {
            self.render_snippet(&mut out, *span, note, ":::");
        }
        if let Some(help) = &d.help {
            out.push_str(&format!("   = help: {help}\n"));
        }
        out
    }

    fn render_snippet(&self, out: &mut String, span: Span, label: &str, arrow: &str) {
        let start = self.line_col(span.start);
        out.push_str(&format!(
            "  {arrow} {}:{}:{}\n",
            self.name, start.line, start.col
        ));
        let line: Vec<char> = self.line_text(start.line).chars().collect();
        let gutter = start.line.to_string().len();
        let pad = " ".repeat(gutter);
        let end = self.line_col(span.end.max(span.start));
        let width = if end.line == start.line {
            end.col.saturating_sub(start.col).max(1)
        } else {
            line.len().saturating_sub(start.col - 1).max(1)
        };
        // Long lines (minified or hostile input) are shown as a window around the caret.
        let first = (start.col - 1).saturating_sub(SNIPPET_CONTEXT);
        let last = (start.col - 1 + width.min(SNIPPET_CONTEXT))
            .saturating_add(SNIPPET_CONTEXT)
            .min(line.len());
        let shown: String = line.get(first..last).unwrap_or(&[]).iter().collect();
        let lead = if first > 0 { "…" } else { "" };
        let tail = if last < line.len() { "…" } else { "" };
        out.push_str(&format!(" {pad} |\n"));
        out.push_str(&format!(
            " {} | {lead}{}{tail}\n",
            start.line,
            shown.replace('\t', " ")
        ));
        out.push_str(&format!(
            " {pad} | {}{}{} {}\n",
            " ".repeat(lead.chars().count()),
            " ".repeat(start.col - 1 - first),
            "^".repeat(width.min(SNIPPET_CONTEXT)),
            label
        ));
    }
}

/// Characters of a source line shown on each side of a diagnostic's caret.
const SNIPPET_CONTEXT: usize = 60;

/// Suggests the closest candidate when a name is misspelled ("did you mean").
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < name.len().max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let best = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
            cur[j + 1] = best;
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_counts_chars() {
        let f = SourceFile::new("a.policy", "ab\nçd\n");
        assert_eq!(f.line_col(0), LineCol { line: 1, col: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, col: 1 });
        assert_eq!(f.line_col(5), LineCol { line: 2, col: 2 });
    }

    #[test]
    fn render_points_at_the_span() {
        let f = SourceFile::new("a.policy", "deny path write \"x\"\n");
        let d = Diagnostic::error("E0001", Span::new(16, 19), "bad").with_label("here");
        let r = f.render(&d);
        assert!(r.contains("--> a.policy:1:17"), "{r}");
        assert!(r.contains("                ^^^ here"), "{r}");
    }

    #[test]
    fn long_lines_are_windowed_around_the_caret() {
        let text = format!("{}X{}", "a".repeat(10_000), "b".repeat(10_000));
        let f = SourceFile::new("a.policy", text);
        let r = f.render(
            &Diagnostic::error("E0002", Span::new(10_000, 10_001), "bad").with_label("here"),
        );
        assert!(r.len() < 400, "{r}");
        let lines: Vec<&str> = r.lines().collect();
        let code = lines
            .iter()
            .find(|l| l.contains('X'))
            .copied()
            .unwrap_or("");
        let caret = lines
            .iter()
            .find(|l| l.contains('^'))
            .copied()
            .unwrap_or("");
        assert_eq!(
            code.chars().position(|c| c == 'X'),
            caret.chars().position(|c| c == '^')
        );
    }

    #[test]
    fn suggestions_need_to_be_close() {
        assert_eq!(did_you_mean("pth", ["path", "exec"]), Some("path"));
        assert_eq!(did_you_mean("zzzz", ["path", "exec"]), None);
    }
}

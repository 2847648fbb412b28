//! Markdown written from policy text: escaped inline text, code spans and author-written
//! bodies that can never fake or close a managed block.

/// Inline text (a title, a `because`): one line, with the characters that would start
/// emphasis, links, code, HTML (and so a comment or a managed-block marker) or a table cell
/// escaped.
pub(crate) fn md_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        for c in word.chars() {
            if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|') {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// A code span holding `s` verbatim (control characters become spaces). Text that could
/// read as an HTML comment delimiter is escaped inline instead, since a code span cannot
/// escape it and a stray marker would confuse the managed-block merge.
pub(crate) fn md_code(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.trim().is_empty() {
        return "(empty)".into();
    }
    if s.contains("<!--") || s.contains("-->") {
        return md_inline(&s);
    }
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = s.starts_with('`') || s.ends_with('`') || (s.starts_with(' ') && s.ends_with(' '));
    if pad {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

/// `` `a`, `b` `` — globs (or any patterns) as code spans, in the form a model reads
/// ([`readable_glob`]).
pub(crate) fn glob_list(globs: &[String]) -> String {
    globs
        .iter()
        .map(|g| readable_glob(g))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A pattern as a reader takes it in: the policies spell case-insensitive names letter by
/// letter (`core.[hH][oO][oO][kK][sS][pP][aA][tT][hH]`), which tells a model nothing; such
/// a pattern is shown in lower case with "(any case)" after it. Other patterns are shown
/// as written.
pub(crate) fn readable_glob(g: &str) -> String {
    let chars: Vec<char> = g.chars().collect();
    let mut out = String::with_capacity(g.len());
    let mut folded = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if let Some(&['[', a, b, ']']) = chars.get(i..i + 4) {
            if a.is_ascii_alphabetic() && a != b && a.eq_ignore_ascii_case(&b) {
                out.push(a.to_ascii_lowercase());
                folded = true;
                i += 4;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    if folded {
        format!("{} (any case)", md_code(&out))
    } else {
        md_code(g)
    }
}

/// A Markdown body written by a policy author (a guide's text), kept as written except:
/// LF line ends, no trailing whitespace, no leading or trailing blank lines, and `<!--`
/// neutralised (an HTML comment could otherwise close or fake a managed block). Ends with
/// a newline unless empty.
pub(crate) fn md_block(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let start = lines.iter().position(|l| !l.is_empty());
    let end = lines.iter().rposition(|l| !l.is_empty());
    let (Some(start), Some(end)) = (start, end) else {
        return String::new();
    };
    let mut out = String::new();
    for l in &lines[start..=end] {
        out.push_str(&l.replace("<!--", "&lt;!--"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escaping() {
        assert_eq!(
            md_inline("a *b*\n  _c_ <!-- x -->"),
            "a \\*b\\* \\_c\\_ \\<!-- x --\\>"
        );
        assert_eq!(md_code("git push *"), "`git push *`");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`a"), "`` `a ``");
        assert_eq!(
            md_code("<!-- contextos:end -->"),
            "\\<!-- contextos:end --\\>"
        );
        assert_eq!(
            md_block("\n\n  x  \r\n<!-- contextos:end -->\n\n"),
            "  x\n&lt;!-- contextos:end -->\n"
        );
        assert_eq!(md_block(" \n "), "");
        assert_eq!(glob_list(&["a/**".into(), "*.rs".into()]), "`a/**`, `*.rs`");
        assert_eq!(
            glob_list(&["git -c [cC][oO][rR][eE].[hH]ooks *".into()]),
            "`git -c core.hooks *` (any case)"
        );
        // Classes that are not one letter in both cases stay as written.
        assert_eq!(readable_glob("[ab]x[aA"), "`[ab]x[aA`");
        assert_eq!(readable_glob("é[eE]"), "`ée` (any case)");
    }
}

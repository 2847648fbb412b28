//! YAML front matter, written by hand: the values are one-line strings, booleans and
//! string lists, and the quoting rules below are the whole of what they need.

/// A front-matter value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fm<'a> {
    /// A string, written plain when YAML reads it back unchanged, double-quoted otherwise.
    Str(&'a str),
    /// A string, always double-quoted.
    Quoted(&'a str),
    /// Written exactly as given (Cursor's comma-separated `globs`, which its parser wants
    /// unquoted); control characters become spaces.
    Raw(&'a str),
    Bool(bool),
    /// A block list of double-quoted strings.
    List(&'a [String]),
}

/// `---` … `---` with one `key: value` line per field, in the order given.
pub(crate) fn frontmatter(fields: &[(&str, Fm<'_>)]) -> String {
    let mut out = String::from("---\n");
    for (key, value) in fields {
        match value {
            Fm::Str(s) => out.push_str(&format!("{key}: {}\n", yaml_scalar(s))),
            Fm::Quoted(s) => out.push_str(&format!("{key}: {}\n", yaml_quote(s))),
            Fm::Raw(s) => {
                let s: String = s
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                out.push_str(&format!("{key}: {s}\n"));
            }
            Fm::Bool(b) => out.push_str(&format!("{key}: {b}\n")),
            Fm::List(items) => {
                out.push_str(&format!("{key}:\n"));
                for i in *items {
                    out.push_str(&format!("  - {}\n", yaml_quote(i)));
                }
            }
        }
    }
    out.push_str("---\n");
    out
}

/// A YAML double-quoted string.
pub(crate) fn yaml_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || c == '\u{feff}' => {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One line of text as a YAML scalar: plain when that is unambiguous, quoted otherwise.
pub(crate) fn yaml_scalar(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = s.chars().next();
    let plain = match first {
        None => false,
        Some(c) => {
            !"-?:,[]{}#&*!|>'\"%@`".contains(c)
                && !c.is_ascii_digit()
                && !matches!(c, '.' | '+')
                && !s.contains(": ")
                && !s.contains(" #")
                && !s.ends_with(':')
                && !s.chars().any(|c| c.is_control() || c == '\u{feff}')
                && !matches!(
                    s.to_ascii_lowercase().as_str(),
                    "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "y" | "n"
                )
        }
    };
    if plain {
        s
    } else {
        yaml_quote(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_writers() {
        assert_eq!(yaml_scalar("Service layering"), "Service layering");
        assert_eq!(yaml_scalar("Note: this"), "\"Note: this\"");
        assert_eq!(yaml_scalar("*star"), "\"*star\"");
        assert_eq!(yaml_scalar("yes"), "\"yes\"");
        assert_eq!(yaml_scalar("1.0 rules"), "\"1.0 rules\"");
        assert_eq!(yaml_quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        let list = ["a/**".to_string(), "b \"c\"".to_string()];
        assert_eq!(
            frontmatter(&[
                ("description", Fm::Str("T")),
                ("globs", Fm::Raw("a/**,b/**")),
                ("alwaysApply", Fm::Bool(false)),
                ("paths", Fm::List(&list)),
                ("applyTo", Fm::Quoted("x")),
            ]),
            "---\ndescription: T\nglobs: a/**,b/**\nalwaysApply: false\npaths:\n  - \"a/**\"\n  - \"b \\\"c\\\"\"\napplyTo: \"x\"\n---\n"
        );
    }
}

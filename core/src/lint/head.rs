//! W0301: head patterns that never match (or match less than they seem to). Paths reach
//! rules canonical — `/`-separated, relative to the project or anchored at `/` or `~/`,
//! with no `.`/`..`/empty segments and no trailing `/` — and patterns are globs, not regexes.

use super::Finding;
use crate::request::Domain;

/// The W0301 finding for `pattern` in a rule of `domain`, if any.
pub fn check(domain: Domain, pattern: &str) -> Option<Finding> {
    let dead = |why: &str, fix: String| {
        Some(Finding::new(
            "W0301",
            format!("head pattern {pattern:?} {why}"),
            fix,
        ))
    };
    if pattern.is_empty() {
        return dead(
            "is empty and matches nothing",
            "remove it, or write `**` to match everything".into(),
        );
    }
    if domain != Domain::Path {
        return None;
    }
    if looks_like_regex(pattern) {
        return dead(
            "looks like a regular expression; patterns are globs",
            format!(
                "write a glob: `*` is any run within a segment, `**` any number of segments{}",
                regex_hint(pattern)
                    .map(|h| format!(" (did you mean {h:?}?)"))
                    .unwrap_or_default()
            ),
        );
    }
    if let Some(rest) = pattern.strip_prefix("./") {
        return dead(
            "starts with `./`, which canonical paths never do",
            format!("write {rest:?}"),
        );
    }
    if has_backslash_separator(pattern) {
        return dead(
            "uses `\\` as a separator; paths use `/` (a `\\` escapes the next character)",
            format!("write {:?}", pattern.replace('\\', "/")),
        );
    }
    let body = pattern
        .strip_prefix("~/")
        .or_else(|| pattern.strip_prefix('/'))
        .unwrap_or(pattern);
    if body.split('/').any(|s| s == "..") {
        return dead(
            "has a `..` segment, which canonical paths never have",
            "paths outside the project are written from `/` or `~/` (`~/.ssh/**`)".into(),
        );
    }
    if body.split('/').any(|s| s == ".") {
        return dead(
            "has a `.` segment, which canonical paths never have",
            format!("write {:?}", fold_dots(pattern)),
        );
    }
    if pattern.ends_with('/') && pattern != "/" && pattern != "~/" {
        return dead(
            "ends with `/`, which canonical paths never do",
            format!("write {:?} for everything below it", format!("{pattern}**")),
        );
    }
    if body.contains("//") {
        return dead(
            "has an empty segment (`//`), which canonical paths never have",
            format!("write {:?}", pattern.replace("//", "/")),
        );
    }
    None
}

/// Anchors and `.+` only: `.env.*` and `/.*` are ordinary globs.
fn looks_like_regex(p: &str) -> bool {
    p.starts_with('^') || (p.ends_with('$') && !p.ends_with("\\$")) || p.contains(".+")
}

/// `^secrets/.*$` → `secrets/**`.
fn regex_hint(p: &str) -> Option<String> {
    let core = p.trim_start_matches('^').trim_end_matches('$');
    let g = core
        .replace("\\.", ".")
        .replace(".*", "**")
        .replace(".+", "*");
    (g != p).then_some(g)
}

/// A `\` followed by a character that is not glob syntax: meant as a separator.
fn has_backslash_separator(p: &str) -> bool {
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n) if "*?[]{}\\!,-^".contains(n) => {}
                _ => return true,
            }
        }
    }
    false
}

fn fold_dots(p: &str) -> String {
    p.split('/')
        .filter(|s| *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(p: &str) -> Option<&'static str> {
        check(Domain::Path, p).map(|f| f.code)
    }

    #[test]
    fn dead_spellings_are_found_and_live_ones_are_not() {
        for dead in [
            "./src/**",
            "../**",
            "src/../x",
            "src\\main.rs",
            "^secrets/.*$",
            "",
            "a//b",
            "src/",
            "a/./b",
        ] {
            assert_eq!(code(dead), Some("W0301"), "{dead:?}");
        }
        for live in [
            "src/**",
            "**/*.pem",
            "/etc/**",
            "~/.ssh/**",
            "a\\*b",
            "*.rs",
            "**",
            "/tmp/**",
            "$HOME",
            "**/.env.*",
            "~/.*",
        ] {
            assert_eq!(code(live), None, "{live:?}");
        }
        assert!(check(Domain::Path, "^secrets/.*$").is_some_and(|f| f.help.contains("secrets/**")));
        assert!(check(Domain::Path, "./src/**").is_some_and(|f| f.help.contains("\"src/**\"")));
        // Exec words are not paths: `./configure` is a real argv[0].
        assert_eq!(check(Domain::Exec, "./configure *"), None);
        assert_eq!(check(Domain::Exec, "").map(|f| f.code), Some("W0301"));
    }
}

//! Policy globs in the shapes agents' files want: brace-expanded, comma-joined.

use std::collections::BTreeSet;

/// Most alternatives a brace pattern is expanded into; beyond it the pattern is kept as
/// written (Claude Code's own budget is 1,000 expanded patterns per file).
const MAX_EXPANSION: usize = 256;

/// Expands `{a,b}` alternatives (nested too) into separate globs, in written order and
/// without duplicates. `\{` and braces inside `[…]` are literal. A pattern that would
/// expand into more than [`MAX_EXPANSION`] globs is returned unchanged.
pub(crate) fn expand_braces(pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut budget = MAX_EXPANSION;
    if !expand_into(pattern, &mut out, &mut budget) {
        return vec![pattern.to_string()];
    }
    let mut seen = BTreeSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

fn expand_into(p: &str, out: &mut Vec<String>, budget: &mut usize) -> bool {
    match first_group(p) {
        None => {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            out.push(p.to_string());
            true
        }
        Some((open, close, commas)) => {
            let (prefix, suffix) = (&p[..open], &p[close + 1..]);
            let mut start = open + 1;
            for end in commas.into_iter().chain([close]) {
                let alt = format!("{prefix}{}{suffix}", &p[start..end]);
                if !expand_into(&alt, out, budget) {
                    return false;
                }
                start = end + 1;
            }
            true
        }
    }
}

/// Byte offsets of the first top-level `{`, its matching `}` and the commas between them
/// at depth one. All the bytes looked at are ASCII, so the offsets are char boundaries.
fn first_group(p: &str) -> Option<(usize, usize, Vec<usize>)> {
    let b = p.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    let mut open = 0;
    let mut commas = Vec::new();
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'!' || b[j] == b'^') {
                    j += 1;
                }
                if j < b.len() && b[j] == b']' {
                    j += 1;
                }
                while j < b.len() && b[j] != b']' {
                    j += 1;
                }
                if j < b.len() {
                    i = j;
                }
            }
            b'{' => {
                if depth == 0 {
                    open = i;
                    commas.clear();
                }
                depth += 1;
            }
            b',' if depth == 1 => commas.push(i),
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, i, commas));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Globs brace-expanded and comma-joined (`a/**,b/**`), for formats whose glob field is one
/// comma-separated string (Cursor `globs`, Copilot `applyTo`).
pub(crate) fn comma_globs(globs: &[String]) -> String {
    let mut seen = BTreeSet::new();
    let mut out: Vec<String> = Vec::new();
    for g in globs {
        for e in expand_braces(g) {
            if seen.insert(e.clone()) {
                out.push(e);
            }
        }
    }
    out.join(",")
}

/// True when a path pattern is nothing but wildcards and separators (`**`, `*`, `**/*`):
/// it names every file.
pub(crate) fn is_match_all_path(p: &str) -> bool {
    p.chars().all(|c| c == '*' || c == '/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand() {
        assert_eq!(expand_braces("src/**"), vec!["src/**"]);
        assert_eq!(
            expand_braces("src/**/*.{ts,tsx}"),
            vec!["src/**/*.ts", "src/**/*.tsx"]
        );
        assert_eq!(
            expand_braces("{a,b}/{c,d}"),
            vec!["a/c", "a/d", "b/c", "b/d"]
        );
        assert_eq!(expand_braces("x{a,{b,c}}y"), vec!["xay", "xby", "xcy"]);
        assert_eq!(expand_braces("{a,a}"), vec!["a"]);
        assert_eq!(expand_braces("{,.min}.js"), vec![".js", ".min.js"]);
        assert_eq!(expand_braces("\\{a,b\\}"), vec!["\\{a,b\\}"]);
        assert_eq!(expand_braces("[{]a,b}"), vec!["[{]a,b}"]);
        assert_eq!(expand_braces("{a,b"), vec!["{a,b"]);
        let huge = "{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}";
        assert_eq!(expand_braces(huge), vec![huge]);
        assert_eq!(
            comma_globs(&["src/{a,b}/**".into(), "src/a/**".into(), "c".into()]),
            "src/a/**,src/b/**,c"
        );
    }
}

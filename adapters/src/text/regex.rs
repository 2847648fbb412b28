//! Regular expressions for the agents whose native rules match a command line or a path
//! by regex (Amazon Q Developer's `deniedCommands`, Amp's `/…/` matchers): literal text
//! escaped, and policy path globs translated.

/// Characters with a meaning in both JavaScript and Rust regular expressions; escaping
/// them with `\` is valid in both dialects.
const META: &[char] = &[
    '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$',
];

/// `text` with every regex metacharacter escaped, and the characters in `also` too (Amp
/// delimits its regexes with `/`).
pub(crate) fn escape(text: &str, also: &[char]) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if META.contains(&c) || also.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The body (unanchored) of a regex matching a command line made of exactly `words`,
/// separated by single spaces, and with `rest` any further arguments (or none).
pub(crate) fn exec_words(words: &[&str], rest: bool, also: &[char]) -> String {
    let body = words
        .iter()
        .map(|w| escape(w, also))
        .collect::<Vec<_>>()
        .join(" ");
    if rest {
        format!("{body}( .*)?")
    } else {
        body
    }
}

/// A regex over an absolute path for a policy path glob: `**/` is any directories, `**`
/// anything, `*` anything but `/`, `?` one character but `/`. A pattern relative to the
/// project root may match below any directory (the root is not known when compiling),
/// which only ever matches more paths. `None` for a character class (`[…]`), whose syntax
/// differs between glob and regex dialects, and for a `\` escape.
pub(crate) fn path_glob(glob: &str, also: &[char]) -> Option<String> {
    if glob.contains(['[', ']', '\\']) {
        return None;
    }
    let slash = escape("/", also);
    let (mut out, rest) = if let Some(r) = glob.strip_prefix('/') {
        (format!("^{slash}"), r)
    } else if let Some(r) = glob.strip_prefix("~/") {
        // The home directory is not known when compiling: any directory ending the same.
        (format!("(^|{slash})"), r)
    } else {
        (format!("(^|{slash})"), glob)
    };
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                    out.push_str(&format!("(.*{slash})?"));
                } else {
                    out.push_str(".*");
                }
            }
            '*' => out.push_str(&format!("[^{slash}]*")),
            '?' => out.push_str(&format!("[^{slash}]")),
            c => out.push_str(&escape(&c.to_string(), also)),
        }
    }
    out.push('$');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_escaped() {
        assert_eq!(escape("a.b*(c)", &[]), r"a\.b\*\(c\)");
        assert_eq!(escape("/tmp/x", &['/']), r"\/tmp\/x");
        assert_eq!(
            exec_words(&["git", "push", "--force"], true, &[]),
            "git push --force( .*)?"
        );
        assert_eq!(exec_words(&["rm", "-rf"], false, &[]), "rm -rf");
    }

    #[test]
    fn path_globs_become_regexes() {
        assert_eq!(path_glob("**/.env", &[]).unwrap(), r"(^|/)(.*/)?\.env$");
        assert_eq!(path_glob("secrets/**", &[]).unwrap(), "(^|/)secrets/.*$");
        assert_eq!(
            path_glob("migrations/*.sql", &[]).unwrap(),
            r"(^|/)migrations/[^/]*\.sql$"
        );
        assert_eq!(path_glob("/etc/?asswd", &[]).unwrap(), "^/etc/[^/]asswd$");
        assert_eq!(path_glob("~/.ssh/**", &[]).unwrap(), r"(^|/)\.ssh/.*$");
        assert!(path_glob("src/[ab].rs", &[]).is_none());
        assert_eq!(
            path_glob("/srv/**/k?y", &['/']).unwrap(),
            r"^\/srv\/(.*\/)?k[^\/]y$"
        );
    }
}

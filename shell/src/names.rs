//! How the shell reads a name: program basenames and variable assignments, shared by
//! the parser, the wrapper table and the file models.

/// The last `/`-separated component of a program path: policies name programs, not
/// where they are installed (`/usr/bin/rm` is `rm`).
pub fn basename(program: &str) -> &str {
    // Asked of argv[0] in every exec decision: a byte scan, not a split iterator.
    match program.bytes().rposition(|b| b == b'/') {
        Some(slash) => program.get(slash + 1..).unwrap_or_default(),
        None => program,
    }
}

/// A byte that may start a shell variable name.
pub(crate) fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// A byte that may continue a shell variable name.
pub(crate) fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `NAME=value`: a variable assignment (a shell prefix, or an operand of `sudo`, `env`
/// and `awk` that is not a file or a command).
pub(crate) fn is_assignment(s: &str) -> bool {
    s.split_once('=').is_some_and(|(name, _)| {
        let b = name.as_bytes();
        b.first().is_some_and(|&c| is_name_start(c)) && b.iter().all(|&c| is_name_char(c))
    })
}

/// `a/./b/../c/` → `a/c` by the words alone, keeping a leading `/` or `~` and the `..`s
/// that climb above a relative start (`..` above `/` is `/`); `""` for a relative path
/// that folds to nothing. The walker follows `cd` with it, the policy core resolves file
/// targets with it.
pub fn normalise_path(p: &str) -> String {
    let (prefix, rest) = if let Some(r) = p.strip_prefix('/') {
        ("/", r)
    } else if p == "~" {
        ("~", "")
    } else if let Some(r) = p.strip_prefix("~/") {
        ("~/", r)
    } else {
        ("", p)
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                // Above `/` is `/`; above the line's directory is kept.
                _ if prefix == "/" => {}
                _ => parts.push(".."),
            },
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match prefix {
        "~" => "~".into(),
        "~/" if joined.is_empty() => "~".into(),
        _ => format!("{prefix}{joined}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_need_a_variable_name() {
        assert!(is_assignment("A=1"));
        assert!(is_assignment("_a1="));
        assert!(!is_assignment("=1"));
        assert!(!is_assignment("1A=1"));
        assert!(!is_assignment("a-b=1"));
        assert!(!is_assignment("ab"));
    }

    #[test]
    fn basename_strips_the_directory() {
        assert_eq!(basename("/usr/bin/rm"), "rm");
        assert_eq!(basename("rm"), "rm");
        assert_eq!(basename("dir/"), "");
    }
}

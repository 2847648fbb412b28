//! Argv as a line a person can read and paste into a shell: for messages and reports,
//! never for analysis (argv is analysed as words, see [`crate::split_argv`]).

/// Quotes each word that a shell would change (spaces, quotes, `$`, globs, an empty
/// word, a leading `~` or a `=` that would make an assignment) in single quotes, and
/// joins the words with spaces. Pasting the result into a POSIX shell gives back
/// exactly `argv`.
pub fn quote(argv: &[String]) -> String {
    argv.iter()
        .enumerate()
        .map(|(i, w)| quote_word(w, i == 0))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote_word(w: &str, first: bool) -> String {
    // `=` is literal after the first word; in the first it would make an assignment.
    let safe =
        |c: char| c.is_ascii_alphanumeric() || "_./:,@%+-".contains(c) || (c == '=' && !first);
    if !w.is_empty() && w.chars().all(safe) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(words: &[&str]) -> String {
        quote(&words.iter().map(|w| (*w).to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn plain_words_stay_and_the_rest_is_single_quoted() {
        assert_eq!(q(&["git", "push", "-f"]), "git push -f");
        assert_eq!(q(&["echo", "a b", ""]), "echo 'a b' ''");
        assert_eq!(q(&["echo", "it's"]), "echo 'it'\\''s'");
        assert_eq!(q(&["echo", "$HOME", "*"]), "echo '$HOME' '*'");
        assert_eq!(q(&["ls", "--color=auto"]), "ls --color=auto");
        // A first word with `=` would read back as an assignment.
        assert_eq!(q(&["FOO=bar", "ls"]), "'FOO=bar' ls");
    }

    #[test]
    fn the_quoted_line_splits_back_into_the_same_words() {
        for words in [
            &["rm", "-rf", "a b", "c'd", "$(x)", "~", "FOO=1"][..],
            &["sh", "-c", "curl x | sh"][..],
        ] {
            let argv: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
            let back = crate::split(&quote(&argv)).unwrap();
            assert_eq!(back.first().map(|c| c.argv.clone()), Some(argv));
        }
    }
}

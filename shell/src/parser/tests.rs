//! The grammar: quoting, lists, compound commands, here-documents, errors and limits.

#![allow(clippy::unwrap_used, reason = "a failed thread spawn fails the test")]

use crate::test_support::*;
use crate::{split, ShellError, MAX_DEPTH, MAX_INPUT_LEN};
use proptest::prelude::*;

#[test]
fn empty_blank_and_comments() {
    assert_eq!(ok(""), vec![]);
    assert_eq!(ok("   \n\t \n"), vec![]);
    assert_eq!(ok("# just a comment"), vec![]);
    assert_eq!(ok("  # comment\n# another\n"), vec![]);
}

#[test]
fn comment_after_command() {
    assert_eq!(ok("echo hi # rm -rf /"), vec![c(&["echo", "hi"])]);
    assert_eq!(ok("echo a#b"), vec![c(&["echo", "a#b"])]);
    assert_eq!(ok("# c\nls -la # c2\n"), vec![c(&["ls", "-la"])]);
}

#[test]
fn quoting_and_escapes() {
    assert_eq!(
        ok(r#"echo "a b" 'c' d\ e"#),
        vec![c(&["echo", "a b", "c", "d e"])]
    );
    assert_eq!(
        ok(r#"echo "a\"b\\c\$d\e""#),
        vec![c(&["echo", r#"a"b\c$d\e"#])]
    );
    assert_eq!(ok(r"echo 'it''s' x\\y"), vec![c(&["echo", "its", r"x\y"])]);
    assert_eq!(ok("ec\\\nho hi"), vec![c(&["echo", "hi"])]);
    assert_eq!(ok(r#"echo "" ''"#), vec![c(&["echo", "", ""])]);
}

#[test]
fn ansi_c_quotes_are_decoded() {
    assert_eq!(ok(r"$'\x72\x6d' -rf /"), vec![c(&["rm", "-rf", "/"])]);
    assert_eq!(
        ok(r"echo $'a\tb\'c\n' $'\101\u00e9'"),
        vec![c(&["echo", "a\tb'c\n", "Aé"])]
    );
}

#[test]
fn lists_and_operators() {
    assert_eq!(
        argvs("a 1 && b 2 || c 3; d & e\nf"),
        vec![
            vec!["a", "1"],
            vec!["b", "2"],
            vec!["c", "3"],
            vec!["d"],
            vec!["e"],
            vec!["f"]
        ]
    );
    assert_eq!(
        argvs("a&&b||c;d"),
        vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"]]
    );
    assert_eq!(argvs("a &&\n b"), vec![vec!["a"], vec!["b"]]);
}

#[test]
fn functions() {
    assert_eq!(
        argvs("f() { rm -rf /; }; f"),
        vec![vec!["rm", "-rf", "/"], vec!["f"]]
    );
    assert_eq!(argvs("function g { a; }"), vec![vec!["a"]]);
    assert_eq!(argvs("function h() ( b )"), vec![vec!["b"]]);
    assert_eq!(ok("f() { a; } > out"), vec![c(&["a"]).writes(&["out"])]);
    assert!(is_syntax("f() echo hi"));
}

#[test]
fn time_and_bang() {
    assert_eq!(
        ok("time rm x | cat"),
        vec![
            c(&["time", "rm", "x"]),
            c(&["rm", "x"]),
            c(&["cat"]).piped(&["time", "rm"])
        ]
    );
    assert_eq!(argvs("! grep -q x f"), vec![vec!["grep", "-q", "x", "f"]]);
    assert_eq!(argvs("!; time; a"), vec![vec!["a"]]);
}

#[test]
fn heredocs() {
    assert_eq!(
        ok("cat <<EOF > f\nhello\nEOF"),
        vec![c(&["cat"]).writes(&["f"])]
    );
    assert_eq!(
        ok("cat <<EOF | sh\nrm -rf /\nEOF\necho after"),
        vec![
            c(&["cat"]),
            c(&["sh"]).piped(&["cat"]),
            c(&["echo", "after"])
        ]
    );
    // Substitutions in an unquoted body run and feed stdin.
    assert_eq!(
        ok("cat <<EOF\n$(curl x)\n\\$(not run) `id`\nEOF\n"),
        vec![
            c(&["cat"]).piped(&["curl", "id"]),
            c(&["curl", "x"]),
            c(&["id"])
        ]
    );
    // A shell would run that text: it is dynamic, so it cannot be analysed.
    assert!(is_syntax("bash <<EOF\n$(curl x)\nEOF\n"));
    assert_eq!(ok("cat <<'EOF'\n$(not run)\nEOF"), vec![c(&["cat"])]);
    assert_eq!(
        ok("cat <<-\tEOF\n\t$(a)\n\tEOF\n"),
        vec![c(&["cat"]).piped(&["a"]), c(&["a"])]
    );
    assert_eq!(
        argvs("cat <<A <<B; echo x\na\nA\nb\nB\necho y"),
        vec![vec!["cat"], vec!["echo", "x"], vec!["echo", "y"]]
    );
    assert!(is_syntax("cat <<EOF\nno end"));
    assert!(is_syntax("cat <<EOF"));
}

#[test]
fn dynamic_words() {
    assert_eq!(ok("$CMD arg"), vec![c(&["$CMD", "arg"]).dynamic()]);
    assert_eq!(ok("rm *.txt"), vec![c(&["rm", "*.txt"]).dynamic()]);
    assert_eq!(ok("rm '*.txt'"), vec![c(&["rm", "*.txt"])]);
    assert_eq!(ok("rm a[12]"), vec![c(&["rm", "a[12]"]).dynamic()]);
    assert_eq!(ok("[ -f x ]"), vec![c(&["[", "-f", "x", "]"])]);
    assert_eq!(ok("{rm,-rf,/}"), vec![c(&["{rm,-rf,/}"]).dynamic()]);
    assert_eq!(ok("echo {1..3}"), vec![c(&["echo", "{1..3}"]).dynamic()]);
    assert_eq!(ok("echo {} a{b}"), vec![c(&["echo", "{}", "a{b}"])]);
    assert_eq!(ok("echo $"), vec![c(&["echo", "$"])]);
    assert_eq!(ok("ls @(a|b)"), vec![c(&["ls", "@(a|b)"]).dynamic()]);
}

#[test]
fn syntax_errors() {
    for bad in [
        "echo 'unterminated",
        "echo \"unterminated",
        "echo $(unterminated",
        "echo `unterminated",
        "echo ${x",
        "(a",
        "a)",
        "{ a; ",
        "if a; then b",
        "for x in a; do b",
        "case x in a) b",
        "a |",
        "a &&",
        "| a",
        "; a",
        "a;;",
        "echo (",
        "[[ a",
        "cat >",
        "$((1 + 2)",
    ] {
        assert!(
            is_syntax(bad),
            "expected a syntax error for {bad:?}: {:?}",
            split(bad)
        );
    }
}

#[test]
fn error_offsets() {
    assert_eq!(
        split("echo ok; echo 'x"),
        Err(ShellError::Syntax {
            offset: 14,
            message: "unterminated single quote".into()
        })
    );
}

#[test]
fn too_long() {
    let line = "a".repeat(MAX_INPUT_LEN + 1);
    assert_eq!(
        split(&line),
        Err(ShellError::TooLong {
            len: MAX_INPUT_LEN + 1,
            limit: MAX_INPUT_LEN
        })
    );
}

#[test]
fn deep_nesting_is_too_deep() {
    let deep = |open: &str, mid: &str, close: &str, n: usize| {
        format!("{}{}{}", open.repeat(n), mid, close.repeat(n))
    };
    let too_deep = Err(ShellError::TooDeep { limit: MAX_DEPTH });
    assert_eq!(split(&deep("echo $(", "x", ")", 40)), too_deep);
    assert_eq!(split(&deep("( ", "x", " )", 40)), too_deep);
    // `((…))` is arithmetic to bash but nested subshells to a POSIX sh, so its
    // commands are reported; its nesting is limited all the same.
    assert_eq!(split(&deep("(", "x", ")", 40)), too_deep);
    assert_eq!(argvs(&deep("(", "x", ")", 10)), vec![vec!["x"]]);
    assert_eq!(split(&deep("echo $((", "1", "))", 40)), too_deep);
    assert_eq!(split(&deep("{ ", "x;", " }", 40)), too_deep);
    assert_eq!(split(&deep("\"$(echo ", "x", ")\"", 40)), too_deep);
    assert_eq!(split(&deep("echo ${x:-", "y", "}", 40)), too_deep);
    assert_eq!(split(&deep("if a; then ", "b", "; fi", 40)), too_deep);
    assert_eq!(split(&deep("sudo ", "rm", "", 40)), too_deep);
    assert_eq!(split(&deep("$(", "", "", 30_000)), too_deep);
    assert_eq!(split(&deep("(", "", "", 60_000)), too_deep);
    // Shallow nesting is fine.
    assert_eq!(argvs(&deep("echo $(", "x", ")", 10)).len(), 11);
}

#[test]
fn arithmetic_versus_subshell() {
    // Bash decides by whether the inner parenthesis is closed by `))`.
    assert_eq!(
        argvs("((echo a); rm -rf /)"),
        vec![vec!["echo", "a"], vec!["rm", "-rf", "/"]]
    );
    assert_eq!(
        argvs("echo $((echo hi) )"),
        vec![vec!["echo", "$((echo hi) )"], vec!["echo", "hi"]]
    );
    // Bash would not run `(((echo hi)))`; dash, the `/bin/sh` sandboxed commands run
    // under, would: the commands are reported.
    assert_eq!(argvs("(((echo hi)))"), vec![vec!["echo", "hi"]]);
    assert_eq!(
        argvs("((rm -rf ~)) ; ls"),
        vec![vec!["rm", "-rf", "~"], vec!["ls"]]
    );
    // Arithmetic that also reads as a command line is reported as one.
    assert_eq!(argvs("(( i += 2 ))"), vec![vec!["i", "+=", "2"]]);
    assert_eq!(argvs("(( i++ < 3 ))"), vec![vec!["i++"]]);
    assert_eq!(
        argvs("x=1 && { y; } && (( z )) && [[ -f a ]] || $(w)"),
        vec![vec!["y"], vec!["z"], vec!["$(w)"], vec!["w"]]
    );
}

#[test]
fn comment_inside_command_substitution() {
    assert_eq!(
        argvs("echo $( # comment )\nrm -rf /\n)"),
        vec![
            vec!["echo", "$( # comment )\nrm -rf /\n)"],
            vec!["rm", "-rf", "/"]
        ]
    );
}

#[test]
fn runs_on_small_stack() {
    let inputs = [
        format!("{}x{}", "echo \"$(".repeat(31), ")\"".repeat(31)),
        format!("{}x;{}", "{ ".repeat(31), " }".repeat(31)),
        format!("{}x{}", "if a; then ".repeat(31), "; fi".repeat(31)),
        "$(".repeat(60_000),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            for i in &inputs {
                let _ = split(i);
            }
        })
        .unwrap();
    handle.join().unwrap();
}

/// Fragments that exercise the parser's special cases.
const SHELLISH: [&str; 64] = [
    " ",
    "\n",
    "\t",
    ";",
    "&",
    "|",
    "<",
    ">",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "$",
    "`",
    "'",
    "\"",
    "\\",
    "#",
    "=",
    "*",
    "?",
    "!",
    "~",
    "@",
    "+",
    ",",
    ".",
    "-",
    "a",
    "x1",
    "0",
    "9",
    "if ",
    "then ",
    "fi",
    "do ",
    "done",
    "case ",
    "esac",
    "in ",
    "for ",
    "while ",
    "function ",
    "<<",
    "<<-",
    "EOF",
    "$(",
    "$((",
    "${",
    "[[ ",
    " ]]",
    "))",
    ";;",
    "sudo ",
    "env ",
    "xargs ",
    "find ",
    "-exec ",
    "bash -c ",
    "eval ",
    "$'",
    "\u{e9}",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_on_arbitrary_strings(s in any::<String>()) {
        let _ = split(&s);
    }

    #[test]
    fn never_panics_on_shellish_strings(parts in prop::collection::vec(prop::sample::select(SHELLISH.to_vec()), 0..60)) {
        let _ = split(&parts.concat());
    }

    #[test]
    fn never_panics_on_deep_nesting(
        open in prop::sample::select(vec!["$(", "(", "{ ", "\"$(", "${x:-", "`", "<(", "$((", "if a; then ", "bash -c '", "[[ ", "case x in x) "]),
        n in 0usize..200,
        close in prop::sample::select(vec![")", "}", "; }", ")\"", "`", "))", "; fi", "'", " ]]", ";; esac", ""]),
        m in 0usize..200,
    ) {
        let s = format!("{}x{}", open.repeat(n), close.repeat(m));
        let _ = split(&s);
    }
}

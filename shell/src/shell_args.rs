//! Shell invocations (`bash -euxc 'cmd'`, `sh -s`, `bash <<EOF`): whether a shell runs a
//! command string or reads its script from standard input, both of which the splitter
//! parses like the line itself.

use crate::names::basename;

/// Programs taken for a POSIX-like shell.
pub(crate) const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"];

/// Options of a shell invocation.
pub(crate) struct ShellArgs {
    /// `-c`: the first operand is a command string.
    pub(crate) c_seen: bool,
    /// `-s`: the script is read from standard input.
    pub(crate) s_seen: bool,
    /// Index of the first operand (command string, script file, …).
    pub(crate) operand: usize,
}

/// Reads the options of shell invocation `argv`; `dyns[i]` marks `argv[i]` dynamic.
///
/// Shells do not use getopt, so [`crate::options`] cannot read them: `+x` clusters
/// are options too, a lone `-` ends them, and every `o`/`O` in a cluster takes the
/// next argument whatever follows it in the cluster.
pub(crate) fn parse_shell_args(argv: &[String], dyns: &[bool]) -> ShellArgs {
    let mut sh = ShellArgs {
        c_seen: false,
        s_seen: false,
        operand: 1,
    };
    while let Some(a) = argv.get(sh.operand) {
        if dyns.get(sh.operand).copied().unwrap_or(true) {
            break;
        }
        if a == "--" || a == "-" {
            sh.operand += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            sh.operand += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            let mut step = 1;
            for ch in a.chars().skip(1) {
                match ch {
                    'c' => sh.c_seen = true,
                    's' => sh.s_seen = true,
                    'o' | 'O' => step += 1,
                    _ => {}
                }
            }
            sh.operand += step;
            continue;
        }
        break;
    }
    sh
}

/// A shell invocation that reads its script from standard input.
pub(crate) fn shell_reads_stdin(argv: &[String], dyns: &[bool]) -> bool {
    let (Some(a0), Some(false)) = (argv.first(), dyns.first().copied()) else {
        return false;
    };
    if !SHELLS.contains(&basename(a0)) {
        return false;
    }
    let sh = parse_shell_args(argv, dyns);
    !sh.c_seen && (sh.s_seen || sh.operand >= argv.len())
}

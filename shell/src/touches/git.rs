//! Git subcommands that change working-tree files or a config file.

use super::effects::Out;
use crate::file_op::FileOp;
use crate::options::{options, parse, NONE};

/// Git pathspecs: magic (`:(top)`, `:!x`) and globs are expanded by git itself.
fn pathspecs<'a>(op: FileOp, paths: impl IntoIterator<Item = &'a str>, out: &mut Out) {
    for p in paths {
        if p.starts_with(':') || p.contains(['*', '?', '[']) {
            out.unknown();
        }
        out.add(op, p);
    }
}

/// Git subcommands that change working-tree files. Returns whether the subcommand can.
pub(super) fn git(args: &[String], out: &mut Out) -> bool {
    let mut i = 0;
    let mut tree = false; // --git-dir / --work-tree: paths may not be relative to cwd
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "-C" => {
                args.get(i).iter().for_each(|d| out.chdir(d));
                i += 1;
            }
            "--git-dir" | "--work-tree" => {
                tree = true;
                i += 1;
            }
            "-c" | "--namespace" | "--super-prefix" | "--config-env" | "--attr-source" => i += 1,
            s if s.starts_with("--git-dir=") || s.starts_with("--work-tree=") => tree = true,
            s if s.starts_with('-') => {}
            _ => {
                i -= 1;
                break;
            }
        }
    }
    let Some((sub, rest)) = args.get(i..).and_then(<[String]>::split_first) else {
        return false;
    };
    let before = out.fx.effects.len();
    let from_file = options("", "pathspec-from-file", "");
    match sub.as_str() {
        "rm" => {
            let p = parse(rest, &from_file);
            if p.has_long("pathspec-from-file") {
                out.unknown();
            }
            pathspecs(FileOp::Delete, p.operands(), out);
        }
        "mv" => {
            let p = parse(rest, &NONE);
            if let [srcs @ .., dst] = p.operands.as_slice() {
                if !srcs.is_empty() {
                    pathspecs(FileOp::Delete, srcs.iter().copied(), out);
                    pathspecs(FileOp::Write, [*dst], out);
                }
            }
        }
        "checkout" | "restore" => {
            let spec = options("bBs", "conflict orphan pathspec-from-file source", "");
            let p = parse(rest, &spec);
            if p.has_long("pathspec-from-file") {
                out.unknown();
            }
            // `git checkout TREE -- PATHS`: only what follows `--` are paths. Without
            // `--`, a branch name is reported too (harmless).
            let skip = if sub == "checkout" {
                p.dashdash.unwrap_or(0)
            } else {
                0
            };
            pathspecs(FileOp::Write, p.operands().skip(skip), out);
        }
        "apply" => {
            let spec = options(
                "",
                "build-fake-ancestor directory exclude include whitespace",
                "apply check numstat stat summary",
            );
            let p = parse(rest, &spec);
            out.writes(p.values('\0', "build-fake-ancestor"));
            let report = ["check", "numstat", "stat", "summary"]
                .iter()
                .any(|l| p.has_long(l));
            if !report || p.has_long("apply") {
                out.unknown(); // the files are named in the patch
            }
        }
        "clean" => {
            let p = parse(rest, &options("e", "exclude", ""));
            if !p.has('n', "dry-run") {
                if p.operands.is_empty() {
                    out.unknown(); // every untracked file
                }
                pathspecs(FileOp::Delete, p.operands(), out);
            }
        }
        "config" => git_config(rest, out),
        _ => return false,
    }
    if tree && out.fx.effects.len() > before {
        out.unknown();
    }
    true
}

/// `git config --file F` writes F unless the invocation only reads.
fn git_config(args: &[String], out: &mut Out) {
    const READS: [&str; 7] = [
        "get",
        "get-all",
        "get-regexp",
        "get-urlmatch",
        "get-color",
        "get-colorbool",
        "list",
    ];
    const CHANGES: [&str; 7] = [
        "add",
        "edit",
        "remove-section",
        "rename-section",
        "replace-all",
        "unset",
        "unset-all",
    ];
    let spec = options(
        "f",
        "file blob comment default type value",
        "fixed-value get get-all list unset unset-all",
    );
    let p = parse(args, &spec);
    let first = p.operands.first().copied();
    let reads = p.has_short('l')
        || READS.iter().any(|l| p.has_long(l))
        || matches!(first, Some("get" | "list"))
        // `git config KEY` (legacy syntax) prints KEY.
        || (p.operands.len() == 1
            && !p.has_short('e')
            && !CHANGES.iter().any(|l| p.has_long(l) || first == Some(l)));
    if !reads {
        out.writes(p.values('f', "file"));
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(git_subcommands);
}

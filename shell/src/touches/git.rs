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

    #[test]
    fn git_subcommands() {
        known("git rm --cached -r dir", &["d:dir"]);
        known("git rm -- -f", &["d:-f"]);
        known("git -C sub rm x /abs", &["d:sub/x", "d:/abs"]);
        known("git -C a -C b rm x", &["d:a/b/x"]);
        known("git -c core.x=1 --no-pager rm x", &["d:x"]);
        unknown("git rm '*.policy'", &["d:'*.policy'"]);
        unknown("git rm --pathspec-from-file=list", &[]);
        known("git mv a b", &["d:a", "w:b"]);
        known(
            "git checkout -- .contextos/policies/x.policy",
            &["w:.contextos/policies/x.policy"],
        );
        known("git checkout HEAD~1 -- f g", &["w:f", "w:g"]);
        known("git checkout -b feature", &[]);
        known("git checkout f", &["w:f"]);
        known("git restore --source HEAD f", &["w:f"]);
        known("git restore -s HEAD -- f", &["w:f"]);
        unknown("git restore :/", &["w::/"]);
        unknown("git clean -fdx", &[]);
        known("git clean -f -- build", &["d:build"]);
        known("git config --file .gitmodules a.b c", &["w:.gitmodules"]);
        known("git config -f x.cfg --unset a.b", &["w:x.cfg"]);
        known("git config -f x.cfg --get a.b", &[]);
        known("git config --file=x set a.b c", &["w:x"]);
        unknown("git --work-tree=/w rm x", &["d:x"]);
    }
}

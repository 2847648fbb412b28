//! Programs that edit files when asked to: `sed` (in place, or by its script's `w`),
//! `awk` (gawk's `-i inplace`, `print > "f"`), and `patch`.

use super::effects::Out;
use super::scripts;
use crate::names::is_assignment;
use crate::options::{model, options, parse, Spec};

const SED: Spec = Spec {
    attached: "i",
    ..model(
        "nrEsuzb",
        "efl",
        "quiet silent debug follow-symlinks in-place null-data zero-terminated posix \
            regexp-extended separate sandbox unbuffered binary",
        "expression file line-length",
    )
};

/// sed: the script is the `-e` values and `-f` files, or else the first operand; the
/// other operands are read, and written too with `-i`. The script's own `w`, `r` and
/// `e` commands are read from it.
pub(super) fn sed(args: &[String], out: &mut Out) {
    let p = parse(args, &SED);
    out.parsed(&p, &[]);
    out.operands(p.operands());
    let scripts: Vec<&str> = p.values('f', "file").collect();
    scripts.iter().for_each(|f| out.runs_file(f));
    let exprs: Vec<&str> = p.values('e', "expression").collect();
    let given = !exprs.is_empty() || !scripts.is_empty();
    let script = if given {
        exprs.join("\n")
    } else {
        p.operands.first().map_or(String::new(), |s| s.to_string())
    };
    if !p.has_long("sandbox") {
        scripts::sed(&script).report("sed", &script, out);
    }
    // `-f FILE`: what the script does is in the file.
    if scripts.iter().any(|f| *f != "-") {
        out.unknown();
    }
    let files: Vec<&str> = p.operands().skip(usize::from(!given)).collect();
    out.reads(files.iter().copied());
    if p.has('i', "in-place") {
        out.writes(files);
    }
}

/// awk: the program is the first operand unless `-f FILE` or `-e`/`--source` gave
/// it; the other operands are files read (or `VAR=value` assignments). gawk's `-i
/// inplace` edits the input files; `-o`/`-p`/`-d` write attached file names.
pub(super) fn awk(args: &[String], out: &mut Out) {
    let spec = Spec {
        attached: "dDLop",
        posix: true,
        ..model(
            "bcCghMNnOPrsStVyz",
            "EeFfilvWZ",
            "characters-as-bytes traditional copyright gen-pot help lint-old bignum \
                use-lc-numeric non-decimal-data optimize posix re-interval no-optimize \
                sandbox trace version csv debug dump-variables lint pretty-print profile",
            "exec field-separator file include load source assign",
        )
    };
    let p = parse(args, &spec);
    out.parsed(&p, &[]);
    out.operands(p.operands());
    for (s, l) in [
        ('o', "pretty-print"),
        ('p', "profile"),
        ('d', "dump-variables"),
    ] {
        out.writes(p.values(s, l));
    }
    let files: Vec<&str> = p.values('f', "file").chain(p.values('E', "exec")).collect();
    files.iter().for_each(|f| out.runs_file(f));
    let sources: Vec<&str> = p.values('e', "source").collect();
    let given = !files.is_empty() || !sources.is_empty();
    let mut programs = sources;
    if !given {
        programs.extend(p.operands.first());
    }
    for prog in programs {
        out.code(prog);
        let found = scripts::awk(prog);
        let runs = found.runs;
        scripts::Found {
            runs: false,
            ..found
        }
        .report("awk", prog, out);
        if runs {
            out.opaque("the awk program runs commands");
        }
    }
    if files.iter().any(|f| *f != "-") {
        out.unknown(); // what the program file does is not read
    }
    let inputs: Vec<&str> = p
        .operands()
        .skip(usize::from(!given))
        .filter(|a| !is_assignment(a))
        .collect();
    out.reads(inputs.iter().copied());
    if p.values('i', "include")
        .any(|v| v == "inplace" || v == "inplace.awk")
    {
        out.writes(inputs);
    }
}

/// `patch [ORIGFILE [PATCHFILE]]`: without ORIGFILE (or `-o`) the files are named in
/// the patch.
pub(super) fn patch(args: &[String], out: &mut Out) {
    let spec = options(
        "BDdFgiopVYrz",
        "basename-prefix directory fuzz get ifdef input output prefix \
            quoting-style read-only reject-file reject-format strip suffix version-control",
        "dry-run backup backup-if-mismatch",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    if p.has_long("dry-run") {
        out.reads(p.values('i', "input"));
        out.reads(p.operands());
        return;
    }
    p.values('d', "directory").for_each(|d| out.chdir(d));
    out.reads(p.values('i', "input"));
    out.reads(p.operands.get(1).copied());
    out.writes(p.values('r', "reject-file"));
    let outputs: Vec<&str> = p.values('o', "output").collect();
    if !outputs.is_empty() {
        out.writes(outputs);
    } else if let Some(f) = p.operands.first() {
        out.write(f);
    } else {
        out.unknown();
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(sed_in_place, interpreters_in_place, patch_and_git_apply);
}

//! Programs that edit files in place when asked to: `sed -i`, `perl -i`, `ruby -i`,
//! `gawk -i inplace`, and `patch`.

use super::effects::Out;
use crate::names::is_assignment;
use crate::options::{options, parse, Spec};

/// `sed -i`: the files after the script (the first operand unless `-e`/`-f` gave it).
pub(super) fn sed(args: &[String], out: &mut Out) {
    let spec = Spec {
        attached: "i",
        ..options(
            "efl",
            "expression file line-length",
            "in-place follow-symlinks",
        )
    };
    let p = parse(args, &spec);
    if p.has('i', "in-place") {
        let skip = usize::from(!p.has('e', "expression") && !p.has('f', "file"));
        out.writes(p.operands().skip(skip));
    }
}

/// perl and ruby: switches end at the first operand; `-i[EXT]` edits the files named in
/// the arguments in place. With `-e CODE` every operand is an argument, otherwise the
/// first is the script. `values` take the rest of the argument or the next one,
/// `attached` only the rest; `code` are the switches that give the program.
pub(super) fn interpreter(
    args: &[String],
    values: &str,
    attached: &str,
    code: &str,
    out: &mut Out,
) {
    let (mut inplace, mut has_code, mut i) = (false, false, 0);
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        i += 1;
        if cluster.starts_with('-') {
            continue; // ruby's --long options take no separate value
        }
        let mut chars = cluster.char_indices().peekable();
        while let Some((k, ch)) = chars.next() {
            let rest = cluster.get(k + ch.len_utf8()..).unwrap_or_default();
            has_code |= code.contains(ch);
            if ch == 'i' {
                inplace = true; // the rest is the backup extension
                break;
            }
            if values.contains(ch) {
                i += usize::from(rest.is_empty());
                break;
            }
            if attached.contains(ch) {
                break;
            }
            if matches!(ch, '0' | 'l') {
                // `-0777`, `-l0`: octal digits belong to the switch (`-0777pi` is -0777 -p -i).
                while chars.next_if(|(_, c)| c.is_digit(8)).is_some() {}
            }
        }
    }
    if inplace {
        let skip = i + usize::from(!has_code);
        out.writes(args.iter().skip(skip).map(String::as_str));
    }
}

/// gawk: `-i inplace` edits the input files; `-o`/`-p`/`-d` write attached file names.
pub(super) fn awk(args: &[String], out: &mut Out) {
    let spec = Spec {
        attached: "dDLop",
        posix: true,
        ..options(
            "EeFfilvWZ",
            "exec field-separator file include load source assign",
            "debug dump-variables lint pretty-print profile",
        )
    };
    let p = parse(args, &spec);
    for (s, l) in [
        ('o', "pretty-print"),
        ('p', "profile"),
        ('d', "dump-variables"),
    ] {
        out.writes(p.values(s, l));
    }
    if p.values('i', "include")
        .any(|v| v == "inplace" || v == "inplace.awk")
    {
        let program = [('e', "source"), ('E', "exec"), ('f', "file")];
        let skip = usize::from(!program.iter().any(|(s, l)| p.has(*s, l)));
        out.writes(p.operands().skip(skip).filter(|a| !is_assignment(a)));
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
    if p.has_long("dry-run") {
        return;
    }
    p.values('d', "directory").for_each(|d| out.chdir(d));
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

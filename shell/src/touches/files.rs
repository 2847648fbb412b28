//! Programs whose job is to change files: removing, moving, copying, creating,
//! truncating and changing modes, owners and attributes.

use super::effects::Out;
use crate::names::basename;
use crate::options::{options, parse, Spec, NONE};

/// `rm`, `unlink`: every operand is deleted.
pub(super) fn rm(args: &[String], out: &mut Out) {
    out.deletes(parse(args, &NONE).operands());
}

/// `tee`, `sponge`, `touch`, `truncate`, `mkdir`: every operand is written.
pub(super) fn create(name: &str, args: &[String], out: &mut Out) {
    let spec = match name {
        "touch" => options("drt", "date reference time", ""),
        "truncate" => options("rs", "reference size", ""),
        "mkdir" => options("m", "mode", ""),
        _ => NONE,
    };
    out.writes(parse(args, &spec).operands());
}

/// `sort -o FILE`.
pub(super) fn sort(args: &[String], out: &mut Out) {
    out.writes(parse(args, &SORT).values('o', "output"));
}

/// `dd of=FILE`.
pub(super) fn dd(args: &[String], out: &mut Out) {
    out.writes(args.iter().filter_map(|a| a.strip_prefix("of=")));
}

/// `setfacl … FILE…`: the files' ACLs change.
pub(super) fn setfacl(args: &[String], out: &mut Out) {
    let p = parse(args, &SETFACL);
    // `--restore` and `-` take the file names from a file or stdin.
    if p.has_long("restore") || p.operands.contains(&"-") {
        out.unknown();
    }
    out.writes(p.operands());
}

pub(super) fn rmdir(args: &[String], out: &mut Out) {
    let p = parse(args, &NONE);
    let parents = p.has('p', "parents");
    for d in p.operands() {
        out.delete(d);
        // `rmdir -p a/b/c` also removes a/b and a.
        let mut s = d.trim_end_matches('/');
        while let Some((head, _)) = s.rsplit_once('/').filter(|_| parents) {
            s = head.trim_end_matches('/');
            if s.is_empty() {
                break;
            }
            out.delete(s);
        }
    }
}

pub(super) fn shred(args: &[String], out: &mut Out) {
    let spec = options("ns", "iterations random-source size", "remove");
    let p = parse(args, &spec);
    let remove = p.has('u', "remove");
    for f in p.operands() {
        out.write(f);
        if remove {
            out.delete(f);
        }
    }
}

const CP: Spec = options(
    "St",
    "suffix target-directory sparse no-preserve",
    "backup context preserve reflink update",
);

/// `mv SRC… DST` and `mv -t DIR SRC…`: sources deleted, destination written.
pub(super) fn mv(args: &[String], out: &mut Out) {
    let p = parse(args, &CP);
    if let Some(dir) = p.values('t', "target-directory").last() {
        out.deletes(p.operands());
        out.land_in(dir, p.operands());
    } else if let [srcs @ .., dst] = p.operands.as_slice() {
        if !srcs.is_empty() {
            out.deletes(srcs.iter().copied());
            out.land_in(dst, srcs.iter().copied());
        }
    }
}

/// `cp`, `ln`, `install`, `scp`: the destination (last operand or `-t DIR`) is written.
pub(super) fn copy(name: &str, args: &[String], out: &mut Out) {
    let spec = match name {
        "install" => Spec {
            values: "gmoSt",
            long_values: "group mode owner suffix target-directory strip-program",
            ..CP
        },
        "scp" => options("cDFiJlmoPSX", "", ""),
        _ => CP,
    };
    let p = parse(args, &spec);
    if name == "install" && p.has('d', "directory") {
        return out.writes(p.operands());
    }
    if let Some(dir) = p.values('t', "target-directory").last() {
        return out.land_in(dir, p.operands());
    }
    match p.operands.as_slice() {
        // `ln -s TARGET` creates ./basename(TARGET).
        [target] if name == "ln" => out.write(basename(target.trim_end_matches('/'))),
        [srcs @ .., dst] if !srcs.is_empty() => out.land_in(dst, srcs.iter().copied()),
        _ => {}
    }
}

pub(super) fn rsync(args: &[String], out: &mut Out) {
    let spec = options(
        "eBfTM@",
        "address backup-dir block-size bwlimit cc checksum-choice checksum-seed \
            chmod chown compare-dest compress-choice compress-level contimeout copy-as \
            copy-dest debug early-input exclude exclude-from files-from filter groupmap iconv \
            include include-from info link-dest log-file log-file-format max-alloc max-delete \
            max-size min-size modify-window only-write-batch out-format outbuf partial-dir \
            password-file port protocol read-batch remote-option rsh rsync-path skip-compress \
            sockopts stderr stop-after stop-at suffix temp-dir time-limit timeout usermap \
            write-batch zc zl config dparam log-format",
        "backup checksum compress partial remove-source-files",
    );
    let p = parse(args, &spec);
    for opt in ["log-file", "write-batch", "only-write-batch"] {
        out.writes(p.values('\0', opt));
    }
    // A single operand lists it; remote destinations (`host:path`) are reported too,
    // harmlessly.
    if let [srcs @ .., dst] = p.operands.as_slice() {
        if !srcs.is_empty() {
            out.land_in(dst, srcs.iter().copied());
            // `rsync src/ dst` copies the *contents* of src: their names are not known.
            if srcs.iter().any(|s| s.ends_with('/')) {
                out.unknown();
            }
            if p.has_long("remove-source-files") {
                out.deletes(srcs.iter().copied());
            }
        }
    }
}

const SORT: Spec = options(
    "kSoTt",
    "batch-size buffer-size compress-program field-separator files0-from key \
        output parallel random-source sort temporary-directory",
    "",
);

const SETFACL: Spec = options(
    "mMxX",
    "modify modify-file remove remove-file set set-file restore",
    "remove-all remove-default",
);

/// `chmod MODE FILE…`, `chown OWNER FILE…`, `chgrp GROUP FILE…`: the files are written
/// (changing a hook's mode or owner is tampering with it).
pub(super) fn chmod(name: &str, args: &[String], out: &mut Out) {
    let spec = options("", "from reference", "");
    let p = parse(args, &spec);
    // GNU chmod takes an option-like argument containing a mode letter (`-x`, `-w,+r`)
    // as the mode; then every operand is a file. Any such argument counts, so that a
    // doubt reports one path too many rather than one too few.
    let dash_mode = name == "chmod"
        && args.iter().take_while(|a| *a != "--").any(|a| {
            a.strip_prefix('-').is_some_and(|m| {
                !m.starts_with('-') && m.chars().any(|c| "rwxXstugoa01234567,+=".contains(c))
            })
        });
    let skip = usize::from(!dash_mode && !p.has_long("reference"));
    out.writes(p.operands().skip(skip));
}

/// `chattr [-RVf] [-v VERSION] [-p PROJECT] [+-=ATTRS]… FILE…` (e2fsprogs parses its
/// arguments by hand: modes may start with `-`).
pub(super) fn chattr(args: &[String], out: &mut Out) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with(['-', '+', '=']) {
            break;
        }
        // Each `v` or `p` in a `-` argument takes the next argument.
        let values = if a.starts_with('-') {
            a.matches(['v', 'p']).count()
        } else {
            0
        };
        i += 1 + values;
    }
    out.writes(args.iter().skip(i).map(String::as_str));
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(deletes, move_copy_link, simple_writers, attributes);
}

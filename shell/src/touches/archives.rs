//! Archivers: creating writes the archive, extracting writes files the archive names.

use super::effects::Out;
use crate::options::{options, parse, Spec};

const TAR: Spec = options(
    "bCfFgHIKLNTVX",
    "after-date blocking-factor checkpoint-action directory exclude exclude-from \
        exclude-tag exclude-tag-all exclude-tag-under file files-from format group group-map \
        hole-detection index-file info-script label level listed-incremental mode mtime \
        new-volume-script newer newer-mtime no-quote-chars owner owner-map pax-option \
        quote-chars quoting-style record-size rmt-command rsh-command sort sparse-version \
        starting-file strip-components suffix tape-length to-command transform \
        use-compress-program volno-file warning xattrs-exclude xattrs-include xform",
    "absolute-names append catenate checkpoint concatenate create delete extract \
        get one-top-level remove-files sparse to-stdout update wildcards xattrs",
);

/// tar: creating or updating writes the archive (`-f`); extracting writes `-C DIR`, or
/// the named members, or — without either — files named in the archive (unknown).
pub(super) fn tar(args: &[String], out: &mut Out) {
    // Old style `tar xzf A -C D`: a first argument without `-` is a cluster whose
    // value-taking letters take the following arguments in order.
    let expanded: Vec<String>;
    let args = match args.split_first() {
        Some((first, rest)) if !first.starts_with('-') => {
            let mut v = Vec::new();
            let mut vals = rest.iter();
            for ch in first.chars() {
                v.push(format!("-{ch}"));
                if TAR.values.contains(ch) {
                    v.extend(vals.next().cloned());
                }
            }
            v.extend(vals.cloned());
            expanded = v;
            expanded.as_slice()
        }
        _ => args,
    };
    let p = parse(args, &TAR);
    out.options(p.normalised(&[
        ('c', "create"),
        ('x', "extract"),
        ('t', "list"),
        ('f', "file"),
        ('C', "directory"),
        ('z', "gzip"),
        ('j', "bzip2"),
        ('J', "xz"),
        ('v', "verbose"),
        ('T', "files-from"),
        ('X', "exclude-from"),
        ('O', "to-stdout"),
        ('P', "absolute-names"),
        ('I', "use-compress-program"),
    ]));
    out.operands(p.operands());
    out.reads(
        p.values('T', "files-from")
            .chain(p.values('X', "exclude-from")),
    );
    for f in p.values('f', "file") {
        if let Some(host) = super::network::remote_host(f) {
            out.net(host);
        }
    }
    if p.values('F', "info-script")
        .chain(p.values('\0', "new-volume-script"))
        .next()
        .is_some()
    {
        out.opaque("'tar --info-script' runs a script");
    }
    if p.values('\0', "rsh-command")
        .chain(p.values('\0', "rmt-command"))
        .next()
        .is_some()
    {
        out.opaque("'tar --rsh-command' runs a program");
    }
    let create = [
        ('c', "create"),
        ('r', "append"),
        ('u', "update"),
        ('A', "catenate"),
    ];
    let changes_archive = create.iter().any(|(s, l)| p.has(*s, l))
        || p.has_long("concatenate")
        || p.has_long("delete");
    if changes_archive {
        // The members: directories are read whole.
        out.reads(p.operands());
        out.writes(p.values('f', "file"));
        out.writes(p.values('g', "listed-incremental"));
        if p.has_long("remove-files") {
            out.deletes(p.operands());
        }
    }
    out.writes(p.values('\0', "index-file"));
    out.writes(p.values('\0', "volno-file"));
    if !changes_archive {
        out.reads(p.values('f', "file"));
    }
    if !(p.has('x', "extract") || p.has_long("get")) || p.has('O', "to-stdout") {
        return;
    }
    // Members land under `-C DIR` (or the current directory) under names the archive
    // chooses, so what is written is unknown; named members and the directory are
    // reported as a hint for a deny.
    let dirs: Vec<&str> = p.values('C', "directory").collect();
    if dirs.is_empty() {
        out.writes(p.operands());
    }
    out.writes(dirs);
    out.unknown();
    // Options that rename members, leave the directory or pipe them to a command.
    let renames = [
        "one-top-level",
        "to-command",
        "transform",
        "xform",
        "wildcards",
    ];
    if renames.iter().any(|l| p.has_long(l)) || p.has('P', "absolute-names") {
        out.unknown();
    }
}

/// cpio: `-o` writes the archive (`-F`/`-O`), `-p DIR` writes DIR, `-i` writes files
/// named in the archive.
pub(super) fn cpio(args: &[String], out: &mut Out) {
    let spec = options(
        "CDEFHIMORW",
        "block-size directory file format io-size message owner pattern-file \
            rsh-command to-command",
        "create extract list pass-through to-stdout",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    p.values('D', "directory").for_each(|d| out.chdir(d));
    out.reads(p.values('E', "pattern-file"));
    if p.values('\0', "to-command")
        .chain(p.values('\0', "rsh-command"))
        .next()
        .is_some()
    {
        out.opaque("'cpio --to-command' runs a program");
    }
    if p.has('o', "create") {
        out.writes(p.values('F', "file"));
        out.writes(p.values('O', ""));
    } else if p.has('p', "pass-through") {
        out.writes(p.operands());
    } else if p.has('i', "extract") && !p.has('t', "list") && !p.has_long("to-stdout") {
        out.unknown();
    }
}

/// `zip [OPTS] ARCHIVE FILE…`: the archive is written, the files read (and deleted
/// with `-m`); `-TT CMD` runs a command to test the archive.
pub(super) fn zip(args: &[String], out: &mut Out) {
    let p = parse(
        args,
        &options("bnPtxiIZsOTTU", "unzip-command out temp-path", "move"),
    );
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    if args
        .iter()
        .any(|a| a == "-TT" || a.starts_with("--unzip-command"))
    {
        out.opaque("'zip -TT' runs a command");
    }
    let mut ops = p.operands();
    let archive = p.values('O', "out").last().or_else(|| ops.next());
    let files: Vec<&str> = ops.collect();
    if p.values('O', "out").next().is_some() {
        out.reads(p.operands.first().copied());
    }
    out.reads(files.iter().copied());
    out.writes(archive);
    if p.has('m', "move") {
        out.deletes(files);
    }
}

/// `unzip`: extracting writes files named in the archive.
pub(super) fn unzip(args: &[String], out: &mut Out) {
    let p = parse(args, &options("dPx", "", ""));
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    out.reads(p.operands().take(1));
    // List, test and print modes write nothing.
    if !"clptvzZ".chars().any(|c| p.has_short(c)) {
        // The member names come from the archive: unknown, wherever they land.
        out.writes(p.values('d', ""));
        out.unknown();
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(archives);
}

//! Programs whose job is to change files: removing, moving, copying, creating,
//! truncating and changing modes, owners and attributes.

use super::effects::{into, Out};
use super::network::remote_host;
use crate::names::basename;
use crate::options::{model, options, parse, Spec, NONE};

const RM: Spec = model(
    "fiIrRdv",
    "",
    "force interactive one-file-system no-preserve-root preserve-root recursive dir \
        verbose",
    "",
);

/// `rm`, `unlink`: every operand is deleted.
pub(super) fn rm(name: &str, args: &[String], out: &mut Out) {
    let spec = if name == "rm" {
        RM
    } else {
        model("", "", "", "")
    };
    let p = parse(args, &spec);
    out.parsed(
        &p,
        &[
            ('f', "force"),
            ('r', "recursive"),
            ('R', "recursive"),
            ('d', "dir"),
            ('v', "verbose"),
        ],
    );
    out.operands(p.operands());
    out.deletes(p.operands());
}

/// `tee`, `sponge`, `touch`, `truncate`, `mkdir`: every operand is written.
pub(super) fn create(name: &str, args: &[String], out: &mut Out) {
    let spec = match name {
        "touch" => model(
            "acfhm",
            "drt",
            "no-create no-dereference",
            "date reference time",
        ),
        "truncate" => model("co", "rs", "no-create io-blocks", "reference size"),
        "mkdir" => Spec {
            attached: "Z",
            ..model("pv", "m", "parents verbose context", "mode")
        },
        "tee" => model("aip", "", "append ignore-interrupts output-error", ""),
        "sponge" => model("a", "", "", ""),
        _ => NONE,
    };
    let p = parse(args, &spec);
    out.parsed(
        &p,
        &[
            ('a', "append"),
            ('p', "parents"),
            ('m', "mode"),
            ('r', "reference"),
        ],
    );
    out.operands(p.operands());
    out.reads(p.values('r', "reference"));
    out.writes(p.operands());
}

/// `sort -o FILE`; the inputs are read.
pub(super) fn sort(args: &[String], out: &mut Out) {
    let p = parse(args, &SORT);
    out.parsed(
        &p,
        &[('o', "output"), ('k', "key"), ('t', "field-separator")],
    );
    out.operands(p.operands());
    out.writes(p.values('o', "output"));
    out.reads(p.operands());
    out.reads(p.values('\0', "files0-from"));
    out.reads(p.values('\0', "random-source"));
    if p.values('\0', "compress-program").next().is_some() {
        out.opaque("'sort --compress-program' runs a program");
    }
}

/// `dd if=FILE of=FILE`.
pub(super) fn dd(args: &[String], out: &mut Out) {
    out.modelled();
    out.options(args.iter().cloned());
    for a in args {
        let (key, _) = a.split_once('=').unwrap_or((a, ""));
        if !matches!(
            key,
            "if" | "of"
                | "bs"
                | "ibs"
                | "obs"
                | "cbs"
                | "count"
                | "skip"
                | "seek"
                | "iseek"
                | "oseek"
                | "conv"
                | "iflag"
                | "oflag"
                | "status"
                | "--help"
                | "--version"
        ) {
            out.unknown_options([a.clone()]);
        }
    }
    out.reads(args.iter().filter_map(|a| a.strip_prefix("if=")));
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
    let p = parse(
        args,
        &model("pv", "", "ignore-fail-on-non-empty parents verbose", ""),
    );
    out.parsed(&p, &[('p', "parents"), ('v', "verbose")]);
    out.operands(p.operands());
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
    let spec = model(
        "fuvxz",
        "ns",
        "force remove verbose exact zero",
        "iterations random-source size",
    );
    let p = parse(args, &spec);
    out.parsed(
        &p,
        &[
            ('n', "iterations"),
            ('u', "remove"),
            ('f', "force"),
            ('z', "zero"),
        ],
    );
    out.operands(p.operands());
    let remove = p.has('u', "remove");
    for f in p.operands() {
        out.write(f);
        if remove {
            out.delete(f);
        }
    }
}

const CP: Spec = Spec {
    attached: "",
    ..model(
        "abdfiHlLnPpRrsTuvxZ",
        "St",
        "archive attributes-only backup copy-contents debug force interactive link \
            dereference no-clobber no-dereference preserve parents recursive reflink \
            remove-destination strip-trailing-slashes symbolic-link no-target-directory \
            update verbose one-file-system context keep-directory-symlink exchange \
            no-copy",
        "no-preserve sparse suffix target-directory",
    )
};
const CP_ALIASES: &[(char, &str)] = &[
    ('a', "archive"),
    ('f', "force"),
    ('r', "recursive"),
    ('R', "recursive"),
    ('i', "interactive"),
    ('n', "no-clobber"),
    ('s', "symbolic-link"),
    ('l', "link"),
    ('L', "dereference"),
    ('P', "no-dereference"),
    ('t', "target-directory"),
    ('T', "no-target-directory"),
    ('u', "update"),
    ('v', "verbose"),
    ('b', "backup"),
    ('S', "suffix"),
    ('x', "one-file-system"),
];
const LN: Spec = model(
    "bdFfiLnPrsTv",
    "St",
    "backup directory force interactive logical no-dereference physical relative \
        symbolic no-target-directory verbose",
    "suffix target-directory",
);
const LN_ALIASES: &[(char, &str)] = &[
    ('s', "symbolic"),
    ('f', "force"),
    ('r', "relative"),
    ('n', "no-dereference"),
    ('t', "target-directory"),
    ('T', "no-target-directory"),
    ('v', "verbose"),
    ('i', "interactive"),
    ('b', "backup"),
    ('S', "suffix"),
    ('L', "logical"),
    ('P', "physical"),
];
const INSTALL: Spec = model(
    "bcCDdpsTvZ",
    "gmoSt",
    "backup compare directory preserve-timestamps strip no-target-directory verbose \
        preserve-context context debug",
    "group mode owner strip-program suffix target-directory",
);
const INSTALL_ALIASES: &[(char, &str)] = &[
    ('m', "mode"),
    ('o', "owner"),
    ('g', "group"),
    ('d', "directory"),
    ('s', "strip"),
    ('v', "verbose"),
    ('t', "target-directory"),
    ('T', "no-target-directory"),
    ('C', "compare"),
    ('p', "preserve-timestamps"),
    ('b', "backup"),
    ('S', "suffix"),
];
const SCP: Spec = model("346ABCdpqrTvOR", "cDFiJloPSX", "", "");

/// `mv SRC… DST` and `mv -t DIR SRC…`: sources deleted, destination written.
pub(super) fn mv(args: &[String], out: &mut Out) {
    let p = parse(args, &CP);
    out.parsed(&p, CP_ALIASES);
    out.operands(p.operands());
    let no_dir = p.has('T', "no-target-directory");
    if let Some(dir) = p.values('t', "target-directory").last() {
        out.deletes(p.operands());
        out.land_in(dir, p.operands());
    } else if let [srcs @ .., dst] = p.operands.as_slice() {
        if !srcs.is_empty() {
            out.deletes(srcs.iter().copied());
            if no_dir {
                out.write(dst);
            } else {
                out.land_in(dst, srcs.iter().copied());
            }
        }
    }
}

/// `cp`, `install`, `scp`: the sources are read, the destination (last operand or
/// `-t DIR`) is written.
pub(super) fn copy(name: &str, args: &[String], out: &mut Out) {
    let spec = match name {
        "install" => INSTALL,
        "scp" => SCP,
        _ => CP,
    };
    let p = parse(args, &spec);
    let aliases = match name {
        "scp" => &[][..],
        "install" => INSTALL_ALIASES,
        _ => CP_ALIASES,
    };
    out.parsed(&p, aliases);
    out.operands(p.operands());
    if name == "scp" {
        scp_remote(&p, out);
    }
    if name == "install" && p.has('d', "directory") {
        return out.writes(p.operands());
    }
    let local = |s: &&str| name != "scp" || remote_host(s).is_none();
    if let Some(dir) = p.values('t', "target-directory").last() {
        out.reads(p.operands().filter(local));
        return out.land_in(dir, p.operands());
    }
    if let [srcs @ .., dst] = p.operands.as_slice() {
        if !srcs.is_empty() {
            out.reads(srcs.iter().copied().filter(local));
            if !local(dst) {
                return;
            }
            if p.has('T', "no-target-directory") {
                out.write(dst);
            } else {
                out.land_in(dst, srcs.iter().copied());
            }
        }
    }
}

/// scp's remote ends and the programs it runs instead of ssh.
fn scp_remote(p: &crate::options::Parsed<'_>, out: &mut Out) {
    for a in p.operands() {
        if let Some(host) = remote_host(a) {
            out.net(host);
        }
    }
    out.reads(p.values('F', "").chain(p.values('i', "")));
    p.values('J', "").for_each(|j| out.net(j));
    if p.values('S', "").next().is_some() {
        out.opaque("'scp -S' runs another program as the connection");
    }
    for o in p.values('o', "") {
        let key = o.split(['=', ' ']).next().unwrap_or(o);
        if key.eq_ignore_ascii_case("proxycommand") || key.eq_ignore_ascii_case("localcommand") {
            out.opaque(format!("'scp -o {key}' runs a command"));
        }
    }
}

/// `ln [-s] TARGET… LINK|DIR`: the links are written; a hard link also writes its
/// target (writing through the link changes it).
pub(super) fn ln(args: &[String], out: &mut Out) {
    let p = parse(args, &LN);
    out.parsed(&p, LN_ALIASES);
    out.operands(p.operands());
    let symbolic = p.has('s', "symbolic");
    let made = |link: &str, target: &str, out: &mut Out| {
        out.write(link);
        out.link(link, target, symbolic);
    };
    if let Some(dir) = p.values('t', "target-directory").last() {
        for t in p.operands() {
            if let Some(link) = into(dir, t) {
                made(&link, t, out);
            }
        }
        return;
    }
    match p.operands.as_slice() {
        // `ln -s TARGET` creates ./basename(TARGET).
        [target] => made(basename(target.trim_end_matches('/')), target, out),
        [target, link] if p.has('T', "no-target-directory") => made(link, target, out),
        [target, link] => {
            // LINK may be a directory: the link is then LINK/basename(TARGET), a guess
            // unless LINK ends with `/`.
            if link.ends_with('/') || *link == "." {
                if let Some(inside) = into(link, target) {
                    made(&inside, target, out);
                }
            } else {
                made(link, target, out);
                out.land_in(link, [*target]);
            }
        }
        [targets @ .., dir] if !targets.is_empty() => {
            for t in targets {
                if let Some(link) = into(dir, t) {
                    made(&link, t, out);
                }
            }
        }
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
    out.options(p.normalised(&[
        ('e', "rsh"),
        ('a', "archive"),
        ('r', "recursive"),
        ('v', "verbose"),
        ('z', "compress"),
        ('n', "dry-run"),
    ]));
    out.operands(p.operands());
    for a in p.operands() {
        if let Some(host) = remote_host(a) {
            out.net(host);
        }
    }
    for opt in ["log-file", "write-batch", "only-write-batch"] {
        out.writes(p.values('\0', opt));
    }
    for opt in [
        "exclude-from",
        "include-from",
        "files-from",
        "password-file",
        "read-batch",
    ] {
        out.reads(p.values('\0', opt));
    }
    if p.values('\0', "rsync-path").next().is_some() {
        out.opaque("'rsync --rsync-path' runs a command on the remote side");
    }
    let local = |s: &&str| remote_host(s).is_none();
    // A single operand lists it; remote destinations (`host:path`) are reported too,
    // harmlessly.
    if let [srcs @ .., dst] = p.operands.as_slice() {
        if !srcs.is_empty() {
            out.reads(srcs.iter().copied().filter(local));
            if !local(dst) {
                return;
            }
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

const SORT: Spec = model(
    "bdfgiMhnRrVcCmsuz",
    "kSoTt",
    "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort \
        ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse \
        version-sort check merge stable unique zero-terminated debug",
    "batch-size buffer-size compress-program field-separator files0-from key \
        output parallel random-source sort temporary-directory",
);

const SETFACL: Spec = options(
    "mMxX",
    "modify modify-file remove remove-file set set-file restore",
    "remove-all remove-default",
);

/// `chmod MODE FILE…`, `chown OWNER FILE…`, `chgrp GROUP FILE…`: the files are written
/// (changing a hook's mode or owner is tampering with it).
pub(super) fn chmod(name: &str, args: &[String], out: &mut Out) {
    let spec = model(
        "cfvRHLPh",
        "",
        "changes silent quiet verbose dereference no-dereference no-preserve-root \
            preserve-root recursive",
        "from reference",
    );
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
    let modes = |o: &String| {
        o.strip_prefix('-')
            .is_some_and(|c| c.chars().all(|c| "rwxXstugoa01234567,+=".contains(c)))
    };
    let unlisted = p.unlisted.iter().filter(|o| !(dash_mode && modes(o)));
    out.modelled();
    out.options(p.normalised(&[
        ('R', "recursive"),
        ('v', "verbose"),
        ('c', "changes"),
        ('f', "silent"),
    ]));
    out.unknown_options(unlisted.cloned());
    out.operands(p.operands());
    out.reads(p.values('\0', "reference"));
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

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

    #[test]
    fn deletes() {
        known("rm -rf -- -weird", &["d:-weird"]);
        known("rm -rf .git/hooks/pre-commit", &["d:.git/hooks/pre-commit"]);
        known("/usr/bin/rm a -f b", &["d:a", "d:b"]);
        known("rm --interactive=never -- -- x", &["d:--", "d:x"]);
        known("unlink contextos.toml", &["d:contextos.toml"]);
        known("rmdir -p a/b/c", &["d:a/b/c", "d:a/b", "d:a"]);
        known("rmdir a/b", &["d:a/b"]);
        known("shred -n 3 -u f", &["w:f", "d:f"]);
        known("shred --iterations 3 f", &["w:f"]);
        known("shred --remove=wipe f", &["w:f", "d:f"]);
    }

    #[test]
    fn move_copy_link() {
        known(
            "mv evil .claude/settings.json",
            &[
                "d:evil",
                "w:.claude/settings.json",
                "w:.claude/settings.json/evil",
            ],
        );
        known(
            "mv -t dir a b",
            &["d:a", "d:b", "w:dir", "w:dir/a", "w:dir/b"],
        );
        known("mv --target-directory=dir a", &["d:a", "w:dir", "w:dir/a"]);
        known("mv -S .bak a b c", &["d:a", "d:b", "w:c", "w:c/a", "w:c/b"]);
        known("mv --suffix .bak a b", &["d:a", "w:b", "w:b/a"]);
        known("mv a b -f", &["d:a", "w:b", "w:b/a"]);
        known("cp -t dir a b", &["w:dir", "w:dir/a", "w:dir/b"]);
        known("cp -tdir a b", &["w:dir", "w:dir/a", "w:dir/b"]);
        known(
            "cp -r --preserve=mode src .contextos/",
            &["w:.contextos/", "w:.contextos/src"],
        );
        // The file lands inside a directory destination under its own name.
        known(
            "cp settings.json .claude/",
            &["w:.claude/", "w:.claude/settings.json"],
        );
        known(
            "cp -r evil/hooks .github",
            &["w:.github", "w:.github/hooks"],
        );
        known("cp --sparse always a b", &["w:b", "w:b/a"]);
        known("cp --target dir a", &["w:dir", "w:dir/a"]);
        known(
            "install -m 755 hook .git/hooks/pre-commit",
            &["w:.git/hooks/pre-commit", "w:.git/hooks/pre-commit/hook"],
        );
        known("install -d -m 700 a b", &["w:a", "w:b"]);
        known(
            "ln -sf /tmp/x .git/hooks/pre-push",
            &["w:.git/hooks/pre-push", "w:.git/hooks/pre-push/x"],
        );
        known("ln -s /etc/passwd", &["w:passwd"]);
        known("scp -P 22 host:f local", &["w:local", "w:local/f"]);
        unknown(
            "rsync -av --exclude .git src/ dst/",
            &["w:dst/", "w:dst/src"],
        );
        known(
            "rsync -a --remove-source-files a b dst",
            &["w:dst", "w:dst/a", "w:dst/b", "d:a", "d:b"],
        );
        known("rsync --compress a b", &["w:b", "w:b/a"]);
        known("rsync --log-file=log a b", &["w:log", "w:b", "w:b/a"]);
    }

    #[test]
    fn simple_writers() {
        known("tee -a f g", &["w:f", "w:g"]);
        known("tee /dev/null", &[]);
        known("tee /dev/stderr -", &[]);
        known("touch -d yesterday -r ref f", &["w:f"]);
        known("touch --date=now f", &["w:f"]);
        known("truncate -s0 contextos.toml", &["w:contextos.toml"]);
        known("truncate -s 0 f", &["w:f"]);
        known("mkdir -p -m 700 .git/hooks", &["w:.git/hooks"]);
        known("sort -o out in", &["w:out"]);
        known("sort --output=out -k 2 in", &["w:out"]);
        known("sponge f", &["w:f"]);
        known("dd if=/dev/zero of=f bs=1", &["w:f"]);
        known("dd if=f of=/dev/null", &[]);
    }

    #[test]
    fn attributes() {
        known(
            "chmod +x .git/hooks/pre-commit",
            &["w:.git/hooks/pre-commit"],
        );
        known("chmod -R 755 a b", &["w:a", "w:b"]);
        known("chmod -x f", &["w:f"]);
        known("chmod f -w", &["w:f"]);
        known("chmod -v u+x f", &["w:f"]);
        known("chmod --reference=r f", &["w:f"]);
        known("chmod --reference r f", &["w:f"]);
        known("chown -R root:root f", &["w:f"]);
        known("chown --from=a:b c f", &["w:f"]);
        known("chgrp staff f", &["w:f"]);
        known("chattr +i f", &["w:f"]);
        known("chattr -i -R f", &["w:f"]);
        known("chattr -p 5 +P f", &["w:f"]);
        known("setfacl -m u:x:rwx f", &["w:f"]);
        known("setfacl --set=u::rw f g", &["w:f", "w:g"]);
        unknown("setfacl --restore=acl", &[]);
    }
}

//! Which file model reads which program.

use super::effects::Out;
use super::{archives, editors, files, find, git, in_place, keys, network};

/// Records the effects of program `name` (a basename) run with `args`. Returns
/// whether the program can change files at all (some arguments might make it write),
/// which matters when more arguments come from standard input (`xargs`).
pub(super) fn dispatch(name: &str, args: &[String], out: &mut Out) -> bool {
    match name {
        "rm" | "unlink" => files::rm(args, out),
        "rmdir" => files::rmdir(args, out),
        "shred" => files::shred(args, out),
        "mv" => files::mv(args, out),
        "cp" | "ln" | "install" | "scp" => files::copy(name, args, out),
        "rsync" => files::rsync(args, out),
        "tee" | "sponge" | "touch" | "truncate" | "mkdir" => files::create(name, args, out),
        "sort" => files::sort(args, out),
        "dd" => files::dd(args, out),
        "chmod" | "chown" | "chgrp" => files::chmod(name, args, out),
        "chattr" => files::chattr(args, out),
        "setfacl" => files::setfacl(args, out),
        "sed" | "gsed" => in_place::sed(args, out),
        "perl" => in_place::interpreter(args, "eEIMm", "CdDFVx", "eE", out),
        "ruby" => in_place::interpreter(args, "CeEIr", "FKTWx", "e", out),
        "awk" | "gawk" | "mawk" | "nawk" => in_place::awk(args, out),
        "patch" => in_place::patch(args, out),
        "git" => return git::git(args, out),
        "tar" | "gtar" | "bsdtar" => archives::tar(args, out),
        "unzip" => archives::unzip(args, out),
        "cpio" => archives::cpio(args, out),
        "curl" => network::curl(args, out),
        "wget" => network::wget(args, out),
        "ssh-keygen" => keys::ssh_keygen(args, out),
        "openssl" => keys::openssl(args, out),
        "find" => find::find(args, out),
        "vi" | "vim" | "nvim" | "view" | "vimdiff" | "gvim" | "rvim" | "ex" => {
            editors::vim(name, args, out);
        }
        "ed" | "red" => editors::ed(args, out),
        "sudoedit" => editors::sudoedit(args, out),
        _ => return editors::word_options_editor(name, args, out),
    }
    true
}

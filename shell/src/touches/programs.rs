//! Which model reads which program.

use super::effects::Out;
use super::{
    archives, clouds, databases, editors, files, find, git, in_place, interpreters, keys, network,
    packages, readers, system,
};
use crate::shell_args::SHELLS;

pub(crate) use super::ctx::Ctx;

/// Programs that run a command given to them which we do not unwrap: the command is
/// not visible.
fn carries_command(name: &str, args: &[String], out: &mut Out) -> bool {
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    let why = match (name, sub) {
        ("vagrant", Some("ssh"))
            if args.iter().any(|a| a == "-c" || a.starts_with("--command")) =>
        {
            "'vagrant ssh -c' runs a command in the machine"
        }
        (
            "tmux",
            Some(
                "new-session" | "new" | "new-window" | "neww" | "send-keys" | "send" | "run-shell"
                | "run" | "split-window" | "splitw" | "respawn-pane",
            ),
        ) => "'tmux' runs a command in a session",
        ("screen", _) if args.iter().any(|a| a == "-X" || !a.starts_with('-')) => {
            "'screen' runs a command in a session"
        }
        ("nix-shell", _) if args.iter().any(|a| a == "--run" || a == "--command") => {
            "'nix-shell --run' runs a command"
        }
        ("nix", Some("develop" | "shell" | "run")) => "'nix' runs a command",
        ("direnv", Some("exec")) => "'direnv exec' runs a command",
        ("at" | "batch", _) => "'at' schedules commands read from a file or standard input",
        ("expect", _) => "'expect' runs a script that spawns commands",
        ("make" | "gmake", _) if args.iter().any(|a| a.starts_with("SHELL=")) => {
            "'make SHELL=…' runs recipes with another program"
        }
        ("sg", _) => "'sg GROUP CMD' runs a command",
        _ => return false,
    };
    out.opaque(why);
    true
}

/// Records the effects of program `name` (a basename) run with `args`. Returns
/// whether the program can change files at all (some arguments might make it write),
/// which matters when more arguments come from standard input (`xargs`).
pub(super) fn dispatch(name: &str, args: &[String], ctx: Ctx, out: &mut Out) -> bool {
    match name {
        "rm" | "unlink" => files::rm(name, args, out),
        "rmdir" => files::rmdir(args, out),
        "shred" => files::shred(args, out),
        "mv" => files::mv(args, out),
        "cp" | "install" | "scp" => files::copy(name, args, out),
        "ln" => files::ln(args, out),
        "rsync" => files::rsync(args, out),
        "tee" | "sponge" | "touch" | "truncate" | "mkdir" => files::create(name, args, out),
        "sort" => files::sort(args, out),
        "dd" => files::dd(args, out),
        "chmod" | "chown" | "chgrp" => files::chmod(name, args, out),
        "chattr" => files::chattr(args, out),
        "setfacl" => files::setfacl(args, out),
        "sed" | "gsed" => in_place::sed(args, out),
        "perl" | "ruby" => interpreters::switches(name, args, ctx, out),
        "awk" | "gawk" | "mawk" | "nawk" => in_place::awk(args, out),
        "patch" => in_place::patch(args, out),
        "git" => return git::git(args, out),
        "tar" | "gtar" | "bsdtar" => archives::tar(args, out),
        "zip" => archives::zip(args, out),
        "unzip" => archives::unzip(args, out),
        "cpio" => archives::cpio(args, out),
        "curl" => network::curl(args, out),
        "wget" => network::wget(args, out),
        "http" | "https" | "xh" | "xhs" => network::httpie(args, out),
        "aria2c" => network::aria2c(args, out),
        "sftp" => network::sftp(args, out),
        "nc" | "ncat" | "netcat" | "telnet" => network::netcat(name, args, out),
        "socat" => network::socat(args, out),
        "dig" | "nslookup" | "host" | "drill" | "ping" | "ping6" | "ftp" | "traceroute"
        | "tracepath" | "mtr" | "whois" | "ssh-keyscan" | "tftp" => {
            network::hosts(name, args, out);
            return false;
        }
        "ssh-keygen" => keys::ssh_keygen(args, out),
        "openssl" => keys::openssl(args, out),
        "find" => find::find(args, out),
        "vi" | "vim" | "nvim" | "view" | "vimdiff" | "gvim" | "rvim" | "ex" => {
            editors::vim(name, args, out);
        }
        "ed" | "red" => editors::ed(args, out),
        "sudoedit" => editors::sudoedit(args, out),
        "uniq" => readers::uniq(args, out),
        "date" => {
            readers::date(args, out);
            return false;
        }
        "dos2unix" | "unix2dos" => readers::dos2unix(args, out),
        "xxd" => readers::xxd(args, out),
        "grep" | "egrep" | "fgrep" => {
            readers::grep(args, out);
            return false;
        }
        "rg" | "ag" => {
            readers::rg(name, args, out);
            return false;
        }
        "jq" | "gojq" | "jaq" => {
            readers::jq(args, out);
            return false;
        }
        "yq" => readers::yq(args, out),
        "gpg" | "gpg2" => readers::gpg(args, out),
        "source" | "." => interpreters::source(name, args, out),
        "python" | "python2" | "python3" | "pypy" | "pypy3" => {
            interpreters::python(name, args, ctx, out);
        }
        "node" | "nodejs" => interpreters::node(name, args, ctx, out),
        "php" => interpreters::php(name, args, ctx, out),
        "lua" | "luajit" => interpreters::lua(name, args, ctx, out),
        "Rscript" | "R" => interpreters::r(name, args, ctx, out),
        "deno" => interpreters::deno_bun(name, args, ctx, out),
        "bun" => interpreters::deno_bun(name, args, ctx, out),
        "pwsh" | "powershell" | "pwsh.exe" | "powershell.exe" => {
            interpreters::powershell(name, args, out);
        }
        "cmd" | "cmd.exe" => interpreters::cmd_exe(name, args, out),
        "osascript" => interpreters::osascript(name, args, ctx, out),
        "cargo" => packages::cargo(args, out),
        "npm" | "pnpm" | "yarn" => packages::npm(name, args, out),
        "npx" | "bunx" | "pnpx" => packages::npx(name, args, out),
        "pip" | "pip3" | "uv" | "pipx" | "poetry" | "pdm" => packages::pip(args, out),
        "uvx" => packages::uvx(args, out),
        "kubectl" | "oc" => clouds::kubectl(name, args, out),
        "helm" => clouds::helm(args, out),
        "terraform" | "tofu" => clouds::terraform(args, out),
        "pulumi" => clouds::pulumi(args, out),
        "aws" => clouds::aws(args, out),
        "gcloud" | "az" => clouds::gcloud_az(name, args, out),
        "gh" => clouds::gh(args, out),
        "docker" | "podman" | "nerdctl" => clouds::docker(name, args, out),
        "psql" => databases::psql(args, out),
        "mysql" | "mariadb" => databases::mysql(name, args, out),
        "sqlite3" => databases::sqlite3(args, out),
        "redis-cli" | "valkey-cli" => databases::redis_cli(args, out),
        "crontab" => system::crontab(args, out),
        "systemctl" => system::systemctl(args, out),
        _ if SHELLS.contains(&name) || name == "fish" => {
            interpreters::shell(name, args, ctx, out);
        }
        // A Python version (`python3.12`).
        _ if name
            .strip_prefix("python")
            .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.')) =>
        {
            interpreters::python(name, args, ctx, out);
        }
        _ if readers::reader(name, args, out) => return false,
        _ if carries_command(name, args, out) => generic(args, out),
        _ => {
            if editors::word_options_editor(name, args, out) {
                return true;
            }
            if !ctx.wrapper {
                generic(args, out);
            }
            return false;
        }
    }
    true
}

/// A program without a model: its options split the generic way (clusters split,
/// `--opt=value` kept whole) and its other words as operands. Which options take a
/// value is not known, so a value may show up as an operand; `modelled` stays
/// false.
fn generic(args: &[String], out: &mut Out) {
    let p = crate::options::parse(args, &crate::options::NONE);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
}

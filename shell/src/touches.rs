//! Files a simple command would write or delete.
//!
//! A shell command can change a file without any redirection (`sed -i`, `rm`, `mv`,
//! `tee`, an editor, …). [`file_effects`] lists those files from the command's argv so
//! that the engine can decide each one as a `path write` / `path delete` request against
//! the same policies as a direct write: `rm .git/hooks/pre-commit` must be denied exactly
//! like deleting the hook through the file API.
//!
//! The analysis is static and errs on the side of reporting too much:
//!
//! * Options are parsed with each program's real syntax (GNU permutation, `--`,
//!   combined short flags, `--opt=value`, unambiguous long-option abbreviations). An
//!   option is only taken to have a value when it is listed as such; an unlisted option
//!   is a flag, so a value we did not know about becomes an extra reported path rather
//!   than hiding the file after it. The lists still aim to be complete: an unlisted
//!   option whose value looks like an option (`curl --proxy-header -o -O URL`) would be
//!   misread.
//! * When a program writes but its targets are not on the command line (`find -delete`,
//!   `xargs rm`, `tar -x` without `-C`, `curl -O`, commands passed to an editor),
//!   [`FileEffects::unknown`] is set and the caller asks.
//! * Paths are reported as written. The one exception is a change of directory made by
//!   the command itself (`git -C D`, `env -C D`, `sudo -D D`, `patch -d D`): later
//!   relative paths are prefixed with `D/`, otherwise they would name the wrong file.
//! * A directory target (`rm -r dir`, `tar -x -C dir`) is reported as the directory
//!   only; deciding whether that covers protected files inside it is the caller's job.
//! * Code run by interpreters (`python -c`, `perl -e`, `awk` programs, `sed` scripts'
//!   `w` command) is not analysed; only in-place editing flags are.

use std::collections::HashSet;

use crate::basename;
use crate::FileOp;

/// One file a command would change, as written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEffect {
    pub op: FileOp,
    pub path: String,
}

/// What a command does to files. `unknown` is set when the command is known to write
/// but its targets cannot be determined statically (e.g. `find … -delete`, `xargs rm`,
/// `git apply` with stdin) — the caller will then treat the command as unanalysable (ask).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileEffects {
    pub effects: Vec<FileEffect>,
    pub unknown: bool,
}

/// The files the simple command `argv` (already split, quotes removed) writes or deletes.
pub fn file_effects(argv: &[String]) -> FileEffects {
    analyse(argv, 0)
}

/// Nesting limit for commands run by `find -exec` (each level is a recursive call).
const MAX_DEPTH: usize = 8;

/// Never reported: writing to them changes no file.
const PSEUDO_FILES: [&str; 4] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

fn analyse(argv: &[String], depth: usize) -> FileEffects {
    let mut out = Out::default();
    if depth > MAX_DEPTH {
        out.unknown();
        return out.fx;
    }
    let mut argv = argv;
    let mut from_stdin = false;
    // Every step strictly shortens `argv` (the inner command is a part of the wrapper's
    // arguments), so the loop ends.
    while let Some((program, args)) = argv.split_first() {
        let name = basename(program);
        match unwrap_wrapper(name, args, &mut out) {
            Wrap::Inner(inner, stdin) => {
                from_stdin |= stdin;
                argv = inner;
            }
            Wrap::Done => break,
            Wrap::NotWrapper => {
                // Under xargs, stdin supplies more arguments, options included: any
                // program that can change files may change unknown ones.
                if dispatch(name, args, &mut out, depth) && from_stdin {
                    out.unknown();
                }
                break;
            }
        }
    }
    out.fx
}

// ---------------------------------------------------------------------------
// Collected effects
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Out {
    fx: FileEffects,
    seen: HashSet<(FileOp, String)>,
    /// Directory the command changed to (`git -C`), joined to later relative paths.
    dir: Option<String>,
}

impl Out {
    fn unknown(&mut self) {
        self.fx.unknown = true;
    }

    fn chdir(&mut self, d: &str) {
        if !d.is_empty() {
            self.dir = Some(self.resolve(d));
        }
    }

    /// `p` relative to the current directory change. `~` and `$VAR` words are kept: the
    /// shell expands them to absolute paths.
    fn resolve(&self, p: &str) -> String {
        match &self.dir {
            Some(d) if !p.starts_with(['/', '~', '$']) => {
                format!("{}/{p}", d.trim_end_matches('/'))
            }
            _ => p.to_string(),
        }
    }

    fn add(&mut self, op: FileOp, path: &str) {
        // `-` is standard input/output for nearly every tool that takes a file.
        if path.is_empty() || path == "-" {
            return;
        }
        let path = self.resolve(path);
        if PSEUDO_FILES.contains(&path.as_str()) || !self.seen.insert((op, path.clone())) {
            return;
        }
        self.fx.effects.push(FileEffect { op, path });
    }

    fn write(&mut self, p: &str) {
        self.add(FileOp::Write, p);
    }

    fn delete(&mut self, p: &str) {
        self.add(FileOp::Delete, p);
    }

    fn writes<'a>(&mut self, ps: impl IntoIterator<Item = &'a str>) {
        ps.into_iter().for_each(|p| self.write(p));
    }

    fn deletes<'a>(&mut self, ps: impl IntoIterator<Item = &'a str>) {
        ps.into_iter().for_each(|p| self.delete(p));
    }

    /// A destination that may be a directory: the files land inside it under their own
    /// names, so `cp settings.json .claude/` writes `.claude/settings.json`. Both the
    /// destination and each `DST/basename(SRC)` are reported; we cannot know which it is.
    fn land_in<'a>(&mut self, dst: &str, srcs: impl IntoIterator<Item = &'a str>) {
        self.write(dst);
        let dir = dst.trim_end_matches('/');
        for src in srcs {
            // `host:path` (scp, rsync) lands under the remote file's own name.
            let name = basename(src.trim_end_matches('/'));
            let name = name.rsplit(':').next().unwrap_or(name);
            if name.is_empty() || name == "." || name == ".." {
                continue;
            }
            if dir.is_empty() {
                self.write(name);
            } else {
                self.write(&format!("{dir}/{name}"));
            }
        }
    }

    /// A file named to an editor. `f:12:3` (line and column, understood by most
    /// editors) is reported without the position.
    fn edit(&mut self, p: &str) {
        let mut s = p;
        for _ in 0..2 {
            match s.rsplit_once(':') {
                Some((head, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    s = head;
                }
                _ => break,
            }
        }
        self.write(s);
    }
}

// ---------------------------------------------------------------------------
// Option parsing
// ---------------------------------------------------------------------------

/// Command-line syntax of one program (GNU `getopt_long` unless `posix`).
#[derive(Clone, Copy)]
struct Spec {
    /// Short options taking a value, attached (`-tDIR`) or as the next argument.
    values: &'static str,
    /// Short options whose value, if any, is attached (`-i.bak`).
    attached: &'static str,
    /// Short flags. Only wrappers list them (an unlisted one makes the command
    /// unknown); elsewhere any unlisted short option is a flag.
    flags: &'static str,
    /// Long options taking a value (`--file=F` or `--file F`), space-separated.
    long_values: &'static str,
    /// Long options without a separate value that the handler asks about, or that must
    /// not pass for an abbreviation of a value option (`--head` of `--header`).
    long_flags: &'static str,
    /// Options end at the first operand instead of being permuted.
    posix: bool,
    /// `-NUM` is an option (`nice -10`).
    numeric: bool,
}

const NONE: Spec = Spec {
    values: "",
    attached: "",
    flags: "",
    long_values: "",
    long_flags: "",
    posix: false,
    numeric: false,
};

struct Opt<'a> {
    short: Option<char>,
    long: Option<&'a str>,
    value: Option<&'a str>,
}

#[derive(Default)]
struct Parsed<'a> {
    opts: Vec<Opt<'a>>,
    operands: Vec<&'a str>,
    /// Number of operands before `--`, when there is one.
    dashdash: Option<usize>,
    /// Index of the first argument not parsed as an option (`posix` specs).
    next: usize,
    /// A short option the spec does not know.
    strange: bool,
}

impl<'a> Parsed<'a> {
    fn is(o: &Opt<'_>, short: char, long: &str) -> bool {
        o.short == Some(short) || o.long == Some(long)
    }
    fn has(&self, short: char, long: &str) -> bool {
        self.opts.iter().any(|o| Self::is(o, short, long))
    }
    fn has_short(&self, short: char) -> bool {
        self.opts.iter().any(|o| o.short == Some(short))
    }
    fn has_long(&self, long: &str) -> bool {
        self.opts.iter().any(|o| o.long == Some(long))
    }
    /// The values of option `-short`/`--long` (`'\0'` for an option without a short
    /// form), in order.
    fn values(&self, short: char, long: &'static str) -> impl Iterator<Item = &'a str> + '_ {
        self.opts
            .iter()
            .filter(move |o| Self::is(o, short, long))
            .filter_map(|o| o.value)
    }
    fn operands(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.operands.iter().copied()
    }
}

/// The canonical name of long option `name` (exact, or an unambiguous abbreviation of
/// a listed option) and whether it takes a value.
fn resolve_long<'a>(name: &'a str, spec: &Spec) -> (&'a str, bool) {
    if listed(spec.long_values, name) {
        return (name, true);
    }
    if listed(spec.long_flags, name) || name.is_empty() {
        return (name, false);
    }
    let values = spec.long_values.split_whitespace().map(|n| (n, true));
    let flags = spec.long_flags.split_whitespace().map(|n| (n, false));
    let mut hits = values.chain(flags).filter(|(n, _)| n.starts_with(name));
    match (hits.next(), hits.next()) {
        (Some(hit), None) => hit,
        _ => (name, false),
    }
}

fn parse<'a>(args: &'a [String], spec: &Spec) -> Parsed<'a> {
    let mut p = Parsed::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            p.dashdash = Some(p.operands.len());
            i += 1;
            break;
        }
        let Some(body) = a.strip_prefix('-').filter(|b| !b.is_empty()) else {
            if spec.posix {
                break;
            }
            p.operands.push(a);
            i += 1;
            continue;
        };
        i += 1;
        // The next argument, consumed as an option's value.
        let take = |i: &mut usize| {
            *i += 1;
            args.get(*i - 1).map(String::as_str)
        };
        if let Some(long) = body.strip_prefix('-') {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let (name, takes) = resolve_long(name, spec);
            let value = match inline {
                Some(v) => Some(v),
                None if takes => take(&mut i),
                None => None,
            };
            p.opts.push(Opt {
                short: None,
                long: Some(name),
                value,
            });
            continue;
        }
        if spec.numeric && body.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for (k, ch) in body.char_indices() {
            let rest = body.get(k + ch.len_utf8()..).unwrap_or_default();
            let (value, last) = if spec.values.contains(ch) {
                (
                    if rest.is_empty() {
                        take(&mut i)
                    } else {
                        Some(rest)
                    },
                    true,
                )
            } else if spec.attached.contains(ch) {
                ((!rest.is_empty()).then_some(rest), true)
            } else {
                p.strange |= !spec.flags.contains(ch);
                (None, false)
            };
            p.opts.push(Opt {
                short: Some(ch),
                long: None,
                value,
            });
            if last {
                break;
            }
        }
    }
    p.next = i.min(args.len());
    if let Some(rest) = args.get(p.next..) {
        p.operands.extend(rest.iter().map(String::as_str));
    }
    p
}

/// Whether `word` is one of the space-separated `words`.
fn listed(words: &str, word: &str) -> bool {
    words.split_whitespace().any(|w| w == word)
}

/// `NAME=value` (a shell variable assignment, as `sudo` and `awk` operands).
fn is_assignment(s: &str) -> bool {
    s.split_once('=').is_some_and(|(name, _)| {
        let mut b = name.bytes();
        b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
    })
}

// ---------------------------------------------------------------------------
// Wrappers: programs that run another command
// ---------------------------------------------------------------------------

enum Wrap<'a> {
    /// The command the wrapper runs; `true` when stdin adds arguments (`xargs`).
    Inner(&'a [String], bool),
    /// A wrapper that runs nothing analysable (or was fully handled here).
    Done,
    NotWrapper,
}

/// Options of a program: short options taking a value, long options taking a value,
/// and long flags worth naming (see [`Spec`]).
const fn options(
    values: &'static str,
    long_values: &'static str,
    long_flags: &'static str,
) -> Spec {
    Spec {
        values,
        long_values,
        long_flags,
        ..NONE
    }
}

/// Options of a wrapper: its flags are listed, and its options end at the command.
const fn wrapper(
    flags: &'static str,
    values: &'static str,
    long_values: &'static str,
    long_flags: &'static str,
) -> Spec {
    Spec {
        flags,
        posix: true,
        ..options(values, long_values, long_flags)
    }
}

const ENV: Spec = wrapper(
    "i0v",
    "uCPS",
    "unset chdir split-string",
    "ignore-environment null debug list-signal-handling",
);
const SUDO: Spec = wrapper(
    "AbBEeHiKklnNPSsVv",
    "ugCDhprtUTR",
    "user group close-from chdir host prompt role type other-user \
        command-timeout chroot",
    "edit preserve-env preserve-groups",
);
const TIMEOUT: Spec = wrapper(
    "vfp",
    "sk",
    "signal kill-after",
    "foreground preserve-status verbose",
);
const NICE: Spec = Spec {
    numeric: true,
    ..wrapper("", "n", "adjustment", "")
};
const TIME: Spec = wrapper(
    "pavq",
    "fo",
    "format output",
    "append verbose quiet portability",
);
const XARGS: Spec = Spec {
    attached: "iel",
    ..wrapper(
        "0oprtx",
        "adEILnPs",
        "arg-file delimiter max-args max-procs max-chars process-slot-var",
        "eof replace max-lines null interactive verbose exit",
    )
};
const STDBUF: Spec = wrapper("", "ioe", "input output error", "");

fn unwrap_wrapper<'a>(name: &str, args: &'a [String], out: &mut Out) -> Wrap<'a> {
    let spec = match name {
        "busybox" => return inner(args, false),
        "env" => ENV,
        "sudo" => SUDO,
        "doas" => wrapper("Lns", "uC", "", ""),
        "nice" => NICE,
        "nohup" | "builtin" => wrapper("", "", "", ""),
        "timeout" => TIMEOUT,
        "command" => wrapper("pvV", "", "", ""),
        "exec" => wrapper("cl", "a", "", ""),
        "time" => TIME,
        "xargs" => XARGS,
        "stdbuf" => STDBUF,
        "setsid" => wrapper("cfw", "", "", ""),
        _ => return Wrap::NotWrapper,
    };
    let p = parse(args, &spec);
    if p.strange {
        // We cannot tell where the wrapped command starts.
        out.unknown();
        return Wrap::Done;
    }
    let mut rest = args.get(p.next..).unwrap_or_default();
    match name {
        "env" => {
            if p.has('S', "split-string") {
                out.unknown();
                return Wrap::Done;
            }
            p.values('C', "chdir").for_each(|d| out.chdir(d));
            if rest.first().is_some_and(|a| a == "-") {
                rest = rest.get(1..).unwrap_or_default();
            }
            while let Some((_, tail)) = rest.split_first().filter(|(a, _)| a.contains('=')) {
                rest = tail;
            }
        }
        "sudo" => {
            p.values('D', "chdir").for_each(|d| out.chdir(d));
            if p.has('e', "edit") {
                // `sudo -e FILE…` is sudoedit.
                rest.iter().for_each(|f| out.edit(f));
                return Wrap::Done;
            }
            while let Some((_, tail)) = rest.split_first().filter(|(a, _)| is_assignment(a)) {
                rest = tail;
            }
        }
        "timeout" => rest = rest.get(1..).unwrap_or_default(), // the duration
        "command" if p.has_short('v') || p.has_short('V') => return Wrap::Done,
        "time" => out.writes(p.values('o', "output")),
        "xargs" => return inner(rest, true),
        _ => {}
    }
    inner(rest, false)
}

fn inner(argv: &[String], stdin: bool) -> Wrap<'_> {
    if argv.is_empty() {
        Wrap::Done
    } else {
        Wrap::Inner(argv, stdin)
    }
}

// ---------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------

/// Records the effects of program `name`. Returns whether the program can change files
/// at all (some arguments might make it write), which matters under `xargs`.
fn dispatch(name: &str, args: &[String], out: &mut Out, depth: usize) -> bool {
    match name {
        "rm" | "unlink" => out.deletes(parse(args, &NONE).operands()),
        "rmdir" => rmdir(args, out),
        "shred" => shred(args, out),
        "mv" => mv(args, out),
        "cp" | "ln" | "install" | "scp" => copy(name, args, out),
        "rsync" => rsync(args, out),
        "tee" | "sponge" | "touch" | "truncate" | "mkdir" => {
            let spec = match name {
                "touch" => options("drt", "date reference time", ""),
                "truncate" => options("rs", "reference size", ""),
                "mkdir" => options("m", "mode", ""),
                _ => NONE,
            };
            out.writes(parse(args, &spec).operands());
        }
        "sort" => {
            let p = parse(args, &SORT);
            out.writes(p.values('o', "output"));
        }
        "dd" => out.writes(args.iter().filter_map(|a| a.strip_prefix("of="))),
        "chmod" | "chown" | "chgrp" => chmod(name, args, out),
        "chattr" => chattr(args, out),
        "setfacl" => {
            let p = parse(args, &SETFACL);
            // `--restore` and `-` take the file names from a file or stdin.
            if p.has_long("restore") || p.operands.contains(&"-") {
                out.unknown();
            }
            out.writes(p.operands());
        }
        "sed" | "gsed" => sed(args, out),
        "perl" => interpreter(args, "eEIMm", "CdDFVx", "eE", out),
        "ruby" => interpreter(args, "CeEIr", "FKTWx", "e", out),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args, out),
        "patch" => patch(args, out),
        "git" => return git(args, out),
        "tar" | "gtar" | "bsdtar" => tar(args, out),
        "unzip" => {
            let p = parse(args, &options("dP", "", ""));
            // List, test and print modes write nothing.
            if !"clptvzZ".chars().any(|c| p.has_short(c)) {
                // The member names come from the archive: unknown, wherever they land.
                out.writes(p.values('d', ""));
                out.unknown();
            }
        }
        "cpio" => cpio(args, out),
        "curl" => curl(args, out),
        "wget" => wget(args, out),
        "ssh-keygen" => ssh_keygen(args, out),
        "openssl" => {
            let mut it = args.iter();
            while let Some(a) = it.next() {
                if matches!(
                    a.trim_start_matches('-'),
                    "out" | "keyout" | "outdir" | "certout"
                ) {
                    out.writes(it.next().map(String::as_str));
                }
            }
        }
        "find" => find(args, out, depth),
        "vi" | "vim" | "nvim" | "view" | "vimdiff" | "gvim" | "rvim" | "ex" => vim(name, args, out),
        "ed" | "red" => {
            // ed reads its commands from stdin, and they can write any file (`w F`).
            out.unknown();
            let p = parse(args, &options("p", "prompt", ""));
            p.operands().for_each(|f| out.edit(f));
        }
        "sudoedit" => parse(args, &SUDO).operands().for_each(|f| out.edit(f)),
        _ => match EDITORS.iter().find(|e| listed(e.names, name)) {
            Some(e) => editor(e, args, out),
            None => return false,
        },
    }
    true
}

fn rmdir(args: &[String], out: &mut Out) {
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

fn shred(args: &[String], out: &mut Out) {
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
fn mv(args: &[String], out: &mut Out) {
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
fn copy(name: &str, args: &[String], out: &mut Out) {
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

fn rsync(args: &[String], out: &mut Out) {
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
fn chmod(name: &str, args: &[String], out: &mut Out) {
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
fn chattr(args: &[String], out: &mut Out) {
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

/// `sed -i`: the files after the script (the first operand unless `-e`/`-f` gave it).
fn sed(args: &[String], out: &mut Out) {
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
fn interpreter(args: &[String], values: &str, attached: &str, code: &str, out: &mut Out) {
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
fn awk(args: &[String], out: &mut Out) {
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
fn patch(args: &[String], out: &mut Out) {
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
fn git(args: &[String], out: &mut Out) -> bool {
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
fn tar(args: &[String], out: &mut Out) {
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
        out.writes(p.values('f', "file"));
        out.writes(p.values('g', "listed-incremental"));
        if p.has_long("remove-files") {
            out.deletes(p.operands());
        }
    }
    out.writes(p.values('\0', "index-file"));
    out.writes(p.values('\0', "volno-file"));
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
fn cpio(args: &[String], out: &mut Out) {
    let spec = options(
        "CDEFHIMORW",
        "block-size directory file format io-size message owner pattern-file \
            rsh-command to-command",
        "create extract list pass-through to-stdout",
    );
    let p = parse(args, &spec);
    p.values('D', "directory").for_each(|d| out.chdir(d));
    if p.has('o', "create") {
        out.writes(p.values('F', "file"));
        out.writes(p.values('O', ""));
    } else if p.has('p', "pass-through") {
        out.writes(p.operands());
    } else if p.has('i', "extract") && !p.has('t', "list") && !p.has_long("to-stdout") {
        out.unknown();
    }
}

fn curl(args: &[String], out: &mut Out) {
    let spec = options(
        "AbcCdDeEFHKmoPQrtTuUwxXyYz",
        "alt-svc cacert capath cert ciphers config connect-timeout connect-to \
            continue-at cookie cookie-jar data data-ascii data-binary data-raw data-urlencode \
            dump-header etag-compare etag-save form form-string ftp-port header hsts \
            interface json key libcurl limit-rate max-filesize max-redirs max-time noproxy \
            oauth2-bearer output output-dir pass proto proxy proxy-header proxy-user quote \
            range referer request resolve retry retry-delay retry-max-time speed-limit \
            speed-time stderr telnet-option time-cond trace trace-ascii unix-socket \
            upload-file url user user-agent variable write-out",
        "head netrc remote-name remote-name-all remote-header-name",
    );
    let p = parse(args, &spec);
    let dir = p.values('\0', "output-dir").last();
    // Names from the URL or server, or options from a config file.
    let remote = [
        ('O', "remote-name"),
        ('J', "remote-header-name"),
        ('K', "config"),
    ];
    if remote.iter().any(|(s, l)| p.has(*s, l)) || p.has_long("remote-name-all") {
        out.unknown();
        out.writes(dir);
    }
    for f in p.values('o', "output") {
        match dir {
            Some(d) if !f.starts_with(['/', '~', '$']) && f != "-" => {
                out.write(&format!("{}/{f}", d.trim_end_matches('/')));
            }
            _ => out.write(f),
        }
    }
    out.writes(p.values('D', "dump-header"));
    out.writes(p.values('c', "cookie-jar"));
    for l in [
        "alt-svc",
        "etag-save",
        "hsts",
        "libcurl",
        "stderr",
        "trace",
        "trace-ascii",
    ] {
        out.writes(p.values('\0', l));
    }
}

fn wget(args: &[String], out: &mut Out) {
    let spec = options(
        "aABDeiIlnoOPQRtTUwX",
        "accept accept-regex append-output base bind-address body-data body-file \
            ca-certificate certificate config connect-timeout cut-dirs default-page \
            directory-prefix dns-timeout domains exclude-directories exclude-domains execute \
            header hsts-file http-password http-user include-directories input-file level \
            limit-rate load-cookies method output-document output-file password post-data \
            post-file private-key quota read-timeout referer reject reject-regex rejected-log \
            save-cookies timeout tries user user-agent wait waitretry warc-file",
        "spider",
    );
    let p = parse(args, &spec);
    if p.has('e', "execute") || p.has_long("config") {
        out.unknown(); // wgetrc commands can set the output file
    }
    let docs: Vec<&str> = p.values('O', "output-document").collect();
    let fetches = !p.operands.is_empty() || p.has('i', "input-file");
    if docs.is_empty() && fetches && !p.has_long("spider") {
        out.unknown(); // file names come from the URLs
    }
    out.writes(docs);
    out.writes(p.values('o', "output-file"));
    out.writes(p.values('a', "append-output"));
    out.writes(p.values('\0', "save-cookies"));
    out.writes(p.values('\0', "rejected-log"));
}

fn ssh_keygen(args: &[String], out: &mut Out) {
    let p = parse(args, &options("abCDEfFgIjJmMnNOPrRstVwYzZ", "", ""));
    // Print, fingerprint, search and conversion modes only read.
    if "BDeFilLQy".chars().any(|c| p.has_short(c)) {
        return;
    }
    let files: Vec<&str> = p.values('f', "").collect();
    // Signing and resident-key download write next to other files; without -f the
    // key path is prompted for.
    if files.is_empty() || "AKsY".chars().any(|c| p.has_short(c)) {
        out.unknown();
    }
    let generates = !"cHkpRu".chars().any(|c| p.has_short(c));
    for f in files {
        out.write(f);
        if generates {
            out.write(&format!("{f}.pub"));
        }
    }
}

/// `find … -delete` / `-exec CMD {} ;`: the files come from the traversal.
fn find(args: &[String], out: &mut Out, depth: usize) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "-delete" => out.unknown(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                out.writes(args.get(i).map(String::as_str))
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let rest = args.get(i..).unwrap_or_default();
                let end = rest
                    .iter()
                    .enumerate()
                    .position(|(k, w)| {
                        w == ";"
                            || (w == "+" && k > 0 && rest.get(k - 1).is_some_and(|p| p == "{}"))
                    })
                    .unwrap_or(rest.len());
                let fx = analyse(rest.get(..end).unwrap_or_default(), depth + 1);
                // `{}` is each found file; `-execdir` runs in each file's directory.
                for e in fx.effects {
                    if e.path.contains("{}") || a.contains("dir") {
                        out.unknown();
                    } else {
                        out.add(e.op, &e.path);
                    }
                }
                if fx.unknown {
                    out.unknown();
                }
                i += end + 1;
            }
            _ => {}
        }
    }
}

/// vi, vim, nvim, ex: every file operand is written. Commands given on the command
/// line (`-c`, `--cmd`, `+cmd`, `-S`, `-s`) and Ex mode (commands read from stdin, `-e`)
/// can write any file: unknown.
fn vim(name: &str, args: &[String], out: &mut Out) {
    let mut ex = name == "ex";
    if ex {
        out.unknown();
    }
    let (values, commands) = if name == "nvim" {
        ("cilsStTuUwW", "clsSt")
    } else {
        ("cisStTuUwW", "csSt")
    };
    let (mut i, mut files_only) = (0, false);
    while let Some(a) = args.get(i) {
        i += 1;
        if files_only || a == "-" || !a.starts_with(['-', '+']) {
            out.edit(a);
        } else if a == "--" {
            files_only = true;
        } else if let Some(cmd) = a.strip_prefix('+') {
            // `+N` and `+/pattern` only move the cursor.
            if !(cmd.starts_with('/') || cmd.bytes().all(|b| b.is_ascii_digit())) {
                out.unknown();
            }
        } else if let Some(long) = a.strip_prefix("--") {
            match long {
                "cmd" | "remote-expr" | "remote-send" => {
                    out.unknown();
                    i += 1;
                }
                "startuptime" | "log" => {
                    out.writes(args.get(i).map(String::as_str));
                    i += 1;
                }
                "servername" | "listen" | "socketid" | "windowid" => i += 1,
                _ => {}
            }
        } else {
            let cluster = a.get(1..).unwrap_or_default();
            for (k, ch) in cluster.char_indices() {
                let rest = cluster.get(k + ch.len_utf8()..).unwrap_or_default();
                if matches!(ch, 'e' | 'E') {
                    ex = true;
                    out.unknown();
                } else if ch == 's' && ex {
                    // silent mode in Ex mode, not a script
                } else if ch == 'q' {
                    out.unknown(); // the quickfix file names the files to edit
                    break;
                } else if ch == 'V' {
                    break; // `-V[N][file]`
                } else if values.contains(ch) {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(String::as_str)
                    } else {
                        Some(rest)
                    };
                    if commands.contains(ch) {
                        out.unknown();
                    }
                    if "iwW".contains(ch) && value != Some("NONE") {
                        out.writes(value);
                    }
                    break;
                }
            }
        }
    }
}

/// An editor whose options are whole words (`-nw`, `-config-dir`).
/// All fields are space-separated words.
struct Editor {
    names: &'static str,
    /// Options taking the next argument (unless written `--opt=value`).
    values: &'static str,
    /// Options running editor commands or code (they take a value too): unknown.
    commands: &'static str,
    /// Options whose value is a file to edit or write.
    files: &'static str,
}

const EDITORS: &[Editor] = &[
    Editor {
        names: "nano rnano pico",
        values: "-C --backupdir -f --rcfile -J --guidestripe -o --operatingdir -Q --quotestr \
            -r --fill -s --speller -T --tabsize -X --wordchars -Y --syntax",
        commands: "",
        files: "",
    },
    Editor {
        names: "emacs emacsclient",
        values: "-a --alternate-editor -bd -bg -bw -cr -d --display -fg -fn --font -g \
            --geometry -ib --init-directory --insert -L --directory -lsp -ms --name -s \
            --socket-name --server-file -T --title -t --terminal -u --user",
        commands: "-e --eval -eval --execute -execute -f --funcall -funcall -l --load -load \
            --script -script -x --chdir",
        files: "--file --find-file --visit -file -find-file -visit",
    },
    Editor {
        names: "code code-insiders codium cursor subl sublime_text",
        values: "--category --enable-proposed-api --extensions-dir --install-extension \
            --locale --log --profile --project --sync --uninstall-extension --user-data-dir",
        commands: "--command",
        files: "",
    },
    Editor {
        names: "micro joe jmacs jpico jstar rjoe",
        values: "-config-dir",
        commands: "",
        files: "",
    },
    Editor {
        names: "hx helix",
        values: "-c --config -g --grammar",
        commands: "-w --working-dir",
        files: "--log",
    },
    Editor {
        names: "kak",
        values: "-c -s -ui -debug -i",
        commands: "-e -E -p -f",
        files: "",
    },
];

fn editor(e: &Editor, args: &[String], out: &mut Out) {
    let mut it = args.iter();
    let mut files_only = false;
    while let Some(a) = it.next() {
        if files_only || a == "-" || !a.starts_with(['-', '+']) {
            out.edit(a);
        } else if a == "--" {
            files_only = true;
        } else if a.starts_with('-') {
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (a.as_str(), None),
            };
            let known = |words: &str| listed(words, name);
            let value = match inline {
                Some(v) => Some(v),
                None if known(e.values) || known(e.commands) || known(e.files) => {
                    it.next().map(String::as_str)
                }
                None => None,
            };
            if known(e.commands) {
                out.unknown();
            }
            if known(e.files) {
                value.into_iter().for_each(|f| out.edit(f));
            }
        }
        // `+LINE[:COL]`, `+/pattern`: a position in the next file.
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use proptest::strategy::Strategy;

    fn fx(line: &str) -> FileEffects {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        file_effects(&argv)
    }

    fn fxv(argv: &[&str]) -> FileEffects {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        file_effects(&argv)
    }

    /// Effects as `w:path` / `d:path` strings, in order.
    fn show(f: &FileEffects) -> Vec<String> {
        f.effects
            .iter()
            .map(|e| {
                let op = match e.op {
                    FileOp::Read => "r",
                    FileOp::Write => "w",
                    FileOp::Delete => "d",
                };
                format!("{op}:{}", e.path)
            })
            .collect()
    }

    /// Known effects, no `unknown`.
    #[track_caller]
    fn known(line: &str, expected: &[&str]) {
        let f = fx(line);
        assert_eq!(show(&f), expected, "{line}");
        assert!(!f.unknown, "{line}: unexpectedly unknown");
    }

    /// `unknown`, with these effects.
    #[track_caller]
    fn unknown(line: &str, expected: &[&str]) {
        let f = fx(line);
        assert_eq!(show(&f), expected, "{line}");
        assert!(f.unknown, "{line}: expected unknown");
    }

    #[test]
    fn reads_and_unknown_programs_have_no_effects() {
        for line in [
            "ls -la",
            "cat .contextos/policies/x.policy",
            "grep -r foo .git",
            "less contextos.toml",
            "head -n 5 f",
            "python -c print(1)",
            "node -e 1",
            "tee",
            "sed -n p f",
            "sed s/a/b/ f",
            "perl -pe s/a/b/ f",
            "awk {print} f",
            "git status",
            "git log -- f",
            "xargs grep foo",
            "xargs",
            "sort f",
            "tar -tf a.tar",
            "unzip -l a.zip",
            "command -v rm",
            "curl https://x",
            "openssl x509 -in cert -noout",
            "ssh-keygen -l -f key",
            "git config user.name",
            "git config --get user.name",
            "git config -f .gitmodules --list",
            "git apply --check p.diff",
            "git clean -n",
            "rsync -av src",
            "mv onlyone",
            "patch --dry-run f",
        ] {
            known(line, &[]);
        }
    }

    #[test]
    fn never_panics_on_degenerate_input() {
        let cases: &[&[&str]] = &[
            &[],
            &[""],
            &["--"],
            &["rm", "--"],
            &["sed", "-i", "-e"],
            &["sed", "--expression"],
            &["cp", "-t"],
            &["mv", "--target-directory"],
            &["timeout"],
            &["timeout", "-s"],
            &["sudo", "-u"],
            &["env", "-C"],
            &["git", "-C"],
            &["git"],
            &["git", "rm"],
            &["tar", "xf"],
            &["tar", "-"],
            &["find", ".", "-exec"],
            &["find", "-exec", ";"],
            &["find", "-exec", "+"],
            &["perl", "-i"],
            &["perl", "-e"],
            &["ruby", "-"],
            &["vim", "-c"],
            &["vim", "-"],
            &["vim", "-é"],
            &["emacs", "--eval"],
            &["chattr", "-p"],
            &["chmod"],
            &["dd", "of="],
            &["xargs", "-I"],
            &["rmdir", "-p", "/"],
            &["rmdir", "-p", "//a//"],
            &["openssl", "-out"],
            &["busybox"],
            &["nice", "-n"],
            &["ln", "-s", "/"],
            &["é", "-ü"],
        ];
        for argv in cases {
            let _ = fxv(argv);
        }
        // Nested `find -exec` beyond the depth limit is unknown, not a stack overflow.
        let mut deep: Vec<&str> = Vec::new();
        for _ in 0..200 {
            deep.extend(["find", ".", "-exec"]);
        }
        deep.extend(["rm", "x"]);
        assert!(fxv(&deep).unknown);
    }

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

    #[test]
    fn sed_in_place() {
        known(
            "sed -i s/a/b/ .contextos/policies/x.policy",
            &["w:.contextos/policies/x.policy"],
        );
        known("sed -e s/a/b/ -i f1 f2", &["w:f1", "w:f2"]);
        known("sed -i.bak s/x/y/ f", &["w:f"]);
        known("sed --in-place=.orig -e x f", &["w:f"]);
        known("sed -Ei s/a/b/ f", &["w:f"]);
        known("sed -ni p f", &["w:f"]);
        // `-ie` is -i with suffix "e", not -e: the script is the first operand.
        known("sed -ie s/a/b/ f", &["w:f"]);
        known("sed -f script.sed -i f", &["w:f"]);
        known("sed --expression=s/a/b/ --in-place f", &["w:f"]);
        known("sed --in-pl s/a/b/ f", &["w:f"]);
        known("sed -l 5 -i s/a/b/ f", &["w:f"]);
        known("sed -i -- s/a/b/ -f", &["w:-f"]);
        // BSD `sed -i ''`: read the GNU way, the file is still reported.
        known("sed -i .bak s/a/b/ f", &["w:s/a/b/", "w:f"]);
    }

    #[test]
    fn interpreters_in_place() {
        known("perl -pi -e s/a/b/ f g", &["w:f", "w:g"]);
        known("perl -i.bak -pe s/a/b/ f", &["w:f"]);
        known("perl -0777 -pi -e s/a/b/ f", &["w:f"]);
        known("perl -0777pi -e s/a/b/ f", &["w:f"]);
        known("perl -i -p script.pl f", &["w:f"]);
        known("perl -I lib -pi -e 1 f", &["w:f"]);
        known("perl -Mstrict -i -pe 1 -- f", &["w:f"]);
        // `-pie CODE`: -i takes "e" as its extension, CODE is the script file.
        known("perl -pie s/a/b/ f", &["w:f"]);
        known("ruby -i -pe sub(/a/,'b') f", &["w:f"]);
        known("ruby -r json -i.bak -ne 1 f", &["w:f"]);
        known("awk -i inplace {print} f", &["w:f"]);
        known(
            "gawk -i inplace -v x=1 -f prog.awk f y=2 g",
            &["w:f", "w:g"],
        );
        known("gawk --include=inplace -e 1 f", &["w:f"]);
        known("gawk -ifoo {print} f", &[]);
        known("gawk -o/tmp/pretty {print} f", &["w:/tmp/pretty"]);
    }

    #[test]
    fn patch_and_git_apply() {
        known("patch f p.diff", &["w:f"]);
        known("patch -p1 -i p.diff f", &["w:f"]);
        known("patch -o out f", &["w:out"]);
        known("patch -d sub -p0 f", &["w:sub/f"]);
        unknown("patch -p1", &[]);
        unknown("patch -i p.diff", &[]);
        unknown("git apply p.diff", &[]);
        unknown("git apply --stat --apply p.diff", &[]);
    }

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

    #[test]
    fn archives() {
        unknown("tar -xf a.tar", &[]);
        unknown("tar xzf a.tgz", &[]);
        unknown("tar -xf a.tar -C dir", &["w:dir"]);
        unknown("tar xzf a.tgz -C .contextos", &["w:.contextos"]);
        unknown("tar -x -f a.tar --directory=d", &["w:d"]);
        unknown("tar -xf a.tar member", &["w:member"]);
        unknown("tar -xf a.tar -C . --transform s,^,.contextos/,", &["w:."]);
        unknown("tar -xf a.tar --one-top-level=.contextos -C d", &["w:d"]);
        unknown("tar -xPf a.tar -C d", &["w:d"]);
        known("tar -xOf a.tar member", &[]);
        known("tar -czf out.tgz src", &["w:out.tgz"]);
        known("tar cf out.tar src", &["w:out.tar"]);
        known("tar --create --file out.tar src", &["w:out.tar"]);
        known("tar -cf - src", &[]);
        known("tar -cf a.tar --remove-files x", &["w:a.tar", "d:x"]);
        unknown("tar -xf a.tar --to-command=sh", &[]);
        unknown("unzip a.zip", &[]);
        unknown("unzip -o a.zip -d out", &["w:out"]);
        known("unzip -p a.zip f", &[]);
        unknown("cpio -idv", &[]);
        known("cpio -it", &[]);
        known("cpio -o -F out.cpio", &["w:out.cpio"]);
        known("cpio -pdm dest", &["w:dest"]);
    }

    #[test]
    fn network_and_crypto() {
        known(
            "curl -sSL -o .claude/settings.json https://x",
            &["w:.claude/settings.json"],
        );
        known("curl --output f https://x", &["w:f"]);
        known("curl -H -o -o f https://x", &["w:f"]);
        known("curl --head -o f https://x", &["w:f"]);
        known("curl -o- https://x", &[]);
        known(
            "curl --output-dir .claude -o settings.json u",
            &["w:.claude/settings.json"],
        );
        known("curl -D h -c jar u", &["w:h", "w:jar"]);
        unknown("curl -O https://x/settings.json", &[]);
        unknown("curl -sLO https://x/y", &[]);
        known("wget -O f https://x", &["w:f"]);
        known("wget -qO- https://x", &[]);
        known("wget -nv -O f u", &["w:f"]);
        unknown("wget https://x/f", &[]);
        known("wget --spider u", &[]);
        known(
            "ssh-keygen -t ed25519 -N x -f .git/k",
            &["w:.git/k", "w:.git/k.pub"],
        );
        known("ssh-keygen -R host -f known_hosts", &["w:known_hosts"]);
        unknown("ssh-keygen -t ed25519", &[]);
        known("openssl genrsa -out key.pem 2048", &["w:key.pem"]);
        known(
            "openssl req -new -keyout k -out c -subj /CN=x",
            &["w:k", "w:c"],
        );
    }

    #[test]
    fn find_and_xargs() {
        unknown("find . -name x -delete", &[]);
        unknown("find . -exec rm {} ;", &[]);
        unknown("find . -exec rm -f {} +", &[]);
        known("find . -name *.rs -exec grep -l foo {} +", &[]);
        known("find . -exec cat {} ; -fprint out", &["w:out"]);
        // Into a directory, the names would come from `{}`: unknown.
        unknown(
            "find . -exec cp {} .claude/settings.json ;",
            &["w:.claude/settings.json"],
        );
        unknown("find . -execdir touch x ;", &[]);
        unknown("xargs rm", &[]);
        unknown("xargs -0 -n1 rm -f", &[]);
        unknown("xargs sed -n p", &[]);
        unknown("xargs -I{} mv {} dest", &["d:{}", "w:dest", "w:dest/{}"]);
        unknown("xargs sudo rm", &[]);
        unknown("xargs git rm", &[]);
        known("xargs git log", &[]);
        known("xargs -a list wc -l", &[]);
    }

    #[test]
    fn wrappers() {
        known("sudo -u root tee -a f", &["w:f"]);
        known("sudo --user=root -E -- VAR=1 rm x", &["d:x"]);
        known("env A=1 B=2 truncate -s 0 f", &["w:f"]);
        known("env -i - rm x", &["d:x"]);
        known("env -u A -C sub rm x", &["d:sub/x"]);
        known("sudo -D /etc rm x", &["d:/etc/x"]);
        known("timeout -s KILL 5 rm f", &["d:f"]);
        known("timeout --kill-after=3 10 rm f", &["d:f"]);
        known("nice -n 5 rm f", &["d:f"]);
        known("nice -10 rm f", &["d:f"]);
        known("nohup rm f", &["d:f"]);
        known("command rm f", &["d:f"]);
        known("exec -a name rm f", &["d:f"]);
        known("time -o t.log rm f", &["w:t.log", "d:f"]);
        known("doas -u root rm f", &["d:f"]);
        known("stdbuf -oL tee f", &["w:f"]);
        known("setsid -f rm f", &["d:f"]);
        known("busybox rm f", &["d:f"]);
        known("/bin/busybox sed -i s/a/b/ f", &["w:f"]);
        known("sudo nice -n 5 nohup timeout 5 env A=1 rm f", &["d:f"]);
        known("sudo -e /etc/hosts", &["w:/etc/hosts"]);
        known("sudoedit -u root /etc/hosts", &["w:/etc/hosts"]);
        known("sudo", &[]);
        // An option we do not know: we cannot tell where the command starts.
        unknown("sudo -Z rm f", &[]);
        unknown("env -S 'rm f'", &[]);
    }

    #[test]
    fn editors() {
        known("vim .github/hooks/x.json", &["w:.github/hooks/x.json"]);
        known("vim -O a b", &["w:a", "w:b"]);
        known("vim -O2 -R +10 a", &["w:a"]);
        known("vim +/foo -u NONE -- -a", &["w:-a"]);
        known("vim -i NONE f", &["w:f"]);
        known("vim -w keys f", &["w:keys", "w:f"]);
        known("nvim f:12:3", &["w:f"]);
        unknown("vim -c wq f", &["w:f"]);
        unknown("vim +wq f", &["w:f"]);
        unknown("vim -es f", &["w:f"]);
        unknown("vim --cmd x f", &["w:f"]);
        unknown("ex f", &["w:f"]);
        unknown("ed -s f", &["w:f"]);
        known("nano -T 4 f", &["w:f"]);
        known("nano +3,2 f", &["w:f"]);
        known("pico f", &["w:f"]);
        known("emacs -nw -Q f", &["w:f"]);
        known("emacs --file=f -T title g", &["w:f", "w:g"]);
        unknown("emacs --chdir d g", &["w:g"]);
        unknown("emacs --batch f --eval (save-buffer)", &["w:f"]);
        known("code -g f:10", &["w:f"]);
        known("code --user-data-dir d f", &["w:f"]);
        known("subl -n f", &["w:f"]);
        known("micro f", &["w:f"]);
        known("hx --log l f", &["w:l", "w:f"]);
        known("helix -c cfg f", &["w:f"]);
        known("kak -ui curses f", &["w:f"]);
        unknown("kak -e q f", &["w:f"]);
        known("joe f", &["w:f"]);
    }

    const PROGRAMS: &[&str] = &[
        "rm",
        "rmdir",
        "shred",
        "mv",
        "cp",
        "ln",
        "install",
        "rsync",
        "tee",
        "touch",
        "dd",
        "chmod",
        "chattr",
        "setfacl",
        "sed",
        "perl",
        "ruby",
        "gawk",
        "patch",
        "git",
        "tar",
        "unzip",
        "cpio",
        "curl",
        "wget",
        "ssh-keygen",
        "openssl",
        "find",
        "vim",
        "nvim",
        "ed",
        "emacs",
        "kak",
        "sudo",
        "env",
        "nice",
        "timeout",
        "xargs",
        "busybox",
        "time",
        "command",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Any argv of any analysed program (wrappers nest) is handled without panicking.
        #[test]
        fn arbitrary_argv_never_panics(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(PROGRAMS).prop_map(str::to_string),
                    "(-{0,2}[a-zA-Z0-9@.=:+{};/é-]{0,6})",
                ],
                0..14,
            )
        ) {
            let _ = file_effects(&words);
        }
    }

    #[test]
    fn paths_are_reported_as_written() {
        known(
            "rm $HOME/x ~/y ./z a//b",
            &["d:$HOME/x", "d:~/y", "d:./z", "d:a//b"],
        );
        known("git -C sub rm $HOME/x ~/y", &["d:$HOME/x", "d:~/y"]);
        known("rm f f", &["d:f"]);
        let f = fxv(&["rm", "a b", ""]);
        assert_eq!(show(&f), ["d:a b"]);
    }
}

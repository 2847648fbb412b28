//! What one command does to files, and the collector the file models report into.

use std::collections::HashSet;

use crate::file_op::{changes_no_file, FileOp};
use crate::names::basename;

/// One file a command reads, writes or deletes, as written on the command line: the
/// caller decides it as a path request, like a direct read, write or delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEffect {
    /// What the command does to the file.
    pub op: FileOp,
    /// The path as written, prefixed with a directory the command itself changed to.
    pub path: String,
    /// A guess `DST/basename(SRC)` for a copy, move, link or install onto a
    /// destination that may be a directory: it only holds when DST is an existing
    /// directory, which the caller can check and this model cannot.
    pub into_dir: bool,
}

/// A link a command creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkMade {
    /// The link, as written.
    pub path: String,
    /// What it points to, as written (for a hard link, the file it shares).
    pub target: String,
    /// A symbolic link (`ln -s`), not a hard one.
    pub symbolic: bool,
}

/// What one simple command does, as far as its argv tells: the files it reads,
/// writes and deletes, where it connects, the code it runs, and its options and
/// operands read with the program's own syntax.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileEffects {
    /// The files named, in order, each once per operation.
    pub effects: Vec<FileEffect>,
    /// The command changes files that are not all listed in `effects` (e.g.
    /// `find … -delete`, `xargs rm`, `git apply`): the caller cannot know them all.
    pub unknown: bool,
    /// Network destinations as written: a URL, `host`, `host:port`, `user@host`, a
    /// git remote, or the name a DNS tool looks up.
    pub network: Vec<String>,
    /// Code strings run by an interpreter other than the shell (`python -c`, `perl
    /// -e`, an awk program, SQL given to a database client, …).
    pub code: Vec<String>,
    /// Why some code the command runs is not visible: an interpreter reading its
    /// program from standard input, a program carrying a command we do not unwrap
    /// (`docker exec … sh -c`, `pwsh -c`), a script that runs commands (`sed e`).
    pub opaque: Vec<String>,
    /// The options of the program (not of the commands it wraps), normalised: long
    /// options in full (`--no-veri` is `--no-verify`), values joined with `=`, short
    /// clusters split, short options written long where the program (and
    /// subcommand) defines it (`git commit -n` is `--no-verify`).
    pub options: Vec<String>,
    /// The subcommand path after the global options (`["s3", "rm"]`, `["push"]`).
    pub subcommand: Vec<String>,
    /// The words after the subcommand that are neither options nor their values.
    pub operands: Vec<String>,
    /// Options the program's model does not know, as written: an allow must not
    /// cover what they might do.
    pub unknown_options: Vec<String>,
    /// Links the command creates.
    pub links: Vec<LinkMade>,
    /// Script files the command runs (`sh x.sh`, `python x.py`, `source f`); the
    /// program itself (`./x`) is not one.
    pub runs_files: Vec<String>,
    /// The program has a model of its options (and subcommands): `options`,
    /// `operands` and `unknown_options` can be trusted.
    pub modelled: bool,
}

/// The effects found so far for one command.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) fx: FileEffects,
    seen: HashSet<(FileOp, String)>,
    /// Directory the command changed to (`git -C`), joined to later relative paths.
    dir: Option<String>,
    /// How many wrappers deep the program being read is: the options, subcommand
    /// and operands are the outermost program's only.
    pub(crate) nested: usize,
}

impl Out {
    /// The effects found.
    pub(crate) fn into_effects(self) -> FileEffects {
        self.fx
    }

    pub(crate) fn unknown(&mut self) {
        self.fx.unknown = true;
    }

    pub(crate) fn chdir(&mut self, d: &str) {
        if !d.is_empty() {
            self.dir = Some(self.resolve(d));
        }
    }

    /// `p` relative to the current directory change. `~` and `$VAR` words are kept: the
    /// shell expands them to absolute paths.
    pub(crate) fn resolve(&self, p: &str) -> String {
        match &self.dir {
            Some(d) if !p.starts_with(['/', '~', '$']) => {
                format!("{}/{p}", d.trim_end_matches('/'))
            }
            _ => p.to_string(),
        }
    }

    pub(crate) fn add(&mut self, op: FileOp, path: &str) {
        self.add_as(op, path, false);
    }

    fn add_as(&mut self, op: FileOp, path: &str, into_dir: bool) {
        // `-` is standard input/output for nearly every tool that takes a file.
        if path.is_empty() || path == "-" {
            return;
        }
        let path = self.resolve(path);
        if changes_no_file(&path) || path == "/dev/stdin" || path == "/dev/zero" {
            return;
        }
        if !self.seen.insert((op, path.clone())) {
            // Named outright after being guessed: no longer a guess.
            if !into_dir {
                self.fx
                    .effects
                    .iter_mut()
                    .filter(|e| e.op == op && e.path == path)
                    .for_each(|e| e.into_dir = false);
            }
            return;
        }
        self.fx.effects.push(FileEffect { op, path, into_dir });
    }

    pub(crate) fn read(&mut self, p: &str) {
        self.add(FileOp::Read, p);
    }

    pub(crate) fn reads<'a>(&mut self, ps: impl IntoIterator<Item = &'a str>) {
        ps.into_iter().for_each(|p| self.read(p));
    }

    /// A network destination, as written.
    pub(crate) fn net(&mut self, dest: &str) {
        if !dest.is_empty() && !self.fx.network.iter().any(|d| d == dest) {
            self.fx.network.push(dest.to_string());
        }
    }

    pub(crate) fn nets<'a>(&mut self, dests: impl IntoIterator<Item = &'a str>) {
        dests.into_iter().for_each(|d| self.net(d));
    }

    /// A code string run by an interpreter.
    pub(crate) fn code(&mut self, code: &str) {
        self.fx.code.push(code.to_string());
    }

    /// Why some code the command runs is not visible.
    pub(crate) fn opaque(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.fx.opaque.contains(&why) {
            self.fx.opaque.push(why);
        }
    }

    /// A script file the command runs (and so reads).
    pub(crate) fn runs_file(&mut self, p: &str) {
        if p.is_empty() || p == "-" {
            return;
        }
        self.read(p);
        let p = self.resolve(p);
        if !self.fx.runs_files.contains(&p) {
            self.fx.runs_files.push(p);
        }
    }

    /// A link made at `path` to `target`; a hard link also writes its target (writing
    /// through the link changes it).
    pub(crate) fn link(&mut self, path: &str, target: &str, symbolic: bool) {
        let path = self.resolve(path);
        let target = if symbolic {
            target.to_string()
        } else {
            self.write(target);
            self.resolve(target)
        };
        self.fx.links.push(LinkMade {
            path,
            target,
            symbolic,
        });
    }

    /// Whether the program being read is the command itself, not one it wraps.
    fn top(&self) -> bool {
        self.nested == 0
    }

    /// The program has a model of its options.
    pub(crate) fn modelled(&mut self) {
        if self.top() {
            self.fx.modelled = true;
        }
    }

    /// The program's options are not all known after all (an external subcommand).
    pub(crate) fn unmodelled(&mut self) {
        if self.top() {
            self.fx.modelled = false;
        }
    }

    /// Normalised options of the program.
    pub(crate) fn options<I: IntoIterator<Item = String>>(&mut self, opts: I) {
        if self.top() {
            self.fx.options.extend(opts);
        }
    }

    /// Options the program's model does not know.
    pub(crate) fn unknown_options<I: IntoIterator<Item = String>>(&mut self, opts: I) {
        if self.top() {
            self.fx.unknown_options.extend(opts);
        }
    }

    /// The options (with `aliases`, see [`crate::options::Opt::normalised`]) and
    /// unlisted options of a parse, for a modelled program.
    pub(crate) fn parsed(&mut self, p: &crate::options::Parsed<'_>, aliases: &[(char, &str)]) {
        self.modelled();
        self.options(p.normalised(aliases));
        self.unknown_options(p.unlisted.iter().cloned());
    }

    /// One more word of the subcommand path.
    pub(crate) fn subcommand(&mut self, word: &str) {
        if self.top() {
            self.fx.subcommand.push(word.to_string());
        }
    }

    /// Operands after the subcommand.
    pub(crate) fn operands<'a>(&mut self, words: impl IntoIterator<Item = &'a str>) {
        if self.top() {
            self.fx
                .operands
                .extend(words.into_iter().map(str::to_string));
        }
    }

    pub(crate) fn write(&mut self, p: &str) {
        self.add(FileOp::Write, p);
    }

    pub(crate) fn delete(&mut self, p: &str) {
        self.add(FileOp::Delete, p);
    }

    pub(crate) fn writes<'a>(&mut self, ps: impl IntoIterator<Item = &'a str>) {
        ps.into_iter().for_each(|p| self.write(p));
    }

    pub(crate) fn deletes<'a>(&mut self, ps: impl IntoIterator<Item = &'a str>) {
        ps.into_iter().for_each(|p| self.delete(p));
    }

    /// A destination that may be a directory: the files land inside it under their own
    /// names, so `cp settings.json .claude/` writes `.claude/settings.json`. The
    /// destination is reported, and each `DST/basename(SRC)` as an `into_dir` guess —
    /// not a guess when DST ends with `/` (or is `.`).
    pub(crate) fn land_in<'a>(&mut self, dst: &str, srcs: impl IntoIterator<Item = &'a str>) {
        let certain = dst.ends_with('/') || dst == "." || dst == "..";
        // `cp -r src new/` creates `new` itself when it does not exist.
        self.write(dst);
        for src in srcs {
            if let Some(inside) = into(dst, src) {
                self.add_as(FileOp::Write, &inside, !certain);
            }
        }
    }

    /// A file named to an editor. `f:12:3` (line and column, understood by most
    /// editors) is reported without the position.
    pub(crate) fn edit(&mut self, p: &str) {
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

/// `DST/basename(SRC)`: where `SRC` lands when `DST` is a directory. `host:path` (scp,
/// rsync) lands under the remote file's own name.
pub(crate) fn into(dst: &str, src: &str) -> Option<String> {
    let name = basename(src.trim_end_matches('/'));
    let name = name.rsplit(':').next().unwrap_or(name);
    if name.is_empty() || name == "." || name == ".." {
        return None;
    }
    let dir = dst.trim_end_matches('/');
    Some(if dir.is_empty() && !dst.is_empty() {
        format!("/{name}")
    } else if dir.is_empty() || dir == "." {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    })
}

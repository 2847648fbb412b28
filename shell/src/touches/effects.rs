//! What one command does to files, and the collector the file models report into.

use std::collections::HashSet;

use crate::file_op::{changes_no_file, FileOp};
use crate::names::basename;

/// One file a command would change, as written on the command line: the caller decides
/// it as a path request, like a direct write or delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEffect {
    /// What the command does to the file.
    pub op: FileOp,
    /// The path as written, prefixed with a directory the command itself changed to.
    pub path: String,
    /// A guess `DST/basename(SRC)` for a copy or move onto a destination that may be a
    /// directory; it only names a file when `DST` turns out to be one.
    pub into_dir: bool,
}

/// A link a command creates: later steps of the same line that use `path` reach `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkMade {
    /// The link's own path, as written.
    pub path: String,
    /// What it points to, as written.
    pub target: String,
    /// A symbolic link (else a hard link).
    pub symbolic: bool,
}

/// What a command does to files. `unknown` is set when the command is known to write
/// but its targets cannot be determined statically (e.g. `find … -delete`, `xargs rm`,
/// `git apply` with stdin) — the caller will then treat the command as unanalysable (ask).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileEffects {
    /// The files named, in order, each once per operation.
    pub effects: Vec<FileEffect>,
    /// The command changes files that are not all listed in `effects`.
    pub unknown: bool,
    /// Network destinations as written: URLs, `host`, `host:port`, `user@host`.
    pub network: Vec<String>,
    /// Code strings an interpreter runs (`python -c CODE`, `perl -e CODE`, awk programs).
    pub code: Vec<String>,
    /// Why what the command runs is not visible (an interpreter reading its program from
    /// standard input, an unknown program carrying another command).
    pub opaque: Vec<String>,
    /// The options in a normal form: long options in full, values joined with `=`,
    /// combined short flags split.
    pub options: Vec<String>,
    /// The subcommand words after the global options (`git push` gives `["push"]`).
    pub subcommand: Vec<String>,
    /// The words after the subcommand that are neither options nor their values.
    pub operands: Vec<String>,
    /// Options a modelled program does not know.
    pub unknown_options: Vec<String>,
    /// Links created.
    pub links: Vec<LinkMade>,
    /// Script files the command runs (`sh x.sh`, `python x.py`, `source f`).
    pub runs_files: Vec<String>,
    /// The program has a model of its own, so its options are known.
    pub modelled: bool,
}

/// The effects found so far for one command.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) fx: FileEffects,
    seen: HashSet<(FileOp, String)>,
    /// Directory the command changed to (`git -C`), joined to later relative paths.
    dir: Option<String>,
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
        // `-` is standard input/output for nearly every tool that takes a file.
        if path.is_empty() || path == "-" {
            return;
        }
        let path = self.resolve(path);
        if changes_no_file(&path) || !self.seen.insert((op, path.clone())) {
            return;
        }
        self.fx.effects.push(FileEffect {
            op,
            path,
            into_dir: false,
        });
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
    /// names, so `cp settings.json .claude/` writes `.claude/settings.json`. Both the
    /// destination and each `DST/basename(SRC)` are reported; we cannot know which it is.
    pub(crate) fn land_in<'a>(&mut self, dst: &str, srcs: impl IntoIterator<Item = &'a str>) {
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

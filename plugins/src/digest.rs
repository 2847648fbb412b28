//! The canonical digest of a plugin pack directory.
//!
//! # Encoding (`contextos-tree-v1`)
//!
//! `digest = "sha256:" + lowercase hex(sha256(stream))`, where `stream` is:
//!
//! 1. the 18 bytes `contextos-tree-v1\n` (domain tag: no other ContextOS hash can collide
//!    with a tree digest);
//! 2. for every entry below the pack directory (the directory itself is not an entry),
//!    in ascending order of its relative path's bytes (components joined with `/`, no
//!    leading `./`, e.g. `a`, `a-b`, `a/b`):
//!    * one kind byte: `f` regular file, `x` regular file with any exec bit (`0o111`)
//!      set, `d` directory, `l` symbolic link;
//!    * the path: its length as u64 big-endian, then its bytes;
//!    * for `f`/`x`: the content length as u64 big-endian, then the content;
//!    * for `l`: the target length as u64 big-endian, then the target bytes (as stored,
//!      never resolved);
//!    * for `d`: nothing (so empty directories count).
//!
//! Length prefixes make the stream unambiguous: no two trees share one. Other mode bits,
//! owners and times are not covered (they do not change what a loader runs, except the
//! exec bit, which does).
//!
//! Exactly one entry is excluded: a top-level *regular file* named [`SIGNATURE_FILE`], so
//! a detached signature can ship inside the pack it signs. A directory or symlink of that
//! name is an ordinary entry (excluding it would hide a subtree from the digest).
//!
//! # Refusals (fail closed, each with a stable [`DigestError::code`])
//!
//! * `plugin.symlink-escape` — a symlink whose target is absolute or empty, whose lexical
//!   resolution from the link's directory leaves the tree, or whose physical resolution
//!   (following the tree's other symlinks, as a loader would) leaves it, reaches the
//!   excluded signature file, or needs more than 40 hops;
//! * `plugin.special-file` — fifo, socket, character or block device;
//! * `plugin.name` — a name that is not UTF-8 or holds `\` or a control character (they
//!   would make the `/`-joined paths ambiguous or unreadable in a review);
//! * `plugin.too-large` — more than 10,000 entries or 64 MiB of content;
//! * `plugin.io` — anything unreadable, the pack path not being a directory (it is
//!   opened with `O_NOFOLLOW`, so a symlinked pack path is refused too), or a file that
//!   changed size while being read.
//!
//! Every open is relative to the handle of the directory just listed and refuses
//! symlinks (`O_NOFOLLOW`), so swapping a directory for a link mid-walk cannot redirect
//! the walk out of the tree; file content is read once, from the opened handle.

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;
use std::ffi::CString;
use std::io::Read as _;
use std::path::Path;

/// The detached signature a pack may carry; the only entry the digest leaves out.
pub const SIGNATURE_FILE: &str = "contextos-plugin.sig";
/// At most this many entries (files, directories and symlinks together).
pub const MAX_ENTRIES: usize = 10_000;
/// At most this many bytes of file content and symlink targets together.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;

const DOMAIN: &[u8] = b"contextos-tree-v1\n";
/// Same bound as Linux's `MAXSYMLINKS`: a loader would give up there too.
const MAX_LINK_HOPS: usize = 40;

#[derive(Debug, thiserror::Error)]
pub enum DigestError {
    #[error("{path}: symbolic link to {target:?} {why}")]
    SymlinkEscape {
        path: String,
        target: String,
        why: &'static str,
    },
    #[error("{path}: a {kind} is not allowed in a plugin pack")]
    SpecialFile { path: String, kind: &'static str },
    #[error("{path}: {why}")]
    Name { path: String, why: &'static str },
    #[error("plugin pack too large: {why}")]
    TooLarge { why: String },
    #[error("{path}: {why}")]
    Io { path: String, why: String },
}

impl DigestError {
    /// Stable code, used as a verification finding and by the CLI.
    pub fn code(&self) -> &'static str {
        match self {
            DigestError::SymlinkEscape { .. } => "plugin.symlink-escape",
            DigestError::SpecialFile { .. } => "plugin.special-file",
            DigestError::Name { .. } => "plugin.name",
            DigestError::TooLarge { .. } => "plugin.too-large",
            DigestError::Io { .. } => "plugin.io",
        }
    }
}

fn io_err(path: &str, e: impl std::fmt::Display) -> DigestError {
    DigestError::Io {
        path: if path.is_empty() {
            ".".to_string()
        } else {
            path.to_string()
        },
        why: e.to_string(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Exec,
    Dir,
    Symlink,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::File => b'f',
            Kind::Exec => b'x',
            Kind::Dir => b'd',
            Kind::Symlink => b'l',
        }
    }
}

#[derive(Debug)]
struct Entry {
    path: String,
    kind: Kind,
    /// File content or symlink target; empty for directories.
    data: Vec<u8>,
}

/// The `contextos-tree-v1` digest of `dir` (see the module docs), as
/// `sha256:<64 lowercase hex>`.
pub fn tree_digest(dir: &Path) -> Result<String, DigestError> {
    let shown = dir.display().to_string();
    let root = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        io_err(
            &shown,
            format!("cannot open the pack directory (symlinks are not followed): {e}"),
        )
    })?;
    let (mut entries, sig_excluded) = walk(root)?;
    entries.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    check_links(&entries, sig_excluded)?;

    let mut h = Sha256::new();
    h.update(DOMAIN);
    for e in &entries {
        h.update([e.kind.byte()]);
        h.update((e.path.len() as u64).to_be_bytes());
        h.update(e.path.as_bytes());
        if e.kind != Kind::Dir {
            h.update((e.data.len() as u64).to_be_bytes());
            h.update(&e.data);
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// Lists the whole tree (iteratively: depth is bounded only by [`MAX_ENTRIES`]).
/// Returns the entries and whether a top-level signature file was left out.
fn walk(root: OwnedFd) -> Result<(Vec<Entry>, bool), DigestError> {
    let mut entries = Vec::new();
    let mut total: u64 = 0;
    let mut sig_excluded = false;
    let mut stack: Vec<(OwnedFd, String)> = vec![(root, String::new())];
    while let Some((fd, prefix)) = stack.pop() {
        let listing = rustix::fs::Dir::read_from(&fd).map_err(|e| io_err(&prefix, e))?;
        let mut names: Vec<CString> = Vec::new();
        for item in listing {
            let item = item.map_err(|e| io_err(&prefix, e))?;
            let name = item.file_name();
            if name.to_bytes() != b"." && name.to_bytes() != b".." {
                names.push(name.to_owned());
            }
        }
        for name in names {
            let rel = checked_path(&prefix, &name)?;
            let st = rustix::fs::statat(&fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| io_err(&rel, e))?;
            let kind = FileType::from_raw_mode(st.st_mode);
            if prefix.is_empty() && rel == SIGNATURE_FILE && kind == FileType::RegularFile {
                sig_excluded = true;
                continue;
            }
            if entries.len() >= MAX_ENTRIES {
                return Err(DigestError::TooLarge {
                    why: format!("more than {MAX_ENTRIES} entries"),
                });
            }
            match kind {
                FileType::Directory => {
                    let sub = rustix::fs::openat(
                        &fd,
                        name.as_c_str(),
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| io_err(&rel, e))?;
                    entries.push(Entry {
                        path: rel.clone(),
                        kind: Kind::Dir,
                        data: Vec::new(),
                    });
                    stack.push((sub, rel));
                }
                FileType::RegularFile => {
                    let (data, exec) = read_file(&fd, &name, &rel, &mut total)?;
                    entries.push(Entry {
                        path: rel,
                        kind: if exec { Kind::Exec } else { Kind::File },
                        data,
                    });
                }
                FileType::Symlink => {
                    let target = rustix::fs::readlinkat(&fd, name.as_c_str(), Vec::new())
                        .map_err(|e| io_err(&rel, e))?
                        .into_bytes();
                    add_bytes(&mut total, target.len() as u64)?;
                    entries.push(Entry {
                        path: rel,
                        kind: Kind::Symlink,
                        data: target,
                    });
                }
                other => {
                    return Err(DigestError::SpecialFile {
                        path: rel,
                        kind: special_kind(other),
                    })
                }
            }
        }
    }
    Ok((entries, sig_excluded))
}

fn special_kind(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "fifo",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        _ => "special file",
    }
}

fn add_bytes(total: &mut u64, n: u64) -> Result<(), DigestError> {
    *total = total.saturating_add(n);
    if *total > MAX_BYTES {
        return Err(DigestError::TooLarge {
            why: format!("more than {MAX_BYTES} bytes of content"),
        });
    }
    Ok(())
}

/// The `/`-joined relative path of `name` in `prefix`, once the name is known to be safe
/// to join and to show.
fn checked_path(prefix: &str, name: &CString) -> Result<String, DigestError> {
    let lossy = || {
        let n = String::from_utf8_lossy(name.to_bytes());
        if prefix.is_empty() {
            n.into_owned()
        } else {
            format!("{prefix}/{n}")
        }
    };
    let Ok(n) = std::str::from_utf8(name.to_bytes()) else {
        return Err(DigestError::Name {
            path: lossy(),
            why: "the name is not UTF-8",
        });
    };
    if n.chars().any(|c| c == '\\' || c.is_control()) {
        return Err(DigestError::Name {
            path: lossy().escape_debug().to_string(),
            why: "the name contains a backslash or a control character",
        });
    }
    Ok(if prefix.is_empty() {
        n.to_string()
    } else {
        format!("{prefix}/{n}")
    })
}

/// Reads a regular file once, from a handle opened without following links and without
/// blocking (a fifo swapped in after the `lstat` must not hang the walk).
fn read_file(
    dir: &OwnedFd,
    name: &CString,
    rel: &str,
    total: &mut u64,
) -> Result<(Vec<u8>, bool), DigestError> {
    let fd = rustix::fs::openat(
        dir,
        name.as_c_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_err(rel, e))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| io_err(rel, e))?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind != FileType::RegularFile {
        return Err(DigestError::SpecialFile {
            path: rel.to_string(),
            kind: special_kind(kind),
        });
    }
    let size = u64::try_from(st.st_size).map_err(|e| io_err(rel, e))?;
    add_bytes(total, size)?;
    // `st_mode` is u16 on some targets.
    #[allow(
        clippy::useless_conversion,
        reason = "the stat field's integer type differs between targets"
    )]
    let exec = u32::from(st.st_mode) & 0o111 != 0;
    let mut data = Vec::new();
    // One byte more than announced, to notice a file that grows while it is read.
    std::fs::File::from(fd)
        .take(size.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| io_err(rel, e))?;
    if data.len() as u64 != size {
        return Err(io_err(rel, "the file changed size while it was read"));
    }
    Ok((data, exec))
}

/// Why a symlink is refused (the message of [`DigestError::SymlinkEscape`]).
type Refusal = &'static str;

/// Checks every symlink, lexically and physically (see the module docs).
fn check_links(entries: &[Entry], sig_excluded: bool) -> Result<(), DigestError> {
    let links: HashMap<&[u8], &[u8]> = entries
        .iter()
        .filter(|e| e.kind == Kind::Symlink)
        .map(|e| (e.path.as_bytes(), e.data.as_slice()))
        .collect();
    for e in entries.iter().filter(|e| e.kind == Kind::Symlink) {
        let refuse = |why: Refusal| DigestError::SymlinkEscape {
            path: e.path.clone(),
            target: String::from_utf8_lossy(&e.data).into_owned(),
            why,
        };
        let dir: Vec<&[u8]> = match e.path.rsplit_once('/') {
            Some((parent, _)) => parent.as_bytes().split(|b| *b == b'/').collect(),
            None => Vec::new(),
        };
        lexical(dir.clone(), &e.data).map_err(refuse)?;
        let mut hops = 0;
        physical(&links, dir, &e.data, sig_excluded, &mut hops).map_err(refuse)?;
    }
    Ok(())
}

fn lexical<'a>(mut cur: Vec<&'a [u8]>, target: &'a [u8]) -> Result<(), Refusal> {
    if target.is_empty() {
        return Err("has an empty target");
    }
    if target.starts_with(b"/") {
        return Err("is absolute");
    }
    for comp in target.split(|b| *b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                if cur.pop().is_none() {
                    return Err("leaves the plugin directory");
                }
            }
            name => cur.push(name),
        }
    }
    Ok(())
}

/// Resolves `target` from directory `cur` the way the kernel would, replacing every
/// symlink met on the way by its own target, so `d/s -> ..` followed by `s/../..` is
/// seen to leave the tree even though each link looks harmless alone. Components that do
/// not exist are taken lexically (the open would fail there anyway).
fn physical<'a>(
    links: &HashMap<&[u8], &'a [u8]>,
    mut cur: Vec<&'a [u8]>,
    target: &'a [u8],
    sig_excluded: bool,
    hops: &mut usize,
) -> Result<Vec<&'a [u8]>, Refusal> {
    if target.is_empty() {
        return Err("has an empty target");
    }
    if target.starts_with(b"/") {
        return Err("leads through an absolute symbolic link");
    }
    for comp in target.split(|b| *b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                if cur.pop().is_none() {
                    return Err("leaves the plugin directory once links are followed");
                }
            }
            name => {
                cur.push(name);
                if sig_excluded && cur.len() == 1 && name == SIGNATURE_FILE.as_bytes() {
                    return Err("reaches the signature file, which the digest does not cover");
                }
                let joined = cur.join(&b'/');
                if let Some(next) = links.get(joined.as_slice()) {
                    *hops += 1;
                    if *hops > MAX_LINK_HOPS {
                        return Err("takes more than 40 hops to resolve (a loop?)");
                    }
                    cur.pop();
                    cur = physical(links, cur, next, sig_excluded, hops)?;
                }
            }
        }
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {

    use super::*;
    use std::fs;
    use std::os::unix::fs::{symlink, PermissionsExt as _};
    use std::path::PathBuf;

    fn pack() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("pack");
        fs::create_dir_all(p.join("lib/deep")).unwrap();
        fs::write(p.join("plugin.toml"), "name = \"acme\"\n").unwrap();
        fs::write(p.join("lib/main.rhai"), "fn main() { 1 }\n").unwrap();
        fs::write(p.join("lib/deep/data.bin"), [0u8, 1, 2, 255]).unwrap();
        (t, p)
    }

    fn digest(p: &Path) -> String {
        tree_digest(p).unwrap()
    }

    fn code(p: &Path) -> &'static str {
        tree_digest(p).unwrap_err().code()
    }

    #[test]
    fn format_and_stability() {
        let (_t, p) = pack();
        let d = digest(&p);
        assert!(d.starts_with("sha256:"));
        let hex = d.strip_prefix("sha256:").unwrap();
        assert_eq!(hex.len(), 64);
        assert!(hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')));
        assert_eq!(d, digest(&p));
    }

    #[test]
    fn insertion_order_does_not_matter() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        fs::create_dir_all(a.join("x")).unwrap();
        fs::write(a.join("x/1"), "one").unwrap();
        fs::write(a.join("x-2"), "two").unwrap();
        fs::write(a.join("z"), "three").unwrap();
        fs::create_dir_all(&b).unwrap();
        fs::write(b.join("z"), "three").unwrap();
        fs::write(b.join("x-2"), "two").unwrap();
        fs::create_dir_all(b.join("x")).unwrap();
        fs::write(b.join("x/1"), "one").unwrap();
        assert_eq!(digest(&a), digest(&b));
    }

    #[test]
    fn matches_the_documented_encoding() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path();
        fs::create_dir(p.join("d")).unwrap();
        fs::write(p.join("d-f"), "hi").unwrap();
        symlink("d-f", p.join("d/l")).unwrap();
        let mut s = DOMAIN.to_vec();
        let mut put = |kind: u8, path: &str, data: Option<&[u8]>| {
            s.push(kind);
            s.extend((path.len() as u64).to_be_bytes());
            s.extend(path.as_bytes());
            if let Some(d) = data {
                s.extend((d.len() as u64).to_be_bytes());
                s.extend(d);
            }
        };
        // `-` (0x2d) sorts before `/` (0x2f).
        put(b'd', "d", None);
        put(b'f', "d-f", Some(b"hi"));
        put(b'l', "d/l", Some(b"d-f"));
        let want: String = Sha256::digest(&s)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        // `d/l -> d-f` resolves to `d/d-f`: dangling but inside.
        assert_eq!(digest(p), format!("sha256:{want}"));
    }

    #[test]
    fn every_change_changes_the_digest() {
        let (_t, p) = pack();
        let mut seen = vec![digest(&p)];
        let mut step = |f: &dyn Fn(&Path)| {
            f(&p);
            let d = digest(&p);
            assert!(!seen.contains(&d), "digest did not change");
            seen.push(d);
        };
        step(&|p| fs::write(p.join("lib/deep/data.bin"), [0u8, 1, 2, 254]).unwrap());
        step(&|p| fs::rename(p.join("lib/main.rhai"), p.join("lib/main2.rhai")).unwrap());
        step(&|p| fs::write(p.join("extra"), "").unwrap());
        step(&|p| fs::remove_file(p.join("plugin.toml")).unwrap());
        step(&|p| fs::create_dir(p.join("empty")).unwrap());
        step(&|p| fs::set_permissions(p.join("extra"), fs::Permissions::from_mode(0o744)).unwrap());
        step(&|p| symlink("extra", p.join("link")).unwrap());
        // Moving content between files keeps the concatenation but not the digest.
        step(&|p| {
            fs::write(p.join("lib/main2.rhai"), "fn main() ").unwrap();
            fs::write(p.join("lib/main3.rhai"), "{ 1 }\n").unwrap();
        });
        // A non-exec mode change is not covered.
        fs::set_permissions(p.join("lib/main3.rhai"), fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(&digest(&p), seen.last().unwrap());
    }

    #[test]
    fn signature_file_is_excluded_only_at_top_level_and_only_as_a_file() {
        let (_t, p) = pack();
        let d = digest(&p);
        fs::write(p.join(SIGNATURE_FILE), "anything").unwrap();
        assert_eq!(digest(&p), d);
        fs::write(p.join(SIGNATURE_FILE), "something else").unwrap();
        assert_eq!(digest(&p), d);
        fs::write(p.join("lib").join(SIGNATURE_FILE), "x").unwrap();
        assert_ne!(digest(&p), d);
        fs::remove_file(p.join("lib").join(SIGNATURE_FILE)).unwrap();
        fs::remove_file(p.join(SIGNATURE_FILE)).unwrap();
        fs::create_dir(p.join(SIGNATURE_FILE)).unwrap();
        fs::write(p.join(SIGNATURE_FILE).join("code.rhai"), "evil").unwrap();
        assert_ne!(digest(&p), d);
    }

    #[test]
    fn symlinks_inside_are_fine() {
        let (_t, p) = pack();
        symlink("lib/main.rhai", p.join("entry")).unwrap();
        symlink("../../plugin.toml", p.join("lib/deep/up")).unwrap();
        symlink("..", p.join("lib/parent")).unwrap();
        symlink("missing/../x", p.join("dangling")).unwrap();
        digest(&p);
    }

    #[test]
    fn symlink_escapes_are_refused() {
        for (at, target) in [
            ("out", "../x"),
            ("lib/out", "../../x"),
            ("abs", "/etc/passwd"),
            ("lib/deep/out", "../../../pack/plugin.toml"),
        ] {
            let (_t, p) = pack();
            symlink(target, p.join(at)).unwrap();
            assert_eq!(code(&p), "plugin.symlink-escape", "{at} -> {target}");
        }
    }

    #[test]
    fn chained_symlink_escapes_are_refused() {
        // Each link is lexically inside; following `lib/up` first leaves the tree.
        let (_t, p) = pack();
        symlink("..", p.join("lib/up")).unwrap();
        symlink("up/../..", p.join("lib/sneak")).unwrap();
        let err = tree_digest(&p).unwrap_err();
        assert_eq!(err.code(), "plugin.symlink-escape");
        assert!(err.to_string().contains("lib/sneak"), "{err}");

        // A link to an absolute link.
        let (_t, p) = pack();
        symlink("/", p.join("root")).unwrap();
        assert_eq!(code(&p), "plugin.symlink-escape");

        // A loop.
        let (_t, p) = pack();
        symlink("b", p.join("a")).unwrap();
        symlink("a", p.join("b")).unwrap();
        assert_eq!(code(&p), "plugin.symlink-escape");
    }

    #[test]
    fn links_to_the_unsigned_signature_file_are_refused() {
        let (_t, p) = pack();
        fs::write(p.join(SIGNATURE_FILE), "sig").unwrap();
        symlink(format!("../{SIGNATURE_FILE}"), p.join("lib/main2.rhai")).unwrap();
        assert_eq!(code(&p), "plugin.symlink-escape");
    }

    #[test]
    fn a_symlinked_pack_directory_is_refused() {
        let (t, p) = pack();
        let l = t.path().join("link");
        symlink(&p, &l).unwrap();
        assert_eq!(code(&l), "plugin.io");
        assert_eq!(code(&t.path().join("missing")), "plugin.io");
    }

    #[test]
    fn special_files_are_refused() {
        let (_t, p) = pack();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p.join("lib/fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        assert_eq!(code(&p), "plugin.special-file");

        let (_t, p) = pack();
        let _sock = std::os::unix::net::UnixListener::bind(p.join("sock")).unwrap();
        assert_eq!(code(&p), "plugin.special-file");
    }

    #[test]
    fn bad_names_are_refused() {
        use std::os::unix::ffi::OsStrExt as _;
        for name in [
            std::ffi::OsStr::from_bytes(b"bad\xff"),
            std::ffi::OsStr::new("back\\slash"),
            std::ffi::OsStr::new("new\nline"),
            std::ffi::OsStr::new("del\u{7f}"),
        ] {
            let (_t, p) = pack();
            fs::write(p.join("lib").join(name), "").unwrap();
            assert_eq!(code(&p), "plugin.name", "{name:?}");
        }
    }

    #[test]
    fn limits_are_enforced() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..=MAX_ENTRIES {
            fs::write(t.path().join(format!("{i}")), "").unwrap();
        }
        assert_eq!(code(t.path()), "plugin.too-large");

        let t = tempfile::tempdir().unwrap();
        let f = fs::File::create(t.path().join("big")).unwrap();
        // Sparse: costs no disk, and the size check comes before any read.
        f.set_len(MAX_BYTES + 1).unwrap();
        assert_eq!(code(t.path()), "plugin.too-large");
    }

    #[test]
    fn unreadable_files_are_refused() {
        if rustix::process::geteuid().is_root() {
            return; // root reads everything
        }
        let (_t, p) = pack();
        fs::set_permissions(p.join("plugin.toml"), fs::Permissions::from_mode(0o000)).unwrap();
        assert_eq!(code(&p), "plugin.io");
    }
}

//! The files a patch body touches, for the agents whose edit tool takes a patch instead of a
//! path (Codex and Copilot `apply_patch`).
//!
//! A patch is judged by the paths it names, so this module is a *path extractor*, not an
//! applier: it never looks at hunk contents beyond what it needs to find the next header.
//! Its one promise is that every file the real applier could touch is in the answer. Two
//! consequences follow:
//!
//! - It is **liberal** where a miss would be a bypass: a line that reads like a file header
//!   once trimmed counts as one, even where the real applier would take it for a context
//!   line. A false extra path can only make the verdict stricter.
//! - It is **strict** where it cannot tell: an unknown `***` marker, a truncated hunk, a
//!   missing `*** End Patch`, or text that is neither format is an error, and the caller
//!   fails closed on it.
//!
//! Two formats are understood: the Codex `apply_patch` envelope (`*** Begin Patch` …
//! `*** End Patch`) and unified diffs as `git diff` (or `diff -u`) prints them.

use super::event::ProtocolError;
use contextos_core::PathOp;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const UPDATE: &str = "*** Update File:";
const DELETE: &str = "*** Delete File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Every `(operation, path)` the patch performs, in order of appearance, without duplicates.
///
/// Paths are returned exactly as the patch spells them (usually project-relative); an
/// `apply_patch` move yields a delete of the source and a write of the target, as does a git
/// rename; a creation is a write. An empty or unrecognisable body, or one that names no file,
/// is an error: the caller cannot judge what it cannot see.
pub fn patch_paths(body: &str) -> Result<Vec<(PathOp, String)>, ProtocolError> {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Err(perr("the patch is empty"));
    };
    let rest = lines.get(first..).unwrap_or_default();
    let found = match rest.split_first() {
        Some((head, tail)) if head.trim() == BEGIN => apply_patch(tail)?,
        _ => unified_diff(rest)?,
    };
    if found.is_empty() {
        return Err(perr("the patch names no file"));
    }
    let mut out: Vec<(PathOp, String)> = Vec::with_capacity(found.len());
    for item in found {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(out)
}

fn perr(msg: impl Into<String>) -> ProtocolError {
    ProtocolError(format!("unreadable patch: {}", msg.into()))
}

/// Which section of an `apply_patch` body the previous header opened; it decides which body
/// lines are legal next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Right after `*** Begin Patch`: only a file header may follow.
    Start,
    Add,
    Delete,
    /// `fresh` until the first body line: `*** Move to:` is only valid straight after the header.
    Update {
        fresh: bool,
    },
}

/// The Codex envelope. Grammar (codex-rs `apply_patch_tool_instructions.md`): a sequence of
/// `*** Add File: p` (followed by `+` lines), `*** Delete File: p`, and `*** Update File: p`
/// (optionally `*** Move to: q`, then `@@` chunks of ` `/`+`/`-` lines and an optional
/// `*** End of File`), closed by `*** End Patch`.
fn apply_patch(lines: &[&str]) -> Result<Vec<(PathOp, String)>, ProtocolError> {
    let mut out: Vec<(PathOp, String)> = Vec::new();
    let mut section = Section::Start;
    // Index in `out` of the current Update's write, rewritten into a delete by a move.
    let mut update_at: Option<usize> = None;
    let mut iter = lines.iter().enumerate();
    while let Some((i, line)) = iter.next() {
        let t = line.trim();
        let lineno = i + 2; // 1-based, after the Begin line
        if t == END {
            // Codex requires the end marker to be the last line; trailing text could be a
            // second patch some applier would still run, so it is not ignored.
            if let Some((j, extra)) = iter.find(|(_, l)| !l.trim().is_empty()) {
                return Err(perr(format!(
                    "line {}: text after `{END}`: {:?}",
                    j + 2,
                    clip(extra)
                )));
            }
            return Ok(out);
        }
        if let Some(p) = t.strip_prefix(ADD) {
            out.push((PathOp::Write, header_path(p, lineno)?));
            section = Section::Add;
            update_at = None;
            continue;
        }
        if let Some(p) = t.strip_prefix(DELETE) {
            out.push((PathOp::Delete, header_path(p, lineno)?));
            section = Section::Delete;
            update_at = None;
            continue;
        }
        if let Some(p) = t.strip_prefix(UPDATE) {
            update_at = Some(out.len());
            out.push((PathOp::Write, header_path(p, lineno)?));
            section = Section::Update { fresh: true };
            continue;
        }
        if let Some(p) = t.strip_prefix(MOVE) {
            let target = header_path(p, lineno)?;
            match (section, update_at.and_then(|k| out.get_mut(k))) {
                (Section::Update { fresh: true }, Some(source)) => {
                    source.0 = PathOp::Delete;
                    out.push((PathOp::Write, target));
                    section = Section::Update { fresh: false };
                    continue;
                }
                _ => {
                    return Err(perr(format!(
                        "line {lineno}: `{MOVE}` must directly follow `{UPDATE}`"
                    )))
                }
            }
        }
        if t == END_OF_FILE {
            if matches!(section, Section::Update { .. }) {
                section = Section::Update { fresh: false };
                continue;
            }
            return Err(perr(format!(
                "line {lineno}: `{END_OF_FILE}` outside an update"
            )));
        }
        // A marker this parser does not know may be an operation it would miss. Only a line
        // that starts with `***` is a marker; ` ***…` in an update is a context line.
        if line.starts_with("***") {
            return Err(perr(format!(
                "line {lineno}: unknown patch marker {:?}",
                clip(line)
            )));
        }
        if t.is_empty() {
            continue;
        }
        let legal = match section {
            Section::Start | Section::Delete => false,
            Section::Add => line.starts_with('+'),
            Section::Update { .. } => line.starts_with("@@") || line.starts_with([' ', '+', '-']),
        };
        if !legal {
            return Err(perr(format!(
                "line {lineno}: unexpected line {:?}",
                clip(line)
            )));
        }
        if let Section::Update { .. } = section {
            section = Section::Update { fresh: false };
        }
    }
    Err(perr(format!("missing `{END}`")))
}

fn header_path(raw: &str, lineno: usize) -> Result<String, ProtocolError> {
    let p = raw.trim();
    if p.is_empty() {
        return Err(perr(format!("line {lineno}: a file header without a path")));
    }
    Ok(p.to_owned())
}

/// One side (`---` or `+++`) of a unified-diff file header.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Side {
    DevNull,
    Path(String),
}

/// The headers of one file in a unified diff, gathered until the next file starts.
#[derive(Debug, Default)]
struct FileDiff {
    /// Started by `diff --git`: `a/` and `b/` are prefixes and a name change is a rename.
    git: bool,
    git_a: Option<String>,
    git_b: Option<String>,
    old: Option<Side>,
    new: Option<Side>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    copy_from: Option<String>,
    copy_to: Option<String>,
    /// `+++` lines outside a hunk that do not follow a `---` line. No diff tool prints
    /// them, but an applier that takes the last `+++` (or any) would write that name.
    stray_new: Vec<String>,
    created: bool,
    deleted: bool,
    /// Line number of the header, for error messages.
    line: usize,
}

/// A unified diff: `diff --git` blocks (with `new file mode`, `deleted file mode`,
/// `rename from/to`, `copy from/to`, binary patches) and plain `---`/`+++` pairs. Hunks are
/// counted by their `@@ -a,b +c,d @@` header so a removed line that reads `--- x` is never
/// taken for a header. Lines outside any file block (a commit message, a diffstat) are
/// ignored.
fn unified_diff(lines: &[&str]) -> Result<Vec<(PathOp, String)>, ProtocolError> {
    let mut out = Vec::new();
    let mut current: Option<FileDiff> = None;
    let mut i = 0;
    while let Some(line) = lines.get(i).copied() {
        let lineno = i + 1;
        i += 1;
        if let Some(rest) = line.strip_prefix("diff --git ") {
            if let Some(done) = current.take() {
                finish(done, &mut out)?;
            }
            let (a, b) = git_header_names(rest);
            current = Some(FileDiff {
                git: true,
                git_a: a,
                git_b: b,
                line: lineno,
                ..FileDiff::default()
            });
            continue;
        }
        if let Some(rest) = line.strip_prefix("--- ") {
            let Some(plus) = lines.get(i).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(perr(format!(
                    "line {lineno}: `---` header without a `+++` line after it"
                )));
            };
            i += 1;
            let old = side(rest, lineno)?;
            let new = side(plus, lineno + 1)?;
            // A `---` in a block that already has one starts the next (non-git) file.
            let reuse = matches!(&current, Some(f) if f.git && f.old.is_none());
            if !reuse {
                if let Some(done) = current.take() {
                    finish(done, &mut out)?;
                }
                current = Some(FileDiff {
                    line: lineno,
                    ..FileDiff::default()
                });
            }
            if let Some(f) = current.as_mut() {
                f.old = Some(old);
                f.new = Some(new);
            }
            continue;
        }
        if line.starts_with("@@") {
            let Some(f) = current.as_ref() else {
                return Err(perr(format!(
                    "line {lineno}: a hunk before any file header"
                )));
            };
            if f.old.is_none() {
                return Err(perr(format!(
                    "line {lineno}: a hunk without `---`/`+++` headers"
                )));
            }
            let (mut old_left, mut new_left) = hunk_counts(line)
                .ok_or_else(|| perr(format!("line {lineno}: malformed hunk header")))?;
            while old_left > 0 || new_left > 0 {
                let Some(body) = lines.get(i) else {
                    return Err(perr(format!("line {lineno}: truncated hunk")));
                };
                i += 1;
                match body.as_bytes().first() {
                    // An empty line is a context line whose leading space an editor stripped.
                    None | Some(b' ') => {
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                    Some(b'-') if old_left > 0 => old_left -= 1,
                    Some(b'+') if new_left > 0 => new_left -= 1,
                    Some(b'\\') => {}
                    _ => {
                        return Err(perr(format!(
                            "line {}: hunk ends early at {:?}",
                            i,
                            clip(body)
                        )))
                    }
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("+++ ") {
            // Before any file block it is preamble text, which appliers skip as well.
            if let Some(f) = current.as_mut() {
                if let Side::Path(p) = side(rest, lineno)? {
                    f.stray_new.push(p);
                }
            }
            continue;
        }
        let Some(f) = current.as_mut().filter(|f| f.git) else {
            continue;
        };
        if line.starts_with("new file mode ") {
            f.created = true;
        } else if line.starts_with("deleted file mode ") {
            f.deleted = true;
        } else if let Some(p) = line.strip_prefix("rename from ") {
            f.rename_from = Some(plain_name(p, lineno)?);
        } else if let Some(p) = line.strip_prefix("rename to ") {
            f.rename_to = Some(plain_name(p, lineno)?);
        } else if let Some(p) = line.strip_prefix("copy from ") {
            f.copy_from = Some(plain_name(p, lineno)?);
        } else if let Some(p) = line.strip_prefix("copy to ") {
            f.copy_to = Some(plain_name(p, lineno)?);
        }
    }
    if let Some(done) = current.take() {
        finish(done, &mut out)?;
    }
    if out.is_empty() {
        return Err(perr(
            "neither an `*** Begin Patch` envelope nor a unified diff",
        ));
    }
    Ok(out)
}

/// Turns one file's headers into path operations.
///
/// Appliers disagree on which header names the file: git believes `rename`/`copy` lines,
/// a `---`/`+++` reader believes those (with trailing blanks trimmed and `a/`/`b/`
/// dropped whatever the other side says), and a crafted body can make them contradict
/// each other. So no name replaces another: every name any header gives is reported, the
/// old side's as deleted or written, the new side's as written, and the creation and
/// deletion markers only decide the operation.
fn finish(f: FileDiff, out: &mut Vec<(PathOp, String)>) -> Result<(), ProtocolError> {
    let path_of = |side: &Option<Side>| match side {
        Some(Side::Path(p)) => Some(p.clone()),
        _ => None,
    };
    let old_side = path_of(&f.old);
    let new_side = path_of(&f.new);
    // Plain unified diffs only lose their `a/`/`b/` prefixes when both sides carry them
    // (or the other side is /dev/null): `diff -u x.orig x` has no prefixes to strip.
    let prefixed = f.git
        || (old_side.as_deref().is_none_or(|p| p.starts_with("a/"))
            && new_side.as_deref().is_none_or(|p| p.starts_with("b/")));
    let mut old: Vec<String> = Vec::new();
    let mut new: Vec<String> = Vec::new();
    for name in f.rename_from.iter().chain(&f.copy_from) {
        spellings(name, "", false, f.line, &mut old)?;
    }
    if let Some(p) = &old_side {
        spellings(p, "a/", prefixed, f.line, &mut old)?;
    }
    if let Some(p) = &f.git_a {
        spellings(p, "a/", true, f.line, &mut old)?;
    }
    for name in f.rename_to.iter().chain(&f.copy_to) {
        spellings(name, "", false, f.line, &mut new)?;
    }
    for p in new_side.iter().chain(&f.stray_new) {
        spellings(p, "b/", prefixed, f.line, &mut new)?;
    }
    if let Some(p) = &f.git_b {
        spellings(p, "b/", true, f.line, &mut new)?;
    }
    let created = f.created || f.old == Some(Side::DevNull);
    let deleted = f.deleted || f.new == Some(Side::DevNull);
    let known = match (created, deleted) {
        (true, true) => {
            return Err(perr(format!(
                "line {}: a diff that both creates and deletes its file",
                f.line
            )))
        }
        (true, false) => !new.is_empty(),
        (false, true) => !old.is_empty(),
        (false, false) => !old.is_empty() && !new.is_empty(),
    };
    if !known {
        return Err(perr(format!(
            "line {}: cannot tell which file this diff touches",
            f.line
        )));
    }
    let only_old: Vec<String> = old.iter().filter(|p| !new.contains(p)).cloned().collect();
    let copy = f.copy_from.is_some() || f.copy_to.is_some();
    if deleted {
        // A name only the new side gives is written by an applier that ignores the marker.
        let only_new: Vec<String> = new.into_iter().filter(|p| !old.contains(p)).collect();
        out.extend(old.into_iter().map(|p| (PathOp::Delete, p)));
        out.extend(only_new.into_iter().map(|p| (PathOp::Write, p)));
        return Ok(());
    }
    // A git rename makes its source disappear. A copy leaves its source, but an applier
    // that ignores the copy lines patches whichever name exists, as `patch(1)` does with
    // two different names; a creation marker an applier ignores leaves the same choice.
    let source_op = if f.git && !copy && !created {
        PathOp::Delete
    } else {
        PathOp::Write
    };
    out.extend(only_old.into_iter().map(|p| (source_op, p)));
    out.extend(new.into_iter().map(|p| (PathOp::Write, p)));
    Ok(())
}

/// Adds `raw` as this extractor spells it (`prefix` dropped when `strip` says so) and as
/// a `---`/`+++` reader spells it: trailing blanks trimmed, `prefix` always dropped. A
/// name that is blank that way is refused rather than guessed at.
fn spellings(
    raw: &str,
    prefix: &str,
    strip: bool,
    line: usize,
    out: &mut Vec<String>,
) -> Result<(), ProtocolError> {
    let kept = match raw.strip_prefix(prefix) {
        Some(rest) if strip && !rest.is_empty() => rest,
        _ => raw,
    };
    let trimmed = raw.trim_end();
    let trimmed = trimmed.strip_prefix(prefix).unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Err(perr(format!("line {line}: a file name that is blank")));
    }
    for name in [kept, trimmed] {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    Ok(())
}

/// One `---`/`+++` name: `/dev/null`, a git C-quoted name, or a name up to the first tab
/// (GNU diff appends `\t<timestamp>`, git a lone `\t` after names with spaces).
fn side(raw: &str, lineno: usize) -> Result<Side, ProtocolError> {
    let name = if raw.starts_with('"') {
        match unquote(raw) {
            Some((name, _)) => name,
            None => return Err(perr(format!("line {lineno}: malformed quoted file name"))),
        }
    } else {
        raw.split('\t').next().unwrap_or_default().to_owned()
    };
    if name.is_empty() {
        return Err(perr(format!("line {lineno}: a file header without a name")));
    }
    Ok(if name == "/dev/null" {
        Side::DevNull
    } else {
        Side::Path(name)
    })
}

/// A `rename from`/`rename to`/`copy to` name: unprefixed, possibly C-quoted.
fn plain_name(raw: &str, lineno: usize) -> Result<String, ProtocolError> {
    let name = if raw.starts_with('"') {
        unquote(raw).map(|(n, _)| n)
    } else {
        Some(raw.to_owned())
    };
    match name {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(perr(format!("line {lineno}: malformed file name"))),
    }
}

/// The two names of `diff --git a/X b/Y`, when they can be told apart. Quoted names are
/// exact. Unquoted names are split at ` b/`; with several candidates (a name containing
/// ` b/`), the split that gives two equal names wins — git itself only emits the ambiguous
/// form when the names are equal. `None` when undecidable: the `---`/`+++` or `rename`
/// lines then name the file.
fn git_header_names(rest: &str) -> (Option<String>, Option<String>) {
    if rest.starts_with('"') {
        let Some((a, after)) = unquote(rest) else {
            return (None, None);
        };
        let after = after.strip_prefix(' ').unwrap_or(after);
        let b = if after.starts_with('"') {
            unquote(after).map(|(b, _)| b)
        } else {
            Some(after.to_owned())
        };
        return (Some(a), b);
    }
    if let Some(idx) = rest.find(" \"") {
        let a = rest.get(..idx).map(str::to_owned);
        let b = rest.get(idx + 1..).and_then(unquote).map(|(b, _)| b);
        return (a, b);
    }
    let splits: Vec<usize> = rest.match_indices(" b/").map(|(i, _)| i).collect();
    let pair = |i: usize| {
        let a = rest.get(..i)?;
        let b = rest.get(i + 1..)?;
        Some((a.to_owned(), b.to_owned()))
    };
    match splits.as_slice() {
        [one] => pair(*one).map_or((None, None), |(a, b)| (Some(a), Some(b))),
        many => many
            .iter()
            .filter_map(|&i| pair(i))
            .find(|(a, b)| a.strip_prefix("a/") == b.strip_prefix("b/"))
            .map_or((None, None), |(a, b)| (Some(a), Some(b))),
    }
}

/// Parses a git C-style quoted name starting at `s[0] == '"'`; returns the name and the rest
/// after the closing quote. Octal escapes are bytes, so the result must be valid UTF-8.
fn unquote(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut bytes = Vec::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let name = String::from_utf8(bytes).ok()?;
                return Some((name, body.get(i + 1..)?));
            }
            '\\' => {
                let (_, e) = chars.next()?;
                let byte = match e {
                    'a' => 0x07,
                    'b' => 0x08,
                    't' => b'\t',
                    'n' => b'\n',
                    'v' => 0x0b,
                    'f' => 0x0c,
                    'r' => b'\r',
                    '"' => b'"',
                    '\\' => b'\\',
                    // `\0` is NUL to some appliers (diffy) and the start of an octal
                    // byte to git, so the two read different names; git only writes it
                    // for control characters, which no honest file name holds.
                    '0' => return None,
                    '1'..='7' => {
                        let mut v = e.to_digit(8)?;
                        for _ in 0..2 {
                            let (_, d) = chars.next()?;
                            v = v * 8 + d.to_digit(8)?;
                        }
                        u8::try_from(v).ok()?
                    }
                    _ => return None,
                };
                bytes.push(byte);
            }
            other => {
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    None
}

/// `(old_count, new_count)` of `@@ -l[,s] +l[,s] @@`; an omitted count is 1.
fn hunk_counts(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |r: &str| -> Option<u64> {
        match r.split_once(',') {
            Some((start, n)) => {
                start.parse::<u64>().ok()?;
                n.parse().ok()
            }
            None => {
                r.parse::<u64>().ok()?;
                Some(1)
            }
        }
    };
    Some((count(old)?, count(new)?))
}

/// A line shortened for an error message (patch lines can be arbitrarily long).
fn clip(line: &str) -> String {
    const MAX: usize = 80;
    if line.chars().count() <= MAX {
        line.to_owned()
    } else {
        let mut s: String = line.chars().take(MAX).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathOp::{Delete, Read, Write};

    fn ok(body: &str) -> Vec<(PathOp, String)> {
        patch_paths(body).unwrap_or_else(|e| panic!("{e}\n---\n{body}"))
    }
    fn v(items: &[(PathOp, &str)]) -> Vec<(PathOp, String)> {
        items.iter().map(|(o, p)| (*o, (*p).to_owned())).collect()
    }
    fn err(body: &str) -> String {
        match patch_paths(body) {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn apply_patch_add_update_delete() {
        let body = "*** Begin Patch\n\
                    *** Add File: src/new.rs\n\
                    +pub fn f() {}\n\
                    *** Update File: src/lib.rs\n\
                    @@ fn main\n\
                    -let limit = 10;\n\
                    +let limit = 100;\n\
                    \x20context\n\
                    *** End of File\n\
                    *** Delete File: .github/hooks/x.json\n\
                    *** End Patch\n";
        assert_eq!(
            ok(body),
            v(&[
                (Write, "src/new.rs"),
                (Write, "src/lib.rs"),
                (Delete, ".github/hooks/x.json")
            ])
        );
    }

    #[test]
    fn apply_patch_envelope_details() {
        let accepted: [(&str, &[(PathOp, &str)]); 4] = [
            // A move is a delete of the source and a write of the target.
            (
                "*** Begin Patch\n*** Update File: a/old.rs\n*** Move to: b/new.rs\n@@\n-x\n+y\n*** End Patch",
                &[(Delete, "a/old.rs"), (Write, "b/new.rs")],
            ),
            // A BOM, CRLF and whitespace around markers and paths are tolerated.
            (
                "\u{feff}\r\n  *** Begin Patch \r\n*** Update File:   src/lib.rs  \r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n\r\n",
                &[(Write, "src/lib.rs")],
            ),
            // A file named twice is reported once.
            (
                "*** Begin Patch\n*** Update File: a\n@@\n-1\n+2\n*** Update File: a\n@@\n-3\n+4\n*** End Patch",
                &[(Write, "a")],
            ),
            // A git deletion with its hunk, in CRLF.
            (
                "diff --git a/.github/hooks/x.json b/.github/hooks/x.json\r\ndeleted file mode 100644\r\n--- a/.github/hooks/x.json\r\n+++ /dev/null\r\n@@ -1,2 +0,0 @@\r\n-{\r\n-}\r\n",
                &[(Delete, ".github/hooks/x.json")],
            ),
        ];
        for (body, want) in accepted {
            assert_eq!(ok(body), v(want), "{body:?}");
        }
        let refused = [
            // A move must directly follow its update header.
            (
                "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** Move to: b.rs\n*** End Patch",
                "must directly follow",
            ),
            (
                "*** Begin Patch\n*** Add File: a.rs\n+x\n*** Move to: b.rs\n*** End Patch",
                "must directly follow",
            ),
            (
                "*** Begin Patch\n*** Add File: x.txt\n+hello\n",
                "missing `*** End Patch`",
            ),
            // Text after the end could be a second patch some applier would still run.
            (
                "*** Begin Patch\n*** Add File: x\n+1\n*** End Patch\n*** Begin Patch\n*** Delete File: y\n*** End Patch",
                "text after",
            ),
        ];
        for (body, want) in refused {
            assert!(err(body).contains(want), "{body:?}");
        }
    }

    #[test]
    fn apply_patch_rejects_unknown_markers_and_stray_lines() {
        assert!(err("*** Begin Patch\n*** Chmod File: x\n*** End Patch")
            .contains("unknown patch marker"));
        assert!(
            err("*** Begin Patch\n*** Add File: x\nnot-plus\n*** End Patch")
                .contains("unexpected line")
        );
        assert!(err("*** Begin Patch\nhello\n*** End Patch").contains("unexpected line"));
        assert!(
            err("*** Begin Patch\n*** Delete File: x\n+1\n*** End Patch")
                .contains("unexpected line")
        );
        assert!(err("*** Begin Patch\n*** Add File:   \n*** End Patch").contains("without a path"));
        assert!(err("*** Begin Patch\n*** End Patch").contains("names no file"));
        assert!(
            err("*** Begin Patch\n*** End of File\n*** End Patch").contains("outside an update")
        );
    }

    #[test]
    fn apply_patch_counts_indented_header_lookalikes() {
        // Liberal on purpose: a trimmed header counts, even as a context line.
        let body = "*** Begin Patch\n*** Update File: docs/a.md\n@@\n *** Delete File: secret.txt\n*** End Patch";
        assert_eq!(ok(body), v(&[(Write, "docs/a.md"), (Delete, "secret.txt")]));
        // …but content lines (`+`/`-`) never do.
        let body =
            "*** Begin Patch\n*** Add File: a.md\n+*** Delete File: secret.txt\n*** End Patch";
        assert_eq!(ok(body), v(&[(Write, "a.md")]));
    }

    #[test]
    fn empty_or_unknown_text_is_an_error() {
        assert!(err("").contains("empty"));
        assert!(err(" \n\t\n").contains("empty"));
        assert!(err("please apply my change to src/lib.rs").contains("neither"));
        // A Begin Patch that does not start the text is not an envelope.
        assert!(
            err("Here you go:\n*** Begin Patch\n*** Add File: x\n+1\n*** End Patch")
                .contains("neither")
        );
    }

    #[test]
    fn git_diff_modify_create_delete_rename() {
        let body = [
            "diff --git a/src/lib.rs b/src/lib.rs",
            "index 83db48f..bf269f4 100644",
            "--- a/src/lib.rs",
            "+++ b/src/lib.rs",
            "@@ -1,3 +1,3 @@",
            " fn a() {}",
            "--- removed line that looks like a header",
            "+++ added line that looks like a header",
            " fn b() {}",
            "diff --git a/new.txt b/new.txt",
            "new file mode 100644",
            "index 0000000..e69de29",
            "--- /dev/null",
            "+++ b/new.txt",
            "@@ -0,0 +1 @@",
            "+hello",
            "diff --git a/gone.txt b/gone.txt",
            "deleted file mode 100644",
            "index e69de29..0000000",
            "diff --git a/old/name.rs b/new/name.rs",
            "similarity index 100%",
            "rename from old/name.rs",
            "rename to new/name.rs",
            "",
        ]
        .join("\n");
        assert_eq!(
            ok(&body),
            v(&[
                (Write, "src/lib.rs"),
                (Write, "new.txt"),
                (Delete, "gone.txt"),
                (Delete, "old/name.rs"),
                (Write, "new/name.rs"),
            ])
        );
    }

    #[test]
    fn plain_unified_diff() {
        let body = "--- src/main.rs.orig\t2026-01-01 10:00:00.000000000 +0000\n+++ src/main.rs\t2026-01-01 10:01:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(
            ok(body),
            v(&[(Write, "src/main.rs.orig"), (Write, "src/main.rs")])
        );
        let body = "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\n--- a/y.rs\n+++ b/y.rs\n@@ -1,0 +1 @@\n+c\n";
        assert_eq!(ok(body), v(&[(Write, "x.rs"), (Write, "y.rs")]));
    }

    #[test]
    fn git_diff_quoted_and_spaced_names() {
        let body = "diff --git \"a/caf\\303\\251 menu.txt\" \"b/caf\\303\\251 menu.txt\"\n--- \"a/caf\\303\\251 menu.txt\"\n+++ \"b/caf\\303\\251 menu.txt\"\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(ok(body), v(&[(Write, "café menu.txt")]));
        let body = "diff --git a/my file.txt b/my file.txt\nnew file mode 100644\n--- /dev/null\n+++ b/my file.txt\t\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(ok(body), v(&[(Write, "my file.txt")]));
        // Binary change: the `diff --git` names alone identify the file.
        let body = "diff --git a/logo.png b/logo.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\nMcmZ?wbhPA\n\nliteral 0\nHcmV?d00001\n\n";
        assert_eq!(ok(body), v(&[(Write, "logo.png")]));
    }

    #[test]
    fn unified_diff_errors() {
        assert!(err("--- a/x\n@@ -1 +1 @@\n-a\n+b\n").contains("without a `+++`"));
        assert!(err("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n").contains("truncated hunk"));
        assert!(
            err("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n*** oops\n").contains("hunk ends early")
        );
        assert!(err("--- a/x\n+++ b/x\n@@ nonsense @@\n").contains("malformed hunk header"));
        assert!(err("@@ -1 +1 @@\n-a\n+b\n").contains("before any file header"));
        assert!(err("--- /dev/null\n+++ /dev/null\n").contains("both creates and deletes"));
        assert!(err("diff --git a/x b/x\n--- \"a/unterminated\n+++ b/x\n").contains("quoted"));
    }

    #[test]
    fn read_is_never_produced() {
        // Patches only write and delete; `Read` is imported to keep that explicit.
        let all = ok("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch");
        assert!(all.iter().all(|(op, _)| *op != Read));
    }
}

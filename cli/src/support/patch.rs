//! Applying an `apply_patch` body — a unified diff (`git diff`, `diff -u`) or Codex's
//! `*** Begin Patch` envelope — to the current files, as a list of whole-file changes.
//!
//! Nothing here writes: the result is committed by the caller in one transaction, so a
//! hunk that does not apply anywhere is an error before anything is touched. Each change
//! carries what it was computed from (the sha256 of the file, or "did not exist"), so a
//! file that changes between reading and committing aborts the transaction instead of
//! being overwritten with a stale result. Which paths the patch touches is *also* asked
//! of the hooks' liberal path extractor (`contextos_engine::emit::protocol::patch`), and
//! both lists are decided: a path this applier would miss cannot slip past the verdict.

use super::tool_error::ToolError;
use contextos_engine::effects::safe_fs::sha256_hex;

/// What the changed file was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// Whatever is there now (a whole-file write): no precondition.
    Any,
    /// The file did not exist and must still not exist.
    Absent,
    /// The file had this sha256.
    Sha256(String),
}

/// One whole-file change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    Write {
        path: String,
        content: String,
        base: Base,
    },
    Delete {
        path: String,
        sha256: String,
    },
}

impl FileChange {
    pub fn path(&self) -> &str {
        match self {
            FileChange::Write { path, .. } | FileChange::Delete { path, .. } => path,
        }
    }
}

/// Reads a project file's current text: `None` when it does not exist.
pub type Reader<'a> = dyn FnMut(&str) -> Result<Option<String>, ToolError> + 'a;

/// Applies `body` against what `read` returns.
pub fn apply(body: &str, read: &mut Reader<'_>) -> Result<Vec<FileChange>, ToolError> {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let changes = if body.trim_start().starts_with("*** Begin Patch") {
        codex(body, read)?
    } else {
        unified(body, read)?
    };
    if changes.is_empty() {
        return Err(ToolError::new("the patch changes no file"));
    }
    let mut seen: Vec<&str> = Vec::new();
    for c in &changes {
        if seen.contains(&c.path()) {
            return Err(ToolError::new(format!(
                "the patch changes {} more than once; give each file one section",
                c.path()
            )));
        }
        seen.push(c.path());
    }
    Ok(changes)
}

fn must_read(read: &mut Reader<'_>, path: &str) -> Result<String, ToolError> {
    read(path)?.ok_or_else(|| {
        ToolError::new(format!(
            "{path}: the patch changes a file that does not exist"
        ))
    })
}

fn must_be_absent(read: &mut Reader<'_>, path: &str) -> Result<(), ToolError> {
    match read(path)? {
        Some(_) => Err(ToolError::new(format!(
            "{path}: the patch creates a file that already exists"
        ))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// Unified diffs.

/// Splits a multi-file diff at each `---`/`+++` header pair, drops git's metadata lines,
/// and applies each file's hunks with `diffy`.
fn unified(text: &str, read: &mut Reader<'_>) -> Result<Vec<FileChange>, ToolError> {
    const GIT_META: [&str; 6] = [
        "diff --git ",
        "index ",
        "new file mode ",
        "deleted file mode ",
        "similarity index ",
        "dissimilarity index ",
    ];
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut chunks: Vec<(usize, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if [
            "rename from ",
            "rename to ",
            "copy from ",
            "old mode ",
            "new mode ",
        ]
        .iter()
        .any(|p| line.starts_with(p))
        {
            return Err(ToolError::new(format!(
                "patch line {}: renames, copies and mode changes are not supported in unified diffs (use the *** Begin Patch format's Move to)",
                i + 1
            )));
        }
        if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
            chunks.push((i + 1, String::new()));
        }
        if let Some((_, chunk)) = chunks.last_mut() {
            if !GIT_META.iter().any(|p| line.starts_with(p)) {
                chunk.push_str(line);
            }
        }
    }
    if chunks.is_empty() {
        return Err(ToolError::new(
            "the patch is neither a unified diff with ---/+++ headers nor a *** Begin Patch envelope",
        ));
    }
    let mut out = Vec::new();
    for (line, chunk) in &chunks {
        let patch = diffy::Patch::from_str(chunk)
            .map_err(|e| ToolError::new(format!("patch line {line}: {e}")))?;
        let original = patch.original().and_then(|p| header_path(p, "a/"));
        let modified = patch.modified().and_then(|p| header_path(p, "b/"));
        let hunk_error = |path: &str, e: diffy::ApplyError| {
            ToolError::new(format!(
                "{path}: {e}; the hunk does not match the file, nothing was written"
            ))
        };
        match (original, modified) {
            (None, None) => {
                return Err(ToolError::new(format!(
                    "patch line {line}: both sides are /dev/null"
                )))
            }
            (Some(o), Some(m)) if o != m => {
                return Err(ToolError::new(format!(
                    "patch line {line}: renames are not supported in unified diffs ({o} -> {m})"
                )))
            }
            (None, Some(m)) => {
                must_be_absent(read, &m)?;
                let content = diffy::apply("", &patch).map_err(|e| hunk_error(&m, e))?;
                out.push(FileChange::Write {
                    path: m,
                    content,
                    base: Base::Absent,
                });
            }
            (Some(o), Some(_)) => {
                let base = must_read(read, &o)?;
                let content = diffy::apply(&base, &patch).map_err(|e| hunk_error(&o, e))?;
                out.push(FileChange::Write {
                    base: Base::Sha256(sha256_hex(base.as_bytes())),
                    path: o,
                    content,
                });
            }
            (Some(o), None) => {
                let base = must_read(read, &o)?;
                // A deletion's hunk must remove exactly what is there.
                let rest = diffy::apply(&base, &patch).map_err(|e| hunk_error(&o, e))?;
                if !rest.is_empty() {
                    return Err(ToolError::new(format!(
                        "{o}: the patch deletes the file but its hunk does not remove all of it"
                    )));
                }
                out.push(FileChange::Delete {
                    sha256: sha256_hex(base.as_bytes()),
                    path: o,
                });
            }
        }
    }
    Ok(out)
}

/// `a/src/x.rs<TAB>timestamp` -> `src/x.rs`; `/dev/null` names no file.
fn header_path(raw: &str, prefix: &str) -> Option<String> {
    let p = raw.split('\t').next().unwrap_or(raw).trim_end();
    if p == "/dev/null" {
        return None;
    }
    Some(p.strip_prefix(prefix).unwrap_or(p).to_string())
}

// ---------------------------------------------------------------------------------------
// The `*** Begin Patch` envelope.

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// One `@@` section of an update: the context line it is anchored at (if any), the lines
/// it expects (context and removed) and the lines it leaves (context and added).
#[derive(Debug, Default)]
struct Chunk {
    anchor: Option<String>,
    old: Vec<String>,
    new: Vec<String>,
    at_end: bool,
}

fn codex(body: &str, read: &mut Reader<'_>) -> Result<Vec<FileChange>, ToolError> {
    let lines: Vec<&str> = body
        .trim()
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let inner = match (lines.first(), lines.last()) {
        (Some(b), Some(e)) if b.trim() == BEGIN && e.trim() == END && lines.len() >= 2 => {
            lines.get(1..lines.len() - 1).unwrap_or_default()
        }
        _ => {
            return Err(ToolError::new(
                "the patch starts with *** Begin Patch but does not end with *** End Patch",
            ))
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(line) = inner.get(i) {
        let at = i + 2;
        if let Some(path) = line.strip_prefix(ADD) {
            let path = path.trim().to_string();
            let mut content = String::new();
            i += 1;
            while let Some(l) = inner.get(i).filter(|l| !l.starts_with("*** ")) {
                let text = l.strip_prefix('+').ok_or_else(|| {
                    ToolError::new(format!(
                        "patch line {}: a line of an added file must start with +",
                        i + 2
                    ))
                })?;
                content.push_str(text);
                content.push('\n');
                i += 1;
            }
            must_be_absent(read, &path)?;
            out.push(FileChange::Write {
                path,
                content,
                base: Base::Absent,
            });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            let path = path.trim().to_string();
            let base = must_read(read, &path)?;
            out.push(FileChange::Delete {
                sha256: sha256_hex(base.as_bytes()),
                path,
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let path = path.trim().to_string();
            i += 1;
            let target = match inner.get(i).and_then(|l| l.strip_prefix(MOVE)) {
                Some(t) => {
                    i += 1;
                    Some(t.trim().to_string())
                }
                None => None,
            };
            let mut chunks: Vec<Chunk> = Vec::new();
            while let Some(l) = inner.get(i) {
                if l.starts_with("*** ") && l.trim() != END_OF_FILE {
                    break;
                }
                if l.trim() == END_OF_FILE {
                    if let Some(c) = chunks.last_mut() {
                        c.at_end = true;
                    }
                } else if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    chunks.push(Chunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        ..Chunk::default()
                    });
                } else {
                    if chunks.is_empty() {
                        chunks.push(Chunk::default());
                    }
                    let Some(c) = chunks.last_mut() else {
                        return Err(ToolError::new("internal: an update without a chunk"));
                    };
                    match l.chars().next() {
                        Some('+') => c.new.push(l.get(1..).unwrap_or_default().to_string()),
                        Some('-') => c.old.push(l.get(1..).unwrap_or_default().to_string()),
                        Some(' ') => {
                            let t = l.get(1..).unwrap_or_default().to_string();
                            c.old.push(t.clone());
                            c.new.push(t);
                        }
                        // A blank line inside a hunk is an empty context line (models
                        // often drop the leading space of an empty line).
                        None => {
                            c.old.push(String::new());
                            c.new.push(String::new());
                        }
                        Some(_) => {
                            return Err(ToolError::new(format!(
                                "patch line {}: a hunk line must start with ' ', '-' or '+': {l}",
                                i + 2
                            )))
                        }
                    }
                }
                i += 1;
            }
            let base = must_read(read, &path)?;
            let content = update(&path, &base, &chunks)?;
            let sha = sha256_hex(base.as_bytes());
            match target.filter(|t| *t != path) {
                Some(t) => {
                    must_be_absent(read, &t)?;
                    out.push(FileChange::Delete { path, sha256: sha });
                    out.push(FileChange::Write {
                        path: t,
                        content,
                        base: Base::Absent,
                    });
                }
                None => out.push(FileChange::Write {
                    path,
                    content,
                    base: Base::Sha256(sha),
                }),
            }
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(ToolError::new(format!(
                "patch line {at}: expected *** Add File:, *** Update File: or *** Delete File:, found {line}"
            )));
        }
    }
    Ok(out)
}

/// The file's text with every chunk applied in order, each found at or after the end of
/// the previous one: exactly first, then ignoring trailing and finally surrounding
/// whitespace (models reflow indentation); a chunk found nowhere is an error.
fn update(path: &str, base: &str, chunks: &[Chunk]) -> Result<String, ToolError> {
    let mut lines: Vec<String> = base.split('\n').map(str::to_string).collect();
    let trailing_newline = base.ends_with('\n');
    if trailing_newline {
        lines.pop();
    }
    let mut cursor = 0usize;
    for (n, c) in chunks.iter().enumerate() {
        if let Some(anchor) = &c.anchor {
            match find(&lines, std::slice::from_ref(anchor), cursor, false) {
                Some(at) => cursor = at + 1,
                None => {
                    return Err(ToolError::new(format!(
                        "{path}: hunk {} is anchored at `@@ {anchor}`, which is not in the file; nothing was written",
                        n + 1
                    )))
                }
            }
        }
        let at = if c.old.is_empty() {
            if c.anchor.is_some() {
                cursor
            } else {
                lines.len()
            }
        } else {
            find(&lines, &c.old, cursor, c.at_end).ok_or_else(|| {
                ToolError::new(format!(
                    "{path}: hunk {} does not match the file (expected lines: {:?}); nothing was written",
                    n + 1,
                    c.old.iter().take(3).collect::<Vec<_>>()
                ))
            })?
        };
        let end = at + c.old.len();
        lines.splice(at..end, c.new.iter().cloned());
        cursor = at + c.new.len();
    }
    let mut text = lines.join("\n");
    if trailing_newline || !text.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

fn find(lines: &[String], want: &[String], from: usize, at_end: bool) -> Option<usize> {
    if want.len() > lines.len() {
        return None;
    }
    let last = lines.len() - want.len();
    let eq: [fn(&str, &str) -> bool; 3] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
    ];
    for cmp in eq {
        let matches = |at: usize| {
            lines
                .get(at..at + want.len())
                .is_some_and(|w| w.iter().zip(want).all(|(a, b)| cmp(a, b)))
        };
        if at_end && last >= from && matches(last) {
            return Some(last);
        }
        if let Some(at) = (from..=last).find(|&at| matches(at)) {
            return Some(at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn run(files: &[(&str, &str)], body: &str) -> Result<Vec<FileChange>, ToolError> {
        let map: BTreeMap<String, String> = files
            .iter()
            .map(|(p, c)| ((*p).to_string(), (*c).to_string()))
            .collect();
        apply(body, &mut |p: &str| Ok(map.get(p).cloned()))
    }

    fn written(c: &[FileChange], path: &str) -> String {
        c.iter()
            .find_map(|c| match c {
                FileChange::Write {
                    path: p, content, ..
                } if p == path => Some(content.clone()),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn codex_add_update_delete_move() {
        let body = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Update File: a.rs\n@@ fn main() {\n-    old();\n+    new();\n }\n*** Delete File: gone.txt\n*** Update File: m.txt\n*** Move to: moved.txt\n-x\n+y\n*** End Patch\n";
        let c = run(
            &[
                ("a.rs", "fn main() {\n    old();\n}\n"),
                ("gone.txt", "bye\n"),
                ("m.txt", "x\n"),
            ],
            body,
        )
        .unwrap();
        assert_eq!(written(&c, "new.txt"), "hello\n");
        assert_eq!(written(&c, "a.rs"), "fn main() {\n    new();\n}\n");
        assert_eq!(written(&c, "moved.txt"), "y\n");
        assert!(c
            .iter()
            .any(|c| matches!(c, FileChange::Delete { path, .. } if path == "gone.txt")));
        assert!(c
            .iter()
            .any(|c| matches!(c, FileChange::Delete { path, .. } if path == "m.txt")));
    }

    #[test]
    fn a_hunk_that_does_not_match_is_an_error() {
        let body = "*** Begin Patch\n*** Update File: a\n-nope\n+x\n*** End Patch";
        assert!(run(&[("a", "yes\n")], body)
            .unwrap_err()
            .0
            .contains("does not match"));
        let diff = "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-nope\n+x\n";
        assert!(run(&[("a", "yes\n")], diff).is_err());
    }

    #[test]
    fn unified_new_modified_and_deleted_files() {
        let diff = "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new\n--- a/m\n+++ b/m\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n";
        let c = run(&[("m", "a\nb\n"), ("d", "gone\n")], diff).unwrap();
        assert_eq!(written(&c, "n"), "new\n");
        assert_eq!(written(&c, "m"), "a\nc\n");
        assert!(matches!(&c[2], FileChange::Delete { path, .. } if path == "d"));
    }

    #[test]
    fn creating_an_existing_file_or_updating_a_missing_one_fails() {
        let add = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch";
        assert!(run(&[("a", "x\n")], add)
            .unwrap_err()
            .0
            .contains("already exists"));
        let upd = "*** Begin Patch\n*** Update File: b\n-x\n+y\n*** End Patch";
        assert!(run(&[], upd).unwrap_err().0.contains("does not exist"));
        assert!(run(&[], "*** Begin Patch\n*** Add File: a\n+x\n").is_err());
    }
}

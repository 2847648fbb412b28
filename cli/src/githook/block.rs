//! The managed block in a git `pre-commit` hook: pure byte transforms, no I/O.
//!
//! Hooks are edited as bytes, never as text, so a hook in any encoding (or with CRLF line
//! ends) keeps every byte outside the block. Installing and then uninstalling gives back
//! the original file exactly; the two marker lines inside the block that make this
//! possible (`CREATED`, `NEWLINE_ADDED`) record the only changes install makes outside
//! the block's own lines.

/// First line of the block. Recognised by `BEGIN_PREFIX`, so a later wording change of
/// the tail still finds blocks written by older versions.
pub const BEGIN: &str = "# >>> contextos pre-commit (managed; do not edit) >>>";
/// Last line of the block.
pub const END: &str = "# <<< contextos pre-commit <<<";
const BEGIN_PREFIX: &[u8] = b"# >>> contextos pre-commit";
const END_PREFIX: &[u8] = b"# <<< contextos pre-commit";
/// The hook file did not exist before install: uninstall may delete it again.
const CREATED: &[u8] = b"# contextos: this file was created by `contextos hook install`";
/// Line 1 had no line end, so install added one: uninstall takes it away again.
const NEWLINE_ADDED: &[u8] =
    b"# contextos: the line end of line 1 was added by `contextos hook install`";
/// What a hook file created by install starts with.
pub const CREATED_SHEBANG: &[u8] = b"#!/bin/sh\n";

/// Interpreters whose language runs the block: POSIX shells and the shells that accept
/// POSIX syntax. The block uses nothing beyond `if`, `[`, `$(…)`, `||` and `exit`.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "ash", "ksh", "ksh93", "mksh", "pdksh", "lksh", "zsh", "yash", "posh",
];

/// How much of a hook is looked at to tell a binary from a script.
const SNIFF_BYTES: usize = 8192;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    #[error("line {line}: the contextos block begins here but has no end marker (`{END}`); fix or remove it by hand")]
    Unterminated { line: usize },
    #[error("line {line}: a contextos end marker without a begin marker (`{BEGIN}`); fix or remove it by hand")]
    Unopened { line: usize },
    #[error("line {line}: a contextos begin marker inside the block that begins on line {outer}; fix or remove it by hand")]
    Nested { line: usize, outer: usize },
    #[error("the hook is a `{interpreter}` script (line 1: `{shebang}`), and only a POSIX shell hook can carry the contextos block; keep your hook under another name and call it from a `#!/bin/sh` pre-commit after the block, e.g. `exec \"$(dirname \"$0\")/pre-commit.{suggested}\" \"$@\"`")]
    NotShell {
        interpreter: String,
        shebang: String,
        suggested: String,
    },
    #[error("the hook is a binary program, not a shell script, so the contextos block cannot be added; rename it and call it from a `#!/bin/sh` pre-commit")]
    Binary,
    #[error("the path {0:?} contains a line break or NUL byte, which a hook line cannot hold")]
    UnquotablePath(String),
}

/// What install did to the hook's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// No hook existed: a new `#!/bin/sh` file holding only the block.
    Created,
    /// The block was added to the user's hook.
    Inserted,
    /// An earlier block was replaced (new binary path, or moved back to the top).
    Updated,
    /// The hook already holds exactly this block in the right place.
    Unchanged,
}

/// What uninstall does with the hook file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// There is no block: leave the file alone.
    Absent,
    /// Only install's own `#!/bin/sh` is left: delete the file.
    Delete,
    /// Write back the user's hook without the block.
    Write(Vec<u8>),
}

/// A hook with every block taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    pub text: Vec<u8>,
    /// How many blocks were removed.
    pub blocks: usize,
    /// A removed block recorded that install created the file.
    pub created: bool,
}

/// Where the block goes in a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// After line 1, the shebang; `terminated` is false when line 1 has no line end.
    AfterShebang { end: usize, terminated: bool },
    /// No shebang: git runs such a file with `/bin/sh` (execve fails with ENOEXEC and
    /// git retries through the shell), so the block goes first, where sh runs it first.
    Top,
}

/// The lines between the markers: the shell that runs the scan.
///
/// `bin` is the absolute path of the contextos binary; `project` is the project directory
/// relative to the working tree root (empty for the root itself).
pub fn body(bin: &[u8], project: &[u8]) -> Result<Vec<u8>, BlockError> {
    let bin_q = sh_quote(bin)?;
    let project_expr = if project.is_empty() {
        b"\"$contextos_root\"".to_vec()
    } else {
        let mut e = b"\"$contextos_root\"/".to_vec();
        e.extend_from_slice(&sh_quote(project)?);
        e
    };
    let mut out = Vec::new();
    out.extend_from_slice(
        b"# Runs before every line below it; `contextos hook uninstall` removes this block.\n",
    );
    out.extend_from_slice(b"contextos_bin=");
    out.extend_from_slice(&bin_q);
    out.extend_from_slice(b"\n");
    out.extend_from_slice(
        b"if ! [ -f \"$contextos_bin\" ] || ! [ -x \"$contextos_bin\" ]; then\n\
          \techo \"contextos: commit blocked: the pre-commit hook cannot run $contextos_bin (missing or not executable).\" >&2\n\
          \techo \"contextos: run \\`contextos hook install\\` with the contextos you use now to repair the hook.\" >&2\n\
          \texit 1\n\
          fi\n\
          contextos_root=$(git rev-parse --show-toplevel) || {\n\
          \techo \"contextos: commit blocked: cannot find the root of the working tree.\" >&2\n\
          \texit 1\n\
          }\n",
    );
    out.extend_from_slice(b"\"$contextos_bin\" --project ");
    out.extend_from_slice(&project_expr);
    out.extend_from_slice(b" scan --staged --enforce || exit $?\n");
    out.extend_from_slice(b"unset contextos_bin contextos_root\n");
    Ok(out)
}

/// Single-quotes `s` for a POSIX shell: nothing inside single quotes is special except
/// the quote itself, which is closed, escaped and reopened.
pub fn sh_quote(s: &[u8]) -> Result<Vec<u8>, BlockError> {
    if s.iter().any(|b| matches!(b, b'\n' | b'\r' | 0)) {
        return Err(BlockError::UnquotablePath(
            String::from_utf8_lossy(s).into_owned(),
        ));
    }
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'\'');
    for &b in s {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    Ok(out)
}

/// Adds the block (with `body` between the markers) to `existing`, or creates a hook
/// holding only the block. Earlier blocks, wherever they are, are replaced: a block
/// placed after a user's `exit 0` would never run.
pub fn install(existing: Option<&[u8]>, body: &[u8]) -> Result<(Vec<u8>, Installed), BlockError> {
    let Some(existing) = existing else {
        return Ok((insert(CREATED_SHEBANG, body, true)?, Installed::Created));
    };
    let stripped = strip(existing)?;
    let new = insert(&stripped.text, body, stripped.created)?;
    let action = if stripped.blocks == 0 {
        Installed::Inserted
    } else if new == existing {
        Installed::Unchanged
    } else {
        Installed::Updated
    };
    Ok((new, action))
}

/// What uninstall should do with a hook holding `existing`.
pub fn uninstall(existing: &[u8]) -> Result<Removal, BlockError> {
    let stripped = strip(existing)?;
    Ok(if stripped.blocks == 0 {
        Removal::Absent
    } else if stripped.created && stripped.text == CREATED_SHEBANG {
        Removal::Delete
    } else {
        Removal::Write(stripped.text)
    })
}

/// Takes every block out of `text`, undoing the line end install added. A damaged block
/// is an error with its line, so nothing is written over a hook we do not understand.
pub fn strip(text: &[u8]) -> Result<Stripped, BlockError> {
    let mut out = Vec::with_capacity(text.len());
    let mut blocks = 0;
    let mut created = false;
    // (line of the begin marker, newline-added flag seen, created flag seen)
    let mut open: Option<(usize, bool, bool)> = None;
    for (i, raw) in text.split_inclusive(|b| *b == b'\n').enumerate() {
        let line = i + 1;
        let content = trim_eol(raw);
        let is_begin = content.starts_with(BEGIN_PREFIX);
        let is_end = content.starts_with(END_PREFIX);
        match open.as_mut() {
            None if is_begin => open = Some((line, false, false)),
            None if is_end => return Err(BlockError::Unopened { line }),
            None => out.extend_from_slice(raw),
            Some((outer, _, _)) if is_begin => {
                return Err(BlockError::Nested {
                    line,
                    outer: *outer,
                })
            }
            Some((_, newline_added, was_created)) if is_end => {
                if *newline_added && out.last() == Some(&b'\n') {
                    out.pop();
                }
                created |= *was_created;
                blocks += 1;
                open = None;
            }
            Some((_, newline_added, was_created)) => {
                if content == NEWLINE_ADDED {
                    *newline_added = true;
                } else if content == CREATED {
                    *was_created = true;
                }
            }
        }
    }
    if let Some((line, _, _)) = open {
        return Err(BlockError::Unterminated { line });
    }
    Ok(Stripped {
        text: out,
        blocks,
        created,
    })
}

/// The interpreter named by a `#!` line, looking through `env` (and its options and
/// `NAME=value` assignments) and `busybox`.
pub fn interpreter(shebang: &[u8]) -> String {
    let line = String::from_utf8_lossy(trim_eol(shebang.strip_prefix(b"#!").unwrap_or(shebang)))
        .into_owned();
    let mut words = line.split_whitespace();
    let Some(prog) = words.next() else {
        return String::new();
    };
    let base = basename(prog);
    if base == "env" || base == "busybox" {
        if let Some(next) = words.find(|w| !w.starts_with('-') && !w.contains('=')) {
            return basename(next).to_string();
        }
    }
    base.to_string()
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn place(text: &[u8]) -> Result<Place, BlockError> {
    if text.iter().take(SNIFF_BYTES).any(|b| *b == 0) {
        return Err(BlockError::Binary);
    }
    if !text.starts_with(b"#!") {
        return Ok(Place::Top);
    }
    let (end, terminated) = match text.iter().position(|b| *b == b'\n') {
        Some(i) => (i + 1, true),
        None => (text.len(), false),
    };
    let first = text.get(..end).unwrap_or(text);
    let interp = interpreter(first);
    if !SHELLS.contains(&interp.as_str()) {
        let suggested = match interp.as_str() {
            "" => "orig".to_string(),
            i => i
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
                .to_string(),
        };
        return Err(BlockError::NotShell {
            interpreter: if interp.is_empty() {
                "(none)".to_string()
            } else {
                interp
            },
            shebang: String::from_utf8_lossy(trim_eol(first)).into_owned(),
            suggested,
        });
    }
    Ok(Place::AfterShebang { end, terminated })
}

fn insert(original: &[u8], body: &[u8], created: bool) -> Result<Vec<u8>, BlockError> {
    let place = place(original)?;
    let mut block = Vec::with_capacity(body.len() + 256);
    block.extend_from_slice(BEGIN.as_bytes());
    block.push(b'\n');
    if created {
        block.extend_from_slice(CREATED);
        block.push(b'\n');
    }
    let mut out = Vec::with_capacity(original.len() + body.len() + 256);
    match place {
        Place::AfterShebang { end, terminated } => {
            if !terminated {
                block.extend_from_slice(NEWLINE_ADDED);
                block.push(b'\n');
            }
            let (head, tail) = original.split_at(end.min(original.len()));
            out.extend_from_slice(head);
            if !terminated {
                out.push(b'\n');
            }
            finish(&mut block, body);
            out.extend_from_slice(&block);
            out.extend_from_slice(tail);
        }
        Place::Top => {
            finish(&mut block, body);
            out.extend_from_slice(&block);
            out.extend_from_slice(original);
        }
    }
    Ok(out)
}

fn finish(block: &mut Vec<u8>, body: &[u8]) {
    block.extend_from_slice(body);
    if !body.is_empty() && !body.ends_with(b"\n") {
        block.push(b'\n');
    }
    block.extend_from_slice(END.as_bytes());
    block.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn b() -> Vec<u8> {
        body(b"/opt/contextos/bin/contextos", b"").unwrap()
    }

    fn roundtrip(original: &[u8]) {
        let (installed, _) = install(Some(original), &b()).unwrap();
        match uninstall(&installed).unwrap() {
            Removal::Write(t) => assert_eq!(t, original),
            other => panic!("expected the original back, got {other:?}"),
        }
    }

    #[test]
    fn a_new_hook_is_sh_and_only_the_block_and_uninstall_deletes_it() {
        let (text, action) = install(None, &b()).unwrap();
        assert_eq!(action, Installed::Created);
        assert!(text.starts_with(b"#!/bin/sh\n# >>> contextos pre-commit"));
        assert!(text.ends_with(b"# <<< contextos pre-commit <<<\n"));
        assert_eq!(uninstall(&text).unwrap(), Removal::Delete);
    }

    #[test]
    fn the_block_goes_right_after_the_shebang_before_the_users_lines() {
        let user = b"#!/bin/bash -e\necho user\nexit 0\n";
        let (text, action) = install(Some(user), &b()).unwrap();
        assert_eq!(action, Installed::Inserted);
        let s = String::from_utf8(text).unwrap();
        let begin = s.find(BEGIN).unwrap();
        assert_eq!(begin, "#!/bin/bash -e\n".len());
        assert!(s.find("echo user").unwrap() > s.find(END).unwrap());
        roundtrip(user);
    }

    #[test]
    fn installing_twice_gives_one_block_and_a_new_binary_updates_it() {
        let user = b"#!/bin/sh\necho user\n";
        let (once, _) = install(Some(user), &b()).unwrap();
        let (twice, action) = install(Some(&once), &b()).unwrap();
        assert_eq!(action, Installed::Unchanged);
        assert_eq!(once, twice);
        let other = body(b"/usr/local/bin/contextos", b"").unwrap();
        let (moved, action) = install(Some(&once), &other).unwrap();
        assert_eq!(action, Installed::Updated);
        let s = String::from_utf8(moved.clone()).unwrap();
        assert_eq!(s.matches(BEGIN).count(), 1);
        assert!(s.contains("'/usr/local/bin/contextos'"));
        assert!(!s.contains("/opt/contextos"));
        assert_eq!(uninstall(&moved).unwrap(), Removal::Write(user.to_vec()));
    }

    #[test]
    fn a_block_after_the_users_exit_moves_back_to_the_top() {
        let mut legacy = b"#!/bin/sh\necho user\nexit 0\n".to_vec();
        let (created, _) = install(None, &b()).unwrap();
        // A block that somebody (or an older tool) left at the bottom.
        legacy.extend_from_slice(&created["#!/bin/sh\n".len()..]);
        let (text, action) = install(Some(&legacy), &b()).unwrap();
        assert_eq!(action, Installed::Updated);
        let s = String::from_utf8(text.clone()).unwrap();
        assert!(s.starts_with(&format!("#!/bin/sh\n{BEGIN}\n")));
        assert_eq!(s.matches(BEGIN).count(), 1);
        // The moved block still remembers the file was ours; the user's lines keep it.
        assert_eq!(
            uninstall(&text).unwrap(),
            Removal::Write(b"#!/bin/sh\necho user\nexit 0\n".to_vec())
        );
    }

    #[test]
    fn a_created_hook_the_user_added_lines_to_is_kept() {
        let (mut text, _) = install(None, &b()).unwrap();
        text.extend_from_slice(b"echo mine\n");
        assert_eq!(
            uninstall(&text).unwrap(),
            Removal::Write(b"#!/bin/sh\necho mine\n".to_vec())
        );
    }

    #[test]
    fn a_users_bare_shebang_is_kept_not_deleted() {
        let (text, _) = install(Some(b"#!/bin/sh\n"), &b()).unwrap();
        assert_eq!(
            uninstall(&text).unwrap(),
            Removal::Write(b"#!/bin/sh\n".to_vec())
        );
    }

    #[test]
    fn a_shebang_without_line_end_gets_one_and_loses_it_again() {
        let (text, _) = install(Some(b"#!/bin/sh"), &b()).unwrap();
        assert!(text.starts_with(format!("#!/bin/sh\n{BEGIN}\n").as_bytes()));
        roundtrip(b"#!/bin/sh");
    }

    #[test]
    fn crlf_and_non_utf8_bytes_survive() {
        roundtrip(b"#!/bin/sh\r\necho caf\xe9\r\n");
        roundtrip(b"#!/bin/sh\n\xff\xfe odd bytes\n");
    }

    #[test]
    fn a_hook_without_shebang_gets_the_block_first_as_git_runs_it_with_sh() {
        let user = b"echo no shebang\n";
        let (text, _) = install(Some(user), &b()).unwrap();
        assert!(text.starts_with(BEGIN.as_bytes()));
        assert!(text.ends_with(user));
        roundtrip(user);
        roundtrip(b"");
    }

    #[test]
    fn shells_are_accepted_with_env_and_arguments() {
        for s in [
            "#!/bin/sh",
            "#! /bin/sh -eu",
            "#!/usr/bin/env bash",
            "#!/usr/bin/env -S bash -e",
            "#!/usr/bin/env LC_ALL=C dash",
            "#!/bin/dash",
            "#!/bin/ksh",
            "#!/usr/bin/zsh -f",
            "#!/bin/ash",
            "#!/bin/busybox sh",
            "#!/usr/local/bin/bash\r",
        ] {
            let text = format!("{s}\necho hi\n");
            assert!(
                install(Some(text.as_bytes()), &b()).is_ok(),
                "{s} should be accepted"
            );
        }
    }

    #[test]
    fn other_interpreters_are_refused_by_name() {
        for (s, name) in [
            ("#!/usr/bin/env python3", "python3"),
            ("#!/usr/bin/python", "python"),
            ("#!/usr/bin/env node", "node"),
            ("#!/usr/bin/perl -w", "perl"),
            ("#!/usr/bin/env ruby", "ruby"),
            ("#!/usr/bin/fish", "fish"),
            ("#!/bin/csh", "csh"),
            ("#!", "(none)"),
        ] {
            let text = format!("{s}\nprint('hi')\n");
            match install(Some(text.as_bytes()), &b()) {
                Err(BlockError::NotShell { interpreter, .. }) => assert_eq!(interpreter, name),
                other => panic!("{s}: expected a refusal, got {other:?}"),
            }
        }
        let e = install(Some(b"#!/usr/bin/env python3\n"), &b()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("python3") && msg.contains("pre-commit.python"),
            "{msg}"
        );
    }

    #[test]
    fn a_binary_hook_is_refused() {
        assert_eq!(
            install(Some(b"\x7fELF\x02\x01\x01\0\0\0"), &b()),
            Err(BlockError::Binary)
        );
    }

    #[test]
    fn damaged_blocks_are_errors_with_their_line() {
        let unterminated = format!("#!/bin/sh\necho a\n{BEGIN}\necho b\n");
        assert_eq!(
            strip(unterminated.as_bytes()),
            Err(BlockError::Unterminated { line: 3 })
        );
        let unopened = format!("#!/bin/sh\n{END}\n");
        assert_eq!(
            strip(unopened.as_bytes()),
            Err(BlockError::Unopened { line: 2 })
        );
        let nested = format!("#!/bin/sh\n{BEGIN}\n{BEGIN}\n{END}\n");
        assert_eq!(
            strip(nested.as_bytes()),
            Err(BlockError::Nested { line: 3, outer: 2 })
        );
        assert!(install(Some(unterminated.as_bytes()), &b()).is_err());
        assert!(uninstall(unopened.as_bytes()).is_err());
    }

    #[test]
    fn lines_that_merely_mention_the_markers_are_not_markers() {
        let user = format!("#!/bin/sh\necho '{BEGIN}'\n  {END}\n");
        roundtrip(user.as_bytes());
        assert_eq!(uninstall(user.as_bytes()).unwrap(), Removal::Absent);
    }

    #[test]
    fn paths_are_single_quoted_and_line_breaks_refused() {
        assert_eq!(sh_quote(b"/a b/c").unwrap(), b"'/a b/c'");
        assert_eq!(sh_quote(b"/it's").unwrap(), b"'/it'\\''s'");
        assert_eq!(sh_quote(b"/$(x)`y`").unwrap(), b"'/$(x)`y`'");
        assert!(sh_quote(b"/a\nb").is_err());
        let s = String::from_utf8(body(b"/x/contextos", b"sub dir").unwrap()).unwrap();
        assert!(s.contains(
            "--project \"$contextos_root\"/'sub dir' scan --staged --enforce || exit $?"
        ));
    }

    proptest! {
        #[test]
        fn install_then_uninstall_is_identity(
            shebang in prop::sample::select(vec!["#!/bin/sh", "#!/usr/bin/env bash", "#!/bin/dash -e", ""]),
            eol in prop::sample::select(vec!["\n", "\r\n", ""]),
            rest in prop::collection::vec(1u8..=255, 0..200),
        ) {
            let mut original = format!("{shebang}{eol}").into_bytes();
            if !original.is_empty() && eol.is_empty() {
                // A shebang without line end is the whole file.
            } else {
                original.extend_from_slice(&rest);
            }
            // Marker-looking user lines are damaged blocks by definition; skip them.
            prop_assume!(strip(&original).map(|s| s.blocks == 0).unwrap_or(false));
            prop_assume!(place(&original).is_ok());
            let (once, _) = install(Some(&original), &b()).unwrap();
            let (twice, action) = install(Some(&once), &b()).unwrap();
            prop_assert_eq!(action, Installed::Unchanged);
            prop_assert_eq!(&once, &twice);
            prop_assert_eq!(uninstall(&once).unwrap(), Removal::Write(original));
        }
    }
}

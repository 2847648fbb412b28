//! Editors: every file named is written, and commands given to the editor can write
//! any file (unknown).

use super::effects::Out;
use crate::options::{listed, options, parse};
use crate::wrappers::SUDO;

/// vi, vim, nvim, ex: every file operand is written. Commands given on the command
/// line (`-c`, `--cmd`, `+cmd`, `-S`, `-s`) and Ex mode (commands read from stdin, `-e`)
/// can write any file: unknown.
pub(super) fn vim(name: &str, args: &[String], out: &mut Out) {
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

/// `ed`, `red`: the named file is edited with commands read from stdin.
pub(super) fn ed(args: &[String], out: &mut Out) {
    // The commands can write any file (`w F`).
    out.unknown();
    let p = parse(args, &options("p", "prompt", ""));
    p.operands().for_each(|f| out.edit(f));
}

/// `sudoedit FILE…` (sudo's options).
pub(super) fn sudoedit(args: &[String], out: &mut Out) {
    let p = parse(args, &SUDO);
    if p.unknown.is_some() {
        out.unknown();
    }
    p.operands().for_each(|f| out.edit(f));
}

/// An editor of [`EDITORS`] (options are whole words); `false` when `name` is none.
pub(super) fn word_options_editor(name: &str, args: &[String], out: &mut Out) -> bool {
    match EDITORS.iter().find(|e| listed(e.names, name)) {
        Some(e) => {
            editor(e, args, out);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(editors);
}

//! Shell lines: the parser and the file model never panic, and every file a simple,
//! independent oracle sees written on a line of plain words (`> f`, `>> f`, `rm f…`,
//! `touch f…`, `cp SRC… DST`) is among the writes and deletes the model reports.
#![no_main]

use contextos_shell::{file_effects, normalise_path, split, FileOp};
use libfuzzer_sys::fuzz_target;

/// Words the oracle understands: no quoting, expansion, globbing, operator or option.
fn plain(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'))
}

/// Words that are syntax, not a command name, at the start of a line.
const RESERVED: [&str; 16] = [
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "function", "time", "coproc",
];

/// The files the line writes or deletes, by the oracle's reading; `None` when the line
/// is not one it reads (anything but plain words separated by spaces and the operators
/// `>` and `>>`, each followed by a plain word).
fn oracle(line: &str) -> Option<Vec<String>> {
    let tokens: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
    let mut words = Vec::new();
    let mut written = Vec::new();
    let mut i = 0;
    while let Some(&t) = tokens.get(i) {
        if t == ">" || t == ">>" {
            let target = *tokens.get(i + 1)?;
            if !plain(target) {
                return None;
            }
            if !target.starts_with("/dev/") {
                written.push(target.to_string());
            }
            i += 2;
            continue;
        }
        if !plain(t) && !t.starts_with('-') {
            return None;
        }
        words.push(t);
        i += 1;
    }
    let Some((&program, operands)) = words.split_first() else {
        return None;
    };
    if RESERVED.contains(&program) {
        return None;
    }
    // Options change what a program's operands mean: the oracle reads none.
    if operands.iter().all(|w| plain(w)) {
        match program {
            "rm" | "touch" => written.extend(operands.iter().map(|w| w.to_string())),
            "cp" if operands.len() >= 2 => {
                written.extend(operands.last().map(|w| w.to_string()));
            }
            _ => {}
        }
    }
    Some(written)
}

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(commands) = split(line) else {
        return;
    };
    let mut model: Vec<String> = Vec::new();
    for c in &commands {
        model.extend(c.writes.iter().map(|w| normalise_path(w)));
        let effects = file_effects(&c.argv);
        model.extend(
            effects
                .effects
                .iter()
                .filter(|e| e.op != FileOp::Read)
                .map(|e| normalise_path(&e.path)),
        );
    }
    let Some(expected) = oracle(line) else {
        return;
    };
    for w in expected {
        let w = normalise_path(&w);
        // `cp SRC DST` may be reported as `DST/SRC-basename`, the copy into a directory.
        let found = model.iter().any(|m| {
            *m == w
                || m.strip_prefix(w.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        });
        assert!(
            found,
            "`{line}` writes `{w}`, which the model misses (model: {model:?})"
        );
    }
});

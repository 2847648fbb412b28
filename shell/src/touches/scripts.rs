//! What sed scripts and awk programs do besides filtering: the files they write
//! (`w FILE`, `print > "f"`), read (`r FILE`, `getline < "f"`) and the commands they
//! run (`sed e`, `system()`, pipes to and from commands).

use super::effects::Out;

/// Files and commands found in a script.
#[derive(Default, Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) writes: Vec<String>,
    pub(super) reads: Vec<String>,
    /// The script runs commands (what they are may be built at run time).
    pub(super) runs: bool,
    /// The script could not be read: it may do anything sed can.
    pub(super) unreadable: bool,
}

impl Found {
    pub(super) fn report(self, name: &str, script: &str, out: &mut Out) {
        out.writes(self.writes.iter().map(String::as_str));
        out.reads(self.reads.iter().map(String::as_str));
        if self.runs {
            out.code(script);
            out.opaque(format!("the {name} program runs commands"));
        }
        if self.unreadable {
            out.unknown();
        }
    }
}

/// The rest of the line from `i`: sed's file names and texts end there.
fn to_eol(b: &[u8], i: &mut usize) -> String {
    let start = *i;
    while *i < b.len() && b[*i] != b'\n' {
        *i += 1;
    }
    String::from_utf8_lossy(b.get(start..*i).unwrap_or_default())
        .trim()
        .to_string()
}

/// Skips a delimited part (`/re/`, `s/a/b/`'s halves), honouring `\` escapes.
fn delimited(b: &[u8], i: &mut usize, delim: u8) -> bool {
    while *i < b.len() {
        match b[*i] {
            b'\\' => *i += 2,
            c if c == delim => {
                *i += 1;
                return true;
            }
            b'\n' if delim != b'\n' => return false,
            _ => *i += 1,
        }
    }
    false
}

/// A GNU sed script: `w`/`W FILE` and `s///w FILE` write, `r`/`R FILE` read, `e`
/// and `s///e` run commands.
pub(super) fn sed(script: &str) -> Found {
    let b = script.as_bytes();
    let mut f = Found::default();
    let mut i = 0;
    let skip_blank = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b';') {
            *i += 1;
        }
    };
    while i < b.len() {
        skip_blank(&mut i);
        // Addresses: numbers, `$`, `/re/`, `\cREc`, `first~step`, `addr,+N`, `!`.
        loop {
            match b.get(i) {
                Some(b'0'..=b'9' | b'$' | b',' | b'~' | b'+' | b'!' | b' ') => i += 1,
                Some(b'/') => {
                    i += 1;
                    if !delimited(b, &mut i, b'/') {
                        f.unreadable = true;
                        return f;
                    }
                    while matches!(b.get(i), Some(b'I' | b'M')) {
                        i += 1;
                    }
                }
                Some(b'\\') => {
                    let Some(&d) = b.get(i + 1) else {
                        f.unreadable = true;
                        return f;
                    };
                    i += 2;
                    if !delimited(b, &mut i, d) {
                        f.unreadable = true;
                        return f;
                    }
                }
                _ => break,
            }
        }
        let Some(&cmd) = b.get(i) else { break };
        i += 1;
        match cmd {
            b'{' | b'}' | b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p'
            | b'P' | b'x' | b'z' | b'F' => {}
            b'q' | b'Q' | b'l' | b'L' => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            b'#' | b':' | b'b' | b't' | b'T' | b'v' => {
                // Labels end at `;` in GNU sed (but not for `:label`), comments at EOL.
                while i < b.len() && b[i] != b'\n' && (cmd == b'#' || cmd == b':' || b[i] != b';') {
                    i += 1;
                }
            }
            b'a' | b'i' | b'c' => {
                to_eol(b, &mut i);
            }
            b'w' | b'W' => f.writes.push(to_eol(b, &mut i)),
            b'r' | b'R' => f.reads.push(to_eol(b, &mut i)),
            b'e' => {
                to_eol(b, &mut i);
                f.runs = true;
            }
            b's' | b'y' => {
                let Some(&d) = b.get(i) else {
                    f.unreadable = true;
                    return f;
                };
                i += 1;
                if !delimited(b, &mut i, d) || !delimited(b, &mut i, d) {
                    f.unreadable = true;
                    return f;
                }
                if cmd == b'y' {
                    continue;
                }
                // Flags: g p i I m M e NUMBER, then `w FILE` to the end of the line.
                while let Some(&c) = b.get(i) {
                    match c {
                        b'w' => {
                            i += 1;
                            f.writes.push(to_eol(b, &mut i));
                            break;
                        }
                        b'e' => {
                            f.runs = true;
                            i += 1;
                        }
                        b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9' => i += 1,
                        _ => break,
                    }
                }
            }
            _ => {
                f.unreadable = true;
                return f;
            }
        }
    }
    f.writes.retain(|w| !w.is_empty());
    f.reads.retain(|r| !r.is_empty());
    f
}

/// A string literal starting at `b[i]` (`"…"`), with awk's escapes.
fn awk_string(b: &[u8], i: &mut usize) -> Option<String> {
    if b.get(*i) != Some(&b'"') {
        return None;
    }
    *i += 1;
    let mut s = Vec::new();
    while let Some(&c) = b.get(*i) {
        *i += 1;
        match c {
            b'"' => return Some(String::from_utf8_lossy(&s).into_owned()),
            b'\\' => {
                if let Some(&n) = b.get(*i) {
                    s.push(match n {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                    *i += 1;
                }
            }
            _ => s.push(c),
        }
    }
    None
}

/// An awk program: `system(…)`, `| "cmd"`, `"cmd" | getline` and `|&` run commands;
/// `> "file"` and `>> "file"` write, `getline < "file"` reads. A redirection to a
/// non-literal target is a write we cannot name (unknown).
pub(super) fn awk(program: &str) -> Found {
    let b = program.as_bytes();
    // `system` anywhere outside a string literal, even where the scan below would
    // take it for part of a regular expression.
    let mut f = Found {
        runs: mentions_system(b),
        ..Found::default()
    };
    let mut i = 0;
    // `>` is a redirection only in a print statement (`$1 > 5 {…}` compares).
    let mut printing = false;
    // The previous token ends an operand, so `/` divides instead of starting a
    // regular expression.
    let mut operand = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                if awk_string(b, &mut i).is_none() {
                    break;
                }
                operand = true;
                continue;
            }
            b'/' if !operand => {
                i += 1;
                delimited(b, &mut i, b'/');
                operand = true;
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'|' => {
                if b.get(i + 1) == Some(&b'|') {
                    i += 2;
                    operand = false;
                    continue;
                }
                // `print | "cmd"`, `"cmd" | getline`, `cmd |& getline`.
                f.runs = true;
            }
            b'>' | b'<' if printing || c == b'<' => {
                let append = b.get(i + 1) == Some(&b'>');
                if c == b'<' && !getline_before(b, i) {
                    i += 1;
                    operand = false;
                    continue;
                }
                i += 1 + usize::from(append);
                while matches!(b.get(i), Some(b' ' | b'\t')) {
                    i += 1;
                }
                match awk_string(b, &mut i) {
                    Some(target) if c == b'>' => f.writes.push(target),
                    Some(target) => f.reads.push(target),
                    None if c == b'>' => f.unreadable = true,
                    None => {}
                }
                operand = true;
                continue;
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' => {
                let start = i;
                i += 1;
                while b
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    i += 1;
                }
                let word = b.get(start..i).unwrap_or_default();
                if matches!(word, b"print" | b"printf") {
                    printing = true;
                    operand = false;
                } else {
                    operand = true;
                }
                continue;
            }
            b')' | b']' => operand = true,
            b' ' | b'\t' => {}
            _ => {
                if matches!(c, b';' | b'\n' | b'{' | b'}') {
                    printing = false;
                }
                operand = false;
            }
        }
        i += 1;
    }
    f
}

/// Whether `system` appears as a word outside string literals.
fn mentions_system(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            if awk_string(b, &mut i).is_none() {
                return false;
            }
            continue;
        }
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'_';
        if boundary && b.get(i..i + 6) == Some(b"system") {
            let after = b.get(i + 6);
            if !after.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// Whether the `<` at `b[at]` follows `getline` (`getline < "file"`, `getline x <`).
fn getline_before(b: &[u8], at: usize) -> bool {
    let before = String::from_utf8_lossy(b.get(..at).unwrap_or_default()).into_owned();
    let words: Vec<&str> = before.split_whitespace().rev().take(2).collect();
    words.iter().any(|w| w.ends_with("getline"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    case_files!(sed_and_awk_scripts);

    #[test]
    fn sed_commands() {
        let f = sed("s/a/b/w out.txt");
        assert_eq!(f.writes, ["out.txt"]);
        let f = sed("1d;/x/r in.txt\n$w last");
        assert_eq!(
            (f.reads, f.writes),
            (vec!["in.txt".to_string()], vec!["last".to_string()])
        );
        assert!(sed("s/x/date/e").runs);
        assert!(sed("1e id").runs);
        assert!(!sed("s/e/w/g;y/abc/xyz/").runs);
        assert!(sed("s/e/w/g;y/abc/xyz/").writes.is_empty());
        assert!(sed("k").unreadable);
        assert!(sed("s/unterminated").unreadable);
    }

    #[test]
    fn awk_programs() {
        assert!(awk("BEGIN{system(\"id\")}").runs);
        assert!(awk("{print | \"sh\"}").runs);
        assert!(awk("BEGIN{\"date\" | getline d}").runs);
        assert!(!awk("$1 > 5 {print $2}").runs);
        assert!(awk("$1 > 5 {print $2}").writes.is_empty());
        assert_eq!(awk("{print > \"out\"}").writes, ["out"]);
        assert_eq!(awk("{print $0 >> \"log\"}").writes, ["log"]);
        assert_eq!(
            awk("BEGIN{while((getline l < \"f\") > 0) n++}").reads,
            ["f"]
        );
        assert!(awk("{print > $1}").unreadable);
        assert!(!awk("$1 || $2 {print}").runs);
        assert!(!awk("/a|b/ {print}").runs);
        // A division is not a regular expression hiding a call.
        assert!(awk("{x = 1/2; system(\"id\"); y = 3/4}").runs);
        assert!(awk("{x = $1/2; print | \"sh\"; y = 3/4}").runs);
    }
}

//! The text of string literals: escape sequences and the indentation of triple-quoted
//! strings. Shared by both parse paths so they build the same text.

/// The text of a `"…"` body, or the byte offset and message of a bad escape.
pub fn unescape(body: &str) -> Result<String, (usize, String)> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((_, 'r')) => out.push('\r'),
            Some((_, '0')) => out.push('\0'),
            Some((_, '"')) => out.push('"'),
            Some((_, '\\')) => out.push('\\'),
            Some((_, 'u')) => {
                let rest = &body[i + 2..];
                let close = rest
                    .find('}')
                    .ok_or((i, "unterminated \\u{…} escape".to_string()))?;
                let hex = rest.get(1..close).unwrap_or("");
                let ch = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or((i, format!("\\u{{{hex}}} is not a Unicode scalar value")))?;
                out.push(ch);
                for _ in 0..=close {
                    chars.next();
                }
            }
            _ => return Err((i, "unknown escape sequence".to_string())),
        }
    }
    Ok(out)
}

/// Triple-quoted text: drop the first line break and the common indentation, so the
/// text can be indented with the surrounding code.
pub fn dedent(raw: &str) -> String {
    let raw = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    let lines: Vec<&str> = raw.lines().collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                ""
            } else {
                l.get(indent..).unwrap_or("")
            }
        })
        .map(|l| l.trim_end())
        .collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

//! JSON with comments and trailing commas (JSONC), as VS Code reads its `.vscode/mcp.json`
//! and Cursor its `.cursor/mcp.json`: comments and trailing commas are removed, strings
//! kept byte for byte, and the result parsed as strict JSON.

/// Parses JSONC text.
pub fn parse(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(&strip(text))
}

/// `text` without `//` and `/* */` comments and without commas that close nothing but a
/// `]` or `}`. Comments become spaces, so error positions stay on the same line.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    // Where the last comma written sits in `out`, while only whitespace followed it.
    let mut pending_comma: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                pending_comma = None;
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(b.len());
                out.extend_from_slice(&b[start..i]);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                for &c in &b[i..end] {
                    out.push(if c == b'\n' { b'\n' } else { b' ' });
                }
                i = end;
                continue;
            }
            b',' => pending_comma = Some(out.len()),
            b']' | b'}' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => pending_comma = None,
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_accepted_and_strings_kept() {
        let text = r#"{
            // the servers
            "servers": {
                "build": { "command": "npx", /* pinned */ "args": ["-y", "a//b", "c/*d*/",], },
            },
        }"#;
        let v = parse(text).unwrap();
        assert_eq!(
            v["servers"]["build"]["args"],
            serde_json::json!(["-y", "a//b", "c/*d*/"])
        );
        assert!(parse(r#"{"a": "x\"//y",}"#).is_ok_and(|v| v["a"] == "x\"//y"));
        assert!(parse("{\"a\": 1 // trailing").is_err());
        assert!(parse("{\"a\": ,}").is_err());
    }
}

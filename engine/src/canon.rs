//! Lexical canonicalisation of request paths, applied before any rule sees a path.
//!
//! Rules are written against repository-relative, `/`-separated paths. A path that cannot
//! be brought into that form is rejected with a stable reason code and the request is
//! denied without consulting rules. The full safe-path primitive (device names, NTFS
//! streams, physical resolution beneath the root) extends this module.

/// A rejected path: `code` is stable and documented in the book.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PathRejection {
    pub code: &'static str,
    pub message: String,
}

fn reject(code: &'static str, message: impl Into<String>) -> PathRejection {
    PathRejection {
        code,
        message: message.into(),
    }
}

/// Maximum length of a canonical path in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// Returns the canonical repository-relative form of `raw`: `/` separators, no `.`
/// segments, no empty segments. Absolute paths, drive letters, `..` and control
/// characters are rejected.
pub fn canonical_path(raw: &str) -> Result<String, PathRejection> {
    if raw.is_empty() {
        return Err(reject("path.empty", "the path is empty"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(reject(
            "path.too-long",
            format!("the path is longer than {MAX_PATH_BYTES} bytes"),
        ));
    }
    if raw.contains('\0') {
        return Err(reject("path.nul", "the path contains a NUL byte"));
    }
    if raw.chars().any(char::is_control) {
        return Err(reject(
            "path.control",
            "the path contains a control character",
        ));
    }
    if raw.starts_with('/') || raw.starts_with('\\') {
        return Err(reject(
            "path.absolute",
            "absolute paths are outside the project; use a repository-relative path",
        ));
    }
    let bytes = raw.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(reject(
            "path.drive",
            "drive-letter paths are outside the project",
        ));
    }
    let mut segments: Vec<&str> = Vec::new();
    for seg in raw.split(['/', '\\']) {
        match seg {
            "" | "." => {}
            ".." => {
                return Err(reject(
                    "path.traversal",
                    "`..` segments may escape the project and are not allowed",
                ))
            }
            s => segments.push(s),
        }
    }
    if segments.is_empty() {
        return Err(reject(
            "path.empty",
            "the path names the project root itself",
        ));
    }
    Ok(segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_separators_and_dots() {
        assert_eq!(canonical_path("./src//lib.rs").as_deref(), Ok("src/lib.rs"));
        assert_eq!(canonical_path("src\\main.rs").as_deref(), Ok("src/main.rs"));
    }

    #[test]
    fn rejects_escapes_with_stable_codes() {
        let code = |p: &str| canonical_path(p).map_err(|e| e.code);
        assert_eq!(code("/etc/passwd"), Err("path.absolute"));
        assert_eq!(code("\\\\server\\share"), Err("path.absolute"));
        assert_eq!(code("C:\\Windows"), Err("path.drive"));
        assert_eq!(code("c:relative"), Err("path.drive"));
        assert_eq!(code("src/../../etc"), Err("path.traversal"));
        assert_eq!(code("..\\x"), Err("path.traversal"));
        assert_eq!(code("a\0b"), Err("path.nul"));
        assert_eq!(code("a\nb"), Err("path.control"));
        assert_eq!(code(""), Err("path.empty"));
        assert_eq!(code("./"), Err("path.empty"));
        assert_eq!(code(&"a".repeat(5000)), Err("path.too-long"));
    }
}

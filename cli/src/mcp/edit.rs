//! The exact-string replacement of `edit_file`, with the semantics agents already know
//! from their own Edit tool: the old string must occur exactly once (so the model has
//! said unambiguously where), unless every occurrence is to be replaced.

use super::limits::ToolError;

/// `content` with `old` replaced by `new`; `old` must occur exactly once unless `all`.
pub fn replace(
    path: &str,
    content: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<String, ToolError> {
    if old.is_empty() {
        return Err(ToolError::new(format!(
            "{path}: old_string is empty; to create or overwrite a file use write_file"
        )));
    }
    if old == new {
        return Err(ToolError::new(format!(
            "{path}: old_string and new_string are the same; nothing would change"
        )));
    }
    let count = content.matches(old).count();
    match count {
        0 => Err(ToolError::new(format!(
            "{path}: old_string not found in the file (it must match exactly, whitespace included)"
        ))),
        1 => Ok(content.replacen(old, new, 1)),
        _ if all => Ok(content.replace(old, new)),
        n => Err(ToolError::new(format!(
            "{path}: old_string occurs {n} times; give more surrounding text so it occurs exactly once, or set replace_all"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::replace;

    #[test]
    fn one_occurrence_is_replaced() {
        assert_eq!(replace("f", "a b c", "b", "B", false).unwrap(), "a B c");
    }

    #[test]
    fn none_or_several_are_errors_that_say_so() {
        assert!(replace("f", "abc", "x", "y", false)
            .unwrap_err()
            .0
            .contains("not found"));
        assert!(replace("f", "a a", "a", "b", false)
            .unwrap_err()
            .0
            .contains("occurs 2 times"));
        assert_eq!(replace("f", "a a", "a", "b", true).unwrap(), "b b");
    }

    #[test]
    fn same_strings_and_empty_old_are_refused() {
        assert!(replace("f", "a", "a", "a", false)
            .unwrap_err()
            .0
            .contains("same"));
        assert!(replace("f", "a", "", "b", false)
            .unwrap_err()
            .0
            .contains("empty"));
    }
}

//! argv as a shell line.

/// Quotes argv words so the shell splitter sees exactly these words; wrappers such as
/// `sudo` or `sh -c` in argv form are then unwrapped like in shell form.
pub fn shell_quote(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

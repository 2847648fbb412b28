//! The two lines that delimit ContextOS's managed block in a Markdown file.

/// Opens ContextOS's managed block; must be alone on its line.
pub const BLOCK_BEGIN: &str = "<!-- contextos:begin -->";
/// Closes ContextOS's managed block; must be alone on its line.
pub const BLOCK_END: &str = "<!-- contextos:end -->";

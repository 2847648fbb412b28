//! Bounds on the work one command line may cause, so that a hostile line costs a
//! bounded amount of time and memory and is refused rather than half analysed.

/// Longest command line analysed, in bytes: a longer one is refused, not truncated.
pub const MAX_INPUT_LEN: usize = 64 * 1024;

/// Deepest nesting analysed: substitutions, subshells, compound commands, wrappers
/// (`sudo env nice …`, `find -exec`) and re-parsed strings (`sh -c`, `eval`) all count
/// against this one limit, for the splitter and the file model alike.
pub const MAX_DEPTH: usize = 32;

/// Most strings (commands and their argv/piped_from/writes entries) one result may hold.
pub(crate) const MAX_OUTPUT_ENTRIES: usize = 1 << 20;

/// Most bytes the strings of one result may hold.
pub(crate) const MAX_OUTPUT_BYTES: usize = 32 << 20;

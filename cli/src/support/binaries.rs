//! The two binaries' file names: `contextos` (what people, agents and git hooks run) and
//! the companion it hands `scan`, `run`, `session`, `mcp` and `hook install|uninstall` to, installed in the
//! same directory.

/// The front binary's file name.
pub const FRONT: &str = "contextos";

/// The companion's file name, beside the front binary.
pub const COMPANION: &str = "contextos-full";

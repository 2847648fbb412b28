//! The splitter's result type.

/// One simple command that the shell line would run: the unit a policy decides, so a
/// dangerous program cannot hide inside a list, a pipeline, a substitution or a wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Words after quote removal. Unexpanded parameters/substitutions are kept as their literal source text (e.g. "$HOME").
    pub argv: Vec<String>,
    /// Basenames of the programs of the earlier commands in the same pipeline (for `curl x | sh`, the `sh` command has piped_from = ["curl"]). Transitive: `a | b | c` gives c ["a","b"].
    pub piped_from: Vec<String>,
    /// Redirection targets opened for writing (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `N>`), literal text after quote removal. Exclude fd duplications like `2>&1`, and exclude /dev/null, /dev/stdout, /dev/stderr, /dev/tty.
    pub writes: Vec<String>,
    /// True when any word of argv (or a redirection target) contains an unexpanded parameter, command/arithmetic substitution, or an unquoted glob character, i.e. the real argv may differ.
    pub dynamic: bool,
}

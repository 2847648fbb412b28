//! The splitter's result type.

/// One simple command that the shell line would run: the unit a policy decides, so a
/// dangerous program cannot hide inside a list, a pipeline, a substitution or a wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words policies match, after quote removal. Unexpanded parameters and
    /// substitutions are kept as their source text (`$HOME`), so a rule can still see
    /// that the word is not a plain literal.
    pub argv: Vec<String>,
    /// Basenames of the programs whose output reaches this command's standard input,
    /// so that `curl x | sh` can be denied while `sh` alone is allowed: the earlier
    /// commands of the pipeline, transitively (`a | b | c` gives `c` `["a", "b"]`),
    /// and those of `<(…)`, here-strings and here-document bodies.
    pub piped_from: Vec<String>,
    /// Redirection targets opened for writing (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`,
    /// `N>`), after quote removal, decided as path writes like any other write.
    /// Descriptor duplications (`2>&1`) and device files such as `/dev/null` are left
    /// out: they change no file.
    pub writes: Vec<String>,
    /// The real argv may differ from `argv`: a word (or a redirection target) holds an
    /// unexpanded parameter, a substitution or an unquoted glob, or arguments come from
    /// `xargs`' input or `find`'s files. A policy must not trust such an argv to be
    /// harmless.
    pub dynamic: bool,
    /// Environment assignments the command runs with, `NAME=value` as written: prefix
    /// assignments (`LD_PRELOAD=x ls`), those of an `env`/`sudo` wrapper, those inherited
    /// by the commands a shell wrapper runs, and earlier `export NAME=value`s of the line.
    /// They change what a program does (`GIT_PAGER`, `LD_PRELOAD`), so a policy sees them.
    pub env: Vec<String>,
    /// The working directory the command runs in, relative to the line's own: `Some("")`
    /// where the line started, `Some("sub")`, `Some("../x")`, `Some("/abs")` or
    /// `Some("~/x")` after literal `cd`/`pushd`/`popd` steps; `None` when an earlier step
    /// changed it to something only known at run time (`cd "$D"`, `cd -`, a `cd` that may
    /// or may not have run).
    pub cwd: Option<String>,
    /// The command is a shell whose script comes from a here-document or here-string on
    /// its standard input, and that script was parsed: its commands follow this one, so
    /// what the shell runs is not hidden.
    pub stdin_script: bool,
    /// Files opened for reading by redirections (`< f`, `0< f`), after quote removal.
    pub reads: Vec<String>,
}

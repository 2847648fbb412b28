//! How a program model is called, shared by the dispatcher and the models it calls.

/// How the program gets its arguments.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ctx {
    /// Standard input adds arguments (under `xargs`).
    pub(crate) stdin_args: bool,
    /// The program is a wrapper whose own options are already read (`args` are its
    /// words outside the commands it runs).
    pub(crate) wrapper: bool,
}

//! Why a command line could not be analysed. Every error means "ask": the caller must
//! never act on a partial result.

use crate::limits::MAX_DEPTH;

/// Why a command line could not be split; the caller treats every one as
/// unanalysable (ask), so a line the model does not understand is never allowed by
/// accident.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The line is not valid shell, or uses a construct that cannot be attributed faithfully.
    #[error("cannot parse shell command at byte {offset}: {message}")]
    Syntax {
        /// Byte offset in the input (approximate inside re-parsed strings such as `sh -c` arguments).
        offset: usize,
        /// What went wrong.
        message: String,
    },
    /// Nesting exceeds [`MAX_DEPTH`]: refused so that a hostile line cannot exhaust
    /// the stack.
    #[error("shell command nests deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// The input exceeds [`MAX_INPUT_LEN`](crate::MAX_INPUT_LEN): refused, not
    /// truncated, so that nothing past the limit goes unseen.
    #[error("shell command is too long ({len} bytes, limit {limit})")]
    TooLong {
        /// Length of the input in bytes.
        len: usize,
        /// The length limit.
        limit: usize,
    },
}

pub(crate) type Res<T> = Result<T, ShellError>;

/// The error of nesting past [`MAX_DEPTH`].
pub(crate) fn too_deep() -> ShellError {
    ShellError::TooDeep { limit: MAX_DEPTH }
}

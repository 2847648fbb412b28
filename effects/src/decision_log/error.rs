//! What can go wrong with the log as a whole (I/O, waiting, damage); problems found in
//! the records themselves are a [`super::report::Problem`] instead.

use crate::user_key::UserKeyError;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: timed out after {waited:?} waiting for the decision-log append guard")]
    GuardTimeout { path: PathBuf, waited: Duration },
    #[error("{path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: {reason}; refusing to extend a decision log whose tail cannot be trusted (verify it, then reseal it deliberately)")]
    Tampered { path: PathBuf, reason: String },
    #[error(transparent)]
    Key(#[from] UserKeyError),
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(super) fn corrupt(path: &Path, reason: impl Into<String>) -> LogError {
    LogError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

pub(super) fn tampered(path: &Path, reason: impl Into<String>) -> LogError {
    LogError::Tampered {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

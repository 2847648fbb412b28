//! How a command ends, as the exit status every caller (shell, git hook, CI) reads.

use contextos_engine::Effect;
use std::process::ExitCode;

/// 0 allow / clean, 1 deny / findings / failing tests, 2 could not verify, 3 ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    Findings,
    Unverified,
    Ask,
    /// A status the command passes through: the exit status of the command `contextos
    /// run` ran, or the one an agent's hook protocol prescribes for its answer.
    Status(u8),
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Findings => 1,
            Exit::Unverified => 2,
            Exit::Ask => 3,
            Exit::Status(c) => c,
        }
    }

    /// The exit of a verdict: allow 0, deny 1, ask 3.
    pub fn of(verdict: Effect) -> Exit {
        match verdict {
            Effect::Allow => Exit::Ok,
            Effect::Deny => Exit::Findings,
            Effect::Ask => Exit::Ask,
        }
    }

    /// Of two check outcomes, the one that must be reported: could not verify over
    /// findings over passed.
    pub fn worst(self, other: Exit) -> Exit {
        match (self, other) {
            (Exit::Unverified, _) | (_, Exit::Unverified) => Exit::Unverified,
            (Exit::Findings, _) | (_, Exit::Findings) => Exit::Findings,
            _ => Exit::Ok,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

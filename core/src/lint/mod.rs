//! Lints: warnings about policies that compile but cannot mean what they say — a head
//! pattern no canonical request can match, a condition that can never hold, a rule that
//! can never decide because a stronger one always covers it. Each has a stable code, a
//! location and a fix hint; `contextos check --strict` makes them errors.
//!
//! `head` judges one head pattern as written, `conditions` the typed clauses of a rule,
//! `shadow` pairs of rules. None of them changes what the policy decides.

pub mod conditions;
pub mod head;
pub mod shadow;

/// One lint finding before it is tied to a file: code, message, help, and the byte span in
/// the rule's source it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable code (`W03xx`).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: String,
}

impl Finding {
    pub(crate) fn new(code: &'static str, message: String, help: String) -> Finding {
        Finding {
            code,
            message,
            help,
        }
    }
}

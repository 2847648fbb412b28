//! Sandbox sessions: one warm container per agent session whose workspace is writable
//! and whose changes are captured exactly.
//!
//! Two capture modes with one change semantics:
//! - [`CaptureMode::Overlay`]: the project is the read-only lower layer of an overlay
//!   volume; the upper directory in a per-session scratch directory *is* the changeset
//!   (files, whiteouts, opaque directories). The container never writes the host.
//! - [`CaptureMode::Copy`]: a private copy of the project, diffed against a recorded
//!   baseline after each command, where overlay volumes are not available.
//!
//! One job per module: [`state`] (the persisted record), [`lock`] (one user of a session
//! at a time), [`fingerprint`] (the host walk), [`ignore`] (what stays in the session),
//! [`changes`] (the view of the session and the changeset), [`overlay`] and [`copy`]
//! (each mode's scratch area), `exec` (commands through the Engine API's exec).

pub mod changes;
pub mod copy;
pub mod fingerprint;
pub mod ignore;
pub mod lock;
pub mod overlay;
pub mod state;

use serde::{Deserialize, Serialize};

/// How a session captures what its commands change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureMode {
    Overlay,
    Copy,
}

impl std::fmt::Display for CaptureMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CaptureMode::Overlay => "overlay",
            CaptureMode::Copy => "copy",
        })
    }
}

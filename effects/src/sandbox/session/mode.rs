//! The two ways a session captures what its commands change (see the module above).

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

//! An `ask` verdict put to the person behind the client: MCP elicitation
//! (`elicitation/create`) with a one-field boolean form. A client that did not declare
//! the capability cannot ask anyone, so the call is refused instead (never assumed yes).

use rmcp::service::{ElicitationError, ElicitationMode};
use rmcp::{Peer, RoleServer};
use std::time::Duration;

/// The form the person answers.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Confirm {
    /// True to let the call proceed.
    #[schemars(description = "Allow this action?")]
    pub confirm: bool,
}

rmcp::elicit_safe!(Confirm);

/// How long a person has to answer before the call is refused.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// What came of asking.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    Confirmed,
    /// Declined, cancelled, answered "no", or no answer in time: the reason says which.
    Refused(String),
    /// The client has no elicitation: nobody can be asked.
    Unsupported,
}

pub fn supported(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

/// Asks the person to confirm `reason`.
pub async fn ask(peer: &Peer<RoleServer>, reason: &str) -> Asked {
    if !supported(peer) {
        return Asked::Unsupported;
    }
    let message = format!("{reason}\n\nAllow this action?");
    match peer
        .elicit_with_timeout::<Confirm>(message, Some(ANSWER_TIMEOUT))
        .await
    {
        Ok(Some(Confirm { confirm: true })) => Asked::Confirmed,
        Ok(Some(Confirm { confirm: false })) => Asked::Refused("the person answered no".into()),
        Ok(None) | Err(ElicitationError::NoContent) => {
            Asked::Refused("the person gave no answer".into())
        }
        Err(ElicitationError::UserDeclined) => Asked::Refused("the person declined".into()),
        Err(ElicitationError::UserCancelled) => {
            Asked::Refused("the person dismissed the question".into())
        }
        Err(ElicitationError::CapabilityNotSupported) => Asked::Unsupported,
        Err(e) => Asked::Refused(format!("the question could not be asked: {e}")),
    }
}

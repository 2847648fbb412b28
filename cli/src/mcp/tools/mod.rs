//! The five tools (their names are the contract agents are configured with), one file
//! each, and the table `tools/list` publishes: name, description, input JSON Schema.
//!
//! Arguments are parsed here, not by the SDK, so that a missing field, a wrong type or
//! an unknown field is a tool error the model can read and correct, never a protocol
//! error that some clients surface as a broken server.

pub mod apply_patch;
pub mod edit_file;
pub mod read_file;
pub mod run;
pub mod write_file;

use super::gate::log_invalid;
use super::limits::{Failure, ToolError};
use super::state::State;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use rmcp::{Peer, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// `tools/list`.
pub fn list() -> Vec<Tool> {
    vec![
        tool::<read_file::Args>(read_file::NAME, read_file::DESCRIPTION, true),
        tool::<write_file::Args>(write_file::NAME, write_file::DESCRIPTION, false),
        tool::<edit_file::Args>(edit_file::NAME, edit_file::DESCRIPTION, false),
        tool::<apply_patch::Args>(apply_patch::NAME, apply_patch::DESCRIPTION, false),
        tool::<run::Args>(run::NAME, run::DESCRIPTION, false),
    ]
}

fn tool<T: schemars::JsonSchema + std::any::Any>(
    name: &'static str,
    description: &'static str,
    read_only: bool,
) -> Tool {
    let mut t = Tool::new(name, description, schema_for_type::<T>());
    let mut hints = ToolAnnotations::new();
    hints.read_only_hint = Some(read_only);
    hints.destructive_hint = Some(!read_only);
    t.annotations = Some(hints);
    t
}

/// `tools/call`: an unknown tool or bad arguments are tool errors too.
pub async fn call(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    name: &str,
    arguments: Option<JsonObject>,
) -> CallToolResult {
    let result = match name {
        read_file::NAME => match args(name, arguments) {
            Ok(a) => read_file::call(state, peer, a).await,
            Err(e) => Err(Failure::Unlogged(e)),
        },
        write_file::NAME => match args(name, arguments) {
            Ok(a) => write_file::call(state, peer, a).await,
            Err(e) => Err(Failure::Unlogged(e)),
        },
        edit_file::NAME => match args(name, arguments) {
            Ok(a) => edit_file::call(state, peer, a).await,
            Err(e) => Err(Failure::Unlogged(e)),
        },
        apply_patch::NAME => match args(name, arguments) {
            Ok(a) => apply_patch::call(state, peer, a).await,
            Err(e) => Err(Failure::Unlogged(e)),
        },
        run::NAME => match args(name, arguments) {
            Ok(a) => run::call(state, peer, a).await,
            Err(e) => Err(Failure::Unlogged(e)),
        },
        other => Err(Failure::Unlogged(ToolError::new(format!(
            "unknown tool `{other}`; the tools are read_file, write_file, edit_file, apply_patch and run"
        )))),
    };
    match result {
        Ok(r) => r,
        Err(Failure::Logged(e)) => e.into_result(),
        Err(Failure::Unlogged(e)) => {
            log_invalid(state, name, &e);
            e.into_result()
        }
    }
}

fn args<T: DeserializeOwned>(tool: &str, arguments: Option<JsonObject>) -> Result<T, ToolError> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value)
        .map_err(|e| ToolError::new(format!("invalid arguments for {tool}: {e}")))
}

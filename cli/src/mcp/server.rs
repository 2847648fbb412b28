//! The MCP server: capabilities, protocol versions, `tools/list` and `tools/call` over
//! stdio. Standard output is the protocol and nothing else writes to it; diagnostics go
//! to stderr.

use super::state::State;
use super::tools;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use std::borrow::Cow;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Server {
    state: Arc<State>,
}

impl Server {
    pub fn new(state: State) -> Server {
        Server {
            state: Arc::new(state),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "ContextOS boundary tools: read, write, edit and patch the project's files and run commands in the sandbox. Every call is decided by the project's ContextOS policies; a denied call changes nothing and says which rule denied it.",
        )
    }

    /// Up to 2025-11-25, the last revision in which a server may send
    /// `elicitation/create` in the middle of a tool call: an `ask` verdict needs it.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::list().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result =
            tools::call(&self.state, &context.peer, &request.name, request.arguments).await;
        Ok(CallToolResponse::Complete(result))
    }
}

/// Serves on stdin/stdout until the client closes the connection.
pub async fn serve(state: State) -> Result<(), String> {
    let service = Server::new(state)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("the MCP session ended with an error: {e}"))
}

//! What the hook knows beyond an action's words, for the `net` and `mcp` domains: the
//! secret material a request carries (the scan detectors run over its URL, query,
//! arguments or command line), and what the project says about an MCP server (listed,
//! trusted, its definition against the pin).

use crate::project::Project;
use crate::support::mcp_pins::{Catalog, Pins};
use contextos_engine::emit::{wiring, McpEndpoint};
use contextos_engine::{McpRequest, NetOp, NetRequest, PolicySet};

/// The secret detectors of the policy set, for `net.carries` and `mcp.carries`; prepared
/// on first use, so a file operation's hook call never pays for them.
pub struct Secrets<'a> {
    #[cfg_attr(
        not(feature = "scan"),
        allow(dead_code, reason = "read by the detectors only")
    )]
    set: &'a PolicySet,
    #[cfg(feature = "scan")]
    detectors: std::sync::OnceLock<Option<contextos_engine::scan::detect::Detectors>>,
}

impl<'a> Secrets<'a> {
    /// The detectors of `set`, not yet prepared. A set whose detectors cannot be prepared
    /// or run makes every request carry `secret:detectors-failed`.
    pub fn new(set: &'a PolicySet) -> Secrets<'a> {
        Secrets {
            set,
            #[cfg(feature = "scan")]
            detectors: std::sync::OnceLock::new(),
        }
    }

    /// `secret:ID` for every secret detector that fires on `text`.
    pub fn carries(&self, text: &str) -> Vec<String> {
        #[cfg(feature = "scan")]
        {
            use contextos_engine::scan::{self, Added, ChangeStatus, ChangedFile, EntryKind};
            if text.is_empty() {
                return Vec::new();
            }
            let prepared = self.detectors.get_or_init(|| {
                self.set
                    .detectors
                    .get()
                    .ok()
                    .and_then(|d| contextos_engine::scan::detect::Detectors::new(d).ok())
            });
            // Detectors that cannot run cannot vouch for the request: it is taken to carry
            // a secret (denied), never to be clean.
            let Some(d) = prepared else {
                return vec![UNSCANNABLE.to_string()];
            };
            // URLs carry values percent-encoded; detectors read them decoded too.
            let decoded = percent_decode(text);
            let body = if decoded == text {
                text.to_string()
            } else {
                format!("{text}\n{decoded}")
            };
            let file = ChangedFile {
                path: "request.txt".into(),
                status: ChangeStatus::Added,
                kind: EntryKind::File,
                size: body.len() as u64,
                content: Some(body.into_bytes()),
                added: Added::All,
                oversize: false,
            };
            let Ok(found) = scan::find(d, &[file], None) else {
                return vec![UNSCANNABLE.to_string()];
            };
            let mut out: Vec<String> = found
                .into_iter()
                .filter(|f| f.kind == scan::finding::FindingKind::Secret)
                .map(|f| format!("secret:{}", f.rule))
                .collect();
            out.sort();
            out.dedup();
            out
        }
        #[cfg(not(feature = "scan"))]
        {
            let _ = text;
            Vec::new()
        }
    }
}

/// What a request carries when the detectors could not look at it.
#[cfg(feature = "scan")]
const UNSCANNABLE: &str = "secret:detectors-failed";

/// `%41` → `A`; invalid escapes are kept as written.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What the project says about its MCP servers.
pub struct McpFacts {
    listed: Vec<String>,
    trusted: Vec<String>,
    pins: Result<Pins, String>,
    root: std::path::PathBuf,
    /// The project's MCP files, read on the first MCP call: a shell or file event never
    /// pays for them.
    catalog: std::sync::OnceLock<Catalog>,
}

/// The file Cursor reads its project MCP servers from, where a server Cursor names only by
/// its command line or URL is looked up first.
const CURSOR_MCP_FILE: &str = ".cursor/mcp.json";

impl McpFacts {
    pub fn new(project: &Project) -> McpFacts {
        McpFacts {
            listed: project.config.mcp.servers.clone(),
            trusted: project.config.mcp.trusted.clone(),
            pins: Pins::load(&project.root).map_err(|e| e.to_string()),
            root: project.root.clone(),
            catalog: std::sync::OnceLock::new(),
        }
    }

    fn catalog(&self) -> &Catalog {
        self.catalog.get_or_init(|| Catalog::read(&self.root))
    }

    /// ContextOS's own server is always listed and trusted: it decides its own tools.
    fn own(server: &str) -> bool {
        server == wiring::MCP_SERVER
    }

    pub fn trusted(&self, server: &str) -> bool {
        Self::own(server) || self.trusted.iter().any(|s| s == server)
    }

    /// The server a call names, or the one the project defines with the command line or
    /// URL the agent reports, or whose name prefixes the tool's; `None` when nothing
    /// tells. With it, the tool's own name.
    pub fn resolve(
        &self,
        server: Option<&str>,
        tool: &str,
        endpoint: &McpEndpoint,
    ) -> (Option<String>, String) {
        if let Some(s) = server.filter(|s| !s.is_empty()) {
            return (Some(s.to_string()), tool.to_string());
        }
        match endpoint {
            McpEndpoint::Command(line) | McpEndpoint::Url(line) => (
                self.catalog().identify(line, CURSOR_MCP_FILE),
                tool.to_string(),
            ),
            McpEndpoint::Prefixed => {
                let known = self
                    .listed
                    .iter()
                    .map(String::as_str)
                    .chain(self.catalog().defs.iter().map(|(_, n, _)| n.as_str()))
                    .chain([wiring::MCP_SERVER]);
                let best = known
                    .filter(|s| {
                        tool.strip_prefix(*s)
                            .and_then(|r| r.strip_prefix('-'))
                            .is_some_and(|t| !t.is_empty())
                    })
                    .max_by_key(|s| s.len());
                match best {
                    Some(s) => (Some(s.to_string()), tool[s.len() + 1..].to_string()),
                    None => (None, tool.to_string()),
                }
            }
            McpEndpoint::Named | McpEndpoint::JudgedElsewhere => (None, tool.to_string()),
        }
    }

    /// The state of ContextOS's own server: pinned while every project file defines it as
    /// `compile` writes it (`contextos mcp`); any other definition under its name is judged
    /// against an approval like any server's, so the name cannot smuggle in a program.
    fn own_state(&self) -> String {
        let as_compiled = self.catalog().of(wiring::MCP_SERVER).iter().all(|(_, d)| {
            d.command == wiring::MCP_COMMAND && d.args == wiring::MCP_ARGS && d.is_plain_stdio()
        });
        if as_compiled && self.catalog().unreadable.is_empty() {
            "pinned".to_string()
        } else {
            self.pinned_state(wiring::MCP_SERVER)
        }
    }

    fn pinned_state(&self, server: &str) -> String {
        match &self.pins {
            Ok(p) => p.state_in(self.catalog(), server).to_string(),
            Err(_) => "changed".to_string(),
        }
    }

    /// The `mcp` request for a call. An approval file that cannot be read counts every
    /// listed server as changed (refused), never as pinned.
    pub fn request(
        &self,
        server: &str,
        tool: &str,
        args: &str,
        carries: Vec<String>,
    ) -> McpRequest {
        let listed = Self::own(server) || self.listed.iter().any(|s| s == server);
        let definition = if Self::own(server) {
            self.own_state()
        } else if !listed {
            String::new()
        } else {
            self.pinned_state(server)
        };
        McpRequest {
            server: server.to_string(),
            tool: tool.to_string(),
            args: args.to_string(),
            carries,
            listed,
            trusted: self.trusted(server),
            definition,
        }
    }
}

/// The keys under which MCP tools take the page they fetch or navigate to (`fetch`,
/// `browser_navigate`, `puppeteer_navigate`, …).
const URL_KEYS: &[&str] = &["url", "uri", "href", "link", "target_url", "page_url"];

/// The web addresses an MCP call's arguments hand to the server to fetch or open: the
/// call reaches them through the server, as a `net fetch` would.
pub fn mcp_urls(args: Option<&serde_json::Value>) -> Vec<String> {
    let Some(obj) = args.and_then(serde_json::Value::as_object) else {
        return Vec::new();
    };
    URL_KEYS
        .iter()
        .filter_map(|k| obj.get(*k).and_then(serde_json::Value::as_str))
        .map(str::trim)
        .filter(|u| {
            let l = u.to_ascii_lowercase();
            l.starts_with("http://") || l.starts_with("https://")
        })
        .map(str::to_string)
        .collect()
}

/// The `net` request of a web fetch by an agent tool.
pub fn fetch(tool: &str, url: &str, carries: Vec<String>) -> NetRequest {
    NetRequest {
        op: NetOp::Fetch,
        target: url.to_string(),
        tool: tool.to_string(),
        method: "GET".into(),
        carries,
        ..NetRequest::default()
    }
}

/// The `net` request of a web search: the query goes to the agent's search provider,
/// named `search://web`.
pub fn search(tool: &str, query: &str, carries: Vec<String>) -> NetRequest {
    let mut target = url_encoded(query);
    target.insert_str(0, "search://web/?q=");
    NetRequest {
        op: NetOp::Fetch,
        target,
        tool: tool.to_string(),
        method: "GET".into(),
        carries,
        ..NetRequest::default()
    }
}

fn url_encoded(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_are_decoded_and_broken_ones_kept() {
        assert_eq!(percent_decode("a%41b+c%zz%4"), "aAb c%zz%4");
        assert_eq!(url_encoded("a b/c"), "a%20b%2Fc");
    }
}

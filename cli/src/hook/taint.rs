//! Session taint: the untrusted inputs an agent session has seen, kept per session under
//! `.contextos/state/sessions/agents/`. Bounded (at most [`MAX_SOURCES`] sources a
//! session, [`MAX_SESSIONS`] sessions), expiring (a session untouched for [`EXPIRY`] is
//! forgotten) and masked (the file is named by a digest of the session id, and sources
//! name a host, a server or a project path — never a URL's query or a tool's result).
//! Only a person clears taint: `contextos session clear` is denied to agents by the
//! stdlib (`std-exec-governance-commands`).

use contextos_engine::emit::{Action, McpEndpoint};
use contextos_engine::{PolicySet, Request, RequestKind, Session};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the sessions live, beside the sandbox sessions of `contextos run`.
pub const AGENT_SESSIONS_DIR: &str = ".contextos/state/sessions/agents";
/// Sources kept per session; later ones only raise the count.
pub const MAX_SOURCES: usize = 64;
/// Session files kept per project; the least recently touched go first.
pub const MAX_SESSIONS: usize = 512;
/// A session untouched this long is forgotten.
pub const EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);

/// One session's record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    /// The first characters of the session id, for a person to recognise it.
    pub id_hint: String,
    pub agent: String,
    /// Unix seconds.
    pub started: u64,
    pub updated: u64,
    /// Untrusted inputs, first seen first, deduplicated.
    pub sources: Vec<TaintSource>,
    /// How many sources were seen in all (beyond [`MAX_SOURCES`] they are only counted).
    pub seen: u64,
}

/// One untrusted input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TaintSource {
    /// `fetch:HOST`, `search`, `mcp:SERVER`, `read:PATH`.
    pub source: String,
    /// The agent tool that brought it in.
    pub tool: String,
    /// Unix seconds.
    pub at: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The file of a session: named by a digest, so the directory lists no session ids.
pub fn file_of(root: &Path, session: &str) -> PathBuf {
    let mut h = Sha256::new();
    h.update(session.as_bytes());
    let hex = format!("{:x}", h.finalize());
    root.join(AGENT_SESSIONS_DIR)
        .join(format!("{}.json", &hex[..32]))
}

fn hint(session: &str) -> String {
    session.chars().take(8).collect()
}

/// The session's record, if it exists and has not expired. An unreadable record is a
/// tainted one: a file someone corrupted must not clear the taint.
pub fn load(root: &Path, session: &str) -> Option<Record> {
    let bytes = match std::fs::read(file_of(root, session)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        // A record that exists but cannot be read is not a clean session either.
        Err(_) => b"unreadable".to_vec(),
    };
    let rec = serde_json::from_slice::<Record>(&bytes).unwrap_or_else(|_| Record {
        id_hint: hint(session),
        sources: vec![TaintSource {
            source: "unreadable-record".into(),
            tool: String::new(),
            at: now(),
        }],
        seen: 1,
        ..Record::default()
    });
    let fresh =
        now().saturating_sub(rec.updated.max(rec.started)) < EXPIRY.as_secs() || rec.updated == 0;
    fresh.then_some(rec)
}

/// The session as the evaluator sees it.
pub fn session(root: &Path, session: Option<&str>) -> Option<Session> {
    let id = session.filter(|s| !s.is_empty())?;
    let rec = load(root, id);
    Some(Session {
        id: id.to_string(),
        tainted: rec.as_ref().is_some_and(|r| !r.sources.is_empty()),
        taint_sources: rec
            .map(|r| r.sources.into_iter().map(|s| s.source).collect())
            .unwrap_or_default(),
    })
}

/// Adds `sources` to the session's record; returns the ones that were new.
pub fn record(
    root: &Path,
    session: &str,
    agent: &str,
    tool: &str,
    sources: &[String],
) -> std::io::Result<Vec<String>> {
    if sources.is_empty() || session.is_empty() {
        return Ok(Vec::new());
    }
    let path = file_of(root, session);
    let t = now();
    let mut rec = load(root, session).unwrap_or_else(|| Record {
        id_hint: hint(session),
        agent: agent.to_string(),
        started: t,
        ..Record::default()
    });
    let mut new = Vec::new();
    for s in sources {
        rec.seen += 1;
        if rec.sources.iter().any(|x| &x.source == s) {
            continue;
        }
        new.push(s.clone());
        if rec.sources.len() < MAX_SOURCES {
            rec.sources.push(TaintSource {
                source: s.clone(),
                tool: tool.to_string(),
                at: t,
            });
        }
    }
    rec.updated = t;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&rec).unwrap_or_default())?;
    std::fs::rename(&tmp, &path)?;
    prune(root);
    Ok(new)
}

/// Forgets expired sessions, and the least recently touched beyond [`MAX_SESSIONS`].
fn prune(root: &Path) {
    let Ok(dir) = std::fs::read_dir(root.join(AGENT_SESSIONS_DIR)) else {
        return;
    };
    let mut files: Vec<(SystemTime, PathBuf)> = dir
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    let cutoff = SystemTime::now() - EXPIRY;
    files.sort();
    let excess = files.len().saturating_sub(MAX_SESSIONS);
    for (i, (mtime, p)) in files.iter().enumerate() {
        if i < excess || *mtime < cutoff {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Removes the record of `session`; `false` when there was none.
pub fn clear(root: &Path, session: &str) -> std::io::Result<bool> {
    match std::fs::remove_file(file_of(root, session)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Removes every session record; returns how many there were.
pub fn clear_all(root: &Path) -> std::io::Result<usize> {
    let dir = root.join(AGENT_SESSIONS_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(0);
    };
    let mut n = 0;
    for e in entries.flatten() {
        if e.path().extension().is_some_and(|x| x == "json") {
            std::fs::remove_file(e.path())?;
            n += 1;
        }
    }
    Ok(n)
}

/// Every live session record.
pub fn list(root: &Path) -> Vec<Record> {
    let Ok(entries) = std::fs::read_dir(root.join(AGENT_SESSIONS_DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<Record> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_slice::<Record>(&std::fs::read(e.path()).ok()?).ok())
        .filter(|r| now().saturating_sub(r.updated) < EXPIRY.as_secs())
        .collect();
    out.sort_by_key(|r| r.started);
    out
}

/// Programs whose output brings a fetched page into the agent's context.
const CONTENT_FETCHERS: &[&str] = &[
    "curl", "wget", "xh", "http", "https", "httpie", "lynx", "w3m", "links", "elinks", "gh",
    "aria2c",
];

/// The untrusted inputs an event brings into the agent's context: pages and search
/// results of the web tools, results of MCP servers the project does not trust, files
/// matching the policies' `untrusted_reads`, and pages fetched by a shell command.
pub fn sources(
    set: &PolicySet,
    actions: &[Action],
    shell_parts: &[Request],
    read_paths: &[String],
    mcp_servers: &[Option<String>],
    trusted_server: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let untrusted = matcher(set, "untrusted_reads");
    let trusted_hosts = matcher(set, "trusted_fetch_hosts");
    let trusted_host = |h: &str| trusted_hosts.as_ref().is_some_and(|g| g.is_match(h));
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    let mut servers = mcp_servers.iter();
    for a in actions {
        match a {
            Action::Fetch { url } => {
                let host = contextos_engine::core::net::host_of(url).unwrap_or_default();
                if !trusted_host(&host) {
                    add(format!("fetch:{host}"));
                }
            }
            Action::Search { .. } => add("search".into()),
            Action::Mcp { endpoint, .. } => {
                let server = servers.next().cloned().flatten();
                match server {
                    Some(s) if trusted_server(&s) => {}
                    Some(s) => add(format!("mcp:{s}")),
                    // The call's other event names the server and records its result.
                    None if *endpoint == McpEndpoint::JudgedElsewhere => {}
                    None => add("mcp:?".into()),
                }
            }
            Action::Shell { .. } | Action::PowerShell { .. } | Action::Path { .. } => {}
        }
    }
    for p in read_paths {
        if untrusted.as_ref().is_some_and(|g| g.is_match(p)) {
            add(format!("read:{p}"));
        }
    }
    for r in shell_parts {
        match &r.kind {
            // A command's reads are on its exec request (a read no rule speaks about has
            // no path part of its own).
            RequestKind::Exec(e) => {
                for p in &e.reads {
                    if untrusted.as_ref().is_some_and(|g| g.is_match(p)) {
                        add(format!("read:{p}"));
                    }
                }
            }
            RequestKind::Path(p)
                if p.op == contextos_engine::PathOp::Read
                    && untrusted.as_ref().is_some_and(|g| g.is_match(&p.path)) =>
            {
                add(format!("read:{}", p.path));
            }
            RequestKind::Net(n)
                if CONTENT_FETCHERS.contains(&n.tool.as_str())
                    && !n.host.is_empty()
                    && !is_loopback(&n.host)
                    && !trusted_host(&n.host) =>
            {
                add(format!("fetch:{}", n.host));
            }
            _ => {}
        }
    }
    out
}

/// The untrusted inputs of an event already judged.
pub fn of_judgement(
    set: &PolicySet,
    actions: &[Action],
    j: &crate::hook::judge::Judgement,
    mcp: &crate::hook::egress::McpFacts,
) -> Vec<String> {
    sources(
        set,
        actions,
        &j.shell_requests,
        &j.read_paths,
        &j.mcp_servers,
        &|s| mcp.trusted(s),
    )
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The globs of one of the policies' runtime `let`s, matched like path rules.
fn matcher(set: &PolicySet, name: &str) -> Option<globset::GlobSet> {
    let globs = set.runtime_lets.get(name)?;
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        if let Ok(glob) = contextos_engine::glob::path_glob(g) {
            b.add(glob);
        }
    }
    b.build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_bounded_masked_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let id = "3f2c9a1e-secret-session-id";
        assert!(session(root, Some(id)).is_some_and(|s| !s.tainted));
        let many: Vec<String> = (0..MAX_SOURCES + 10)
            .map(|i| format!("fetch:h{i}.example"))
            .collect();
        let new = record(root, id, "claude", "WebFetch", &many).unwrap();
        assert_eq!(new.len(), many.len());
        let rec = load(root, id).unwrap();
        assert_eq!(rec.sources.len(), MAX_SOURCES);
        assert_eq!(rec.seen, many.len() as u64);
        // The id itself is in no file name and no record.
        let names: Vec<String> = std::fs::read_dir(root.join(AGENT_SESSIONS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains("secret")), "{names:?}");
        let text = std::fs::read_to_string(file_of(root, id)).unwrap();
        assert!(!text.contains(id));
        assert!(session(root, Some(id)).unwrap().tainted);
        // A second record of the same source is not new.
        assert!(record(root, id, "claude", "WebFetch", &many[..1])
            .unwrap()
            .is_empty());
        assert!(clear(root, id).unwrap());
        assert!(!session(root, Some(id)).unwrap().tainted);
    }

    #[test]
    fn a_corrupted_record_stays_tainted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        record(
            root,
            "s1",
            "claude",
            "WebFetch",
            &["fetch:x.example".into()],
        )
        .unwrap();
        std::fs::write(file_of(root, "s1"), b"{garbage").unwrap();
        assert!(session(root, Some("s1")).unwrap().tainted);
    }
}

//! Session taint: the untrusted inputs an agent session has seen, kept per session under
//! `.contextos/state/sessions/agents/`. Bounded (at most [`MAX_SOURCES`] sources a
//! session, [`MAX_SESSIONS`] sessions, the least recently active forgotten first),
//! expiring (a session with no hook call for [`EXPIRY`] is forgotten) and masked (the file is named by a digest of the session id, and sources
//! name a host, a server or a project path — never a URL's query or a tool's result).
//! Only a person clears taint: `contextos session clear` is denied to agents by the
//! stdlib (`std-exec-governance-commands`).

use contextos_engine::emit::{Action, McpEndpoint};
use contextos_engine::glob::PathGlobs;
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
/// A session with no hook call for this long is forgotten.
pub const EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);
/// A session's last activity is written at most this often (a hook call within it changes
/// nothing on disk): far below [`EXPIRY`], so the error is negligible.
const ACTIVITY_GRANULARITY: u64 = 60;

/// One session's record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    /// The first characters of the session id, for a person to recognise it.
    pub id_hint: String,
    pub agent: String,
    /// Unix seconds.
    pub started: u64,
    pub updated: u64,
    /// The session's last hook call (Unix seconds): expiry counts from it, so a session
    /// still at work keeps its taint however long ago it was tainted.
    #[serde(default)]
    pub active: u64,
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
    let fresh = now().saturating_sub(last_activity(&rec)) < EXPIRY.as_secs() || rec.updated == 0;
    fresh.then_some(rec)
}

/// When the session was last seen: its last hook call, or its last taint.
fn last_activity(rec: &Record) -> u64 {
    rec.active.max(rec.updated).max(rec.started)
}

/// Notes a hook call of a tainted session, so its taint expires only after it has been
/// idle for [`EXPIRY`]. A clean session has no record and nothing to note.
pub fn touch(root: &Path, session: &str) -> std::io::Result<()> {
    if session.is_empty() {
        return Ok(());
    }
    let path = file_of(root, session);
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(());
    };
    // An unreadable record is left as it is: it already counts as tainted.
    let Ok(mut rec) = serde_json::from_slice::<Record>(&bytes) else {
        return Ok(());
    };
    let t = now();
    if t.saturating_sub(last_activity(&rec)) < ACTIVITY_GRANULARITY {
        return Ok(());
    }
    rec.active = t;
    write(&path, &rec)
}

fn write(path: &Path, rec: &Record) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(rec).unwrap_or_default())?;
    std::fs::rename(&tmp, path)
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
    rec.active = t;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write(&path, &rec)?;
    prune(root);
    Ok(new)
}

/// Forgets sessions idle beyond [`EXPIRY`] and, beyond [`MAX_SESSIONS`], the least
/// recently active — clean records before tainted ones. Ordering by activity, not by when
/// taint arrived, keeps a session at work from being pushed out by a flood of new ones.
fn prune(root: &Path) {
    let Ok(dir) = std::fs::read_dir(root.join(AGENT_SESSIONS_DIR)) else {
        return;
    };
    let mut files: Vec<(bool, u64, PathBuf)> = dir
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| {
            let path = e.path();
            match std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
            {
                Some(rec) => Some((!rec.sources.is_empty(), last_activity(&rec), path)),
                // Unreadable: tainted, and as recent as its file.
                None => {
                    let mtime = e.metadata().ok()?.modified().ok()?;
                    let secs = mtime.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
                    Some((true, secs, path))
                }
            }
        })
        .collect();
    let cutoff = now().saturating_sub(EXPIRY.as_secs());
    files.sort();
    let excess = files.len().saturating_sub(MAX_SESSIONS);
    for (i, (_, active, p)) in files.iter().enumerate() {
        if i < excess || *active < cutoff {
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
        .filter(|r| now().saturating_sub(last_activity(r)) < EXPIRY.as_secs())
        .collect();
    out.sort_by_key(|r| r.started);
    out
}

/// Programs whose output brings a fetched page into the agent's context, and the shell's
/// own sockets (`cat < /dev/tcp/host/80`).
const CONTENT_FETCHERS: &[&str] = &[
    "curl", "wget", "xh", "http", "https", "httpie", "lynx", "w3m", "links", "elinks", "gh",
    "aria2c", "/dev/tcp", "/dev/udp",
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
    // A list that cannot be compiled trusts no host and taints every read it could name.
    let trusted_host = |h: &str| matches(trusted_hosts.as_ref(), h, false);
    let untrusted_read = |p: &str| matches(untrusted.as_ref(), p, true);
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
            Action::Mcp { endpoint, args, .. } => {
                for url in crate::hook::egress::mcp_urls(args.as_ref()) {
                    let host = contextos_engine::core::net::host_of(&url).unwrap_or_default();
                    if !trusted_host(&host) {
                        add(format!("fetch:{host}"));
                    }
                }
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
        if untrusted_read(p) {
            add(format!("read:{p}"));
        }
    }
    for r in shell_parts {
        match &r.kind {
            // A command's reads are on its exec request (a read no rule speaks about has
            // no path part of its own).
            RequestKind::Exec(e) => {
                for p in &e.reads {
                    if untrusted_read(p) {
                        add(format!("read:{p}"));
                    }
                }
            }
            RequestKind::Path(p)
                if p.op == contextos_engine::PathOp::Read && untrusted_read(&p.path) =>
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

/// The globs of one of the policies' runtime `let`s, matched like path rules. The build
/// refuses an invalid one (E0112); one that still arrives is left out. Matched glob by glob where
/// the shapes allow (`PathGlobs`): a hook asks a handful of questions, and compiling the
/// lists into a regex set was a tenth of a warm hook's CPU.
fn matcher(set: &PolicySet, name: &str) -> Option<PathGlobs> {
    let globs = set.runtime_lets.get(name)?;
    let valid = globs
        .iter()
        .filter(|g| contextos_engine::glob::path_glob(g).is_ok());
    PathGlobs::new(valid.map(String::as_str)).ok()
}

/// Whether `text` matches; a list that cannot be compiled answers `on_error`.
fn matches(globs: Option<&PathGlobs>, text: &str, on_error: bool) -> bool {
    globs.is_some_and(|g| g.is_match(text).unwrap_or(on_error))
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

    fn put(root: &Path, id: &str, tainted: bool, active: u64) {
        let rec = Record {
            id_hint: hint(id),
            started: 1,
            updated: 1,
            active,
            sources: if tainted {
                vec![TaintSource {
                    source: "fetch:x.example".into(),
                    tool: "WebFetch".into(),
                    at: 1,
                }]
            } else {
                Vec::new()
            },
            ..Record::default()
        };
        std::fs::create_dir_all(root.join(AGENT_SESSIONS_DIR)).unwrap();
        write(&file_of(root, id), &rec).unwrap();
    }

    #[test]
    fn expiry_counts_from_the_last_hook_call() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let day = 24 * 3600;
        // Tainted eight days ago, at work an hour ago: still tainted.
        put(root, "busy", true, now() - 3600);
        assert!(session(root, Some("busy")).unwrap().tainted);
        // Tainted and idle for eight days: forgotten.
        put(root, "idle", true, now() - 8 * day);
        assert!(!session(root, Some("idle")).unwrap().tainted);
        // A hook call of a session idle for six days moves its expiry.
        put(root, "back", true, now() - 6 * day);
        touch(root, "back").unwrap();
        assert!(load(root, "back").unwrap().active >= now() - 5);
        // A clean session gets no record from a hook call.
        touch(root, "never-tainted").unwrap();
        assert!(!file_of(root, "never-tainted").exists());
    }

    #[test]
    fn pruning_forgets_clean_and_idle_records_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let t = now();
        // The session being attacked is the most recently active one.
        put(root, "victim", true, t);
        put(root, "clean", false, t);
        for i in 0..MAX_SESSIONS {
            put(root, &format!("flood-{i}"), true, t - 100 - i as u64);
        }
        prune(root);
        assert!(load(root, "victim").is_some());
        assert!(!file_of(root, "clean").exists());
        assert!(!file_of(root, &format!("flood-{}", MAX_SESSIONS - 1)).exists());
        assert!(file_of(root, "flood-0").exists());
        let left = std::fs::read_dir(root.join(AGENT_SESSIONS_DIR))
            .unwrap()
            .count();
        assert_eq!(left, MAX_SESSIONS);
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

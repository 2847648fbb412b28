//! What `contextos compile` would write: the emitted outputs planned against what is on
//! disk and the ownership record `.contextos/ownership.json`. `compile` writes the plan; `gate`
//! checks that it is empty.

use crate::project::{BoundaryMode, Project};
use crate::support::CliError;
use contextos_engine::core::ir::Origin;
use contextos_engine::emit::merge::{self, Current, DriftClass, Plan, StoredRecord};
use contextos_engine::emit::{aider, copilot, emit, Agent, EmitOptions, Emitted, Lossy, Mode};
use contextos_engine::PolicySet;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

use contextos_engine::emit::merge::{LEGACY_RECORD_PATH, RECORD_PATH as OWNERSHIP_RECORD};

pub fn targets(names: &[String]) -> Result<Vec<Agent>, CliError> {
    if names.is_empty() {
        return Ok(Agent::ALL.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let t = Agent::parse(n.trim()).ok_or_else(|| {
            CliError::Input(format!(
                "unknown target `{n}` (known: {})",
                Agent::ALL.map(Agent::as_str).join(", ")
            ))
        })?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    // CLAUDE.md imports AGENTS.md, and Gemini CLI is pointed at it: compiling for either
    // includes it.
    if out.iter().any(|t| t.needs_agents_md()) && !out.contains(&Agent::AgentsMd) {
        out.push(Agent::AgentsMd);
    }
    out.sort();
    Ok(out)
}

/// The targets of one run: `names` when given, else `[compile] targets` from
/// `contextos.toml`, else every target.
pub fn project_targets(project: &Project, names: &[String]) -> Result<Vec<Agent>, CliError> {
    if names.is_empty() {
        if let Some(configured) = &project.config.compile.targets {
            if configured.is_empty() {
                return Err(CliError::Input(
                    "contextos.toml: `[compile] targets` is empty; name at least one target".into(),
                ));
            }
            return targets(configured);
        }
    }
    targets(names)
}

/// sha256 over what shaped the outputs: every policy source (the stdlib and verified
/// plugin packs included). The targets are not part of it, so compiling one target and
/// gating all of them does not read as stale input.
fn inputs_sha(project: &Project) -> Result<String, CliError> {
    let sources = project.sources()?;
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    for s in &sources {
        field(s.name.as_bytes());
        field(s.text.as_bytes());
    }
    // Disabled rules shape the outputs as much as the sources do.
    for id in &project.config.policies.disable {
        field(b"disable");
        field(id.as_bytes());
    }
    Ok(format!("sha256:{}", hex(&h.finalize())))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn read_text(root: &Path, rel: &str) -> Result<Option<String>, CliError> {
    match std::fs::read(root.join(rel)) {
        Ok(b) => String::from_utf8(b).map(Some).map_err(|_| {
            CliError::Refused(format!(
                "{rel}: not UTF-8 text; ContextOS will not rewrite it"
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::io(rel, e)),
    }
}

/// What shapes the outputs beside the policies, from `contextos.toml` (so `compile` and
/// `gate` agree): the wiring mode from `[boundary] mode`, the listed MCP servers, the
/// Copilot cloud agent's install command from `[compile.copilot] install`.
fn emit_options(project: &Project) -> EmitOptions {
    EmitOptions {
        mode: match project.config.boundary.mode() {
            BoundaryMode::Guard => Mode::Guard,
            BoundaryMode::Boundary => Mode::Boundary,
        },
        mcp_servers: project.config.mcp.servers.clone(),
        copilot_install: project.config.compile.copilot.install.clone(),
        claude_sandbox: project.config.compile.claude.sandbox,
    }
}

/// Emits and plans; nothing is written.
/// What was on disk when planning, so the writes can insist it is still there.
pub type Seen = BTreeMap<String, Option<String>>;

pub fn prepare(
    project: &Project,
    set: &PolicySet,
    targets: &[Agent],
) -> Result<(Emitted, Plan, Seen), CliError> {
    let mut emitted = emit(set, targets, &emit_options(project));
    let old = StoredRecord::read(
        read_text(&project.root, OWNERSHIP_RECORD)?.as_deref(),
        read_text(&project.root, LEGACY_RECORD_PATH)?.as_deref(),
    )
    .map_err(|e| CliError::Outputs(Box::new(e)))?;
    keep_users_files(project, &old, &mut emitted)?;
    let mut files = BTreeMap::new();
    let paths = emitted
        .outputs
        .iter()
        .map(|o| o.path.clone())
        .chain(old.record.iter().flat_map(|l| l.files.keys().cloned()));
    for p in paths {
        if let std::collections::btree_map::Entry::Vacant(slot) = files.entry(p) {
            let text = read_text(&project.root, slot.key())?;
            slot.insert(text);
        }
    }
    let inputs = inputs_sha(project)?;
    // Outputs of targets not being compiled stay as they are (never orphaned).
    let plan = merge::plan_targets(
        &emitted.outputs,
        &Current {
            files: files.clone(),
        },
        &old,
        &inputs,
        targets,
    )
    .map_err(|e| CliError::Outputs(Box::new(e)))?;
    Ok((emitted, plan, files))
}

/// Whole files ContextOS writes where the user may already have one of their own that it
/// cannot merge into: the path, its agent and the note that says what the kept file needs.
const KEPT_WHEN_THE_USERS: &[(&str, Agent, &str)] = &[
    // GitHub runs only that one file, so the user's workflow is the one that must install
    // `contextos`.
    (
        copilot::emit::SETUP_STEPS_PATH,
        Agent::Copilot,
        "the repository's own Copilot setup workflow is kept as written: it must \
         install `contextos` (the cloud agent's hook is not found otherwise, and every \
         tool call is denied)",
    ),
    // ContextOS merges JSON and TOML, not YAML.
    (aider::emit::CONF_PATH, Agent::Aider, aider::emit::CONF_NOTE),
];

/// A file of [`KEPT_WHEN_THE_USERS`] that the user wrote (on disk, not in the ownership
/// record) is theirs: it is kept, ContextOS's version is not written, and a note says
/// what the user's file needs.
fn keep_users_files(
    project: &Project,
    old: &StoredRecord,
    emitted: &mut Emitted,
) -> Result<(), CliError> {
    for &(path, target, message) in KEPT_WHEN_THE_USERS {
        if !emitted.outputs.iter().any(|o| o.path == path) {
            continue;
        }
        let owned = old.record.iter().any(|r| r.files.contains_key(path));
        if owned || read_text(&project.root, path)?.is_none() {
            continue;
        }
        emitted.outputs.retain(|o| o.path != path);
        emitted.lossy.push(Lossy {
            target,
            rule: path.into(),
            origin: Origin {
                file: path.into(),
                line: 1,
                col: 1,
                start: 0,
                end: 0,
            },
            message: message.into(),
        });
    }
    Ok(())
}

/// What fixes a drift class.
pub fn remedy(class: &DriftClass) -> &'static str {
    match class {
        DriftClass::Unmanaged => {
            "move the hand-written file away (or delete it) so ContextOS can own it, then run `contextos compile`"
        }
        DriftClass::Collision => "two outputs claim one path: report this as a ContextOS bug",
        _ => "run `contextos compile`",
    }
}

//! A changeset — writes and deletes — decided path by path and committed as one journaled
//! transaction under the project lock (`contextos apply`, and `contextos run` for the
//! results a sandboxed command brings back).

use crate::support::context::take_lock;
use crate::support::physical;
use crate::support::CliError;
use contextos_engine::effects::journal::{self, Change, Precondition, Step};
use contextos_engine::effects::safe_fs::SafeRoot;
use contextos_engine::{Decision, Effect, EvalOptions, PathOp, Request, RequestKind};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Entry {
    pub op: Op,
    pub path: String,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub mode: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_sha256: Option<String>,
    #[serde(default)]
    pub must_not_exist: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Write,
    Delete,
}

/// One change as the planner sees it: an [`Entry`] (the JSON format of `apply`) with
/// its content as bytes, so a sandbox's binary results come back unchanged.
#[derive(Debug, Clone)]
pub struct Planned {
    pub op: Op,
    pub path: String,
    pub content: Option<Vec<u8>>,
    pub mode: Option<u32>,
    pub expect_sha256: Option<String>,
    pub must_not_exist: bool,
}

impl From<&Entry> for Planned {
    fn from(e: &Entry) -> Planned {
        Planned {
            op: e.op,
            path: e.path.clone(),
            content: e.content.as_ref().map(|c| c.clone().into_bytes()),
            mode: e.mode,
            expect_sha256: e.expect_sha256.clone(),
            must_not_exist: e.must_not_exist,
        }
    }
}

/// [`plan_bytes`] for changes in the JSON format.
pub fn plan(
    set: &contextos_engine::PolicySet,
    root: &Path,
    changes: &[Entry],
    role: Option<&str>,
) -> Result<(Vec<Decision>, Effect, Vec<Step>), CliError> {
    let planned: Vec<Planned> = changes.iter().map(Planned::from).collect();
    plan_bytes(set, root, &planned, role)
}

/// Decides every change as a path request — through the evaluator and the physical stage
/// beneath `root` the hooks and `decide` share — and builds the journal steps. The verdict
/// is the strongest over all changes; the caller refuses to commit on deny (and on ask
/// without confirmation).
pub fn plan_bytes(
    set: &contextos_engine::PolicySet,
    root: &Path,
    changes: &[Planned],
    role: Option<&str>,
) -> Result<(Vec<Decision>, Effect, Vec<Step>), CliError> {
    // 1. Every path through the evaluator and the physical stage.
    let decisions: Vec<Decision> = changes
        .iter()
        .map(|e| {
            let op = match e.op {
                Op::Write => PathOp::Write,
                Op::Delete => PathOp::Delete,
            };
            let req = Request::path(op, e.path.clone()).with_role(role.map(str::to_string));
            physical::decide(set, root, &req, EvalOptions::default()).merged()
        })
        .collect();
    let verdict = decisions
        .iter()
        .map(|d| d.verdict)
        .max()
        .unwrap_or(Effect::Allow);
    let mut steps = Vec::new();
    for (e, d) in changes.iter().zip(&decisions) {
        let RequestKind::Path(p) = &d.request.kind else {
            return Err(CliError::Internal(
                "a path decision without a path request".into(),
            ));
        };
        let change = match (e.op, &e.content) {
            (Op::Write, Some(c)) => Change::Write {
                path: p.path.clone(),
                content: c.clone(),
                mode: e.mode.unwrap_or(0o644),
                exact_mode: e.mode.is_some(),
            },
            (Op::Write, None) => {
                return Err(CliError::Input(format!(
                    "{}: a write needs `content`",
                    e.path
                )))
            }
            (Op::Delete, _) => Change::Delete {
                path: p.path.clone(),
            },
        };
        let precondition = match (&e.expect_sha256, e.must_not_exist) {
            (Some(_), true) => {
                return Err(CliError::Input(format!(
                    "{}: expectSha256 and mustNotExist exclude each other",
                    e.path
                )))
            }
            (Some(h), false) => Precondition::Sha256(h.clone()),
            (None, true) => Precondition::MustNotExist,
            (None, false) => Precondition::Any,
        };
        steps.push(Step {
            change,
            precondition,
        });
    }
    Ok((decisions, verdict, steps))
}

/// 2. Under the lock: recover interrupted transactions, then commit `steps` as one.
pub fn commit_steps(
    project_root: &std::path::Path,
    steps: &[Step],
    lock_timeout: u64,
    command: &str,
) -> Result<journal::Committed, CliError> {
    let guard = take_lock(project_root, command, Duration::from_secs(lock_timeout))?;
    let root = SafeRoot::open(project_root)?;
    journal::recover(&root, &guard).map_err(|error| CliError::Journal {
        doing: "recovering the journal",
        error,
    })?;
    journal::commit(&root, &guard, steps, &mut |_| {}).map_err(|error| CliError::Journal {
        doing: "nothing was applied",
        error,
    })
}

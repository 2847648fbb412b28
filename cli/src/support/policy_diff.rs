//! What `diff` and `gate --no-widening` share: the policy set of a git revision (read
//! through `git`, a process, so the front binary links no git reader), the two sets of a
//! comparison, and the report of what changed.
//!
//! A revision's set is the embedded stdlib of this binary and the project's policy files
//! as the revision has them, under the working tree's `contextos.toml` (`[policies]
//! paths`, `disable`, `stdlib`); plugin packs are left out on both sides. So a diff shows
//! what the project's own policy change does, never a difference between binaries.

use crate::output;
use crate::project::Project;
use crate::support::{CliError, Exit, Format};
use contextos_engine::core::diff::{self, Change, Direction, Probe};
use contextos_engine::{Layer, PolicySet, PolicySource};
use std::path::Path;
use std::process::Command;

/// One side of a comparison: a git revision, or the working tree.
#[derive(Debug, Clone)]
pub enum Side {
    Rev(String),
    WorkTree,
}

impl Side {
    pub fn label(&self) -> String {
        match self {
            Side::Rev(r) => r.clone(),
            Side::WorkTree => "working tree".into(),
        }
    }
}

/// Runs `git ARGS` in `dir`; its stdout, or an error naming what failed.
pub fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, CliError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| CliError::Io {
            doing: "running git".into(),
            error: e,
        })?;
    if !out.status.success() {
        return Err(CliError::Input(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// Whether `rev` names a commit in the project's repository.
pub fn rev_exists(root: &Path, rev: &str) -> bool {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .is_ok()
}

/// The stdlib and the project's policy files as `rev` has them.
fn sources_at(project: &Project, rev: &str) -> Result<Vec<PolicySource>, CliError> {
    let mut sources = stdlib(project);
    let mut args = vec!["ls-tree", "-r", "-z", "--name-only", rev, "--"];
    let paths = project.config.policies.paths.clone();
    args.extend(paths.iter().map(String::as_str));
    let listed = git(&project.root, &args)?;
    let mut names: Vec<String> = listed
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .filter(|n| n.ends_with(".policy"))
        .filter(|n| !n.starts_with(&format!("{}/", crate::plugins::PACKS_DIR)))
        .collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names.dedup();
    for name in names {
        let text = git(&project.root, &["show", &format!("{rev}:./{name}")])?;
        sources.push(PolicySource {
            name,
            text: String::from_utf8_lossy(&text).into_owned().into(),
            layer: Layer::User,
        });
    }
    Ok(sources)
}

fn stdlib(project: &Project) -> Vec<PolicySource> {
    if !project.config.policies.stdlib {
        return Vec::new();
    }
    contextos_engine::stdlib_sources()
}

/// The policy set of one side; a side that does not compile is an error naming it.
pub fn set_of(project: &Project, side: &Side) -> Result<PolicySet, CliError> {
    let sources = match side {
        Side::Rev(rev) => sources_at(project, rev)?,
        Side::WorkTree => project.base_sources()?,
    };
    let (mut out, _) = project.build_lazily(&sources);
    match out.policy.take() {
        Some(set) => Ok(set),
        None => Err(CliError::policy_invalid(
            &out,
            &format!("the policies of {} do not compile", side.label()),
        )),
    }
}

/// The default base of `gate --no-widening`: the merge base with the upstream branch
/// when there is one, else `HEAD~1`, else `HEAD` (a repository with one commit).
pub fn default_base(root: &Path) -> Result<String, CliError> {
    if let Ok(base) = git(root, &["merge-base", "HEAD", "@{upstream}"]) {
        let base = String::from_utf8_lossy(&base).trim().to_string();
        if !base.is_empty() {
            return Ok(base);
        }
    }
    for rev in ["HEAD~1", "HEAD"] {
        if rev_exists(root, rev) {
            return Ok(rev.into());
        }
    }
    Err(CliError::Input(format!(
        "{} has no commit to compare the policies with (pass --from REV)",
        root.display()
    )))
}

/// Which requests a comparison decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Symbolic,
    Corpus,
    Log,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Symbolic => "symbolic",
            Source::Corpus => "corpus",
            Source::Log => "log",
        }
    }
}

/// The changes found over one source of requests.
pub struct Section {
    pub source: Source,
    pub probes: usize,
    pub changes: Vec<Change>,
    /// What the reader must know about the requests (the log's masking).
    pub note: Option<String>,
}

/// The changes between `old` and `new` over the symbolic witnesses.
pub fn symbolic(old: &PolicySet, new: &PolicySet) -> Section {
    let probes = diff::witnesses(old, new);
    Section {
        source: Source::Symbolic,
        probes: probes.len(),
        changes: diff::compare(old, new, &probes, false),
        note: None,
    }
}

pub fn over(
    old: &PolicySet,
    new: &PolicySet,
    source: Source,
    probes: &[Probe],
    note: Option<String>,
) -> Section {
    Section {
        source,
        probes: probes.len(),
        changes: diff::compare(old, new, probes, false),
        note,
    }
}

/// Widenings no `@accept("widening")` covers.
pub fn unaccepted(sections: &[Section]) -> usize {
    sections
        .iter()
        .flat_map(|s| &s.changes)
        .filter(|c| c.direction == Direction::Widening && !c.accepted)
        .count()
}

fn outcome_text(o: &diff::Outcome) -> String {
    if o.rules.is_empty() {
        format!("{} (default)", o.verdict)
    } else {
        format!("{} ({})", o.verdict, o.rules.join(", "))
    }
}

fn change_head(c: &Change) -> String {
    let what = match c.op {
        Some(op) => format!("{} {}", c.domain, op.as_str()),
        None => c.domain.to_string(),
    };
    let kind = match (c.direction, c.accepted) {
        (Direction::Widening, true) => "widening (accepted)",
        (Direction::Widening, false) => "WIDENING",
        (Direction::Tightening, _) => "tightening",
        (Direction::Rerouted, _) => "rerouted",
    };
    format!(
        "{kind:<10} {what}: {} -> {}",
        outcome_text(&c.from),
        outcome_text(&c.to)
    )
}

fn witness_text(w: &diff::Witness) -> String {
    match &w.role {
        Some(r) => format!("{} (as role {r})", w.subject),
        None => w.subject.clone(),
    }
}

/// Text lines of a report, for `diff` and for the gate check.
pub fn lines(sections: &[Section], indent: &str) -> Vec<String> {
    let mut out = Vec::new();
    for s in sections {
        out.push(format!(
            "{indent}{}: {} request(s) decided under both, {} change(s)",
            s.source.as_str(),
            s.probes,
            s.changes.len()
        ));
        if let Some(n) = &s.note {
            out.push(format!("{indent}  note: {n}"));
        }
        for c in &s.changes {
            out.push(format!("{indent}  {}", change_head(c)));
            let shown = c.witnesses.iter().take(3).map(witness_text);
            for w in shown {
                out.push(format!("{indent}      e.g. {w}"));
            }
            if c.witnesses.len() > 3 {
                out.push(format!(
                    "{indent}      … and {} more",
                    c.witnesses.len() - 3
                ));
            }
        }
    }
    out
}

/// The JSON of a report.
pub fn json(from: &Side, to: &Side, sections: &[Section]) -> serde_json::Value {
    let count = |d: Direction| {
        sections
            .iter()
            .flat_map(|s| &s.changes)
            .filter(|c| c.direction == d)
            .count()
    };
    serde_json::json!({
        "from": from.label(),
        "to": to.label(),
        "widening": count(Direction::Widening),
        "tightening": count(Direction::Tightening),
        "unacceptedWidening": unaccepted(sections),
        "sections": sections.iter().map(|s| serde_json::json!({
            "source": s.source.as_str(),
            "requests": s.probes,
            "note": s.note,
            "changes": s.changes,
        })).collect::<Vec<_>>(),
    })
}

/// Prints a report and returns its exit: 1 when a widening is not accepted.
pub fn report(format: Format, from: &Side, to: &Side, sections: &[Section]) -> Exit {
    match format {
        Format::Json => output::print_json(json(from, to, sections)),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            outln!("policy diff {} -> {}", from.label(), to.label());
            for l in lines(sections, "") {
                outln!("{l}");
            }
        }
    }
    if unaccepted(sections) > 0 {
        Exit::Findings
    } else {
        Exit::Ok
    }
}

//! Planning and drift: the full new text of every file to write, the files to delete, the
//! next ownership record, and the [`Drift`] between disk and what would be written. The
//! plan is all-or-nothing: when [`Plan::refused`] is true (a file ContextOS does not own
//! is in the way, or two outputs claim one path) the caller must write nothing at all.

use super::block::{apply_block, read_block, remove_block};
use super::error::{MergeError, MergeErrorKind};
use super::owned_json::{merge_json, JsonMerge, OwnedJson};
use super::owned_toml::merge_toml;
use super::ownership::{
    matches_record, recorded, FileKind, OwnershipRecord, RecordedFile, StoredRecord,
    LEGACY_RECORD_PATH, RECORD_PATH, RECORD_VERSION,
};
use super::text::normalize;
use crate::{Agent, Content, JsonPart, Output, TomlKey};
use serde::Serialize;
use std::collections::BTreeMap;

/// What is on disk now: path → text (`None`: missing), for every output path and every
/// path of the old record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Current {
    pub files: BTreeMap<String, Option<String>>,
}

/// What a `compile` would do. All or nothing: when [`Plan::refused`] is true the caller
/// must write nothing (no file, no record).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Path and new full text, sorted by path; only files whose bytes change.
    pub writes: Vec<(String, String)>,
    /// Files to delete, sorted.
    pub deletes: Vec<String>,
    /// The paths of the outputs that are programs ([`Content::Script`]), sorted: a write
    /// to one of them sets the executable mode (`0o755`), the others `0o644`.
    pub executable: Vec<String>,
    /// The record to write after `writes` and `deletes` (when its bytes differ).
    pub record: OwnershipRecord,
    /// Differences between disk and what would be written, sorted by path then class;
    /// empty when everything is in sync.
    pub drift: Vec<Drift>,
}

impl Plan {
    /// The mode a write to `path` gets.
    pub fn mode(&self, path: &str) -> u32 {
        if self.executable.iter().any(|p| p == path) {
            0o755
        } else {
            0o644
        }
    }

    /// True when a file ContextOS does not own is in the way ([`DriftClass::Unmanaged`])
    /// or two outputs claim one path ([`DriftClass::Collision`]): write nothing.
    pub fn refused(&self) -> bool {
        self.drift.iter().any(|d| d.class.refuses())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    pub path: String,
    pub class: DriftClass,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftClass {
    /// A generated file is absent.
    Missing,
    /// ContextOS's content on disk (the whole file, the block, the owned JSON entries)
    /// differs from what would be written; user-owned content never counts.
    Modified,
    /// The record lists a file no output produces any more; the next compile deletes it
    /// (whole, unmodified), removes its block, or retracts its JSON entries.
    Orphaned,
    /// Two outputs claim the same path. Refuses the plan.
    Collision,
    /// The record was written from other policy inputs (reported at [`RECORD_PATH`]), even
    /// when every file already matches.
    StaleInput,
    /// A whole file ContextOS would write exists and is not ContextOS's: not in the ownership record,
    /// or edited by hand since ContextOS wrote it. Refuses the plan.
    Unmanaged,
}

impl DriftClass {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftClass::Missing => "missing",
            DriftClass::Modified => "modified",
            DriftClass::Orphaned => "orphaned",
            DriftClass::Collision => "collision",
            DriftClass::StaleInput => "stale-input",
            DriftClass::Unmanaged => "unmanaged",
        }
    }

    /// Whether this drift forbids writing anything.
    pub fn refuses(self) -> bool {
        matches!(self, DriftClass::Collision | DriftClass::Unmanaged)
    }
}

/// Where an output goes: its path, the emitter that made it, and what the old record says
/// about the file.
#[derive(Clone, Copy)]
struct Slot<'a> {
    path: &'a str,
    gen: &'a str,
    old: Option<&'a RecordedFile>,
}

struct Planner<'a> {
    writes: Vec<(String, String)>,
    deletes: Vec<String>,
    executable: Vec<String>,
    files: BTreeMap<String, RecordedFile>,
    drift: Vec<Drift>,
    current: &'a Current,
}

impl Planner<'_> {
    fn current(&self, path: &str) -> Result<Option<&str>, MergeError> {
        match self.current.files.get(path) {
            Some(t) => Ok(t.as_deref()),
            None => Err(MergeError {
                path: path.to_string(),
                kind: MergeErrorKind::NotRead,
            }),
        }
    }

    fn drift(&mut self, path: &str, class: DriftClass, detail: impl Into<String>) {
        self.drift.push(Drift {
            path: path.to_string(),
            class,
            detail: detail.into(),
        });
    }

    /// Writes `text` to `path`, for the reason the drift gives.
    fn write(&mut self, path: &str, text: String, class: DriftClass, detail: impl Into<String>) {
        self.drift(path, class, detail);
        self.writes.push((path.to_string(), text));
    }

    /// Deletes `path`, for the reason the drift gives.
    fn delete(&mut self, path: &str, class: DriftClass, detail: impl Into<String>) {
        self.drift(path, class, detail);
        self.deletes.push(path.to_string());
    }

    fn whole(&mut self, at: Slot<'_>, text: &str) -> Result<(), MergeError> {
        let Slot { path, gen, old } = at;
        let Some(cur) = self.current(path)? else {
            self.write(
                path,
                text.to_string(),
                DriftClass::Missing,
                "generated file is absent",
            );
            self.files
                .insert(path.into(), recorded(gen, FileKind::Whole, None, text));
            return Ok(());
        };
        if cur == text || normalize(cur) == normalize(text) {
            // In sync (line endings or trailing spaces aside): keep the bytes on disk.
            self.files
                .insert(path.into(), recorded(gen, FileKind::Whole, None, cur));
            return Ok(());
        }
        match old {
            Some(o) if o.kind == FileKind::Whole && matches_record(cur, o) => {
                self.write(
                    path,
                    text.to_string(),
                    DriftClass::Modified,
                    "out of date with the policies",
                );
                self.files
                    .insert(path.into(), recorded(gen, FileKind::Whole, None, text));
            }
            Some(o) => {
                let detail = if o.kind == FileKind::Whole {
                    "edited by hand since ContextOS wrote it; refusing to overwrite (move the \
                     change into a policy, or delete the file)"
                        .to_string()
                } else {
                    format!(
                        "ContextOS owns only a {} part of this file, not all of it; refusing to \
                         overwrite",
                        o.kind.as_str()
                    )
                };
                self.drift(path, DriftClass::Unmanaged, detail);
                self.files.insert(path.into(), o.clone());
            }
            None => self.drift(
                path,
                DriftClass::Unmanaged,
                "exists and is not ContextOS's (not in the ownership record); refusing to \
                 overwrite (move it away, or delete it to let ContextOS own it)",
            ),
        }
        Ok(())
    }

    /// The file to merge into: `None` when the ownership record says the whole file was ContextOS's
    /// and it is unmodified (it is replaced rather than merged into).
    fn merge_base<'c>(cur: Option<&'c str>, old: Option<&RecordedFile>) -> Option<&'c str> {
        match (cur, old) {
            (Some(c), Some(o)) if o.kind == FileKind::Whole && matches_record(c, o) => None,
            _ => cur,
        }
    }

    fn block(&mut self, at: Slot<'_>, block: &str) -> Result<(), MergeError> {
        let Slot { path, gen, old } = at;
        let cur = self.current(path)?;
        let base = Self::merge_base(cur, old);
        let new = apply_block(base, block).map_err(|e| e.with_path(path))?;
        match cur {
            None => {
                self.write(
                    path,
                    new.clone(),
                    DriftClass::Missing,
                    "generated file is absent",
                );
            }
            Some(c) if c == new => {}
            Some(c) => {
                let detail = if base.is_none() {
                    "the file ContextOS generated whole becomes a managed block"
                } else if read_block(c).map_err(|e| e.with_path(path))?.is_none() {
                    "the managed block is absent"
                } else {
                    "the managed block differs from the policies"
                };
                self.write(path, new.clone(), DriftClass::Modified, detail);
            }
        }
        self.files
            .insert(path.into(), recorded(gen, FileKind::Block, None, &new));
        Ok(())
    }

    fn json(&mut self, at: Slot<'_>, parts: &[JsonPart]) -> Result<(), MergeError> {
        self.owned(at, FileKind::Json, |base, prev| {
            merge_json(base, parts, prev)
        })
    }

    fn toml(&mut self, at: Slot<'_>, keys: &[TomlKey]) -> Result<(), MergeError> {
        self.owned(at, FileKind::Toml, |base, prev| {
            merge_toml(base, keys, prev)
        })
    }

    /// Owned entries of a structured file (JSON or TOML): merged by `merge` over the file
    /// on disk and what the old record says ContextOS owned there.
    fn owned(
        &mut self,
        at: Slot<'_>,
        kind: FileKind,
        merge: impl Fn(Option<&str>, &OwnedJson) -> Result<JsonMerge, MergeError>,
    ) -> Result<(), MergeError> {
        let Slot { path, gen, old } = at;
        let cur = self.current(path)?;
        let prev = old
            .filter(|o| o.kind == kind)
            .and_then(|o| o.owned.clone())
            .unwrap_or_default();
        let base = Self::merge_base(cur, old);
        let m = merge(base, &prev).map_err(|e| e.with_path(path))?;
        if m.delete {
            // Nothing of ContextOS's is wanted, and the file was its own.
            if cur.is_some() {
                self.delete(
                    path,
                    DriftClass::Modified,
                    "ContextOS's entries are retracted and the file it created is empty",
                );
            }
            return Ok(());
        }
        let text = match cur {
            None => {
                self.write(
                    path,
                    m.text.clone(),
                    DriftClass::Missing,
                    "generated file is absent",
                );
                m.text
            }
            Some(c) if base.is_some() && !m.changed => c.to_string(),
            Some(_) => {
                let detail = if base.is_none() {
                    "the file ContextOS generated whole becomes owned entries".to_string()
                } else {
                    format!("ContextOS's entries differ at {}", m.touched.join(", "))
                };
                self.write(path, m.text.clone(), DriftClass::Modified, detail);
                m.text
            }
        };
        self.files
            .insert(path.into(), recorded(gen, kind, Some(m.owned), &text));
        Ok(())
    }

    fn orphan(&mut self, path: &str, old: &RecordedFile) -> Result<(), MergeError> {
        let Some(cur) = self.current(path)? else {
            return Ok(());
        };
        match old.kind {
            FileKind::Whole if matches_record(cur, old) => {
                self.delete(
                    path,
                    DriftClass::Orphaned,
                    "no longer generated; it will be deleted",
                );
            }
            FileKind::Whole => self.drift(
                path,
                DriftClass::Orphaned,
                "no longer generated, but edited by hand: it is kept and released from the ownership record",
            ),
            FileKind::Block => {
                let rest = remove_block(cur).map_err(|e| e.with_path(path))?;
                if rest == cur {
                    return Ok(());
                }
                if rest.is_empty() {
                    self.delete(
                        path,
                        DriftClass::Orphaned,
                        "no longer generated; the file held only the managed block and will be deleted",
                    );
                } else {
                    self.write(
                        path,
                        rest,
                        DriftClass::Orphaned,
                        "no longer generated; the managed block will be removed, the rest kept",
                    );
                }
            }
            FileKind::Json | FileKind::Toml => {
                let prev = old.owned.clone().unwrap_or_default();
                let m = if old.kind == FileKind::Json {
                    merge_json(Some(cur), &[], &prev)
                } else {
                    merge_toml(Some(cur), &[], &prev)
                }
                .map_err(|e| e.with_path(path))?;
                if m.delete {
                    self.delete(
                        path,
                        DriftClass::Orphaned,
                        "no longer generated; the file ContextOS created will be deleted",
                    );
                } else if m.changed {
                    let detail = format!(
                        "no longer generated; ContextOS's entries will be retracted at {}",
                        m.touched.join(", ")
                    );
                    self.write(path, m.text, DriftClass::Orphaned, detail);
                }
            }
        }
        Ok(())
    }
}

/// [`plan_targets`] for every [`crate::Agent`].
pub fn plan(
    outputs: &[Output],
    current: &Current,
    stored: &StoredRecord,
    inputs_sha: &str,
) -> Result<Plan, MergeError> {
    plan_targets(outputs, current, stored, inputs_sha, &Agent::ALL)
}

/// Plans writing `outputs` (the emitters' result for `scope`) over `current`.
///
/// - **Whole**: written when absent ([`DriftClass::Missing`]) or when the file on disk is
///   the one ContextOS wrote (its recorded sha256, or its normalised form) and is out of
///   date ([`DriftClass::Modified`]). A file that differs and is not in the ownership record, or that
///   was edited by hand since, is [`DriftClass::Unmanaged`]: nothing is written for it
///   and [`Plan::refused`] tells the caller to write nothing at all. A file that already
///   holds exactly (or, CRLF and trailing spaces aside, normally) the generated text is in
///   sync, and is adopted into the ownership record.
/// - **Block**: [`apply_block`]; only the block counts for drift.
/// - **Json**: [`super::apply_json`] with the entries the old record says ContextOS owns; only those
///   count for drift (formatting neither).
/// - A record entry of a `scope` generator that no output produces any more is
///   [`DriftClass::Orphaned`]: a whole file is deleted if unmodified (else kept and
///   released), a block removed (the file deleted if nothing else is left), JSON entries
///   retracted. Entries of generators outside `scope` are carried over untouched.
/// - Two outputs for one path: [`DriftClass::Collision`], neither is written.
/// - The old record's `inputs` differs from `inputs_sha`: [`DriftClass::StaleInput`].
/// - The record still lives at [`LEGACY_RECORD_PATH`]: that file is deleted, since the new
///   record is written at [`RECORD_PATH`]. Only the file name changes, so this is no drift.
///
/// Files ContextOS creates get the emitters' LF text; existing files keep their line
/// endings in blocks and JSON. In sync ⇒ no drift and no writes; planning again over the
/// result of a plan gives no writes.
pub fn plan_targets(
    outputs: &[Output],
    current: &Current,
    stored: &StoredRecord,
    inputs_sha: &str,
    scope: &[Agent],
) -> Result<Plan, MergeError> {
    let old_record = stored.record.as_ref();
    let mut by_path: BTreeMap<&str, Vec<&Output>> = BTreeMap::new();
    for o in outputs {
        by_path.entry(o.path.as_str()).or_default().push(o);
    }
    let old_files = old_record.map(|l| &l.files);
    let mut p = Planner {
        writes: Vec::new(),
        deletes: Vec::new(),
        executable: Vec::new(),
        files: BTreeMap::new(),
        drift: Vec::new(),
        current,
    };
    for (&path, outs) in &by_path {
        let old = old_files.and_then(|f| f.get(path));
        if path == RECORD_PATH || path == LEGACY_RECORD_PATH {
            p.drift(
                path,
                DriftClass::Collision,
                "an output claims the ownership record's own path; nothing is written",
            );
        } else if let [out] = outs.as_slice() {
            let at = Slot {
                path,
                gen: out.target.as_str(),
                old,
            };
            match &out.content {
                Content::Whole { text } => p.whole(at, text)?,
                Content::Script { text } => {
                    p.whole(at, text)?;
                    p.executable.push(path.to_string());
                }
                Content::Block { text } => p.block(at, text)?,
                Content::Json { parts } => p.json(at, parts)?,
                Content::Toml { keys } => p.toml(at, keys)?,
            }
        } else {
            let names: Vec<&str> = outs.iter().map(|o| o.target.as_str()).collect();
            p.drift(
                path,
                DriftClass::Collision,
                format!(
                    "{} outputs claim this path ({}); nothing is written",
                    outs.len(),
                    names.join(", ")
                ),
            );
            if let Some(o) = old {
                p.files.insert(path.to_string(), o.clone());
            }
        }
    }
    for (path, old) in old_files.into_iter().flatten() {
        if by_path.contains_key(path.as_str()) {
            continue;
        }
        let in_scope = Agent::parse(&old.generator).is_some_and(|t| scope.contains(&t));
        if in_scope {
            p.orphan(path, old)?;
        } else {
            p.files.insert(path.clone(), old.clone());
        }
    }
    if let Some(l) = old_record {
        if l.inputs != inputs_sha {
            p.drift(
                RECORD_PATH,
                DriftClass::StaleInput,
                format!(
                    "the ownership record was written from other policy inputs (was {}, now {inputs_sha})",
                    l.inputs
                ),
            );
        }
    }
    if stored.legacy_file {
        p.deletes.push(LEGACY_RECORD_PATH.to_string());
    }
    p.writes.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    p.deletes.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    p.drift
        .sort_by(|a, b| (a.path.as_bytes(), a.class).cmp(&(b.path.as_bytes(), b.class)));
    Ok(Plan {
        writes: p.writes,
        deletes: p.deletes,
        executable: p.executable,
        record: OwnershipRecord {
            version: RECORD_VERSION,
            inputs: inputs_sha.to_string(),
            files: p.files,
        },
        drift: p.drift,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::markers::{BLOCK_BEGIN as B, BLOCK_END as E};
    use crate::merge::owned_json::tests::{hooks, items, key, ours_hook};
    use crate::merge::ownership::{parse_record, render_record};
    use serde_json::{json, Value};

    // ----- plan ---------------------------------------------------------------------

    type Disk = BTreeMap<String, String>;

    fn whole(path: &str, text: &str) -> Output {
        Output {
            path: path.into(),
            target: Agent::Cursor,
            content: Content::Whole { text: text.into() },
        }
    }

    fn block(path: &str, text: &str) -> Output {
        Output {
            path: path.into(),
            target: Agent::AgentsMd,
            content: Content::Block { text: text.into() },
        }
    }

    fn json_out(path: &str, parts: Vec<JsonPart>) -> Output {
        Output {
            path: path.into(),
            target: Agent::Claude,
            content: Content::Json { parts },
        }
    }

    fn current(disk: &Disk, outputs: &[Output], record: Option<&OwnershipRecord>) -> Current {
        let mut files = BTreeMap::new();
        let paths = outputs
            .iter()
            .map(|o| o.path.clone())
            .chain(record.iter().flat_map(|l| l.files.keys().cloned()));
        for p in paths {
            files.insert(p.clone(), disk.get(&p).cloned());
        }
        Current { files }
    }

    fn run(
        disk: &Disk,
        outputs: &[Output],
        record: Option<&OwnershipRecord>,
        inputs: &str,
    ) -> Plan {
        let stored = StoredRecord::new(record.cloned());
        plan(outputs, &current(disk, outputs, record), &stored, inputs).unwrap()
    }

    fn apply(disk: &mut Disk, plan: &Plan) {
        assert!(!plan.refused());
        for (p, t) in &plan.writes {
            disk.insert(p.clone(), t.clone());
        }
        for p in &plan.deletes {
            disk.remove(p);
        }
    }

    fn classes(plan: &Plan) -> Vec<(&str, DriftClass)> {
        plan.drift
            .iter()
            .map(|d| (d.path.as_str(), d.class))
            .collect()
    }

    fn outputs_v1() -> Vec<Output> {
        vec![
            block("AGENTS.md", "# Rules\n- no secrets\n"),
            whole(
                ".cursor/rules/contextos.mdc",
                "---\nalwaysApply: true\n---\nrules\n",
            ),
            json_out(
                ".claude/settings.json",
                vec![
                    items(
                        "/permissions/deny",
                        &[json!("Read(.env)"), json!("Edit(db/**)")],
                    ),
                    hooks("/hooks/PreToolUse", &[ours_hook("claude")]),
                ],
            ),
        ]
    }

    /// A project where the user already has AGENTS.md and .claude/settings.json.
    fn user_disk() -> Disk {
        Disk::from([
            (
                "AGENTS.md".into(),
                "# My project\r\nHand-written.\r\n".into(),
            ),
            (
                ".claude/settings.json".into(),
                "{\n    \"model\": \"opus\",\n    \"permissions\": {\"deny\": [\"Mine\"]}\n}\n"
                    .into(),
            ),
        ])
    }

    /// Runs the first compile and returns the disk and record after it.
    fn compiled(outputs: &[Output]) -> (Disk, OwnershipRecord) {
        let mut disk = user_disk();
        let p = run(&disk, outputs, None, "in1");
        apply(&mut disk, &p);
        (disk, p.record)
    }

    /// Compiles [`outputs_v1`] over [`user_disk`], lets `edit` rewrite the file at `path`,
    /// and plans again: the first record and the new plan.
    fn replan_after_edit(path: &str, edit: impl FnOnce(&str) -> String) -> (OwnershipRecord, Plan) {
        let outs = outputs_v1();
        let (mut disk, record) = compiled(&outs);
        let text = edit(&disk[path]);
        disk.insert(path.into(), text);
        let p = run(&disk, &outs, Some(&record), "in1");
        (record, p)
    }

    /// A program output is owned like a whole file and its write gets the executable
    /// mode; no other write does, and a hand-written program in its place is refused.
    #[test]
    fn scripts_are_written_executable_and_owned_like_whole_files() {
        let script = Output {
            path: ".clinerules/hooks/PreToolUse".into(),
            target: Agent::Cline,
            content: Content::Script {
                text: "#!/bin/sh\nexec contextos hook cline\n".into(),
            },
        };
        let mut outs = outputs_v1();
        outs.push(script.clone());
        let mut disk = user_disk();
        let p = run(&disk, &outs, None, "in1");
        assert_eq!(p.executable, [".clinerules/hooks/PreToolUse"]);
        assert_eq!(p.mode(".clinerules/hooks/PreToolUse"), 0o755);
        assert_eq!(p.mode(".cursor/rules/contextos.mdc"), 0o644);
        assert!(p
            .writes
            .iter()
            .any(|(path, text)| path == ".clinerules/hooks/PreToolUse"
                && text.starts_with("#!/bin/sh")));
        assert_eq!(
            p.record.files[".clinerules/hooks/PreToolUse"].kind,
            FileKind::Whole
        );
        apply(&mut disk, &p);
        let again = run(&disk, &outs, Some(&p.record), "in1");
        assert!(again.writes.is_empty(), "{:?}", again.writes);
        let mut mine = user_disk();
        mine.insert(
            ".clinerules/hooks/PreToolUse".into(),
            "#!/bin/sh\necho '{\"cancel\": false}'\n".into(),
        );
        let refused = run(&mine, &[script], None, "in1");
        assert!(refused.refused());
        assert!(refused.writes.is_empty());
    }

    #[test]
    fn first_run_writes_second_run_is_in_sync() {
        let outs = outputs_v1();
        let mut disk = user_disk();
        let p1 = run(&disk, &outs, None, "in1");
        assert_eq!(
            classes(&p1),
            vec![
                (".claude/settings.json", DriftClass::Modified),
                (".cursor/rules/contextos.mdc", DriftClass::Missing),
                ("AGENTS.md", DriftClass::Modified),
            ]
        );
        assert_eq!(p1.writes.len(), 3);
        assert!(p1.deletes.is_empty());
        apply(&mut disk, &p1);
        assert!(disk["AGENTS.md"].starts_with("# My project\r\nHand-written.\r\n\r\n"));
        assert!(disk["AGENTS.md"].ends_with(&format!("{E}\r\n")));
        let settings: Value = serde_json::from_str(&disk[".claude/settings.json"]).unwrap();
        assert_eq!(settings["model"], json!("opus"));
        assert_eq!(
            settings["permissions"]["deny"],
            json!(["Mine", "Read(.env)", "Edit(db/**)"])
        );
        let record_text = render_record(&p1.record);
        let record = parse_record(&record_text).unwrap();
        assert_eq!(
            record.files[".cursor/rules/contextos.mdc"].kind,
            FileKind::Whole
        );

        let p2 = run(&disk, &outs, Some(&record), "in1");
        assert!(p2.writes.is_empty() && p2.deletes.is_empty(), "{p2:?}");
        assert!(p2.drift.is_empty(), "{:?}", p2.drift);
        assert_eq!(render_record(&p2.record), record_text);
    }

    #[test]
    fn fresh_project_first_run_reports_missing_and_creates_lf_files() {
        let outs = outputs_v1();
        let mut disk = Disk::new();
        let p = run(&disk, &outs, None, "in1");
        assert!(p.drift.iter().all(|d| d.class == DriftClass::Missing));
        apply(&mut disk, &p);
        assert!(disk.values().all(|t| !t.contains('\r')));
        assert_eq!(
            disk["AGENTS.md"],
            format!("{B}\n# Rules\n- no secrets\n{E}\n")
        );
        let p2 = run(&disk, &outs, Some(&p.record), "in1");
        assert!(p2.writes.is_empty() && p2.drift.is_empty());
    }

    #[test]
    fn missing_generated_file() {
        let outs = outputs_v1();
        let (mut disk, record) = compiled(&outs);
        disk.remove(".cursor/rules/contextos.mdc");
        let p = run(&disk, &outs, Some(&record), "in1");
        assert_eq!(
            classes(&p),
            vec![(".cursor/rules/contextos.mdc", DriftClass::Missing)]
        );
        assert_eq!(p.writes.len(), 1);
    }

    #[test]
    fn edited_block_is_modified_user_text_is_not() {
        let outs = outputs_v1();
        let (mut disk, record) = compiled(&outs);
        // Edits outside the block and user JSON keys are the user's business.
        let agents = disk["AGENTS.md"].replace("Hand-written.", "Hand-written, edited.");
        disk.insert("AGENTS.md".into(), agents.clone());
        let s =
            disk[".claude/settings.json"].replace("\"model\": \"opus\"", "\"model\": \"sonnet\"");
        disk.insert(".claude/settings.json".into(), s);
        let p = run(&disk, &outs, Some(&record), "in1");
        assert!(p.drift.is_empty() && p.writes.is_empty(), "{:?}", p.drift);

        // Editing inside the block is drift, and the write restores only the block.
        let tampered = agents.replace("- no secrets", "- secrets are fine");
        disk.insert("AGENTS.md".into(), tampered);
        let p = run(&disk, &outs, Some(&record), "in1");
        assert_eq!(classes(&p), vec![("AGENTS.md", DriftClass::Modified)]);
        assert_eq!(p.writes, vec![("AGENTS.md".to_string(), agents)]);
    }

    #[test]
    fn removed_owned_json_entry_is_modified() {
        let (_, p) = replan_after_edit(".claude/settings.json", |s| {
            s.replace("\"Edit(db/**)\"", "\"Edit(other)\"")
        });
        assert_eq!(
            classes(&p),
            vec![(".claude/settings.json", DriftClass::Modified)]
        );
        assert!(p.drift[0].detail.contains("/permissions/deny"));
        let v: Value = serde_json::from_str(&p.writes[0].1).unwrap();
        // The user's new item stays (it is not ContextOS's), ours comes back.
        assert_eq!(
            v["permissions"]["deny"],
            json!(["Mine", "Read(.env)", "Edit(other)", "Edit(db/**)"])
        );
    }

    #[test]
    fn edited_whole_file_is_unmanaged_and_refuses() {
        let (record, p) = replan_after_edit(".cursor/rules/contextos.mdc", |_| "mine now\n".into());
        assert_eq!(
            classes(&p),
            vec![(".cursor/rules/contextos.mdc", DriftClass::Unmanaged)]
        );
        assert!(p.refused());
        assert!(p.writes.is_empty());
        // The new record keeps the old entry, so nothing is silently released.
        assert_eq!(
            p.record.files[".cursor/rules/contextos.mdc"],
            record.files[".cursor/rules/contextos.mdc"]
        );
    }

    #[test]
    fn crlf_checkout_of_a_whole_file_is_in_sync() {
        let (_, p) =
            replan_after_edit(".cursor/rules/contextos.mdc", |s| s.replace('\n', "  \r\n"));
        assert!(p.drift.is_empty() && p.writes.is_empty(), "{:?}", p.drift);
    }

    #[test]
    fn unmanaged_preexisting_whole_file_refuses_identical_one_is_adopted() {
        let outs = outputs_v1();
        let mut disk = user_disk();
        disk.insert(
            ".cursor/rules/contextos.mdc".into(),
            "user's own rules\n".into(),
        );
        let p = run(&disk, &outs, None, "in1");
        assert!(p.refused());
        assert!(classes(&p).contains(&(".cursor/rules/contextos.mdc", DriftClass::Unmanaged)));
        assert!(!p
            .writes
            .iter()
            .any(|(path, _)| path == ".cursor/rules/contextos.mdc"));
        assert!(!p.record.files.contains_key(".cursor/rules/contextos.mdc"));

        disk.insert(
            ".cursor/rules/contextos.mdc".into(),
            "---\nalwaysApply: true\n---\nrules\n".into(),
        );
        let p = run(&disk, &outs, None, "in1");
        assert!(!p.refused());
        assert!(p.record.files.contains_key(".cursor/rules/contextos.mdc"));
        assert!(!p
            .writes
            .iter()
            .any(|(path, _)| path == ".cursor/rules/contextos.mdc"));
    }

    #[test]
    fn out_of_date_whole_file_is_modified_and_inputs_stale() {
        let outs = outputs_v1();
        let (disk, record) = compiled(&outs);
        let mut outs2 = outs.clone();
        outs2[1] = whole(".cursor/rules/contextos.mdc", "new rules\n");
        let p = run(&disk, &outs2, Some(&record), "in2");
        assert_eq!(
            classes(&p),
            vec![
                (RECORD_PATH, DriftClass::StaleInput),
                (".cursor/rules/contextos.mdc", DriftClass::Modified),
            ]
        );
        assert!(!p.refused());
        assert_eq!(
            p.writes,
            vec![(".cursor/rules/contextos.mdc".into(), "new rules\n".into())]
        );
    }

    #[test]
    fn stale_inputs_alone() {
        let outs = outputs_v1();
        let (mut disk, record) = compiled(&outs);
        let p = run(&disk, &outs, Some(&record), "in2");
        assert_eq!(classes(&p), vec![(RECORD_PATH, DriftClass::StaleInput)]);
        assert!(p.writes.is_empty() && p.deletes.is_empty());
        assert_eq!(p.record.inputs, "in2");
        apply(&mut disk, &p);
        let p2 = run(&disk, &outs, Some(&p.record), "in2");
        assert!(p2.drift.is_empty());
    }

    #[test]
    fn collision_refuses() {
        let mut outs = outputs_v1();
        outs.push(Output {
            path: "AGENTS.md".into(),
            target: Agent::Copilot,
            content: Content::Block { text: "x".into() },
        });
        let disk = user_disk();
        let p = run(&disk, &outs, None, "in1");
        assert!(p.refused());
        let d = p.drift.iter().find(|d| d.path == "AGENTS.md").unwrap();
        assert_eq!(d.class, DriftClass::Collision);
        assert!(d.detail.contains("agents, copilot"), "{}", d.detail);
        assert!(!p.writes.iter().any(|(path, _)| path == "AGENTS.md"));

        let outs = vec![whole(RECORD_PATH, "{}\n")];
        let p = run(&Disk::new(), &outs, None, "in1");
        assert_eq!(classes(&p), vec![(RECORD_PATH, DriftClass::Collision)]);
        assert!(p.refused() && p.writes.is_empty());
    }

    #[test]
    fn orphans_are_retracted_for_all_three_kinds() {
        let outs = outputs_v1();
        let (mut disk, record) = compiled(&outs);
        let before_agents = user_disk()["AGENTS.md"].clone();
        // Every rule removed: no output at all.
        let p = run(&disk, &[], Some(&record), "in2");
        assert_eq!(
            classes(&p),
            vec![
                (".claude/settings.json", DriftClass::Orphaned),
                (RECORD_PATH, DriftClass::StaleInput),
                (".cursor/rules/contextos.mdc", DriftClass::Orphaned),
                ("AGENTS.md", DriftClass::Orphaned),
            ]
        );
        assert_eq!(p.deletes, vec![".cursor/rules/contextos.mdc".to_string()]);
        apply(&mut disk, &p);
        assert_eq!(disk["AGENTS.md"], before_agents);
        let v: Value = serde_json::from_str(&disk[".claude/settings.json"]).unwrap();
        // The user's deny survives; ContextOS's hooks object (created by it) is gone.
        assert_eq!(
            v,
            json!({"model": "opus", "permissions": {"deny": ["Mine"]}})
        );
        assert!(p.record.files.is_empty());
        let p2 = run(&disk, &[], Some(&p.record), "in2");
        assert!(p2.drift.is_empty() && p2.writes.is_empty() && p2.deletes.is_empty());
    }

    #[test]
    fn orphans_of_files_contextos_created_are_deleted() {
        let outs = outputs_v1();
        let mut disk = Disk::new();
        let p = run(&disk, &outs, None, "in1");
        apply(&mut disk, &p);
        let p = run(&disk, &[], Some(&p.record), "in1");
        assert_eq!(
            p.deletes,
            vec![
                ".claude/settings.json".to_string(),
                ".cursor/rules/contextos.mdc".into(),
                "AGENTS.md".into()
            ]
        );
        apply(&mut disk, &p);
        assert!(disk.is_empty());
    }

    #[test]
    fn orphan_after_a_rule_removal_and_edited_orphan_kept() {
        let mut outs = outputs_v1();
        outs.push(whole(".cursor/rules/db.mdc", "db rule\n"));
        let (mut disk, record) = compiled(&outs);
        // The db rule is removed from the policies.
        outs.pop();
        let p = run(&disk, &outs, Some(&record), "in2");
        assert!(classes(&p).contains(&(".cursor/rules/db.mdc", DriftClass::Orphaned)));
        assert_eq!(p.deletes, vec![".cursor/rules/db.mdc".to_string()]);
        // Edited by hand: kept, released from the record, not deleted.
        disk.insert(".cursor/rules/db.mdc".into(), "db rule, my notes\n".into());
        let p = run(&disk, &outs, Some(&record), "in2");
        assert!(classes(&p).contains(&(".cursor/rules/db.mdc", DriftClass::Orphaned)));
        assert!(p.deletes.is_empty());
        assert!(!p.record.files.contains_key(".cursor/rules/db.mdc"));
    }

    #[test]
    fn removed_json_item_is_retracted_on_recompile() {
        let outs = outputs_v1();
        let (mut disk, record) = compiled(&outs);
        let outs2 = vec![
            outs[0].clone(),
            outs[1].clone(),
            json_out(
                ".claude/settings.json",
                vec![
                    items("/permissions/deny", &[json!("Read(.env)")]),
                    hooks("/hooks/PreToolUse", &[ours_hook("claude")]),
                ],
            ),
        ];
        let p = run(&disk, &outs2, Some(&record), "in2");
        apply(&mut disk, &p);
        let v: Value = serde_json::from_str(&disk[".claude/settings.json"]).unwrap();
        assert_eq!(v["permissions"]["deny"], json!(["Mine", "Read(.env)"]));
        let p2 = run(&disk, &outs2, Some(&p.record), "in2");
        assert!(p2.drift.is_empty() && p2.writes.is_empty());
    }

    #[test]
    fn out_of_scope_lock_entries_are_carried_over() {
        let outs = outputs_v1();
        let (disk, record) = compiled(&outs);
        let claude_only: Vec<Output> = outs
            .iter()
            .filter(|o| o.target == Agent::Claude)
            .cloned()
            .collect();
        let cur = current(&disk, &claude_only, Some(&record));
        let stored = StoredRecord::new(Some(record.clone()));
        let p = plan_targets(&claude_only, &cur, &stored, "in1", &[Agent::Claude]).unwrap();
        assert!(p.drift.is_empty() && p.writes.is_empty() && p.deletes.is_empty());
        assert_eq!(p.record, record);
    }

    #[test]
    fn whole_file_becoming_a_block_is_replaced_not_appended() {
        let outs = vec![whole("AGENTS.md", "old generated\n")];
        let mut disk = Disk::new();
        let p = run(&disk, &outs, None, "in1");
        apply(&mut disk, &p);
        let outs2 = vec![block("AGENTS.md", "rules")];
        let p = run(&disk, &outs2, Some(&p.record), "in1");
        assert_eq!(
            p.writes,
            vec![("AGENTS.md".into(), format!("{B}\nrules\n{E}\n"))]
        );
    }

    #[test]
    fn plan_errors_name_the_file() {
        let refused = |outs: &[Output], path: &str, text: &str| {
            let disk = Disk::from([(path.to_string(), text.to_string())]);
            let stored = StoredRecord::default();
            plan(outs, &current(&disk, outs, None), &stored, "in").unwrap_err()
        };
        let e = refused(
            &[block("AGENTS.md", "x")],
            "AGENTS.md",
            &format!("a\n{B}\n"),
        );
        assert_eq!(e.path(), "AGENTS.md");
        assert_eq!(
            e.to_string().split(':').take(2).collect::<Vec<_>>(),
            ["AGENTS.md", "2"]
        );
        let outs = vec![json_out("s.json", vec![key("/a", json!(1))])];
        let e = refused(&outs, "s.json", "{oops");
        assert_eq!((e.code(), e.path()), ("emit.json.syntax", "s.json"));
        let e = plan(&outs, &Current::default(), &StoredRecord::default(), "in").unwrap_err();
        assert_eq!(e.code(), "emit.plan.not-read");
    }

    #[test]
    fn a_record_at_the_legacy_path_moves_without_drift() {
        let outs = outputs_v1();
        let (disk, record) = compiled(&outs);
        let stored = StoredRecord::read(None, Some(&render_record(&record))).unwrap();
        let p = plan(&outs, &current(&disk, &outs, Some(&record)), &stored, "in1").unwrap();
        // The files are in sync with the record read from the old path: only the record's
        // file changes (the caller writes `p.record` at RECORD_PATH).
        assert!(p.drift.is_empty() && p.writes.is_empty(), "{p:?}");
        assert_eq!(p.deletes, vec![LEGACY_RECORD_PATH.to_string()]);
        assert_eq!(p.record, record);
        // Once moved, nothing is left to delete.
        let moved = StoredRecord::read(Some(&render_record(&p.record)), None).unwrap();
        let p = plan(&outs, &current(&disk, &outs, Some(&record)), &moved, "in1").unwrap();
        assert!(p.drift.is_empty() && p.writes.is_empty() && p.deletes.is_empty());
        // No output may claim the old path either.
        let claim = vec![whole(LEGACY_RECORD_PATH, "{}\n")];
        let p = run(&Disk::new(), &claim, None, "in1");
        assert_eq!(
            classes(&p),
            vec![(LEGACY_RECORD_PATH, DriftClass::Collision)]
        );
    }
}

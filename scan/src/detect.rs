//! Runs the policy set's detectors over one changed file.
//!
//! One Aho-Corasick pass ([`crate::keywords`]) over the added text finds every keyword of
//! every `secret` and `stub` detector; a detector's regex then runs only on the lines
//! where one of its keywords occurs, and is compiled the first time that happens. Path
//! globs of all detectors form one glob set, matched once per file. This is what makes a
//! scan cost grow with the keywords present, not with the number of detectors.

use crate::change::ChangedFile;
use crate::checksum;
use crate::decode;
use crate::finding::{Finding, FindingKind};
use crate::keywords::{Keywords, KeywordsBuilder};
use crate::modal::ModalRegex;
use crate::reach;
use crate::text::{self, Lines};
use contextos_core::detector::{CompiledDetector, DetectorKind, Severity};
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use regex::bytes::Regex;
use std::collections::BTreeSet;

pub use crate::modal::REGEX_SIZE_LIMIT;

/// Why the detectors could not be prepared (a policy that passed `check` never fails here,
/// but a scan must not trust that: failing to prepare fails the scan closed).
#[derive(Debug, Clone, thiserror::Error)]
pub enum DetectorError {
    #[error("detector `{id}`: {message}")]
    Invalid { id: String, message: String },
}

/// One regex match, as the judge sees it.
struct Match<'a> {
    /// 0-based line of the text scanned (raw content or a decoded view).
    line: usize,
    line_text: &'a [u8],
    at_in_line: usize,
    value: &'a [u8],
    /// The whole match (group 0).
    whole: &'a [u8],
}

#[derive(Debug)]
struct Prepared {
    det: CompiledDetector,
    /// Indices into the shared glob set: the file must match one of `paths` (when any)
    /// and none of `exclude`.
    paths: Vec<usize>,
    exclude: Vec<usize>,
    regexes: Vec<ModalRegex>,
    /// For a `multiline` detector, per pattern: how many lines past a keyword's line a
    /// match starting on it can reach ([`reach`]); `None` is "to the end of the block".
    reach: Vec<Option<usize>>,
    content: ModalRegex,
    unless_before: ModalRegex,
    skip: ModalRegex,
    ignore: ModalRegex,
    allow: BTreeSet<Vec<u8>>,
    stopwords: Vec<Vec<u8>>,
}

/// The detectors of a policy set, ready to scan.
#[derive(Debug)]
pub struct Detectors {
    prepared: Vec<Prepared>,
    globs: GlobSet,
    /// Every keyword with the detectors (indices into `prepared`) that listed it; `None`
    /// when no detector has one.
    keywords: Option<Keywords>,
}

/// The compiler's segment-aware path glob ([`contextos_core::glob::path_glob`]), optionally
/// ASCII case-insensitive.
fn path_glob(pattern: &str, case_insensitive: bool) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| e.kind().to_string())
}

/// The form of an optional pattern (`content`, `skip`, …) that answers for `text` as the
/// pattern as written would ([`ModalRegex::exact_for`]).
fn exact_opt<'a>(
    cell: &'a ModalRegex,
    pattern: Option<&str>,
    id: &str,
    text: &[u8],
) -> Result<Option<&'a Regex>, DetectorError> {
    pattern
        .map(|p| cell.exact_for(p, text).map_err(|e| invalid(id, &e)))
        .transpose()
}

fn invalid(id: &str, e: &regex::Error) -> DetectorError {
    DetectorError::Invalid {
        id: id.to_string(),
        message: e.to_string(),
    }
}

impl Detectors {
    pub fn new(detectors: &[CompiledDetector]) -> Result<Detectors, DetectorError> {
        // (glob, case-insensitive): one entry of the shared glob set.
        let mut glob_patterns: Vec<(String, bool)> = Vec::new();
        let mut glob_of = |p: &str, ci: bool| -> usize {
            if let Some(i) = glob_patterns.iter().position(|(g, c)| g == p && *c == ci) {
                i
            } else {
                glob_patterns.push((p.to_string(), ci));
                glob_patterns.len() - 1
            }
        };
        let mut prepared = Vec::with_capacity(detectors.len());
        let mut keywords = KeywordsBuilder::default();
        for (di, d) in detectors.iter().enumerate() {
            let is_file = d.kind == DetectorKind::File;
            let path_src = if is_file { &d.patterns } else { &d.paths };
            // Blocked-file names are matched without regard to case unless the detector
            // asks otherwise: `cert.P12` is as much a keystore as `cert.p12`.
            let ci = is_file && !d.case_sensitive;
            let paths = path_src.iter().map(|p| glob_of(p, ci)).collect();
            let exclude = d.exclude.iter().map(|p| glob_of(p, ci)).collect();
            if d.kind != DetectorKind::File && d.keywords.is_empty() {
                return Err(DetectorError::Invalid {
                    id: d.id.clone(),
                    message: "has no keywords".into(),
                });
            }
            let as_written = d.kind == DetectorKind::Secret && d.case_sensitive;
            for k in &d.keywords {
                keywords.add(k, di, as_written);
            }
            let regexes = if d.kind == DetectorKind::File {
                Vec::new()
            } else {
                d.patterns.iter().map(|_| ModalRegex::default()).collect()
            };
            let reach = if d.kind == DetectorKind::Secret && d.multiline {
                d.patterns.iter().map(|p| reach::max_newlines(p)).collect()
            } else {
                Vec::new()
            };
            let mut det = d.clone();
            // `skip` describes the whole value.
            det.skip = det.skip.map(|s| format!("^(?:{s})$"));
            prepared.push(Prepared {
                det,
                paths,
                exclude,
                regexes,
                reach,
                content: ModalRegex::default(),
                unless_before: ModalRegex::default(),
                skip: ModalRegex::default(),
                ignore: ModalRegex::default(),
                allow: d.allow.iter().map(|a| a.as_bytes().to_vec()).collect(),
                stopwords: d
                    .stopwords
                    .iter()
                    .map(|s| s.to_ascii_lowercase().into_bytes())
                    .collect(),
            });
        }
        let mut gb = GlobSetBuilder::new();
        for (p, ci) in &glob_patterns {
            gb.add(path_glob(p, *ci).map_err(|message| DetectorError::Invalid {
                id: p.clone(),
                message,
            })?);
        }
        let globs = gb.build().map_err(|e| DetectorError::Invalid {
            id: "paths".into(),
            message: e.to_string(),
        })?;
        let keywords = keywords.build().map_err(|message| DetectorError::Invalid {
            id: "keywords".into(),
            message,
        })?;
        Ok(Detectors {
            prepared,
            globs,
            keywords,
        })
    }

    /// Compiles every regex now (for `contextos check`-like validation and benches).
    pub fn warm(&self) -> Result<(), DetectorError> {
        for p in &self.prepared {
            let id = &p.det.id;
            for (cell, pat) in p.regexes.iter().zip(&p.det.patterns) {
                cell.warm(pat).map_err(|e| invalid(id, &e))?;
            }
            for (cell, pat) in [
                (&p.content, &p.det.content),
                (&p.unless_before, &p.det.unless_before),
                (&p.skip, &p.det.skip),
                (&p.ignore, &p.det.ignore),
            ] {
                if let Some(pat) = pat {
                    cell.warm(pat).map_err(|e| invalid(id, &e))?;
                }
            }
        }
        Ok(())
    }

    fn applies(&self, p: &Prepared, matched: &[usize]) -> bool {
        let hit = |ix: &Vec<usize>| ix.iter().any(|i| matched.binary_search(i).is_ok());
        (p.paths.is_empty() || hit(&p.paths)) && !hit(&p.exclude)
    }

    /// Blocked-file findings for a file that is added, modified or renamed to `path`.
    pub fn blocked_files(
        &self,
        file: &ChangedFile,
        out: &mut Vec<Finding>,
    ) -> Result<(), DetectorError> {
        let matched = self.globs.matches(&file.path);
        for p in self
            .prepared
            .iter()
            .filter(|p| p.det.kind == DetectorKind::File)
        {
            if p.paths.is_empty() || !self.applies(p, &matched) {
                continue;
            }
            if p.det.content.is_some() {
                let Some(c) = file.content.as_deref() else {
                    continue;
                };
                let re = exact_opt(&p.content, p.det.content.as_deref(), &p.det.id, c)?;
                if !re.is_some_and(|re| re.is_match(c)) {
                    continue;
                }
            }
            out.push(Finding {
                rule: p.det.id.clone(),
                kind: FindingKind::BlockedFile,
                severity: p.det.severity,
                file: file.path.clone(),
                line: None,
                column: None,
                fingerprint: text::fingerprint(&p.det.id, &file.path, b""),
                redacted: None,
                message: p.det.message.clone(),
            });
        }
        Ok(())
    }

    /// Secret and stub findings in the added lines of `file` (which must be text), then
    /// secret findings in the decoded view of those lines ([`decode`]), reported at the
    /// original line unless the raw text already gave the same rule there.
    pub fn added_text(
        &self,
        file: &ChangedFile,
        content: &[u8],
        added: &[std::ops::Range<usize>],
        out: &mut Vec<Finding>,
    ) -> Result<(), DetectorError> {
        self.text_of(file, content, Some(added), out)
    }

    /// [`Detectors::added_text`] with every line of `content` added ([`Added::All`]): the
    /// line table is built once, where counting the lines for the range first read the
    /// whole content a second time.
    ///
    /// [`Added::All`]: crate::change::Added::All
    pub fn all_text(
        &self,
        file: &ChangedFile,
        content: &[u8],
        out: &mut Vec<Finding>,
    ) -> Result<(), DetectorError> {
        self.text_of(file, content, None, out)
    }

    /// The added lines `added`, or all of them (`None`).
    fn text_of(
        &self,
        file: &ChangedFile,
        content: &[u8],
        added: Option<&[std::ops::Range<usize>]>,
        out: &mut Vec<Finding>,
    ) -> Result<(), DetectorError> {
        if self.keywords.is_none() {
            return Ok(());
        }
        let lines = Lines::new(content);
        let every = 0..lines.count();
        let added = added.unwrap_or(std::slice::from_ref(&every));
        let matched = self.globs.matches(&file.path);
        let applies: Vec<bool> = self
            .prepared
            .iter()
            .map(|p| p.det.kind != DetectorKind::File && self.applies(p, &matched))
            .collect();
        if !applies.contains(&true) {
            return Ok(());
        }
        let first = out.len();
        let direct = |at: usize| -> (usize, usize) {
            let line = lines.line_of(at);
            let lr = lines.range(line, content);
            let line_text = content.get(lr.clone()).unwrap_or(b"");
            (line, text::column(line_text, at.saturating_sub(lr.start)))
        };
        self.scan_region(file, content, &lines, added, &applies, &direct, true, out)?;
        let secrets: Vec<bool> = applies
            .iter()
            .zip(&self.prepared)
            .map(|(a, p)| *a && p.det.kind == DetectorKind::Secret)
            .collect();
        if !secrets.contains(&true) {
            return Ok(());
        }
        let Some(view) = decode::view(content, &lines, added) else {
            return Ok(());
        };
        let vlines = Lines::new(&view.text);
        let all = 0..vlines.count();
        let mapped = |at: usize| direct(view.source(at));
        let mut decoded = Vec::new();
        self.scan_region(
            file,
            &view.text,
            &vlines,
            std::slice::from_ref(&all),
            &secrets,
            &mapped,
            false,
            &mut decoded,
        )?;
        for f in decoded {
            let known = out[first..]
                .iter()
                .any(|g| g.rule == f.rule && g.line == f.line);
            if !known {
                out.push(f);
            }
        }
        Ok(())
    }

    /// Runs the detectors marked in `applies` over the `added` line ranges of `content`;
    /// `locate` turns an offset of `content` into the reported 0-based line and 1-based
    /// column. In the `raw` pass, a secret value that is base64 of text is left to the
    /// decoded pass, which judges the text it stands for (`cGFzc3dvcmQ=` is `password`).
    #[allow(
        clippy::too_many_arguments,
        reason = "the raw pass and the decoded pass share this; they differ in text, lines and locator"
    )]
    fn scan_region(
        &self,
        file: &ChangedFile,
        content: &[u8],
        lines: &Lines,
        added: &[std::ops::Range<usize>],
        applies: &[bool],
        locate: &dyn Fn(usize) -> (usize, usize),
        raw: bool,
        out: &mut Vec<Finding>,
    ) -> Result<(), DetectorError> {
        // (detector, line) pairs whose keyword occurs on an added line. Common keywords
        // (`key`, `token`) occur many times a file: pushing and sorting once is cheaper
        // than keeping a set ordered on every hit.
        let mut todo: Vec<(usize, usize)> = Vec::new();
        let Some(keywords) = &self.keywords else {
            return Ok(());
        };
        for r in added {
            let start = lines.start(r.start);
            let end = lines.start(r.end).min(content.len());
            let Some(slice) = content.get(start..end) else {
                continue;
            };
            keywords.for_each_hit(slice, |hit| {
                let line = lines.line_of(start + hit.start);
                for di in keywords.owners(hit, slice) {
                    if applies[di] {
                        todo.push((di, line));
                    }
                }
            });
        }
        todo.sort_unstable();
        todo.dedup();
        let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
        for (di, line) in todo {
            let p = &self.prepared[di];
            let lr = lines.range(line, content);
            let block_end = if p.det.multiline {
                let r = added.iter().find(|r| r.contains(&line));
                r.map_or(lr.end, |r| lines.start(r.end).min(content.len()))
            } else {
                lr.end
            };
            for (k, (cell, pat)) in p.regexes.iter().zip(&p.det.patterns).enumerate() {
                // A match starting on this line ends within `n` more lines; one line
                // past them keeps the assertions at its end exact ([`reach`]).
                let region_end = match p.reach.get(k).copied().flatten() {
                    Some(n) => lines.start(line + n + 2).min(block_end),
                    None => block_end,
                };
                let Some(hay) = content.get(lr.start..region_end) else {
                    continue;
                };
                // The ASCII form, and on text with a non-ASCII byte the written form too
                // ([`ModalRegex`]); a match both find is judged once (`seen`).
                let (ascii, written) = cell
                    .searchers(pat, hay)
                    .map_err(|e| invalid(&p.det.id, &e))?;
                for re in std::iter::once(ascii).chain(written) {
                    // Most woken lines hold no match: asking first costs no captures (an
                    // allocation per search) and lets the search stop at the first match
                    // state. Over the large corpus that is some 420,000 searches for a few
                    // thousand matches.
                    if !re.is_match(hay) {
                        continue;
                    }
                    for caps in re.captures_iter(hay) {
                        let Some(whole) = caps.get(0) else { continue };
                        if lr.start + whole.start() >= lr.end && lr.end != lr.start {
                            // A multi-line search starting on this line found a match that
                            // starts on a later line; that line is searched on its own.
                            break;
                        }
                        let group = match p.det.group {
                            Some(g) => caps.get(g as usize),
                            None if re.captures_len() > 1 => caps.get(1),
                            None => None,
                        }
                        .unwrap_or(whole);
                        let value = group.as_bytes();
                        let at = lr.start + group.start();
                        if !seen.insert((di, at)) {
                            continue;
                        }
                        let line_text = content.get(lr.clone()).unwrap_or(b"");
                        if raw
                            && p.det.kind == DetectorKind::Secret
                            && line_text.len() <= decode::MAX_LINE
                            && decode::decode_text(value).is_some()
                        {
                            continue;
                        }
                        let here = Match {
                            line,
                            line_text,
                            at_in_line: at.saturating_sub(lr.start),
                            value,
                            whole: whole.as_bytes(),
                        };
                        if let Some(f) =
                            self.judge_match(p, file, content, lines, &here, locate(at))?
                        {
                            out.push(f);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a deferring detector leaves this value to a provider's detector: the value
    /// begins with that detector's keyword, its prefix (`glpat-`, `AKIA`), and that
    /// detector knows the token's length and checksum. Keywords the deferring detector
    /// lists itself (`secret`, `token`) do not count; nor do detectors that defer or that
    /// run only on some paths (a `.netrc` rule may not see this file). A provider's name
    /// before the value (`ZOOM_CLIENT_SECRET`) does not defer: a random value under it is
    /// reported whichever length it has.
    fn deferred(&self, p: &Prepared, value: &[u8]) -> bool {
        let Some(keywords) = &self.keywords else {
            return false;
        };
        keywords
            .hits(value)
            .into_iter()
            .filter(|k| k.start == 0)
            .flat_map(|k| keywords.owner_groups(k, value))
            .any(|owners| {
                !owners.iter().any(|&di| std::ptr::eq(&self.prepared[di], p))
                    && owners.iter().any(|&di| {
                        let q = &self.prepared[di];
                        q.det.kind == DetectorKind::Secret && !q.det.defer && q.paths.is_empty()
                    })
            })
    }

    fn judge_match(
        &self,
        p: &Prepared,
        file: &ChangedFile,
        content: &[u8],
        lines: &Lines,
        m: &Match<'_>,
        (report_line, column): (usize, usize),
    ) -> Result<Option<Finding>, DetectorError> {
        let d = &p.det;
        let (line, line_text, at_in_line, value) = (m.line, m.line_text, m.at_in_line, m.value);
        let mut severity = d.severity;
        let mut message = None;
        match d.kind {
            DetectorKind::Secret => {
                if value.is_empty() || p.allow.contains(value) {
                    return Ok(None);
                }
                let lower = value.to_ascii_lowercase();
                if p.stopwords.iter().any(|s| text::stopword_in(&lower, s)) {
                    return Ok(None);
                }
                if let Some(min) = d.min_entropy {
                    if text::entropy(value) < min {
                        return Ok(None);
                    }
                }
                if let Some(re) = exact_opt(&p.skip, d.skip.as_deref(), &d.id, value)? {
                    if re.is_match(value) {
                        return Ok(None);
                    }
                }
                if let Some(re) = exact_opt(&p.ignore, d.ignore.as_deref(), &d.id, m.whole)? {
                    if re.is_match(m.whole) {
                        return Ok(None);
                    }
                }
                if d.defer && self.deferred(p, value) {
                    return Ok(None);
                }
                if let Some(c) = d.checksum {
                    if checksum::verify(c, value) == Some(false) {
                        // The token's shape without its checksum: not issued by the
                        // provider (a fixture, a hand-made sample); a person decides.
                        severity = severity.min(Severity::Warning);
                        message = Some(format!(
                            "{} Its checksum does not match, so it was probably not issued \
                             (a test value?).",
                            d.message
                        ));
                    }
                }
            }
            DetectorKind::Stub => {
                if d.code_only && text::in_literal_or_comment(line_text, at_in_line) {
                    return Ok(None);
                }
                if let Some(pattern) = d.unless_before.as_deref() {
                    let from = line.saturating_sub(d.lookback as usize);
                    for l in from..line {
                        let t = content.get(lines.range(l, content)).unwrap_or_default();
                        let re = p
                            .unless_before
                            .exact_for(pattern, t)
                            .map_err(|e| invalid(&d.id, &e))?;
                        if re.is_match(t) {
                            return Ok(None);
                        }
                    }
                }
            }
            DetectorKind::File => return Ok(None),
        }
        let kind = match d.kind {
            DetectorKind::Secret => FindingKind::Secret,
            _ => FindingKind::Stub,
        };
        let redacted = match kind {
            FindingKind::Secret => text::redact(&String::from_utf8_lossy(value)),
            _ => String::from_utf8_lossy(value)
                .trim()
                .chars()
                .take(80)
                .collect(),
        };
        Ok(Some(Finding {
            rule: d.id.clone(),
            kind,
            severity,
            file: file.path.clone(),
            line: Some(report_line + 1),
            column: Some(column),
            fingerprint: text::fingerprint(&d.id, &file.path, value),
            redacted: Some(redacted),
            message: message.unwrap_or_else(|| d.message.clone()),
        }))
    }
}

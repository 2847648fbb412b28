//! Scoring scanner reports against the corpus labels (see `generator.rs`), the same way for
//! every tool: by location.
//!
//! A labelled item is found when a finding names the same file and its line range overlaps
//! the item's lines (secrets and stubs; a multi-line private key counts if any finding lies
//! within it), or, for whole-file items (blocked files), when a finding names the same file.
//! Precision counts distinct locations `(file, first line)`: a location is a true positive if
//! it matches a positive label, and a false positive otherwise (decoys, items already in HEAD,
//! and plain background alike).
#![allow(
    dead_code,
    reason = "shared by several test and bench crates; each uses a part"
)]

use super::generator::{Class, Label};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One reported location, tool-independent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub path: String,
    /// 1-based; `None` for a whole-file finding.
    pub first: Option<usize>,
    pub last: Option<usize>,
    pub rule: String,
}

fn s(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}
fn n(v: &Value, k: &str) -> Option<usize> {
    v.get(k).and_then(Value::as_u64).map(|x| x as usize)
}

/// `contextos scan --staged --format json`: `findings[].file/line/rule`.
pub fn parse_contextos(v: &Value) -> Vec<Finding> {
    v.get("findings")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|f| Finding {
                    path: s(f, "file"),
                    first: n(f, "line"),
                    last: n(f, "endLine").or_else(|| n(f, "line")),
                    rule: s(f, "rule"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// gitleaks / Betterleaks JSON report: an array of `{File, StartLine, EndLine, RuleID}`.
pub fn parse_gitleaks(v: &Value) -> Vec<Finding> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|f| Finding {
                    path: s(f, "File"),
                    first: n(f, "StartLine"),
                    last: n(f, "EndLine").or_else(|| n(f, "StartLine")),
                    rule: s(f, "RuleID"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Betterleaks 2 (`-o FILE`): `findings[].location.{path,start_line,end_line}`, `rule_id`.
pub fn parse_betterleaks(v: &Value) -> Vec<Finding> {
    if v.is_array() {
        return parse_gitleaks(v);
    }
    v.get("findings")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|f| {
                    let loc = f.get("location").unwrap_or(f);
                    Finding {
                        path: s(loc, "path"),
                        first: n(loc, "start_line"),
                        last: n(loc, "end_line").or_else(|| n(loc, "start_line")),
                        rule: s(f, "rule_id"),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Kingfisher `-f json`: `findings[].rule.id` and `findings[].finding.{path,line}` (1-based).
pub fn parse_kingfisher(v: &Value) -> Vec<Finding> {
    let list = v
        .get("findings")
        .and_then(Value::as_array)
        .or_else(|| v.as_array())
        .cloned()
        .unwrap_or_default();
    list.iter()
        .map(|f| {
            let fi = f.get("finding").unwrap_or(f);
            let path = s(fi, "path");
            let first = n(fi, "line");
            Finding {
                path: path.trim_start_matches("./").to_string(),
                first,
                last: first,
                rule: f.get("rule").map(|r| s(r, "id")).unwrap_or_default(),
            }
        })
        .collect()
}

/// detect-secrets `scan`: `results: {file: [{type, line_number}]}`.
pub fn parse_detect_secrets(v: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(m) = v.get("results").and_then(Value::as_object) {
        for (path, list) in m {
            for f in list.as_array().into_iter().flatten() {
                let line = n(f, "line_number");
                out.push(Finding {
                    path: path.clone(),
                    first: line,
                    last: line,
                    rule: s(f, "type"),
                });
            }
        }
    }
    out
}

/// Found / total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ratio {
    pub hit: usize,
    pub total: usize,
}

impl Ratio {
    pub fn value(self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.hit as f64 / self.total as f64
        }
    }
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} = {:.3}", self.hit, self.total, self.value())
    }
}

#[derive(Debug, Clone, Default)]
pub struct Score {
    /// Recall per positive class.
    pub recall: BTreeMap<Class, Ratio>,
    /// Recall per secret kind (for the per-kind table).
    pub by_kind: BTreeMap<String, Ratio>,
    /// Negative labels (decoys, stub decoys, items already in HEAD) that were reported, per kind.
    pub flagged: BTreeMap<(Class, String), Ratio>,
    pub tp_locations: usize,
    pub fp_locations: usize,
    /// Up to 40 false-positive locations with their rule, for the report.
    pub fp_examples: Vec<String>,
    /// False-positive locations per rule id.
    pub fp_by_rule: BTreeMap<String, usize>,
    /// The positive labels no finding matched.
    pub missed: Vec<Label>,
    pub raw_findings: usize,
}

impl Score {
    pub fn precision(&self) -> f64 {
        let all = self.tp_locations + self.fp_locations;
        if all == 0 {
            1.0
        } else {
            self.tp_locations as f64 / all as f64
        }
    }
    /// Recall over the given positive classes together.
    pub fn recall_of(&self, classes: &[Class]) -> Ratio {
        let mut r = Ratio::default();
        for c in classes {
            if let Some(x) = self.recall.get(c) {
                r.hit += x.hit;
                r.total += x.total;
            }
        }
        r
    }
}

fn overlaps(l: &Label, f: &Finding) -> bool {
    if l.path != f.path {
        return false;
    }
    if l.first == 0 {
        return true;
    }
    match f.first {
        Some(a) => {
            let b = f.last.unwrap_or(a).max(a);
            a <= l.last && l.first <= b
        }
        None => false,
    }
}

/// Scores `findings` against `labels`. Only the classes in `positives` count for recall;
/// labels of other positive classes still make a location a true positive (so a tool that
/// does not look for stubs is not blamed for the stubs, nor credited with them).
pub fn score(labels: &[Label], findings: &[Finding], positives: &[Class]) -> Score {
    let mut by_path: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        by_path.entry(l.path.as_str()).or_default().push(i);
    }
    let mut hit: BTreeSet<usize> = BTreeSet::new(); // indices into labels
    let mut locations: BTreeMap<(String, usize), (bool, String)> = BTreeMap::new();
    for f in findings {
        let mut positive = false;
        for &i in by_path.get(f.path.as_str()).into_iter().flatten() {
            let l = &labels[i];
            if overlaps(l, f) {
                hit.insert(i);
                if l.class.is_positive() {
                    positive = true;
                }
            }
        }
        let key = (f.path.clone(), f.first.unwrap_or(0));
        let e = locations.entry(key).or_insert((false, f.rule.clone()));
        e.0 |= positive;
    }
    let mut sc = Score {
        raw_findings: findings.len(),
        ..Score::default()
    };
    for ((path, line), (ok, rule)) in &locations {
        if *ok {
            sc.tp_locations += 1;
        } else {
            sc.fp_locations += 1;
            *sc.fp_by_rule.entry(rule.clone()).or_default() += 1;
            if sc.fp_examples.len() < 40 {
                sc.fp_examples.push(format!("{path}:{line} [{rule}]"));
            }
        }
    }
    for (i, l) in labels.iter().enumerate() {
        let found = hit.contains(&i);
        if l.class.is_positive() {
            if !positives.contains(&l.class) {
                continue;
            }
            let r = sc.recall.entry(l.class).or_default();
            r.total += 1;
            r.hit += usize::from(found);
            if l.class == Class::Secret {
                let k = sc.by_kind.entry(l.kind.clone()).or_default();
                k.total += 1;
                k.hit += usize::from(found);
            }
            if !found {
                sc.missed.push(l.clone());
            }
        } else {
            let r = sc.flagged.entry((l.class, l.kind.clone())).or_default();
            r.total += 1;
            r.hit += usize::from(found);
        }
    }
    sc
}

//! Renders a scan: text grouped per file, JSON, SARIF 2.1.0 and GitHub annotations.
//! Nothing here ever sees a secret's clear text: findings carry only redacted views.

use crate::output;
use crate::support::Format;
use contextos_engine::scan::suppress::SuppressedBy;
use contextos_engine::scan::verdict::{CommitVerdict, Judged};
use contextos_engine::scan::Finding;
use contextos_engine::Effect;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug)]
pub struct Report<'a> {
    pub verdict: &'a CommitVerdict,
    pub suppressed: &'a [(Finding, SuppressedBy)],
    /// Staged paths that differ from HEAD, and the bytes of their content.
    pub files: usize,
    pub bytes: u64,
    pub enforce: bool,
}

pub fn print(format: Format, r: &Report<'_>) {
    match format {
        Format::Json => output::print_json(json(r)),
        Format::Sarif => outln!(
            "{}",
            serde_json::to_string_pretty(&sarif(r)).unwrap_or_else(|_| "{}".into())
        ),
        Format::Github => github(r),
        Format::Text | Format::Junit => text(r),
    }
}

fn decided_by(j: &Judged) -> Vec<&str> {
    j.decision.rule_ids()
}

fn finding_json(j: &Judged) -> Value {
    let f = &j.finding;
    json!({
        "rule": f.rule,
        "kind": f.kind,
        "severity": f.severity,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "fingerprint": f.fingerprint,
        "redacted": f.redacted,
        "message": f.message,
        "verdict": j.decision.verdict,
        "decidedBy": decided_by(j),
    })
}

fn json(r: &Report<'_>) -> Value {
    json!({
        "verdict": r.verdict.verdict,
        "enforce": r.enforce,
        "scanned": { "files": r.files, "bytes": r.bytes },
        "findings": r.verdict.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "change": {
            "verdict": r.verdict.change.verdict,
            "decidedBy": r.verdict.change.rule_ids(),
        },
        "suppressed": r.suppressed.iter().map(|(f, by)| {
            let mut v = serde_json::to_value(f).unwrap_or_default();
            if let Value::Object(m) = &mut v {
                m.insert("suppressedBy".into(), serde_json::to_value(by).unwrap_or_default());
            }
            v
        }).collect::<Vec<_>>(),
    })
}

fn location(f: &Finding) -> String {
    match (f.line, f.column) {
        (Some(l), Some(c)) => format!("{l}:{c}"),
        (Some(l), None) => format!("{l}"),
        _ => "-".into(),
    }
}

fn text(r: &Report<'_>) {
    let mut by_file: BTreeMap<&str, Vec<&Judged>> = BTreeMap::new();
    for j in &r.verdict.findings {
        by_file.entry(j.finding.file.as_str()).or_default().push(j);
    }
    for (file, items) in &by_file {
        outln!("{file}");
        for j in items {
            let f = &j.finding;
            let shown = f
                .redacted
                .as_deref()
                .map(|s| format!("  {s}"))
                .unwrap_or_default();
            let rules = decided_by(j);
            let why = if rules.is_empty() {
                String::new()
            } else {
                format!(" ({})", rules.join(", "))
            };
            outln!(
                "  {:<7} {:<6} {} {}{shown}  {}  [{}{why}]",
                location(f),
                j.decision.verdict.as_str(),
                f.severity.as_str(),
                f.rule,
                f.message,
                f.kind.as_str(),
            );
        }
    }
    let count = |e: Effect| {
        r.verdict
            .findings
            .iter()
            .filter(|j| j.decision.verdict == e)
            .count()
    };
    let (deny, ask, allow) = (
        count(Effect::Deny),
        count(Effect::Ask),
        count(Effect::Allow),
    );
    let suppressed = if r.suppressed.is_empty() {
        String::new()
    } else {
        format!(", {} suppressed", r.suppressed.len())
    };
    let head = format!(
        "scanned {} staged path(s): {deny} denied, {ask} to review, {allow} advisory{suppressed}",
        r.files
    );
    match r.verdict.verdict {
        Effect::Deny if r.enforce => outln!("{head}\ndeny: this commit is blocked"),
        Effect::Deny => outln!("{head}\ndeny: this commit would be blocked with --enforce"),
        Effect::Ask => outln!("{head}\nask: a person should review this change before it lands"),
        Effect::Allow => outln!("{head}\nallow"),
    }
}

fn github(r: &Report<'_>) {
    for j in &r.verdict.findings {
        let f = &j.finding;
        let level = match j.decision.verdict {
            Effect::Deny => "error",
            Effect::Ask => "warning",
            Effect::Allow => "notice",
        };
        let mut props = format!("file={}", output::escape_property(&f.file));
        if let Some(l) = f.line {
            props.push_str(&format!(",line={l}"));
        }
        if let Some(c) = f.column {
            props.push_str(&format!(",col={c}"));
        }
        props.push_str(&format!(
            ",title={}",
            output::escape_property(&format!("contextos {}: {}", f.kind.as_str(), f.rule))
        ));
        let shown = f
            .redacted
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        outln!(
            "::{level} {props}::{}",
            output::escape_data(&format!("{}{shown}", f.message))
        );
    }
    outln!(
        "contextos scan: {} ({} finding(s))",
        r.verdict.verdict.as_str(),
        r.verdict.findings.len()
    );
}

fn sarif_level(e: Effect) -> &'static str {
    match e {
        Effect::Deny => "error",
        Effect::Ask => "warning",
        Effect::Allow => "note",
    }
}

fn sarif(r: &Report<'_>) -> Value {
    let mut rules: BTreeMap<&str, &Finding> = BTreeMap::new();
    for j in &r.verdict.findings {
        rules.entry(j.finding.rule.as_str()).or_insert(&j.finding);
    }
    let index: BTreeMap<&str, usize> = rules.keys().enumerate().map(|(i, k)| (*k, i)).collect();
    let rule_objs: Vec<Value> = rules
        .values()
        .map(|f| {
            json!({
                "id": f.rule,
                "shortDescription": { "text": f.message },
                "properties": { "kind": f.kind.as_str() },
            })
        })
        .collect();
    let results: Vec<Value> = r
        .verdict
        .findings
        .iter()
        .map(|j| {
            let f = &j.finding;
            let mut physical = json!({ "artifactLocation": { "uri": f.file } });
            if let Some(line) = f.line {
                let mut region = json!({ "startLine": line });
                if let Some(c) = f.column {
                    region["startColumn"] = json!(c);
                }
                physical["region"] = region;
            }
            let shown = f
                .redacted
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            json!({
                "ruleId": f.rule,
                "ruleIndex": index.get(f.rule.as_str()).copied().unwrap_or(0),
                "level": sarif_level(j.decision.verdict),
                "message": { "text": format!("{}{shown}", f.message) },
                "locations": [{ "physicalLocation": physical }],
                "partialFingerprints": { "contextosFinding/v1": f.fingerprint },
                "properties": {
                    "kind": f.kind.as_str(),
                    "severity": f.severity.as_str(),
                    "decidedBy": decided_by(j),
                },
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "contextos",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://example.invalid/contextos",
                "rules": rule_objs,
            }},
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    })
}

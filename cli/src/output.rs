//! Shared output helpers: JSON envelopes with `schemaVersion`, diagnostics.

use contextos_engine::{BuildOutput, FileDiagnostic};
use serde_json::{json, Value};

/// Version of every JSON document the CLI prints; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

pub fn print_json(mut v: Value) {
    if let Value::Object(m) = &mut v {
        m.insert("schemaVersion".into(), json!(SCHEMA_VERSION));
    }
    outln!(
        "{}",
        serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into())
    );
}

/// One JSON document on one line (JSONL output), with `schemaVersion`.
pub fn print_json_line(mut v: Value) {
    if let Value::Object(m) = &mut v {
        m.insert("schemaVersion".into(), json!(SCHEMA_VERSION));
    }
    outln!(
        "{}",
        serde_json::to_string(&v).unwrap_or_else(|_| "{}".into())
    );
}

pub fn diagnostic_json(out: &BuildOutput, d: &FileDiagnostic) -> Value {
    let file = out.files.get(d.file);
    let loc = |o: usize| file.map(|f| f.line_col(o));
    let start = loc(d.diagnostic.span.start);
    let end = loc(d.diagnostic.span.end);
    json!({
        "code": d.diagnostic.code,
        "severity": d.diagnostic.severity,
        "message": d.diagnostic.message,
        "file": file.map(|f| f.name.as_str()),
        "line": start.map(|l| l.line),
        "col": start.map(|l| l.col),
        "endLine": end.map(|l| l.line),
        "endCol": end.map(|l| l.col),
        "label": d.diagnostic.label,
        "help": d.diagnostic.help,
    })
}

/// Prints diagnostics to stderr in text mode.
pub fn eprint_diagnostics(out: &BuildOutput, include_warnings: bool) {
    for d in &out.diagnostics {
        if include_warnings || d.diagnostic.is_error() {
            eprint!("{}", out.render(d));
            eprintln!();
        }
    }
}

/// One GitHub Actions workflow command for a diagnostic, escaped as the runner expects.
pub fn github_annotation(out: &BuildOutput, d: &FileDiagnostic) -> String {
    let level = if d.diagnostic.is_error() {
        "error"
    } else {
        "warning"
    };
    let mut props = Vec::new();
    if let Some(f) = out.files.get(d.file) {
        let start = f.line_col(d.diagnostic.span.start);
        let end = f.line_col(d.diagnostic.span.end);
        props.push(format!("file={}", escape_property(&f.name)));
        props.push(format!("line={}", start.line));
        props.push(format!("col={}", start.col));
        props.push(format!("endLine={}", end.line));
        props.push(format!("endColumn={}", end.col));
    }
    props.push(format!("title={}", escape_property(d.diagnostic.code)));
    let mut message = d.diagnostic.message.clone();
    if let Some(h) = &d.diagnostic.help {
        message.push_str(&format!(" (help: {h})"));
    }
    format!("::{level} {}::{}", props.join(","), escape_data(&message))
}

/// GitHub workflow-command escaping (data: %, CR, LF; properties also `:` and `,`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

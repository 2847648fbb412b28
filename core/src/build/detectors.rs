//! Checking `detector` statements into [`CompiledDetector`]s.
//!
//! Codes: E0122 unknown kind, E0123 unknown or repeated body key, E0124 a value of the
//! wrong type or out of range, E0125 invalid regex, E0126 `secret`/`stub` without
//! keywords, E0127 `group` beyond the regex's capture groups, E0128 duplicate detector id
//! (in [`super::compile`]); globs reuse E0112 and annotations E0107, as rules do.

use super::annotations;
use super::context::Ctx;
use crate::detector::{Checksum, CompiledDetector, DetectorKind, Severity};
use contextos_grammar::ast::{self, ListItem, Pattern, Span, Spanned, Value};
use contextos_grammar::{did_you_mean, Diagnostic};
use std::collections::BTreeSet;

/// Compiled-program size limit for detector regexes (the scanner uses the same).
pub const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// What checking a detector regex established.
#[derive(Debug, Clone)]
pub struct CheckedRegex {
    pattern: String,
    captures_len: usize,
}

impl CheckedRegex {
    /// The pattern as checked.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }
    /// Capture groups including group 0, as `regex::Regex::captures_len` counts them.
    pub fn captures_len(&self) -> usize {
        self.captures_len
    }
}

/// Checks `pattern` as the scanner will compile it; the error is the regex crate's
/// message. With `full` it is compiled (catching the size limit too); otherwise only
/// parsed, which is what a short-lived process (a hook, a scan) can afford on every cold
/// start — the scanner compiles what it uses and fails closed on a regex that does not.
pub fn check_regex(pattern: &str, full: bool) -> Result<CheckedRegex, String> {
    if full {
        return regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(|re| CheckedRegex {
                pattern: pattern.to_string(),
                captures_len: re.captures_len(),
            })
            .map_err(|e| regex_message(&e));
    }
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map(|hir| CheckedRegex {
            pattern: pattern.to_string(),
            captures_len: hir.properties().explicit_captures_len() + 1,
        })
        .map_err(|e| {
            let text = e.to_string();
            text.lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .map(str::to_string)
                .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_string())
        })
}

/// The regex crate's syntax errors draw the pattern with a caret over several lines;
/// a diagnostic already points at the pattern, so keep the `error: …` line.
fn regex_message(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_string())
}

/// Regex syntax that a path glob would take literally, so a `file` detector written with
/// a regex fails loudly instead of never matching.
fn regex_syntax_in_glob(p: &str) -> Option<&'static str> {
    if p.starts_with('^') {
        return Some("`^` anchor");
    }
    if p.ends_with('$') && !p.ends_with("\\$") {
        return Some("`$` anchor");
    }
    if p.contains("(?") {
        return Some("`(?` group");
    }
    ["\\d", "\\w", "\\s", "\\b"]
        .into_iter()
        .find(|class| p.contains(class))
        .map(|_| "`\\d`, `\\w`, `\\s` or `\\b` class")
}

fn value_type(v: &Value) -> &'static str {
    match v {
        Value::Str(_) => "string",
        Value::Int(_) => "integer",
        Value::Bool(_) => "boolean",
        Value::Ident(_) => "bare word",
        Value::List(_) => "list",
    }
}

fn wrong_type(v: &Spanned<Value>, key: &str, want: &str) -> Diagnostic {
    Diagnostic::error("E0124", v.span, format!("`{key}` takes {want}"))
        .with_label(format!("this is a {}", value_type(&v.node)))
}

pub(super) fn compile_detector(
    ctx: &mut Ctx,
    fi: usize,
    d: &ast::Detector,
) -> Option<CompiledDetector> {
    let errors_before = ctx.error_count();

    // Annotations, as on rules (severity: error or warning).
    let mut severity = Severity::Error;
    let id_at = annotations::read(
        ctx,
        fi,
        &d.annotations,
        "detector",
        |ctx, v| match Severity::parse(&v.node) {
            Some(s) => severity = s,
            None => ctx.err(
                fi,
                Diagnostic::error(
                    "E0107",
                    v.span,
                    format!("unknown detector severity `{}`", v.node),
                )
                .with_help("detectors use error or warning"),
            ),
        },
        None,
    );

    let Some(kind) = DetectorKind::parse(&d.kind.node) else {
        let mut diag = Diagnostic::error(
            "E0122",
            d.kind.span,
            format!("unknown detector kind `{}`", d.kind.node),
        )
        .with_label("expected secret, file or stub");
        if let Some(s) = did_you_mean(&d.kind.node, DetectorKind::NAMES) {
            diag = diag.with_help(format!("did you mean `{s}`?"));
        }
        ctx.err(fi, diag);
        return None;
    };
    let origin = ctx.origin(fi, d.span);
    let kind_origin = ctx.origin(fi, d.kind.span);
    let id = match id_at.and_then(|i| d.annotations.get(i)) {
        Some(a) => a.value.node.clone(),
        None => format!("{}:{}", kind_origin.file, kind_origin.line),
    };

    // Patterns: regexes, or path globs for `file`.
    let mut patterns: Vec<(String, Span)> = Vec::new();
    for p in &d.patterns {
        let (items, span) = match p {
            Pattern::Str(s) => (vec![ListItem::Str(s.clone())], s.span),
            Pattern::Var(v) => (vec![ListItem::Var(v.clone())], v.span),
            Pattern::List(l) => (l.node.clone(), l.span),
        };
        if let Some(vals) = ctx.expand(fi, &items, &mut Vec::new()) {
            if vals.is_empty() {
                ctx.err(
                    fi,
                    Diagnostic::error("E0124", span, "this pattern list is empty")
                        .with_label("no patterns"),
                );
            }
            patterns.extend(vals.into_iter().map(|v| (v, span)));
        }
    }
    let mut regexes = Vec::new();
    for (p, span) in &patterns {
        if p.is_empty() {
            ctx.err(
                fi,
                Diagnostic::error("E0124", *span, "a detector pattern may not be empty"),
            );
            continue;
        }
        if kind == DetectorKind::File {
            if let Some(what) = regex_syntax_in_glob(p) {
                ctx.err(
                    fi,
                    Diagnostic::error(
                        "E0112",
                        *span,
                        format!("`{p}` looks like a regex ({what}), not a path glob"),
                    )
                    .with_label("a regex?")
                    .with_help(
                        "`file` detectors match paths with globs such as `**/.env.*`; \
                         put a regex over the file's content in `content: \"…\"`",
                    ),
                );
                continue;
            }
            if let Err(e) = ctx.check_glob(fi, p) {
                ctx.err(
                    fi,
                    Diagnostic::error("E0112", *span, format!("invalid glob `{p}`: {e}"))
                        .with_label("here")
                        .with_help("`file` detectors match paths with globs, not regexes"),
                );
            }
            continue;
        }
        if ctx.trusted(fi) {
            continue;
        }
        match check_regex(p, !ctx.lazy) {
            Ok(re) => regexes.push(re),
            Err(e) => ctx.err(
                fi,
                Diagnostic::error("E0125", *span, format!("invalid regex: {e}"))
                    .with_label("does not compile"),
            ),
        }
    }

    // Body.
    let mut out = CompiledDetector {
        id,
        kind,
        severity,
        message: String::new(),
        patterns: patterns.into_iter().map(|(p, _)| p).collect(),
        keywords: Vec::new(),
        group: None,
        min_entropy: None,
        stopwords: Vec::new(),
        allow: Vec::new(),
        paths: Vec::new(),
        exclude: Vec::new(),
        content: None,
        skip: None,
        multiline: false,
        defer: false,
        checksum: None,
        case_sensitive: false,
        ignore: None,
        code_only: false,
        unless_before: None,
        lookback: 0,
        origin,
    };
    let keys = kind.keys();
    let mut seen = BTreeSet::new();
    let mut group_span = None;
    let mut lookback = None;
    // A bad `keywords` value was reported already: no E0126 on top.
    let mut keywords_reported = false;
    for (k, v) in &d.fields {
        let key = k.node.as_str();
        if !keys.contains(&key) {
            let mut diag = Diagnostic::error(
                "E0123",
                k.span,
                format!("unknown key `{key}` for a `{}` detector", kind.as_str()),
            )
            .with_label(format!("expected one of: {}", keys.join(", ")));
            let elsewhere: Vec<&str> =
                [DetectorKind::Secret, DetectorKind::File, DetectorKind::Stub]
                    .into_iter()
                    .filter(|other| other.keys().contains(&key))
                    .map(DetectorKind::as_str)
                    .collect();
            if let Some(s) = did_you_mean(key, keys.iter().copied()) {
                diag = diag.with_help(format!("did you mean `{s}`?"));
            } else if !elsewhere.is_empty() {
                diag = diag.with_help(format!(
                    "`{key}` applies to {} detectors",
                    elsewhere.join(" and ")
                ));
            }
            ctx.err(fi, diag);
            continue;
        }
        if !seen.insert(key) {
            ctx.err(
                fi,
                Diagnostic::error("E0123", k.span, format!("`{key}` is given twice")),
            );
            continue;
        }
        match key {
            "keywords" | "stopwords" | "allow" | "paths" | "exclude" => {
                let Value::List(items) = &v.node else {
                    ctx.err(fi, wrong_type(v, key, "a list of strings"));
                    keywords_reported |= key == "keywords";
                    continue;
                };
                let Some(vals) = ctx.expand(fi, items, &mut Vec::new()) else {
                    keywords_reported |= key == "keywords";
                    continue;
                };
                match key {
                    "keywords" => {
                        if vals.iter().any(String::is_empty) {
                            keywords_reported = true;
                            ctx.err(
                                fi,
                                Diagnostic::error("E0124", v.span, "a keyword may not be empty")
                                    .with_help("an empty keyword would let every line through"),
                            );
                        }
                        // Lower-cased below unless the detector is case-sensitive.
                        out.keywords = vals;
                    }
                    "stopwords" => out.stopwords = vals,
                    "allow" => out.allow = vals,
                    _ => {
                        for g in &vals {
                            if let Err(e) = ctx.check_glob(fi, g) {
                                ctx.err(
                                    fi,
                                    Diagnostic::error(
                                        "E0112",
                                        v.span,
                                        format!("invalid glob `{g}`: {e}"),
                                    )
                                    .with_label("here"),
                                );
                            }
                        }
                        if key == "paths" {
                            out.paths = vals;
                        } else {
                            out.exclude = vals;
                        }
                    }
                }
            }
            "group" | "lookback" => {
                let n = match &v.node {
                    Value::Int(n) => u32::try_from(*n).ok(),
                    _ => None,
                };
                let Some(n) = n else {
                    ctx.err(
                        fi,
                        wrong_type(v, key, "a non-negative integer (at most 4294967295)"),
                    );
                    continue;
                };
                if key == "group" {
                    out.group = Some(n);
                    group_span = Some(v.span);
                } else {
                    lookback = Some(n);
                }
            }
            "entropy" => {
                let parsed = match &v.node {
                    Value::Str(s) => s.trim().parse::<f64>().ok(),
                    _ => None,
                };
                match parsed {
                    Some(e) if e.is_finite() && (0.0..=8.0).contains(&e) => {
                        out.min_entropy = Some(e)
                    }
                    _ => ctx.err(
                        fi,
                        Diagnostic::error(
                            "E0124",
                            v.span,
                            "`entropy` takes a number of bits per character between 0 and 8, \
                             in a string",
                        )
                        .with_label(format!("this is a {}", value_type(&v.node)))
                        .with_help("write it like `entropy: \"3.5\"`"),
                    ),
                }
            }
            "multiline" | "code_only" | "case_sensitive" | "defer" => {
                let Value::Bool(b) = v.node else {
                    ctx.err(fi, wrong_type(v, key, "`true` or `false`"));
                    continue;
                };
                match key {
                    "multiline" => out.multiline = b,
                    "defer" => out.defer = b,
                    "code_only" => out.code_only = b,
                    _ => out.case_sensitive = b,
                }
            }
            "checksum" => {
                let parsed = match &v.node {
                    Value::Str(s) => Checksum::parse(s),
                    _ => None,
                };
                match parsed {
                    Some(c) => out.checksum = Some(c),
                    None => {
                        let mut diag = Diagnostic::error(
                            "E0124",
                            v.span,
                            format!(
                                "`checksum` takes one of: {}",
                                Checksum::NAMES.map(|n| format!("\"{n}\"")).join(", ")
                            ),
                        )
                        .with_label("unknown checksum");
                        if let Value::Str(s) = &v.node {
                            if let Some(n) = did_you_mean(s, Checksum::NAMES) {
                                diag = diag.with_help(format!("did you mean `{n}`?"));
                            }
                        }
                        ctx.err(fi, diag);
                    }
                }
            }
            "content" | "unless_before" | "skip" | "ignore" => {
                let Value::Str(s) = &v.node else {
                    ctx.err(fi, wrong_type(v, key, "a regex in a string"));
                    continue;
                };
                let checked = if ctx.trusted(fi) {
                    Ok(())
                } else {
                    check_regex(s, !ctx.lazy).map(drop)
                };
                if let Err(e) = checked {
                    ctx.err(
                        fi,
                        Diagnostic::error("E0125", v.span, format!("invalid regex: {e}"))
                            .with_label("does not compile"),
                    );
                    continue;
                }
                match key {
                    "content" => out.content = Some(s.clone()),
                    "skip" => out.skip = Some(s.clone()),
                    "ignore" => out.ignore = Some(s.clone()),
                    _ => out.unless_before = Some(s.clone()),
                }
            }
            _ => {}
        }
    }

    if !out.case_sensitive {
        for k in &mut out.keywords {
            k.make_ascii_lowercase();
        }
    }

    if matches!(kind, DetectorKind::Secret | DetectorKind::Stub)
        && out.keywords.is_empty()
        && !keywords_reported
    {
        let at = d
            .fields
            .iter()
            .find(|(k, _)| k.node == "keywords")
            .map_or(d.kind.span, |(_, v)| v.span);
        ctx.err(
            fi,
            Diagnostic::error(
                "E0126",
                at,
                format!("a `{}` detector needs keywords", kind.as_str()),
            )
            .with_label("no `keywords`")
            .with_help(
                "its regexes run only on lines holding one of its `keywords` (ASCII \
                 case-insensitive), a prefilter that keeps `scan --staged` fast: list words \
                 every match contains, e.g. `keywords: [\"akia\"]`",
            ),
        );
    }
    if let (Some(g), Some(span)) = (out.group, group_span) {
        // `captures_len` counts group 0, the whole match.
        if let Some(re) = regexes.iter().find(|re| g as usize >= re.captures_len()) {
            let groups = re.captures_len() - 1;
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0127",
                    span,
                    format!(
                        "`group: {g}`, but the regex `{}` has {groups} capture group{}",
                        re.as_str(),
                        if groups == 1 { "" } else { "s" }
                    ),
                )
                .with_label("no such group")
                .with_help("group 0 is the whole match; groups are numbered from 1"),
            );
        }
    }
    out.lookback = match lookback {
        Some(n) => n,
        None if out.unless_before.is_some() => DEFAULT_LOOKBACK,
        None => 0,
    };
    out.message = d.because.as_ref().map_or_else(
        || format!("matched detector {}", out.id),
        |b| b.node.clone(),
    );

    (ctx.error_count() == errors_before).then_some(out)
}

/// Lines `unless_before` looks back over when `lookback` is not given.
pub const DEFAULT_LOOKBACK: u32 = 3;

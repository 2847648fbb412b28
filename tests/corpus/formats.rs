//! A corpus generated from documented token formats (`tests/corpus/secret_formats/*.toml`),
//! scored per provider family.
//!
//! Each `[[format]]` entry describes one provider's token as the vendor documents it: literal
//! parts and generated parts (a named alphabet or a character list, with a length range),
//! an optional checksum, the variable name users give it and the detector expected to find
//! it. The generator places every generated token in several file contexts (.env, YAML,
//! JSON, Python, JS, Go, shell, XML, Terraform, base64 inside a Kubernetes Secret, an HTTP
//! header for prefixed tokens) and every `[[near_miss]]` in a few; [`score`] reports, per
//! family, how many positives were found, how many by the expected detector, and how many
//! near misses that detector reported.
//!
//! The format files are written from vendor documentation, never from another scanner's
//! rules or samples; every body is random (seeded), so no real credential is involved.
#![allow(
    dead_code,
    reason = "shared by several test and bench crates; each uses a part"
)]

use super::generator::{base62, base64, crc32, Rng, B64};
use std::collections::BTreeMap;
use std::path::Path;

/// One part of a token: a literal or a generated run.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Lit(String),
    Gen {
        chars: Vec<u8>,
        min: usize,
        max: usize,
    },
}

#[derive(Debug, Clone)]
pub struct Format {
    pub family: String,
    pub category: String,
    pub detector: String,
    pub doc: String,
    pub variable: String,
    pub parts: Vec<Part>,
    pub checksum: Option<String>,
    /// The format file it came from (`core.toml`).
    pub source: String,
}

#[derive(Debug, Clone)]
pub struct NearMiss {
    pub family: String,
    pub detector: String,
    pub variable: String,
    pub parts: Vec<Part>,
    pub source: String,
}

/// The alphabet of a named set.
pub fn named_set(name: &str) -> Option<&'static [u8]> {
    Some(match name {
        "alnum" | "base62" => b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        "alnum_lower" => b"0123456789abcdefghijklmnopqrstuvwxyz",
        "alnum_upper" => b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "alpha" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        "hex" => b"0123456789abcdef",
        "hex_upper" => b"0123456789ABCDEF",
        "digits" => b"0123456789",
        "base64" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        "base64url" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        _ => return None,
    })
}

fn get_str(t: &toml::Table, k: &str) -> Option<String> {
    t.get(k).and_then(toml::Value::as_str).map(str::to_string)
}

fn parse_parts(v: Option<&toml::Value>, what: &str) -> Result<Vec<Part>, String> {
    let list = v
        .and_then(toml::Value::as_array)
        .ok_or_else(|| format!("{what}: `parts` must be an array"))?;
    let mut out = Vec::new();
    for p in list {
        let t = p
            .as_table()
            .ok_or_else(|| format!("{what}: a part must be a table"))?;
        if let Some(l) = get_str(t, "lit") {
            out.push(Part::Lit(l));
            continue;
        }
        let chars = match (get_str(t, "set"), get_str(t, "chars")) {
            (Some(s), None) => named_set(&s)
                .ok_or_else(|| format!("{what}: unknown set `{s}`"))?
                .to_vec(),
            (None, Some(c)) if !c.is_empty() => c.into_bytes(),
            _ => return Err(format!("{what}: a part needs `lit`, `set` or `chars`")),
        };
        let n = |k: &str| {
            t.get(k)
                .and_then(toml::Value::as_integer)
                .and_then(|x| usize::try_from(x).ok())
        };
        let (min, max) = match (n("min"), n("max")) {
            (Some(a), Some(b)) if a <= b && b > 0 => (a, b),
            _ => return Err(format!("{what}: a generated part needs 0 < min <= max")),
        };
        out.push(Part::Gen { chars, min, max });
    }
    if out.is_empty() {
        return Err(format!("{what}: no parts"));
    }
    Ok(out)
}

/// Parses one format file.
pub fn parse(text: &str, source: &str) -> Result<(Vec<Format>, Vec<NearMiss>), String> {
    let doc: toml::Table = text.parse().map_err(|e| format!("{source}: {e}"))?;
    let mut formats = Vec::new();
    let mut near = Vec::new();
    for (i, f) in doc
        .get("format")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let what = format!("{source} format #{}", i + 1);
        let t = f.as_table().ok_or_else(|| format!("{what}: not a table"))?;
        let req = |k: &str| get_str(t, k).ok_or_else(|| format!("{what}: missing `{k}`"));
        formats.push(Format {
            family: req("family")?,
            category: req("category")?,
            detector: req("detector")?,
            doc: req("doc")?,
            variable: req("variable")?,
            parts: parse_parts(t.get("parts"), &what)?,
            checksum: get_str(t, "checksum"),
            source: source.to_string(),
        });
    }
    for (i, f) in doc
        .get("near_miss")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let what = format!("{source} near_miss #{}", i + 1);
        let t = f.as_table().ok_or_else(|| format!("{what}: not a table"))?;
        let req = |k: &str| get_str(t, k).ok_or_else(|| format!("{what}: missing `{k}`"));
        let family = req("family")?;
        near.push(NearMiss {
            variable: get_str(t, "variable").unwrap_or_default(),
            detector: req("detector")?,
            parts: parse_parts(t.get("parts"), &what)?,
            family,
            source: source.to_string(),
        });
    }
    Ok((formats, near))
}

/// Every `*.toml` in `dir`, in name order. A near miss without a variable borrows its
/// family's first format's.
pub fn load(dir: &Path) -> Result<(Vec<Format>, Vec<NearMiss>), String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    let (mut formats, mut near) = (Vec::new(), Vec::new());
    for p in names {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (f, n) = parse(&text, &name)?;
        formats.extend(f);
        near.extend(n);
    }
    for n in &mut near {
        if n.variable.is_empty() {
            if let Some(f) = formats.iter().find(|f| f.family == n.family) {
                n.variable = f.variable.clone();
            }
        }
    }
    Ok((formats, near))
}

/// A token from `parts`, with its checksum appended when the format has one.
pub fn token(rng: &mut Rng, parts: &[Part], checksum: Option<&str>) -> String {
    let mut s = String::new();
    for p in parts {
        match p {
            Part::Lit(l) => s.push_str(l),
            Part::Gen { chars, min, max } => {
                let n = rng.range(*min, *max);
                s.push_str(&rng.string(chars, n));
            }
        }
    }
    if checksum == Some("github-crc32") {
        // The CRC-32 of the random part (after the prefix's `_`), six base62 digits.
        let random = s.rsplit('_').next().unwrap_or("").to_string();
        s.push_str(&base62(crc32(random.as_bytes()), 6));
    } else if checksum == Some("grafana-crc32") {
        // `_` and the CRC-32 of everything so far, bytes little-endian, lower-case hex.
        let sum: String = crc32(s.as_bytes())
            .to_le_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        s.push('_');
        s.push_str(&sum);
    }
    s
}

/// Where a token is planted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Context {
    Env,
    Yaml,
    Json,
    Python,
    Js,
    Go,
    Shell,
    Xml,
    Terraform,
    K8sSecret,
    Header,
}

impl Context {
    pub const ALL: [Context; 11] = [
        Context::Env,
        Context::Yaml,
        Context::Json,
        Context::Python,
        Context::Js,
        Context::Go,
        Context::Shell,
        Context::Xml,
        Context::Terraform,
        Context::K8sSecret,
        Context::Header,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Context::Env => "env",
            Context::Yaml => "yaml",
            Context::Json => "json",
            Context::Python => "python",
            Context::Js => "js",
            Context::Go => "go",
            Context::Shell => "shell",
            Context::Xml => "xml",
            Context::Terraform => "terraform",
            Context::K8sSecret => "k8s-secret",
            Context::Header => "header",
        }
    }

    fn ext(self) -> &'static str {
        match self {
            Context::Env => "env.txt",
            Context::Yaml => "yaml",
            Context::Json => "json",
            Context::Python => "py",
            Context::Js => "js",
            Context::Go => "go",
            Context::Shell => "sh",
            Context::Xml => "xml",
            Context::Terraform => "tf",
            Context::K8sSecret => "k8s.yaml",
            Context::Header => "http",
        }
    }
}

/// `GROQ_API_KEY` → `groqApiKey`.
fn camel(var: &str) -> String {
    let mut out = String::new();
    for (i, w) in var
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let w = w.to_ascii_lowercase();
        if i == 0 {
            out.push_str(&w);
        } else {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                out.push(f.to_ascii_uppercase());
                out.push_str(c.as_str());
            }
        }
    }
    out
}

/// The file text with `token` planted, and the 1-based line it is on.
pub fn render(ctx: Context, var: &str, token: &str) -> (String, usize) {
    let lower = var.to_ascii_lowercase();
    let camel = camel(var);
    let lines: Vec<String> = match ctx {
        Context::Env => vec![
            "# service settings".into(),
            "LOG_LEVEL=info".into(),
            format!("{var}={token}"),
        ],
        Context::Yaml => vec![
            "service:".into(),
            "  name: billing".into(),
            format!("  {lower}: \"{token}\""),
        ],
        Context::Json => vec![
            "{".into(),
            "  \"region\": \"eu-west-1\",".into(),
            format!("  \"{camel}\": \"{token}\""),
            "}".into(),
        ],
        Context::Python => vec![
            "import os".into(),
            String::new(),
            format!("{} = \"{token}\"", var.to_ascii_uppercase()),
        ],
        Context::Js => vec![
            "'use strict';".into(),
            format!("const {camel} = '{token}';"),
            "module.exports = { client };".into(),
        ],
        Context::Go => vec![
            "package config".into(),
            String::new(),
            format!("const {camel} = \"{token}\""),
        ],
        Context::Shell => vec![
            "#!/bin/sh".into(),
            "set -eu".into(),
            format!("export {var}=\"{token}\""),
        ],
        Context::Xml => vec![
            "<configuration>".into(),
            "  <appSettings>".into(),
            format!("    <add key=\"{var}\" value=\"{token}\" />"),
            "  </appSettings>".into(),
            "</configuration>".into(),
        ],
        Context::Terraform => vec![
            "provider \"service\" {".into(),
            "  region = \"eu\"".into(),
            format!("  {lower} = \"{token}\""),
            "}".into(),
        ],
        Context::K8sSecret => vec![
            "apiVersion: v1".into(),
            "kind: Secret".into(),
            "metadata:".into(),
            "  name: app-credentials".into(),
            "type: Opaque".into(),
            "data:".into(),
            format!("  {lower}: {}", base64(token.as_bytes(), B64, true)),
        ],
        Context::Header => vec![
            "GET /v1/items HTTP/1.1".into(),
            "Host: api.example.net".into(),
            format!("Authorization: Bearer {token}"),
        ],
    };
    let at = lines
        .iter()
        .position(|l| l.contains(token) || l.contains(&base64(token.as_bytes(), B64, true)))
        .map_or(1, |i| i + 1);
    let mut text = lines.join("\n");
    text.push('\n');
    (text, at)
}

/// Whether a token of `parts` begins with a documented prefix.
pub fn prefixed(parts: &[Part]) -> bool {
    matches!(parts.first(), Some(Part::Lit(l)) if l.len() >= 3)
}

/// The contexts a format is planted in: the header context only for prefixed tokens (an
/// unprefixed one is found by its variable's name, which a header does not carry), and
/// not for tokens that are URLs.
pub fn contexts(parts: &[Part]) -> Vec<Context> {
    let prefixed = prefixed(parts);
    let url = matches!(parts.first(), Some(Part::Lit(l)) if l.contains("://"));
    Context::ALL
        .into_iter()
        .filter(|c| *c != Context::Header || (prefixed && !url))
        .collect()
}

/// One planted item.
#[derive(Debug, Clone)]
pub struct Item {
    pub path: String,
    pub line: usize,
    pub family: String,
    pub category: String,
    pub detector: String,
    pub context: Context,
    pub positive: bool,
    /// The format file the item comes from (`core.toml`).
    pub source: String,
    /// The value begins with a documented prefix (a literal of three characters or more).
    pub prefixed: bool,
}

/// The generated corpus: files and what they hold.
#[derive(Debug, Default)]
pub struct Generated {
    pub files: Vec<(String, String)>,
    pub items: Vec<Item>,
}

/// Plants every format in every context, and every near miss in three.
pub fn generate(formats: &[Format], near: &[NearMiss], seed: u64) -> Generated {
    let mut rng = Rng::new(seed);
    let mut g = Generated::default();
    for (i, f) in formats.iter().enumerate() {
        for ctx in contexts(&f.parts) {
            let tok = token(&mut rng, &f.parts, f.checksum.as_deref());
            let (text, line) = render(ctx, &f.variable, &tok);
            let path = format!("p/{}/{i}-{}.{}", f.family, ctx.as_str(), ctx.ext());
            g.items.push(Item {
                path: path.clone(),
                line,
                family: f.family.clone(),
                category: f.category.clone(),
                detector: f.detector.clone(),
                context: ctx,
                positive: true,
                source: f.source.clone(),
                prefixed: prefixed(&f.parts),
            });
            g.files.push((path, text));
        }
    }
    for (i, n) in near.iter().enumerate() {
        let category = formats
            .iter()
            .find(|f| f.family == n.family)
            .map_or_else(String::new, |f| f.category.clone());
        for ctx in [Context::Env, Context::Json, Context::Python] {
            let tok = token(&mut rng, &n.parts, None);
            let (text, line) = render(ctx, &n.variable, &tok);
            let path = format!("n/{}/{i}-{}.{}", n.family, ctx.as_str(), ctx.ext());
            g.items.push(Item {
                path: path.clone(),
                line,
                family: n.family.clone(),
                category: category.clone(),
                detector: n.detector.clone(),
                context: ctx,
                positive: false,
                source: n.source.clone(),
                prefixed: prefixed(&n.parts),
            });
            g.files.push((path, text));
        }
    }
    g
}

/// One finding: file, 1-based line, rule.
pub type Hit = (String, usize, String);

/// Per-family counts.
#[derive(Debug, Clone, Default)]
pub struct FamilyScore {
    pub category: String,
    pub positives: usize,
    pub found: usize,
    /// Found by the detector the format names.
    pub by_detector: usize,
    /// Found by a provider-specific detector (any but the `generic-` ones).
    pub specific: usize,
    pub near_misses: usize,
    /// Near misses the named detector reported.
    pub near_flagged: usize,
    /// Near misses any rule reported (the generic ones included): the false positives.
    pub near_any: usize,
    /// Near misses that begin with the provider's documented prefix, and how many of those
    /// any rule reported.
    pub near_prefixed: usize,
    pub near_prefixed_any: usize,
}

impl FamilyScore {
    fn add(&mut self, f: &FamilyScore) {
        self.positives += f.positives;
        self.found += f.found;
        self.by_detector += f.by_detector;
        self.specific += f.specific;
        self.near_misses += f.near_misses;
        self.near_flagged += f.near_flagged;
        self.near_any += f.near_any;
        self.near_prefixed += f.near_prefixed;
        self.near_prefixed_any += f.near_prefixed_any;
    }
}

#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub families: BTreeMap<String, FamilyScore>,
    /// The same counts per format file (`core.toml`, `infra.toml`, …).
    pub sources: BTreeMap<String, FamilyScore>,
    /// Positives not found: (path, family, context).
    pub missed: Vec<(String, String, &'static str)>,
    /// Near misses reported by any rule: (path, family, rules).
    pub flagged: Vec<(String, String, String)>,
}

impl Totals {
    pub fn sum(&self) -> FamilyScore {
        let mut t = FamilyScore::default();
        for f in self.families.values() {
            t.add(f);
        }
        t
    }

    /// Per category: families, positives, recall, share found by the format's own detector
    /// and by any provider-specific one, and near misses reported by any rule.
    pub fn category_table(&self) -> String {
        let mut cats: BTreeMap<&str, (usize, FamilyScore)> = BTreeMap::new();
        for f in self.families.values() {
            let c = cats.entry(f.category.as_str()).or_default();
            c.0 += 1;
            c.1.add(f);
        }
        let mut s = String::from(
            "| category | families | positives | recall | by its detector | by a provider detector | near misses reported (any rule) | of them prefixed |\n|---|---|---|---|---|---|---|---|\n",
        );
        let row = |name: &str, n: usize, f: &FamilyScore| {
            format!(
                "| {name} | {n} | {} | {:.3} | {:.3} | {:.3} | {}/{} | {}/{} |\n",
                f.positives,
                ratio(f.found, f.positives),
                ratio(f.by_detector, f.positives),
                ratio(f.specific, f.positives),
                f.near_any,
                f.near_misses,
                f.near_prefixed_any,
                f.near_prefixed
            )
        };
        for (name, (n, f)) in &cats {
            s.push_str(&row(name, *n, f));
        }
        for (name, f) in &self.sources {
            s.push_str(&row(&format!("*{name}*"), 0, f).replace(" | 0 | ", " | — | "));
        }
        s.push_str(&row("**all**", self.families.len(), &self.sum()));
        s
    }

    /// The Markdown table the book shows.
    pub fn table(&self) -> String {
        let mut s = String::from(
            "| family | category | positives | recall | by its detector | near misses: by its detector | by any rule |\n|---|---|---|---|---|---|---|\n",
        );
        let row = |name: &str, f: &FamilyScore| {
            format!(
                "| {name} | {} | {} | {:.2} | {:.2} | {}/{} | {}/{} |\n",
                f.category,
                f.positives,
                ratio(f.found, f.positives),
                ratio(f.by_detector, f.positives),
                f.near_flagged,
                f.near_misses,
                f.near_any,
                f.near_misses
            )
        };
        for (name, f) in &self.families {
            s.push_str(&row(name, f));
        }
        s.push_str(&row("**all**", &self.sum()));
        s
    }
}

pub fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// Scores `hits` against the planted items.
pub fn score(g: &Generated, hits: &[Hit]) -> Totals {
    let mut at: BTreeMap<(&str, usize), Vec<&str>> = BTreeMap::new();
    for (p, l, r) in hits {
        at.entry((p.as_str(), *l)).or_default().push(r.as_str());
    }
    let mut t = Totals::default();
    for it in &g.items {
        let rules = at
            .get(&(it.path.as_str(), it.line))
            .cloned()
            .unwrap_or_default();
        // This item's counts, added to its family's and its format file's.
        let mut one = FamilyScore {
            category: it.category.clone(),
            ..FamilyScore::default()
        };
        if it.positive {
            one.positives = 1;
            if !rules.is_empty() {
                one.found = 1;
            } else {
                t.missed
                    .push((it.path.clone(), it.family.clone(), it.context.as_str()));
            }
            one.by_detector = usize::from(rules.contains(&it.detector.as_str()));
            one.specific = usize::from(rules.iter().any(|r| !r.starts_with("generic-")));
        } else {
            one.near_misses = 1;
            one.near_prefixed = usize::from(it.prefixed);
            one.near_flagged = usize::from(rules.contains(&it.detector.as_str()));
            if !rules.is_empty() {
                one.near_any = 1;
                one.near_prefixed_any = usize::from(it.prefixed);
                t.flagged
                    .push((it.path.clone(), it.family.clone(), rules.join(",")));
            }
        }
        let fs = t.families.entry(it.family.clone()).or_default();
        fs.category.clone_from(&it.category);
        fs.add(&one);
        t.sources.entry(it.source.clone()).or_default().add(&one);
    }
    t
}

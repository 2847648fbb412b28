//! A deterministic, labelled corpus for `contextos scan --staged`: planted fake credentials,
//! blocked files and lazy stubs in many file types, decoys that must not fire, and realistic
//! background code, lockfiles, bundles and binaries.
//!
//! Included with `#[path = …] mod generator;` by the end-to-end test (`tests/e2e/scan_corpus.rs`)
//! and by the bench binaries (`cli/benches/scan_corpus.rs`, `cli/benches/scan_staged.rs`), so it
//! only uses `std`. Everything is derived from a seeded PRNG: the same options give the same
//! bytes on every machine. No value in this file is a realistic credential; every fake is made
//! at run time (prefix + random body + checksum where the format has one), and even the public
//! documentation samples used as decoys are assembled from pieces.
//!
//! Every planted item has a [`Label`]: the file, the 1-based line range (0..0 for a whole
//! file), its class and kind. [`Corpus::manifest_tsv`] writes them out.
#![allow(
    dead_code,
    reason = "shared by several test and bench crates; each uses a part"
)]

use std::fmt::Write as _;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// PRNG and encodings
// ---------------------------------------------------------------------------------------------

/// SplitMix64: tiny, fast, good enough for test data, identical everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 11) % (n.max(1) as u64)) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    pub fn string(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[self.below(alphabet.len())] as char)
            .collect()
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        v.truncate(n);
        v
    }
    pub fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len())]
    }
}

pub const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const DIGITS: &[u8] = b"0123456789";
pub const HEX: &[u8] = b"0123456789abcdef";
pub const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
pub const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// AWS key ids use base32 letters and digits.
pub const AWS_ID: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/// Passwords: letters, digits and symbols that need no escaping in any of our file types.
pub const PASSWORD: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!%*+-_.?~^";

/// CRC-32 (IEEE), as used by GitHub's and npm's token checksums.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Base62 (`0-9A-Za-z`), left-padded with `0` to `width`.
pub fn base62(mut n: u32, width: usize) -> String {
    let mut out = Vec::new();
    while n > 0 {
        out.push(B62[(n % 62) as usize]);
        n /= 62;
    }
    while out.len() < width {
        out.push(b'0');
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

pub fn base64(data: &[u8], alphabet: &[u8], pad: bool) -> String {
    let mut out = String::with_capacity(data.len() * 4 / 3 + 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

fn b64(data: &[u8]) -> String {
    base64(data, B64, true)
}
fn b64url(data: &[u8]) -> String {
    base64(data, B64URL, false)
}

fn uuid(rng: &mut Rng) -> String {
    let h = rng.string(HEX, 32);
    format!(
        "{}-{}-4{}-{}{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        rng.pick(&["8", "9", "a", "b"]),
        &h[17..20],
        &h[20..32]
    )
}

const WORDS: &[&str] = &[
    "account",
    "audit",
    "batch",
    "billing",
    "bucket",
    "buffer",
    "cache",
    "cart",
    "catalog",
    "channel",
    "checkout",
    "client",
    "cluster",
    "config",
    "cursor",
    "customer",
    "dataset",
    "deploy",
    "device",
    "digest",
    "event",
    "export",
    "feature",
    "filter",
    "gateway",
    "graph",
    "handler",
    "health",
    "import",
    "index",
    "inventory",
    "invoice",
    "job",
    "ledger",
    "limit",
    "listing",
    "loader",
    "metric",
    "mirror",
    "node",
    "notice",
    "order",
    "owner",
    "page",
    "parser",
    "payment",
    "pipeline",
    "policy",
    "profile",
    "queue",
    "quota",
    "record",
    "region",
    "report",
    "request",
    "route",
    "schedule",
    "schema",
    "search",
    "segment",
    "session",
    "shard",
    "shipment",
    "signal",
    "snapshot",
    "source",
    "status",
    "stream",
    "summary",
    "task",
    "tenant",
    "ticket",
    "timer",
    "topic",
    "trace",
    "upload",
    "usage",
    "vendor",
    "version",
    "widget",
    "worker",
    "window",
    "zone",
];

const PROSE: &[&str] = &[
    "Keeps the hot path free of allocations when the batch is already sorted",
    "The caller owns the buffer and must release it after the flush completes",
    "Retries are bounded so a flapping upstream cannot stall the whole pipeline",
    "Values are normalised to UTC before they are compared or stored",
    "This mirrors the behaviour of the legacy importer for compatibility",
    "See the runbook for the failover procedure and the expected alerts",
    "Returns early when the feature flag is off for the current tenant",
    "The index is rebuilt lazily on the first lookup after an invalidation",
    "Large uploads are streamed in chunks to keep memory use predictable",
    "Errors are wrapped with the request id so they can be traced end to end",
];

// ---------------------------------------------------------------------------------------------
// Labels and the corpus
// ---------------------------------------------------------------------------------------------

/// What a labelled item is, for scoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A planted fake credential: must be reported (by line).
    Secret,
    /// A file that must not be committed at all: must be reported (by file).
    BlockedFile,
    /// A lazy stub on an added line: must be reported (by line).
    Stub,
    /// Looks like a secret or a blocked file but is not one: must not be reported.
    Decoy,
    /// Looks like a stub but is not one: must not be reported.
    StubDecoy,
    /// A positive item that is already in HEAD and unchanged: must not be reported.
    Preexisting,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Secret => "secret",
            Class::BlockedFile => "blocked-file",
            Class::Stub => "stub",
            Class::Decoy => "decoy",
            Class::StubDecoy => "stub-decoy",
            Class::Preexisting => "preexisting",
        }
    }
    pub fn parse(s: &str) -> Option<Class> {
        Some(match s {
            "secret" => Class::Secret,
            "blocked-file" => Class::BlockedFile,
            "stub" => Class::Stub,
            "decoy" => Class::Decoy,
            "stub-decoy" => Class::StubDecoy,
            "preexisting" => Class::Preexisting,
            _ => return None,
        })
    }
    /// Items a scanner must report.
    pub fn is_positive(self) -> bool {
        matches!(self, Class::Secret | Class::BlockedFile | Class::Stub)
    }
}

/// One labelled item. `first == 0` means the whole file (blocked files, decoy files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub path: String,
    pub first: usize,
    pub last: usize,
    pub class: Class,
    pub kind: String,
    /// The file type or placement the item was planted in (py, yaml, env-file, key-file …).
    pub context: String,
}

#[derive(Debug, Clone)]
pub struct File {
    pub path: String,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub files: Vec<File>,
    pub labels: Vec<Label>,
}

impl Corpus {
    pub fn bytes(&self) -> usize {
        self.files.iter().map(|f| f.data.len()).sum()
    }
    /// Writes every file below `root`, creating directories.
    pub fn write_to(&self, root: &Path) -> std::io::Result<()> {
        for f in &self.files {
            let p = root.join(&f.path);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(p, &f.data)?;
        }
        Ok(())
    }
    /// Tab-separated labels: `path first last class kind context`, with a header line.
    pub fn manifest_tsv(&self) -> String {
        let mut s = String::from("# path\tfirst\tlast\tclass\tkind\tcontext\n");
        for l in &self.labels {
            let _ = writeln!(
                s,
                "{}\t{}\t{}\t{}\t{}\t{}",
                l.path,
                l.first,
                l.last,
                l.class.as_str(),
                l.kind,
                l.context
            );
        }
        s
    }
    /// Parses what [`Corpus::manifest_tsv`] wrote.
    pub fn parse_manifest(text: &str) -> Vec<Label> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                Some(Label {
                    path: c.first()?.to_string(),
                    first: c.get(1)?.parse().ok()?,
                    last: c.get(2)?.parse().ok()?,
                    class: Class::parse(c.get(3)?)?,
                    kind: c.get(4)?.to_string(),
                    context: c.get(5)?.to_string(),
                })
            })
            .collect()
    }
    pub fn count(&self, class: Class) -> usize {
        self.labels.iter().filter(|l| l.class == class).count()
    }
    fn add_text(&mut self, doc: Doc) {
        // A line with an embedded newline would shift every label below it.
        debug_assert!(doc.lines.iter().all(|l| !l.contains('\n')), "{}", doc.path);
        let mut data = String::with_capacity(doc.lines.iter().map(|l| l.len() + 1).sum());
        for l in &doc.lines {
            data.push_str(l);
            data.push('\n');
        }
        self.labels.extend(doc.labels);
        self.files.push(File {
            path: doc.path,
            data: data.into_bytes(),
        });
    }
}

/// A text file under construction: lines plus the labels planted in it.
struct Doc {
    path: String,
    lines: Vec<String>,
    labels: Vec<Label>,
}

impl Doc {
    fn new(path: impl Into<String>) -> Doc {
        Doc {
            path: path.into(),
            lines: Vec::new(),
            labels: Vec::new(),
        }
    }
    fn push(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }
    fn extend(&mut self, lines: Vec<String>) {
        self.lines.extend(lines);
    }
    fn plant(&mut self, p: Planted, class: Class, kind: &str, context: &str) {
        let base = self.lines.len();
        self.labels.push(Label {
            path: self.path.clone(),
            first: base + p.first + 1,
            last: base + p.last + 1,
            class,
            kind: kind.to_string(),
            context: context.to_string(),
        });
        self.lines.extend(p.lines);
    }
    fn file_label(&mut self, class: Class, kind: &str, context: &str) {
        self.labels.push(Label {
            path: self.path.clone(),
            first: 0,
            last: 0,
            class,
            kind: kind.to_string(),
            context: context.to_string(),
        });
    }
}

/// Lines to insert, with the 0-based inclusive range that the label covers.
struct Planted {
    lines: Vec<String>,
    first: usize,
    last: usize,
}

impl Planted {
    fn one(line: String) -> Planted {
        Planted {
            lines: vec![line],
            first: 0,
            last: 0,
        }
    }
    fn all(lines: Vec<String>) -> Planted {
        let last = lines.len().saturating_sub(1);
        Planted {
            lines,
            first: 0,
            last,
        }
    }
    fn at(lines: Vec<String>, i: usize) -> Planted {
        Planted {
            lines,
            first: i,
            last: i,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Languages and file types
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Py,
    Js,
    Ts,
    Go,
    Rs,
    Java,
    Kt,
    Rb,
    Php,
    Cs,
    Yaml,
    Json,
    Toml,
    Sh,
    Docker,
    Tf,
    Md,
    Ipynb,
    Props,
    Xml,
}

pub const LANGS: &[Lang] = &[
    Lang::Py,
    Lang::Js,
    Lang::Ts,
    Lang::Go,
    Lang::Rs,
    Lang::Java,
    Lang::Kt,
    Lang::Rb,
    Lang::Php,
    Lang::Cs,
    Lang::Yaml,
    Lang::Json,
    Lang::Toml,
    Lang::Sh,
    Lang::Docker,
    Lang::Tf,
    Lang::Md,
    Lang::Ipynb,
    Lang::Props,
    Lang::Xml,
];

/// Languages that hold code, where lazy stubs are planted.
const CODE: &[Lang] = &[
    Lang::Py,
    Lang::Js,
    Lang::Ts,
    Lang::Go,
    Lang::Rs,
    Lang::Java,
    Lang::Kt,
    Lang::Rb,
    Lang::Php,
    Lang::Cs,
];

impl Lang {
    pub fn name(self) -> &'static str {
        match self {
            Lang::Py => "py",
            Lang::Js => "js",
            Lang::Ts => "ts",
            Lang::Go => "go",
            Lang::Rs => "rs",
            Lang::Java => "java",
            Lang::Kt => "kt",
            Lang::Rb => "rb",
            Lang::Php => "php",
            Lang::Cs => "cs",
            Lang::Yaml => "yaml",
            Lang::Json => "json",
            Lang::Toml => "toml",
            Lang::Sh => "sh",
            Lang::Docker => "dockerfile",
            Lang::Tf => "tf",
            Lang::Md => "md",
            Lang::Ipynb => "ipynb",
            Lang::Props => "properties",
            Lang::Xml => "xml",
        }
    }
    /// A path for the n-th file of this language.
    fn path(self, rng: &mut Rng, n: usize) -> String {
        let w = rng.word();
        let svc = rng.word();
        match self {
            Lang::Py => format!("services/{svc}/{svc}_app/{w}_{n}.py"),
            Lang::Js => format!("web/src/lib/{w}{n}.js"),
            Lang::Ts => format!("web/src/{svc}/{w}-{n}.ts"),
            Lang::Go => format!("cmd/{svc}/internal/{w}/{w}_{n}.go"),
            Lang::Rs => format!("crates/{svc}/src/{w}_{n}.rs"),
            Lang::Java => format!(
                "android/app/src/main/java/com/acme/{svc}/{}{n}.java",
                cap(w)
            ),
            Lang::Kt => format!(
                "android/app/src/main/kotlin/com/acme/{svc}/{}{n}.kt",
                cap(w)
            ),
            Lang::Rb => format!("app/models/{w}_{n}.rb"),
            Lang::Php => format!("legacy/src/{}/{}{n}.php", cap(svc), cap(w)),
            Lang::Cs => format!("dotnet/{}.Api/{}{n}.cs", cap(svc), cap(w)),
            Lang::Yaml => format!("deploy/{svc}/{w}-{n}.yaml"),
            Lang::Json => format!("config/{svc}/{w}-{n}.json"),
            Lang::Toml => format!("config/{svc}/{w}_{n}.toml"),
            Lang::Sh => format!("scripts/{w}-{n}.sh"),
            Lang::Docker => format!("docker/{svc}-{n}/Dockerfile"),
            Lang::Tf => format!("infra/{svc}/{w}_{n}.tf"),
            Lang::Md => format!("docs/{svc}/{w}-{n}.md"),
            Lang::Ipynb => format!("notebooks/{w}_{n}.ipynb"),
            Lang::Props => format!("android/{svc}/src/main/resources/{w}{n}.properties"),
            Lang::Xml => format!("dotnet/{}.Api/config/{w}{n}.config.xml", cap(svc)),
        }
    }
    fn header(self, rng: &mut Rng) -> Vec<String> {
        let w = rng.word();
        match self {
            Lang::Py => vec![
                format!("\"\"\"{} helpers.\"\"\"", cap(w)),
                "from __future__ import annotations".into(),
                "import os".into(),
                String::new(),
            ],
            Lang::Js => vec![
                "'use strict';".into(),
                format!("const {{ {w} }} = require('./{w}');"),
                String::new(),
            ],
            Lang::Ts => vec![
                format!("import {{ {w}Client }} from \"../{w}/client\";"),
                String::new(),
            ],
            Lang::Go => vec![
                format!("package {w}"),
                String::new(),
                "import (".into(),
                "\t\"errors\"".into(),
                "\t\"fmt\"".into(),
                ")".into(),
                String::new(),
                "var _ = fmt.Sprintf".into(),
                "var _ = errors.New".into(),
                String::new(),
            ],
            Lang::Rs => vec![
                format!("//! The {w} module."),
                "use std::collections::HashMap;".into(),
                String::new(),
            ],
            Lang::Java => vec![
                format!("package com.acme.{w};"),
                String::new(),
                "import java.util.List;".into(),
                String::new(),
                format!("public class {}Service {{", cap(w)),
            ],
            Lang::Kt => vec![format!("package com.acme.{w}"), String::new()],
            Lang::Rb => vec!["# frozen_string_literal: true".into(), String::new()],
            Lang::Php => vec![
                "<?php".into(),
                String::new(),
                format!("namespace Acme\\{};", cap(w)),
                String::new(),
            ],
            Lang::Cs => vec![
                "using System;".into(),
                String::new(),
                format!("namespace Acme.{}", cap(w)),
                "{".into(),
                format!("    public class {}Options", cap(w)),
                "    {".into(),
            ],
            Lang::Yaml => vec![format!("# {w} settings"), format!("name: {w}")],
            Lang::Json => vec!["{".into(), format!("  \"name\": \"{w}\",")],
            Lang::Toml => vec![format!("# {w} configuration"), format!("name = \"{w}\"")],
            Lang::Sh => vec![
                "#!/usr/bin/env bash".into(),
                "set -euo pipefail".into(),
                String::new(),
            ],
            Lang::Docker => vec![
                format!("FROM debian:bookworm-slim AS {w}"),
                "WORKDIR /srv/app".into(),
            ],
            Lang::Tf => vec![format!("# {w} stack"), String::new()],
            Lang::Md => vec![format!("# {} guide", cap(w)), String::new()],
            Lang::Ipynb => vec![
                "{".into(),
                " \"cells\": [".into(),
                "  {".into(),
                "   \"cell_type\": \"code\",".into(),
                "   \"metadata\": {},".into(),
                "   \"source\": [".into(),
                "    \"import os\\n\",".into(),
            ],
            Lang::Props => vec![format!("# {w} properties"), format!("app.name={w}")],
            Lang::Xml => vec![
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>".into(),
                "<configuration>".into(),
                "  <appSettings>".into(),
            ],
        }
    }
    fn footer(self) -> Vec<String> {
        match self {
            Lang::Java => vec!["}".into()],
            Lang::Cs => vec!["    }".into(), "}".into()],
            Lang::Json => vec!["  \"_end\": true".into(), "}".into()],
            Lang::Ipynb => vec![
                "    \"print('done')\\n\"".into(),
                "   ]".into(),
                "  }".into(),
                " ],".into(),
                " \"metadata\": {},".into(),
                " \"nbformat\": 4,".into(),
                " \"nbformat_minor\": 5".into(),
                "}".into(),
            ],
            Lang::Xml => vec!["  </appSettings>".into(), "</configuration>".into()],
            _ => vec![],
        }
    }
    /// One body-level assignment of a string value, in this language's idiom.
    fn assign(self, name: &str, value: &str) -> String {
        match self {
            Lang::Py => format!("{} = \"{value}\"", upper(name)),
            Lang::Js => format!("const {} = \"{value}\";", camel(name)),
            Lang::Ts => format!("export const {}: string = \"{value}\";", camel(name)),
            Lang::Go => format!("const {} = \"{value}\"", pascal(name)),
            Lang::Rs => format!("pub const {}: &str = \"{value}\";", upper(name)),
            Lang::Java => format!(
                "    private static final String {} = \"{value}\";",
                upper(name)
            ),
            Lang::Kt => format!("val {} = \"{value}\"", camel(name)),
            Lang::Rb => format!("{} = '{value}'", upper(name)),
            Lang::Php => format!("${} = '{value}';", camel(name)),
            Lang::Cs => format!(
                "        public const string {} = \"{value}\";",
                pascal(name)
            ),
            Lang::Yaml => format!("{name}: \"{value}\""),
            Lang::Json => format!("  \"{}\": \"{value}\",", camel(name)),
            Lang::Toml => format!("{name} = \"{value}\""),
            Lang::Sh => format!("export {}=\"{value}\"", upper(name)),
            Lang::Docker => format!("ENV {}={value}", upper(name)),
            Lang::Tf => format!("  {name} = \"{value}\""),
            Lang::Md => format!("export {}=\"{value}\"", upper(name)),
            Lang::Ipynb => format!("    \"{} = '{value}'\\n\",", upper(name)),
            Lang::Props => format!("{}={value}", name.replace('_', ".")),
            Lang::Xml => format!(
                "    <add key=\"{}\" value=\"{}\" />",
                pascal(name),
                value.replace('<', "&lt;").replace('>', "&gt;")
            ),
        }
    }
    /// Wraps an assignment (or any body line) so the result is valid in context; the
    /// returned index is the line that holds it.
    fn wrap(self, line: String) -> Planted {
        match self {
            Lang::Md => Planted::at(vec!["```bash".into(), line, "```".into(), String::new()], 1),
            Lang::Tf => Planted::at(vec!["locals {".into(), line, "}".into(), String::new()], 1),
            _ => Planted::one(line),
        }
    }
    fn comment(self) -> &'static str {
        match self {
            Lang::Py
            | Lang::Rb
            | Lang::Yaml
            | Lang::Toml
            | Lang::Sh
            | Lang::Docker
            | Lang::Props => "#",
            Lang::Tf => "#",
            _ => "//",
        }
    }
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
fn upper(name: &str) -> String {
    name.to_uppercase()
}
fn pascal(name: &str) -> String {
    name.split('_').map(cap).collect()
}
fn camel(name: &str) -> String {
    let p = pascal(name);
    let mut c = p.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Background: ordinary code and config, with the usual high-entropy noise
// ---------------------------------------------------------------------------------------------

fn background_block(lang: Lang, rng: &mut Rng, n: usize) -> Vec<String> {
    let a = rng.word();
    let b = rng.word();
    let k1 = rng.range(2, 900);
    let k2 = rng.range(2, 90);
    let prose = *rng.pick(PROSE);
    let kind = rng.below(10);
    // Noise literals that real code carries: content hashes, ids, versions, URLs.
    let noise = match rng.below(6) {
        0 => (format!("{a}_checksum_{n}"), rng.string(HEX, 64)),
        1 => (format!("{a}_etag_{n}"), rng.string(HEX, 32)),
        2 => (format!("{a}_request_id_{n}"), uuid(rng)),
        3 => (
            format!("{a}_endpoint_{n}"),
            format!("https://{b}.internal.example.com/v{k2}/{a}"),
        ),
        4 => (
            format!("{a}_release_{n}"),
            format!("{k2}.{}.{}", k1 % 20, k1 % 7),
        ),
        _ => (format!("{a}_label_{n}"), format!("{a}-{b}-{k1}")),
    };
    if kind < 3 {
        return vec![lang.assign(&noise.0, &noise.1)];
    }
    let f = format!("{a}_{b}_{n}");
    match lang {
        Lang::Py => vec![
            format!("def {f}({a}, {b}=None):"),
            format!("    \"\"\"{prose}.\"\"\""),
            format!("    total = len({a}) * {k1}"),
            format!("    if {b} is not None and total > {k2}:"),
            format!("        return [{b}.get(item) for item in {a}]"),
            format!("    return {{\"{a}\": total, \"{b}\": {k2}}}"),
            String::new(),
        ],
        Lang::Js | Lang::Ts => vec![
            format!("// {prose}."),
            format!("export function {}({a}, {b}) {{", camel(&f)),
            format!("  const total = {a}.length * {k1};"),
            format!("  if ({b} && total > {k2}) {{"),
            format!("    return {a}.map((item) => {b}[item.id]);"),
            "  }".into(),
            format!("  return {{ {a}: total, {b}: {k2} }};"),
            "}".into(),
            String::new(),
        ],
        Lang::Go => vec![
            format!("// {} does the {a} step. {prose}.", pascal(&f)),
            format!("func {}({a} []int, {b} map[int]string) (string, error) {{", pascal(&f)),
            format!("\tif len({a}) > {k1} {{"),
            format!("\t\treturn \"\", fmt.Errorf(\"too many {a}: %d\", len({a}))"),
            "\t}".into(),
            format!("\treturn {b}[{a}[0]%{k2}], nil"),
            "}".into(),
            String::new(),
        ],
        Lang::Rs => vec![
            format!("/// {prose}."),
            format!("pub fn {f}({a}: &[u32], {b}: &HashMap<u32, String>) -> Option<String> {{"),
            format!("    let total = {a}.len() as u32 * {k1};"),
            format!("    if total > {k2} {{"),
            format!("        return {b}.get(&{a}[0]).cloned();"),
            "    }".into(),
            "    None".into(),
            "}".into(),
            String::new(),
        ],
        Lang::Java => vec![
            format!("    /** {prose}. */"),
            format!("    public int {}(List<Integer> {a}, int {b}) {{", camel(&f)),
            format!("        int total = {a}.size() * {k1};"),
            format!("        return total > {k2} ? {b} : total;"),
            "    }".into(),
            String::new(),
        ],
        Lang::Kt => vec![
            format!("/** {prose}. */"),
            format!("fun {}({a}: List<Int>, {b}: Int): Int {{", camel(&f)),
            format!("    val total = {a}.size * {k1}"),
            format!("    return if (total > {k2}) {b} else total"),
            "}".into(),
            String::new(),
        ],
        Lang::Rb => vec![
            format!("# {prose}."),
            format!("def {f}({a}, {b} = nil)"),
            format!("  total = {a}.size * {k1}"),
            format!("  return {b} if total > {k2}"),
            "  total".into(),
            "end".into(),
            String::new(),
        ],
        Lang::Php => vec![
            format!("// {prose}."),
            format!("function {}(array ${a}, ${b} = null) {{", camel(&f)),
            format!("    $total = count(${a}) * {k1};"),
            format!("    return $total > {k2} ? ${b} : $total;"),
            "}".into(),
            String::new(),
        ],
        Lang::Cs => vec![
            format!("        // {prose}."),
            format!("        public int {}(int[] {a}, int {b})", pascal(&f)),
            "        {".into(),
            format!("            var total = {a}.Length * {k1};"),
            format!("            return total > {k2} ? {b} : total;"),
            "        }".into(),
            String::new(),
        ],
        Lang::Yaml => vec![
            format!("{f}:"),
            format!("  replicas: {}", k2 % 9 + 1),
            format!("  image: registry.example.com/{a}/{b}:{k2}.{}", k1 % 10),
            format!("  # {prose}."),
            format!("  timeoutSeconds: {k1}"),
        ],
        Lang::Json => vec![
            format!("  \"{}\": {{ \"enabled\": true, \"limit\": {k1}, \"window\": \"{k2}s\" }},", camel(&f)),
            format!("  \"{}Note\": \"{prose}.\",", camel(&f)),
        ],
        Lang::Toml => vec![
            String::new(),
            format!("[{f}]"),
            format!("limit = {k1}"),
            format!("window = \"{k2}s\""),
            format!("# {prose}."),
        ],
        Lang::Sh => vec![
            format!("# {prose}."),
            format!("{f}() {{"),
            format!("  local count=\"${{1:-{k1}}}\""),
            format!("  echo \"{a}: processing ${{count}} items from {b}\""),
            format!("  find \"${{WORKDIR:-.}}/{a}\" -maxdepth {} -name '*.{b}' | head -n {k2}", k2 % 4 + 1),
            "}".into(),
            String::new(),
        ],
        Lang::Docker => vec![
            format!("# {prose}."),
            format!("RUN apt-get update && apt-get install -y --no-install-recommends {a}-tools && rm -rf /var/lib/apt/lists/*"),
            format!("COPY {a}/ /srv/app/{b}/"),
            format!("ENV {}_LIMIT={k1}", upper(a)),
        ],
        Lang::Tf => vec![
            format!("resource \"aws_s3_bucket\" \"{f}\" {{"),
            format!("  bucket = \"acme-{a}-{b}-{k1}\""),
            format!("  tags = {{ team = \"{a}\", tier = \"{k2}\" }}"),
            "}".into(),
            String::new(),
        ],
        Lang::Md => vec![
            format!("## {} and {}", cap(a), b),
            String::new(),
            format!("{prose}. The `{f}` step reads up to {k1} {a} records and writes"),
            format!("them to the {b} store in batches of {k2}."),
            String::new(),
        ],
        Lang::Ipynb => vec![
            format!("    \"# {prose}\\n\","),
            format!("    \"{a} = load('{b}', limit={k1})\\n\","),
            format!("    \"{a}.groupby('{b}').size().head({k2})\\n\","),
        ],
        Lang::Props => vec![
            format!("# {prose}."),
            format!("{a}.{b}.limit={k1}"),
            format!("{a}.{b}.window={k2}s"),
        ],
        Lang::Xml => vec![
            format!("    <!-- {prose}. -->"),
            format!("    <add key=\"{}Limit\" value=\"{k1}\" />", pascal(&f)),
        ],
    }
}

// ---------------------------------------------------------------------------------------------
// Fake secrets
// ---------------------------------------------------------------------------------------------

/// Secret kinds planted in source and config files (file-level kinds are added separately).
pub const SECRET_KINDS: &[&str] = &[
    "private-key-rsa",
    "private-key-rsa-encrypted",
    "private-key-pkcs8",
    "private-key-pkcs8-encrypted",
    "private-key-ec",
    "private-key-openssh",
    "private-key-pgp",
    "aws-access-key-id",
    "aws-secret-access-key",
    "github-pat-classic",
    "github-pat-fine-grained",
    "github-oauth",
    "github-app-user",
    "github-app-server",
    "github-refresh",
    "gitlab-pat",
    "gitlab-pipeline-trigger",
    "gitlab-runner",
    "slack-bot-token",
    "slack-user-token",
    "slack-webhook",
    "stripe-secret-live",
    "stripe-restricted-live",
    "google-api-key",
    "openai-key-legacy",
    "openai-key-project",
    "openai-key-svcacct",
    "anthropic-api-key",
    "anthropic-admin-key",
    "npm-token",
    "pypi-token",
    "dockerhub-pat",
    "jwt",
    "database-url",
    "generic-password",
    "generic-secret",
    "generic-token",
];

fn gh_checksummed(rng: &mut Rng, prefix: &str) -> String {
    let body = rng.string(B62, 30);
    let sum = base62(crc32(body.as_bytes()), 6);
    format!("{prefix}{body}{sum}")
}

fn digits(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let n = rng.range(lo, hi);
    let mut s = rng.string(b"123456789", 1);
    s.push_str(&rng.string(DIGITS, n - 1));
    s
}

fn password(rng: &mut Rng) -> String {
    // Always mix classes so the value is plainly random.
    let n = rng.range(16, 28);
    let mut s = rng.string(PASSWORD, n);
    s.push_str(&rng.string(DIGITS, 1));
    s.push_str(&rng.string(b"!%*+-_.?~", 1));
    s.push_str(&rng.string(UPPER, 1));
    s
}

/// A single-line secret value of `kind` and a variable name fitting it.
fn secret_value(kind: &str, rng: &mut Rng) -> (String, String) {
    let v = match kind {
        "aws-access-key-id" => format!(
            "{}{}",
            rng.pick(&["AKIA", "AKIA", "ASIA"]),
            rng.string(AWS_ID, 16)
        ),
        "aws-secret-access-key" => rng.string(B64, 40),
        "github-pat-classic" => gh_checksummed(rng, "ghp_"),
        "github-oauth" => gh_checksummed(rng, "gho_"),
        "github-app-user" => gh_checksummed(rng, "ghu_"),
        "github-app-server" => gh_checksummed(rng, "ghs_"),
        "github-refresh" => gh_checksummed(rng, "ghr_"),
        "github-pat-fine-grained" => format!(
            "github_pat_11{}_{}",
            rng.string(UPPER_DIGITS, 20),
            rng.string(B62, 59)
        ),
        "gitlab-pat" => format!("glpat-{}", rng.string(B64URL, 20)),
        "gitlab-pipeline-trigger" => format!("glptt-{}", rng.string(HEX, 40)),
        "gitlab-runner" => format!("glrt-{}", rng.string(B64URL, 20)),
        "slack-bot-token" => format!(
            "xoxb-{}-{}-{}",
            digits(rng, 10, 12),
            digits(rng, 12, 13),
            rng.string(B62, 24)
        ),
        "slack-user-token" => format!(
            "xoxp-{}-{}-{}-{}",
            digits(rng, 10, 12),
            digits(rng, 10, 12),
            digits(rng, 12, 13),
            rng.string(HEX, 32)
        ),
        "slack-webhook" => format!(
            "https://hooks.slack.com/services/T{}/B{}/{}",
            rng.string(UPPER_DIGITS, 8),
            rng.string(UPPER_DIGITS, 10),
            rng.string(B62, 24)
        ),
        "stripe-secret-live" => format!("sk_live_51{}", rng.string(B62, 97)),
        "stripe-restricted-live" => format!("rk_live_51{}", rng.string(B62, 97)),
        "google-api-key" => format!("AIza{}", rng.string(B64URL, 35)),
        "openai-key-legacy" => format!("sk-{}T3BlbkFJ{}", rng.string(B62, 20), rng.string(B62, 20)),
        "openai-key-project" => format!(
            "sk-proj-{}T3BlbkFJ{}",
            rng.string(B64URL, 74),
            rng.string(B64URL, 74)
        ),
        "openai-key-svcacct" => format!(
            "sk-svcacct-{}T3BlbkFJ{}",
            rng.string(B64URL, 58),
            rng.string(B64URL, 58)
        ),
        "anthropic-api-key" => format!("sk-ant-api03-{}AA", rng.string(B64URL, 93)),
        "anthropic-admin-key" => format!("sk-ant-admin01-{}AA", rng.string(B64URL, 93)),
        "npm-token" => gh_checksummed(rng, "npm_"),
        "pypi-token" => {
            let n = rng.range(120, 180);
            format!("pypi-AgEIcHlwaS5vcmc{}", rng.string(B64URL, n))
        }
        "dockerhub-pat" => format!("dckr_pat_{}", rng.string(B64URL, 27)),
        "jwt" => jwt(rng),
        "database-url" => database_url(rng),
        "generic-password" => password(rng),
        // API tokens and client secrets are usually URL-safe.
        _ => {
            let n = rng.range(28, 44);
            let mut v = rng.string(B64URL, n);
            v.push_str(&rng.string(DIGITS, 2));
            v
        }
    };
    let names: &[&str] = match kind {
        "aws-access-key-id" => &["aws_access_key_id", "aws_key_id", "s3_access_key"],
        "aws-secret-access-key" => &["aws_secret_access_key", "aws_secret_key"],
        k if k.starts_with("github") => &[
            "github_token",
            "gh_token",
            "github_api_token",
            "ci_github_token",
        ],
        k if k.starts_with("gitlab") => &["gitlab_token", "gitlab_api_token", "ci_registry_token"],
        "slack-webhook" => &["slack_webhook_url", "alerts_webhook", "notify_url"],
        k if k.starts_with("slack") => &["slack_token", "slack_bot_token", "slack_api_token"],
        k if k.starts_with("stripe") => &["stripe_secret_key", "stripe_api_key", "payments_key"],
        "google-api-key" => &["google_api_key", "maps_api_key", "firebase_api_key"],
        k if k.starts_with("openai") => &["openai_api_key", "llm_api_key", "openai_key"],
        k if k.starts_with("anthropic") => {
            &["anthropic_api_key", "claude_api_key", "anthropic_key"]
        }
        "npm-token" => &["npm_token", "npm_auth_token", "registry_token"],
        "pypi-token" => &["pypi_token", "twine_password", "pypi_api_token"],
        "dockerhub-pat" => &[
            "docker_hub_token",
            "dockerhub_password",
            "registry_password",
        ],
        "jwt" => &["auth_token", "bearer_token", "session_jwt", "access_token"],
        "database-url" => &["database_url", "db_url", "primary_dsn", "mongo_uri"],
        "generic-password" => &["password", "db_password", "admin_password", "smtp_password"],
        "generic-secret" => &[
            "client_secret",
            "app_secret",
            "secret_key",
            "signing_secret",
        ],
        _ => &["api_token", "auth_token", "service_api_key", "access_token"],
    };
    (rng.pick(names).to_string(), v)
}

fn jwt(rng: &mut Rng) -> String {
    let alg = *rng.pick(&["HS256", "RS256", "ES256"]);
    let header = format!("{{\"alg\":\"{alg}\",\"typ\":\"JWT\"}}");
    let payload = format!(
        "{{\"sub\":\"{}\",\"iss\":\"https://auth.{}.example.com\",\"iat\":{},\"exp\":{},\"scope\":\"{} {}\"}}",
        uuid(rng),
        rng.word(),
        1_700_000_000 + rng.below(50_000_000),
        1_760_000_000 + rng.below(50_000_000),
        rng.word(),
        rng.word()
    );
    let sig_len = match alg {
        "HS256" => 32,
        "ES256" => 64,
        _ => 256,
    };
    let sig = rng.bytes(sig_len);
    format!(
        "{}.{}.{}",
        b64url(header.as_bytes()),
        b64url(payload.as_bytes()),
        b64url(&sig)
    )
}

fn database_url(rng: &mut Rng) -> String {
    let user = format!(
        "{}_{}",
        rng.word(),
        rng.pick(&["svc", "app", "rw", "admin"])
    );
    let n = rng.range(14, 24);
    let pw = format!("{}{}", rng.string(B62, n), rng.string(DIGITS, 2));
    let host = format!("{}-db-{}.{}.internal", rng.word(), rng.below(9), rng.word());
    let db = rng.word();
    match rng.below(6) {
        0 => format!("postgres://{user}:{pw}@{host}:5432/{db}"),
        1 => format!("postgresql://{user}:{pw}@{host}:5432/{db}?sslmode=require"),
        2 => format!("mysql://{user}:{pw}@{host}:3306/{db}"),
        3 => format!(
            "mongodb+srv://{user}:{pw}@cluster0.{}.mongodb.net/{db}?retryWrites=true",
            rng.string(b"abcdefghijklmnopqrstuvwxyz0123456789", 5)
        ),
        4 => format!("redis://default:{pw}@{host}:6379/0"),
        _ => format!("amqp://{user}:{pw}@{host}:5672/{db}"),
    }
}

/// PEM-armoured private key lines (BEGIN … END) for a private-key kind.
fn private_key(kind: &str, rng: &mut Rng) -> Vec<String> {
    let (label, prefix, body_len, width) = match kind {
        "private-key-rsa" | "private-key-rsa-encrypted" => {
            ("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1190, 64)
        }
        "private-key-pkcs8" => (
            "PRIVATE KEY",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ",
            1210,
            64,
        ),
        "private-key-pkcs8-encrypted" => (
            "ENCRYPTED PRIVATE KEY",
            "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI",
            1230,
            64,
        ),
        "private-key-ec" => ("EC PRIVATE KEY", "MHcCAQEEI", 160, 64),
        "private-key-openssh" => (
            "OPENSSH PRIVATE KEY",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
            330,
            70,
        ),
        _ => ("PGP PRIVATE KEY BLOCK", "lQOYBF", 1100, 64),
    };
    let mut body = String::from(prefix);
    body.push_str(&rng.string(B64, body_len - prefix.len()));
    let mut lines = vec![format!("-----BEGIN {label}-----")];
    if kind == "private-key-rsa-encrypted" {
        lines.push("Proc-Type: 4,ENCRYPTED".into());
        lines.push(format!(
            "DEK-Info: AES-128-CBC,{}",
            rng.string(HEX, 32).to_uppercase()
        ));
        lines.push(String::new());
    }
    if kind == "private-key-pgp" {
        lines.push(String::new());
    }
    let bytes = body.as_bytes();
    for chunk in bytes.chunks(width) {
        lines.push(String::from_utf8_lossy(chunk).into_owned());
    }
    if kind == "private-key-pgp" {
        lines.push(format!("={}", rng.string(B64, 4)));
    }
    lines.push(format!("-----END {label}-----"));
    lines
}

/// Contexts a kind may be planted in; private keys need a multi-line-capable one.
fn secret_contexts(kind: &str) -> &'static [Lang] {
    if kind.starts_with("private-key") {
        return &[
            Lang::Py,
            Lang::Yaml,
            Lang::Rs,
            Lang::Md,
            Lang::Sh,
            Lang::Tf,
            Lang::Go,
            Lang::Js,
            Lang::Json,
            Lang::Ts,
        ];
    }
    LANGS
}

/// Renders a secret of `kind` in `lang`. Private keys span lines.
fn render_secret(kind: &str, lang: Lang, rng: &mut Rng) -> Planted {
    if kind.starts_with("private-key") {
        let pem = private_key(kind, rng);
        let n = pem.len();
        let name = *rng.pick(&["tls_key", "signing_key", "deploy_key", "private_key"]);
        let (open, close): (String, String) = match lang {
            Lang::Py => (format!("{} = \"\"\"", upper(name)), "\"\"\"".into()),
            Lang::Yaml => (format!("{name}: |"), String::new()),
            Lang::Rs => (
                format!("pub const {}: &str = r\"", upper(name)),
                "\";".into(),
            ),
            Lang::Md => ("```".into(), "```".into()),
            Lang::Sh => (
                format!("cat > \"${{HOME}}/.ssh/{name}\" <<'EOF'"),
                "EOF".into(),
            ),
            Lang::Tf => (format!("  {name} = <<-EOT"), "  EOT".into()),
            Lang::Go => (format!("const {} = `", pascal(name)), "`".into()),
            Lang::Js | Lang::Ts => (format!("export const {} = `", camel(name)), "`;".into()),
            _ => {
                // JSON: one line with escaped newlines, like a service-account file.
                let joined = pem.join("\\n");
                return Planted::one(format!("  \"{}\": \"{joined}\\n\",", camel(name)));
            }
        };
        let indent = if lang == Lang::Yaml { "  " } else { "" };
        let mut lines = vec![];
        if lang == Lang::Tf {
            lines.push("locals {".to_string());
        }
        lines.push(open);
        lines.extend(pem.into_iter().map(|l| format!("{indent}{l}")));
        if !close.is_empty() {
            lines.push(close);
        }
        if lang == Lang::Tf {
            lines.push("}".into());
        }
        let first = if lang == Lang::Tf { 2 } else { 1 };
        return Planted {
            lines,
            first,
            last: first + n - 1,
        };
    }
    let (name, v) = secret_value(kind, rng);
    let line = match (kind, lang) {
        // Headers and URLs read more naturally in some contexts.
        ("jwt", Lang::Sh) => {
            format!("curl -H \"Authorization: Bearer {v}\" https://api.example.com/v1/me")
        }
        ("database-url", Lang::Docker) => format!("ENV DATABASE_URL=\"{v}\""),
        _ => lang.assign(&name, &v),
    };
    lang.wrap(line)
}

// ---------------------------------------------------------------------------------------------
// Decoys
// ---------------------------------------------------------------------------------------------

pub const DECOY_KINDS: &[&str] = &[
    "aws-docs-example-id",
    "aws-docs-example-secret",
    "uuid",
    "git-sha",
    "sha256",
    "sha512",
    "base64-binary",
    "placeholder-changeme",
    "placeholder-env-ref",
    "placeholder-template",
    "placeholder-angle",
    "placeholder-xxx",
    "placeholder-redacted",
    "jwt-io-sample",
    "slack-example-webhook",
    "public-key",
    "ssh-public-key",
    "certificate",
    "stripe-publishable",
    "db-url-no-password",
    "db-url-placeholder",
];

fn aws_docs_id() -> String {
    ["AKIA", "IOSFODNN7", "EXAMPLE"].concat()
}
fn aws_docs_secret() -> String {
    ["wJalrXUtnFEMI", "/K7MDENG/", "bPxRfiCY", "EXAMPLEKEY"].concat()
}
fn jwt_io_sample() -> String {
    let header = b64url(b"{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
    let payload = b64url(b"{\"sub\":\"1234567890\",\"name\":\"John Doe\",\"iat\":1516239022}");
    let sig = ["SflKxwRJSMeKKF2QT4fw", "pMeJf36POk6yJV_adQssw5c"].concat();
    format!("{header}.{payload}.{sig}")
}
fn slack_example_webhook() -> String {
    format!(
        "https://hooks.slack.com/services/T{}/B{}/{}",
        "0".repeat(8),
        "0".repeat(8),
        "X".repeat(24)
    )
}

fn render_decoy(kind: &str, lang: Lang, rng: &mut Rng) -> Planted {
    let w = rng.word();
    let (name, value): (String, String) = match kind {
        "aws-docs-example-id" => ("aws_access_key_id".into(), aws_docs_id()),
        "aws-docs-example-secret" => ("aws_secret_access_key".into(), aws_docs_secret()),
        "uuid" => (
            rng.pick(&[
                "tenant_id",
                "client_id",
                "trace_id",
                "auth_request_id",
                "correlation_id",
                "installation_id",
            ])
            .to_string(),
            uuid(rng),
        ),
        "git-sha" => (
            rng.pick(&["commit", "base_revision", "pinned_sha", "upstream_ref"])
                .to_string(),
            rng.string(HEX, 40),
        ),
        "sha256" => {
            let v = match rng.below(3) {
                0 => format!("sha256:{}", rng.string(HEX, 64)),
                1 => format!("registry.example.com/{w}@sha256:{}", rng.string(HEX, 64)),
                _ => rng.string(HEX, 64),
            };
            (
                rng.pick(&[
                    "checksum",
                    "artifact_sha256",
                    "image_digest",
                    "content_hash",
                ])
                .to_string(),
                v,
            )
        }
        "sha512" => (
            rng.pick(&["sha512", "archive_checksum", "release_digest"])
                .to_string(),
            rng.string(HEX, 128),
        ),
        "base64-binary" => {
            let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
            let n = rng.range(90, 600);
            png.extend(rng.bytes(n));
            let v = if rng.chance(50) {
                format!("data:image/png;base64,{}", b64(&png))
            } else {
                b64(&png)
            };
            (
                rng.pick(&["icon", "logo_png", "thumbnail", "font_blob"])
                    .to_string(),
                v,
            )
        }
        "placeholder-changeme" => (
            rng.pick(&["password", "db_password", "admin_password"])
                .to_string(),
            rng.pick(&[
                "changeme", "password", "secret", "hunter2", "admin", "test1234", "example",
            ])
            .to_string(),
        ),
        "placeholder-env-ref" => (
            rng.pick(&["password", "api_token", "client_secret", "github_token"])
                .to_string(),
            rng.pick(&[
                "${DB_PASSWORD}",
                "${API_TOKEN}",
                "$(cat /run/secrets/token)",
                "${{ secrets.GITHUB_TOKEN }}",
                "%(SECRET_KEY)s",
            ])
            .to_string(),
        ),
        "placeholder-template" => (
            rng.pick(&["password", "api_key", "client_secret"])
                .to_string(),
            rng.pick(&[
                "{{ .Values.password }}",
                "{{ vault_api_key }}",
                "{{secret}}",
                "#{CLIENT_SECRET}#",
            ])
            .to_string(),
        ),
        "placeholder-angle" => (
            rng.pick(&["api_token", "openai_api_key", "github_token", "password"])
                .to_string(),
            rng.pick(&[
                "<your-token-here>",
                "<YOUR_API_KEY>",
                "<password>",
                "[insert token]",
                "your-api-key-here",
            ])
            .to_string(),
        ),
        "placeholder-xxx" => {
            let v = match rng.below(4) {
                0 => "x".repeat(rng.range(8, 40)),
                1 => format!("ghp_{}", "x".repeat(36)),
                2 => format!("sk-{}", "X".repeat(48)),
                _ => format!("AKIA{}", "X".repeat(16)),
            };
            (
                rng.pick(&[
                    "api_token",
                    "github_token",
                    "openai_api_key",
                    "aws_access_key_id",
                ])
                .to_string(),
                v,
            )
        }
        "placeholder-redacted" => (
            rng.pick(&["password", "api_token", "stripe_secret_key"])
                .to_string(),
            rng.pick(&[
                "********",
                "[REDACTED]",
                "sk_live_****************",
                "<redacted>",
                "***",
            ])
            .to_string(),
        ),
        "jwt-io-sample" => ("example_jwt".into(), jwt_io_sample()),
        "slack-example-webhook" => ("slack_webhook_url".into(), slack_example_webhook()),
        "stripe-publishable" => (
            "stripe_publishable_key".into(),
            format!("pk_live_51{}", rng.string(B62, 97)),
        ),
        "db-url-no-password" => (
            "database_url".into(),
            format!("postgres://{w}@localhost:5432/{w}_dev"),
        ),
        "db-url-placeholder" => (
            "database_url".into(),
            rng.pick(&[
                "postgres://USER:PASSWORD@HOST:5432/DB",
                "postgres://user:${DB_PASSWORD}@db:5432/app",
                "mysql://root:<password>@localhost:3306/app",
                "postgres://user:password@localhost:5432/test",
            ])
            .to_string(),
        ),
        "ssh-public-key" => (
            "deploy_public_key".into(),
            format!(
                "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} deploy@{w}",
                rng.string(B64, 43)
            ),
        ),
        "public-key" | "certificate" => {
            let label = if kind == "public-key" {
                "PUBLIC KEY"
            } else {
                "CERTIFICATE"
            };
            let mut lines = vec![format!("-----BEGIN {label}-----")];
            let body = rng.string(B64, if kind == "public-key" { 392 } else { 1100 });
            for c in body.as_bytes().chunks(64) {
                lines.push(String::from_utf8_lossy(c).into_owned());
            }
            lines.push(format!("-----END {label}-----"));
            let n = lines.len();
            let mut out = match lang {
                Lang::Py => vec![format!(
                    "{} = \"\"\"",
                    upper(&format!(
                        "{w}_{}",
                        if kind == "public-key" {
                            "public_key"
                        } else {
                            "ca_cert"
                        }
                    ))
                )],
                _ => vec!["```".into()],
            };
            out.extend(lines);
            out.push(if lang == Lang::Py {
                "\"\"\"".into()
            } else {
                "```".into()
            });
            return Planted {
                lines: out,
                first: 1,
                last: n,
            };
        }
        _ => ("value".into(), w.to_string()),
    };
    lang.wrap(lang.assign(&name, &value))
}

fn decoy_contexts(kind: &str) -> &'static [Lang] {
    match kind {
        "public-key" | "certificate" => &[Lang::Py, Lang::Md],
        _ => LANGS,
    }
}

// ---------------------------------------------------------------------------------------------
// Lazy stubs and their decoys
// ---------------------------------------------------------------------------------------------

pub const STUB_KINDS: &[&str] = &[
    "todo-macro",
    "unimplemented-macro",
    "not-implemented-error",
    "pass-todo",
    "throw-not-implemented",
    "rest-of-code",
    "todo-implement",
    "panic-not-implemented",
    "kotlin-todo",
    "unsupported-operation",
    "cs-not-implemented",
    "implementation-goes-here",
];

fn stub_contexts(kind: &str) -> &'static [Lang] {
    match kind {
        "todo-macro" | "unimplemented-macro" => &[Lang::Rs],
        // Ruby raises NotImplementedError for abstract methods too: Python only.
        "not-implemented-error" => &[Lang::Py],
        "pass-todo" => &[Lang::Py],
        "throw-not-implemented" => &[Lang::Js, Lang::Ts, Lang::Php],
        "rest-of-code" => &[Lang::Js, Lang::Ts, Lang::Java, Lang::Go, Lang::Py, Lang::Cs],
        "todo-implement" => CODE,
        "panic-not-implemented" => &[Lang::Go],
        "kotlin-todo" => &[Lang::Kt],
        "unsupported-operation" => &[Lang::Java],
        "cs-not-implemented" => &[Lang::Cs],
        _ => CODE,
    }
}

/// A function whose body is (or holds) the stub; the label is on the stub line.
fn render_stub(kind: &str, lang: Lang, rng: &mut Rng) -> Planted {
    let f = format!("{}_{}_{}", rng.word(), rng.word(), rng.below(1000));
    let c = lang.comment();
    let stmt: String = match kind {
        "todo-macro" => {
            if rng.chance(50) {
                "todo!()".into()
            } else {
                format!("todo!(\"{} support\")", rng.word())
            }
        }
        "unimplemented-macro" => "unimplemented!()".into(),
        "not-implemented-error" => {
            if rng.chance(50) {
                "raise NotImplementedError".into()
            } else {
                "raise NotImplementedError(\"later\")".into()
            }
        }
        "pass-todo" => "pass  # TODO".into(),
        "throw-not-implemented" => match lang {
            Lang::Php => "throw new \\Exception('Not implemented');".into(),
            _ => "throw new Error(\"Not implemented\");".into(),
        },
        "rest-of-code" => format!("{c} ... rest of code ..."),
        "todo-implement" => format!("{c} TODO: implement"),
        "panic-not-implemented" => "panic(\"not implemented\")".into(),
        "kotlin-todo" => "TODO(\"Not yet implemented\")".into(),
        "unsupported-operation" => {
            "throw new UnsupportedOperationException(\"Not implemented yet\");".into()
        }
        "cs-not-implemented" => "throw new NotImplementedException();".into(),
        _ => format!("{c} implementation goes here"),
    };
    let lines: Vec<String> = match lang {
        Lang::Py => vec![
            format!("def {f}(payload):"),
            format!("    \"\"\"Handle {f}.\"\"\""),
            format!("    {stmt}"),
            String::new(),
        ],
        Lang::Rb => vec![
            format!("def {f}(payload)"),
            format!("  {stmt}"),
            "end".into(),
            String::new(),
        ],
        Lang::Rs => vec![
            format!("pub fn {f}(input: &str) -> usize {{"),
            format!("    {stmt}"),
            "}".into(),
            String::new(),
        ],
        Lang::Go => vec![
            format!("func {}(input string) (int, error) {{", pascal(&f)),
            format!("\t{stmt}"),
            "}".into(),
            String::new(),
        ],
        Lang::Js | Lang::Ts | Lang::Php => {
            let sig = if lang == Lang::Php {
                format!("function {}($input) {{", camel(&f))
            } else {
                format!("export function {}(input) {{", camel(&f))
            };
            vec![sig, format!("  {stmt}"), "}".into(), String::new()]
        }
        Lang::Java => vec![
            format!("    public int {}(String input) {{", camel(&f)),
            format!("        {stmt}"),
            "    }".into(),
            String::new(),
        ],
        Lang::Cs => vec![
            format!("        public int {}(string input)", pascal(&f)),
            "        {".into(),
            format!("            {stmt}"),
            "        }".into(),
            String::new(),
        ],
        Lang::Kt => vec![
            format!("fun {}(input: String): Int {{", camel(&f)),
            format!("    {stmt}"),
            "}".into(),
            String::new(),
        ],
        _ => vec![stmt.clone()],
    };
    let at = lines.iter().position(|l| l.trim() == stmt).unwrap_or(0);
    Planted::at(lines, at)
}

pub const STUB_DECOY_KINDS: &[&str] = &[
    "abstractmethod",
    "abc-abstractmethod",
    "todo-in-string",
    "todo-identifier",
    "not-implemented-singleton",
    "todo-in-prose",
];

fn stub_decoy_contexts(kind: &str) -> &'static [Lang] {
    match kind {
        "abstractmethod" | "abc-abstractmethod" | "not-implemented-singleton" => &[Lang::Py],
        "todo-in-string" => &[Lang::Rs],
        "todo-identifier" => &[Lang::Ts, Lang::Js, Lang::Java, Lang::Kt],
        _ => &[Lang::Md],
    }
}

fn render_stub_decoy(kind: &str, lang: Lang, rng: &mut Rng) -> Planted {
    let w = rng.word();
    let n = rng.below(1000);
    match kind {
        "abstractmethod" | "abc-abstractmethod" => {
            let deco = if kind == "abstractmethod" {
                "@abstractmethod"
            } else {
                "@abc.abstractmethod"
            };
            // The decoy is the whole abstract method: decorator, docstring and body.
            Planted {
                lines: vec![
                    format!("class {}Base{n}(ABC):", cap(w)),
                    format!("    {deco}"),
                    format!("    def {w}(self, item):"),
                    "        \"\"\"Subclasses implement this.\"\"\"".into(),
                    "        raise NotImplementedError".into(),
                    String::new(),
                ],
                first: 1,
                last: 4,
            }
        }
        "not-implemented-singleton" => Planted::at(
            vec![
                "    def __eq__(self, other):".into(),
                format!("        if not isinstance(other, {}):", cap(w)),
                "            return NotImplemented".into(),
                "        return self.key == other.key".into(),
                String::new(),
            ],
            2,
        ),
        "todo-in-string" => Planted::at(
            vec![
                format!("fn lint_flags_todo_{n}() {{"),
                "    let src = \"fn main() { todo!() }\";".into(),
                "    assert!(lint(src).iter().any(|f| f.rule == \"todo-macro\"));".into(),
                "}".into(),
                String::new(),
            ],
            1,
        ),
        "todo-identifier" => {
            let line = match lang {
                Lang::Java => format!("    private final List<TodoItem> todoItems{n} = List.of();"),
                Lang::Kt => format!("val todoItems{n} = mutableListOf<TodoItem>()"),
                _ => format!("export const todoList{n}: TodoItem[] = [];"),
            };
            Planted::one(line)
        }
        _ => Planted::at(
            vec![
                format!(
                    "The TODO list app keeps each {w} as a TodoItem; marking a todo done moves it"
                ),
                "to the archive. Nothing is left to implement here: it is a feature name.".into(),
                String::new(),
            ],
            0,
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// File-level items: blocked files and their decoys
// ---------------------------------------------------------------------------------------------

fn env_file(corpus: &mut Corpus, rng: &mut Rng, path: String) {
    let mut d = Doc::new(path);
    d.file_label(Class::BlockedFile, "env-file", "env-file");
    d.push(format!("APP_NAME={}", rng.word()));
    d.push("LOG_LEVEL=info".to_string());
    d.push(format!("PORT={}", rng.range(3000, 9000)));
    for _ in 0..rng.range(1, 3) {
        let kind = *rng.pick(&[
            "database-url",
            "stripe-secret-live",
            "openai-key-project",
            "anthropic-api-key",
            "generic-password",
            "github-pat-classic",
            "slack-bot-token",
        ]);
        let (name, v) = secret_value(kind, rng);
        d.plant(
            Planted::one(format!("{}={v}", upper(&name))),
            Class::Secret,
            kind,
            "env-file",
        );
        d.push(format!("FEATURE_{}=true", upper(rng.word())));
    }
    corpus.add_text(d);
}

fn env_example(corpus: &mut Corpus, rng: &mut Rng, path: String, kind: &str) {
    let mut d = Doc::new(path);
    d.file_label(Class::Decoy, kind, "env-file");
    d.push(format!("APP_NAME={}", rng.word()));
    d.push("DATABASE_URL=postgres://USER:PASSWORD@localhost:5432/app".to_string());
    d.push("STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx".to_string());
    d.push("OPENAI_API_KEY=<your-openai-key>".to_string());
    d.push("GITHUB_TOKEN=".to_string());
    d.push("PASSWORD=changeme".to_string());
    corpus.add_text(d);
}

fn key_file(corpus: &mut Corpus, rng: &mut Rng, path: String, kind: &str) {
    let mut d = Doc::new(path);
    d.file_label(Class::BlockedFile, "private-key-file", "key-file");
    let pem = private_key(kind, rng);
    d.plant(Planted::all(pem), Class::Secret, kind, "key-file");
    corpus.add_text(d);
}

fn keystore(corpus: &mut Corpus, rng: &mut Rng, path: String) {
    let mut data = if path.ends_with(".jks") || path.ends_with(".keystore") {
        vec![0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]
    } else {
        vec![0x30, 0x82, 0x0A, 0x51, 0x02, 0x01, 0x03, 0x30]
    };
    let n = rng.range(1500, 4000);
    data.extend(rng.bytes(n));
    corpus.labels.push(Label {
        path: path.clone(),
        first: 0,
        last: 0,
        class: Class::BlockedFile,
        kind: "keystore".into(),
        context: "binary".into(),
    });
    corpus.files.push(File { path, data });
}

fn credential_files(corpus: &mut Corpus, rng: &mut Rng, n: usize) {
    let dir = format!("ops/{}-{n}", rng.word());
    // ~/.aws/credentials, committed by mistake.
    let mut d = Doc::new(format!("{dir}/.aws/credentials"));
    d.file_label(Class::BlockedFile, "aws-credentials", "credential-file");
    d.push("[default]");
    let (_, id) = secret_value("aws-access-key-id", rng);
    d.plant(
        Planted::one(format!("aws_access_key_id = {id}")),
        Class::Secret,
        "aws-access-key-id",
        "credential-file",
    );
    let (_, key) = secret_value("aws-secret-access-key", rng);
    d.plant(
        Planted::one(format!("aws_secret_access_key = {key}")),
        Class::Secret,
        "aws-secret-access-key",
        "credential-file",
    );
    d.push("region = eu-west-1");
    corpus.add_text(d);

    let mut d = Doc::new(format!("{dir}/.git-credentials"));
    d.file_label(Class::BlockedFile, "git-credentials", "credential-file");
    let (_, tok) = secret_value("github-pat-classic", rng);
    d.plant(
        Planted::one(format!("https://{}:{tok}@github.com", rng.word())),
        Class::Secret,
        "github-pat-classic",
        "credential-file",
    );
    corpus.add_text(d);

    let mut d = Doc::new(format!("{dir}/.netrc"));
    d.file_label(Class::BlockedFile, "netrc", "credential-file");
    d.push(format!("machine api.{}.example.com", rng.word()));
    d.push(format!("  login {}", rng.word()));
    d.plant(
        Planted::one(format!("  password {}", password(rng))),
        Class::Secret,
        "generic-password",
        "credential-file",
    );
    corpus.add_text(d);

    let mut d = Doc::new(format!("{dir}/.pgpass"));
    d.file_label(Class::BlockedFile, "pgpass", "credential-file");
    d.plant(
        Planted::one(format!(
            "db.{}.internal:5432:{}:app:{}",
            rng.word(),
            rng.word(),
            password(rng)
        )),
        Class::Secret,
        "generic-password",
        "credential-file",
    );
    corpus.add_text(d);

    // A GCP service-account key file.
    let mut d = Doc::new(format!("{dir}/gcp/credentials.json"));
    d.file_label(
        Class::BlockedFile,
        "service-account-json",
        "credential-file",
    );
    let proj = format!("{}-{}", rng.word(), rng.range(100_000, 999_999));
    d.push("{");
    d.push("  \"type\": \"service_account\",");
    d.push(format!("  \"project_id\": \"{proj}\","));
    d.push(format!(
        "  \"private_key_id\": \"{}\",",
        rng.string(HEX, 40)
    ));
    let pem = private_key("private-key-pkcs8", rng).join("\\n");
    d.plant(
        Planted::one(format!("  \"private_key\": \"{pem}\\n\",")),
        Class::Secret,
        "private-key-pkcs8",
        "credential-file",
    );
    d.push(format!(
        "  \"client_email\": \"deployer@{proj}.iam.gserviceaccount.com\","
    ));
    d.push(format!("  \"client_id\": \"{}\",", rng.string(DIGITS, 21)));
    d.push("  \"token_uri\": \"https://oauth2.googleapis.com/token\"");
    d.push("}");
    corpus.add_text(d);

    // .npmrc and .pypirc: blocked only when they hold a token.
    let mut d = Doc::new(format!("{dir}/.npmrc"));
    d.file_label(Class::BlockedFile, "npmrc-token", "credential-file");
    d.push("registry=https://registry.npmjs.org/");
    let (_, tok) = secret_value("npm-token", rng);
    d.plant(
        Planted::one(format!("//registry.npmjs.org/:_authToken={tok}")),
        Class::Secret,
        "npm-token",
        "credential-file",
    );
    corpus.add_text(d);
    let mut d = Doc::new(format!("{dir}/.pypirc"));
    d.file_label(Class::BlockedFile, "pypirc-token", "credential-file");
    d.push("[pypi]");
    d.push("username = __token__");
    let (_, tok) = secret_value("pypi-token", rng);
    d.plant(
        Planted::one(format!("password = {tok}")),
        Class::Secret,
        "pypi-token",
        "credential-file",
    );
    corpus.add_text(d);
}

/// Files that look like blocked ones but are not: `.env` templates, an `.npmrc`/`.pypirc`
/// without a token, a public key and a certificate.
fn decoy_files(corpus: &mut Corpus, rng: &mut Rng, n: usize) {
    let dir = format!("ops/{}-decoy-{n}", rng.word());
    for (e, k) in [
        (".env.example", "env-example"),
        (".env.sample", "env-sample"),
        (".env.template", "env-template"),
    ] {
        let path = if n == 0 {
            e.to_string()
        } else {
            format!("{dir}/{e}")
        };
        env_example(corpus, rng, path, k);
    }
    let mut d = Doc::new(format!("web/{}-{n}/.npmrc", rng.word()));
    d.file_label(Class::Decoy, "npmrc-no-token", "credential-file");
    d.push("registry=https://registry.npmjs.org/");
    d.push("save-exact=true");
    d.push("//registry.npmjs.org/:_authToken=${NPM_TOKEN}");
    corpus.add_text(d);

    let mut d = Doc::new(format!("python/{}-{n}/.pypirc", rng.word()));
    d.file_label(Class::Decoy, "pypirc-no-token", "credential-file");
    d.push("[distutils]");
    d.push("index-servers =");
    d.push("    pypi");
    d.push("[pypi]");
    d.push("repository = https://upload.pypi.org/legacy/");
    d.push("username = __token__");
    corpus.add_text(d);

    // Public halves and certificates: not blocked.
    let mut d = Doc::new(format!("{dir}/keys/id_rsa.pub"));
    d.file_label(Class::Decoy, "ssh-public-key-file", "key-file");
    d.push(format!(
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{} ops@{}",
        rng.string(B64, 340),
        rng.word()
    ));
    corpus.add_text(d);
    let mut d = Doc::new(format!("{dir}/certs/ca-{n}.pem"));
    d.file_label(Class::Decoy, "certificate-pem", "key-file");
    d.push("-----BEGIN CERTIFICATE-----");
    for c in rng.string(B64, 1100).as_bytes().chunks(64) {
        d.push(String::from_utf8_lossy(c).into_owned());
    }
    d.push("-----END CERTIFICATE-----");
    corpus.add_text(d);
}

// ---------------------------------------------------------------------------------------------
// Lockfiles, bundles, data and binaries (background noise that trips naive scanners)
// ---------------------------------------------------------------------------------------------

fn package_lock(rng: &mut Rng, path: String, entries: usize) -> Doc {
    let mut d = Doc::new(path);
    d.push("{");
    d.push(format!("  \"name\": \"{}\",", rng.word()));
    d.push("  \"lockfileVersion\": 3,");
    d.push("  \"packages\": {");
    for i in 0..entries {
        let name = format!("{}-{}", rng.word(), rng.word());
        d.push(format!("    \"node_modules/{name}\": {{"));
        d.push(format!(
            "      \"version\": \"{}.{}.{}\",",
            rng.below(9),
            rng.below(20),
            rng.below(30)
        ));
        d.push(format!(
            "      \"resolved\": \"https://registry.npmjs.org/{name}/-/{name}-1.0.{i}.tgz\","
        ));
        let integrity = format!("      \"integrity\": \"sha512-{}\",", b64(&rng.bytes(64)));
        if i % 50 == 0 {
            d.plant(
                Planted::one(integrity),
                Class::Decoy,
                "lockfile-integrity",
                "package-lock",
            );
        } else {
            d.push(integrity);
        }
        d.push("      \"dev\": true".to_string());
        d.push(if i + 1 == entries {
            "    }".into()
        } else {
            "    },".to_string()
        });
    }
    d.push("  }");
    d.push("}");
    d
}

fn cargo_lock(rng: &mut Rng, path: String, entries: usize) -> Doc {
    let mut d = Doc::new(path);
    d.push("# This file is automatically @generated by Cargo.");
    d.push("version = 4");
    for i in 0..entries {
        d.push(String::new());
        d.push("[[package]]");
        d.push(format!("name = \"{}-{}\"", rng.word(), rng.word()));
        d.push(format!(
            "version = \"0.{}.{}\"",
            rng.below(30),
            rng.below(20)
        ));
        d.push("source = \"registry+https://github.com/rust-lang/crates.io-index\"");
        let line = format!("checksum = \"{}\"", rng.string(HEX, 64));
        if i % 40 == 0 {
            d.plant(
                Planted::one(line),
                Class::Decoy,
                "cargo-lock-checksum",
                "cargo-lock",
            );
        } else {
            d.push(line);
        }
    }
    d
}

fn go_sum(rng: &mut Rng, path: String, entries: usize) -> Doc {
    let mut d = Doc::new(path);
    for i in 0..entries {
        let m = format!("github.com/{}/{}", rng.word(), rng.word());
        let v = format!("v{}.{}.{}", rng.below(3), rng.below(20), rng.below(20));
        let line = format!("{m} {v} h1:{}", b64(&rng.bytes(32)));
        if i % 40 == 0 {
            d.plant(Planted::one(line), Class::Decoy, "go-sum", "go-sum");
        } else {
            d.push(line);
        }
        d.push(format!("{m} {v}/go.mod h1:{}", b64(&rng.bytes(32))));
    }
    d
}

/// One long line of minified JavaScript.
fn minified_bundle(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let mut s = String::with_capacity(bytes + 200);
    s.push_str("!function(e){\"use strict\";");
    while s.len() < bytes {
        let a = rng.string(b"abcdefghijklmnopqrstuvwxyz", 1);
        let b = rng.string(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 2);
        match rng.below(5) {
            0 => {
                let _ = write!(
                    s,
                    "var {a}{b}=function({a}){{return {a}&&{a}.__esModule?{a}.default:{a}}};"
                );
            }
            1 => {
                let n = rng.range(6, 30);
                let _ = write!(s, "e.{b}=\"{}\";", rng.string(B62, n));
            }
            2 => {
                let _ = write!(
                    s,
                    "function {b}({a},t){{for(var n=0;n<t.length;n++){a}[n]=t[n]^{};return {a}}}",
                    rng.below(255)
                );
            }
            3 => {
                let _ = write!(
                    s,
                    "{a}.prototype.{b}=function(){{return this.{}({})}};",
                    rng.word(),
                    rng.below(999)
                );
            }
            _ => {
                let _ = write!(
                    s,
                    "\"{}\":[{},{},{}],",
                    rng.word(),
                    rng.below(99),
                    rng.below(999),
                    rng.below(9)
                );
            }
        }
    }
    s.push_str("}(window);\n");
    s.into_bytes()
}

fn csv_data(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let mut s = String::with_capacity(bytes + 200);
    s.push_str("id,created_at,region,amount,status,owner\n");
    let mut i = 0;
    while s.len() < bytes {
        i += 1;
        let _ = writeln!(
            s,
            "{i},2025-{:02}-{:02}T{:02}:{:02}:00Z,{}-{},{}.{:02},{},{}",
            rng.range(1, 12),
            rng.range(1, 28),
            rng.below(24),
            rng.below(60),
            rng.word(),
            rng.below(9),
            rng.below(100_000),
            rng.below(100),
            rng.pick(&["paid", "open", "void", "refunded"]),
            rng.word()
        );
    }
    s.into_bytes()
}

fn binary_blob(rng: &mut Rng, ext: &str, bytes: usize) -> Vec<u8> {
    let mut data: Vec<u8> = match ext {
        "png" => vec![
            0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D,
        ],
        "jpg" => vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, b'J', b'F', b'I', b'F', 0],
        "woff2" => b"wOF2\x00\x01\x00\x00".to_vec(),
        _ => b"PK\x03\x04\x14\x00\x00\x00".to_vec(),
    };
    data.extend(rng.bytes(bytes));
    data
}

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

/// How big and how dense the corpus is.
#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    /// Planted secrets per kind in [`SECRET_KINDS`].
    pub secrets_per_kind: usize,
    /// Decoys per kind in [`DECOY_KINDS`].
    pub decoys_per_kind: usize,
    /// Stubs per kind in [`STUB_KINDS`].
    pub stubs_per_kind: usize,
    /// Sets of blocked files (.env variants, key files, keystores, credential files).
    pub blocked_sets: usize,
    /// Stub decoys per kind in [`STUB_DECOY_KINDS`].
    pub stub_decoys_per_kind: usize,
    /// Sets of decoy files (.env.example and kin, token-less .npmrc/.pypirc, public keys).
    pub decoy_file_sets: usize,
    /// Ordinary source/config files.
    pub background_files: usize,
    /// Approximate bytes of ordinary source/config (spread over `background_files`).
    pub background_bytes: usize,
    /// Lockfiles (package-lock.json, Cargo.lock, go.sum), one of each per set.
    pub lockfile_sets: usize,
    /// Minified bundles, CSV data files and binaries, with their total size.
    pub bulk_files: usize,
    pub bulk_bytes: usize,
}

impl Options {
    /// A few hundred files, about 1.5 MB: fast enough for the e2e test in a debug build.
    pub fn small(seed: u64) -> Options {
        Options {
            seed,
            secrets_per_kind: 3,
            decoys_per_kind: 3,
            stubs_per_kind: 3,
            blocked_sets: 1,
            stub_decoys_per_kind: 3,
            decoy_file_sets: 1,
            background_files: 240,
            background_bytes: 1_000_000,
            lockfile_sets: 1,
            bulk_files: 0,
            bulk_bytes: 0,
        }
    }
    /// About 1,500 files and 20 MB: the accuracy comparison across scanners.
    pub fn medium(seed: u64) -> Options {
        Options {
            seed,
            secrets_per_kind: 12,
            decoys_per_kind: 10,
            stubs_per_kind: 8,
            blocked_sets: 3,
            stub_decoys_per_kind: 8,
            decoy_file_sets: 3,
            background_files: 1400,
            background_bytes: 16_000_000,
            lockfile_sets: 3,
            bulk_files: 6,
            bulk_bytes: 2_000_000,
        }
    }
    /// Thousands of files, ≥ 100 MB: the speed bench.
    pub fn large(seed: u64) -> Options {
        Options {
            seed,
            secrets_per_kind: 10,
            decoys_per_kind: 8,
            stubs_per_kind: 6,
            blocked_sets: 4,
            stub_decoys_per_kind: 6,
            decoy_file_sets: 4,
            background_files: 6000,
            background_bytes: 80_000_000,
            lockfile_sets: 8,
            bulk_files: 80,
            bulk_bytes: 30_000_000,
        }
    }
}

/// One item to plant in an ordinary file.
struct Item {
    class: Class,
    kind: &'static str,
    lang: Lang,
}

pub fn generate(opts: &Options) -> Corpus {
    let mut rng = Rng::new(opts.seed);
    let mut corpus = Corpus::default();

    // Plan the items and the languages they go to.
    let mut items: Vec<Item> = Vec::new();
    for &kind in SECRET_KINDS {
        for i in 0..opts.secrets_per_kind {
            let ctx = secret_contexts(kind);
            // Round-robin from a random start, so every kind lands in many file types.
            let lang = ctx[(i + rng.below(ctx.len())) % ctx.len()];
            items.push(Item {
                class: Class::Secret,
                kind,
                lang,
            });
        }
    }
    for &kind in DECOY_KINDS {
        for i in 0..opts.decoys_per_kind {
            let ctx = decoy_contexts(kind);
            let lang = ctx[(i + rng.below(ctx.len())) % ctx.len()];
            items.push(Item {
                class: Class::Decoy,
                kind,
                lang,
            });
        }
    }
    for &kind in STUB_KINDS {
        for i in 0..opts.stubs_per_kind {
            let ctx = stub_contexts(kind);
            let lang = ctx[(i + rng.below(ctx.len())) % ctx.len()];
            items.push(Item {
                class: Class::Stub,
                kind,
                lang,
            });
        }
    }
    for &kind in STUB_DECOY_KINDS {
        for i in 0..opts.stub_decoys_per_kind {
            let ctx = stub_decoy_contexts(kind);
            let lang = ctx[(i + rng.below(ctx.len())) % ctx.len()];
            items.push(Item {
                class: Class::StubDecoy,
                kind,
                lang,
            });
        }
    }

    // Ordinary files: each language gets a share; items go to a random file of their language.
    let per_lang = (opts.background_files / LANGS.len()).max(1);
    let mut plan: Vec<(Lang, Vec<usize>)> = Vec::new();
    for &lang in LANGS {
        for _ in 0..per_lang {
            plan.push((lang, Vec::new()));
        }
    }
    for (i, item) in items.iter().enumerate() {
        let candidates: Vec<usize> = (0..plan.len())
            .filter(|&f| plan[f].0 == item.lang)
            .collect();
        let f = candidates[rng.below(candidates.len())];
        plan[f].1.push(i);
    }
    let avg = opts.background_bytes / plan.len().max(1);
    for (n, (lang, planted)) in plan.into_iter().enumerate() {
        let path = lang.path(&mut rng, n);
        let mut d = Doc::new(path);
        d.extend(lang.header(&mut rng));
        // Sizes vary: most files are small, a few are several times the average.
        let target = match rng.below(10) {
            0 => avg * 4,
            1..=3 => avg / 3,
            _ => avg,
        };
        let slots = planted.len() + 1;
        let per_slot = target / slots;
        let mut block = 0;
        for slot in 0..slots {
            let mut written = 0;
            while written < per_slot {
                let lines = background_block(lang, &mut rng, block);
                block += 1;
                written += lines.iter().map(|l| l.len() + 1).sum::<usize>();
                d.extend(lines);
            }
            if let Some(&i) = planted.get(slot) {
                let item = &items[i];
                let ctx = lang.name();
                match item.class {
                    Class::Secret => {
                        if item.kind == "aws-secret-access-key"
                            || (item.kind == "aws-access-key-id" && rng.chance(60))
                        {
                            // Pairs: the id and the secret next to each other, two labels.
                            let (idn, id) = secret_value("aws-access-key-id", &mut rng);
                            let (_, key) = secret_value("aws-secret-access-key", &mut rng);
                            let p = lang.wrap(lang.assign(&idn, &id));
                            let keyname = match idn.as_str() {
                                "aws_access_key_id" => "aws_secret_access_key",
                                "s3_access_key" => "s3_secret_key",
                                _ => "aws_secret_key",
                            };
                            let q = lang.wrap(lang.assign(keyname, &key));
                            d.plant(p, Class::Secret, "aws-access-key-id", ctx);
                            d.plant(q, Class::Secret, "aws-secret-access-key", ctx);
                        } else {
                            let p = render_secret(item.kind, lang, &mut rng);
                            d.plant(p, Class::Secret, item.kind, ctx);
                        }
                    }
                    Class::Decoy => {
                        let p = render_decoy(item.kind, lang, &mut rng);
                        d.plant(p, Class::Decoy, item.kind, ctx);
                    }
                    Class::Stub => {
                        let p = render_stub(item.kind, lang, &mut rng);
                        d.plant(p, Class::Stub, item.kind, ctx);
                    }
                    _ => {
                        let p = render_stub_decoy(item.kind, lang, &mut rng);
                        d.plant(p, Class::StubDecoy, item.kind, ctx);
                    }
                }
            }
        }
        d.extend(lang.footer());
        corpus.add_text(d);
    }

    // Blocked files and their decoys.
    let key_kinds = [
        "private-key-rsa",
        "private-key-openssh",
        "private-key-pkcs8",
        "private-key-ec",
    ];
    for s in 0..opts.blocked_sets {
        let svc = format!("services/{}-{s}", rng.word());
        let envs = [
            ".env",
            ".env.local",
            ".env.production",
            ".env.development.local",
        ];
        for (i, e) in envs.iter().enumerate() {
            let path = if i == 0 && s == 0 {
                (*e).to_string()
            } else {
                format!("{svc}/{e}")
            };
            env_file(&mut corpus, &mut rng, path);
        }
        key_file(
            &mut corpus,
            &mut rng,
            format!("{svc}/deploy/id_rsa"),
            "private-key-openssh",
        );
        key_file(
            &mut corpus,
            &mut rng,
            format!("{svc}/tls/server.key"),
            key_kinds[s % 4],
        );
        key_file(
            &mut corpus,
            &mut rng,
            format!("{svc}/tls/private-{s}.pem"),
            "private-key-rsa",
        );
        key_file(
            &mut corpus,
            &mut rng,
            format!("{svc}/deploy/id_ed25519"),
            "private-key-openssh",
        );
        keystore(
            &mut corpus,
            &mut rng,
            format!("android/app-{s}/release.jks"),
        );
        keystore(&mut corpus, &mut rng, format!("{svc}/certs/client.p12"));
        keystore(&mut corpus, &mut rng, format!("{svc}/certs/site.pfx"));
        keystore(
            &mut corpus,
            &mut rng,
            format!("android/app-{s}/debug.keystore"),
        );
        credential_files(&mut corpus, &mut rng, s);
    }
    for s in 0..opts.decoy_file_sets {
        decoy_files(&mut corpus, &mut rng, s);
    }

    // Lockfiles.
    for s in 0..opts.lockfile_sets {
        let d = package_lock(&mut rng, format!("web/app-{s}/package-lock.json"), 400);
        corpus.add_text(d);
        let d = cargo_lock(&mut rng, format!("crates/ws-{s}/Cargo.lock"), 300);
        corpus.add_text(d);
        let d = go_sum(&mut rng, format!("cmd/mod-{s}/go.sum"), 300);
        corpus.add_text(d);
    }

    // Bulk: bundles, data, binaries.
    if let Some(each) = opts.bulk_bytes.checked_div(opts.bulk_files) {
        for i in 0..opts.bulk_files {
            let (path, data) = match i % 6 {
                0 => (
                    format!("web/dist/vendor-{i}.min.js"),
                    minified_bundle(&mut rng, each.min(900_000)),
                ),
                1 | 2 => (
                    format!("data/{}-{i}.csv", rng.word()),
                    csv_data(&mut rng, each),
                ),
                3 => (
                    format!("assets/img/{}-{i}.png", rng.word()),
                    binary_blob(&mut rng, "png", each),
                ),
                4 => (
                    format!("assets/fonts/{}-{i}.woff2", rng.word()),
                    binary_blob(&mut rng, "woff2", each / 4),
                ),
                _ => (
                    format!("assets/photos/{}-{i}.jpg", rng.word()),
                    binary_blob(&mut rng, "jpg", each),
                ),
            };
            corpus.files.push(File { path, data });
        }
    }

    // Paths are unique by construction except for rare name clashes: keep the first.
    let mut seen = std::collections::BTreeSet::new();
    let mut dropped = std::collections::BTreeSet::new();
    corpus.files.retain(|f| {
        if seen.insert(f.path.clone()) {
            true
        } else {
            dropped.insert(f.path.clone());
            false
        }
    });
    if !dropped.is_empty() {
        // Labels of a dropped duplicate would point into the survivor: renumbering is not
        // worth it, so the generator avoids clashes with the file number in every path.
        corpus
            .labels
            .retain(|l| !dropped.contains(&l.path) || l.first == 0);
    }
    corpus
        .labels
        .sort_by(|a, b| (&a.path, a.first).cmp(&(&b.path, b.first)));
    corpus
}

// ---------------------------------------------------------------------------------------------
// A second commit on top of a corpus
// ---------------------------------------------------------------------------------------------

/// The next commit on top of `base` (which is committed as HEAD): in some ordinary files new
/// lines are inserted (some holding new secrets and stubs), in others a line that held a
/// secret is replaced by a new secret, and a new blocked file is added. Every label of `base`
/// that survives unchanged becomes [`Class::Preexisting`] (a scanner must not report it); the
/// new items carry their own class. Returns the full new tree and its labels.
pub fn next_commit(base: &Corpus, seed: u64) -> Corpus {
    let mut rng = Rng::new(seed);
    let mut out = Corpus::default();
    let mut labels: Vec<Label> = Vec::new();
    let mut touched = 0usize;
    for (fi, f) in base.files.iter().enumerate() {
        let file_labels: Vec<&Label> = base.labels.iter().filter(|l| l.path == f.path).collect();
        let is_text = !f.data.contains(&0) && std::str::from_utf8(&f.data).is_ok();
        let ordinary = file_labels.iter().all(|l| l.first != 0);
        let lang = LANGS.iter().copied().find(|l| {
            let ext = f.path.rsplit('.').next().unwrap_or("");
            matches!(
                (l, ext),
                (Lang::Py, "py")
                    | (Lang::Js, "js")
                    | (Lang::Ts, "ts")
                    | (Lang::Go, "go")
                    | (Lang::Rs, "rs")
                    | (Lang::Yaml, "yaml")
                    | (Lang::Rb, "rb")
                    | (Lang::Sh, "sh")
                    | (Lang::Toml, "toml")
                    | (Lang::Props, "properties")
            )
        });
        let mut lines: Vec<String> = if is_text {
            String::from_utf8_lossy(&f.data)
                .lines()
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        // (label, is it new in this commit)
        let mut mine: Vec<(Label, bool)> =
            file_labels.iter().map(|l| ((*l).clone(), false)).collect();
        let edit = is_text && lines.len() > 1 && ordinary && lang.is_some() && fi % 5 == 0;
        if let (true, Some(lang)) = (edit, lang) {
            touched += 1;
            // Replace a line holding a single-line secret with a new secret of the same kind.
            if let Some(pos) = mine.iter().position(|(l, _)| {
                l.class == Class::Secret
                    && l.first == l.last
                    && l.kind != "aws-secret-access-key"
                    && l.kind != "aws-access-key-id"
                    && !l.kind.starts_with("private-key")
            }) {
                let (name, v) = secret_value(&mine[pos].0.kind, &mut rng);
                let line = lines[mine[pos].0.first - 1].clone();
                // Keep the line's shape: only the value changes.
                let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
                lines[mine[pos].0.first - 1] =
                    format!("{indent}{}", lang.assign(&name, &v).trim_start());
                let l = &mut mine[pos];
                l.0.context = format!("{}-modified", l.0.context);
                l.1 = true;
            }
            // Insert a block of new lines at a blank line past the middle that no label spans.
            let inside = |p: usize, mine: &[(Label, bool)]| {
                mine.iter()
                    .any(|(l, _)| l.first != 0 && l.first <= p && p < l.last)
            };
            let mut at = (lines.len() / 2).max(1).min(lines.len());
            while at < lines.len() && (!lines[at - 1].is_empty() || inside(at, &mine)) {
                at += 1;
            }
            if at >= lines.len() {
                at = lines.len();
            }
            let mut new_lines: Vec<String> = background_block(lang, &mut rng, 9000 + fi);
            new_lines.push(String::new());
            let planted = match touched % 3 {
                0 => {
                    let kind = *rng.pick(&[
                        "github-pat-classic",
                        "stripe-secret-live",
                        "database-url",
                        "openai-key-project",
                        "slack-webhook",
                    ]);
                    Some((render_secret(kind, lang, &mut rng), Class::Secret, kind))
                }
                1 if CODE.contains(&lang) => {
                    let ok: Vec<&'static str> = STUB_KINDS
                        .iter()
                        .copied()
                        .filter(|k| stub_contexts(k).contains(&lang))
                        .collect();
                    let kind = if ok.is_empty() {
                        "todo-implement"
                    } else {
                        ok[rng.below(ok.len())]
                    };
                    Some((render_stub(kind, lang, &mut rng), Class::Stub, kind))
                }
                _ => None,
            };
            let mut new_labels = Vec::new();
            if let Some((p, class, kind)) = planted {
                let base_line = at + new_lines.len();
                new_labels.push(Label {
                    path: f.path.clone(),
                    first: base_line + p.first + 1,
                    last: base_line + p.last + 1,
                    class,
                    kind: kind.to_string(),
                    context: format!("{}-added", lang.name()),
                });
                new_lines.extend(p.lines);
            }
            new_lines.extend(background_block(lang, &mut rng, 9100 + fi));
            new_lines.push(String::new());
            let n = new_lines.len();
            for (l, _) in &mut mine {
                if l.first > at {
                    l.first += n;
                    l.last += n;
                }
            }
            lines.splice(at..at, new_lines);
            mine.extend(new_labels.into_iter().map(|l| (l, true)));
        }
        for (l, new) in mine {
            let class = if !new && l.class.is_positive() {
                Class::Preexisting
            } else {
                l.class
            };
            labels.push(Label { class, ..l });
        }
        let data = if edit {
            let mut s = lines.join("\n");
            s.push('\n');
            s.into_bytes()
        } else {
            f.data.clone()
        };
        out.files.push(File {
            path: f.path.clone(),
            data,
        });
    }
    // A new blocked file in this commit.
    env_file(
        &mut out,
        &mut rng,
        "services/late-addition/.env.production.local".into(),
    );
    labels.append(&mut out.labels);
    labels.sort_by(|a, b| (&a.path, a.first).cmp(&(&b.path, b.first)));
    out.labels = labels;
    out
}

/// A typical small change on top of `base`: `count` ordinary source files, each with a new
/// function (or config block) inserted at a blank line in the middle. No secrets, no stubs.
/// Returns the changed files only.
pub fn typical_change(base: &Corpus, count: usize, seed: u64) -> Vec<File> {
    let mut rng = Rng::new(seed);
    let exts = [
        ("py", Lang::Py),
        ("ts", Lang::Ts),
        ("go", Lang::Go),
        ("rs", Lang::Rs),
        ("java", Lang::Java),
        ("yaml", Lang::Yaml),
        ("js", Lang::Js),
        ("rb", Lang::Rb),
    ];
    let candidates: Vec<(&File, Lang)> = base
        .files
        .iter()
        .filter_map(|f| {
            let ext = f.path.rsplit('.').next().unwrap_or("");
            let lang = exts.iter().find(|(e, _)| *e == ext)?.1;
            let clean = !base.labels.iter().any(|l| l.path == f.path);
            clean.then_some((f, lang))
        })
        .collect();
    let step = (candidates.len() / count.max(1)).max(1);
    candidates
        .iter()
        .step_by(step)
        .take(count)
        .enumerate()
        .map(|(i, (f, lang))| {
            let text = String::from_utf8_lossy(&f.data);
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            let mut at = (lines.len() / 2).max(1);
            while at < lines.len() && !lines[at - 1].is_empty() {
                at += 1;
            }
            let mut new = background_block(*lang, &mut rng, 20_000 + i);
            new.extend(background_block(*lang, &mut rng, 20_100 + i));
            lines.splice(at..at, new);
            let mut data = lines.join("\n");
            data.push('\n');
            File {
                path: f.path.clone(),
                data: data.into_bytes(),
            }
        })
        .collect()
}

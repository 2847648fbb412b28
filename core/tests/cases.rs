//! The semantics case corpus: every entry of `tests/cases/` is one test.
//!
//! An entry is a `.policy` file (the user's layer), or a directory of them compiled
//! together (in it, a file whose name starts with `stdlib` is the stdlib layer, `plugin`
//! a plugin pack, any other the user's). The policies carry their own `test` blocks, run as
//! `contextos test` runs them (each layer's against that layer), with one rule more: a case names exactly the rules that decide it, and a case
//! that names none is decided by no rule (the domain's default, or a rejection).
//! An entry must compile without errors and hold at least one case.
#![expect(
    clippy::disallowed_methods,
    reason = "the harness reads its cases from disk; the purity boundary is for the library"
)]

use contextos_core::testing::run_layered;
use contextos_core::{build, BuildOptions, Layer, PolicySource};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

fn main() {
    let args = Arguments::from_args();
    let trials = match entries(&cases_dir()) {
        Ok(entries) => entries
            .into_iter()
            .map(|entry| {
                let name = entry
                    .strip_prefix(cases_dir())
                    .unwrap_or(&entry)
                    .display()
                    .to_string();
                Trial::test(name, move || run_entry(&entry))
            })
            .collect(),
        Err(e) => vec![Trial::test("cases", move || {
            Err(format!("cannot list the cases: {e}").into())
        })],
    };
    libtest_mimic::run(&args, trials).exit();
}

/// The case entries, sorted: `.policy` files and directories.
fn entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() || path.extension().is_some_and(|e| e == "policy") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn layer_of(file_name: &str) -> Layer {
    if file_name.starts_with("stdlib") {
        Layer::Stdlib
    } else if file_name.starts_with("plugin") {
        Layer::Plugin
    } else {
        Layer::User
    }
}

/// The sources of an entry, named by their path under `tests/cases/` (the name a rule
/// without `@id` takes).
fn sources(entry: &Path) -> Result<Vec<PolicySource>, Failed> {
    let layered = entry.is_dir();
    let files = if layered {
        entries(entry).map_err(|e| format!("cannot list {}: {e}", entry.display()))?
    } else {
        vec![entry.to_path_buf()]
    };
    let mut out = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        let file_name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        out.push(PolicySource {
            name: f
                .strip_prefix(cases_dir())
                .unwrap_or(&f)
                .display()
                .to_string(),
            layer: if layered {
                layer_of(file_name)
            } else {
                Layer::User
            },
            text: text.into(),
        });
    }
    // Layers in order, as the CLI loads them: stdlib, then plugins, then the user's.
    out.sort_by_key(|s| match s.layer {
        Layer::Stdlib => 0,
        Layer::Plugin => 1,
        Layer::User => 2,
    });
    Ok(out)
}

fn run_entry(entry: &Path) -> Result<(), Failed> {
    let sources = sources(entry)?;
    let out = build(&sources, &BuildOptions::default());
    let errors: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| out.render(d))
        .collect();
    let Some(set) = out.policy.as_ref().filter(|_| errors.is_empty()) else {
        return Err(format!("does not compile:\n{}", errors.join("\n")).into());
    };
    let runs = run_layered(&sources, set, &BuildOptions::default(), None);
    if let Some(e) = runs.iter().find_map(|r| r.error.as_ref()) {
        return Err(e.clone().into());
    }
    let cases: Vec<_> = runs.iter().flat_map(|r| &r.report.cases).collect();
    if cases.is_empty() {
        return Err("has no test case".into());
    }
    let mut failures = Vec::new();
    for c in cases {
        let mut expected = c.expected_rules.clone();
        expected.sort();
        expected.dedup();
        if c.actual != c.expected || c.actual_rules != expected {
            failures.push(format!(
                "{}:{}: {}\n    expected {} by {:?}, got {} by {:?}",
                c.origin.file,
                c.origin.line,
                c.case.trim(),
                c.expected,
                expected,
                c.actual,
                c.actual_rules,
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}

//! Every ```policy block in the book (`book/src/**/*.md`) is a complete policy file.
//! Each one is compiled together with the standard library, exactly as the CLI loads a
//! project (stdlib layer first, the example as the user's `.contextos/policies/main.policy`),
//! must produce no error and no warning of its own, and its `test` blocks must pass.
//!
//! Blocks tagged ```policy,ignore are skipped; the book uses them to show mistakes. A tag
//! `disable=RULE-ID` compiles the block with that rule disabled, as
//! `[policies] disable = ["RULE-ID"]` in `contextos.toml` would. A tag `warns=CODE` says
//! the block shows a lint on purpose: it must report that code, and only it is tolerated.
#![expect(
    clippy::disallowed_methods,
    reason = "the test reads its cases from the book and the stdlib; the purity boundary is for the library"
)]

use contextos_core::testing::run_tests;
use contextos_core::{build, BuildOptions, Layer, PolicySource};
use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The name every example is compiled under, so `file:line` rule ids in the book read
/// like the ones a user sees.
const EXAMPLE_NAME: &str = ".contextos/policies/main.policy";

/// Fewer tested blocks than this means the extractor broke, not that the book is good.
const MIN_BLOCKS: usize = 20;
const MIN_CASES: usize = 100;

#[derive(Debug)]
struct Block {
    chapter: String,
    /// 1-based line of the opening fence in the chapter.
    line: usize,
    text: String,
    disabled: Vec<String>,
    warns: Vec<String>,
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Box<dyn Error>> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            markdown_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}

/// What a fence's info string says about a ```policy block.
#[derive(Debug)]
struct PolicyFence {
    /// False when tagged `ignore`.
    tested: bool,
    /// Rule ids from `disable=ID` tags, switched off as `[policies] disable` in
    /// `contextos.toml` would.
    disabled: Vec<String>,
    /// Warning codes from `warns=CODE` tags, which the block must report.
    warns: Vec<String>,
}

/// `None` when the info string is not a policy block's.
fn policy_fence(info: &str) -> Option<PolicyFence> {
    let mut tags = info
        .split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|t| !t.is_empty());
    if tags.next() != Some("policy") {
        return None;
    }
    let mut fence = PolicyFence {
        tested: true,
        disabled: Vec::new(),
        warns: Vec::new(),
    };
    for tag in tags {
        if tag == "ignore" {
            fence.tested = false;
        } else if let Some(id) = tag.strip_prefix("disable=") {
            fence.disabled.push(id.to_string());
        } else if let Some(code) = tag.strip_prefix("warns=") {
            fence.warns.push(code.to_string());
        }
    }
    Some(fence)
}

/// A code block being read.
struct OpenFence {
    /// 1-based line of the opening fence.
    line: usize,
    ticks: usize,
    policy: Option<PolicyFence>,
    body: String,
}

/// Extracts fenced blocks. A fence is three or more backticks at the start of a line
/// (after optional indentation); it closes with a fence at least as long.
fn extract(chapter: &str, text: &str) -> Result<(Vec<Block>, usize), String> {
    let mut blocks = Vec::new();
    let mut ignored = 0;
    let mut open: Option<OpenFence> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        let rest = trimmed[ticks..].trim();
        match open.take() {
            None if ticks >= 3 => {
                open = Some(OpenFence {
                    line: i + 1,
                    ticks,
                    policy: policy_fence(rest),
                    body: String::new(),
                });
            }
            None => {}
            Some(fence) if ticks >= fence.ticks && rest.is_empty() => match fence.policy {
                Some(PolicyFence {
                    tested: true,
                    disabled,
                    warns,
                }) => blocks.push(Block {
                    chapter: chapter.to_string(),
                    line: fence.line,
                    text: fence.body,
                    disabled,
                    warns,
                }),
                Some(_) => ignored += 1,
                None => {}
            },
            Some(mut fence) => {
                fence.body.push_str(line);
                fence.body.push('\n');
                open = Some(fence);
            }
        }
    }
    match open {
        Some(fence) => Err(format!(
            "{chapter}:{}: code fence is never closed",
            fence.line
        )),
        None => Ok((blocks, ignored)),
    }
}

fn stdlib_sources() -> Result<Vec<PolicySource>, Box<dyn Error>> {
    let dir = manifest_dir().join("../stdlib-policies/policies");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "policy"));
    // Byte-wise order, as the stdlib crate lists them.
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(PolicySource {
            name: format!("stdlib/{name}"),
            text: std::fs::read_to_string(&f)?.into(),
            layer: Layer::Stdlib,
        });
    }
    Ok(out)
}

/// Compiles and tests one block; returns a failure report, or the number of cases run.
fn check_block(stdlib: &[PolicySource], block: &Block) -> Result<usize, String> {
    let here = format!(
        "{}:{} (a ```policy block; line N of the block is line {}+N of the chapter)",
        block.chapter, block.line, block.line
    );
    if !block.text.trim_start().starts_with("language 1;") {
        return Err(format!(
            "{here}: a tested example must start with `language 1;`"
        ));
    }
    let mut sources = stdlib.to_vec();
    sources.push(PolicySource {
        name: EXAMPLE_NAME.to_string(),
        text: block.text.clone().into(),
        layer: Layer::User,
    });
    let example = sources.len() - 1;
    let options = BuildOptions {
        disabled_rules: block.disabled.clone(),
        ..Default::default()
    };
    let out = build(&sources, &options);
    let mut report = String::new();
    for d in &out.diagnostics {
        // Diagnostics of the stdlib are the stdlib's business; the example must be clean,
        // and its `disable=` tags must name real rules (W0205 is reported on file 0).
        let shown = block.warns.iter().any(|w| w == d.diagnostic.code);
        if (d.file == example && !shown) || d.diagnostic.is_error() || d.diagnostic.code == "W0205"
        {
            let _ = writeln!(report, "{}", out.render(d));
        }
    }
    for w in &block.warns {
        if !out
            .diagnostics
            .iter()
            .any(|d| d.file == example && d.diagnostic.code == w)
        {
            let _ = writeln!(report, "the block is tagged warns={w} but reports no {w}");
        }
    }
    let Some(set) = out.policy.as_ref() else {
        return Err(format!("{here}: does not compile:\n{report}"));
    };
    if !report.is_empty() {
        return Err(format!("{here}: has diagnostics:\n{report}"));
    }
    let results = run_tests(set, None);
    let mine: Vec<_> = results
        .cases
        .iter()
        .filter(|c| c.origin.file == EXAMPLE_NAME)
        .collect();
    for c in mine.iter().filter(|c| !c.passed) {
        let _ = writeln!(
            report,
            "  FAIL [{}] block line {}: {}\n       expected {} {:?}, actual {} {:?}",
            c.test, c.origin.line, c.case, c.expected, c.expected_rules, c.actual, c.actual_rules
        );
    }
    if report.is_empty() {
        Ok(mine.len())
    } else {
        Err(format!("{here}: test cases fail:\n{report}"))
    }
}

#[test]
fn every_policy_block_in_the_book_compiles_and_its_tests_pass() -> Result<(), Box<dyn Error>> {
    let root = manifest_dir().join("../book/src");
    let mut chapters = Vec::new();
    markdown_files(&root, &mut chapters)?;
    chapters.sort();
    assert!(
        !chapters.is_empty(),
        "no chapters found under {}",
        root.display()
    );

    let stdlib = stdlib_sources()?;
    assert!(!stdlib.is_empty(), "no stdlib policies found");

    let mut blocks = Vec::new();
    let mut failures = Vec::new();
    let mut ignored = 0;
    for path in &chapters {
        let chapter = path
            .strip_prefix(&root)
            .map(|p| format!("book/src/{}", p.to_string_lossy().replace('\\', "/")))
            .unwrap_or_else(|_| path.display().to_string());
        let text = std::fs::read_to_string(path)?;
        match extract(&chapter, &text) {
            Ok((found, skipped)) => {
                blocks.extend(found);
                ignored += skipped;
            }
            Err(e) => failures.push(e),
        }
    }

    let mut cases = 0;
    for block in &blocks {
        match check_block(&stdlib, block) {
            Ok(n) => cases += n,
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "book examples: {} chapter(s), {} tested policy block(s), {} test case(s), {} ignored block(s)",
        chapters.len(),
        blocks.len(),
        cases,
        ignored
    );
    assert!(
        failures.is_empty(),
        "{} book example(s) fail:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        blocks.len() >= MIN_BLOCKS,
        "only {} tested policy blocks found (expected at least {MIN_BLOCKS})",
        blocks.len()
    );
    assert!(
        cases >= MIN_CASES,
        "only {cases} test cases ran (expected at least {MIN_CASES})"
    );
    Ok(())
}

#[test]
fn the_extractor_sees_fences_and_tags() {
    let md = "text\n```policy\nlanguage 1;\n```\n````policy,ignore\nbad\n```\n````\n```console\n$ x\n```\n```policy,disable=a,disable=b\nlanguage 1;\n```\n";
    let extracted = extract("t.md", md);
    assert!(extracted.is_ok(), "{extracted:?}");
    let (blocks, ignored) = extracted.unwrap_or_default();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].line, 2);
    assert_eq!(blocks[0].text, "language 1;\n");
    assert!(blocks[0].disabled.is_empty());
    assert_eq!(blocks[1].disabled, ["a", "b"]);
    assert_eq!(ignored, 1);
    assert!(extract("t.md", "```policy\nlanguage 1;\n").is_err());
}

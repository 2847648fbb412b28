//! The passes of one compilation, in order: parsing (on two threads for large inputs),
//! the per-file passes (`lower`), then the set-wide ones and the assembly (`compile`).
//! A [`Seed`] stands for files compiled before ([`super::precompiled`]): `compile` starts
//! from it instead of from nothing.

use super::context::Ctx;
use super::output::{BuildOptions, BuildOutput, PolicySource};
use super::{assemble, detectors, guides, header, ids, lets, overrides, rules, test_blocks};
use crate::detector::CompiledDetector;
use assemble::Lowered;
use contextos_grammar::ast::{Span, Statement};
use contextos_grammar::SourceFile;
use std::collections::BTreeSet;

/// The set-wide lints (conditions, shadowing) on the rules of every layer but the stdlib.
/// Skipped by a lazy build: the hook needs the verdict, not the advice.
fn lint_rules(
    ctx: &mut Ctx,
    rules: &[crate::ir::CompiledRule],
    roles: &BTreeSet<String>,
    tests: &[(usize, contextos_grammar::ast::TestBlock)],
) {
    use crate::ir::Layer;
    let mut known = roles.clone();
    known.extend(
        tests
            .iter()
            .flat_map(|(_, t)| &t.cases)
            .filter_map(|c| c.role.as_ref().map(|r| r.node.clone())),
    );
    let file_of = |ctx: &Ctx, name: &str| ctx.files.iter().position(|f| f.name == name);
    let linted = |r: &crate::ir::CompiledRule| r.layer != Layer::Stdlib;
    for r in rules.iter().filter(|r| linted(r)) {
        for (ci, f) in crate::lint::conditions::check(r, &known) {
            let o = &r.clauses[ci].origin;
            if let Some(fi) = file_of(ctx, &o.file) {
                let d = rules::lint_diagnostic(f, Span::new(o.start, o.end));
                ctx.err(fi, d);
            }
        }
    }
    for (ri, f) in crate::lint::shadow::check(rules, linted) {
        let o = &rules[ri].origin;
        if let Some(fi) = file_of(ctx, &o.file) {
            ctx.err(fi, rules::lint_diagnostic(f, Span::new(o.start, o.end)));
        }
    }
}

/// Below this many bytes of policy text, every file is parsed on the calling thread: a
/// second thread costs more than it saves.
const PARALLEL_PARSE_BYTES: usize = 64 * 1024;

/// Nor is a second thread worth it when the smaller share would be under this many bytes.
/// Files are never split, so a project's one large file (after a precompiled stdlib, often
/// the only source) leaves one side empty: the spawned thread would parse it all while
/// the calling thread waits, paying the thread and a fresh malloc arena (grown a page at a
/// time by `mprotect`, every page faulted in) for nothing.
const PARALLEL_PARSE_SHARE: usize = 16 * 1024;

/// Parses every source, in order. Files do not depend on each other until the passes
/// after parsing, so with enough text (the stdlib alone is some 330 KB) the files after
/// the file boundary nearest the half-way byte are parsed on a second thread; the
/// outputs, and so every diagnostic, come back in the sources' order either way.
pub(super) fn parse_all(sources: &[PolicySource]) -> Vec<contextos_grammar::ParseOutput> {
    let parse = |part: &[PolicySource]| -> Vec<contextos_grammar::ParseOutput> {
        part.iter()
            .map(|s| contextos_grammar::parse(&s.text))
            .collect()
    };
    let total: usize = sources.iter().map(|s| s.text.len()).sum();
    if total < PARALLEL_PARSE_BYTES {
        return parse(sources);
    }
    // The file boundary that leaves the two threads the most even shares of bytes.
    let mut before = 0;
    let (larger, split) = (0..=sources.len())
        .map(|i| {
            let here = before;
            before += sources.get(i).map_or(0, |s| s.text.len());
            (here.max(total - here), i)
        })
        .min()
        .unwrap_or((total, 0));
    if total - larger < PARALLEL_PARSE_SHARE {
        return parse(sources);
    }
    let (first, second) = sources.split_at(split);
    let (rest, mut out) = crate::beside::both(|| parse(second), || parse(first));
    out.extend(rest);
    out
}

/// What the lowering passes produced so far: a precompiled standard library's share, then
/// every file's after it.
#[derive(Default)]
pub(super) struct Lowering {
    pub(super) defaults: header::Defaults,
    pub(super) rules: Vec<crate::ir::CompiledRule>,
    /// A precompiled stdlib's rules, still encoded: they come before `rules`.
    pub(super) encoded_rules: Option<crate::rules::EncodedRules>,
    pub(super) guides: Vec<crate::policy::CompiledGuide>,
    pub(super) detectors: Vec<(usize, CompiledDetector)>,
    /// A precompiled stdlib's detectors, still in their snapshot encoding: planted only
    /// when nothing after it adds or disables a detector, so no pass needs to read them
    /// (they are unique among themselves, and `disable` names none of them).
    pub(super) encoded_detectors: Option<&'static [u8]>,
    pub(super) roles: BTreeSet<String>,
}

/// The passes that read each file on its own: the headers, defaults and `let`s, the checks
/// of every `let` and override, then each statement lowered to IR. `parsed` are the files
/// from index `first` on; `low` holds what the files before them produced. Test blocks come
/// back as syntax: they are compiled against the whole set's rule ids.
///
/// The statements are consumed as they are lowered: a rule's syntax is gone before the
/// next rule is lowered, so the IR takes the freed memory instead of fresh pages.
pub(super) fn lower(
    ctx: &mut Ctx,
    first: usize,
    parsed: Vec<contextos_grammar::ast::PolicyFile>,
    mut low: Lowering,
) -> (Lowering, Vec<(usize, contextos_grammar::ast::TestBlock)>) {
    header::declare(ctx, &mut low.defaults, first, &parsed);
    lets::check_all(ctx, first);
    overrides::check(ctx, first, &parsed);
    // Room for every rule at once: grown by doubling, the list would end up to twice its
    // size (280 bytes a rule) after copying itself at every step.
    low.rules.reserve(
        parsed
            .iter()
            .flat_map(|f| &f.statements)
            .map(|s| match s {
                Statement::Rule(_) => 1,
                Statement::Role(rb) => rb.rules.len(),
                _ => 0,
            })
            .sum(),
    );
    let mut tests_ast = Vec::new();
    for (fi, file) in (first..).zip(parsed) {
        for stmt in file.statements {
            match stmt {
                Statement::Rule(r) => low.rules.extend(rules::compile_rule(ctx, fi, r, None)),
                Statement::Guide(g) => {
                    low.guides.extend(guides::compile_guide(ctx, fi, &g, None));
                }
                Statement::Detector(d) => low
                    .detectors
                    .extend(detectors::compile_detector(ctx, fi, &d).map(|c| (fi, c))),
                Statement::Role(rb) => {
                    let role = rb.name.node;
                    for r in rb.rules {
                        low.rules
                            .extend(rules::compile_rule(ctx, fi, r, Some(&role)));
                    }
                    for g in &rb.guides {
                        low.guides
                            .extend(guides::compile_guide(ctx, fi, g, Some(&role)));
                    }
                    low.roles.insert(role);
                }
                Statement::Test(t) => tests_ast.push((fi, t)),
                _ => {}
            }
        }
    }
    (low, tests_ast)
}

/// The whole compilation of `sources`, of which `parsed` holds the parse of the files
/// from the seed's count on (all of them without a seed).
pub(super) fn compile(
    sources: &[PolicySource],
    options: &BuildOptions,
    parsed: Vec<contextos_grammar::ParseOutput>,
    seed: Option<Seed>,
) -> BuildOutput {
    let files: Vec<SourceFile> = sources
        .iter()
        .map(|s| SourceFile::new(s.name.clone(), s.text.clone()))
        .collect();
    let mut ctx = Ctx::new(
        &files,
        sources.iter().map(|s| s.layer).collect(),
        options.lazy,
    );
    let (first, low) = match seed {
        Some(seed) => seed.plant(&mut ctx),
        None => (0, Lowering::default()),
    };
    let mut asts = Vec::new();
    for (i, out) in (first..).zip(parsed) {
        for d in out.diagnostics {
            ctx.err(i, d);
        }
        asts.push(out.file);
    }
    let (low, tests_ast) = lower(&mut ctx, first, asts, low);
    let Lowering {
        defaults,
        rules,
        encoded_rules,
        guides,
        detectors,
        encoded_detectors,
        roles,
    } = low;
    ids::check_unique(&mut ctx, encoded_rules.as_ref(), &rules, &detectors);
    // Test blocks name rules by id, before `disable` drops any. Without tests (a cold hook
    // call's project, as a rule) nothing asks, and the ids are not copied.
    let all_ids: BTreeSet<String> = if tests_ast.is_empty() {
        BTreeSet::new()
    } else {
        let encoded = encoded_rules
            .iter()
            .flat_map(|e| e.ids())
            .map(str::to_string);
        encoded.chain(rules.iter().map(|r| r.id.clone())).collect()
    };
    let (rules, detectors) =
        ids::drop_disabled(&mut ctx, &options.disabled_rules, rules, detectors);
    let detectors = match encoded_detectors {
        Some(bytes) => crate::lazy_list::LazyList::encoded(crate::section::Section::Held(
            crate::frozen::Bytes::of_static(bytes),
        )),
        None => detectors.into(),
    };

    if !options.lazy {
        lint_rules(&mut ctx, &rules, &roles, &tests_ast);
    }
    let mut tests = Vec::new();
    for (fi, t) in &tests_ast {
        tests.extend(test_blocks::compile_test(
            &mut ctx, *fi, t, &all_ids, &roles,
        ));
    }
    let defaults = header::default_effects(&mut ctx, &defaults, !files.is_empty());
    let runtime_lets = runtime_lets(&mut ctx);
    let (policy, diagnostics) = assemble::policy_set(
        ctx,
        options.lazy,
        Lowered {
            rules,
            encoded_rules,
            defaults,
            guides,
            detectors,
            tests,
            roles,
            runtime_lets,
        },
    );
    BuildOutput {
        policy,
        files,
        diagnostics,
    }
}

/// The values of the runtime's `let`s that the sources define (see
/// [`crate::policy::RUNTIME_LETS`]).
fn runtime_lets(ctx: &mut Ctx) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    for name in crate::policy::RUNTIME_LETS {
        ctx.decode_let(name);
        let Some(def) = ctx.lets.get(*name) else {
            continue;
        };
        let (file, span, items) = (def.file, def.span, def.items.clone());
        let Some(v) = ctx.expand(file, &items, &mut vec![(*name).to_string()]) else {
            continue;
        };
        // The runtime matches these as globs (variable names as argv words, the others as
        // paths); one it could not parse would silently match nothing there. A list the
        // stdlib defines is checked as its other globs are (see `Ctx::check_glob`): by a
        // full build, not by every lazy one. A list a project overrides is checked whole.
        if ctx.trusted(file) {
            out.insert((*name).to_string(), v);
            continue;
        }
        for g in &v {
            let checked = if *name == "secret_env_vars" {
                crate::glob::LazyWordGlob::new(g).map(drop)
            } else {
                crate::glob::path_glob(g).map(drop)
            };
            if let Err(e) = checked {
                ctx.err(
                    file,
                    contextos_grammar::Diagnostic::error(
                        "E0112",
                        span,
                        format!("invalid glob `{g}` in `${name}`: {e}"),
                    )
                    .with_label("the runtime matches this list as globs"),
                );
            }
        }
        out.insert((*name).to_string(), v);
    }
    out
}

/// Files compiled before, planted in a fresh compiler: a precompiled image's state.
pub(super) struct Seed {
    pub(super) files: usize,
    pub(super) lets: super::context::EncodedLets,
    pub(super) scripts: Vec<(crate::request::Domain, String)>,
    pub(super) low: Lowering,
}

impl Seed {
    /// Gives `ctx` the image's `let`s and scripts; returns how many files the image
    /// covers and what they lowered to.
    pub(super) fn plant(self, ctx: &mut Ctx) -> (usize, Lowering) {
        ctx.encoded_lets = self.lets;
        if !self.scripts.is_empty() {
            ctx.scripts = crate::script::ScriptHost::deferred(self.scripts);
        }
        (self.files, self.low)
    }
}

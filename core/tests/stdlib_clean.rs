//! The standard library compiles clean in a full build, which is what lets a lazy build
//! (a hook's cold start) skip checking its detector regexes (`Ctx::trusted`): the lazy set
//! must be the same set, and only the stdlib's regexes may go unchecked.

use contextos_core::{build, BuildOptions, Layer, PolicySource};

mod common;
use common::stdlib_sources as stdlib;

fn options(lazy: bool) -> BuildOptions {
    BuildOptions {
        disabled_rules: Vec::new(),
        lazy,
    }
}

#[test]
fn a_full_build_of_the_stdlib_has_no_errors() {
    let out = build(&stdlib(), &options(false));
    let errors: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let set = out.policy.expect("a set");
    assert!(
        set.detectors.get().expect("detectors").len() > 400,
        "the stdlib's secret detectors are all there"
    );
}

#[test]
fn the_lazy_stdlib_is_the_same_set_as_the_full_one() {
    let full = build(&stdlib(), &options(false)).policy.expect("full");
    let lazy = build(&stdlib(), &options(true)).policy.expect("lazy");
    assert_eq!(
        full.to_snapshot().expect("full snapshot"),
        lazy.to_snapshot().expect("lazy snapshot"),
        "skipping the checks changed what was built"
    );
}

/// Trust stops at the stdlib layer: a user's or a pack's bad regex is an error in a lazy
/// build too.
#[test]
fn only_the_stdlib_layer_goes_unchecked() {
    let bad = "@id(\"x-bad\")\ndetector secret \"(unclosed\" {\n    keywords: [\"unclosed\"],\n} \
               because \"bad\";\n";
    let bad_content = "@id(\"x-bad2\")\ndetector file \"**/*.pem\" {\n    content: \"[z-a]\",\n} \
                       because \"bad\";\n";
    for layer in [Layer::User, Layer::Plugin] {
        for text in [bad, bad_content] {
            let out = build(
                &[PolicySource {
                    name: "x.policy".into(),
                    text: text.into(),
                    layer,
                }],
                &options(true),
            );
            assert!(
                out.diagnostics.iter().any(|d| d.diagnostic.code == "E0125"),
                "{layer:?} {text}: {:?}",
                out.diagnostics
            );
            assert!(out.policy.is_none());
        }
    }
    // The same text in the stdlib layer: unchecked lazily, caught by a full build (and so
    // by `a_full_build_of_the_stdlib_has_no_errors` for the shipped stdlib).
    let source = [PolicySource {
        name: "stdlib/x.policy".into(),
        text: bad.into(),
        layer: Layer::Stdlib,
    }];
    assert!(!build(&source, &options(true)).has_errors());
    assert!(build(&source, &options(false))
        .diagnostics
        .iter()
        .any(|d| d.diagnostic.code == "E0125"));
}

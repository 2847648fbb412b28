#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "the test reads the example project and writes the image when asked to; the purity boundary is for the library"
)]
//! The precompiled standard library: the checked-in image is what `precompile` makes of
//! today's sources, and a build started from it is the full build — the same snapshot
//! bytes, the same diagnostics — whatever the project adds, or it is not used at all.

use contextos_core::build::{build_precompiled, embedded_detectors, precompile, PrecompiledUse};
use contextos_core::{build, BuildOptions, BuildOutput, Layer, PolicySet, PolicySource};
use std::sync::Arc;

mod common;
use common::stdlib_sources as stdlib;

fn lazy(disabled: &[&str]) -> BuildOptions {
    BuildOptions {
        disabled_rules: disabled.iter().map(|s| (*s).to_string()).collect(),
        lazy: true,
    }
}

fn with(extra: &[(&str, Layer, &str)]) -> Vec<PolicySource> {
    let mut s = stdlib();
    s.extend(extra.iter().map(|(name, layer, text)| PolicySource {
        name: (*name).to_string(),
        text: (*text).to_string().into(),
        layer: *layer,
    }));
    s
}

/// `precompile`'s image of today's stdlib, made once: a build keeps borrowing the image
/// (its detectors), so it lives as long as the program, as the embedded one does.
fn image() -> &'static [u8] {
    static IMAGE: std::sync::OnceLock<&'static [u8]> = std::sync::OnceLock::new();
    IMAGE.get_or_init(|| leak(precompile(&stdlib()).expect("the stdlib precompiles")))
}

fn leak(bytes: Vec<u8>) -> &'static [u8] {
    Box::leak(bytes.into_boxed_slice())
}

/// Everything a caller can observe of a build, but the set's test blocks: the snapshot
/// (every rule, index node, detector, default, guide, role and runtime list, as bytes) and
/// every diagnostic, rendered against its file.
fn observed(out: &BuildOutput) -> (Option<Vec<u8>>, Vec<String>) {
    let snapshot = out
        .policy
        .as_ref()
        .map(|p| p.to_snapshot().expect("the set encodes"));
    let diags = out.diagnostics.iter().map(|d| out.render(d)).collect();
    (snapshot, diags)
}

/// Builds `sources` both ways and checks they agree; returns whether the image was used.
fn agree(image: &'static [u8], sources: &[PolicySource], options: &BuildOptions) -> PrecompiledUse {
    let full = build(sources, options);
    let (pre, used) = build_precompiled(image, sources, options);
    assert_eq!(observed(&full), observed(&pre), "{used}");
    used
}

/// [`agree`], for sources that compile: the set exists, so the comparison covers it.
fn agree_on_a_set(
    image: &'static [u8],
    sources: &[PolicySource],
    options: &BuildOptions,
) -> PrecompiledUse {
    let full = build(sources, options);
    assert!(full.policy.is_some(), "{:#?}", full.diagnostics);
    agree(image, sources, options)
}

#[test]
fn the_checked_in_image_is_current() {
    let made = image();
    if std::env::var_os("CONTEXTOS_BLESS").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../stdlib-policies/precompiled/stdlib.bin"
        );
        std::fs::write(path, made).expect("write the image");
        return;
    }
    assert!(
        made == contextos_stdlib::PRECOMPILED,
        "stdlib-policies/precompiled/stdlib.bin is stale ({} bytes, {} expected): after \
         editing a stdlib policy or the IR's encoding, run \
         `CONTEXTOS_BLESS=1 cargo test -p contextos-core --test precompiled` and commit the image",
        contextos_stdlib::PRECOMPILED.len(),
        made.len(),
    );
    let (_, used) = build_precompiled(contextos_stdlib::PRECOMPILED, &stdlib(), &lazy(&[]));
    assert_eq!(used, PrecompiledUse::Used);
}

#[test]
fn the_stdlib_alone_builds_the_same_set() {
    assert_eq!(
        agree_on_a_set(image(), &stdlib(), &lazy(&[])),
        PrecompiledUse::Used
    );
}

const PROJECT: &str = r##"language 1;
default exec = ask;
let mine = ["gen/**", $governance];
let tool = "cargo";
@id("u-gen") deny path write $mine because "generated";
@id("u-build") allow exec "cargo build *" because "routine";
@id("u-ask") ask path write "src/**" when path.ext == "toml" because "review";
@id("u-script") deny exec "danger *" when script {
    argv.len() > 2
} because "long";
guide "Style" for "src/**" {
  """
  Keep functions short.
  """
}
role reviewer {
    @id("u-role") allow path write "docs/**" because "reviewers write docs";
}
@id("u-token")
detector secret """tok_[a-z0-9]{32}""" {
    keywords: ["tok_"],
} because "A made-up token.";
test "mine" {
    path write "gen/x.rs" => deny(u-gen);
    exec "cargo build --release" => allow(u-build);
}
"##;

#[test]
fn a_project_on_top_builds_the_same_set() {
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
}

/// The image holds the index's tries over the stdlib alone; a set borrows one only for a
/// slot that none of its own rules joins. One rule in one slot at a time: that slot's
/// trie is frozen anew, every other one borrowed, and the set is the full build's.
#[test]
fn a_rule_in_one_index_slot_leaves_the_others_to_the_image() {
    let rules = [
        r#"deny path read "notes/**" because "r";"#,
        r#"deny path write "gen/**" because "w";"#,
        r#"deny path delete "keep/**" because "d";"#,
        r#"ask path "every/op/**" because "every path operation";"#,
        r#"deny plugin "github.com/evil/*" because "p";"#,
        r#"deny commit "vendor/**" because "c";"#,
        r#"deny net fetch "tracker.example.com" because "f";"#,
        r#"deny net connect "10.9.0.0/16" because "n";"#,
        r#"deny mcp "shell.*" because "m";"#,
        r#"deny exec "danger *" because "x";"#,
        r#"allow path read "docs/**" because "an allow joins the slot too";"#,
    ];
    for rule in rules {
        let text = format!("language 1;\n@id(\"mine\") {rule}\n");
        let sources = with(&[(".contextos/policies/main.policy", Layer::User, &text)]);
        assert_eq!(
            agree_on_a_set(image(), &sources, &lazy(&[])),
            PrecompiledUse::Used,
            "{rule}"
        );
    }
}

/// The image's `let`s stay encoded until a later file names one: naming, redefining or
/// misspelling a stdlib list reads (and reports) exactly as a full build does.
#[test]
fn a_project_naming_the_stdlibs_lets_builds_the_same_set() {
    let uses = "language 1;\n@id(\"mine\") ask path write $credential_files, \"extra/**\" because \"u\";\n";
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, uses)]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
    for wrong in [
        // E0140: a stdlib list replaced without `override`.
        "language 1;\nlet credential_files = [\"x\"];\n",
        // E0105 with a suggestion drawn from the stdlib's names.
        "language 1;\ndeny path write $credential_file because \"typo\";\n",
        // E0105 for a name no layer defines.
        "language 1;\ndeny path write $no_such_list_anywhere because \"x\";\n",
    ] {
        let sources = with(&[(".contextos/policies/main.policy", Layer::User, wrong)]);
        assert_eq!(
            agree(image(), &sources, &lazy(&[])),
            PrecompiledUse::Used,
            "{wrong}"
        );
        let (out, _) = build_precompiled(image(), &sources, &lazy(&[]));
        assert!(out.policy.is_none(), "{wrong}: refused");
    }
}

#[test]
fn the_example_project_builds_the_same_set() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/rust-service/.contextos/policies"
    );
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the example's policies")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "policy"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut sources = stdlib();
    for f in files {
        sources.push(PolicySource {
            name: format!(
                ".contextos/policies/{}",
                f.file_name().expect("a name").to_string_lossy()
            ),
            text: std::fs::read_to_string(&f).expect("a policy").into(),
            layer: Layer::User,
        });
    }
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
}

#[test]
fn disabled_stdlib_rules_and_detectors_stay_disabled() {
    // The first stdlib rule and detector ids, taken from a full build.
    let full = build(&stdlib(), &lazy(&[])).policy.expect("a set");
    let rule = full.rules.iter().next().expect("a rule").id.clone();
    let detector = full.detectors.get().expect("detectors")[0].id.clone();
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]);
    let options = lazy(&[&rule, &detector, "no-such-id"]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &options),
        PrecompiledUse::Used
    );
    let (out, _) = build_precompiled(image(), &sources, &options);
    let set = out
        .policy
        .unwrap_or_else(|| panic!("{:#?}", out.diagnostics));
    assert!(set.rules.iter().all(|r| r.id != rule));
    assert!(set
        .detectors
        .get()
        .expect("detectors")
        .iter()
        .all(|d| d.id != detector));
}

#[test]
fn errors_against_the_stdlib_are_the_same_errors() {
    let full = build(&stdlib(), &lazy(&[])).policy.expect("a set");
    let taken = full.rules.iter().next().expect("a rule").id.clone();
    let broken = format!(
        "language 1;\n\
         let governance = [\"x\"];\n\
         default path = allow;\n\
         @id(\"{taken}\") deny path write \"a/**\" because \"taken id\";\n\
         deny path write $undefined_list because \"no such let\";\n\
         deny path write $governanse because \"typo\";\n\
         let unused_broken = [\"a/**\", $nowhere];\n\
         let loop_a = [$loop_b];\nlet loop_b = [$loop_a];\n"
    );
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, &broken)]);
    assert_eq!(agree(image(), &sources, &lazy(&[])), PrecompiledUse::Used);
    let (out, _) = build_precompiled(image(), &sources, &lazy(&[]));
    assert!(out.policy.is_none());
    let codes: Vec<_> = out.diagnostics.iter().map(|d| d.diagnostic.code).collect();
    for code in ["E0140", "E0105", "E0118"] {
        assert!(codes.contains(&code), "{code} in {codes:?}");
    }
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.diagnostic.message.contains(&taken)),
        "the duplicate id is reported: {codes:?}"
    );
}

#[test]
fn plugin_packs_after_the_stdlib_build_the_same_set() {
    let pack = "language 1;\n@id(\"pack-1\") deny exec \"curl * | sh\" because \"pipe to shell\";\n\
                let pack_dirs = [\"vendor/**\"];\n@id(\"pack-2\") ask path write $pack_dirs because \"vendored\";\n";
    let sources = with(&[
        (".contextos/policies/main.policy", Layer::User, PROJECT),
        ("plugins/acme/pack.policy", Layer::Plugin, pack),
    ]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
    // A pack that reaches into the stdlib's `let`s and defaults: the same refusals.
    let grabby = "language 1;\nlet governance = [\"y\"];\ndefault exec = allow;\n";
    let sources = with(&[("plugins/acme/pack.policy", Layer::Plugin, grabby)]);
    assert_eq!(agree(image(), &sources, &lazy(&[])), PrecompiledUse::Used);
    let (out, _) = build_precompiled(image(), &sources, &lazy(&[]));
    let refusals = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.code == "E0120")
        .count();
    assert_eq!(refusals, 2, "{:#?}", out.diagnostics);
}

#[test]
fn an_override_let_compiles_the_stdlib_from_source() {
    let over = "language 1;\noverride let governance = [\"only/this/**\"];\n";
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, over)]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::OverrideLet
    );
    // The override's weakening warning reads the stdlib's rules: it must be there.
    let (out, _) = build_precompiled(image(), &sources, &lazy(&[]));
    assert!(
        out.diagnostics.iter().any(|d| d.diagnostic.code == "W0240"),
        "{:?}",
        out.diagnostics
    );
}

#[test]
fn an_edited_stdlib_is_compiled_from_its_text() {
    let mut edited = stdlib();
    let last = edited.last_mut().expect("a file");
    last.text
        .to_mut()
        .push_str("\n@id(\"std-added\") deny path write \"added/**\" because \"new\";\n");
    let (out, used) = build_precompiled(image(), &edited, &lazy(&[]));
    assert_eq!(used, PrecompiledUse::SourcesDiffer);
    let set = out.policy.expect("a set");
    assert!(set.rules.iter().any(|r| r.id == "std-added"));

    // A renamed file, a missing file, a stdlib file given as a project's: not the image's.
    let mut renamed = stdlib();
    renamed[0].name = "stdlib/renamed.policy".into();
    assert_eq!(
        agree(image(), &renamed, &lazy(&[])),
        PrecompiledUse::SourcesDiffer
    );
    let short: Vec<_> = stdlib().into_iter().skip(1).collect();
    assert_eq!(
        agree(image(), &short, &lazy(&[])),
        PrecompiledUse::SourcesDiffer
    );
    let mut relayered = stdlib();
    relayered[3].layer = Layer::User;
    assert_eq!(
        agree(image(), &relayered, &lazy(&[])),
        PrecompiledUse::SourcesDiffer
    );
}

#[test]
fn a_damaged_image_is_not_used() {
    let good = image();
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]);
    // Truncated anywhere: refused whole, and the build is the full one.
    let step = (good.len() / 23).max(1);
    for cut in (0..good.len()).step_by(step) {
        let (_, used) = build_precompiled(&good[..cut], &sources, &lazy(&[]));
        assert!(
            matches!(used, PrecompiledUse::Unreadable(_)),
            "truncated at {cut}: {used:?}"
        );
    }
    assert!(matches!(
        agree(&good[..good.len() / 2], &sources, &lazy(&[])),
        PrecompiledUse::Unreadable(_)
    ));
    // Another format number (the first byte, a postcard varint below 128).
    let mut other = good.to_vec();
    other[0] = other[0].wrapping_add(1) & 0x7f;
    assert!(matches!(
        agree(leak(other), &sources, &lazy(&[])),
        PrecompiledUse::Unreadable(_)
    ));
    // A byte of a stored source text changed: the image no longer describes the stdlib.
    let text = contextos_stdlib::FILES[4].1;
    let needle = &text.as_bytes()[text.len() / 2..text.len() / 2 + 24];
    let at = good
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the image stores the text");
    let mut edited = good.to_vec();
    edited[at] = if edited[at] == b'x' { b'y' } else { b'x' };
    assert_eq!(
        agree(leak(edited), &sources, &lazy(&[])),
        PrecompiledUse::SourcesDiffer
    );
}

#[test]
fn a_full_build_never_uses_the_image() {
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]);
    let full = BuildOptions::default();
    assert_eq!(agree(image(), &sources, &full), PrecompiledUse::NotLazy);
}

#[test]
fn project_sources_alone_are_refused_by_precompile() {
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]);
    assert!(precompile(&sources).is_err());
    let broken = vec![PolicySource {
        name: "stdlib/broken.policy".into(),
        text: "language 1;\ndeny path write $nope because \"x\";\n".into(),
        layer: Layer::Stdlib,
    }];
    assert!(precompile(&broken).is_err());
}

#[test]
fn every_stdlib_let_is_there_for_the_project() {
    // One rule naming each `let` the stdlib declares: a name the image lost is an
    // undefined variable in one build and not in the other.
    let names: Vec<&str> = contextos_stdlib::FILES
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|l| l.strip_prefix("let "))
        .filter_map(|rest| rest.split([' ', '=']).next())
        .collect();
    assert!(names.len() > 50, "{names:?}");
    let mut project = String::from("language 1;\n");
    for (i, name) in names.iter().enumerate() {
        project.push_str(&format!(
            "@id(\"uses-{i}\") deny path write [\"x{i}/**\", ${name}] because \"uses ${name}\";\n"
        ));
    }
    let sources = with(&[(".contextos/policies/lets.policy", Layer::User, &project)]);
    assert_eq!(agree(image(), &sources, &lazy(&[])), PrecompiledUse::Used);
    let (out, _) = build_precompiled(image(), &sources, &lazy(&[]));
    assert!(
        out.diagnostics.iter().all(|d| d.diagnostic.code != "E0105"),
        "{:#?}",
        out.diagnostics
    );
}

#[test]
fn detectors_kept_encoded_read_as_the_full_builds() {
    // No detector added or disabled: the stdlib's stay in their encoding, and reading
    // them gives the full build's list. One added, or one disabled: decoded and merged.
    let rules_only =
        "language 1;\n@id(\"u-1\") deny path write \"gen/**\" because \"generated\";\n";
    let cases: [(Vec<PolicySource>, BuildOptions); 3] = [
        (
            with(&[(".contextos/policies/main.policy", Layer::User, rules_only)]),
            lazy(&[]),
        ),
        (
            with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]),
            lazy(&[]),
        ),
        (
            with(&[(".contextos/policies/main.policy", Layer::User, rules_only)]),
            lazy(&["aws-access-key-id"]),
        ),
    ];
    for (sources, options) in cases {
        assert_eq!(
            agree_on_a_set(image(), &sources, &options),
            PrecompiledUse::Used
        );
        let full = build(&sources, &options).policy.expect("a set");
        let (pre, _) = build_precompiled(image(), &sources, &options);
        let pre = pre.policy.expect("a set");
        let (a, b) = (
            full.detectors.get().expect("detectors"),
            pre.detectors.get().expect("detectors"),
        );
        assert!(a.len() > 400);
        assert_eq!(a, b);
    }
}

#[test]
fn a_snapshot_refers_to_the_embedded_detectors_only_where_they_are() {
    let embedded = embedded_detectors(image()).expect("the image's detectors");
    let rules_only =
        "language 1;\n@id(\"u-1\") deny path write \"gen/**\" because \"generated\";\n";
    let sources = with(&[(".contextos/policies/main.policy", Layer::User, rules_only)]);
    let full = build(&sources, &lazy(&[])).policy.expect("a set");
    let (pre, used) = build_precompiled(image(), &sources, &lazy(&[]));
    assert_eq!(used, PrecompiledUse::Used);
    let pre = pre.policy.expect("a set");
    let whole = pre.to_snapshot().expect("encodes");
    let shared = pre.to_snapshot_sharing(&embedded).expect("encodes");
    // The detectors are most of the snapshot; the shared one leaves them out.
    assert!(
        shared.len() * 2 < whole.len(),
        "{} of {}",
        shared.len(),
        whole.len()
    );

    // Read back with the same detectors: the same set as the full build, detectors and all,
    // both from memory and through a reader.
    let back = PolicySet::from_snapshot_shared(Arc::new(shared.clone()), 0, Some(&embedded))
        .expect("decodes with its detectors");
    assert_eq!(
        back.to_snapshot().expect("encodes"),
        full.to_snapshot().expect("encodes")
    );
    assert_eq!(
        back.detectors.get().expect("detectors"),
        full.detectors.get().expect("detectors")
    );
    let reader = PolicySet::from_snapshot_reader(
        Arc::new(InMemory(shared.clone())),
        0,
        shared.len() as u64,
        Some(&embedded),
    )
    .expect("decodes with its detectors");
    assert_eq!(
        reader.detectors.get().expect("detectors").len(),
        back.detectors.get().expect("detectors").len()
    );

    // Without them, or with other ones (another digest), it is refused, never read as a set
    // without detectors.
    assert!(PolicySet::from_snapshot(&shared).is_err());
    assert!(PolicySet::from_snapshot_shared(Arc::new(shared.clone()), 0, None).is_err());
    let mut other = image().to_vec();
    // The digest follows the two one-byte format numbers.
    other[2] ^= 1;
    let other = embedded_detectors(leak(other)).expect("the other image's detectors");
    assert!(PolicySet::from_snapshot_shared(Arc::new(shared.clone()), 0, Some(&other)).is_err());
    assert!(PolicySet::from_snapshot_reader(
        Arc::new(InMemory(shared.clone())),
        0,
        shared.len() as u64,
        Some(&other)
    )
    .is_err());

    // Only the very detectors of the image are shared: a set that decoded them (one of its
    // files adds a detector), or a full build's, holds its own copy as before.
    let (with_detector, _) = build_precompiled(
        image(),
        &with(&[(".contextos/policies/main.policy", Layer::User, PROJECT)]),
        &lazy(&[]),
    );
    let with_detector = with_detector.policy.expect("a set");
    assert_eq!(
        with_detector
            .to_snapshot_sharing(&embedded)
            .expect("encodes"),
        with_detector.to_snapshot().expect("encodes")
    );
    assert_eq!(
        full.to_snapshot_sharing(&embedded).expect("encodes"),
        full.to_snapshot().expect("encodes")
    );
    // Neither is a set built on another image.
    let (elsewhere, _) = build_precompiled(image(), &sources, &lazy(&[]));
    let elsewhere = elsewhere.policy.expect("a set");
    let embedded_here = embedded_detectors(contextos_stdlib::PRECOMPILED).expect("embedded");
    assert_eq!(
        elsewhere
            .to_snapshot_sharing(&embedded_here)
            .expect("encodes"),
        whole
    );
}

/// A snapshot read through [`contextos_core::ReadAt`], as the policy cache reads its file.
#[derive(Debug)]
struct InMemory(Vec<u8>);

impl contextos_core::ReadAt for InMemory {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Result<(), String> {
        let at = usize::try_from(at).map_err(|e| e.to_string())?;
        let bytes = self.0.get(at..at + buf.len()).ok_or("past the end")?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// `n` one-line project rules of four shapes (the hook bench's project), some 75 bytes
/// each: from about 220 of them the image decodes beside the parse.
fn many_rules(prefix: &str, n: usize) -> String {
    let mut s = String::from("language 1;\n");
    for i in 0..n {
        s.push_str(&match i % 4 {
            0 => format!("@id(\"{prefix}-{i}\") deny path write \"gen{i}/**/*.rs\" because \"generated\";\n"),
            1 => format!("@id(\"{prefix}-{i}\") allow exec \"tool{i} build *\" because \"routine\";\n"),
            2 => format!("@id(\"{prefix}-{i}\") ask path write \"mod{i}/src/**\" when path.ext == \"toml\" because \"review\";\n"),
            _ => format!("deny exec \"danger{i} *\" because \"dangerous\";\n"),
        });
    }
    s
}

#[test]
fn a_large_project_builds_the_same_set_while_the_image_decodes() {
    let text = many_rules("u", 1_000);
    assert!(
        text.len() > 16 * 1024,
        "large enough to parse beside the decoding"
    );
    let user = ".contextos/policies/main.policy";
    let sources = with(&[(user, Layer::User, &text)]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
    // Errors found while the image decodes: a syntax error, an unknown `let`, a duplicate id.
    let broken = format!(
        "{text}deny path write \"x/**\" because;\n\
         deny path write $nowhere because \"no such let\";\n\
         @id(\"u-0\") deny path write \"y/**\" because \"taken\";\n"
    );
    let sources = with(&[(user, Layer::User, &broken)]);
    assert_eq!(agree(image(), &sources, &lazy(&[])), PrecompiledUse::Used);
    let (out, _) = build_precompiled(image(), &sources, &lazy(&[]));
    assert!(out.policy.is_none() && out.has_errors());
    // A large file that overrides a `let` still compiles the stdlib from source.
    let over = format!("{text}override let governance = [\"only/this/**\"];\n");
    let sources = with(&[(user, Layer::User, &over)]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::OverrideLet
    );
    // A stdlib edited after the image was made: a full build, from the same parses.
    let mut edited = with(&[(user, Layer::User, &text)]);
    if let Some(first) = edited.first_mut() {
        first.text = format!("{}\n// edited\n", first.text).into();
    }
    assert_eq!(
        agree_on_a_set(image(), &edited, &lazy(&[])),
        PrecompiledUse::SourcesDiffer
    );
    // Three files, the text cut between the threads inside the second: the first parses
    // on this thread, the third on the other, the second in two halves; then the same
    // with a broken statement in the second file's tail and in the third file, whose
    // errors (and a duplicate id across the threads) read as a full build's.
    let (a, b, c) = (
        many_rules("a", 200),
        many_rules("b", 800),
        many_rules("c", 300),
    );
    let files = [
        (".contextos/policies/a.policy", Layer::User, a.as_str()),
        (".contextos/policies/b.policy", Layer::User, b.as_str()),
        (".contextos/policies/c.policy", Layer::User, c.as_str()),
    ];
    assert_eq!(
        agree_on_a_set(image(), &with(&files), &lazy(&[])),
        PrecompiledUse::Used
    );
    let b_broken = format!("{b}deny path write \"x/**\" because;\n");
    let c_broken = format!("@id(\"a-0\") deny exec \"dup\" because \"taken\";\n{c}deny exec;\n");
    let files = [
        files[0],
        (files[1].0, Layer::User, b_broken.as_str()),
        (files[2].0, Layer::User, c_broken.as_str()),
    ];
    assert_eq!(
        agree(image(), &with(&files), &lazy(&[])),
        PrecompiledUse::Used
    );
    // A file of the stdlib layer beyond the image's: parsed with the project's files.
    let sources = with(&[
        ("stdlib/extra.policy", Layer::Stdlib, &many_rules("x", 300)),
        (user, Layer::User, &text),
    ]);
    assert_eq!(
        agree_on_a_set(image(), &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
}

/// An image whose rules compare roles and match commands by glob words: the build on it
/// reads those rules no further than their heads, yet gives a full build's set (its
/// snapshot records the roles the image's conditions name), decides as it does, and says
/// where an image rule is when a project repeats its id.
#[test]
fn rules_kept_encoded_in_the_image_decide_as_the_full_builds() {
    const LAYER: &str = r#"language 1;
@id("img-ci") ask exec "deploy *" when role == "ci" because "ci deploys";
@id("img-glob") deny exec "/usr/bin/git pu* --force" because "no force pushes";
@id("img-ops") allow path write "ops/**" when role in ["ops", "sre"] because "ops";
@id("img-all") ask exec because "any command";
"#;
    let mut base = stdlib();
    base.push(PolicySource {
        name: "stdlib/roles.policy".into(),
        text: LAYER.to_string().into(),
        layer: Layer::Stdlib,
    });
    let image = leak(precompile(&base).expect("the layer precompiles"));
    let project = |text: &str| {
        let mut s = base.clone();
        s.push(PolicySource {
            name: ".contextos/policies/main.policy".into(),
            text: text.to_string().into(),
            layer: Layer::User,
        });
        s
    };
    let sources = project(PROJECT);
    assert_eq!(
        agree_on_a_set(image, &sources, &lazy(&[])),
        PrecompiledUse::Used
    );
    let full = build(&sources, &lazy(&[])).policy.expect("a set");
    let (pre, _) = build_precompiled(image, &sources, &lazy(&[]));
    let pre = pre.policy.expect("a set");
    let roles = pre.known_roles();
    for role in ["ci", "ops", "sre", "reviewer"] {
        assert!(roles.contains(role), "{role} in {roles:?}");
    }
    assert_eq!(roles, full.known_roles());
    let requests = [
        contextos_core::Request::exec(["deploy", "prod"]),
        contextos_core::Request::exec(["/usr/bin/git", "push", "--force"]),
        contextos_core::Request::exec(["git", "status"]),
        contextos_core::Request::path(contextos_core::PathOp::Write, "ops/x.yaml"),
    ];
    for role in [None, Some("ci"), Some("ops")] {
        for req in &requests {
            let req = req.clone().with_role(role.map(str::to_string));
            let (a, b) = (
                full.decide(&req, Default::default()),
                pre.decide(&req, Default::default()),
            );
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{req:?}");
        }
    }
    // A project rule that repeats an image rule's id is told where the image's is.
    let (out, _) = build_precompiled(
        image,
        &project("language 1;\n@id(\"img-glob\") deny path write \"a/**\" because \"taken\";\n"),
        &lazy(&[]),
    );
    let dup = out
        .diagnostics
        .iter()
        .find(|d| d.diagnostic.code == "E0106")
        .expect("the duplicate id is reported");
    assert!(
        dup.diagnostic.message.contains("stdlib/roles.policy:3"),
        "{}",
        dup.diagnostic.message
    );
}

#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! `detector` statements: compiled fields, layering, `disable`, and every diagnostic
//! (code and location).
mod common;
use common::*;
use contextos_core::detector::{CompiledDetector, DetectorKind, Severity};
use contextos_core::ir::Origin;
use contextos_core::*;

const POLICY: &str = r##"language 1;

let env_files = ["**/.env", "**/.env.*"];

@id("aws-access-key-id")
@severity(error)
detector secret """\b((?:AKIA|ASIA)[A-Z2-7]{16})\b""" {
    keywords: ["AKIA", "asia"],
    entropy: "3.0",
    allow: ["AKIAIOSFODNN7EXAMPLE"],
} because "An AWS access key id.";

@id("env-file")
@severity(warning)
detector file $env_files {
    exclude: ["**/.env.example", "**/.env.sample"],
} because "Environment files hold live credentials.";

@id("npmrc-token")
detector file "**/.npmrc" { content: """(?m)^\s*_authToken\s*=""" };

@id("python-not-implemented")
detector stub """\braise NotImplementedError\b""" {
    keywords: ["NotImplementedError"],
    paths: ["**/*.py"],
    exclude: ["**/*.pyi"],
    code_only: true,
    unless_before: """@(?:abc\.)?abstractmethod""",
    lookback: 6,
} because "An unfinished function body.";

@id("private-key")
detector secret "-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----" {
    keywords: ["private key"],
    group: 0,
    stopwords: ["example"],
    multiline: true,
} because "A private key block.";

detector stub """\btodo!\(\)""" { keywords: ["todo!"], unless_before: "#\\[test\\]" } because "A todo!() stub.";
"##;

fn origin(line: usize, col: usize, start: usize, end: usize) -> Origin {
    Origin {
        file: "main.policy".into(),
        line,
        col,
        start,
        end,
    }
}

fn blank(id: &str, kind: DetectorKind, o: Origin) -> CompiledDetector {
    CompiledDetector {
        id: id.into(),
        kind,
        severity: Severity::Error,
        message: String::new(),
        patterns: Vec::new(),
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
        checksum: None,
        case_sensitive: false,
        defer: false,
        ignore: None,
        code_only: false,
        unless_before: None,
        lookback: 0,
        origin: o,
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn span_of(needle: &str, end_needle: &str) -> (usize, usize) {
    let start = POLICY.find(needle).unwrap();
    let end = start + POLICY[start..].find(end_needle).unwrap() + end_needle.len();
    (start, end)
}

#[test]
fn detectors_compile_to_exactly_these_fields_in_declaration_order() {
    let set = set(POLICY);
    let d = set.detectors.get().unwrap();
    assert_eq!(d.len(), 6);

    let (s, e) = span_of("@id(\"aws-access-key-id\")", "id.\";");
    let mut want = blank(
        "aws-access-key-id",
        DetectorKind::Secret,
        origin(5, 1, s, e),
    );
    want.message = "An AWS access key id.".into();
    want.patterns = strings(&[r"\b((?:AKIA|ASIA)[A-Z2-7]{16})\b"]);
    want.keywords = strings(&["akia", "asia"]);
    want.min_entropy = Some(3.0);
    want.allow = strings(&["AKIAIOSFODNN7EXAMPLE"]);
    assert_eq!(d[0], want);

    let (s, e) = span_of("@id(\"env-file\")", "credentials.\";");
    let mut want = blank("env-file", DetectorKind::File, origin(13, 1, s, e));
    want.severity = Severity::Warning;
    want.message = "Environment files hold live credentials.".into();
    want.patterns = strings(&["**/.env", "**/.env.*"]);
    want.exclude = strings(&["**/.env.example", "**/.env.sample"]);
    assert_eq!(d[1], want);

    let (s, e) = span_of("@id(\"npmrc-token\")", "\"\"\" };");
    let mut want = blank("npmrc-token", DetectorKind::File, origin(19, 1, s, e));
    want.message = "matched detector npmrc-token".into();
    want.patterns = strings(&["**/.npmrc"]);
    want.content = Some(r"(?m)^\s*_authToken\s*=".into());
    assert_eq!(d[2], want);

    let (s, e) = span_of("@id(\"python-not-implemented\")", "body.\";");
    let mut want = blank(
        "python-not-implemented",
        DetectorKind::Stub,
        origin(22, 1, s, e),
    );
    want.message = "An unfinished function body.".into();
    want.patterns = strings(&[r"\braise NotImplementedError\b"]);
    want.keywords = strings(&["notimplementederror"]);
    want.paths = strings(&["**/*.py"]);
    want.exclude = strings(&["**/*.pyi"]);
    want.code_only = true;
    want.unless_before = Some(r"@(?:abc\.)?abstractmethod".into());
    want.lookback = 6;
    assert_eq!(d[3], want);

    let (s, e) = span_of("@id(\"private-key\")", "block.\";");
    let mut want = blank("private-key", DetectorKind::Secret, origin(32, 1, s, e));
    want.message = "A private key block.".into();
    // A plain string keeps its escapes: `\\s` is the regex `\s`.
    want.patterns =
        strings(&[r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"]);
    want.keywords = strings(&["private key"]);
    want.group = Some(0);
    want.stopwords = strings(&["example"]);
    want.multiline = true;
    assert_eq!(d[4], want);

    // No `@id`: `file:line`; `unless_before` without `lookback` looks back 3 lines.
    let (s, e) = span_of("detector stub \"\"\"\\btodo", "stub.\";");
    let mut want = blank("main.policy:40", DetectorKind::Stub, origin(40, 1, s, e));
    want.message = "A todo!() stub.".into();
    want.patterns = strings(&[r"\btodo!\(\)"]);
    want.keywords = strings(&["todo!"]);
    want.unless_before = Some(r"#\[test\]".into());
    want.lookback = build::DEFAULT_LOOKBACK;
    assert_eq!(d[5], want);
}

fn source(name: &str, text: &str, layer: Layer) -> PolicySource {
    PolicySource {
        name: name.into(),
        text: text.to_string().into(),
        layer,
    }
}

const STD: &str = "language 1;\n@id(\"std-a\") detector file \"**/id_rsa\" because \"a\";\n";
const PACK: &str = "language 1;\n@id(\"pack-b\") detector file \"**/*.p12\" because \"b\";\n";
const USER: &str = "language 1;\n@id(\"user-c\") detector file \"**/*.pem\" because \"c\";\n";

#[test]
fn layers_compile_in_order_packs_may_add_detectors_and_disable_applies() {
    let sources = [
        source("std.policy", STD, Layer::Stdlib),
        source("pack.policy", PACK, Layer::Plugin),
        source("main.policy", USER, Layer::User),
    ];
    let out = build(&sources, &BuildOptions::default());
    assert!(!out.has_errors());
    let ids: Vec<&str> = out
        .policy
        .as_ref()
        .unwrap()
        .detectors
        .get()
        .unwrap()
        .iter()
        .map(|d| d.id.as_str())
        .collect();
    assert_eq!(ids, ["std-a", "pack-b", "user-c"]);

    let out = build(
        &sources,
        &BuildOptions {
            disabled_rules: vec!["std-a".into()],
            lazy: false,
        },
    );
    assert!(!out.has_errors());
    // A detector id is a known id for `disable`: no W0205.
    assert!(
        !out.diagnostics.iter().any(|d| d.diagnostic.code == "W0205"),
        "{:?}",
        out.diagnostics
    );
    let ids: Vec<String> = out
        .policy
        .unwrap()
        .detectors
        .get()
        .unwrap()
        .iter()
        .map(|d| d.id.clone())
        .collect();
    assert_eq!(ids, ["pack-b", "user-c"]);
}

#[test]
fn a_duplicate_detector_id_is_an_error_across_layers() {
    let sources = [
        source("std.policy", STD, Layer::Stdlib),
        source(
            "main.policy",
            "language 1;\n\n@id(\"std-a\")\ndetector file \"x\" because \"c\";\n",
            Layer::User,
        ),
    ];
    let out = build(&sources, &BuildOptions::default());
    let errs: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].diagnostic.code, "E0128");
    assert_eq!(errs[0].file, 1);
    let lc = out.files[1].line_col(errs[0].diagnostic.span.start);
    assert_eq!((lc.line, lc.col), (3, 1));
    assert!(errs[0].diagnostic.message.contains("std.policy:2:1"));
    assert!(out.policy.is_none());
}

fn one(src: &str) -> (&'static str, usize, usize) {
    let e = errors(src);
    assert_eq!(e.len(), 1, "expected exactly one error, got {e:?}");
    e[0]
}

fn help(src: &str) -> String {
    let out = compile_user(src);
    out.diagnostics
        .iter()
        .find(|d| d.diagnostic.is_error())
        .map(|d| out.render(d))
        .unwrap_or_default()
}

#[test]
fn unknown_kind_suggests_one() {
    let src = "language 1;\ndetector secrets \"a\" { keywords: [\"a\"] };";
    assert_eq!(one(src), ("E0122", 2, 10));
    assert!(
        help(src).contains("did you mean `secret`?"),
        "{}",
        help(src)
    );
}

#[test]
fn unknown_and_repeated_keys() {
    let src = "language 1;\ndetector secret \"a\" { keyword: [\"a\"], keywords: [\"a\"] };";
    assert_eq!(one(src), ("E0123", 2, 23));
    assert!(help(src).contains("did you mean `keywords`?"));
    // A key of another kind says which kind takes it.
    let src = "language 1;\ndetector file \"a\" { lookback: 2 };";
    assert_eq!(one(src), ("E0123", 2, 21));
    assert!(help(src).contains("`lookback` applies to stub detectors"));
    let src = "language 1;\ndetector stub \"a\" { keywords: [\"a\"], keywords: [\"b\"] };";
    assert_eq!(one(src), ("E0123", 2, 38));
}

#[test]
fn values_of_the_wrong_type() {
    // (body, the offending value)
    let cases = [
        ("keywords: \"a\"", "\"a\""),
        ("keywords: [\"a\"], allow: true", "true"),
        ("keywords: [\"a\"], group: \"1\"", "\"1\""),
        ("keywords: [\"a\"], entropy: 3", "3"),
        ("keywords: [\"a\"], entropy: \"9\"", "\"9\""),
        ("keywords: [\"a\"], entropy: \"high\"", "\"high\""),
        ("keywords: [\"a\"], multiline: \"yes\"", "\"yes\""),
        ("keywords: [\"\"]", "[\"\"]"),
        ("keywords: [\"a\"], checksum: \"crc\"", "\"crc\""),
        ("keywords: [\"a\"], checksum: true", "true"),
        ("keywords: [\"a\"], ignore: [\"x\"]", "[\"x\"]"),
    ];
    for (body, value) in cases {
        let line = format!("detector secret \"(a)\" {{ {body} }};");
        let col = line.rfind(value).unwrap() + 1;
        let src = format!("language 1;\n{line}");
        assert_eq!(one(&src), ("E0124", 2, col), "{src}");
    }
    let src =
        "language 1;\ndetector secret \"a\" { keywords: [\"a\"], stopwords: [\"x\", $nope] };";
    assert_eq!(one(src).0, "E0105");
    let src = "language 1;\ndetector stub \"a\" { keywords: [\"a\"], lookback: 99999999999 };";
    assert_eq!(one(src), ("E0124", 2, 48));
    let src = "language 1;\ndetector file \"a\" { content: [\"x\"] };";
    assert_eq!(one(src), ("E0124", 2, 30));
    let src = "language 1;\nlet none = [];\ndetector file $none;";
    assert_eq!(one(src), ("E0124", 3, 15));
    let src = "language 1;\ndetector file \"a\" { case_sensitive: \"yes\" };";
    assert_eq!(one(src), ("E0124", 2, 37));
    let src = "language 1;\ndetector secret \"a\" { keywords: [\"a\"], checksum: \"github-crc\" };";
    assert!(
        help(src).contains("did you mean `github-crc32`?"),
        "{}",
        help(src)
    );
}

#[test]
fn checksum_ignore_and_case_sensitive_compile() {
    let src = "language 1;\n@id(\"g\")\ndetector secret \"a\" { keywords: [\"a\"], checksum: \"github-crc32\", ignore: \"(?i)csrf\" };\n@id(\"f\")\ndetector file \"**/*.p12\" { case_sensitive: true };";
    let out = contextos_core::build(
        &[contextos_core::PolicySource {
            name: "t.policy".into(),
            text: src.into(),
            layer: contextos_core::Layer::User,
        }],
        &contextos_core::BuildOptions::default(),
    );
    let policy = out.policy.expect("compiles");
    let g = policy
        .detectors
        .get()
        .unwrap()
        .iter()
        .find(|d| d.id == "g")
        .unwrap();
    assert_eq!(
        g.checksum,
        Some(contextos_core::detector::Checksum::GithubCrc32)
    );
    assert_eq!(g.ignore.as_deref(), Some("(?i)csrf"));
    let f = policy
        .detectors
        .get()
        .unwrap()
        .iter()
        .find(|d| d.id == "f")
        .unwrap();
    assert!(f.case_sensitive);
}

#[test]
fn invalid_regexes_point_at_the_pattern_with_the_regex_message() {
    let src = "language 1;\ndetector secret \"ok\", \"\"\"(unclosed\"\"\" { keywords: [\"a\"] };";
    assert_eq!(one(src), ("E0125", 2, 23));
    let rendered = help(src);
    assert!(
        rendered.contains("invalid regex: unclosed group"),
        "{rendered}"
    );
    let src = "language 1;\ndetector file \"x\" { content: \"[z-a]\" };";
    assert_eq!(one(src), ("E0125", 2, 30));
    let src =
        "language 1;\ndetector stub \"x\" {\n    keywords: [\"x\"],\n    unless_before: \"(\",\n};";
    assert_eq!(one(src), ("E0125", 4, 20));
    // Too big for the size limit.
    let src = "language 1;\ndetector secret \"\\\\w{1000}\\\\w{1000}\" { keywords: [\"a\"] };";
    assert_eq!(one(src).0, "E0125");
}

#[test]
fn secret_and_stub_detectors_need_keywords() {
    let src = "language 1;\ndetector secret \"a\" because \"x\";";
    assert_eq!(one(src), ("E0126", 2, 10));
    assert!(help(src).contains("keeps `scan --staged` fast"));
    let src = "language 1;\ndetector stub \"a\" { keywords: [] };";
    assert_eq!(one(src), ("E0126", 2, 31));
    // `file` detectors take no keywords at all.
    let src = "language 1;\ndetector file \"a\" { keywords: [\"a\"] };";
    assert_eq!(one(src), ("E0123", 2, 21));
}

#[test]
fn group_must_exist_in_every_pattern() {
    let src = "language 1;\ndetector secret \"(a)(b)\", \"(c)\" { keywords: [\"a\"], group: 2 };";
    assert_eq!(one(src), ("E0127", 2, 59));
    assert!(
        help(src).contains("`(c)` has 1 capture group"),
        "{}",
        help(src)
    );
    let ok =
        "language 1;\ndetector secret \"(a)(b)\" { keywords: [\"a\"], group: 2 } because \"x\";";
    assert_eq!(set(ok).detectors.get().unwrap()[0].group, Some(2));
}

#[test]
fn keywords_are_lower_cased_for_ascii_only() {
    // The prefilter is ASCII case-insensitive, so only ASCII letters are folded.
    let src = "language 1;\ndetector stub \"x\" { keywords: [\"ÄBC_Def\"] } because \"x\";";
    assert_eq!(set(src).detectors.get().unwrap()[0].keywords, ["Äbc_def"]);
}

#[test]
fn file_detectors_take_globs() {
    let src = "language 1;\ndetector file \"src/[a\" because \"x\";";
    assert_eq!(one(src), ("E0112", 2, 15));
    assert!(help(src).contains("globs, not regexes"));
    // Regex syntax a glob would take literally.
    for pattern in [r"^\.env", r"\.env$", r"(?i)x", r"\d+\.key", r"**/\w"] {
        let src = format!("language 1;\ndetector file \"\"\"{pattern}\"\"\" because \"x\";");
        assert_eq!(one(&src), ("E0112", 2, 15), "{pattern}");
        assert!(help(&src).contains("looks like a regex"), "{}", help(&src));
    }
    let ok =
        "language 1;\ndetector file \"**/.env.*\", \"**/price\\\\$\", \"**/*.p12\" because \"x\";";
    assert_eq!(
        set(ok).detectors.get().unwrap()[0].patterns[1],
        r"**/price\$"
    );
    let src = "language 1;\ndetector stub \"a\" { keywords: [\"a\"], paths: [\"[\"] };";
    assert_eq!(one(src), ("E0112", 2, 45));
}

#[test]
fn annotations_are_checked_as_on_rules() {
    let src = "language 1;\n@owner(\"me\")\ndetector file \"a\";";
    assert_eq!(one(src), ("E0107", 2, 2));
    let src = "language 1;\n@severity(info)\ndetector file \"a\";";
    assert_eq!(one(src), ("E0107", 2, 11));
    let src = "language 1;\n@id(\"a b\")\ndetector file \"a\";";
    assert_eq!(one(src), ("E0107", 2, 5));
    let src = "language 1;\n@id(\"a\") @id(\"b\")\ndetector file \"a\";";
    assert_eq!(one(src), ("E0107", 2, 10));
}

#[test]
fn a_detector_inside_a_role_is_an_error() {
    let src =
        "language 1;\nrole dev {\n    @id(\"x\")\n    detector file \"a\" because \"b\";\n}\n";
    assert_eq!(one(src), ("E0121", 3, 5));
}

#[test]
fn detectors_survive_the_snapshot() {
    let s = set(POLICY);
    let bytes = s.to_snapshot().unwrap();
    let back = PolicySet::from_snapshot(&bytes).unwrap();
    assert_eq!(back.detectors.get().unwrap(), s.detectors.get().unwrap());
}

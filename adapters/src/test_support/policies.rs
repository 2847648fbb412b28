//! Policy sets the emitter tests compile, and readers for what an emitter produced.

use crate::{Content, Emitted};
use contextos_core::build::{build, BuildOptions, PolicySource};
use contextos_core::ir::Layer;
use contextos_core::policy::PolicySet;

pub(crate) const STD: [(&str, &str); 4] = [
    (
        "defaults.policy",
        include_str!("../../../stdlib-policies/policies/defaults.policy"),
    ),
    (
        "exec-baseline.policy",
        include_str!("../../../stdlib-policies/policies/exec-baseline.policy"),
    ),
    (
        "plugins.policy",
        include_str!("../../../stdlib-policies/policies/plugins.policy"),
    ),
    (
        "self-protection.policy",
        include_str!("../../../stdlib-policies/policies/self-protection.policy"),
    ),
];

/// A user policy exercising guides (plain, scoped, braced, role), roles, an exec allow,
/// a conditioned deny, a script rule and a sandboxed allow.
pub(crate) const USER: &str = r#"language 1;

let secrets = ["**/.env", "**/*.pem", "secrets/**"];

@id("no-secret-writes")
@severity(error)
deny path write, delete $secrets
    unless path matches "**/.env.example"
    because "Secret material never changes through an agent.";

@id("migrations-append-only")
@severity(error)
deny path write, delete "migrations/*.sql"
    because "Migrations are append-only; add a new one.";

@id("no-delete-docs")
deny path delete "docs/**" because "Docs are archived, not deleted.";

@id("lockfiles-need-review")
ask path write "Cargo.lock"
    when role != "maintainer"
    because "Dependency changes need a human.";

@id("no-force-push")
@severity(error)
deny exec "git push --force *", "git push -f *"
    because "Force pushes rewrite shared history.";

@id("make-release")
ask exec "make release"
    because "Releases need a human.";

@id("no-curl-insecure")
deny exec "curl -*k*" because "TLS checks stay on.";

@id("fmt-ok")
allow exec "cargo fmt *", "just *"
    because "Formatting is safe.";

@id("tests-in-sandbox")
allow exec "cargo nextest run *"
    with sandbox { network: none }
    because "Tests run in the sandbox.";

@id("npm-when-offline")
allow exec "npm ci *" when role == "ci" because "CI installs.";

@id("argv-sanity")
deny exec "*" when script {
    argv.len() > 64
} because "Suspicious arguments.";

role reviewer {
    @id("reviewers-never-edit")
    deny path write, delete "**" because "Reviewers comment; they never edit.";

    @id("reviewers-run-tests")
    allow exec "cargo test *", "git diff *" because "Reviewers run tests.";

    @id("review-focus")
    guide "What to look for" for "src/**" {
        """
        Check error handling on every I/O path.
        """
    }
}

@id("layering")
guide "Service layering" for "src/api/**", "src/{handlers,routes}/**" {
    """
    Handlers call services; services never import handlers.

    - Database access lives in `src/repo/`.
    """
}

@id("commit-style")
guide "Commit messages" {
    "Write the subject in the imperative mood."
}
"#;

fn compile_sources(sources: Vec<PolicySource>) -> PolicySet {
    let out = build(&sources, &BuildOptions::default());
    let errors: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| out.render(d))
        .collect();
    match out.policy {
        Some(p) => p,
        None => panic!("policies did not compile:\n{}", errors.join("\n")),
    }
}

/// One policy source.
fn source(name: &str, text: &str, layer: Layer) -> PolicySource {
    PolicySource {
        name: name.into(),
        text: text.to_string().into(),
        layer,
    }
}

/// [`STD`] as stdlib sources.
fn std_sources() -> Vec<PolicySource> {
    STD.iter()
        .map(|(n, t)| source(n, t, Layer::Stdlib))
        .collect()
}

/// The stdlib alone.
pub(crate) fn stdlib() -> PolicySet {
    compile_sources(std_sources())
}

/// The stdlib plus [`USER`].
pub(crate) fn full() -> PolicySet {
    let mut sources = std_sources();
    sources.push(source("main.policy", USER, Layer::User));
    compile_sources(sources)
}

/// A small user policy alone (it declares its own defaults).
pub(crate) fn small(src: &str) -> PolicySet {
    let text = format!(
        "language 1;\ndefault path = allow;\ndefault exec = ask;\n\
         default plugin = deny;\ndefault commit = allow;\n{src}"
    );
    compile_sources(vec![source("main.policy", &text, Layer::User)])
}

/// What the emitter produced for `path`.
pub(crate) fn content<'e>(e: &'e Emitted, path: &str) -> Option<&'e Content> {
    e.outputs
        .iter()
        .find(|o| o.path == path)
        .map(|o| &o.content)
}

/// The managed block the emitter produced for `path`.
pub(crate) fn block_text(e: &Emitted, path: &str) -> String {
    match content(e, path) {
        Some(Content::Block { text }) => text.clone(),
        other => panic!("{path}: expected a block, got {other:?}"),
    }
}

/// The whole file the emitter produced for `path`.
pub(crate) fn whole_text(e: &Emitted, path: &str) -> String {
    match content(e, path) {
        Some(Content::Whole { text }) => text.clone(),
        other => panic!("{path}: expected a whole file, got {other:?}"),
    }
}

#![allow(
    dead_code,
    clippy::panic,
    reason = "helpers shared by several test crates; each uses a part, and a helper fails its test loudly"
)]
use contextos_core::*;

pub fn compile_user(src: &str) -> BuildOutput {
    build(
        &[PolicySource {
            name: "main.policy".into(),
            text: src.to_string().into(),
            layer: Layer::User,
        }],
        &BuildOptions::default(),
    )
}

pub fn set(src: &str) -> PolicySet {
    let out = compile_user(src);
    let rendered: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| out.render(d))
        .collect();
    match out.policy {
        Some(p) => p,
        None => panic!("policy did not compile:\n{}", rendered.join("\n")),
    }
}

/// (code, line, col) of every error.
pub fn errors(src: &str) -> Vec<(&'static str, usize, usize)> {
    let out = compile_user(src);
    out.diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| {
            let lc = out.files[d.file].line_col(d.diagnostic.span.start);
            (d.diagnostic.code, lc.line, lc.col)
        })
        .collect()
}

pub fn path(set: &PolicySet, op: PathOp, p: &str, role: Option<&str>) -> Decision {
    set.decide(
        &Request::path(op, p).with_role(role.map(String::from)),
        EvalOptions { explain: true },
    )
}

pub fn exec(set: &PolicySet, argv: &[&str]) -> Decision {
    set.decide(
        &Request::exec(argv.iter().copied()),
        EvalOptions { explain: true },
    )
}

/// The embedded standard library's files, as the policy cache passes them to the compiler.
pub fn stdlib_sources() -> Vec<PolicySource> {
    contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource::embedded_stdlib(name, text))
        .collect()
}

//! Package managers and toolchains: subcommands, install sources (URLs, git
//! repositories, custom indexes and registries), and the options that make them run
//! other programs (`cargo --config target.….runner=…`).

use super::effects::Out;
use crate::options::{listed, model, options, parse, Parsed, Spec};

/// An install source that is fetched from the network rather than a registry by
/// name: a URL, a git repository, a hosted shorthand (`github:u/r`).
pub(super) fn is_remote_source(s: &str) -> bool {
    let s = s.split_once('@').map_or(s, |(name, rest)| {
        // `name@https://…` (pip, npm aliases) or `pkg@1.2`.
        if rest.contains("://") || rest.starts_with("git+") {
            rest
        } else if name.is_empty() {
            s
        } else {
            name
        }
    });
    s.contains("://")
        || s.starts_with("git+")
        || s.starts_with("git@")
        || ["github:", "gitlab:", "bitbucket:", "gist:"]
            .iter()
            .any(|p| s.starts_with(p))
}

/// Reports `s` as a network destination when it is a remote install source.
pub(super) fn package_source(s: &str, out: &mut Out) {
    if is_remote_source(s) {
        let url = s
            .split_once(" @ ")
            .or_else(|| s.split_once('@').filter(|(_, r)| r.contains("://")))
            .map_or(s, |(_, u)| u);
        out.net(url.trim());
    }
}

const CARGO_GLOBAL: Spec = Spec {
    posix: true,
    ..model(
        "Vvqh",
        "ZC",
        "version list verbose quiet locked offline frozen help",
        "explain color config",
    )
};

const CARGO_SUB: Spec = Spec {
    negatable: false,
    ..model(
        "rvqhfn",
        "pFj",
        "workspace all lib bins examples tests benches all-targets all-features \
            no-default-features release ignore-rust-version future-incompat-report \
            unit-graph build-plan locked offline frozen verbose quiet keep-going timings \
            no-run no-fail-fast doc open no-deps document-private-items force list \
            no-track debug dev build optional no-optional dry-run allow-dirty \
            allow-staged allow-no-vcs broken-code edition-idioms fix check aggressive \
            recursive workspace-only breaking incompatible-rust-versions \
            all-features bin lib vcs-none no-verify no-metadata frozen help",
        "package exclude bin example test bench features target target-dir profile \
            manifest-path message-format jobs color config lockfile-path artifact-dir \
            out-dir git branch tag rev path root index registry version vers token \
            vcs edition name rename precise limit depth prefix format charset edges \
            invert duplicates unit-graph-depth",
    )
};

/// `cargo [+TOOLCHAIN] [GLOBAL] SUBCOMMAND …`: `--config KEY=VALUE` (or a config
/// file) may set the programs cargo runs; install sources from git are network.
pub(super) fn cargo(args: &[String], out: &mut Out) {
    let mut args = args;
    if let Some((tc, rest)) = args.split_first().filter(|(t, _)| t.starts_with('+')) {
        out.options([tc.clone()]);
        args = rest;
    }
    let g = parse(args, &CARGO_GLOBAL);
    out.parsed(&g, &[('v', "verbose"), ('q', "quiet")]);
    g.values('C', "").for_each(|d| out.chdir(d));
    cargo_config(&g, out);
    let Some((sub, rest)) = g.operands.split_first() else {
        return;
    };
    out.subcommand(sub);
    let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let p = parse(&rest, &CARGO_SUB);
    let known = listed(
        "build b check c test t run r bench doc d clean new init add remove rm update \
            search publish install uninstall fmt clippy fix tree vendor package metadata \
            login logout owner yank help fetch generate-lockfile locate-project pkgid \
            report rustc rustdoc verify-project version info miri nextest",
        sub,
    );
    if known {
        out.options(p.normalised(&[
            ('p', "package"),
            ('F', "features"),
            ('r', "release"),
            ('j', "jobs"),
            ('v', "verbose"),
            ('q', "quiet"),
            ('f', "force"),
            ('n', "dry-run"),
        ]));
        out.unknown_options(p.unlisted.iter().cloned());
    } else {
        // An external `cargo-SUB` program: its options are not known.
        out.options(p.normalised(&[]));
        out.unmodelled();
    }
    out.operands(p.operands());
    cargo_config(&p, out);
    p.values('\0', "git").for_each(|u| out.net(u));
    p.values('\0', "index").for_each(|u| out.net(u));
    out.reads(p.values('\0', "manifest-path"));
    match *sub {
        "install" => {
            out.reads(p.values('\0', "path"));
            out.writes(p.values('\0', "root"));
        }
        "new" | "init" => out.writes(p.operands().take(1)),
        "add" => p.operands().for_each(|s| package_source(s, out)),
        _ => {}
    }
}

/// Config keys naming a program cargo runs.
fn cargo_runs(key: &str) -> bool {
    let key = key.trim().trim_matches('"');
    let last = key.rsplit('.').next().unwrap_or(key);
    matches!(
        last,
        "runner"
            | "linker"
            | "rustc-wrapper"
            | "rustc-workspace-wrapper"
            | "rustc"
            | "rustdoc"
            | "credential-provider"
            | "global-credential-providers"
    ) || key.starts_with("alias.")
        || key.starts_with("env.")
        || key.starts_with("target.") && key.ends_with("rustflags")
        || key.contains("rustflags")
}

fn cargo_config(p: &Parsed<'_>, out: &mut Out) {
    for c in p.values('\0', "config") {
        match c.split_once('=') {
            Some((key, _)) => {
                if cargo_runs(key) {
                    out.opaque(format!(
                        "'cargo --config {}' sets a program cargo runs",
                        key.trim()
                    ));
                }
            }
            // A config file: what it sets is not visible here.
            None => {
                out.read(c);
                out.opaque(format!("'cargo --config {c}' reads settings from a file"));
            }
        }
    }
}

/// npm's subcommand aliases.
fn npm_command(sub: &str) -> &str {
    match sub {
        "i" | "in" | "ins" | "inst" | "insta" | "instal" | "isnt" | "isnta" | "isntal"
        | "isntall" | "add" => "install",
        "ci" | "clean-install" | "ic" | "install-clean" | "isntall-clean" => "ci",
        "un" | "uninstall" | "unlink" | "remove" | "rm" | "r" => "uninstall",
        "x" => "exec",
        "run-script" | "rum" | "urn" => "run",
        "t" | "tst" => "test",
        "up" | "upgrade" | "udpate" => "update",
        "it" | "cit" | "install-ci-test" => "install-ci-test",
        "c" => "config",
        "ln" => "link",
        other => other,
    }
}

/// npm/pnpm/yarn/bun options taking a value (the rest are flags; npm accepts any
/// `--key value` for its config, so this list only steers where values end).
const NPM: Spec = options(
    "Cwc",
    "registry prefix workspace tag otp cache userconfig globalconfig loglevel scope \
        access save-prefix omit include install-strategy script-shell node-options \
        package call filter dir cwd modules-folder cache-folder network-timeout \
        mutex https-proxy proxy before lockfile-dir store-dir virtual-store-dir reporter \
        config",
    "",
);

/// npm, pnpm, yarn: the subcommand (aliases resolved), install sources from the
/// network, `--registry`; `exec`/`dlx` run a package; `--call`/`-c` is a shell line.
pub(super) fn npm(name: &str, args: &[String], out: &mut Out) {
    let p = parse(args, &NPM);
    out.options(p.normalised(&[('C', "dir"), ('w', "workspace"), ('c', "call")]));
    p.values('\0', "registry").for_each(|r| out.net(r));
    for l in ["proxy", "https-proxy"] {
        p.values('\0', l).for_each(|r| out.net(r));
    }
    if p.values('c', "call").next().is_some() {
        out.opaque(format!("'{name} --call' runs a shell command"));
    }
    if p.values('\0', "script-shell").next().is_some() {
        out.opaque(format!(
            "'{name} --script-shell' sets the program running scripts"
        ));
    }
    let mut ops = p.operands.clone();
    let sub = match (name, ops.first().copied()) {
        // `yarn` alone installs; `yarn NAME` runs a script.
        ("yarn", None) => "install",
        (_, Some(s)) => {
            ops.remove(0);
            if name == "npm" {
                npm_command(s)
            } else {
                s
            }
        }
        (_, None) => return,
    };
    out.subcommand(sub);
    if matches!(sub, "exec" | "dlx" | "create" | "init") && name != "yarn" || sub == "dlx" {
        // The first operand is the package run.
        ops.iter().take(1).for_each(|s| package_source(s, out));
        p.values('\0', "package")
            .for_each(|s| package_source(s, out));
    }
    out.operands(ops.iter().copied());
    if matches!(sub, "install" | "add" | "ci" | "update" | "link") {
        ops.iter().for_each(|s| package_source(s, out));
        for s in &ops {
            if s.starts_with(['.', '/']) || s.starts_with("file:") {
                out.read(s.trim_start_matches("file:"));
            }
        }
    }
}

/// npx, bunx, pnpx: the package run and its arguments.
pub(super) fn npx(name: &str, args: &[String], out: &mut Out) {
    let spec = Spec {
        posix: true,
        ..options("pc", "package call registry", "")
    };
    let p = parse(args, &spec);
    out.options(p.normalised(&[('p', "package"), ('c', "call")]));
    if p.values('c', "call").next().is_some() {
        out.opaque(format!("'{name} --call' runs a shell command"));
    }
    p.values('\0', "registry").for_each(|r| out.net(r));
    p.values('p', "package")
        .for_each(|s| package_source(s, out));
    out.operands(p.operands());
    p.operands().take(1).for_each(|s| package_source(s, out));
}

const PIP: Spec = Spec {
    negatable: false,
    ..options(
        "rceitfCb",
        "requirement constraint editable index-url extra-index-url find-links \
            trusted-host target prefix root platform python-version implementation abi \
            progress-bar report config-settings global-option proxy cert client-cert \
            timeout retries exists-action log cache-dir src upgrade-strategy \
            root-user-action python only-binary no-binary build-option index keyring-provider \
            default-index with from python-platform group extra",
        "user upgrade no-deps pre force-reinstall no-cache-dir no-index quiet verbose \
            break-system-packages no-build-isolation require-hashes dry-run isolated \
            ignore-installed disable-pip-version-check no-warn-script-location compile \
            no-compile prefer-binary use-pep517 no-use-pep517 system",
    )
};

/// pip, pip3, uv, pipx, poetry, pdm: the subcommand path, install sources from the
/// network, custom indexes (`-i`, `--index-url`, `--extra-index-url`), and the
/// requirement files read.
pub(super) fn pip(args: &[String], out: &mut Out) {
    let p = parse(args, &PIP);
    out.options(p.normalised(&[
        ('r', "requirement"),
        ('c', "constraint"),
        ('e', "editable"),
        ('i', "index-url"),
        ('f', "find-links"),
        ('t', "target"),
        ('U', "upgrade"),
        ('q', "quiet"),
        ('v', "verbose"),
    ]));
    for l in [
        "index-url",
        "extra-index-url",
        "find-links",
        "index",
        "default-index",
        "proxy",
    ] {
        let short = match l {
            "index-url" => 'i',
            "find-links" => 'f',
            _ => '\0',
        };
        for v in p.values(short, l) {
            if v.contains("://") {
                out.net(v);
            } else if l == "find-links" {
                out.read(v);
            } else {
                out.net(v);
            }
        }
    }
    out.reads(
        p.values('r', "requirement")
            .chain(p.values('c', "constraint")),
    );
    out.writes(p.values('\0', "report").chain(p.values('\0', "log")));
    for e in p.values('e', "editable") {
        if is_remote_source(e) {
            package_source(e, out);
        } else {
            out.read(e);
        }
    }
    p.values('\0', "from").for_each(|s| package_source(s, out));
    p.values('\0', "with").for_each(|s| package_source(s, out));
    let mut ops = p.operands.clone();
    // `uv pip install`, `uv tool install`, `pipx run`.
    let mut subs = Vec::new();
    while let Some(first) = ops.first().copied() {
        let word = listed(
            "install uninstall download wheel freeze list show check config cache debug \
                hash inspect index search completion help pip tool add remove sync lock \
                run venv python tree export build publish init self upgrade reinstall \
                ensurepath inject upgrade-all runpip environment",
            first,
        );
        if !word || subs.len() >= 2 {
            break;
        }
        out.subcommand(first);
        subs.push(first);
        ops.remove(0);
    }
    out.operands(ops.iter().copied());
    let installs = subs.iter().any(|s| {
        matches!(
            *s,
            "install" | "download" | "wheel" | "add" | "run" | "inject"
        )
    });
    if installs {
        for s in &ops {
            package_source(s, out);
            if s.starts_with(['.', '/']) {
                out.read(s);
            }
        }
    }
}

/// uvx (`uv tool run`): the tool run, `--from SOURCE`, `--with`, `--index`.
pub(super) fn uvx(args: &[String], out: &mut Out) {
    let spec = Spec { posix: true, ..PIP };
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    p.values('\0', "from").for_each(|s| package_source(s, out));
    p.values('\0', "with").for_each(|s| package_source(s, out));
    for l in ["index-url", "extra-index-url", "index", "default-index"] {
        p.values('\0', l).for_each(|v| out.net(v));
    }
    out.operands(p.operands());
    p.operands().take(1).for_each(|s| package_source(s, out));
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(packages);
}

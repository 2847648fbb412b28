//! Environment variables that change no program's behaviour in a way a policy cares
//! about: logging, colour, locale, time zone, CI markers. A command run with any other
//! assignment (`LD_PRELOAD`, `GIT_PAGER`, `GIT_CONFIG_*`, `RUSTC_WRAPPER`, `PATH`,
//! `NODE_OPTIONS`, `HUSKY`, `SKIP`, …) does more than its words say, so an allow of its
//! words is not answered as an allow.

/// Names whose value only changes output, locale or verbosity.
const INERT: &[&str] = &[
    "RUST_LOG",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_TEST_THREADS",
    "RUST_MIN_STACK",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_TERM_QUIET",
    "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM",
    "CI",
    "TZ",
    "LANG",
    "LANGUAGE",
    "DEBUG",
    "VERBOSE",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONWARNINGS",
    "PYTEST_ADDOPTS_NOCOLOR",
    "GOFLAGS_NOCOLOR",
    "INSTA_UPDATE",
    "INSTA_FORCE_PASS_NOCOLOR",
    "PROPTEST_CASES",
    "RAYON_NUM_THREADS",
    "OMP_NUM_THREADS",
    "TOKIO_WORKER_THREADS",
    "GOMAXPROCS",
    "JOBS",
    "MAKEFLAGS_NOCOLOR",
];

/// Whether the assignment `NAME=value` (or `NAME+=value`) is inert.
pub fn is_inert(assignment: &str) -> bool {
    let name = assignment
        .split_once('=')
        .map_or(assignment, |(n, _)| n)
        .trim_end_matches('+');
    INERT.contains(&name) || name.starts_with("LC_")
}

#[cfg(test)]
mod tests {
    use super::is_inert;

    #[test]
    fn only_harmless_names_are_inert() {
        for a in [
            "RUST_LOG=debug",
            "LC_ALL=C",
            "NO_COLOR=1",
            "CI=true",
            "TZ=UTC",
        ] {
            assert!(is_inert(a), "{a}");
        }
        for a in [
            "LD_PRELOAD=/tmp/x.so",
            "GIT_PAGER=sh -c id",
            "GIT_CONFIG_COUNT=1",
            "RUSTC_WRAPPER=/tmp/w",
            "PATH=/tmp:/usr/bin",
            "NODE_OPTIONS=--require /tmp/x.js",
            "HUSKY=0",
            "SKIP=lint",
            "BASH_ENV=/tmp/x",
            "PAGER=less",
        ] {
            assert!(!is_inert(a), "{a}");
        }
    }
}

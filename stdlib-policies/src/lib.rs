//! The ContextOS standard library: policies written in the policy language itself and
//! embedded in the binary, so `contextos` works with no configuration at all.

/// `(name, source)` of every stdlib policy file, in load order. A `static`, so every
/// borrow of a text is the same address (the policy cache's key knows them by it).
pub static FILES: &[(&str, &str)] = &[
    (
        "stdlib/defaults.policy",
        include_str!("../policies/defaults.policy"),
    ),
    (
        "stdlib/exec-baseline.policy",
        include_str!("../policies/exec-baseline.policy"),
    ),
    (
        "stdlib/destructive.policy",
        include_str!("../policies/destructive.policy"),
    ),
    (
        "stdlib/supply-chain.policy",
        include_str!("../policies/supply-chain.policy"),
    ),
    (
        "stdlib/persistence.policy",
        include_str!("../policies/persistence.policy"),
    ),
    (
        "stdlib/credentials.policy",
        include_str!("../policies/credentials.policy"),
    ),
    (
        "stdlib/self-protection.policy",
        include_str!("../policies/self-protection.policy"),
    ),
    (
        "stdlib/plugins.policy",
        include_str!("../policies/plugins.policy"),
    ),
    (
        "stdlib/secrets.policy",
        include_str!("../policies/secrets.policy"),
    ),
    (
        "stdlib/secrets-infra.policy",
        include_str!("../policies/secrets-infra.policy"),
    ),
    (
        "stdlib/secrets-services.policy",
        include_str!("../policies/secrets-services.policy"),
    ),
    (
        "stdlib/blocked-files.policy",
        include_str!("../policies/blocked-files.policy"),
    ),
    (
        "stdlib/stubs.policy",
        include_str!("../policies/stubs.policy"),
    ),
    (
        "stdlib/commit.policy",
        include_str!("../policies/commit.policy"),
    ),
    (
        "stdlib/hidden-effects.policy",
        include_str!("../policies/hidden-effects.policy"),
    ),
    (
        "stdlib/egress.policy",
        include_str!("../policies/egress.policy"),
    ),
    ("stdlib/mcp.policy", include_str!("../policies/mcp.policy")),
    (
        "stdlib/sandbox.policy",
        include_str!("../policies/sandbox.policy"),
    ),
];

/// The compiler's state after reading [`FILES`], made by `contextos_core::build::precompile`
/// and checked in: a cold compile (an agent hook's first call after an edit) plants it
/// instead of parsing and lowering the files again. It is used only while it matches
/// [`FILES`] byte for byte, so a stale image costs time, never a different policy; the
/// test that keeps it current is `core/tests/precompiled.rs` (run it with
/// `CONTEXTOS_BLESS=1` to write a new image after editing a policy file).
///
/// A `static`, not a `const`: a snapshot refers to the image's detectors only when they
/// are these very bytes, recognised by address, and a `const` may be copied at each use.
pub static PRECOMPILED: &[u8] = include_bytes!("../precompiled/stdlib.bin");

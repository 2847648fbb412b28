//! The ContextOS standard library: policies written in the policy language itself and
//! embedded in the binary, so `contextos` works with no configuration at all.

/// `(name, source)` of every stdlib policy file, in load order.
pub const FILES: &[(&str, &str)] = &[
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

//! Trusted-keys files (`.contextos/trusted-keys.toml`), the trust root of plugin
//! signatures: any text parses or is rejected without a panic; an accepted file holds
//! only keys whose id is their own, with distinct ids and a non-empty validity window.
//! With a first byte of 0 the rest is instead `glob\0name` for the scope matcher and an
//! RFC 3339 time, which must never panic or backtrack without bound.
#![no_main]

use contextos_plugins::keys::{glob_match, parse, parse_rfc3339_utc};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if mode == 0 {
        let (glob, name) = text.split_once('\0').unwrap_or((text, text));
        let matched = glob_match(glob, name);
        if !glob.contains(['*', '?']) {
            assert_eq!(
                matched,
                glob == name,
                "a glob without wildcards is not an exact match"
            );
        }
        if glob.chars().all(|c| c == '*') && !glob.is_empty() {
            assert!(matched, "`{glob}` does not match `{name}`");
        }
        if let Some(t) = parse_rfc3339_utc(name) {
            assert!(t < 253_402_300_800, "{name} is past year 9999: {t}");
        }
        return;
    }
    let Ok(keys) = parse(text, "trusted-keys.toml") else {
        return;
    };
    for (i, k) in keys.keys.iter().enumerate() {
        assert_eq!(k.id, k.public_key.key_id(), "a key listed under another id");
        assert!(
            !keys.keys[..i].iter().any(|o| o.id == k.id),
            "two keys share the id {}",
            k.id
        );
        if let (Some(nb), Some(na)) = (k.not_before, k.not_after) {
            assert!(nb <= na, "an empty validity window was accepted");
        }
        let _ = k.scope_allows("acme-guard");
        assert!(keys.get(&k.id).is_some());
    }
});

//! The oracle parser (pest running the normative grammar `policy.pest`, with the
//! diagnostics and recovery of `grammar/tests/oracle`) on any text: no panic, and an
//! accepted file yields no error diagnostic.
#![no_main]

#[path = "../../grammar/tests/oracle/mod.rs"]
mod oracle;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let out = oracle::parse_pest(src);
    if out.has_errors() {
        assert!(
            out.diagnostics.iter().any(|d| d.is_error()),
            "rejected without an error diagnostic"
        );
    }
});

//! The production parser against the oracle (pest on the normative grammar): whenever
//! either accepts a file, both accept it and build the same AST.
#![no_main]

#[path = "../../grammar/tests/oracle/mod.rs"]
mod oracle;

use contextos_grammar::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let fast = parse(src);
    let pest = oracle::parse_pest(src);
    assert_eq!(
        fast.has_errors(),
        pest.has_errors(),
        "only one parser accepts:\n---\n{src}\n---\nfast: {:#?}\npest: {:#?}",
        fast.diagnostics,
        pest.diagnostics
    );
    if !fast.has_errors() {
        assert_eq!(fast.file, pest.file, "the ASTs differ:\n---\n{src}\n---");
    }
});

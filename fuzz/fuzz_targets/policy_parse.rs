//! The production policy parser and the formatter on any text: no panic; an accepted
//! file formats to text that parses to the same statements and formats to itself.
#![no_main]

use contextos_grammar::{format_source, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse(src);
    if parsed.has_errors() {
        assert!(
            format_source(src).is_err(),
            "the formatter accepts what the parser rejects"
        );
        return;
    }
    let formatted = match format_source(src) {
        Ok(f) => f,
        Err(d) => panic!("the parser accepts, the formatter rejects: {d:?}"),
    };
    let again = parse(&formatted);
    assert!(
        !again.has_errors(),
        "formatted text does not parse:\n{formatted}\n{:?}",
        again.diagnostics
    );
    assert_eq!(
        parsed.file.statements.len(),
        again.file.statements.len(),
        "formatting changed the number of statements:\n{formatted}"
    );
    assert_eq!(
        format_source(&formatted).ok().as_deref(),
        Some(formatted.as_str()),
        "formatting is not idempotent"
    );
});

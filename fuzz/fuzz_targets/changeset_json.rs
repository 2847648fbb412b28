//! JSON changesets (`contextos apply`): any text is parsed or rejected without a panic,
//! and an accepted changeset reads back to the same changes after a re-serialisation
//! through serde_json's value model.
#![no_main]

use contextos::fuzzing::changeset_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(changes) = changeset_json(text) else {
        return;
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        panic!("a changeset was accepted that is not JSON");
    };
    let again = changeset_json(&value.to_string());
    assert_eq!(
        again.as_ref(),
        Ok(&changes),
        "re-serialised changeset differs"
    );
});

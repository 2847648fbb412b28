//! Plugin signatures and public keys. The first byte picks what the rest is: 0 an SPKI
//! PEM public key (parsed or rejected; a parsed key re-encodes to itself); 1 a signature
//! string checked against a genuine key and payload; 2 edits (offset, xor) to the
//! genuine signature. No panic, and nothing verifies but the genuine signature itself
//! (its high-S twin included: it is refused).
#![no_main]

use contextos_plugins::signature::{check_form, high_s_twin, payload, sign, verify};
use contextos_plugins::{PublicKey, SecretKey};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Genuine {
    public: PublicKey,
    payload: Vec<u8>,
    signature: String,
}

fn genuine() -> &'static Genuine {
    static G: OnceLock<Genuine> = OnceLock::new();
    G.get_or_init(|| {
        let secret = SecretKey::generate();
        let payload = payload(
            "acme-guard",
            "1.2.0",
            &format!("sha256:{}", "ab".repeat(32)),
            5,
        );
        let signature = sign(&secret, &payload);
        let public = secret.public();
        assert!(verify(&public, &payload, &signature).is_ok());
        let twin = high_s_twin(&signature).unwrap_or_else(|| panic!("no twin"));
        assert!(
            verify(&public, &payload, &twin).is_err(),
            "the high-S twin verifies"
        );
        Genuine {
            public,
            payload,
            signature,
        }
    })
}

fn only_genuine_verifies(g: &Genuine, sig: &str) {
    let form = check_form(sig);
    let verified = verify(&g.public, &g.payload, sig);
    if verified.is_ok() {
        assert!(form.is_ok(), "verifies but is not well-formed");
        assert_eq!(
            sig, g.signature,
            "a signature other than the genuine one verifies"
        );
    }
    if let Some(twin) = high_s_twin(sig) {
        if form.is_ok() {
            assert!(
                check_form(&twin).is_err(),
                "both members of a twin pair are low-S"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let g = genuine();
    match mode % 3 {
        0 => {
            let Ok(pem) = std::str::from_utf8(rest) else {
                return;
            };
            if let Ok(key) = PublicKey::from_spki_pem(pem) {
                let again = key.to_spki_pem().unwrap_or_else(|e| panic!("{e}"));
                let back = PublicKey::from_spki_pem(&again).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(back.key_id(), key.key_id());
                assert!(verify(&key, &g.payload, &g.signature).is_err() || key == g.public);
            }
        }
        1 => {
            if let Ok(sig) = std::str::from_utf8(rest) {
                only_genuine_verifies(g, sig);
            }
        }
        _ => {
            let mut sig = g.signature.clone().into_bytes();
            for e in rest.chunks_exact(2) {
                let at = usize::from(e[0]) % sig.len();
                sig[at] ^= e[1];
            }
            if let Ok(sig) = String::from_utf8(sig) {
                only_genuine_verifies(g, &sig);
            }
        }
    }
});

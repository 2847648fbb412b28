//! ECDSA P-256 (SHA-256) signatures over a domain-separated plugin payload.
//!
//! The signed bytes are built from the pin's fields directly ([`payload`]); nothing is
//! re-serialised from TOML or JSON, so a verifier and a signer cannot disagree about
//! what was signed. Signatures travel as standard padded base64 of the 64-byte `r || s`.
//!
//! p256 0.13 verifies the high-S twin (`s' = n − s`) of a valid signature and may sign
//! with a high `s`, so [`sign`] normalises to low-S and [`verify`] refuses high-S
//! explicitly: one signature per payload, no malleated copies that look "new".

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _, EncodePrivateKey as _};
use p256::pkcs8::{EncodePublicKey as _, LineEnding};
use sha2::{Digest as _, Sha256};
use std::fmt;

/// First line of every payload; a signature made for anything else cannot verify here.
pub const DOMAIN: &str = "contextos-plugin-v1";

/// The exact signed bytes:
/// `contextos-plugin-v1\nname=<name>\nversion=<version>\ndigest=<digest>\nsequence=<sequence>\n`.
///
/// The fields are not escaped: callers must keep `\n` out of them (the pins parser
/// refuses control characters, and verification refuses to check a payload whose name or
/// version holds one), or two different entries could share a payload.
pub fn payload(name: &str, version: &str, digest: &str, sequence: u64) -> Vec<u8> {
    format!("{DOMAIN}\nname={name}\nversion={version}\ndigest={digest}\nsequence={sequence}\n")
        .into_bytes()
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigError {
    /// Not base64, not 64 bytes, or `r`/`s` zero or not below the group order.
    #[error("malformed signature: {0}")]
    Malformed(&'static str),
    /// A high-S signature (the malleated twin of a low-S one).
    #[error("signature is not in low-S form")]
    HighS,
    #[error("signature does not verify")]
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFormatError {
    #[error("invalid PKCS#8 private key PEM: {0}")]
    Private(String),
    #[error("invalid SPKI public key PEM: {0}")]
    Public(String),
    #[error("cannot encode key: {0}")]
    Encode(String),
}

/// A signing key. Its `Debug` shows only the key id, so it never lands in a log.
#[derive(Clone)]
pub struct SecretKey(SigningKey);

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretKey")
            .field("key_id", &self.public().key_id())
            .finish_non_exhaustive()
    }
}

/// A fresh key from the operating system's randomness.
pub fn generate() -> SecretKey {
    SecretKey::generate()
}

impl SecretKey {
    /// A fresh key from the operating system's randomness.
    pub fn generate() -> Self {
        SecretKey(SigningKey::random(&mut rand_core::OsRng))
    }

    pub fn to_pkcs8_pem(&self) -> Result<String, KeyFormatError> {
        self.0
            .to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.as_str().to_string())
            .map_err(|e| KeyFormatError::Encode(e.to_string()))
    }

    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyFormatError> {
        SigningKey::from_pkcs8_pem(pem)
            .map(SecretKey)
            .map_err(|e| KeyFormatError::Private(e.to_string()))
    }

    pub fn public(&self) -> PublicKey {
        PublicKey(*self.0.verifying_key())
    }
}

/// A verifying key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    pub fn to_spki_pem(&self) -> Result<String, KeyFormatError> {
        self.0
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| KeyFormatError::Encode(e.to_string()))
    }

    pub fn from_spki_pem(pem: &str) -> Result<Self, KeyFormatError> {
        VerifyingKey::from_public_key_pem(pem)
            .map(PublicKey)
            .map_err(|e| KeyFormatError::Public(e.to_string()))
    }

    /// First 16 lowercase hex digits of sha256 of the SEC1 compressed point. Always
    /// computed from the key itself: an id given alongside a key is only ever compared
    /// with this, never believed.
    pub fn key_id(&self) -> String {
        let point = self.0.to_encoded_point(true);
        Sha256::digest(point.as_bytes())
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Signs `payload`; standard padded base64 of `r || s`, always low-S.
pub fn sign(key: &SecretKey, payload: &[u8]) -> String {
    let sig: Signature = key.0.sign(payload);
    let sig = sig.normalize_s().unwrap_or(sig);
    B64.encode(sig.to_bytes())
}

fn decode(sig_b64: &str) -> Result<Signature, SigError> {
    let raw = B64
        .decode(sig_b64)
        .map_err(|_| SigError::Malformed("not standard padded base64"))?;
    if raw.len() != 64 {
        return Err(SigError::Malformed("not 64 bytes (r || s)"));
    }
    Signature::from_slice(&raw)
        .map_err(|_| SigError::Malformed("r or s is zero or not below the group order"))
}

/// The key-independent checks of [`verify`]: well-formed and low-S.
pub fn check_form(sig_b64: &str) -> Result<(), SigError> {
    decode_low_s(sig_b64).map(|_| ())
}

fn decode_low_s(sig_b64: &str) -> Result<Signature, SigError> {
    let sig = decode(sig_b64)?;
    // p256 would accept the twin; `normalize_s` is Some exactly when `s` is high.
    if sig.normalize_s().is_some() {
        return Err(SigError::HighS);
    }
    Ok(sig)
}

/// Verifies `sig_b64` over `payload`: well-formed, low-S, then the ECDSA check.
pub fn verify(key: &PublicKey, payload: &[u8], sig_b64: &str) -> Result<(), SigError> {
    let sig = decode_low_s(sig_b64)?;
    key.0.verify(payload, &sig).map_err(|_| SigError::Invalid)
}

/// The other member of `sig_b64`'s malleability pair (`s` replaced by `n − s`), for
/// tests that must show a high-S copy is refused. `None` when `sig_b64` is malformed.
#[doc(hidden)]
pub fn high_s_twin(sig_b64: &str) -> Option<String> {
    let sig = decode(sig_b64).ok()?;
    let twin = Signature::from_scalars(sig.r(), -sig.s()).ok()?;
    Some(B64.encode(twin.to_bytes()))
}

#[cfg(test)]
mod tests {

    use super::*;

    fn msg() -> Vec<u8> {
        payload(
            "acme-guard",
            "1.2.0",
            &format!("sha256:{}", "ab".repeat(32)),
            5,
        )
    }

    #[test]
    fn payload_is_exact() {
        assert_eq!(
            payload("n", "1.0.0", "sha256:00", 7),
            b"contextos-plugin-v1\nname=n\nversion=1.0.0\ndigest=sha256:00\nsequence=7\n"
        );
    }

    #[test]
    fn round_trip() {
        let k = SecretKey::generate();
        let s = sign(&k, &msg());
        assert_eq!(B64.decode(&s).unwrap().len(), 64);
        verify(&k.public(), &msg(), &s).unwrap();
    }

    #[test]
    fn tampered_payload_is_invalid() {
        let k = generate();
        let s = sign(&k, &msg());
        let mut m = msg();
        if let Some(b) = m.last_mut() {
            *b ^= 1;
        }
        assert_eq!(verify(&k.public(), &m, &s), Err(SigError::Invalid));
        let other = payload(
            "acme-guard",
            "1.2.1",
            &format!("sha256:{}", "ab".repeat(32)),
            5,
        );
        assert_eq!(verify(&k.public(), &other, &s), Err(SigError::Invalid));
    }

    #[test]
    fn other_domain_is_invalid() {
        let k = generate();
        let m = msg();
        let foreign = [b"other-domain-v1".as_slice(), &m[DOMAIN.len()..]].concat();
        let s = sign(&k, &foreign);
        assert_eq!(verify(&k.public(), &m, &s), Err(SigError::Invalid));
    }

    #[test]
    fn wrong_key_is_invalid() {
        let s = sign(&generate(), &msg());
        assert_eq!(
            verify(&generate().public(), &msg(), &s),
            Err(SigError::Invalid)
        );
    }

    #[test]
    fn high_s_twin_is_refused_although_p256_accepts_it() {
        let k = generate();
        let s = sign(&k, &msg());
        let twin = high_s_twin(&s).unwrap();
        assert_ne!(twin, s);
        assert_eq!(verify(&k.public(), &msg(), &twin), Err(SigError::HighS));
        // The library alone would take it: the explicit check is what refuses it.
        let raw = Signature::from_slice(&B64.decode(&twin).unwrap()).unwrap();
        assert!(k.public().0.verify(&msg(), &raw).is_ok());
        // The twin of the twin is the original.
        assert_eq!(high_s_twin(&twin).unwrap(), s);
    }

    #[test]
    fn sign_is_always_low_s() {
        // p256 produced high-S for one of two keys when measured; many keys and
        // messages make it all but certain that normalisation was exercised.
        for i in 0..32u64 {
            let k = generate();
            let m = payload("p", "1.0.0", "sha256:00", i);
            let s = sign(&k, &m);
            let raw = Signature::from_slice(&B64.decode(&s).unwrap()).unwrap();
            assert!(raw.normalize_s().is_none());
            verify(&k.public(), &m, &s).unwrap();
        }
    }

    #[test]
    fn malformed_signatures() {
        let k = generate();
        let s = sign(&k, &msg());
        let raw = B64.decode(&s).unwrap();
        let n_bytes = {
            // The group order n: r = n is out of range.
            let mut v =
                hex_decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
            v.extend_from_slice(&raw[32..]);
            B64.encode(v)
        };
        for bad in [
            String::new(),
            "not base64!".to_string(),
            s.trim_end_matches('=').to_string(),
            B64.encode(&raw[..63]),
            B64.encode([raw.as_slice(), &[0]].concat()),
            B64.encode([0u8; 64]),
            B64.encode([[0u8; 32].as_slice(), &raw[32..]].concat()),
            n_bytes,
            format!(" {s}"),
        ] {
            assert!(
                matches!(
                    verify(&k.public(), &msg(), &bad),
                    Err(SigError::Malformed(_))
                ),
                "{bad:?}"
            );
        }
        assert_eq!(high_s_twin("nope"), None);
    }

    fn hex_decode(h: &str) -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn key_id_is_stable_16_hex() {
        let k = generate();
        let id = k.public().key_id();
        assert_eq!(id.len(), 16);
        assert!(id.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')));
        assert_eq!(id, k.public().key_id());
        let pem = k.public().to_spki_pem().unwrap();
        assert_eq!(PublicKey::from_spki_pem(&pem).unwrap().key_id(), id);
        assert_ne!(generate().public().key_id(), id);
        // Pinned against an independent computation for a fixed key.
        let fixed = SecretKey(SigningKey::from_slice(&[7u8; 32]).unwrap());
        let point = fixed.public().0.to_encoded_point(true);
        assert_eq!(point.as_bytes().len(), 33);
        assert_eq!(
            fixed.public().key_id(),
            hex(&Sha256::digest(point.as_bytes())[..8])
        );
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn pem_round_trips() {
        let k = generate();
        let sk_pem = k.to_pkcs8_pem().unwrap();
        assert!(sk_pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        let k2 = SecretKey::from_pkcs8_pem(&sk_pem).unwrap();
        assert_eq!(k2.public(), k.public());
        let pk_pem = k.public().to_spki_pem().unwrap();
        assert!(pk_pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert_eq!(PublicKey::from_spki_pem(&pk_pem).unwrap(), k.public());
        // A signature from the reloaded key verifies under the original public key.
        verify(&k.public(), &msg(), &sign(&k2, &msg())).unwrap();
        assert!(matches!(
            PublicKey::from_spki_pem(&sk_pem),
            Err(KeyFormatError::Public(_))
        ));
        assert!(matches!(
            SecretKey::from_pkcs8_pem(&pk_pem),
            Err(KeyFormatError::Private(_))
        ));
        // Debug never shows the secret.
        let dbg = format!("{k:?}");
        assert!(dbg.contains(&k.public().key_id()));
        assert!(!dbg.contains(&sk_pem[30..60]));
    }
}

//! The user's secret key: 32 random bytes kept outside every repository, so a project's
//! own files (or an agent editing them) cannot forge what the key authenticates — the
//! decision log's head and the compiled-policy cache.
//!
//! The file holds 64 lowercase hex digits and a newline, mode `0600`, in a directory
//! created `0700`. A key readable by anyone else is refused, not used. Each use derives
//! its own key with [`UserKey::derive`] (or, for the decision log's head, which predates
//! derivation, uses the key itself), so a MAC made for one purpose never verifies for
//! another.

use crate::atomic_write::{self, Publish};
use hmac::digest::core_api::BlockSizeUser;
use hmac::digest::generic_array::GenericArray;
use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use rand_core::{OsRng, RngCore as _};
use sha2::Sha256;
use std::fs::{DirBuilder, File};
use std::io::Read as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

const KEY_MODE: u32 = 0o600;

#[derive(Debug, thiserror::Error)]
pub enum UserKeyError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("{path}: the user key is accessible to other users (mode {mode:03o}); run `chmod 600` on it")]
    Permissions { path: PathBuf, mode: u32 },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> UserKeyError + '_ {
    move |source| UserKeyError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn invalid(path: &Path, reason: &str) -> UserKeyError {
    UserKeyError::Invalid {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// The key itself. Its `Debug` never shows the bytes.
pub struct UserKey([u8; 32]);

impl std::fmt::Debug for UserKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserKey(..)")
    }
}

/// `$XDG_STATE_HOME/contextos/log.key`, else `~/.local/state/contextos/log.key`. Relative
/// values are ignored, as the XDG spec requires. (The name predates the key's second use.)
pub fn default_path() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".local").join("state")))
        .map(|base| base.join("contextos").join("log.key"))
}

impl UserKey {
    /// The key at `path`; `Ok(None)` when the file does not exist. Never creates it.
    pub fn load(path: &Path) -> Result<Option<UserKey>, UserKeyError> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(path)(e)),
        };
        let meta = file.metadata().map_err(io(path))?;
        if !meta.is_file() {
            return Err(invalid(path, "the user key is not a regular file"));
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(UserKeyError::Permissions {
                path: path.to_path_buf(),
                mode,
            });
        }
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(io(path))?;
        let digits = text.trim_end_matches('\n');
        let lowercase = digits
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let mut bytes = [0u8; 32];
        if !lowercase || hex::decode_to_slice(digits, &mut bytes).is_err() {
            return Err(invalid(
                path,
                "the user key must be 64 lowercase hex digits",
            ));
        }
        Ok(Some(UserKey(bytes)))
    }

    /// The key at `path`, created on first use. Concurrent first uses race through
    /// [`Publish::IfAbsent`], which never replaces, so every process ends up with the
    /// one key that won.
    pub fn load_or_create(path: &Path) -> Result<UserKey, UserKeyError> {
        if let Some(key) = Self::load(path)? {
            return Ok(key);
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .ok_or_else(|| invalid(path, "the key path has no directory"))?;
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(dir))?;
        let mut key = [0u8; 32];
        OsRng
            .try_fill_bytes(&mut key)
            .map_err(|e| io(path)(std::io::Error::other(e.to_string())))?;
        let mut text = hex::encode(key);
        text.push('\n');
        atomic_write::write(path, text.as_bytes(), KEY_MODE, Publish::IfAbsent)
            .map_err(io(path))?;
        Self::load(path)?.ok_or_else(|| invalid(path, "the user key vanished after creation"))
    }

    /// The key at [`default_path`], created on first use; `None` when there is no home
    /// to keep it in or it cannot be read or made (callers then run unauthenticated).
    pub fn load_or_create_default() -> Option<UserKey> {
        default_path().and_then(|p| Self::load_or_create(&p).ok())
    }

    /// A key for one `purpose` only: HMAC-SHA256 of the purpose under the user key.
    pub fn derive(&self, purpose: &[u8]) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as KeyInit>::new(&self.hmac_block());
        mac.update(purpose);
        mac.finalize().into_bytes().into()
    }

    /// An HMAC-SHA256 keyed with the raw key, for the decision log's head.
    pub(crate) fn raw_mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new(&self.hmac_block())
    }

    /// The key zero-padded to SHA-256's block, which is exactly how HMAC treats a shorter
    /// key: the same MAC as keying with the 32 bytes, without a fallible length check.
    fn hmac_block(&self) -> GenericArray<u8, <Sha256 as BlockSizeUser>::BlockSize> {
        let mut block = GenericArray::default();
        block[..32].copy_from_slice(&self.0);
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap();
        m.update(msg);
        m.finalize().into_bytes().into()
    }

    #[test]
    fn padding_the_key_to_the_block_is_the_same_hmac() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k").join("log.key");
        let key = UserKey::load_or_create(&path).unwrap();
        let purpose = b"contextos policy cache v1";
        assert_eq!(key.derive(purpose), reference_hmac(&key.0, purpose));
        let mut raw = key.raw_mac();
        raw.update(b"x");
        assert_eq!(
            <[u8; 32]>::from(raw.finalize().into_bytes()),
            reference_hmac(&key.0, b"x")
        );
        assert_ne!(key.derive(b"a"), key.derive(b"b"));
    }

    #[test]
    fn the_key_file_is_private_and_created_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join("contextos").join("log.key");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || UserKey::load_or_create(&path).unwrap().0)
            })
            .collect();
        let keys: Vec<[u8; 32]> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(keys.windows(2).all(|w| w[0] == w[1]));
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let parent = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(parent.permissions().mode() & 0o777, 0o700);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{}\n", hex::encode(keys[0])));
        assert!(format!("{:?}", UserKey::load(&path).unwrap()).contains(".."));
    }

    #[test]
    fn a_malformed_or_shared_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.key");
        assert!(UserKey::load(&path).unwrap().is_none());
        for text in ["AB".repeat(32), "ab".repeat(31), "zz".repeat(32)] {
            std::fs::write(&path, format!("{text}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            assert!(
                matches!(UserKey::load(&path), Err(UserKeyError::Invalid { .. })),
                "{text}"
            );
        }
        std::fs::write(&path, format!("{}\n", "ab".repeat(32))).unwrap();
        assert!(UserKey::load(&path).unwrap().is_some());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
        assert!(matches!(
            UserKey::load(&path),
            Err(UserKeyError::Permissions { mode: 0o604, .. })
        ));
    }
}

//! A list a snapshot keeps as bytes until someone reads it.
//!
//! The stdlib's secret detectors are most of a policy snapshot (454 of them, with their
//! regexes and keywords), and decoding them was the largest single cost of loading one —
//! thousands of allocations — in a hook process that, deciding a shell command, never
//! looks at a detector. A [`LazyList`] read from a snapshot decodes on first use instead.
//! Bytes that do not decode are an error on every read, never an empty list: a scan
//! or an egress check that lost its detectors must refuse, not pass.

use crate::section::Section;
use std::sync::OnceLock;

/// A list decoded from snapshot bytes on first read, or built decoded.
pub struct LazyList<T> {
    /// The encoded list (postcard), when it came from a snapshot.
    bytes: Option<Section>,
    decoded: OnceLock<Result<Vec<T>, String>>,
}

impl<T> LazyList<T> {
    /// A list already decoded (what `build` produces).
    pub fn new(items: Vec<T>) -> Self {
        LazyList {
            bytes: None,
            decoded: OnceLock::from(Ok(items)),
        }
    }

    /// A list still encoded in a snapshot's body.
    pub(crate) fn encoded(bytes: Section) -> Self {
        LazyList {
            bytes: Some(bytes),
            decoded: OnceLock::new(),
        }
    }
}

impl<T> LazyList<T> {
    /// The encoding the list came in when the binary itself holds it (a precompiled
    /// stdlib's), which is what encoding it again would write. `None` for a list built
    /// decoded or read from a snapshot: bytes from a file are re-encoded only once they
    /// have decoded, so damage in them can never be copied into a new snapshot.
    pub(crate) fn encoding(&self) -> Option<crate::frozen::Bytes> {
        self.bytes
            .as_ref()
            .and_then(Section::bytes)
            .filter(crate::frozen::Bytes::is_static)
    }
}

impl<T: serde::de::DeserializeOwned> LazyList<T> {
    /// The items, decoded now if they were not; an error when the snapshot bytes do not
    /// decode (damage the cache's MAC should have caught), the same error on every call.
    pub fn get(&self) -> Result<&[T], String> {
        self.decoded
            .get_or_init(|| match &self.bytes {
                Some(s) => match s.bytes() {
                    Some(b) => postcard::from_bytes(b.as_slice()).map_err(|e| e.to_string()),
                    None => Err("the snapshot's detectors cannot be read".to_string()),
                },
                // Unreachable by construction (`new` fills the cell); an empty list would
                // be the fail-open answer, so it is an error too.
                None => Err("the list was neither built nor encoded".to_string()),
            })
            .as_deref()
            .map_err(Clone::clone)
    }
}

impl<T> Default for LazyList<T> {
    fn default() -> Self {
        LazyList::new(Vec::new())
    }
}

impl<T> From<Vec<T>> for LazyList<T> {
    fn from(items: Vec<T>) -> Self {
        LazyList::new(items)
    }
}

impl<T> std::fmt::Debug for LazyList<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.decoded.get() {
            Some(Ok(items)) => write!(f, "LazyList({} decoded)", items.len()),
            Some(Err(e)) => write!(f, "LazyList(damaged: {e})"),
            None => write!(f, "LazyList(encoded)"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn decodes_on_first_read_and_keeps_the_result() {
        let bytes = postcard::to_stdvec(&vec!["a".to_string(), "b".to_string()]).unwrap();
        let l: LazyList<String> =
            LazyList::encoded(Section::Held(crate::frozen::Bytes::new(Arc::new(bytes))));
        assert_eq!(format!("{l:?}"), "LazyList(encoded)");
        assert_eq!(l.get().unwrap(), ["a", "b"]);
        assert_eq!(format!("{l:?}"), "LazyList(2 decoded)");
    }

    #[test]
    fn damaged_bytes_are_an_error_on_every_read_never_an_empty_list() {
        let mut bytes = postcard::to_stdvec(&vec!["abc".to_string()]).unwrap();
        bytes.truncate(bytes.len() - 1);
        let l: LazyList<String> =
            LazyList::encoded(Section::Held(crate::frozen::Bytes::new(Arc::new(bytes))));
        assert!(l.get().is_err());
        assert!(l.get().is_err());
    }

    #[test]
    fn only_the_binarys_own_bytes_are_offered_for_copying() {
        let bytes = postcard::to_stdvec(&vec!["a".to_string()]).unwrap();
        let from_file: LazyList<String> = LazyList::encoded(Section::Held(
            crate::frozen::Bytes::new(Arc::new(bytes.clone())),
        ));
        assert!(from_file.encoding().is_none());
        let embedded: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let own: LazyList<String> =
            LazyList::encoded(Section::Held(crate::frozen::Bytes::of_static(embedded)));
        assert_eq!(own.encoding().unwrap().as_slice(), embedded);
        assert!(LazyList::new(vec!["a".to_string()]).encoding().is_none());
    }
}

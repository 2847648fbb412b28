//! Key and certificate tools: the key, certificate and output files they write.

use super::effects::Out;
use crate::options::{options, parse};

pub(super) fn ssh_keygen(args: &[String], out: &mut Out) {
    let p = parse(args, &options("abCDEfFgIjJmMnNOPrRstVwYzZ", "", ""));
    // Print, fingerprint, search and conversion modes only read.
    if "BDeFilLQy".chars().any(|c| p.has_short(c)) {
        return;
    }
    let files: Vec<&str> = p.values('f', "").collect();
    // Signing and resident-key download write next to other files; without -f the
    // key path is prompted for.
    if files.is_empty() || "AKsY".chars().any(|c| p.has_short(c)) {
        out.unknown();
    }
    let generates = !"cHkpRu".chars().any(|c| p.has_short(c));
    for f in files {
        out.write(f);
        if generates {
            out.write(&format!("{f}.pub"));
        }
    }
}

/// `openssl … -out F` (and `-keyout`, `-outdir`, `-certout`).
pub(super) fn openssl(args: &[String], out: &mut Out) {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if matches!(
            a.trim_start_matches('-'),
            "out" | "keyout" | "outdir" | "certout"
        ) {
            out.writes(it.next().map(String::as_str));
        }
    }
}

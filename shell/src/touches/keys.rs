//! Key and certificate tools: the key, certificate and output files they write.

use super::effects::Out;
use crate::options::{options, parse};

pub(super) fn ssh_keygen(args: &[String], out: &mut Out) {
    let p = parse(args, &options("abCDEfFgIjJmMnNOPrRstVwYzZ", "", ""));
    out.options(p.normalised(&[]));
    // Print, fingerprint, search and conversion modes only read.
    if "BDeFilLQy".chars().any(|c| p.has_short(c)) {
        out.reads(p.values('f', ""));
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

/// `openssl SUBCOMMAND … -out F` (and `-keyout`, `-outdir`, `-certout`) writes;
/// `-in`, keys, certificates and `-passin file:F` are read; `s_client -connect` is
/// network.
pub(super) fn openssl(args: &[String], out: &mut Out) {
    const READS: &str = "in key inkey CAfile CA CAkey cert config signkey certfile extfile \
        untrusted kfile paramfile peerkey sigfile prverify verify CRL cert_chain \
        chainCAfile verifyCAfile reqin infiles";
    let mut it = args.iter();
    if let Some(sub) = args.first().filter(|s| !s.starts_with('-')) {
        out.subcommand(sub);
        it.next();
    }
    while let Some(a) = it.next() {
        let name = a.trim_start_matches('-');
        if !a.starts_with('-') {
            out.operands([a.as_str()]);
            continue;
        }
        if matches!(name, "out" | "keyout" | "outdir" | "certout" | "reqout") {
            out.writes(it.next().map(String::as_str));
        } else if crate::options::listed(READS, name) {
            out.reads(it.next().map(String::as_str));
        } else if matches!(name, "passin" | "passout" | "pass" | "kfile") {
            if let Some(v) = it.next() {
                out.reads(v.strip_prefix("file:"));
            }
        } else if matches!(name, "connect" | "proxy") {
            out.nets(it.next().map(String::as_str));
        } else {
            out.options([a.clone()]);
        }
    }
}

//! Plugin archives as `contextos plugin add` unpacks them. The first byte picks the
//! form: 0 the rest is a `.tar`; 1 the rest is a tar that the target gzips (`.tar.gz`);
//! 2 the rest is a `.tgz` as is (the gzip decoder itself). Whatever the archive holds
//! (links, devices, huge or negative sizes, absolute or `..` names), unpacking never
//! panics, writes nothing outside the staging directory, and leaves no link, device or
//! set-id file behind.
#![no_main]

use contextos::fuzzing::extract_plugin_archive;
use flate2::write::GzEncoder;
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Every path under `dir` (not following links), with its metadata checked.
fn check_tree(base: &Path, dir: &Path, allowed_top: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let rel = path.strip_prefix(base).unwrap_or(&path);
        let top = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            allowed_top.contains(&top.as_str()),
            "unpacking wrote {} outside the staging directory",
            rel.display()
        );
        let ty = meta.file_type();
        assert!(
            ty.is_dir() || ty.is_file(),
            "unpacking left {} that is neither a file nor a directory",
            rel.display()
        );
        assert_eq!(
            meta.permissions().mode() & 0o7000,
            0,
            "unpacking left {} set-id or sticky",
            rel.display()
        );
        if ty.is_dir() {
            check_tree(base, &path, allowed_top);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(work) = tempfile::tempdir() else {
        return;
    };
    let base = work.path();
    let (name, bytes) = match mode % 3 {
        0 => ("in.tar", rest.to_vec()),
        1 => {
            let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
            if gz.write_all(rest).is_err() {
                return;
            }
            let Ok(bytes) = gz.finish() else {
                return;
            };
            ("in.tar.gz", bytes)
        }
        _ => ("in.tgz", rest.to_vec()),
    };
    let archive = base.join(name);
    std::fs::write(&archive, &bytes).unwrap_or_else(|e| panic!("{e}"));
    let staging = base.join("pack");
    let _ = extract_plugin_archive(&archive, &staging);
    // `pack.inner` holds a single top-level directory while it is moved up.
    check_tree(base, base, &[name, "pack", "pack.inner"]);
});

//! What the whole-process sandbox benches share: a probe image assembled from host
//! binaries (no registry is reachable) and the timing helpers.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub fn die(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(2);
}

pub fn append(tar: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8], mode: u32, dir: bool) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(if dir {
        tar::EntryType::Directory
    } else {
        tar::EntryType::Regular
    });
    h.set_mode(mode);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_size(data.len() as u64);
    if tar
        .append_data(&mut h, path.trim_start_matches('/'), data)
        .is_err()
    {
        die("cannot build the image tar");
    }
}

pub fn host_binary(name: &str) -> PathBuf {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| die(&format!("{name} is not on this host")))
}

pub fn libraries(bin: &Path) -> Vec<PathBuf> {
    let ldd = Command::new("ldd")
        .arg(bin)
        .output()
        .unwrap_or_else(|e| die(&format!("ldd: {e}")));
    String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// Imports, as `tag`, a root filesystem with `/bin/sh` (the host's dash: a session
/// container's main process), `/bin/true`, their libraries and a passwd file.
pub fn image(tag: &str) -> String {
    let bins = [
        ("/bin/sh", host_binary("dash")),
        ("/bin/true", host_binary("true")),
    ];
    let mut libs = std::collections::BTreeSet::new();
    for (_, b) in &bins {
        libs.extend(libraries(b));
    }
    let mut tar = tar::Builder::new(Vec::new());
    let mut dirs = std::collections::BTreeSet::new();
    for l in &libs {
        let mut d = l.parent();
        while let Some(p) = d.filter(|p| *p != Path::new("/")) {
            dirs.insert(p.display().to_string());
            d = p.parent();
        }
    }
    dirs.extend(["/bin".to_string(), "/etc".to_string(), "/tmp".to_string()]);
    for d in &dirs {
        append(&mut tar, &format!("{d}/"), &[], 0o755, true);
    }
    for l in &libs {
        let data = std::fs::read(l).unwrap_or_else(|e| die(&format!("{}: {e}", l.display())));
        append(&mut tar, &l.display().to_string(), &data, 0o755, false);
    }
    for (dest, src) in &bins {
        let data = std::fs::read(src).unwrap_or_else(|e| die(&format!("{e}")));
        append(&mut tar, dest, &data, 0o755, false);
    }
    append(
        &mut tar,
        "/etc/passwd",
        b"nobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n",
        0o644,
        false,
    );
    let bytes = tar.into_inner().unwrap_or_else(|_| die("tar"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| die(&format!("{e}")));
    let file = dir.path().join("rootfs.tar");
    std::fs::write(&file, &bytes).unwrap_or_else(|e| die(&format!("{e}")));
    let ok = Command::new("docker")
        .args(["import", &file.display().to_string(), tag])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        die("docker import failed: the bench needs a running Docker Engine");
    }
    tag.to_string()
}

pub fn time(cmd: &mut Command) -> f64 {
    let start = Instant::now();
    let status = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status();
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if !status.is_ok_and(|s| s.success()) {
        die(&format!("{cmd:?} failed"));
    }
    ms
}

pub fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

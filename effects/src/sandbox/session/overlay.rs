//! Overlay mode: the project is the read-only lower layer of a Docker `local` volume of
//! `type=overlay`, with the upper and work directories in the session's scratch area.
//! The upper directory *is* the changeset: regular files (written or copied up),
//! whiteouts (char devices 0:0: deletions), opaque directories (`user.overlay.opaque`
//! = `y` with `userxattr`: every lower entry beneath is hidden).
//!
//! The upper directory is only ever modified while the container is stopped: changing
//! an overlay's layers under a live mount is undefined, and a restart remounts the
//! volume so the lower layer is read afresh (a host rename over a cached lower file
//! otherwise stays invisible).

use super::changes::{observe_file, odd_reason, Obs};
use super::state::Entry;
use crate::sandbox::runner::SandboxError;
use crate::sandbox::spec::{SESSION_LABEL, SESSION_STATE_LABEL};
use bollard::models::VolumeCreateRequest;
use bollard::Docker;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::fs::{DirBuilderExt as _, FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

const OPAQUE: &str = "user.overlay.opaque";

/// The scratch layout of an overlay session.
#[derive(Debug, Clone)]
pub struct Layers {
    pub upper: PathBuf,
    pub work: PathBuf,
}

impl Layers {
    pub fn of(scratch: &Path) -> Layers {
        Layers {
            upper: scratch.join("upper"),
            work: scratch.join("work"),
        }
    }
}

fn io_err(what: &Path, e: impl std::fmt::Display) -> SandboxError {
    SandboxError {
        code: "sandbox.session-overlay",
        message: format!("{}: {e}", what.display()),
    }
}

/// Creates the upper and work directories. The upper root takes the project root's
/// owner and mode: the merged root shows the upper root's attributes, and the sandbox
/// user (the project's owner) must be able to create files in it.
pub fn prepare(scratch: &Path, project: &Path) -> Result<Layers, SandboxError> {
    let l = Layers::of(scratch);
    let meta = std::fs::metadata(project).map_err(|e| io_err(project, e))?;
    for d in [&l.upper, &l.work] {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(d)
            .map_err(|e| io_err(d, e))?;
    }
    std::os::unix::fs::chown(&l.upper, Some(meta.uid()), Some(meta.gid()))
        .map_err(|e| io_err(&l.upper, e))?;
    std::fs::set_permissions(
        &l.upper,
        std::fs::Permissions::from_mode(meta.permissions().mode() & 0o7777),
    )
    .map_err(|e| io_err(&l.upper, e))?;
    Ok(l)
}

/// The overlay mount options; `None` when a path cannot be written into them (the
/// option string is split on `,` and `:` and `=` by the kernel).
pub fn mount_options(project: &Path, l: &Layers) -> Option<String> {
    let paths = [project, &l.upper, &l.work];
    let text: Vec<&str> = paths.iter().filter_map(|p| p.to_str()).collect();
    if text.len() != 3 || text.iter().any(|t| t.contains([',', ':', '=', '\n'])) {
        return None;
    }
    Some(format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        text[0], text[1], text[2]
    ))
}

pub async fn create_volume(
    docker: &Docker,
    name: &str,
    id: &str,
    state_dir: &Path,
    options: &str,
) -> Result<(), SandboxError> {
    let req = VolumeCreateRequest {
        name: Some(name.to_string()),
        driver: Some("local".into()),
        driver_opts: Some(HashMap::from([
            ("type".to_string(), "overlay".to_string()),
            ("device".to_string(), "overlay".to_string()),
            ("o".to_string(), options.to_string()),
        ])),
        labels: Some(HashMap::from([
            (SESSION_LABEL.to_string(), id.to_string()),
            (
                SESSION_STATE_LABEL.to_string(),
                state_dir.display().to_string(),
            ),
        ])),
        ..Default::default()
    };
    docker
        .create_volume(req)
        .await
        .map(|_| ())
        .map_err(|e| SandboxError {
            code: "sandbox.session-volume",
            message: format!("creating the overlay volume {name}: {e}"),
        })
}

/// Removes the volume; a volume already gone is fine.
pub async fn remove_volume(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    let opts = bollard::query_parameters::RemoveVolumeOptionsBuilder::new()
        .force(true)
        .build();
    match docker.remove_volume(name, Some(opts)).await {
        Ok(()) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(()),
        Err(e) => Err(SandboxError {
            code: "sandbox.cleanup-failed",
            message: format!(
                "removing the volume {name}: {e}; remove it with `docker volume rm {name}`"
            ),
        }),
    }
}

/// One entry of the upper directory.
#[derive(Debug, Clone)]
enum Up {
    File(PathBuf, std::fs::Metadata),
    Whiteout,
    Dir { opaque: bool },
    Link(String),
    Odd(String),
}

/// The upper directory read without following anything.
#[derive(Debug)]
pub struct UpperView {
    entries: BTreeMap<String, Up>,
}

fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

fn is_opaque(path: &Path) -> bool {
    let mut buf = [0u8; 8];
    matches!(rustix::fs::lgetxattr(path, OPAQUE, &mut buf[..]), Ok(n) if buf.get(..n) == Some(b"y"))
}

impl UpperView {
    pub fn read(upper: &Path) -> std::io::Result<UpperView> {
        let mut entries = BTreeMap::new();
        walk(upper, "", &mut entries)?;
        Ok(UpperView { entries })
    }

    /// What the container sees at `rel`, or `None` when the upper layer has no say
    /// there (the lower layer, i.e. the host as synced, shows through).
    pub fn obs(&self, rel: &str) -> std::io::Result<Option<Obs>> {
        let parts: Vec<&str> = rel.split('/').collect();
        let mut opaque_above = false;
        let mut prefix = String::new();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            match self.entries.get(&prefix) {
                Some(Up::Dir { opaque }) => opaque_above |= *opaque,
                Some(_) => return Ok(Some(Obs::Absent)),
                // Nothing of the upper below here either.
                None => return Ok(opaque_above.then_some(Obs::Absent)),
            }
        }
        Ok(match self.entries.get(rel) {
            Some(Up::File(disk, meta)) => Some(observe_file(disk, meta)?),
            Some(Up::Link(t)) => Some(Obs::Link { target: t.clone() }),
            Some(Up::Odd(r)) => Some(Obs::Odd(r.clone())),
            Some(Up::Whiteout | Up::Dir { .. }) => Some(Obs::Absent),
            None => opaque_above.then_some(Obs::Absent),
        })
    }

    /// The view at every path where it may differ from `baseline`.
    pub fn all(
        &self,
        baseline: &BTreeMap<String, Entry>,
    ) -> std::io::Result<BTreeMap<String, Obs>> {
        let mut out = BTreeMap::new();
        for (rel, up) in &self.entries {
            if !matches!(up, Up::Whiteout | Up::Dir { .. }) {
                if let Some(o) = self.obs(rel)? {
                    out.insert(rel.clone(), o);
                }
            }
        }
        for rel in baseline.keys() {
            if !out.contains_key(rel) {
                if let Some(o) = self.obs(rel)? {
                    out.insert(rel.clone(), o);
                }
            }
        }
        Ok(out)
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Up>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let raw = entry.file_name();
        let path = entry.path();
        let Some(name) = raw.to_str() else {
            let rel = super::fingerprint::join_rel(prefix, &raw.to_string_lossy());
            out.insert(rel, Up::Odd("the name is not UTF-8".into()));
            continue;
        };
        let rel = super::fingerprint::join_rel(prefix, name);
        let meta = std::fs::symlink_metadata(&path)?;
        let ty = meta.file_type();
        let up = if ty.is_dir() {
            let opaque = is_opaque(&path);
            walk(&path, &rel, out)?;
            Up::Dir { opaque }
        } else if ty.is_file() {
            Up::File(path, meta)
        } else if ty.is_symlink() {
            Up::Link(std::fs::read_link(&path)?.to_string_lossy().into_owned())
        } else if is_whiteout(&meta) {
            Up::Whiteout
        } else {
            Up::Odd(odd_reason(ty))
        };
        out.insert(rel, up);
    }
    Ok(())
}

fn whiteout(path: &Path) -> std::io::Result<()> {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::empty(),
        rustix::fs::makedev(0, 0),
    )
    .map_err(std::io::Error::from)
}

/// Makes the upper directory `cur` show the lower directory `host` entry by entry:
/// every lower child the upper does not already cover gets its own whiteout, so a
/// single child can then be let through.
fn expand(cur: &Path, host: &Path) -> std::io::Result<()> {
    let children = match std::fs::read_dir(host) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for c in children {
        let c = c?;
        let at = cur.join(c.file_name());
        if std::fs::symlink_metadata(&at).is_err() {
            whiteout(&at)?;
        }
    }
    Ok(())
}

fn remove_any(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// Offline: makes the view at `rel` show the host (the lower layer) again, keeping
/// every other path as it is. Whiteouts and opaque marks above `rel` are turned into
/// per-entry whiteouts first. Returns false (nothing done) when the upper has a
/// session file or directory in the way and `force` is not set: that is a change of
/// the session the host change conflicts with, and it stays.
pub fn restore(upper: &Path, project: &Path, rel: &str, force: bool) -> std::io::Result<bool> {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((last, dirs)) = parts.split_last() else {
        return Ok(false);
    };
    let mut cur = upper.to_path_buf();
    let mut host = project.to_path_buf();
    for part in dirs {
        cur.push(part);
        host.push(part);
        let meta = match std::fs::symlink_metadata(&cur) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
            Err(e) => return Err(e),
        };
        if is_whiteout(&meta) {
            let Ok(hmeta) = std::fs::symlink_metadata(&host) else {
                // The host has nothing here either: hidden is what it shows.
                return Ok(true);
            };
            if !hmeta.is_dir() {
                return Ok(true);
            }
            std::fs::remove_file(&cur)?;
            std::fs::DirBuilder::new().mode(0o755).create(&cur)?;
            std::os::unix::fs::lchown(&cur, Some(hmeta.uid()), Some(hmeta.gid()))?;
            std::fs::set_permissions(
                &cur,
                std::fs::Permissions::from_mode(hmeta.permissions().mode() & 0o7777),
            )?;
            expand(&cur, &host)?;
        } else if meta.is_dir() {
            if is_opaque(&cur) {
                expand(&cur, &host)?;
                rustix::fs::lremovexattr(&cur, OPAQUE).map_err(std::io::Error::from)?;
            }
        } else if force {
            remove_any(&cur)?;
            return Ok(true);
        } else {
            return Ok(false);
        }
    }
    cur.push(last);
    match std::fs::symlink_metadata(&cur) {
        Ok(m) if m.is_dir() && !force => Ok(false),
        Ok(_) => remove_any(&cur).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e),
    }
}

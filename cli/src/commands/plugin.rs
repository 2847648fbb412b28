//! `contextos plugin add|verify|list|keygen|sign`: signed, pinned policy packs.
//!
//! A pack is a directory with `plugin.toml` (`name`, `version`, optional `description`),
//! policy files and guides, and the publisher's detached signature
//! `contextos-plugin.sig`. `add` fetches a pack into a private staging directory, pins
//! it in `contextos.lock` and installs it under `.contextos/plugins/NAME/` through one
//! journaled transaction — only when the plugin verdict, decided by the policies on the
//! verified facts, is `allow`. Every later load verifies it again (see `crate::plugins`).

use crate::output;
use crate::plugins::{self, Checked, PACKS_DIR, PINS_FILE, SEEN_FILE};
use crate::project::Project;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::effects::journal::{self, Change, Precondition, Step};
use contextos_engine::effects::safe_fs::SafeRoot;
use contextos_engine::plugins::digest::{tree_digest, SIGNATURE_FILE};
use contextos_engine::plugins::pins::{self, Pin, Pins};
use contextos_engine::plugins::signature::{self, SecretKey};
use contextos_engine::plugins::verify::is_exact_semver;
use contextos_engine::{build, BuildOptions, PolicySet};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Pin and install a pack: a directory, `git+URL#COMMIT` (40 hex) or a .tar/.tar.gz.
    Add {
        source: String,
        /// The exact version to pin, `=X.Y.Z`; it must be the pack's own version.
        #[arg(long)]
        version: String,
        /// Decide and report, install nothing.
        #[arg(long)]
        dry_run: bool,
        /// Seconds to wait for the project lock.
        #[arg(long, default_value_t = 30)]
        lock_timeout: u64,
    },
    /// Verify every pinned pack as a load would; exit 1 when any is refused.
    Verify,
    /// List the pinned packs and their verdicts.
    List,
    /// Create a publisher key pair: PATH (secret, 0600) and PATH.pub.
    Keygen {
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
    },
    /// Sign a pack directory as its publisher (writes DIR/contextos-plugin.sig).
    Sign {
        dir: PathBuf,
        /// The publisher's secret key (PKCS#8 PEM, from `plugin keygen`).
        #[arg(long, value_name = "PATH")]
        key: PathBuf,
        /// The release counter: higher than every earlier release of this pack.
        #[arg(long)]
        sequence: u64,
    },
}

/// `plugin.toml` in a pack.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    name: String,
    version: String,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "accepted so manifests may describe themselves; nothing reads it"
    )]
    description: String,
}

/// `contextos-plugin.sig` in a pack: what the publisher signed, and the signature.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureFile {
    name: String,
    version: String,
    digest: String,
    sequence: u64,
    signer: String,
    signature: String,
}

/// Why a pack cannot be read, fetched, staged or installed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PackError {
    /// A file of the pack, or of the state beside it, cannot be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `plugin.toml` is missing or unreadable.
    #[error("{}: {error} (a pack needs plugin.toml with name and version)", path.display())]
    NoManifest {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A TOML file of the pack does not parse.
    #[error("{}: {error}", path.display())]
    Toml {
        path: PathBuf,
        error: toml::de::Error,
    },
    /// `git` could not fetch the pinned commit.
    #[error("{0}")]
    Git(String),
    /// What the pack holds, or how it is named, cannot be installed.
    #[error("{0}")]
    Refused(String),
    /// State that cannot be serialised (never expected).
    #[error("{0}")]
    Json(serde_json::Error),
}

impl From<PackError> for CliError {
    fn from(e: PackError) -> CliError {
        CliError::Plugin(Box::new(e))
    }
}

/// The I/O error `error` at `path`.
fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> PackError + '_ {
    move |error| PackError::Io {
        path: path.to_path_buf(),
        error,
    }
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    match &args.what {
        What::Keygen { out } => keygen(ctx, out),
        What::Sign { dir, key, sequence } => sign(ctx, dir, key, *sequence),
        What::Verify => verify(ctx, true),
        What::List => verify(ctx, false),
        What::Add {
            source,
            version,
            dry_run,
            lock_timeout,
        } => add(ctx, source, version, *dry_run, *lock_timeout),
    }
}

fn keygen(ctx: &Context, out: &Path) -> Result<Exit, CliError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let key = signature::generate();
    let (secret, public) = match (key.to_pkcs8_pem(), key.public().to_spki_pem()) {
        (Ok(s), Ok(p)) => (s, p),
        (Err(e), _) | (_, Err(e)) => {
            return Err(CliError::Plugin(
                format!("cannot encode the key: {e}").into(),
            ))
        }
    };
    let pub_path = PathBuf::from(format!("{}.pub", out.display()));
    // Never overwrite a key: a lost secret key cannot sign the next release.
    let write = |path: &Path, text: &str, mode: u32| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    if let Err(e) = write(out, &secret, 0o600).and_then(|()| write(&pub_path, &public, 0o644)) {
        return Err(CliError::Plugin(e.into()));
    }
    let id = key.public().key_id();
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "keyId": id, "secretKey": out, "publicKey": pub_path,
        })),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            outln!("key id {id}");
            outln!("secret key: {} (keep it off the repository)", out.display());
            outln!("public key: {}", pub_path.display());
            outln!();
            outln!("Users trust it with this entry in .contextos/trusted-keys.toml:");
            outln!("{}", trusted_key_snippet(&id, &public));
        }
    }
    Ok(Exit::Ok)
}

fn trusted_key_snippet(id: &str, public_pem: &str) -> String {
    format!(
        "[[key]]\nid = \"{id}\"\npublic_key = \"\"\"\n{}\"\"\"\nscopes = [\"your-pack-*\"]\n",
        public_pem
    )
}

fn read_manifest(dir: &Path) -> Result<Manifest, PackError> {
    let path = dir.join("plugin.toml");
    let text = std::fs::read_to_string(&path).map_err(|error| PackError::NoManifest {
        path: path.clone(),
        error,
    })?;
    let m: Manifest = toml::from_str(&text).map_err(|error| PackError::Toml {
        path: path.clone(),
        error,
    })?;
    if !pins::is_valid_name(&m.name) {
        return Err(PackError::Refused(format!(
            "{}: `{}` is not a plugin name (lowercase letters, digits and `-`, at most 64, starting with a letter or digit)",
            path.display(),
            m.name
        )));
    }
    Ok(m)
}

fn sign(ctx: &Context, dir: &Path, key_path: &Path, sequence: u64) -> Result<Exit, CliError> {
    let m = match read_manifest(dir) {
        Ok(m) => m,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    if !is_exact_semver(&m.version) {
        return Err(CliError::Plugin(
            format!(
            "plugin.toml: version `{}` is not an exact version (X.Y.Z); a release must be pinnable",
            m.version
        )
            .into(),
        ));
    }
    let key = match std::fs::read_to_string(key_path)
        .map_err(|e| format!("{}: {e}", key_path.display()))
        .and_then(|t| {
            SecretKey::from_pkcs8_pem(&t).map_err(|e| format!("{}: {e}", key_path.display()))
        }) {
        Ok(k) => k,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    // Sign exactly what an install will see: a copy without `.git` (a git source is
    // installed from a clone, whose `.git` is never part of the pack), holding only what
    // the journal can install (regular UTF-8 files, no symlinks, no empty directories).
    let work = match tempfile::tempdir() {
        Ok(w) => w,
        Err(e) => return Err(CliError::io("cannot create a staging directory", e)),
    };
    let staged = work.path().join("pack");
    if let Err(e) = copy_tree(dir, &staged, true).and_then(|()| pack_files(&staged).map(|_| ())) {
        return Err(CliError::Plugin(format!("{}: {e}", dir.display()).into()));
    }
    let digest = match tree_digest(&staged) {
        Ok(d) => d,
        Err(e) => return Err(CliError::Plugin(format!("{}: {e}", dir.display()).into())),
    };
    let payload = signature::payload(&m.name, &m.version, &digest, sequence);
    let file = SignatureFile {
        name: m.name.clone(),
        version: m.version.clone(),
        digest: digest.clone(),
        sequence,
        signer: key.public().key_id(),
        signature: signature::sign(&key, &payload),
    };
    let text = toml::to_string(&file)
        .map_err(|e| CliError::Internal(format!("the signature cannot be serialised: {e}")))?;
    if let Err(e) = std::fs::write(dir.join(SIGNATURE_FILE), text) {
        return Err(CliError::Plugin(
            format!("{}: {e}", dir.join(SIGNATURE_FILE).display()).into(),
        ));
    }
    match ctx.format {
        Format::Json => output::print_json(serde_json::to_value(&file).unwrap_or_default()),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => outln!(
            "signed {} {} (sequence {sequence}) with key {}\ndigest {digest}",
            m.name,
            m.version,
            file.signer
        ),
    }
    Ok(Exit::Ok)
}

/// The project's policies without any pack: what judges packs.
fn base_set(project: &Project) -> Result<PolicySet, CliError> {
    let sources = project.base_sources()?;
    let (out, _) = project.build_lazily(&sources);
    match out.policy {
        Some(p) => Ok(p),
        None => Err(CliError::policy_invalid(&out, "no plugin can be judged")),
    }
}

fn checked_json(c: &Checked) -> serde_json::Value {
    serde_json::json!({
        "name": c.entry.name,
        "version": c.entry.version,
        "source": c.entry.source,
        "digest": c.entry.digest,
        "signer": c.facts.signer,
        "sequence": c.entry.sequence,
        "verdict": c.decision.verdict,
        "reasons": c.reasons(),
        "findings": c.facts.findings,
    })
}

fn print_checked(c: &Checked) {
    outln!(
        "{:<6} {} {} ({}){}",
        format!("{:?}", c.decision.verdict).to_lowercase(),
        c.entry.name,
        c.entry.version,
        c.entry.source,
        if c.allowed() {
            format!(" signed by {}", c.facts.signer.as_deref().unwrap_or("?"))
        } else {
            format!(
                ": {}{}",
                c.reasons().join(", "),
                if c.facts.findings.is_empty() {
                    String::new()
                } else {
                    format!(" [findings: {}]", c.facts.findings.join(", "))
                }
            )
        }
    );
    for r in c.decision.decided_by.iter().filter(|_| !c.allowed()) {
        if let Some(b) = &r.because {
            outln!("       {}: {b}", r.id);
        }
    }
}

fn verify(ctx: &Context, strict: bool) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let set = base_set(&project)?;
    let checked = match plugins::check_installed(&project.root, &set) {
        Ok(c) => c.unwrap_or_default(),
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    let refused = checked.iter().filter(|c| !c.allowed()).count();
    if refused == 0 && strict {
        if let Err(e) = raise_seen(&project.root, checked.iter().map(|c| &c.entry)) {
            eprintln!("contextos: warning: {e}");
        }
    }
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "plugins": checked.iter().map(checked_json).collect::<Vec<_>>(),
            "refused": refused,
        })),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            if checked.is_empty() {
                outln!("no plugins are pinned ({PINS_FILE})");
            }
            for c in &checked {
                print_checked(c);
            }
        }
    }
    if refused > 0 && strict {
        Ok(Exit::Findings)
    } else {
        Ok(Exit::Ok)
    }
}

/// Records the highest sequence accepted per pack, so an older release cannot come back.
fn raise_seen<'a>(root: &Path, entries: impl Iterator<Item = &'a Pin>) -> Result<(), CliError> {
    let mut seen = plugins::read_seen(root).map_err(|e| CliError::Plugin(e.into()))?;
    let mut changed = false;
    for e in entries {
        let slot = seen.entry(e.name.clone()).or_insert(0);
        if e.sequence > *slot {
            *slot = e.sequence;
            changed = true;
        }
    }
    if !changed {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&seen).map_err(PackError::Json)?;
    SafeRoot::open(root)?.write_atomic(SEEN_FILE, text.as_bytes(), 0o644)?;
    Ok(())
}

/// Where a pack comes from, as recorded in the lock.
enum Source {
    Dir(PathBuf),
    Git { url: String, commit: String },
    Tar(PathBuf),
}

impl Source {
    fn parse(s: &str) -> Result<Source, PackError> {
        let git = s.strip_prefix("git+").or_else(|| s.strip_prefix("git:"));
        if let Some(rest) = git.or_else(|| s.contains('#').then_some(s)) {
            let (url, commit) = rest
                .rsplit_once('#')
                .ok_or_else(|| PackError::Refused(format!("{s}: a git source is URL#COMMIT")))?;
            if commit.len() != 40
                || !commit
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            {
                return Err(PackError::Refused(format!(
                    "{s}: a git source must name a full 40-hex commit id (branches and tags move)"
                )));
            }
            return Ok(Source::Git {
                url: url.to_string(),
                commit: commit.to_string(),
            });
        }
        let p = PathBuf::from(s);
        if p.is_dir() {
            return Ok(Source::Dir(p));
        }
        let lower = s.to_ascii_lowercase();
        if p.is_file()
            && (lower.ends_with(".tar") || lower.ends_with(".tar.gz") || lower.ends_with(".tgz"))
        {
            return Ok(Source::Tar(p));
        }
        Err(PackError::Refused(format!(
            "{s}: not a directory, a .tar/.tar.gz file or git+URL#COMMIT"
        )))
    }

    /// The source as recorded in the lock: a path inside the project is recorded relative
    /// to its root, so the lock is byte-identical on every machine that checks it out.
    fn label(&self, root: &Path) -> String {
        let shown = |p: &Path| -> String {
            match (std::fs::canonicalize(p), std::fs::canonicalize(root)) {
                (Ok(abs), Ok(r)) => match abs.strip_prefix(&r) {
                    Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
                    Err(_) => p.display().to_string(),
                },
                _ => p.display().to_string(),
            }
        };
        match self {
            Source::Dir(p) => format!("dir:{}", shown(p)),
            Source::Git { url, commit } => format!("git:{url}#{commit}"),
            Source::Tar(p) => format!("tar:{}", shown(p)),
        }
    }
}

/// Limits on a fetched pack: the digest's own, so nothing is fetched that cannot be pinned.
use contextos_engine::plugins::digest::{MAX_BYTES, MAX_ENTRIES as MAX_FILES};

/// Copies regular files and directories; anything else refuses the pack, because the
/// journal installs regular text files only.
fn copy_tree(from: &Path, to: &Path, skip_git: bool) -> Result<(), PackError> {
    let mut count = 0usize;
    let mut bytes = 0u64;
    copy_dir(from, to, skip_git, &mut count, &mut bytes)
}

fn copy_dir(
    from: &Path,
    to: &Path,
    skip_git: bool,
    count: &mut usize,
    bytes: &mut u64,
) -> Result<(), PackError> {
    std::fs::create_dir_all(to).map_err(io_at(to))?;
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(io_at(from))?
        .collect::<Result<_, _>>()
        .map_err(io_at(from))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        if skip_git && name == ".git" {
            continue;
        }
        let src = e.path();
        let ty = e.file_type().map_err(io_at(&src))?;
        let dst = to.join(&name);
        *count += 1;
        if *count > MAX_FILES {
            return Err(PackError::Refused(format!(
                "the pack has more than {MAX_FILES} entries"
            )));
        }
        if ty.is_dir() {
            copy_dir(&src, &dst, false, count, bytes)?;
        } else if ty.is_file() {
            let meta = e.metadata().map_err(io_at(&src))?;
            *bytes += meta.len();
            if *bytes > MAX_BYTES {
                return Err(PackError::Refused(format!(
                    "the pack is larger than {MAX_BYTES} bytes"
                )));
            }
            std::fs::copy(&src, &dst).map_err(io_at(&src))?;
        } else {
            return Err(PackError::Refused(format!(
                "{}: only regular files and directories can be installed (symbolic links and special files cannot)",
                src.display()
            )));
        }
    }
    Ok(())
}

fn fetch(source: &Source, staging: &Path) -> Result<(), PackError> {
    match source {
        Source::Dir(p) => copy_tree(p, staging, false),
        Source::Tar(p) => extract_tar(p, staging),
        Source::Git { url, commit } => {
            let clone = staging.with_extension("git");
            let git = |args: &[&str]| -> Result<String, PackError> {
                let out = std::process::Command::new("git")
                    .args(args)
                    .env("GIT_TERMINAL_PROMPT", "0")
                    .output()
                    .map_err(|e| PackError::Git(format!("cannot run git: {e}")))?;
                if !out.status.success() {
                    return Err(PackError::Git(format!(
                        "git {}: {}",
                        args.join(" "),
                        String::from_utf8_lossy(&out.stderr).trim()
                    )));
                }
                Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
            };
            let dir = clone.to_string_lossy().into_owned();
            git(&["clone", "--quiet", "--no-checkout", "--", url, &dir])?;
            git(&[
                "-C",
                &dir,
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "--quiet",
                commit,
            ])?;
            let head = git(&["-C", &dir, "rev-parse", "HEAD"])?;
            if head != *commit {
                return Err(PackError::Git(format!(
                    "git checked out {head}, not {commit}"
                )));
            }
            copy_tree(&clone, staging, true)
        }
    }
}

pub(crate) fn extract_tar(path: &Path, staging: &Path) -> Result<(), PackError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(io_at(path))?;
    let lower = path.to_string_lossy().to_ascii_lowercase();
    let reader: Box<dyn Read> = if lower.ends_with(".gz") || lower.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut archive = tar::Archive::new(reader.take(MAX_BYTES * 2));
    let mut count = 0usize;
    let mut total = 0u64;
    let entries = archive.entries().map_err(io_at(path))?;
    for entry in entries {
        let mut entry = entry.map_err(io_at(path))?;
        let rel = entry
            .path()
            .map_err(io_at(path))?
            .to_string_lossy()
            .into_owned();
        let rel = rel.trim_start_matches("./").to_string();
        if rel.is_empty() {
            continue;
        }
        // A name that leaves the staging directory, or one the journal cannot write.
        if rel.starts_with('/') || rel.split('/').any(|s| s == "..") || rel.contains('\\') {
            return Err(PackError::Refused(format!(
                "{}: the archive entry `{rel}` leaves the pack",
                path.display()
            )));
        }
        count += 1;
        total += entry.size();
        if count > MAX_FILES || total > MAX_BYTES {
            return Err(PackError::Refused(format!(
                "{}: the archive is too large for a policy pack",
                path.display()
            )));
        }
        let kind = entry.header().entry_type();
        let dst = staging.join(&rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&dst).map_err(io_at(&dst))?;
        } else if kind.is_file() {
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(io_at(parent))?;
            }
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).map_err(io_at(path))?;
            std::fs::write(&dst, &bytes).map_err(io_at(&dst))?;
            let exec = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
            if exec {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755))
                    .map_err(io_at(&dst))?;
            }
        } else {
            return Err(PackError::Refused(format!(
                "{}: the archive entry `{rel}` is not a regular file or directory",
                path.display()
            )));
        }
    }
    // An archive holding one top-level directory is that directory's pack.
    let mut top: Vec<_> = std::fs::read_dir(staging)
        .map_err(io_at(staging))?
        .collect::<Result<_, _>>()
        .map_err(io_at(staging))?;
    if top.len() == 1 && !staging.join("plugin.toml").exists() {
        if let Some(only) = top.pop() {
            if only.file_type().map_err(io_at(staging))?.is_dir() {
                let inner = only.path();
                let hold = staging.with_extension("inner");
                std::fs::rename(&inner, &hold).map_err(io_at(&inner))?;
                std::fs::remove_dir(staging).map_err(io_at(staging))?;
                std::fs::rename(&hold, staging).map_err(io_at(&hold))?;
            }
        }
    }
    Ok(())
}

/// Every file of a staged pack, as (relative path, bytes, executable).
fn pack_files(dir: &Path) -> Result<Vec<(String, Vec<u8>, bool)>, PackError> {
    fn walk(
        base: &Path,
        dir: &Path,
        out: &mut Vec<(String, Vec<u8>, bool)>,
    ) -> Result<(), PackError> {
        use std::os::unix::fs::PermissionsExt;
        for e in std::fs::read_dir(dir).map_err(io_at(dir))? {
            let e = e.map_err(io_at(dir))?;
            let path = e.path();
            let ty = e.file_type().map_err(io_at(&path))?;
            // `path` lies under `base`: read_dir joins the entry name to it.
            let rel = path
                .strip_prefix(base)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            if ty.is_dir() {
                let before = out.len();
                walk(base, &path, out)?;
                if out.len() == before {
                    return Err(PackError::Refused(format!(
                        "`{rel}` is an empty directory; the journal installs files, so remove it and sign again"
                    )));
                }
            } else if ty.is_file() {
                let bytes = std::fs::read(&path).map_err(io_at(&path))?;
                if std::str::from_utf8(&bytes).is_err() {
                    return Err(PackError::Refused(format!(
                        "`{rel}` is not UTF-8 text; policy packs hold text files only"
                    )));
                }
                let exec = e.metadata().map_err(io_at(&path))?.permissions().mode() & 0o111 != 0;
                out.push((rel, bytes, exec));
            } else {
                return Err(PackError::Refused(format!(
                    "`{rel}` is not a regular file or directory"
                )));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

fn add(
    ctx: &Context,
    source: &str,
    version: &str,
    dry_run: bool,
    lock_timeout: u64,
) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let src = match Source::parse(source) {
        Ok(s) => s,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    let work = match tempfile::tempdir() {
        Ok(w) => w,
        Err(e) => return Err(CliError::io("cannot create a staging directory", e)),
    };
    let staging = work.path().join("pack");
    if let Err(e) = fetch(&src, &staging) {
        return Err(CliError::Plugin(
            format!("cannot fetch {source}: {e}").into(),
        ));
    }
    let manifest = match read_manifest(&staging) {
        Ok(m) => m,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    // The pin as asked: `=1.2.3` pins 1.2.3; anything else is judged as written, so a
    // floating request meets the policy's own reason for refusing it.
    let requested = version.strip_prefix('=').unwrap_or(version);
    let pinned = if is_exact_semver(requested) {
        if requested != manifest.version {
            return Err(CliError::Plugin(
                format!(
                    "the pack is {} {}, not {requested}",
                    manifest.name, manifest.version
                )
                .into(),
            ));
        }
        manifest.version.clone()
    } else {
        version.to_string()
    };
    let sig: Option<SignatureFile> = match std::fs::read_to_string(staging.join(SIGNATURE_FILE)) {
        Ok(t) => match toml::from_str(&t) {
            Ok(s) => Some(s),
            Err(e) => return Err(CliError::Plugin(format!("{SIGNATURE_FILE}: {e}").into())),
        },
        Err(_) => None,
    };
    let computed = match tree_digest(&staging) {
        Ok(d) => d,
        Err(e) => return Err(CliError::Plugin(format!("{source}: {e}").into())),
    };
    let entry = Pin {
        name: manifest.name.clone(),
        version: pinned,
        source: src.label(&project.root),
        // The digest the publisher signed; verification compares the files against it.
        digest: sig.as_ref().map_or(computed, |s| s.digest.clone()),
        signer: sig.as_ref().map(|s| s.signer.clone()).unwrap_or_default(),
        sequence: sig.as_ref().map_or(0, |s| s.sequence),
        signature: sig
            .as_ref()
            .map(|s| s.signature.clone())
            .unwrap_or_default(),
    };
    let lock = match plugins::read_pins(&project.root) {
        Ok(l) => l.unwrap_or(Pins {
            plugins: Vec::new(),
        }),
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    let seen = match plugins::read_seen(&project.root) {
        Ok(s) => s,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    let previous = lock.plugins.iter().find(|p| p.name == entry.name).cloned();
    let high_water = [
        seen.get(&entry.name).copied(),
        previous.as_ref().map(|p| p.sequence),
    ]
    .into_iter()
    .flatten()
    .max();
    let keys = match plugins::read_keys(&project.root) {
        Ok(k) => k,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    let set = base_set(&project)?;
    let checked = plugins::check(&set, &entry, &staging, &keys, high_water);
    if !checked.allowed() || dry_run {
        match ctx.format {
            Format::Json => output::print_json(serde_json::json!({
                "plugin": checked_json(&checked), "installed": false,
            })),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                print_checked(&checked);
                if checked.allowed() {
                    outln!("dry run: nothing installed");
                } else {
                    outln!("nothing installed");
                }
            }
        }
        return if checked.allowed() {
            Ok(Exit::Ok)
        } else {
            Ok(Exit::Findings)
        };
    }
    let files = match pack_files(&staging) {
        Ok(f) => f,
        Err(e) => return Err(CliError::Plugin(format!("{source}: {e}").into())),
    };
    // A pack that does not compile with the project's policies would stop every later
    // command: refuse it now, with the diagnostics.
    compiles_with_pack(&project, &entry.name, &files)?;
    let mut new_lock = lock;
    new_lock.upsert(entry.clone());
    let mut new_seen: BTreeMap<String, u64> = seen;
    let hw = new_seen.entry(entry.name.clone()).or_insert(0);
    *hw = (*hw).max(entry.sequence);
    let steps = match install_steps(&project.root, &entry.name, &files, &new_lock, &new_seen) {
        Ok(s) => s,
        Err(e) => return Err(CliError::Plugin(e.into())),
    };
    let guard = ctx.take_lock(
        &project.root,
        "contextos plugin add",
        Duration::from_secs(lock_timeout),
    )?;
    let root = SafeRoot::open(&project.root)?;
    journal::recover(&root, &guard).map_err(|error| CliError::Journal {
        doing: "recovering the journal",
        error,
    })?;
    journal::commit(&root, &guard, &steps, &mut |_| {}).map_err(|error| CliError::Journal {
        doing: "nothing was installed",
        error,
    })?;
    drop(guard);
    // The journal installs files; directories an older release had and this one does
    // not are left empty, and empty directories count in the digest.
    remove_empty_dirs(&plugins::pack_dir(&project.root, &entry.name));
    // The installed copy must verify exactly as the staged one did.
    let installed = plugins::check(
        &set,
        &entry,
        &plugins::pack_dir(&project.root, &entry.name),
        &keys,
        high_water,
    );
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "plugin": checked_json(&installed), "installed": true,
        })),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            print_checked(&installed);
            outln!(
                "installed into {PACKS_DIR}/{} and pinned in {PINS_FILE}",
                entry.name
            );
        }
    }
    if installed.allowed() {
        Ok(Exit::Ok)
    } else {
        Err(CliError::Plugin(
            "the installed pack does not verify (see above); run `contextos plugin verify`".into(),
        ))
    }
}

fn remove_empty_dirs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_dirs(&e.path());
            // Fails, harmlessly, unless the directory is empty now.
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The project's policies plus the pack's policy files must compile (E0120 and all).
fn compiles_with_pack(
    project: &Project,
    name: &str,
    files: &[(String, Vec<u8>, bool)],
) -> Result<(), CliError> {
    let mut sources = project.base_sources()?;
    let stdlib = sources
        .iter()
        .filter(|s| s.layer == contextos_engine::Layer::Stdlib)
        .count();
    let pack: Vec<contextos_engine::PolicySource> = files
        .iter()
        .filter(|(rel, _, _)| rel.ends_with(".policy"))
        .map(|(rel, bytes, _)| contextos_engine::PolicySource {
            name: format!("plugin/{name}/{rel}"),
            text: String::from_utf8_lossy(bytes).into_owned().into(),
            layer: contextos_engine::Layer::Plugin,
        })
        .collect();
    sources.splice(stdlib..stdlib, pack);
    let out = build(
        &sources,
        &BuildOptions {
            disabled_rules: project.config.policies.disable.clone(),
            lazy: false,
        },
    );
    if out.has_errors() || out.policy.is_none() {
        return Err(CliError::pack_invalid(&out, name));
    }
    Ok(())
}

/// The transaction: the pack's files, removal of files an older release had, the lock
/// file and the sequence high-water mark — all or nothing.
fn install_steps(
    root: &Path,
    name: &str,
    files: &[(String, Vec<u8>, bool)],
    lock: &Pins,
    seen: &BTreeMap<String, u64>,
) -> Result<Vec<Step>, PackError> {
    let base = format!("{PACKS_DIR}/{name}");
    let mut steps: Vec<Step> = files
        .iter()
        .map(|(rel, bytes, exec)| Step {
            change: Change::Write {
                path: format!("{base}/{rel}"),
                content: bytes.clone(),
                mode: if *exec { 0o755 } else { 0o644 },
                exact_mode: true,
            },
            precondition: Precondition::Any,
        })
        .collect();
    let installed_dir = root.join(&base);
    if installed_dir.is_dir() {
        let old = pack_files(&installed_dir).unwrap_or_default();
        for (rel, _, _) in old {
            if !files.iter().any(|(r, _, _)| *r == rel) {
                steps.push(Step {
                    change: Change::Delete {
                        path: format!("{base}/{rel}"),
                    },
                    precondition: Precondition::Any,
                });
            }
        }
    }
    steps.push(Step {
        change: Change::Write {
            path: PINS_FILE.to_string(),
            content: pins::render(lock).into_bytes(),
            mode: 0o644,
            exact_mode: false,
        },
        precondition: Precondition::Any,
    });
    let seen_text = serde_json::to_string_pretty(seen).map_err(PackError::Json)? + "\n";
    steps.push(Step {
        change: Change::Write {
            path: SEEN_FILE.to_string(),
            content: seen_text.into_bytes(),
            mode: 0o644,
            exact_mode: false,
        },
        precondition: Precondition::Any,
    });
    Ok(steps)
}

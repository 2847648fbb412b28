//! The bollard runner: the connection to the container engine and what every session
//! needs from it — the engine check, image resolution (pinned by id, pulled only when the
//! profile allows), the forced and verified removal of a container, and the sweep of
//! containers left by the one-shot runs of older versions (label [`LABEL`]).
//!
//! Commands run in sandbox sessions (`session`): a warm container, commands started
//! through exec. Whatever happens after a command started — an API error, the wall-clock
//! timeout, Ctrl-C or SIGTERM — ends in a kill of the session's container; stopping only
//! the client would leave the command running.
//!
//! [`LABEL`]: super::spec::LABEL

use super::profile::{DigestRule, Profile};
use bollard::errors::Error as BollardError;
use bollard::query_parameters::{CreateImageOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use futures_util::StreamExt;
use serde::Serialize;
use std::time::Duration;

/// The oldest Engine API the runner accepts: every field it sets exists there, and an
/// older daemon would silently drop the ones it does not know.
pub const MIN_API: (u32, u32) = (1, 41);

/// A run that could not happen or could not be cleaned up. `code` is stable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct SandboxError {
    pub code: &'static str,
    pub message: String,
}

fn fail(code: &'static str, message: impl Into<String>) -> SandboxError {
    SandboxError {
        code,
        message: message.into(),
    }
}

pub use super::capture::Stream;

/// An image resolved to what will actually run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedImage {
    /// As the policy or the user named it.
    pub reference: String,
    /// The image id (`sha256:…` of its configuration): the container is created from
    /// this, so a tag moved after resolution does not change what runs.
    pub id: String,
    pub repo_digests: Vec<String>,
    /// The image was pulled during this run (only when the policy allows pulls).
    pub pulled: bool,
}

/// A connection to the engine plus the runtime its client needs.
#[derive(Debug)]
pub struct Runner {
    docker: Docker,
    rt: tokio::runtime::Runtime,
    /// Where the engine was looked for, for messages.
    pub host: String,
    pub api_version: String,
}

/// `profile` with its CPU limit lowered to what the engine's host has (the daemon refuses
/// a limit above it; fewer CPUs only tightens it). Asked for only when a container is
/// about to be created: `info` is one of the engine's slower calls, and a command in a
/// warm session creates nothing.
pub(crate) async fn clamped(docker: &Docker, profile: &Profile) -> Profile {
    let mut p = profile.clone();
    let ncpu = docker
        .info()
        .await
        .ok()
        .and_then(|i| i.ncpu)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|n| *n > 0);
    if let Some(n) = ncpu {
        p.millicpus = p.millicpus.min(n.saturating_mul(1000));
    }
    p
}

fn api_error(what: &str, e: &BollardError) -> SandboxError {
    fail("sandbox.api", format!("{what}: {e}"))
}

pub(crate) fn is_not_found(e: &BollardError) -> bool {
    matches!(
        e,
        BollardError::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

fn parse_api(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

impl Runner {
    /// Connects to the engine named by `DOCKER_HOST` (default: the local Docker socket)
    /// and checks that it answers and is new enough. No engine is an error: there is
    /// no fallback to the host.
    pub fn connect() -> Result<Runner, SandboxError> {
        let host = std::env::var("DOCKER_HOST")
            .unwrap_or_else(|_| "unix:///var/run/docker.sock".to_string());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                fail(
                    "sandbox.runtime",
                    format!("cannot start the I/O runtime: {e}"),
                )
            })?;
        let no_engine = |e: &dyn std::fmt::Display| {
            fail(
                "sandbox.no-engine",
                format!(
                    "no container engine answers at {host}: {e}. Nothing ran: ContextOS never \
                     falls back to running commands on the host. Start Docker, or point \
                     DOCKER_HOST at Podman's Docker-compatible socket \
                     (unix://$XDG_RUNTIME_DIR/podman/podman.sock)."
                ),
            )
        };
        let docker = Docker::connect_with_defaults().map_err(|e| no_engine(&e))?;
        // `version` answers only when the engine does: no separate ping.
        let version = rt.block_on(docker.version()).map_err(|e| no_engine(&e))?;
        let api = version.api_version.unwrap_or_default();
        match parse_api(&api) {
            Some(v) if v >= MIN_API => {}
            _ => {
                return Err(fail(
                    "sandbox.engine-too-old",
                    format!(
                        "the engine at {host} speaks API {api:?}; the sandbox needs {}.{} or newer \
                         (an older daemon silently ignores hardening fields it does not know)",
                        MIN_API.0, MIN_API.1
                    ),
                ))
            }
        }
        Ok(Runner {
            docker,
            rt,
            host,
            api_version: api,
        })
    }

    /// Resolves `reference` to an image id, pulling only when the profile allows it.
    pub fn resolve_image(
        &self,
        reference: &str,
        profile: &Profile,
    ) -> Result<ResolvedImage, SandboxError> {
        let by_digest = is_digest_reference(reference);
        if profile.digest == DigestRule::Required && !by_digest {
            return Err(fail(
                "sandbox.image-digest-required",
                format!(
                    "the policy requires images by digest; `{reference}` is a tag \
                     (name it as sha256:… or name@sha256:…)"
                ),
            ));
        }
        self.rt.block_on(async {
            let mut pulled = false;
            let inspect = match self.docker.inspect_image(reference).await {
                Ok(i) => i,
                Err(e) if is_not_found(&e) && profile.pull => {
                    let opts = CreateImageOptionsBuilder::new()
                        .from_image(reference)
                        .build();
                    let mut s = self.docker.create_image(Some(opts), None, None);
                    while let Some(step) = s.next().await {
                        step.map_err(|e| {
                            fail("sandbox.pull-failed", format!("pulling {reference}: {e}"))
                        })?;
                    }
                    pulled = true;
                    self.docker
                        .inspect_image(reference)
                        .await
                        .map_err(|e| api_error(&format!("inspecting {reference}"), &e))?
                }
                Err(e) if is_not_found(&e) => {
                    return Err(fail(
                        "sandbox.image-missing",
                        format!(
                            "the image `{reference}` is not present on the engine and the policy \
                             does not allow pulls at run time (`pull: true` in the sandbox \
                             obligation); load or build it first"
                        ),
                    ))
                }
                Err(e) => return Err(api_error(&format!("inspecting {reference}"), &e)),
            };
            let id = inspect.id.ok_or_else(|| {
                fail("sandbox.api", format!("{reference}: the engine gave no id"))
            })?;
            Ok(ResolvedImage {
                reference: reference.to_string(),
                id,
                repo_digests: inspect.repo_digests.unwrap_or_default(),
                pulled,
            })
        })
    }

    /// Removes ContextOS containers older than `max_age`: no run outlives the floor's
    /// timeout, so such a container was left by a `contextos` that was killed before it
    /// could clean up (SIGKILL, a crash, a lost machine). Returns the removed names.
    pub fn sweep_stale(&self, max_age: Duration) -> Result<Vec<String>, SandboxError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.rt.block_on(async {
            let filters = std::collections::HashMap::from([("label", vec![super::spec::LABEL])]);
            let list = self
                .docker
                .list_containers(Some(
                    bollard::query_parameters::ListContainersOptionsBuilder::new()
                        .all(true)
                        .filters(&filters)
                        .build(),
                ))
                .await
                .map_err(|e| api_error("listing containers", &e))?;
            let mut removed = Vec::new();
            for c in list {
                let created = c.created.and_then(|t| u64::try_from(t).ok());
                let name = c
                    .names
                    .as_ref()
                    .and_then(|n| n.first())
                    .map(|n| n.trim_start_matches('/').to_string());
                if let (Some(name), true) = (name, is_stale(created, now, max_age)) {
                    if remove(&self.docker, &name).await.is_ok() {
                        removed.push(name);
                    }
                }
            }
            Ok(removed)
        })
    }

    /// The engine client and the runtime that drives it (for the session code).
    pub(crate) fn engine(&self) -> (&Docker, &tokio::runtime::Runtime) {
        (&self.docker, &self.rt)
    }

    /// Whether a container with this name still exists.
    pub fn container_exists(&self, name: &str) -> Result<bool, SandboxError> {
        self.rt.block_on(async {
            match self.docker.inspect_container(name, None).await {
                Ok(_) => Ok(true),
                Err(e) if is_not_found(&e) => Ok(false),
                Err(e) => Err(api_error(&format!("inspecting {name}"), &e)),
            }
        })
    }
}

/// A container created at `created` (unix seconds) is stale at `now` once it is older
/// than `max_age`. An unknown creation time is never stale: only what is known to be
/// orphaned is removed.
pub fn is_stale(created: Option<u64>, now: u64, max_age: Duration) -> bool {
    created.is_some_and(|c| now.saturating_sub(c) > max_age.as_secs())
}

/// `sha256:<hex>` or `name@sha256:<hex>`.
pub fn is_digest_reference(r: &str) -> bool {
    let digest = r.rsplit_once('@').map_or(r, |(_, d)| d);
    digest
        .strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub(crate) async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Force-removes the container (and its anonymous volumes) and checks that it is gone.
pub(crate) async fn remove(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    let opts = RemoveContainerOptionsBuilder::new()
        .force(true)
        .v(true)
        .build();
    let mut last = None;
    // A removal can race with the daemon still tearing the container down ("removal
    // already in progress"); a few attempts settle it.
    for attempt in 0..5u64 {
        match docker.remove_container(name, Some(opts.clone())).await {
            Ok(()) => {}
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => last = Some(e.to_string()),
        }
        match docker.inspect_container(name, None).await {
            Err(e) if is_not_found(&e) => return Ok(()),
            _ => tokio::time::sleep(Duration::from_millis(100 * (attempt + 1))).await,
        }
    }
    Err(fail(
        "sandbox.cleanup-failed",
        format!(
            "the container {name} could not be removed ({}); remove it with `docker rm -f {name}`",
            last.unwrap_or_else(|| "it still exists".into())
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_references_are_recognised() {
        let hex = "a".repeat(64);
        assert!(is_digest_reference(&format!("sha256:{hex}")));
        assert!(is_digest_reference(&format!("busybox@sha256:{hex}")));
        assert!(is_digest_reference(&format!("reg:5000/a/b@sha256:{hex}")));
        assert!(!is_digest_reference("busybox:1.36"));
        assert!(!is_digest_reference("busybox"));
        assert!(!is_digest_reference("sha256:abc"));
        assert!(!is_digest_reference(&format!("sha256:{}", "g".repeat(64))));
    }

    #[test]
    fn only_containers_older_than_any_run_can_be_are_stale() {
        let max = Duration::from_secs(660);
        assert!(is_stale(Some(1_000), 1_000 + 661, max));
        assert!(!is_stale(Some(1_000), 1_000 + 660, max));
        assert!(!is_stale(Some(1_000), 1_000 + 5, max));
        assert!(!is_stale(None, 1_000_000, max));
        assert!(
            !is_stale(Some(2_000), 1_000, max),
            "a clock behind the engine's"
        );
    }

    #[test]
    fn api_versions_compare_numerically() {
        assert!(parse_api("1.41").is_some_and(|v| v >= MIN_API));
        assert!(parse_api("1.9").is_some_and(|v| v < MIN_API));
        assert!(parse_api("1.100").is_some_and(|v| v >= MIN_API));
        assert!(parse_api("x").is_none());
    }
}

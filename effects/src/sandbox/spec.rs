//! The container request, built purely from a profile and a run plan.
//!
//! Every hardening field is set here and nowhere else, and the tests below assert each
//! one. The daemon silently drops fields it does not know, so these assertions prove
//! only what was *asked*; the end-to-end probes prove what the container *got*.

use super::profile::Profile;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, ResourcesUlimits};
use std::collections::HashMap;

/// Where the sandbox sees the project snapshot (read-only) and the output area.
pub use super::workspace::{OUTPUT_MOUNT as OUTPUT, WORKSPACE_MOUNT as WORKSPACE};
/// The sandbox user's home directory: a tmpfs like `/tmp`.
pub const HOME: &str = "/home/sandbox";
/// The label every ContextOS container carries, with the run id as its value.
pub const LABEL: &str = "io.contextos.run";
/// The label of a session's container and volume, with the session id as its value:
/// distinct from [`LABEL`] so that the sweep of one-shot runs never takes a warm session.
pub const SESSION_LABEL: &str = "io.contextos.session";
/// When the session's idle deadline was set at creation (unix seconds).
pub const SESSION_DEADLINE_LABEL: &str = "io.contextos.session.deadline";
/// The state directory that holds the session's record (for the orphan sweep).
pub const SESSION_STATE_LABEL: &str = "io.contextos.session.state";
/// The session's scratch directory, so an orphan's scratch goes with its container.
pub const SESSION_SCRATCH_LABEL: &str = "io.contextos.session.scratch";

/// The main process of a session container: the shell every image has, blocked on a
/// standard input that the engine keeps open and nobody writes, so it never exits on
/// its own and needs no `sleep` binary. Commands arrive through exec.
pub fn session_keepalive() -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), "read -r _ ; exit 0".into()]
}

/// The request for a session container: the same floor as a one-shot run, the project
/// view in `mounts` (structured, so no path is split on `:`), the keep-alive process,
/// and the session labels.
pub fn session_body(
    profile: &Profile,
    image_id: &str,
    user: (u32, u32),
    mounts: Vec<Mount>,
    labels: HashMap<String, String>,
) -> ContainerCreateBody {
    let mut host = floor_host_config(profile, user, Vec::new());
    host.binds = None;
    host.mounts = Some(mounts);
    let mut body = floor_body(profile, image_id, &session_keepalive(), user, labels, host);
    body.open_stdin = Some(true);
    body.stdin_once = Some(false);
    body.attach_stdout = Some(false);
    body.attach_stderr = Some(false);
    body
}

/// What one run needs besides its profile.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub id: String,
    /// The image by id (`sha256:…`), resolved before the container is created.
    pub image_id: String,
    pub argv: Vec<String>,
    /// Host directory bound read-only at [`WORKSPACE`].
    pub workspace: String,
    /// Host directory bound read-write at [`OUTPUT`].
    pub output: String,
}

impl RunPlan {
    /// `ctx-<id>`: the container's name, so a leftover can always be found and removed.
    pub fn container_name(&self) -> String {
        format!("ctx-{}", self.id)
    }
}

/// A tmpfs owned by the sandbox user: the mount's own root takes `uid`/`gid`/`mode`,
/// so it is writable whatever mode the image gives the directory it covers (a `mode`
/// alone is not enough on every engine when the image's `/tmp` is 0755).
fn tmpfs_opts(size: u64, (uid, gid): (u32, u32), mode: &str) -> String {
    format!("rw,noexec,nosuid,nodev,size={size},uid={uid},gid={gid},mode={mode}")
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The environment inside the container: nothing from the host, only fixed values and
/// the profile's own `env` entries.
pub fn environment(profile: &Profile) -> Vec<String> {
    let mut env = vec![
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        format!("HOME={HOME}"),
        "TMPDIR=/tmp".to_string(),
        format!("CONTEXTOS_WORKSPACE={WORKSPACE}"),
        format!("CONTEXTOS_OUTPUT={OUTPUT}"),
    ];
    env.extend(profile.env.iter().cloned());
    env
}

/// The hardening floor every ContextOS container gets, one-shot run or session: only
/// the host paths in `binds` and the user differ between the two.
pub fn floor_host_config(profile: &Profile, user: (u32, u32), binds: Vec<String>) -> HostConfig {
    HostConfig {
        readonly_rootfs: Some(true),
        cap_drop: Some(vec!["ALL".into()]),
        cap_add: None,
        privileged: Some(false),
        security_opt: Some(vec!["no-new-privileges:true".into()]),
        network_mode: Some("none".into()),
        ipc_mode: Some("none".into()),
        pid_mode: None,
        init: Some(true),
        pids_limit: Some(clamp(profile.pids)),
        memory: Some(clamp(profile.memory)),
        // Equal to memory: no swap on top of the limit.
        memory_swap: Some(clamp(profile.memory)),
        nano_cpus: Some(clamp(profile.millicpus.saturating_mul(1_000_000))),
        tmpfs: Some(HashMap::from([
            ("/tmp".to_string(), tmpfs_opts(profile.tmpfs, user, "1777")),
            (HOME.to_string(), tmpfs_opts(profile.tmpfs, user, "0700")),
        ])),
        binds: Some(binds),
        ulimits: Some(vec![
            ulimit("nofile", 1024),
            ulimit("core", 0),
            // Bounds every file written, in the output area too (a bind mount has no
            // size limit of its own).
            ulimit("fsize", clamp(profile.results)),
        ]),
        // Removal is explicit, after the exit code and OOM state have been read.
        auto_remove: Some(false),
        restart_policy: None,
        devices: None,
        ..Default::default()
    }
}

/// The container request around [`floor_host_config`]: image, process, user, labels.
pub fn floor_body(
    profile: &Profile,
    image_id: &str,
    argv: &[String],
    user: (u32, u32),
    labels: HashMap<String, String>,
    host: HostConfig,
) -> ContainerCreateBody {
    let (program, args) = match argv.split_first() {
        Some((p, a)) => (vec![p.clone()], a.to_vec()),
        None => (Vec::new(), Vec::new()),
    };
    ContainerCreateBody {
        image: Some(image_id.to_string()),
        entrypoint: Some(program),
        cmd: Some(args),
        user: Some(format!("{}:{}", user.0, user.1)),
        working_dir: Some(WORKSPACE.into()),
        env: Some(environment(profile)),
        labels: Some(labels),
        network_disabled: Some(true),
        attach_stdin: Some(false),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(false),
        tty: Some(false),
        stop_timeout: Some(1),
        host_config: Some(host),
        ..Default::default()
    }
}

pub fn container_body(profile: &Profile, plan: &RunPlan) -> ContainerCreateBody {
    let user = profile.uid_gid();
    let host = floor_host_config(
        profile,
        user,
        vec![
            format!("{}:{WORKSPACE}:ro", plan.workspace),
            format!("{}:{OUTPUT}:rw", plan.output),
        ],
    );
    floor_body(
        profile,
        &plan.image_id,
        &plan.argv,
        user,
        HashMap::from([(LABEL.to_string(), plan.id.clone())]),
        host,
    )
}

fn ulimit(name: &str, v: i64) -> ResourcesUlimits {
    ResourcesUlimits {
        name: Some(name.into()),
        soft: Some(v),
        hard: Some(v),
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
mod tests {
    use super::*;

    fn plan() -> RunPlan {
        RunPlan {
            id: "0b4c".into(),
            image_id: "sha256:abc".into(),
            argv: vec!["/bin/sh".into(), "-c".into(), "echo hi".into()],
            workspace: "/tmp/r/workspace".into(),
            output: "/tmp/r/output".into(),
        }
    }

    #[test]
    fn every_hardening_field_is_set() {
        let p = Profile::floor();
        let b = container_body(&p, &plan());
        let h = b.host_config.clone().unwrap();
        assert_eq!(h.readonly_rootfs, Some(true));
        assert_eq!(h.cap_drop, Some(vec!["ALL".to_string()]));
        assert_eq!(h.cap_add, None);
        assert_eq!(h.privileged, Some(false));
        assert_eq!(
            h.security_opt,
            Some(vec!["no-new-privileges:true".to_string()])
        );
        assert_eq!(h.network_mode.as_deref(), Some("none"));
        assert_eq!(b.network_disabled, Some(true));
        assert_eq!(h.ipc_mode.as_deref(), Some("none"));
        assert_eq!(h.init, Some(true));
        assert_eq!(h.pids_limit, Some(256));
        assert_eq!(h.memory, Some(2 << 30));
        assert_eq!(h.memory_swap, h.memory);
        assert_eq!(h.nano_cpus, Some(2_000_000_000));
        assert_eq!(h.pid_mode, None, "own pid namespace");
        assert_eq!(h.userns_mode, None);
        assert_eq!(h.uts_mode, None);
        assert_eq!(h.devices, None);
        assert_eq!(h.volumes_from, None);
        assert_eq!(h.mounts, None);
        assert_eq!(h.runtime, None);
        assert_eq!(h.auto_remove, Some(false));
        let tmpfs = h.tmpfs.unwrap();
        assert_eq!(tmpfs.len(), 2);
        for dir in ["/tmp", HOME] {
            let o = tmpfs.get(dir).unwrap();
            let mode = if dir == "/tmp" {
                "mode=1777"
            } else {
                "mode=0700"
            };
            for flag in [
                "rw",
                "noexec",
                "nosuid",
                "nodev",
                "size=268435456",
                "uid=65534",
                "gid=65534",
                mode,
            ] {
                assert!(o.split(',').any(|f| f == flag), "{dir}: {o} lacks {flag}");
            }
        }
        assert_eq!(
            h.binds.unwrap(),
            vec![
                "/tmp/r/workspace:/workspace:ro".to_string(),
                "/tmp/r/output:/output:rw".to_string()
            ]
        );
        let limits: Vec<(String, i64)> = h
            .ulimits
            .unwrap()
            .into_iter()
            .map(|u| {
                assert_eq!(u.soft, u.hard);
                (u.name.unwrap(), u.hard.unwrap())
            })
            .collect();
        assert!(limits.contains(&("nofile".into(), 1024)));
        assert!(limits.contains(&("core".into(), 0)));
        assert!(limits.contains(&("fsize".into(), 64 << 20)));
        assert!(
            !limits.iter().any(|(n, _)| n == "nproc"),
            "nproc is per uid across containers"
        );
        assert_eq!(b.user.as_deref(), Some("65534:65534"));
        assert_eq!(b.working_dir.as_deref(), Some("/workspace"));
        assert_eq!(b.image.as_deref(), Some("sha256:abc"));
        assert_eq!(b.entrypoint, Some(vec!["/bin/sh".to_string()]));
        assert_eq!(b.cmd, Some(vec!["-c".to_string(), "echo hi".to_string()]));
        assert_eq!(b.tty, Some(false));
        assert_eq!(b.open_stdin, Some(false));
        assert_eq!(
            b.labels.unwrap().get(LABEL).map(String::as_str),
            Some("0b4c")
        );
    }

    #[test]
    fn no_host_path_but_the_two_run_directories_and_no_socket() {
        let b = container_body(&Profile::floor(), &plan());
        let text = serde_json::to_string(&b).unwrap();
        assert!(!text.contains("docker.sock"));
        let binds = b.host_config.unwrap().binds.unwrap();
        assert_eq!(binds.len(), 2);
        assert!(binds.iter().all(|b| b.starts_with("/tmp/r/")));
    }

    #[test]
    fn the_profile_drives_the_limits_and_the_environment() {
        let mut p = Profile::floor();
        p.memory = 128 << 20;
        p.pids = 32;
        p.millicpus = 500;
        p.tmpfs = 8 << 20;
        p.user = "1000:1000".into();
        p.env = vec!["A=1".into()];
        let b = container_body(&p, &plan());
        let h = b.host_config.clone().unwrap();
        assert_eq!(h.memory, Some(128 << 20));
        assert_eq!(h.memory_swap, Some(128 << 20));
        assert_eq!(h.pids_limit, Some(32));
        assert_eq!(h.nano_cpus, Some(500_000_000));
        let tmpfs = h.tmpfs.unwrap();
        assert!(tmpfs["/tmp"].contains("size=8388608"));
        assert!(tmpfs["/tmp"].contains("uid=1000,gid=1000,mode=1777"));
        assert!(tmpfs[HOME].contains("uid=1000,gid=1000,mode=0700"));
        assert_eq!(b.user.as_deref(), Some("1000:1000"));
        let env = b.env.unwrap();
        assert!(env.contains(&"A=1".to_string()));
        assert!(env.contains(&"HOME=/home/sandbox".to_string()));
        assert!(env.contains(&"CONTEXTOS_OUTPUT=/output".to_string()));
        assert!(!env
            .iter()
            .any(|e| e.starts_with("DOCKER_") || e.starts_with("GIT_")));
    }

    #[test]
    fn a_session_container_gets_the_same_floor() {
        let p = Profile::floor();
        let one = container_body(&p, &plan());
        let labels = HashMap::from([(SESSION_LABEL.to_string(), "s1".to_string())]);
        let mounts = vec![Mount {
            target: Some(WORKSPACE.into()),
            source: Some("ctx-s-s1".into()),
            ..Default::default()
        }];
        let s = session_body(&p, "sha256:abc", (1000, 1000), mounts.clone(), labels);
        let mut h = s.host_config.clone().unwrap();
        assert_eq!(h.mounts.take(), Some(mounts));
        assert_eq!(h.binds, None);
        let mut one_h = one.host_config.clone().unwrap();
        one_h.binds = None;
        let tmpfs = h.tmpfs.take().unwrap();
        one_h.tmpfs = None;
        assert_eq!(
            h, one_h,
            "every hardening field but the binds and tmpfs owner"
        );
        assert!(tmpfs["/tmp"].contains("uid=1000,gid=1000,mode=1777"));
        assert_eq!(s.user.as_deref(), Some("1000:1000"));
        assert_eq!(s.network_disabled, Some(true));
        assert_eq!(
            s.open_stdin,
            Some(true),
            "the keep-alive reads a stdin left open"
        );
        assert_eq!(s.entrypoint, Some(vec!["/bin/sh".to_string()]));
        let labels = s.labels.unwrap();
        assert!(labels.contains_key(SESSION_LABEL));
        assert!(
            !labels.contains_key(LABEL),
            "the one-shot sweep never sees it"
        );
    }

    #[test]
    fn the_name_is_derived_from_the_run_id() {
        assert_eq!(plan().container_name(), "ctx-0b4c");
    }
}

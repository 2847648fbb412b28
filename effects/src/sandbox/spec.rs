//! The session container request, built purely from a profile.
//!
//! Every hardening field is set here and nowhere else, and the tests below assert each
//! one. The daemon silently drops fields it does not know, so these assertions prove
//! only what was *asked*; the end-to-end probes prove what the container *got*.

use super::profile::Profile;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, ResourcesUlimits};
use std::collections::HashMap;

/// Where the sandbox sees the project (writable, its changes captured by the session).
pub use super::workspace::WORKSPACE_MOUNT as WORKSPACE;
/// The sandbox user's home directory: a tmpfs like `/tmp`.
pub const HOME: &str = "/home/sandbox";
/// The label of the containers of one-shot runs (before sessions), with the run id as
/// its value: no current run creates one, but [`Runner::sweep_stale`] still removes the
/// leftovers of an older `contextos` that was killed.
///
/// [`Runner::sweep_stale`]: super::runner::Runner::sweep_stale
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

/// The request for a session container: the hardening floor, the project view in
/// `mounts` (structured, so no path is split on `:`; no bind strings at all), the
/// keep-alive process as its main process, and the session labels.
pub fn session_body(
    profile: &Profile,
    image_id: &str,
    user: (u32, u32),
    mounts: Vec<Mount>,
    labels: HashMap<String, String>,
) -> ContainerCreateBody {
    let (program, args) = match session_keepalive().split_first() {
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
        // The keep-alive reads a standard input that stays open and silent; the
        // commands' own output comes through exec, so nothing attaches here.
        attach_stdin: Some(false),
        attach_stdout: Some(false),
        attach_stderr: Some(false),
        open_stdin: Some(true),
        stdin_once: Some(false),
        tty: Some(false),
        stop_timeout: Some(1),
        host_config: Some(floor_host_config(profile, user, mounts)),
        ..Default::default()
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
/// the profile's own `env` entries. Commands started through exec get the same.
pub fn environment(profile: &Profile) -> Vec<String> {
    let mut env = vec![
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        format!("HOME={HOME}"),
        "TMPDIR=/tmp".to_string(),
        format!("CONTEXTOS_WORKSPACE={WORKSPACE}"),
    ];
    env.extend(profile.env.iter().cloned());
    env
}

/// The hardening floor of every session container; the only host paths it names are
/// the session's own `mounts`.
fn floor_host_config(profile: &Profile, user: (u32, u32), mounts: Vec<Mount>) -> HostConfig {
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
        binds: None,
        mounts: Some(mounts),
        ulimits: Some(vec![
            ulimit("nofile", 1024),
            ulimit("core", 0),
            // Bounds every file written, in the workspace too (a volume or a bind
            // mount has no size limit of its own).
            ulimit("fsize", clamp(profile.results)),
        ]),
        // Removal is explicit (close, idle sweep), never a side effect of an exit.
        auto_remove: Some(false),
        restart_policy: None,
        devices: None,
        ..Default::default()
    }
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
    use bollard::models::{MountType, MountVolumeOptions};

    /// The mounts a session gives: its workspace volume and one read-only hide.
    fn mounts() -> Vec<Mount> {
        vec![
            Mount {
                target: Some(WORKSPACE.into()),
                source: Some("ctx-s-s1-0123456789ab".into()),
                typ: Some(MountType::VOLUME),
                read_only: Some(false),
                volume_options: Some(MountVolumeOptions {
                    no_copy: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            },
            Mount {
                target: Some(format!("{WORKSPACE}/.git")),
                source: Some("/tmp/contextos-session-s1-ab/empty-dir".into()),
                typ: Some(MountType::BIND),
                read_only: Some(true),
                ..Default::default()
            },
        ]
    }

    fn labels() -> HashMap<String, String> {
        HashMap::from([
            (SESSION_LABEL.to_string(), "s1".to_string()),
            (
                SESSION_STATE_LABEL.to_string(),
                "/p/.contextos/state/sessions".to_string(),
            ),
        ])
    }

    fn body(p: &Profile) -> ContainerCreateBody {
        session_body(p, "sha256:abc", p.uid_gid(), mounts(), labels())
    }

    #[test]
    fn every_hardening_field_is_set() {
        let p = Profile::floor();
        let b = body(&p);
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
        assert_eq!(h.cgroupns_mode, None);
        assert_eq!(h.devices, None);
        assert_eq!(h.device_requests, None);
        assert_eq!(h.volumes_from, None);
        assert_eq!(h.volume_driver, None);
        assert_eq!(h.runtime, None);
        assert_eq!(h.extra_hosts, None);
        assert_eq!(h.port_bindings, None);
        assert_eq!(h.publish_all_ports, None);
        assert_eq!(h.auto_remove, Some(false));
        assert_eq!(h.restart_policy, None);
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
            assert_eq!(o.split(',').count(), 8, "{dir}: nothing else: {o}");
        }
        // Only the session's own mounts, structured; no bind strings.
        assert_eq!(h.binds, None);
        assert_eq!(h.mounts, Some(mounts()));
        let limits: Vec<(String, i64)> = h
            .ulimits
            .unwrap()
            .into_iter()
            .map(|u| {
                assert_eq!(u.soft, u.hard);
                (u.name.unwrap(), u.hard.unwrap())
            })
            .collect();
        assert_eq!(
            limits,
            vec![
                ("nofile".to_string(), 1024),
                ("core".to_string(), 0),
                ("fsize".to_string(), 64 << 20),
            ]
        );
        assert!(
            !limits.iter().any(|(n, _)| n == "nproc"),
            "nproc is per uid across containers"
        );
        assert_eq!(b.user.as_deref(), Some("65534:65534"));
        assert_eq!(b.working_dir.as_deref(), Some("/workspace"));
        assert_eq!(b.image.as_deref(), Some("sha256:abc"));
        // The keep-alive is the main process; commands come through exec.
        assert_eq!(b.entrypoint, Some(vec!["/bin/sh".to_string()]));
        assert_eq!(
            b.cmd,
            Some(vec!["-c".to_string(), "read -r _ ; exit 0".to_string()])
        );
        assert_eq!(b.tty, Some(false));
        assert_eq!(b.open_stdin, Some(true));
        assert_eq!(b.stdin_once, Some(false));
        assert_eq!(b.attach_stdin, Some(false));
        assert_eq!(b.attach_stdout, Some(false));
        assert_eq!(b.attach_stderr, Some(false));
        assert_eq!(b.exposed_ports, None);
        assert_eq!(b.volumes, None);
        assert_eq!(b.labels, Some(labels()));
    }

    #[test]
    fn no_host_path_but_the_session_mounts_and_no_socket() {
        let b = body(&Profile::floor());
        let text = serde_json::to_string(&b).unwrap();
        assert!(!text.contains("docker.sock"), "{text}");
        assert!(!text.contains("/var/run"), "{text}");
        assert!(!text.contains("podman"), "{text}");
        let h = b.host_config.unwrap();
        let sources: Vec<_> = h
            .mounts
            .unwrap()
            .iter()
            .map(|m| m.source.clone().unwrap())
            .collect();
        assert_eq!(
            sources,
            vec![
                "ctx-s-s1-0123456789ab".to_string(),
                "/tmp/contextos-session-s1-ab/empty-dir".to_string()
            ]
        );
        // The only host paths in the request are the mounts' sources and the state
        // label's value (a label, not a mount).
        let mut rest = text.clone();
        for known in [
            "/tmp/contextos-session-s1-ab/empty-dir",
            "/p/.contextos/state/sessions",
        ] {
            rest = rest.replace(known, "");
        }
        for (i, _) in rest.match_indices("\"/") {
            let tail: String = rest[i + 1..].chars().take(40).collect();
            assert!(
                ["/workspace", "/tmp", "/home/sandbox", "/bin/sh"]
                    .iter()
                    .any(|ok| tail.starts_with(ok)),
                "an unexpected absolute path in the request: {tail}"
            );
        }
    }

    #[test]
    fn the_profile_drives_the_limits_the_user_and_the_environment() {
        let mut p = Profile::floor();
        p.memory = 128 << 20;
        p.pids = 32;
        p.millicpus = 500;
        p.tmpfs = 8 << 20;
        p.results = 1 << 20;
        p.user = "1000:1000".into();
        p.env = vec!["A=1".into()];
        let b = body(&p);
        let h = b.host_config.clone().unwrap();
        assert_eq!(h.memory, Some(128 << 20));
        assert_eq!(h.memory_swap, Some(128 << 20));
        assert_eq!(h.pids_limit, Some(32));
        assert_eq!(h.nano_cpus, Some(500_000_000));
        let fsize = h
            .ulimits
            .unwrap()
            .into_iter()
            .find(|u| u.name.as_deref() == Some("fsize"));
        assert_eq!(fsize.and_then(|u| u.hard), Some(1 << 20));
        let tmpfs = h.tmpfs.unwrap();
        assert!(tmpfs["/tmp"].contains("size=8388608"));
        assert!(tmpfs["/tmp"].contains("uid=1000,gid=1000,mode=1777"));
        assert!(tmpfs[HOME].contains("uid=1000,gid=1000,mode=0700"));
        assert_eq!(b.user.as_deref(), Some("1000:1000"));
        let env = b.env.unwrap();
        assert_eq!(
            env,
            vec![
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
                "HOME=/home/sandbox".to_string(),
                "TMPDIR=/tmp".to_string(),
                "CONTEXTOS_WORKSPACE=/workspace".to_string(),
                "A=1".to_string(),
            ],
            "nothing from the host, no output area"
        );
    }

    #[test]
    fn the_tmpfs_owner_is_the_session_user_not_the_profile_default() {
        // Overlay mode runs as the project's owner: the tmpfs roots must be theirs.
        let p = Profile::floor();
        let b = session_body(&p, "sha256:abc", (1000, 1001), mounts(), labels());
        assert_eq!(b.user.as_deref(), Some("1000:1001"));
        let tmpfs = b.host_config.unwrap().tmpfs.unwrap();
        assert!(tmpfs["/tmp"].contains("uid=1000,gid=1001,mode=1777"));
        assert!(tmpfs[HOME].contains("uid=1000,gid=1001,mode=0700"));
    }
}

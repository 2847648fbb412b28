//! The sandbox profile: the limits a run gets, computed purely from the stdlib floor,
//! an optional named profile and the `with sandbox { … }` obligations of the rules that
//! allowed the command.
//!
//! The floor is the loosest a sandbox can ever be. Everything laid over it can only
//! tighten: a smaller limit wins over a larger one, and a value beyond the floor (more
//! memory, a network, a writable root, root inside the container) is an error, never
//! silently clamped, so a policy author learns that the rule cannot be honoured.
//!
//! The floor is a Rust constant rather than a stdlib policy on purpose: a project's own
//! policies override stdlib `let`s and defaults, so a floor written as policy could be
//! loosened by the very repository it is meant to contain.

use contextos_core::ir::ObligationIr;
use serde::Serialize;
use std::time::Duration;

/// A profile failed to build: an unknown key or value, a loosening, or a conflict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sandbox profile: {0}")]
pub struct ProfileError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, ProfileError> {
    Err(ProfileError(msg.into()))
}

/// Whether an image must be named by digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DigestRule {
    /// A tag is accepted; it is resolved once and the run uses (and records) the digest.
    Recorded,
    /// Only `sha256:…` or `name@sha256:…` references are accepted.
    Required,
}

/// Everything a sandboxed run is limited to. Sizes are bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// Names of the profiles laid over the floor, in order (`default` first).
    pub names: Vec<String>,
    pub image: Option<String>,
    /// Always `none`: the floor has no network and nothing may add one.
    pub network: &'static str,
    pub memory: u64,
    /// Thousandths of a CPU.
    pub millicpus: u64,
    pub pids: u64,
    #[serde(serialize_with = "secs")]
    pub timeout: Duration,
    /// `uid:gid`, never 0.
    pub user: String,
    /// Always true.
    pub readonly: bool,
    /// Size of each tmpfs (`/tmp` and the home directory).
    pub tmpfs: u64,
    /// Extra environment (`NAME=value`) set inside the container.
    pub env: Vec<String>,
    /// Bytes of stdout and of stderr kept; the rest is counted and hashed, not kept.
    pub output: u64,
    /// Largest file the command may write, and the total the output area may hold.
    pub results: u64,
    /// Whether a missing image may be pulled at run time.
    pub pull: bool,
    pub digest: DigestRule,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// The nobody/nogroup ids, present in almost every base image.
pub const DEFAULT_USER: &str = "65534:65534";

impl Profile {
    /// The stdlib floor: the loosest profile any run may get.
    pub fn floor() -> Profile {
        Profile {
            names: vec!["default".into()],
            image: None,
            network: "none",
            memory: 2 * GIB,
            millicpus: 2000,
            pids: 256,
            timeout: Duration::from_secs(600),
            user: DEFAULT_USER.into(),
            readonly: true,
            tmpfs: 256 * MIB,
            env: Vec::new(),
            output: 4 * MIB,
            results: 64 * MIB,
            pull: false,
            digest: DigestRule::Recorded,
        }
    }

    /// Names a `profile:` key or `--profile` may use.
    pub const NAMED: [&'static str; 2] = ["default", "strict"];

    /// Lays a named profile over `self` (tightening only).
    pub fn apply_named(&mut self, name: &str) -> Result<(), ProfileError> {
        match name {
            "default" => {}
            "strict" => {
                self.memory = self.memory.min(256 * MIB);
                self.millicpus = self.millicpus.min(1000);
                self.pids = self.pids.min(64);
                self.timeout = self.timeout.min(Duration::from_secs(60));
                self.tmpfs = self.tmpfs.min(16 * MIB);
                self.output = self.output.min(MIB);
                self.results = self.results.min(16 * MIB);
                self.digest = DigestRule::Required;
            }
            other => {
                return err(format!(
                    "unknown profile `{other}` (known: {})",
                    Self::NAMED.join(", ")
                ))
            }
        }
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
        }
        Ok(())
    }

    /// Lays one `with sandbox { … }` obligation over `self`. Named profiles go first
    /// (see [`resolve`]), so their values and the entries here combine by tightening.
    pub fn apply_obligation(&mut self, o: &ObligationIr) -> Result<(), ProfileError> {
        let floor = Profile::floor();
        for (key, value) in &o.entries {
            match key.as_str() {
                "profile" => {} // handled by `resolve` before any entry
                "image" => {
                    let img = as_str(key, value)?;
                    self.set_image(img)?;
                }
                "network" => {
                    if as_str(key, value)? != "none" {
                        return err(format!(
                            "network `{}` loosens the floor: the sandbox has no network",
                            as_str(key, value)?
                        ));
                    }
                }
                "memory" => {
                    self.memory = tighten(key, self.memory, size(key, value)?, floor.memory)?
                }
                "cpus" => {
                    self.millicpus = tighten(key, self.millicpus, cpus(value)?, floor.millicpus)?
                }
                "pids" => self.pids = tighten(key, self.pids, count(key, value)?, floor.pids)?,
                "timeout" => {
                    let t = duration(key, value)?;
                    if t > floor.timeout {
                        return err(format!(
                            "timeout {}s loosens the floor ({}s)",
                            t.as_secs_f64(),
                            floor.timeout.as_secs()
                        ));
                    }
                    self.timeout = self.timeout.min(t);
                }
                "user" => {
                    let u = as_str(key, value)?;
                    self.user = user(u)?;
                }
                "readonly" => match value {
                    serde_json::Value::Bool(true) => {}
                    _ => return err("readonly: the root filesystem is always read-only"),
                },
                "tmpfs" => self.tmpfs = tighten(key, self.tmpfs, size(key, value)?, floor.tmpfs)?,
                "env" => {
                    for e in list(key, value)? {
                        self.env.push(env_entry(&e)?);
                    }
                }
                "output" => {
                    self.output = tighten(key, self.output, size(key, value)?, floor.output)?
                }
                // The one key that may widen the floor: pulling is a policy decision the
                // issue leaves to the policy, and it changes what runs, not its limits.
                "pull" => match value {
                    serde_json::Value::Bool(b) => self.pull = self.pull || *b,
                    other => return err(format!("pull: expected true or false, found {other}")),
                },
                "digest" => match as_str(key, value)? {
                    "required" => self.digest = DigestRule::Required,
                    "recorded" => {}
                    other => {
                        return err(format!(
                            "digest: expected \"required\" or \"recorded\", found {other:?}"
                        ))
                    }
                },
                other => return err(format!("unknown key `{other}`")),
            }
        }
        Ok(())
    }

    /// Sets the image, refusing a second, different one.
    pub fn set_image(&mut self, image: &str) -> Result<(), ProfileError> {
        if image.trim().is_empty() {
            return err("the image name is empty");
        }
        match &self.image {
            Some(prev) if prev != image => err(format!(
                "two different images are required: `{prev}` and `{image}`"
            )),
            _ => {
                self.image = Some(image.to_string());
                Ok(())
            }
        }
    }

    /// Tightens the timeout (a command-line `--timeout`).
    pub fn tighten_timeout(&mut self, t: Duration) {
        self.timeout = self.timeout.min(t);
    }

    /// The `uid` and `gid` of [`Profile::user`].
    pub fn uid_gid(&self) -> (u32, u32) {
        let mut it = self
            .user
            .split(':')
            .map(|p| p.parse::<u32>().unwrap_or(65534));
        let uid = it.next().unwrap_or(65534);
        (uid, it.next().unwrap_or(uid))
    }
}

/// The profile a run gets: the floor, then every named profile (from `--profile` and
/// from the obligations' `profile` keys), then each obligation's own entries.
pub fn resolve(
    obligations: &[ObligationIr],
    cli_profile: Option<&str>,
) -> Result<Profile, ProfileError> {
    let mut p = Profile::floor();
    let sandbox: Vec<&ObligationIr> = obligations.iter().filter(|o| o.name == "sandbox").collect();
    if let Some(name) = cli_profile {
        p.apply_named(name)?;
    }
    for o in &sandbox {
        for (k, v) in &o.entries {
            if k == "profile" {
                p.apply_named(as_str(k, v)?)?;
            }
        }
    }
    for o in sandbox {
        p.apply_obligation(o)?;
    }
    Ok(p)
}

fn tighten(key: &str, current: u64, wanted: u64, floor: u64) -> Result<u64, ProfileError> {
    if wanted == 0 {
        return err(format!("{key}: 0 is not a limit"));
    }
    if wanted > floor {
        return err(format!("{key} {wanted} loosens the floor ({floor})"));
    }
    Ok(current.min(wanted))
}

fn as_str<'a>(key: &str, v: &'a serde_json::Value) -> Result<&'a str, ProfileError> {
    v.as_str()
        .ok_or_else(|| ProfileError(format!("{key}: expected a string, found {v}")))
}

fn list(key: &str, v: &serde_json::Value) -> Result<Vec<String>, ProfileError> {
    match v {
        serde_json::Value::String(s) => Ok(vec![s.clone()]),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| as_str(key, i).map(str::to_string))
            .collect(),
        other => err(format!("{key}: expected a list of strings, found {other}")),
    }
}

fn count(key: &str, v: &serde_json::Value) -> Result<u64, ProfileError> {
    match v {
        serde_json::Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| ProfileError(format!("{key}: expected a positive integer, found {n}"))),
        serde_json::Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| ProfileError(format!("{key}: expected a positive integer, found {s:?}"))),
        other => err(format!("{key}: expected a positive integer, found {other}")),
    }
}

fn size(key: &str, v: &serde_json::Value) -> Result<u64, ProfileError> {
    match v {
        serde_json::Value::String(s) => {
            parse_size(s).map_err(|m| ProfileError(format!("{key}: {m}")))
        }
        _ => count(key, v),
    }
}

fn cpus(v: &serde_json::Value) -> Result<u64, ProfileError> {
    match v {
        serde_json::Value::Number(n) => n
            .as_u64()
            .and_then(|c| c.checked_mul(1000))
            .ok_or_else(|| ProfileError(format!("cpus: expected a positive number, found {n}"))),
        serde_json::Value::String(s) => parse_cpus(s).map_err(ProfileError),
        other => err(format!("cpus: expected a number, found {other}")),
    }
}

fn duration(key: &str, v: &serde_json::Value) -> Result<Duration, ProfileError> {
    match v {
        serde_json::Value::String(s) => {
            parse_duration(s).map_err(|m| ProfileError(format!("{key}: {m}")))
        }
        _ => count(key, v).map(Duration::from_secs),
    }
}

/// `512MiB`, `2GiB`, `64m` (binary, as docker reads it), `16MB` (decimal), or bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("expected a size such as 512MiB, found {s:?}"))?;
    let mult = match unit.trim() {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" => KIB,
        "m" | "M" | "MiB" => MIB,
        "g" | "G" | "GiB" => GIB,
        "KB" | "kB" => 1000,
        "MB" => 1000 * 1000,
        "GB" => 1000 * 1000 * 1000,
        other => return Err(format!("unknown size unit {other:?} in {s:?}")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} is too large"))
}

/// `1`, `0.5`, `1.25` CPUs as thousandths.
pub fn parse_cpus(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let bad = || format!("cpus: expected a number such as 1.5, found {s:?}");
    if int.is_empty() && frac.is_empty() || frac.len() > 3 {
        return Err(bad());
    }
    let i: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let f: u64 = if frac.is_empty() {
        0
    } else {
        let digits: u64 = frac.parse().map_err(|_| bad())?;
        digits * 10u64.pow(3 - frac.len() as u32)
    };
    let m = i
        .checked_mul(1000)
        .and_then(|m| m.checked_add(f))
        .ok_or_else(bad)?;
    if m == 0 {
        return Err("cpus: 0 is not a limit".into());
    }
    Ok(m)
}

/// `30s`, `10m`, `1h`, `500ms`, or whole seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("expected a duration such as 10m, found {s:?}"))?;
    let d = match unit.trim() {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" | "min" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        other => return Err(format!("unknown duration unit {other:?} in {s:?}")),
    };
    if d.is_zero() {
        return Err("a zero timeout is not a limit".into());
    }
    Ok(d)
}

/// A numeric `uid` or `uid:gid`, never root.
fn user(u: &str) -> Result<String, ProfileError> {
    let mut parts = u.split(':');
    let ids: Vec<Option<u32>> = parts.by_ref().take(2).map(|p| p.parse().ok()).collect();
    if parts.next().is_some() || ids.iter().any(Option::is_none) || ids.is_empty() {
        return err(format!(
            "user: expected numeric `uid:gid` (names resolve inside the image, so they are not accepted), found {u:?}"
        ));
    }
    let uid = ids.first().copied().flatten().unwrap_or(0);
    let gid = ids.get(1).copied().flatten().unwrap_or(uid);
    if uid == 0 || gid == 0 {
        return err("user: root inside the sandbox loosens the floor");
    }
    Ok(format!("{uid}:{gid}"))
}

fn env_entry(e: &str) -> Result<String, ProfileError> {
    let Some((name, _)) = e.split_once('=') else {
        return err(format!("env: expected NAME=value, found {e:?}"));
    };
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return err(format!("env: invalid variable name {name:?}"));
    }
    Ok(e.to_string())
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ob(entries: &[(&str, serde_json::Value)]) -> ObligationIr {
        ObligationIr {
            name: "sandbox".into(),
            entries: entries
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn no_obligation_gives_the_floor() {
        assert_eq!(resolve(&[], None).unwrap(), Profile::floor());
        let f = Profile::floor();
        assert_eq!(f.network, "none");
        assert!(f.readonly);
        assert_eq!(f.user, "65534:65534");
        assert!(!f.pull);
    }

    #[test]
    fn obligations_tighten_and_the_smaller_value_wins() {
        let p = resolve(
            &[
                ob(&[("memory", json!("1GiB")), ("timeout", json!("10m"))]),
                ob(&[("memory", json!("256MiB")), ("pids", json!(32))]),
            ],
            None,
        )
        .unwrap();
        assert_eq!(p.memory, 256 * MIB);
        assert_eq!(p.pids, 32);
        assert_eq!(p.timeout, Duration::from_secs(600));
        // Order does not matter.
        let q = resolve(
            &[
                ob(&[("memory", json!("256MiB")), ("pids", json!(32))]),
                ob(&[("memory", json!("1GiB")), ("timeout", json!("10m"))]),
            ],
            None,
        )
        .unwrap();
        assert_eq!(p, q);
    }

    #[test]
    fn loosening_is_an_error() {
        for (k, v) in [
            ("memory", json!("8GiB")),
            ("cpus", json!(16)),
            ("pids", json!(100000)),
            ("timeout", json!("2h")),
            ("tmpfs", json!("4GiB")),
            ("output", json!("1GiB")),
            ("network", json!("bridge")),
            ("network", json!("host")),
            ("readonly", json!(false)),
            ("user", json!("0:0")),
            ("user", json!("0")),
            ("user", json!("1000:0")),
            ("user", json!("root")),
            ("memory", json!(0)),
        ] {
            let r = resolve(&[ob(&[(k, v.clone())])], None);
            assert!(r.is_err(), "{k}: {v} must be refused, got {r:?}");
        }
    }

    #[test]
    fn named_profiles_tighten_and_obligations_cannot_undo_them() {
        let p = resolve(&[ob(&[("memory", json!("1GiB"))])], Some("strict")).unwrap();
        assert_eq!(p.memory, 256 * MIB, "strict stays stricter than the rule");
        assert_eq!(p.digest, DigestRule::Required);
        assert_eq!(p.names, vec!["default", "strict"]);
        let q = resolve(&[ob(&[("profile", json!("strict"))])], None).unwrap();
        assert_eq!(q.pids, 64);
        assert!(resolve(&[], Some("lax")).is_err());
    }

    #[test]
    fn images_must_agree() {
        let p = resolve(
            &[
                ob(&[("image", json!("a:1"))]),
                ob(&[("image", json!("a:1"))]),
            ],
            None,
        )
        .unwrap();
        assert_eq!(p.image.as_deref(), Some("a:1"));
        assert!(resolve(
            &[
                ob(&[("image", json!("a:1"))]),
                ob(&[("image", json!("b:1"))])
            ],
            None
        )
        .is_err());
    }

    #[test]
    fn other_obligations_are_ignored_and_unknown_keys_refused() {
        let other = ObligationIr {
            name: "other".into(),
            entries: vec![("memory".into(), json!("64GiB"))],
        };
        assert_eq!(resolve(&[other], None).unwrap(), Profile::floor());
        assert!(resolve(&[ob(&[("privileged", json!(true))])], None).is_err());
    }

    #[test]
    fn env_and_user_are_validated() {
        let p = resolve(
            &[ob(&[
                ("env", json!(["A=1", "B_2=x=y"])),
                ("user", json!("1000")),
            ])],
            None,
        )
        .unwrap();
        assert_eq!(p.env, vec!["A=1", "B_2=x=y"]);
        assert_eq!(p.user, "1000:1000");
        assert_eq!(p.uid_gid(), (1000, 1000));
        assert!(resolve(&[ob(&[("env", json!(["NOVALUE"]))])], None).is_err());
        assert!(resolve(&[ob(&[("env", json!(["1X=a"]))])], None).is_err());
    }

    #[test]
    fn units_parse() {
        assert_eq!(parse_size("512MiB").unwrap(), 512 * MIB);
        assert_eq!(parse_size("64m").unwrap(), 64 * MIB);
        assert_eq!(parse_size("16MB").unwrap(), 16_000_000);
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("1TiB").is_err());
        assert_eq!(parse_cpus("1.5").unwrap(), 1500);
        assert_eq!(parse_cpus("0.25").unwrap(), 250);
        assert!(parse_cpus("0").is_err());
        assert!(parse_cpus("1.2345").is_err());
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("1d").is_err());
    }
}

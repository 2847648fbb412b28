//! The user-scope configuration (`$XDG_CONFIG_HOME/contextos/config.toml`, else
//! `~/.config/contextos/config.toml`): the only place host-unsafe mode can be switched on
//! without a flag. A repository's `contextos.toml` never can, and a user configuration
//! that lies inside the project is refused, so the repository cannot speak for the user.
//! `run` reads it to decide whether a command may run on the host, the hook to decide
//! whether the agent's commands are routed into the sandbox.

use crate::support::CliError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    #[serde(default)]
    pub run: UserRun,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRun {
    /// Commands run on the host, outside the sandbox (and the hook routes nothing).
    #[serde(default)]
    pub host_unsafe: bool,
}

fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("contextos/config.toml"))
}

/// Reads the user config: its path when there is one, and its settings (the defaults
/// without one). A file inside the project, or one that cannot be read or parsed, is an
/// error: host-unsafe mode is never guessed.
pub fn user_config(project_root: &Path) -> Result<(Option<PathBuf>, UserConfig), CliError> {
    let Some(path) = user_config_path() else {
        return Ok((None, UserConfig::default()));
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((None, UserConfig::default()))
        }
        Err(e) => return Err(CliError::io(format!("cannot read {}", path.display()), e)),
    };
    let inside = match (
        std::fs::canonicalize(&path),
        std::fs::canonicalize(project_root),
    ) {
        (Ok(c), Ok(r)) => c.starts_with(&r),
        _ => true,
    };
    if inside {
        return Err(CliError::Input(format!(
            "{} lies inside the project: the user configuration must live outside the \
             repository (a repository cannot choose host-unsafe mode)",
            path.display()
        )));
    }
    let cfg = toml::from_str(&text).map_err(|e| {
        CliError::Input(format!(
            "{}: invalid configuration: {}",
            path.display(),
            e.message()
        ))
    })?;
    Ok((Some(path), cfg))
}

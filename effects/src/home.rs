//! The user's home directory, as the shell would expand `~`: what path rules call `~/…`.

/// `$HOME` when it is an absolute path, `/`-separated without a trailing `/`; `None` when
/// unset, empty, `/` or relative (then only the `~` spellings are recognised as home).
pub fn home_dir() -> Option<String> {
    let h = std::env::var("HOME").ok()?;
    if !h.starts_with('/') {
        return None;
    }
    // A home of `/` would make every absolute path a home path.
    let t = h.trim_end_matches('/');
    (!t.is_empty()).then(|| t.to_string())
}

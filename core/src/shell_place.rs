//! Where a shell line runs and where the paths it names land: the project root (in every
//! spelling), the working directory, the home directory, and whether the line runs in the
//! sandbox. Paths come out in the form path requests use: project-relative inside the
//! project, `~/…` under the home directory, absolute elsewhere.

/// The project root and the working directory of a shell line.
#[derive(Debug, Clone, Default)]
pub struct ShellBase {
    /// The project root as an absolute path, `/`-separated, without a trailing `/`.
    /// Several spellings may name it (a symlinked checkout); any of them is recognised.
    pub roots: Vec<String>,
    /// The working directory relative to the root (`""` at the root).
    pub cwd: String,
    /// The line runs in a sandbox whose only host-backed directory is the project (seen
    /// at one of `roots`): every other absolute path, `~` and `$HOME` are the container's
    /// own files and are not judged as host paths. File targets known only at run time
    /// are not rejected either, because the sandbox's changeset is decided path by path
    /// after the command ran; the program itself is still decided.
    pub contained: bool,
    /// The home directory (absolute, no trailing `/`), so `/home/me/.ssh/id_rsa` and
    /// `~/.ssh/id_rsa` are one path to the rules. `None`: only `~`, `$HOME` and `${HOME}`
    /// spellings are recognised as home.
    pub home: Option<String>,
}

/// A directory or file as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Known before the command runs, in path-request form.
    Known(String),
    /// Only known at run time (expansion, glob, a `cd` to an unknown directory).
    Dynamic,
}

impl ShellBase {
    /// A target as a path request sees it, relative to the line's working directory.
    pub fn resolve(&self, target: &str) -> String {
        match self.resolve_from(&self.start(), target) {
            Place::Known(p) => p,
            Place::Dynamic => target.to_string(),
        }
    }

    /// The line's starting directory in path-request form (`""` at the root).
    pub fn start(&self) -> String {
        self.cwd.clone()
    }

    /// The working directory of a command whose own `cwd` (relative to the line's, see
    /// `contextos_shell::SimpleCommand::cwd`) is `step`.
    pub fn locate(&self, step: Option<&str>) -> Place {
        match step {
            None => Place::Dynamic,
            Some(s) => self.resolve_from(&self.start(), s),
        }
    }

    /// `target` resolved from the directory `dir` (itself in path-request form).
    pub fn resolve_from(&self, dir: &str, target: &str) -> Place {
        let target = target.replace('\\', "/");
        if let Some(home_rel) = home_relative(&target) {
            return Place::Known(normalise(&format!("~/{home_rel}")));
        }
        if target.starts_with('$') || target.starts_with('~') {
            // Another variable, another user's home: only known at run time.
            return Place::Dynamic;
        }
        if target.starts_with('/') {
            return Place::Known(self.relativise(&normalise(&target)));
        }
        let joined = if dir.is_empty() {
            target.clone()
        } else {
            format!("{dir}/{target}")
        };
        if joined.starts_with('/') || joined.starts_with('~') {
            return Place::Known(self.relativise(&normalise(&joined)));
        }
        // Project-relative: climbing above the root leaves the project.
        let folded = normalise(&joined);
        if folded == ".." || folded.starts_with("../") {
            return Place::Known(match self.roots.first() {
                Some(root) => self.relativise(&normalise(&format!("{root}/{folded}"))),
                // No root known: kept as written, so the path check rejects it.
                None => folded,
            });
        }
        Place::Known(folded)
    }

    /// An absolute or home path in path-request form: inside the project relative to
    /// the root (`.` for the root itself), under the home directory as `~/…`.
    fn relativise(&self, abs: &str) -> String {
        for root in &self.roots {
            if abs == root {
                return ".".into();
            }
            if let Some(rel) = abs
                .strip_prefix(root.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                return rel.to_string();
            }
        }
        if let Some(home) = &self.home {
            if abs == home {
                return "~".into();
            }
            if let Some(rel) = abs
                .strip_prefix(home.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                return format!("~/{rel}");
            }
        }
        abs.to_string()
    }

    /// Whether `place` names a host file at all: in a contained base only paths that
    /// land in the project do.
    pub fn reaches_host(&self, place: &str) -> bool {
        !self.contained || !is_outside(place)
    }
}

/// A resolved path that is outside the project (absolute or under `~`).
pub fn is_outside(place: &str) -> bool {
    place.starts_with('/') || place.starts_with('~') || place == ".." || place.starts_with("../")
}

/// The part after the home directory for `~`, `~/x`, `$HOME/x`, `${HOME}/x`.
fn home_relative(t: &str) -> Option<&str> {
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = t.strip_prefix(prefix) {
            if rest.is_empty() {
                return Some("");
            }
            if let Some(r) = rest.strip_prefix('/') {
                return Some(r);
            }
        }
    }
    None
}

/// Lexical `.`/`..` folding (see [`contextos_shell::normalise_path`]); the project root
/// is `.`.
fn normalise(p: &str) -> String {
    let n = contextos_shell::normalise_path(p);
    if n.is_empty() {
        ".".into()
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::{Place, ShellBase};

    fn base() -> ShellBase {
        ShellBase {
            roots: vec!["/work/p".into()],
            cwd: "src".into(),
            contained: false,
            home: Some("/home/me".into()),
        }
    }

    #[test]
    fn targets_land_where_the_shell_would_put_them() {
        let b = base();
        let cases = [
            ("main.rs", "src/main.rs"),
            ("../README.md", "README.md"),
            ("../../x", "/work/x"),
            ("/work/p/.git/config", ".git/config"),
            ("/home/me/.ssh/id_rsa", "~/.ssh/id_rsa"),
            ("~/.aws/credentials", "~/.aws/credentials"),
            ("$HOME/.netrc", "~/.netrc"),
            ("${HOME}/.netrc", "~/.netrc"),
            ("/tmp/../etc/passwd", "/etc/passwd"),
            ("./a/./b/", "src/a/b"),
            ("..", "."),
        ];
        for (t, want) in cases {
            assert_eq!(b.resolve(t), want, "{t}");
        }
        assert_eq!(b.resolve_from("src", "$OUT/x"), Place::Dynamic);
        assert_eq!(
            b.resolve_from("~otheruser", "x"),
            Place::Known("~otheruser/x".into())
        );
    }

    #[test]
    fn a_changed_directory_moves_relative_targets() {
        let b = base();
        let Place::Known(d) = b.locate(Some("../.git")) else {
            panic!("known")
        };
        assert_eq!(d, ".git");
        assert_eq!(
            b.resolve_from(&d, "hooks/pre-commit"),
            Place::Known(".git/hooks/pre-commit".into())
        );
        let Place::Known(etc) = b.locate(Some("/etc")) else {
            panic!("known")
        };
        assert_eq!(
            b.resolve_from(&etc, "passwd"),
            Place::Known("/etc/passwd".into())
        );
        assert_eq!(b.locate(None), Place::Dynamic);
    }
}

//! Finding the project, reading `contextos.toml` and collecting policy sources
//! (the embedded stdlib first, then the project's own policies).

use contextos_engine::build::{build_precompiled, PrecompiledUse};
use contextos_engine::{build, BuildOptions, BuildOutput, Layer, PolicySource};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub policies: PolicyConfig,
    #[serde(default)]
    pub scan: ScanConfig,
    #[serde(default)]
    pub sandbox: SandboxConfig,
    #[serde(default)]
    pub boundary: BoundaryConfig,
    #[serde(default)]
    pub mcp: McpConfig,
    #[serde(default)]
    pub compile: CompileConfig,
    #[serde(default)]
    pub gate: GateConfig,
}

/// `[gate]` in `contextos.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Fail the gate when a policy change widens a verdict (as `--no-widening`).
    #[serde(default)]
    pub no_widening: bool,
}

/// `[mcp]` in `contextos.toml`: the MCP servers the project's agents may call.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Listed servers: pinned by `compile`, their calls decided by the policies; calls to
    /// other servers are asked (`std-mcp-unlisted`).
    #[serde(default)]
    pub servers: Vec<String>,
    /// Listed servers whose results do not taint the agent session.
    #[serde(default)]
    pub trusted: Vec<String>,
}

/// `[compile]` in `contextos.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompileConfig {
    /// The targets `contextos compile` and `gate` use when `--target` is not given
    /// (`contextos init` writes the agents it found); every target when unset.
    #[serde(default)]
    pub targets: Option<Vec<String>>,
    /// `[compile.copilot]`: how the Copilot target is compiled.
    #[serde(default)]
    pub copilot: CopilotConfig,
    /// `[compile.claude]`: how the Claude Code target is compiled.
    #[serde(default)]
    pub claude: ClaudeConfig,
}

/// `[compile.claude]` in `contextos.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeConfig {
    /// Turn on Claude Code's OS sandbox for its Bash tool (`sandbox.*` in
    /// `.claude/settings.json`), closed: no auto-allow for sandboxed commands, no way out.
    #[serde(default)]
    pub sandbox: bool,
}

/// `[compile.copilot]` in `contextos.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopilotConfig {
    /// The command `.github/workflows/copilot-setup-steps.yml` runs to install `contextos`
    /// for the Copilot cloud agent (where the team gets its builds from).
    #[serde(default)]
    pub install: Option<String>,
}

/// `[boundary]` in `contextos.toml`: how far `compile` wires the agents into ContextOS.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundaryConfig {
    /// `guard` (the default) or `boundary`; spanned so a check-time error can point at it.
    #[serde(default)]
    pub mode: Option<toml::Spanned<BoundaryMode>>,
}

/// What the agents' own tools may do.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryMode {
    /// Today's behaviour: the hook judges each native tool call, which then runs on the host.
    #[default]
    Guard,
    /// The native write tools are denied (writes go through the MCP server) and the agent's
    /// shell commands are routed into the sandbox.
    Boundary,
}

impl BoundaryConfig {
    pub fn mode(&self) -> BoundaryMode {
        self.mode
            .as_ref()
            .map_or(BoundaryMode::Guard, |m| *m.get_ref())
    }
}

/// `[scan]` in contextos.toml: limits and files of `contextos scan --staged`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanConfig {
    /// Staged blobs larger than this are not read and block in enforce mode
    /// (default 8 MiB).
    #[serde(default)]
    pub max_blob_bytes: Option<u64>,
    /// The baseline of accepted findings, relative to the project root
    /// (default `.contextos/scan-baseline.toml`).
    #[serde(default)]
    pub baseline: Option<String>,
}

/// `[sandbox]` in `contextos.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// The image `contextos run` uses when no rule and no `--image` names one.
    #[serde(default)]
    pub image: Option<String>,
    /// Read only to be ignored loudly: a repository can never choose host-unsafe mode.
    #[serde(default)]
    pub host_unsafe: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Load the embedded standard library (default true).
    #[serde(default = "yes")]
    pub stdlib: bool,
    /// Directories or files holding `*.policy`, relative to the project root.
    #[serde(default = "default_paths")]
    pub paths: Vec<String>,
    /// Rule ids to switch off (stdlib or own).
    #[serde(default)]
    pub disable: Vec<String>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            stdlib: true,
            paths: default_paths(),
            disable: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_paths() -> Vec<String> {
    vec![".contextos/policies".to_string()]
}

#[derive(Debug)]
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
    /// The text of `contextos.toml` (empty without one), for locating later checks.
    config_text: String,
}

/// An error the user must fix; the CLI prints it and exits 2.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A pinned plugin pack failed verification or its verdict: nothing loads.
    #[error("{0}\n(no policy can be trusted while a pinned plugin is refused; run `contextos plugin verify`)")]
    Plugins(String),
    #[error("{path}:{line}:{col}: invalid configuration: {message}")]
    Config {
        path: String,
        line: usize,
        col: usize,
        message: String,
    },
    /// A configuration that parses but cannot work; `help` says how to fix it.
    #[error("{path}:{line}:{col}: invalid configuration: {message}\nhelp: {help}")]
    Unusable {
        path: String,
        line: usize,
        col: usize,
        message: String,
        help: String,
    },
}

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Project {
    pub fn discover(explicit: Option<&Path>) -> Result<Project, ProjectError> {
        let root = Project::find_root(explicit)?;
        let cfg_path = root.join("contextos.toml");
        let config = match std::fs::read_to_string(&cfg_path) {
            Ok(text) => {
                let config = toml::from_str::<Config>(&text).map_err(|e| {
                    let (line, col) = e.span().map_or((1, 1), |s| line_col(&text, s.start));
                    ProjectError::Config {
                        path: "contextos.toml".into(),
                        line,
                        col,
                        message: e.message().to_string(),
                    }
                })?;
                (config, text)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (Config::default(), String::new())
            }
            Err(e) => {
                return Err(ProjectError::Io {
                    path: cfg_path.display().to_string(),
                    source: e,
                })
            }
        };
        let (config, config_text) = config;
        Ok(Project {
            root,
            config,
            config_text,
        })
    }

    /// The configuration's check-time consistency: boundary mode routes every command
    /// into the sandbox, so without an image to run there every command would fail.
    pub fn check_config(&self) -> Result<(), ProjectError> {
        let Some(mode) = &self.config.boundary.mode else {
            return Ok(());
        };
        let unset = self
            .config
            .sandbox
            .image
            .as_deref()
            .is_none_or(|i| i.trim().is_empty());
        if *mode.get_ref() == BoundaryMode::Boundary && unset {
            let (line, col) = line_col(&self.config_text, mode.span().start);
            return Err(ProjectError::Unusable {
                path: "contextos.toml".into(),
                line,
                col,
                message: "`[boundary] mode = \"boundary\"` runs the agents' commands in the \
                          sandbox, but no sandbox image is configured"
                    .into(),
                help: "name one in contextos.toml (`[sandbox] image = \"docker.io/library/\
                       debian:stable-slim\"`, ideally pinned by digest), or build one locally \
                       (`docker build -t my-sandbox .`, or `docker import rootfs.tar \
                       my-sandbox`) and name that"
                    .into(),
            });
        }
        Ok(())
    }

    /// The project directory without reading its configuration: `explicit`, else the
    /// nearest ancestor of the working directory holding `contextos.toml`, `.contextos`
    /// or `.git`, else the working directory.
    pub fn find_root(explicit: Option<&Path>) -> Result<PathBuf, ProjectError> {
        Ok(match explicit {
            Some(p) => p.to_path_buf(),
            None => {
                let cwd = std::env::current_dir().map_err(|e| ProjectError::Io {
                    path: ".".into(),
                    source: e,
                })?;
                cwd.ancestors()
                    .find(|d| {
                        d.join("contextos.toml").is_file()
                            || d.join(".contextos").is_dir()
                            || d.join(".git").exists()
                    })
                    .map(Path::to_path_buf)
                    .unwrap_or(cwd)
            }
        })
    }

    /// The project's own policy files, sorted byte-wise for deterministic load order.
    pub fn policy_files(&self) -> Result<Vec<(String, PathBuf)>, ProjectError> {
        let mut out = Vec::new();
        for p in &self.config.policies.paths {
            let full = self.root.join(p);
            if full.is_file() {
                out.push((p.clone(), full));
            } else if full.is_dir() {
                collect(&self.root, &full, &mut out)?;
            } else if self.config.policies.paths != default_paths() {
                // A configured path that does not exist would silently drop policies.
                return Err(ProjectError::Io {
                    path: format!("{p} (from contextos.toml [policies] paths)"),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such file or directory",
                    ),
                });
            }
        }
        out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        out.dedup_by(|a, b| a.0 == b.0);
        Ok(out)
    }

    /// Every policy source: the stdlib, then the verified plugin packs, then the
    /// project's own policies.
    pub fn sources(&self) -> Result<Vec<PolicySource>, ProjectError> {
        let base = self.base_sources()?;
        if !self.has_plugins()? {
            return Ok(base);
        }
        // Plugin verdicts come from the stdlib and the project's own policies alone.
        let (out, _) = self.build_lazily(&base);
        let Some(set) = out.policy else {
            // The caller's compile reports these errors; no plugin is loaded meanwhile.
            return Ok(base);
        };
        self.with_plugins(base, &set)
    }

    /// A lazy build of `sources` with the project's `disable` list (see
    /// [`BuildOptions::lazy`]), started from the precompiled stdlib when it applies: what a
    /// decision needs, not what `check` and `test` report.
    pub fn build_lazily(&self, sources: &[PolicySource]) -> (BuildOutput, PrecompiledUse) {
        build_precompiled(
            contextos_engine::stdlib::PRECOMPILED,
            sources,
            &BuildOptions {
                disabled_rules: self.config.policies.disable.clone(),
                lazy: true,
            },
        )
    }

    /// Whether `contextos.lock` pins any pack.
    pub fn has_plugins(&self) -> Result<bool, ProjectError> {
        Ok(crate::plugins::read_pins(&self.root)
            .map_err(ProjectError::Plugins)?
            .is_some_and(|l| !l.plugins.is_empty()))
    }

    /// Verifies every pinned pack, has `set` (the stdlib and the project's own policies)
    /// decide each, and inserts the packs' policies after the stdlib. One refused pack
    /// refuses them all.
    pub fn with_plugins(
        &self,
        base: Vec<PolicySource>,
        set: &contextos_engine::PolicySet,
    ) -> Result<Vec<PolicySource>, ProjectError> {
        // Read first, verify after: a pack swapped between the two is caught by the
        // verification instead of being read unverified (only a change undone in between
        // could slip through; the digest is taken from the files, not from these texts).
        let names = self.pinned_plugins()?;
        let sources = self.add_pack_sources(base, &names)?;
        self.verify_plugins(set)?;
        Ok(sources)
    }

    /// Verifies and judges every pinned pack; the names of the packs, all allowed.
    ///
    /// `set` must not let packs judge packs: the stdlib and the project's own policies,
    /// or a set that also holds the packs' files — E0120 keeps those out of the plugin
    /// domain entirely (no plugin rules, defaults or redefined `let`s), so their
    /// presence cannot change a plugin verdict.
    pub fn verify_plugins(
        &self,
        set: &contextos_engine::PolicySet,
    ) -> Result<Vec<String>, ProjectError> {
        let checked = crate::plugins::check_installed(&self.root, set)
            .map_err(ProjectError::Plugins)?
            .unwrap_or_default();
        if checked.iter().any(|c| !c.allowed()) {
            return Err(ProjectError::Plugins(crate::plugins::describe_denials(
                &checked,
            )));
        }
        Ok(checked.into_iter().map(|c| c.entry.name).collect())
    }

    /// The names pinned in `contextos.lock`, in lock order.
    pub fn pinned_plugins(&self) -> Result<Vec<String>, ProjectError> {
        Ok(crate::plugins::read_pins(&self.root)
            .map_err(ProjectError::Plugins)?
            .map(|l| l.plugins.into_iter().map(|e| e.name).collect())
            .unwrap_or_default())
    }

    /// `base` with the policy files of the named packs inserted after the stdlib.
    pub fn add_pack_sources(
        &self,
        base: Vec<PolicySource>,
        names: &[String],
    ) -> Result<Vec<PolicySource>, ProjectError> {
        let stdlib_count = base.iter().filter(|s| s.layer == Layer::Stdlib).count();
        let mut sources = base;
        let mut packs = Vec::new();
        for name in names {
            for (file, path) in
                crate::plugins::pack_policies(&self.root, name).map_err(ProjectError::Plugins)?
            {
                let text = std::fs::read_to_string(&path).map_err(|e| ProjectError::Io {
                    path: file.clone(),
                    source: e,
                })?;
                packs.push(PolicySource {
                    name: file,
                    text: text.into(),
                    layer: Layer::Plugin,
                });
            }
        }
        sources.splice(stdlib_count..stdlib_count, packs);
        Ok(sources)
    }

    /// The stdlib and the project's own policies, without plugin packs.
    pub fn base_sources(&self) -> Result<Vec<PolicySource>, ProjectError> {
        let mut sources = Vec::new();
        if self.config.policies.stdlib {
            sources = contextos_engine::stdlib_sources();
        }
        for (name, path) in self.policy_files()? {
            let text = std::fs::read_to_string(&path).map_err(|e| ProjectError::Io {
                path: name.clone(),
                source: e,
            })?;
            sources.push(PolicySource {
                name,
                text: text.into(),
                layer: Layer::User,
            });
        }
        Ok(sources)
    }

    pub fn build_policies(&self) -> Result<BuildOutput, ProjectError> {
        let sources = self.sources()?;
        Ok(build(
            &sources,
            &BuildOptions {
                disabled_rules: self.config.policies.disable.clone(),
                ..Default::default()
            },
        ))
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), ProjectError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ProjectError::Io {
        path: dir.display().to_string(),
        source: e,
    })?;
    for entry in entries {
        let entry = entry.map_err(|e| ProjectError::Io {
            path: dir.display().to_string(),
            source: e,
        })?;
        let path = entry.path();
        let ty = entry.file_type().map_err(|e| ProjectError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        if ty.is_dir() {
            // Installed plugin packs load only through verification (crate::plugins),
            // never as the project's own policies, whatever `paths` says.
            if path == root.join(crate::plugins::PACKS_DIR) {
                continue;
            }
            collect(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "policy") {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
    Ok(())
}

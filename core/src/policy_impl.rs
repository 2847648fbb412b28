//! The one `impl PolicySet` block: the set's public methods. Each delegates to the module
//! that does the job, so those modules depend only on the data in [`crate::policy`] and
//! never on each other through the set.

use crate::decision::{Decision, ShellDecision};
use crate::eval::EvalOptions;
use crate::ir::CompiledRule;
use crate::policy::PolicySet;
use crate::request::{Domain, Request};
use crate::shell_decide::{self, ShellOptions};
use crate::snapshot::{self, SnapshotError};
use contextos_grammar::ast::Effect;

impl PolicySet {
    /// The verdict of a request no rule matches.
    pub fn default_for(&self, d: Domain) -> Effect {
        self.defaults[d.index()]
    }

    /// The rule with this id (an `@id` or an implicit `FILE:LINE`); `None` when no rule has
    /// it, including a rule left out by [`disabled_rules`].
    ///
    /// [`disabled_rules`]: crate::BuildOptions::disabled_rules
    pub fn rule(&self, id: &str) -> Option<&CompiledRule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// Every role the policies speak of: the `role` blocks and the roles conditions compare
    /// with (`when role != "maintainer"`). A request carrying any other role is refused by
    /// every caller (hook, `decide`, `explain`, `apply`, `run`): its own rules would be
    /// silently skipped.
    pub fn known_roles(&self) -> std::collections::BTreeSet<String> {
        let mut out = self.roles.clone();
        out.extend(self.role_literals());
        out
    }

    /// The roles the rules' conditions compare with.
    pub(crate) fn role_literals(&self) -> std::collections::BTreeSet<String> {
        self.role_literals
            .get_or_init(|| self.rules.role_literals())
            .clone()
    }

    /// Decides one request. This is the single decision path of ContextOS.
    pub fn decide(&self, req: &Request, opts: EvalOptions) -> Decision {
        crate::explain::decide(self, req, opts)
    }

    /// Decides a shell command line: every command and every file it changes.
    pub fn decide_shell(
        &self,
        line: &str,
        role: Option<&str>,
        opts: ShellOptions<'_>,
    ) -> ShellDecision {
        shell_decide::decide_shell(self, line, role, opts)
    }

    /// Decides a command given as argv, as `execve` receives it: the same analysis as
    /// [`PolicySet::decide_shell`] without splitting or expanding the words again.
    pub fn decide_argv(
        &self,
        argv: &[String],
        role: Option<&str>,
        opts: ShellOptions<'_>,
    ) -> ShellDecision {
        shell_decide::decide_argv(self, argv, role, opts)
    }

    /// Encodes the compiled set (without its tests) for the policy cache of short-lived
    /// processes such as agent hooks.
    pub fn to_snapshot(&self) -> Result<Vec<u8>, SnapshotError> {
        snapshot::encode(self, None).map(|parts| parts.to_vec())
    }

    /// [`PolicySet::to_snapshot`], except that detectors which are `embedded` ones,
    /// unchanged (a set built on the precompiled stdlib that adds and disables no
    /// detector), are referred to by digest instead of copied. The snapshot then decodes
    /// only where the same detectors are given.
    pub fn to_snapshot_sharing(
        &self,
        embedded: &snapshot::EmbeddedDetectors,
    ) -> Result<Vec<u8>, SnapshotError> {
        self.to_snapshot_parts(Some(embedded))
            .map(|parts| parts.to_vec())
    }

    /// [`PolicySet::to_snapshot_sharing`] (or, without `embedded`,
    /// [`PolicySet::to_snapshot`]) in the parts the encoder leaves, for a caller that
    /// writes or hashes them in turn instead of copying them into one buffer.
    pub fn to_snapshot_parts(
        &self,
        embedded: Option<&snapshot::EmbeddedDetectors>,
    ) -> Result<snapshot::SnapshotParts, SnapshotError> {
        snapshot::encode(self, embedded)
    }

    /// Decodes a snapshot into a policy set whose glob sets compile on first use.
    pub fn from_snapshot(bytes: &[u8]) -> Result<PolicySet, SnapshotError> {
        snapshot::decode(std::sync::Arc::new(bytes.to_vec()), 0, None)
    }

    /// [`PolicySet::from_snapshot`] over the bytes of `buf` from `start` on, without copying
    /// them: the set keeps `buf` and decodes its rules and index nodes on first use.
    /// `embedded`: the detectors the snapshot may refer to
    /// ([`PolicySet::to_snapshot_sharing`]).
    pub fn from_snapshot_shared(
        buf: std::sync::Arc<Vec<u8>>,
        start: usize,
        embedded: Option<&snapshot::EmbeddedDetectors>,
    ) -> Result<PolicySet, SnapshotError> {
        snapshot::decode(buf, start, embedded)
    }

    /// [`PolicySet::from_snapshot`] over a snapshot `reader` reads (from offset `start`,
    /// `total` bytes in all), reading its head now and each section or rule when a request
    /// first needs it. A read the reader refuses later makes what it would have held read
    /// as damaged: a deny.
    pub fn from_snapshot_reader(
        reader: std::sync::Arc<dyn crate::ReadAt>,
        start: u64,
        total: u64,
        embedded: Option<&snapshot::EmbeddedDetectors>,
    ) -> Result<PolicySet, SnapshotError> {
        snapshot::decode_stored(reader, start, total, embedded)
    }
}

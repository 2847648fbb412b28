//! The rule index. For every domain × operation one `GlobSet` over the patterns of the
//! rules that could apply, and for exec a trie over the literal leading words of each
//! pattern. A lookup returns the candidate rules only; conditions are evaluated for
//! those alone, so the cost follows the rules that *could* match, not all rules.

use crate::ir::{CompiledRule, ALL_OPS};
use crate::request::{Domain, NetOp, PathOp, Request, RequestKind};
use contextos_grammar::ast::Effect;
use globset::{GlobSet, GlobSetBuilder};
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(Debug, Default)]
pub struct Index {
    /// Path rules per operation (read, write, delete). Each glob index is filed on first
    /// use: a hook process deciding a command never pays for the path tries.
    path: [OnceLock<GlobIndex>; 3],
    plugin: OnceLock<GlobIndex>,
    commit: OnceLock<GlobIndex>,
    /// Net rules per operation (fetch, connect): host globs, plus address ranges.
    net: [OnceLock<NetIndex>; 2],
    /// MCP rules over `SERVER/TOOL`, filed under the server.
    mcp: OnceLock<GlobIndex>,
    exec: ArgvTrie,
}

/// `net` rules: host globs in a glob index, address ranges (`10.0.0.0/8`) in a list that
/// IP hosts are tested against by containment.
#[derive(Debug, Default)]
struct NetIndex {
    hosts: GlobIndex,
    ranges: Vec<(ipnet::IpNet, usize)>,
}

impl NetIndex {
    fn build<'a>(rules: impl Iterator<Item = (usize, &'a CompiledRule)> + Clone) -> NetIndex {
        let mut ranges = Vec::new();
        for (i, r) in rules.clone() {
            for p in &r.patterns {
                if let Some(net) = crate::net::cidr(p) {
                    ranges.push((net, i));
                }
            }
        }
        NetIndex {
            hosts: GlobIndex::build_filtered(rules, |p| crate::net::cidr(p).is_none()),
            ranges,
        }
    }

    fn candidates(&self, host: &str, out: &mut Vec<usize>) {
        self.hosts.candidates(host, out);
        if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            out.extend(
                self.ranges
                    .iter()
                    .filter(|(net, _)| net.contains(&ip))
                    .map(|(_, i)| *i),
            );
        }
    }
}

/// Glob patterns of many rules, plus the rules without patterns. Patterns are filed in a
/// trie under their literal leading directories (`docs/api/*.md` under `docs` → `api`),
/// so a lookup only runs the small glob sets along the request path's own directories
/// instead of one large set whose regex part grows with every rule.
#[derive(Debug, Default)]
struct GlobIndex {
    root: SegmentNode,
    always: Vec<usize>,
}

/// One trie node: the patterns filed here, parsed and compiled into a `GlobSet` on first
/// use, so a short-lived process only pays for the nodes its requests reach.
#[derive(Debug, Default)]
struct SegmentNode {
    globs: Vec<String>,
    set: OnceLock<Result<GlobSet, String>>,
    /// `globs` index -> (rule index, whether the rule is deny/ask).
    owners: Vec<(usize, bool)>,
    children: HashMap<String, SegmentNode>,
}

impl SegmentNode {
    fn set(&self) -> &Result<GlobSet, String> {
        self.set.get_or_init(|| {
            let mut b = GlobSetBuilder::new();
            for g in &self.globs {
                b.add(crate::glob::path_glob(g).map_err(|e| format!("glob `{g}`: {e}"))?);
            }
            b.build().map_err(|e| e.to_string())
        })
    }

    fn candidates(&self, subject: &str, out: &mut Vec<usize>) {
        if self.globs.is_empty() {
            return;
        }
        match self.set() {
            Ok(set) => {
                for m in set.matches(subject) {
                    if let Some((rule, _)) = self.owners.get(m) {
                        out.push(*rule);
                    }
                }
            }
            // A set that cannot be built must not drop deny rules: match glob by glob,
            // and where even one glob cannot be compiled, count it as matching for a
            // deny/ask rule and as not matching for an allow rule (the stricter outcome).
            Err(_) => {
                for (g, (rule, strict)) in self.globs.iter().zip(&self.owners) {
                    let matcher = crate::glob::path_glob(g)
                        .ok()
                        .and_then(|g| std::panic::catch_unwind(|| g.compile_matcher()).ok());
                    let hit = match matcher {
                        Some(m) => m.is_match(subject),
                        None => *strict,
                    };
                    if hit {
                        out.push(*rule);
                    }
                }
            }
        }
    }

    fn warm(&self) -> Result<(), String> {
        if !self.globs.is_empty() {
            self.set().as_ref().map_err(Clone::clone)?;
        }
        self.children.values().try_for_each(SegmentNode::warm)
    }
}

/// Collects patterns per node before the trie is frozen.
#[derive(Default)]
struct NodeBuilder {
    globs: Vec<(String, usize, bool)>,
    children: HashMap<String, NodeBuilder>,
}

impl NodeBuilder {
    fn insert(&mut self, dirs: &[&str], glob: String, rule: usize, strict: bool) {
        match dirs.split_first() {
            None => self.globs.push((glob, rule, strict)),
            Some((d, rest)) => self
                .children
                .entry((*d).to_string())
                .or_default()
                .insert(rest, glob, rule, strict),
        }
    }

    fn build(self) -> SegmentNode {
        let mut globs = Vec::with_capacity(self.globs.len());
        let mut owners = Vec::with_capacity(self.globs.len());
        for (g, rule, strict) in self.globs {
            globs.push(g);
            owners.push((rule, strict));
        }
        SegmentNode {
            globs,
            set: OnceLock::new(),
            owners,
            children: self
                .children
                .into_iter()
                .map(|(k, v)| (k, v.build()))
                .collect(),
        }
    }
}

/// The leading directories of a glob that are plain literals (the last segment is
/// always left to the glob itself).
fn literal_dirs(pattern: &str) -> Vec<&str> {
    let segments: Vec<&str> = pattern.split('/').collect();
    let dirs = segments.len().saturating_sub(1);
    segments
        .into_iter()
        .take(dirs)
        .take_while(|s| !s.is_empty() && !crate::glob::has_glob_meta(s))
        .collect()
}

impl GlobIndex {
    fn build<'a>(rules: impl Iterator<Item = (usize, &'a CompiledRule)>) -> GlobIndex {
        Self::build_filtered(rules, |_| true)
    }

    /// A glob index over the patterns `keep` accepts (the rules without patterns are
    /// always candidates).
    fn build_filtered<'a>(
        rules: impl Iterator<Item = (usize, &'a CompiledRule)>,
        keep: impl Fn(&str) -> bool,
    ) -> GlobIndex {
        let mut root = NodeBuilder::default();
        let mut always = Vec::new();
        for (i, r) in rules {
            if r.patterns.is_empty() {
                always.push(i);
            }
            let strict = r.effect != Effect::Allow;
            // Patterns were validated by the compiler; they are parsed again only when
            // their node is first used.
            for p in r
                .patterns
                .iter()
                .filter(|p| keep(p))
                .flat_map(|p| crate::glob::head_globs(p))
            {
                root.insert(&literal_dirs(p), p.to_string(), i, strict);
            }
        }
        GlobIndex {
            root: root.build(),
            always,
        }
    }

    fn candidates(&self, subject: &str, out: &mut Vec<usize>) {
        out.extend_from_slice(&self.always);
        let mut node = &self.root;
        let mut segments = subject.split('/');
        loop {
            node.candidates(subject, out);
            match segments.next().and_then(|seg| node.children.get(seg)) {
                Some(child) => node = child,
                None => break,
            }
        }
    }
}

#[derive(Debug, Default)]
struct ArgvTrie {
    here: Vec<usize>,
    children: HashMap<String, ArgvTrie>,
}

impl ArgvTrie {
    fn insert(&mut self, prefix: &[&str], rule: usize) {
        match prefix.split_first() {
            None => self.here.push(rule),
            Some((w, rest)) => self
                .children
                .entry((*w).to_string())
                .or_default()
                .insert(rest, rule),
        }
    }

    fn walk(&self, words: &[&str], out: &mut Vec<usize>) {
        let mut node = self;
        out.extend_from_slice(&node.here);
        for w in words {
            match node.children.get(*w) {
                Some(n) => {
                    node = n;
                    out.extend_from_slice(&node.here);
                }
                None => break,
            }
        }
    }
}

impl Index {
    pub fn build(rules: &[CompiledRule]) -> Result<Index, String> {
        let mut exec = ArgvTrie::default();
        for (i, r) in rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.domain == Domain::Exec)
        {
            if r.exec_patterns.is_empty() {
                exec.insert(&[], i);
            }
            for p in &r.exec_patterns {
                exec.insert(&p.literal_prefix(), i);
            }
        }
        Ok(Index {
            path: Default::default(),
            plugin: OnceLock::new(),
            commit: OnceLock::new(),
            net: Default::default(),
            mcp: OnceLock::new(),
            exec,
        })
    }

    fn net_index(&self, rules: &[CompiledRule], op: NetOp) -> &NetIndex {
        let bit = 1u8 << (op as u8);
        self.net[op as usize].get_or_init(|| {
            NetIndex::build(rules.iter().enumerate().filter(move |(_, r)| {
                r.domain == Domain::Net && (r.ops & bit != 0 || r.ops == ALL_OPS)
            }))
        })
    }

    fn path_index(&self, rules: &[CompiledRule], op: PathOp) -> &GlobIndex {
        let bit = 1u8 << (op as u8);
        self.path[op as usize].get_or_init(|| {
            GlobIndex::build(rules.iter().enumerate().filter(|(_, r)| {
                r.domain == Domain::Path && (r.ops & bit != 0 || r.ops == ALL_OPS)
            }))
        })
    }

    fn domain_index<'a>(
        slot: &'a OnceLock<GlobIndex>,
        rules: &[CompiledRule],
        d: Domain,
    ) -> &'a GlobIndex {
        slot.get_or_init(|| {
            GlobIndex::build(rules.iter().enumerate().filter(|(_, r)| r.domain == d))
        })
    }

    /// Files and compiles every glob set now; the first failure is returned.
    pub fn warm(&self, rules: &[CompiledRule]) -> Result<(), String> {
        for op in PathOp::ALL {
            self.path_index(rules, op).root.warm()?;
        }
        Self::domain_index(&self.plugin, rules, Domain::Plugin)
            .root
            .warm()?;
        for op in NetOp::ALL {
            self.net_index(rules, op).hosts.root.warm()?;
        }
        Self::domain_index(&self.mcp, rules, Domain::Mcp)
            .root
            .warm()?;
        Self::domain_index(&self.commit, rules, Domain::Commit)
            .root
            .warm()
    }

    /// Candidate rule indices for a request, sorted and de-duplicated.
    pub fn candidates(&self, rules: &[CompiledRule], req: &Request) -> Vec<usize> {
        let mut out = Vec::new();
        match &req.kind {
            RequestKind::Path(p) => self.path_index(rules, p.op).candidates(&p.path, &mut out),
            RequestKind::Plugin(p) => Self::domain_index(&self.plugin, rules, Domain::Plugin)
                .candidates(&p.name, &mut out),
            RequestKind::Commit(c) => {
                let commit = Self::domain_index(&self.commit, rules, Domain::Commit);
                for f in &c.files {
                    commit.candidates(f, &mut out);
                }
                out.extend_from_slice(&commit.always);
            }
            RequestKind::Net(n) => self.net_index(rules, n.op).candidates(&n.host, &mut out),
            RequestKind::Mcp(m) => Self::domain_index(&self.mcp, rules, Domain::Mcp)
                .candidates(&crate::request::McpRequest::subject(m), &mut out),
            RequestKind::Exec(e) => {
                let mut words: Vec<&str> = e.argv.iter().map(String::as_str).collect();
                self.exec.walk(&words, &mut out);
                if let Some(first) = words.first_mut() {
                    let base = contextos_shell::basename(first);
                    if base != *first {
                        *first = base;
                        let mut more = Vec::new();
                        self.exec.walk(&words, &mut more);
                        out.extend(more);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

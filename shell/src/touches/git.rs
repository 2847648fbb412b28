//! git: global options (`-C`, `-c k=v`, `--git-dir`), the subcommand and its options
//! read with git's own rules (`--no-veri` is `--no-verify`, `commit -n` is
//! `--no-verify`, `log -n 5` is `--max-count=5`), the files it reads and changes, and
//! its remotes.

use super::effects::Out;
use crate::file_op::FileOp;
use crate::options::{listed, parse, Spec};

/// Git pathspecs: magic (`:(top)`, `:!x`) and globs are expanded by git itself.
fn pathspecs<'a>(op: FileOp, paths: impl IntoIterator<Item = &'a str>, out: &mut Out) {
    for p in paths {
        if op != FileOp::Read && (p.starts_with(':') || p.contains(['*', '?', '['])) {
            out.unknown();
        }
        out.add(op, p);
    }
}

/// The options of one git subcommand: git's parse-options rules (negations,
/// abbreviations of long options, clusters).
struct Sub {
    names: &'static str,
    flags: &'static str,
    values: &'static str,
    attached: &'static str,
    long_flags: &'static str,
    long_values: &'static str,
    /// Short options by their long name; names joined with `+` stand for several
    /// options (`branch -D` is `--delete --force`).
    aliases: &'static [(char, &'static str)],
    /// Subcommands of the subcommand (`stash drop`, `remote add`).
    subs: &'static str,
}

impl Sub {
    const fn spec(&self) -> Spec {
        Spec {
            values: self.values,
            attached: self.attached,
            flags: self.flags,
            long_values: self.long_values,
            long_flags: self.long_flags,
            posix: false,
            numeric: false,
            closed: false,
            complete: true,
            negatable: true,
        }
    }
}

macro_rules! diff_flags {
    () => {
        "patch no-patch raw patch-with-raw patch-with-stat stat numstat \
    shortstat summary name-only name-status compact-summary dirstat cumulative \
    dirstat-by-file color no-color word-diff color-words color-moved \
    color-moved-ws no-renames renames find-renames find-copies find-copies-harder \
    irreversible-delete text ignore-space-change ignore-all-space ignore-blank-lines \
    ignore-cr-at-eol ignore-space-at-eol binary full-index abbrev ext-diff textconv \
    relative exit-code quiet check minimal patience histogram function-context \
    break-rewrites no-prefix default-prefix indent-heuristic ita-invisible-in-index \
    ita-visible-in-index rename-empty submodule ignore-submodules merge-base no-index \
    cached staged remerge-diff combined-all-paths cc dense-combined full-history \
    color-moved z null line-prefix-none no-relative ws-error-highlight-none"
    };
}
const DIFF_FLAGS: &str = diff_flags!();
macro_rules! diff_values {
    () => {
        "output output-indicator-new output-indicator-old \
    output-indicator-context line-prefix src-prefix dst-prefix orderfile diff-filter \
    stat-width stat-name-width stat-count stat-graph-width inter-hunk-context unified \
    anchored diff-algorithm skip-to rotate-to ignore-matching-lines relative-date \
    ws-error-highlight word-diff-regex diff-merges"
    };
}
const DIFF_VALUES: &str = diff_values!();
macro_rules! log_flags {
    () => {
        "follow decorate no-decorate source mailmap use-mailmap full-diff \
    log-size all branches tags remotes reflog walk-reflogs merges no-merges first-parent \
    not ancestry-path simplify-by-decoration dense sparse simplify-merges show-pulls \
    bisect stdin cherry-mark cherry-pick left-only right-only cherry boundary oneline \
    abbrev-commit graph no-walk do-walk topo-order date-order author-date-order reverse \
    left-right parents children show-signature regexp-ignore-case extended-regexp \
    fixed-strings perl-regexp basic-regexp all-match invert-grep ignore-missing \
    expand-tabs notes show-notes standard-notes show-linear-break pretty merge \
    single-worktree unpacked clear-decorations count alternate-refs"
    };
}
macro_rules! log_values {
    () => {
        "max-count skip since after until before author committer grep \
    grep-reflog min-parents max-parents format date encoding glob exclude \
    exclude-hidden since-as-filter decorate-refs decorate-refs-exclude"
    };
}
const DIFF_ALIASES: &[(char, &str)] = &[
    ('p', "patch"),
    ('u', "patch"),
    ('s', "no-patch"),
    ('a', "text"),
    ('b', "ignore-space-change"),
    ('w', "ignore-all-space"),
    ('W', "function-context"),
    ('D', "irreversible-delete"),
    ('M', "find-renames"),
    ('C', "find-copies"),
    ('B', "break-rewrites"),
    ('U', "unified"),
    ('R', "reverse-diff"),
];
const LOG_ALIASES: &[(char, &str)] = &[
    ('n', "max-count"),
    ('#', "max-count"),
    ('p', "patch"),
    ('u', "patch"),
    ('s', "no-patch"),
    ('a', "text"),
    ('b', "ignore-space-change"),
    ('w', "ignore-all-space"),
    ('W', "function-context"),
    ('M', "find-renames"),
    ('C', "find-copies"),
    ('B', "break-rewrites"),
    ('U', "unified"),
    ('g', "walk-reflogs"),
    ('i', "regexp-ignore-case"),
    ('E', "extended-regexp"),
    ('F', "fixed-strings"),
    ('P', "perl-regexp"),
    ('q', "quiet"),
];
const FETCH_FLAGS: &str = "all append atomic unshallow update-shallow negotiate-only \
    dry-run porcelain write-fetch-head force keep multiple auto-maintenance auto-gc \
    write-commit-graph prefetch prune prune-tags tags refetch recurse-submodules \
    set-upstream update-head-ok quiet verbose progress show-forced-updates ipv4 ipv6";
const FETCH_VALUES: &str = "depth deepen shallow-since shallow-exclude negotiation-tip \
    refmap jobs submodule-prefix recurse-submodules-default upload-pack server-option \
    filter";
const MERGE_FLAGS: &str = "commit edit ff ff-only gpg-sign log signoff stat squash verify \
    verify-signatures summary quiet verbose progress autostash allow-unrelated-histories \
    rerere-autoupdate overwrite-ignore abort quit continue";
const MERGE_VALUES: &str = "cleanup strategy strategy-option message into-name file";

const SUBS: &[Sub] = &[
    Sub {
        names: "commit",
        flags: "apsnzeioqv",
        values: "CcFmt",
        attached: "uS",
        long_flags: "all patch reset-author short branch porcelain long null signoff \
            no-verify allow-empty allow-empty-message edit amend no-post-rewrite include \
            only pathspec-file-nul untracked-files verbose quiet dry-run status gpg-sign \
            interactive ahead-behind",
        long_values: "reuse-message reedit-message fixup squash file author date message \
            template trailer cleanup pathspec-from-file",
        aliases: &[
            ('a', "all"),
            ('p', "patch"),
            ('C', "reuse-message"),
            ('c', "reedit-message"),
            ('F', "file"),
            ('m', "message"),
            ('t', "template"),
            ('s', "signoff"),
            ('n', "no-verify"),
            ('e', "edit"),
            ('i', "include"),
            ('o', "only"),
            ('u', "untracked-files"),
            ('v', "verbose"),
            ('q', "quiet"),
            ('S', "gpg-sign"),
            ('z', "null"),
        ],
        subs: "",
    },
    Sub {
        names: "push",
        flags: "fdnquv46",
        values: "o",
        attached: "",
        long_flags: "all branches mirror delete tags follow-tags dry-run porcelain force \
            force-if-includes atomic prune set-upstream thin quiet verbose progress \
            no-verify ipv4 ipv6 signed force-with-lease",
        long_values: "repo receive-pack exec push-option recurse-submodules",
        aliases: &[
            ('f', "force"),
            ('d', "delete"),
            ('n', "dry-run"),
            ('q', "quiet"),
            ('u', "set-upstream"),
            ('v', "verbose"),
            ('o', "push-option"),
            ('4', "ipv4"),
            ('6', "ipv6"),
        ],
        subs: "",
    },
    Sub {
        names: "log show whatchanged",
        flags: "pusaqbwWDgiEFPRmcrtz",
        values: "nSGOL",
        attached: "MCBUl",
        long_flags: "",
        long_values: "",
        aliases: LOG_ALIASES,
        subs: "",
    },
    Sub {
        names: "diff diff-tree diff-index diff-files",
        flags: "pusabwWDRz123rtm",
        values: "SGO",
        attached: "MCBUl",
        long_flags: "",
        long_values: "",
        aliases: DIFF_ALIASES,
        subs: "",
    },
    Sub {
        names: "format-patch",
        flags: "pusnNkq",
        values: "ov",
        attached: "MCBU",
        long_flags: "stdout numbered no-numbered signoff thread no-thread attach inline \
            cover-letter no-cover-letter suffix keep-subject no-binary zero-commit \
            ignore-if-in-upstream always rfc progress quiet no-stat minimal \
            cover-from-description force-in-body-from notes",
        long_values: "output-directory output start-number numbered-files reroll-count \
            in-reply-to subject-prefix to cc from add-header signature signature-file \
            base interdiff range-diff creation-factor description-file filename-max-length",
        aliases: &[
            ('o', "output-directory"),
            ('n', "numbered"),
            ('N', "no-numbered"),
            ('s', "signoff"),
            ('k', "keep-subject"),
            ('q', "quiet"),
            ('v', "reroll-count"),
        ],
        subs: "",
    },
    Sub {
        names: "reset",
        flags: "qpN",
        values: "",
        attached: "",
        long_flags: "soft mixed hard merge keep quiet recurse-submodules patch \
            intent-to-add pathspec-file-nul refresh",
        long_values: "pathspec-from-file",
        aliases: &[('q', "quiet"), ('p', "patch"), ('N', "intent-to-add")],
        subs: "",
    },
    Sub {
        names: "branch",
        flags: "dDfmMcCrRalvqti",
        values: "u",
        attached: "",
        long_flags: "delete force move copy remotes all list verbose quiet track \
            unset-upstream edit-description contains no-contains merged no-merged color \
            column ignore-case omit-empty abbrev show-current create-reflog \
            recurse-submodules",
        long_values: "set-upstream-to sort points-at format",
        aliases: &[
            ('d', "delete"),
            ('D', "delete+force"),
            ('f', "force"),
            ('m', "move"),
            ('M', "move+force"),
            ('c', "copy"),
            ('C', "copy+force"),
            ('r', "remotes"),
            ('a', "all"),
            ('l', "list"),
            ('v', "verbose"),
            ('q', "quiet"),
            ('t', "track"),
            ('u', "set-upstream-to"),
            ('i', "ignore-case"),
        ],
        subs: "",
    },
    Sub {
        names: "checkout",
        flags: "qftldmp",
        values: "bB",
        attached: "",
        long_flags: "quiet progress force ours theirs track guess detach \
            ignore-skip-worktree-bits merge patch ignore-other-worktrees overwrite-ignore \
            recurse-submodules overlay pathspec-file-nul",
        long_values: "orphan conflict pathspec-from-file",
        aliases: &[
            ('q', "quiet"),
            ('f', "force"),
            ('t', "track"),
            ('d', "detach"),
            ('m', "merge"),
            ('p', "patch"),
        ],
        subs: "",
    },
    Sub {
        names: "switch",
        flags: "dfmqt",
        values: "cC",
        attached: "",
        long_flags: "detach guess force discard-changes merge quiet progress track \
            ignore-other-worktrees recurse-submodules",
        long_values: "create force-create orphan conflict",
        aliases: &[
            ('c', "create"),
            ('C', "force-create"),
            ('d', "detach"),
            ('f', "force"),
            ('m', "merge"),
            ('q', "quiet"),
            ('t', "track"),
        ],
        subs: "",
    },
    Sub {
        names: "restore",
        flags: "pWSqm",
        values: "s",
        attached: "",
        long_flags: "patch worktree staged quiet progress ours theirs merge \
            ignore-unmerged ignore-skip-worktree-bits recurse-submodules overlay \
            pathspec-file-nul",
        long_values: "source conflict pathspec-from-file",
        aliases: &[
            ('s', "source"),
            ('p', "patch"),
            ('W', "worktree"),
            ('S', "staged"),
            ('q', "quiet"),
            ('m', "merge"),
        ],
        subs: "",
    },
    Sub {
        names: "clean",
        flags: "dfinqxX",
        values: "e",
        attached: "",
        long_flags: "force interactive dry-run quiet",
        long_values: "exclude",
        aliases: &[
            ('f', "force"),
            ('i', "interactive"),
            ('n', "dry-run"),
            ('q', "quiet"),
            ('e', "exclude"),
        ],
        subs: "",
    },
    Sub {
        names: "stash",
        flags: "pSkuaq",
        values: "m",
        attached: "",
        long_flags: "patch staged keep-index include-untracked all quiet index \
            pathspec-file-nul only-untracked",
        long_values: "message pathspec-from-file",
        aliases: &[
            ('p', "patch"),
            ('S', "staged"),
            ('k', "keep-index"),
            ('u', "include-untracked"),
            ('a', "all"),
            ('q', "quiet"),
            ('m', "message"),
        ],
        subs: "push save pop apply drop clear list show branch create store",
    },
    Sub {
        names: "rebase",
        flags: "imqvnfr",
        values: "sXx",
        attached: "SC",
        long_flags: "interactive keep-base continue abort quit skip edit-todo \
            show-current-patch merge gpg-sign quiet verbose stat no-stat no-verify \
            force-rebase fork-point ignore-whitespace committer-date-is-author-date \
            ignore-date reset-author-date signoff root autosquash autostash \
            reschedule-failed-exec update-refs rebase-merges apply allow-empty-message \
            ff keep-empty rerere-autoupdate",
        long_values: "onto strategy strategy-option exec whitespace empty trailer",
        aliases: &[
            ('i', "interactive"),
            ('m', "merge"),
            ('s', "strategy"),
            ('X', "strategy-option"),
            ('S', "gpg-sign"),
            ('q', "quiet"),
            ('v', "verbose"),
            ('n', "no-stat"),
            ('f', "force-rebase"),
            ('x', "exec"),
            ('r', "rebase-merges"),
        ],
        subs: "",
    },
    Sub {
        names: "merge",
        flags: "enqv",
        values: "smXF",
        attached: "S",
        long_flags: MERGE_FLAGS,
        long_values: MERGE_VALUES,
        aliases: &[
            ('e', "edit"),
            ('n', "no-stat"),
            ('s', "strategy"),
            ('X', "strategy-option"),
            ('m', "message"),
            ('F', "file"),
            ('q', "quiet"),
            ('v', "verbose"),
            ('S', "gpg-sign"),
        ],
        subs: "",
    },
    Sub {
        names: "tag",
        flags: "asfdvlie",
        values: "umF",
        attached: "n",
        long_flags: "annotate sign force delete verify list color ignore-case omit-empty \
            column contains no-contains merged no-merged points-at edit create-reflog",
        long_values: "local-user sort message file cleanup format trailer",
        aliases: &[
            ('a', "annotate"),
            ('s', "sign"),
            ('u', "local-user"),
            ('f', "force"),
            ('d', "delete"),
            ('v', "verify"),
            ('l', "list"),
            ('i', "ignore-case"),
            ('m', "message"),
            ('F', "file"),
            ('e', "edit"),
        ],
        subs: "",
    },
    Sub {
        names: "fetch",
        flags: "afkpPntuqv46",
        values: "jo",
        attached: "",
        long_flags: FETCH_FLAGS,
        long_values: FETCH_VALUES,
        aliases: &[
            ('a', "append"),
            ('f', "force"),
            ('k', "keep"),
            ('p', "prune"),
            ('P', "prune-tags"),
            ('n', "no-tags"),
            ('t', "tags"),
            ('j', "jobs"),
            ('u', "update-head-ok"),
            ('q', "quiet"),
            ('v', "verbose"),
            ('o', "server-option"),
            ('4', "ipv4"),
            ('6', "ipv6"),
        ],
        subs: "",
    },
    Sub {
        names: "pull",
        flags: "afkpPntuqv46renr",
        values: "josmX",
        attached: "S",
        long_flags: "all append atomic unshallow update-shallow dry-run force keep prune \
            tags recurse-submodules set-upstream update-head-ok quiet verbose progress \
            show-forced-updates ipv4 ipv6 rebase commit edit ff ff-only gpg-sign log \
            signoff stat squash verify verify-signatures summary autostash \
            allow-unrelated-histories rerere-autoupdate",
        long_values: "depth deepen shallow-since shallow-exclude negotiation-tip refmap \
            jobs upload-pack server-option filter cleanup strategy strategy-option",
        aliases: &[
            ('a', "append"),
            ('f', "force"),
            ('k', "keep"),
            ('p', "prune"),
            ('t', "tags"),
            ('j', "jobs"),
            ('u', "update-head-ok"),
            ('q', "quiet"),
            ('v', "verbose"),
            ('o', "server-option"),
            ('r', "rebase"),
            ('e', "edit"),
            ('n', "no-stat"),
            ('s', "strategy"),
            ('X', "strategy-option"),
            ('S', "gpg-sign"),
            ('4', "ipv4"),
            ('6', "ipv6"),
        ],
        subs: "",
    },
    Sub {
        names: "clone",
        flags: "lsqvn",
        values: "obucj",
        attached: "",
        long_flags: "local hardlinks shared dissociate quiet verbose progress checkout \
            reject-shallow bare sparse also-filter-submodules mirror single-branch tags \
            recurse-submodules recursive shallow-submodules remote-submodules",
        long_values: "reference reference-if-able server-option filter origin branch \
            revision upload-pack template config depth shallow-since shallow-exclude \
            separate-git-dir ref-format jobs bundle-uri",
        aliases: &[
            ('l', "local"),
            ('s', "shared"),
            ('q', "quiet"),
            ('v', "verbose"),
            ('n', "no-checkout"),
            ('o', "origin"),
            ('b', "branch"),
            ('u', "upload-pack"),
            ('c', "config"),
            ('j', "jobs"),
        ],
        subs: "",
    },
    Sub {
        names: "config",
        flags: "lzet",
        values: "f",
        attached: "",
        long_flags: "global system local worktree get get-all get-regexp get-urlmatch \
            replace-all add unset unset-all rename-section remove-section list \
            fixed-value bool int bool-or-int path expiry-date null name-only includes \
            show-origin show-scope get-color get-colorbool edit all",
        long_values: "file blob type default comment value url",
        aliases: &[('f', "file"), ('l', "list"), ('z', "null"), ('e', "edit")],
        subs: "list get set unset rename-section remove-section edit",
    },
    Sub {
        names: "update-ref",
        flags: "dz",
        values: "m",
        attached: "",
        long_flags: "no-deref create-reflog stdin",
        long_values: "",
        aliases: &[],
        subs: "",
    },
    Sub {
        names: "reflog",
        flags: "n",
        values: "",
        attached: "",
        long_flags: "rewrite updateref stale-fix all single-worktree dry-run verbose",
        long_values: "expire expire-unreachable",
        aliases: &[('n', "dry-run")],
        subs: "show expire delete exists list drop",
    },
    Sub {
        names: "filter-branch",
        flags: "fd",
        values: "",
        attached: "",
        long_flags: "prune-empty force",
        long_values: "setup subdirectory-filter env-filter tree-filter index-filter \
            parent-filter msg-filter commit-filter tag-name-filter original state-branch",
        aliases: &[('f', "force")],
        subs: "",
    },
    Sub {
        names: "gc",
        flags: "q",
        values: "",
        attached: "",
        long_flags: "aggressive auto detach cruft prune quiet force keep-largest-pack",
        long_values: "max-cruft-size",
        aliases: &[('q', "quiet")],
        subs: "",
    },
    Sub {
        names: "worktree",
        flags: "fdqnvz",
        values: "bB",
        attached: "",
        long_flags: "force detach checkout lock orphan track guess-remote quiet dry-run \
            verbose porcelain relative-paths",
        long_values: "reason expire",
        aliases: &[
            ('f', "force"),
            ('d', "detach"),
            ('q', "quiet"),
            ('n', "dry-run"),
            ('v', "verbose"),
        ],
        subs: "add list lock move prune remove repair unlock",
    },
    Sub {
        names: "remote",
        flags: "vfand",
        values: "tm",
        attached: "",
        long_flags: "verbose tags mirror push add delete all auto dry-run",
        long_values: "",
        aliases: &[('v', "verbose"), ('n', "dry-run")],
        subs: "add rename remove rm set-head set-branches get-url set-url prune update show",
    },
    Sub {
        names: "rm",
        flags: "fnrq",
        values: "",
        attached: "",
        long_flags: "cached force dry-run quiet ignore-unmatch sparse pathspec-file-nul",
        long_values: "pathspec-from-file",
        aliases: &[('f', "force"), ('n', "dry-run"), ('q', "quiet")],
        subs: "",
    },
    Sub {
        names: "mv",
        flags: "fknv",
        values: "",
        attached: "",
        long_flags: "force dry-run verbose sparse",
        long_values: "",
        aliases: &[('f', "force"), ('n', "dry-run"), ('v', "verbose")],
        subs: "",
    },
    Sub {
        names: "add",
        flags: "nvfipeuAN",
        values: "",
        attached: "",
        long_flags: "dry-run verbose force interactive patch edit update all \
            ignore-removal intent-to-add refresh ignore-errors ignore-missing \
            warn-embedded-repo renormalize sparse pathspec-file-nul",
        long_values: "chmod pathspec-from-file",
        aliases: &[
            ('n', "dry-run"),
            ('v', "verbose"),
            ('f', "force"),
            ('i', "interactive"),
            ('p', "patch"),
            ('e', "edit"),
            ('u', "update"),
            ('A', "all"),
            ('N', "intent-to-add"),
        ],
        subs: "",
    },
    Sub {
        names: "apply am",
        flags: "NR3vqzsku i",
        values: "",
        attached: "pC",
        long_flags: "stat numstat summary check index intent-to-add 3way ours theirs union \
            apply add reverse allow-binary-replacement binary reject unidiff-zero \
            ignore-space-change ignore-whitespace inaccurate-eof verbose quiet recount \
            unsafe-paths allow-empty cached signoff keep keep-non-patch keep-cr scissors \
            message-id utf8 rerere-autoupdate interactive committer-date-is-author-date \
            ignore-date skip gpg-sign continue resolved abort quit retry \
            show-current-patch",
        long_values: "build-fake-ancestor exclude include whitespace directory \
            quoted-cr patch-format resolvemsg empty",
        aliases: &[
            ('N', "intent-to-add"),
            ('R', "reverse"),
            ('3', "3way"),
            ('v', "verbose"),
            ('q', "quiet"),
            ('s', "signoff"),
            ('k', "keep"),
            ('u', "utf8"),
            ('i', "interactive"),
        ],
        subs: "",
    },
];

/// Options of `log`, `show`, `diff`: the shared diff options plus, for log and show,
/// the revision options.
fn sub_spec(s: &Sub) -> Spec {
    let base = s.spec();
    match s.names {
        "log show whatchanged" => Spec {
            long_flags: LOG_AND_DIFF_FLAGS,
            long_values: LOG_AND_DIFF_VALUES,
            numeric: true,
            ..base
        },
        "diff diff-tree diff-index diff-files" => Spec {
            long_flags: DIFF_FLAGS,
            long_values: DIFF_VALUES,
            ..base
        },
        _ => base,
    }
}

/// The revision options of log and show with the diff options.
const LOG_AND_DIFF_FLAGS: &str = concat!(log_flags!(), " ", diff_flags!());
const LOG_AND_DIFF_VALUES: &str = concat!(log_values!(), " ", diff_values!());

/// Config keys whose value is a command git runs (or a file or URL rewrite that
/// changes what it runs or where it connects). `*` is one name segment.
const RUNS_CODE: &[&str] = &[
    "alias.*",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.hookspath",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "sequence.editor",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "pager.*",
    "uploadpack.packobjectshook",
    "include.path",
    "includeif.*.path",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "url.*.insteadof",
    "url.*.pushinsteadof",
    "protocol.*.allow",
    "protocol.allow",
    "ssh.variant",
    "mergetool.*.cmd",
    "difftool.*.cmd",
    "interactive.difffilter",
    "web.browser",
    "browser.*.cmd",
    "man.*.cmd",
    "submodule.*.update",
    "http.proxy",
    "core.worktree",
];

/// Whether `key=value` sets a command git runs: a key of [`RUNS_CODE`] with a value
/// other than an inert pager or editor (`core.pager=cat`, `core.editor=true`).
fn sets_command(kv: &str) -> bool {
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    let lower = key.to_ascii_lowercase();
    let inert = if lower == "core.pager" || lower.starts_with("pager.") {
        matches!(
            value,
            "" | "cat" | "less" | "less -R" | "less -FRX" | "more"
        )
    } else if matches!(lower.as_str(), "core.editor" | "sequence.editor") {
        matches!(value, "true" | "false" | ":" | "cat")
    } else {
        lower == "credential.helper" && value.is_empty()
    };
    runs_code(key) && !inert
}

/// Whether config key `key` (case-insensitive sections) names a command to run.
fn runs_code(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    RUNS_CODE.iter().any(|pat| {
        let (pp, kp): (Vec<&str>, Vec<&str>) = (pat.split('.').collect(), key.split('.').collect());
        // A subsection may contain dots: compare first and last segments.
        match (pp.as_slice(), kp.as_slice()) {
            ([a, "*"], [b, _, ..]) => a == b,
            ([a, "*", c], [b, .., d]) if kp.len() >= 3 => a == b && c == d,
            _ => pp == kp,
        }
    })
}

/// git: global options, then the subcommand. Returns whether the subcommand can
/// change working-tree files.
pub(super) fn git(args: &[String], out: &mut Out) -> bool {
    let mut i = 0;
    let mut tree = false; // --git-dir / --work-tree: paths may not be relative to cwd
    let mut opts = Vec::new();
    let mut unknown = Vec::new();
    while let Some(a) = args.get(i) {
        i += 1;
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (a.as_str(), None),
        };
        let value = |i: &mut usize| match inline {
            Some(v) => Some(v),
            None => {
                *i += 1;
                args.get(*i - 1).map(String::as_str)
            }
        };
        match name {
            "-C" => {
                let d = value(&mut i).unwrap_or_default();
                out.chdir(d);
                opts.push(format!("-C={d}"));
            }
            "-c" => {
                let kv = value(&mut i).unwrap_or_default();
                let key = kv.split_once('=').map_or(kv, |(k, _)| k);
                if sets_command(kv) {
                    out.opaque(format!("'git -c {key}' sets a command git runs"));
                }
                opts.push(format!("-c={kv}"));
            }
            "--config-env" => {
                let kv = value(&mut i).unwrap_or_default();
                let key = kv.split_once('=').map_or(kv, |(k, _)| k);
                if runs_code(key) {
                    out.opaque(format!("'git --config-env {key}' sets a command git runs"));
                }
                opts.push(format!("--config-env={kv}"));
            }
            "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--attr-source" => {
                tree |= matches!(name, "--git-dir" | "--work-tree");
                let v = value(&mut i).unwrap_or_default();
                opts.push(format!("{name}={v}"));
            }
            "--exec-path" => {
                if inline.is_some() {
                    out.opaque("'git --exec-path=DIR' runs git's programs from DIR");
                }
                opts.push(a.clone());
            }
            "--list-cmds" => opts.push(a.clone()),
            "-p" | "--paginate" => opts.push("--paginate".into()),
            "-P" | "--no-pager" => opts.push("--no-pager".into()),
            "-v" | "--version" => opts.push("--version".into()),
            "-h" | "--help" => opts.push("--help".into()),
            "--bare"
            | "--no-replace-objects"
            | "--no-lazy-fetch"
            | "--no-optional-locks"
            | "--no-advice"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--html-path"
            | "--man-path"
            | "--info-path" => opts.push(a.clone()),
            s if s.starts_with('-') => {
                unknown.push(a.clone());
                opts.push(a.clone());
            }
            _ => {
                i -= 1;
                break;
            }
        }
    }
    out.modelled();
    out.options(opts);
    out.unknown_options(unknown);
    let Some((sub, rest)) = args.get(i..).and_then(<[String]>::split_first) else {
        return false;
    };
    out.subcommand(sub);
    let before = out.fx.effects.len();
    let changes = subcommand(sub, rest, out);
    if tree && out.fx.effects.len() > before {
        out.unknown();
    }
    changes
}

/// The subcommand's options and effects; whether it can change working-tree files.
fn subcommand(sub: &str, rest: &[String], out: &mut Out) -> bool {
    let Some(model) = SUBS.iter().find(|s| listed(s.names, sub)) else {
        // A subcommand without a model: its options as written.
        let p = parse(rest, &crate::options::options("", "", ""));
        out.options(p.normalised(&[]));
        out.operands(p.operands());
        out.unmodelled();
        return other(sub, rest, out);
    };
    let spec = sub_spec(model);
    let p = parse(rest, &spec);
    let opts = p.normalised(model.aliases).into_iter().flat_map(|o| {
        // Only a flag can be several options; a value may hold `+`.
        if o.contains('=') || !o.contains('+') {
            vec![o]
        } else {
            o.trim_start_matches('-')
                .split('+')
                .map(|n| format!("--{n}"))
                .collect()
        }
    });
    out.options(opts);
    out.unknown_options(p.unlisted.iter().cloned());
    let mut ops: Vec<&str> = p.operands().collect();
    let mut subsub = None;
    if let Some(first) = ops.first().copied().filter(|f| listed(model.subs, f)) {
        out.subcommand(first);
        subsub = Some(first);
        ops.remove(0);
    }
    out.operands(ops.iter().copied());
    // What comes after `--` are paths.
    let dashdash = p
        .dashdash
        .map(|n| n.saturating_sub(usize::from(subsub.is_some())));
    effects(sub, subsub, &p, &ops, dashdash, out)
}

/// The remote a fetch, pull or push talks to: its first operand (a name or URL).
fn remote(ops: &[&str], out: &mut Out) {
    if let Some(r) = ops.first() {
        out.net(r);
    }
}

/// The working directory `git clone URL` creates: the last path component of the
/// URL without `.git`.
fn clone_dir(url: &str) -> &str {
    let url = url.trim_end_matches('/');
    let url = url
        .strip_suffix(".git")
        .unwrap_or(url)
        .trim_end_matches('/');
    url.rsplit(['/', ':']).next().unwrap_or(url)
}

fn effects(
    sub: &str,
    subsub: Option<&str>,
    p: &crate::options::Parsed<'_>,
    ops: &[&str],
    dashdash: Option<usize>,
    out: &mut Out,
) -> bool {
    for o in ["output", "output-directory"] {
        out.writes(p.values(if o == "output" { '\0' } else { 'o' }, o));
    }
    match sub {
        "rm" => {
            if p.has_long("pathspec-from-file") {
                out.unknown();
            }
            if !p.has('n', "dry-run") {
                pathspecs(FileOp::Delete, ops.iter().copied(), out);
            }
        }
        "mv" => {
            if let [srcs @ .., dst] = ops {
                if !srcs.is_empty() && !p.has('n', "dry-run") {
                    pathspecs(FileOp::Delete, srcs.iter().copied(), out);
                    pathspecs(FileOp::Write, [*dst], out);
                }
            }
        }
        "checkout" | "restore" => {
            if p.has_long("pathspec-from-file") {
                out.unknown();
            }
            // `git checkout TREE -- PATHS`: only what follows `--` are paths. Without
            // `--`, a branch name is reported too (harmless).
            let skip = if sub == "checkout" {
                dashdash.unwrap_or(0)
            } else {
                0
            };
            pathspecs(FileOp::Write, ops.iter().copied().skip(skip), out);
        }
        "apply" | "am" => {
            out.writes(p.values('\0', "build-fake-ancestor"));
            out.reads(ops.iter().copied());
            let report = ["check", "numstat", "stat", "summary"]
                .iter()
                .any(|l| p.has_long(l));
            if !report || p.has_long("apply") || sub == "am" {
                out.unknown(); // the files are named in the patch
            }
        }
        "clean" => {
            if !p.has('n', "dry-run") {
                if ops.is_empty() {
                    out.unknown(); // every untracked file
                }
                pathspecs(FileOp::Delete, ops.iter().copied(), out);
            }
        }
        "config" => config(subsub, p, ops, out),
        "commit" | "merge" | "tag" => {
            out.reads(p.values('F', "file"));
            out.reads(p.values('t', "template"));
            out.reads(p.values('\0', "pathspec-from-file"));
            if sub == "commit" {
                pathspecs(FileOp::Read, ops.iter().copied(), out);
            }
            return false;
        }
        "add" => {
            out.reads(p.values('\0', "pathspec-from-file"));
            pathspecs(FileOp::Read, ops.iter().copied(), out);
            return false;
        }
        "fetch" | "pull" => {
            remote(ops, out);
            return sub == "pull";
        }
        "push" => {
            match p.values('\0', "repo").last() {
                Some(r) => out.net(r),
                None => remote(ops, out),
            }
            return false;
        }
        "clone" => {
            remote(ops, out);
            match ops.get(1) {
                Some(dir) => out.write(dir),
                None => out.writes(ops.first().map(|u| clone_dir(u))),
            }
            out.reads(p.values('\0', "template"));
            for kv in p.values('c', "config") {
                let key = kv.split_once('=').map_or(kv, |(k, _)| k);
                if sets_command(kv) {
                    out.opaque(format!(
                        "'git clone --config {key}' sets a command git runs"
                    ));
                }
            }
            if p.values('u', "upload-pack").next().is_some() {
                out.opaque("'git clone --upload-pack' runs a program");
            }
        }
        "remote" => {
            if matches!(subsub, Some("add" | "set-url")) {
                out.nets(ops.get(1..).unwrap_or_default().iter().copied());
            }
            return false;
        }
        "worktree" => match subsub {
            Some("add") => out.writes(ops.first().copied()),
            Some("remove") => out.deletes(ops.first().copied()),
            Some("move") => {
                out.deletes(ops.first().copied());
                out.writes(ops.get(1).copied());
            }
            _ => return false,
        },
        "stash" => {
            return matches!(
                subsub,
                None | Some("push" | "save" | "pop" | "apply" | "branch")
            );
        }
        "reset" => return p.has_long("hard") || p.has_long("merge") || p.has_long("keep"),
        "switch" | "rebase" | "filter-branch" => return true,
        _ => return false,
    }
    true
}

/// Subcommands without an option model: their file and network effects.
fn other(sub: &str, rest: &[String], out: &mut Out) -> bool {
    let p = parse(
        rest,
        &crate::options::options("o", "output remote exec upload-pack", ""),
    );
    match sub {
        "ls-remote" | "archive" if p.values('\0', "remote").next().is_some() => {
            p.values('\0', "remote").for_each(|r| out.net(r));
        }
        "ls-remote" => remote(&p.operands, out),
        "submodule" => {
            if p.operands.first() == Some(&"add") {
                out.nets(p.operands.get(1).copied());
            }
            return true;
        }
        "archive" | "bundle" => {
            out.writes(p.values('o', "output"));
            if sub == "bundle" && p.operands.first() == Some(&"create") {
                out.writes(p.operands.get(1).copied());
            }
        }
        "blame" | "hash-object" => {
            let skip = usize::from(sub == "blame" && p.operands.len() > 1);
            out.reads(p.operands().skip(skip));
        }
        "cherry-pick" | "revert" | "merge-file" | "read-tree" | "checkout-index" | "bisect"
        | "sparse-checkout" | "init" | "notes" => return true,
        _ => {}
    }
    false
}

/// `git config --file F` writes F unless the invocation only reads.
fn config(subsub: Option<&str>, p: &crate::options::Parsed<'_>, ops: &[&str], out: &mut Out) {
    const READS: [&str; 7] = [
        "get",
        "get-all",
        "get-regexp",
        "get-urlmatch",
        "get-color",
        "get-colorbool",
        "list",
    ];
    const CHANGES: [&str; 7] = [
        "add",
        "edit",
        "remove-section",
        "rename-section",
        "replace-all",
        "unset",
        "unset-all",
    ];
    let reads = p.has_short('l')
        || READS.iter().any(|l| p.has_long(l))
        || matches!(subsub, Some("get" | "list"))
        // `git config KEY` (legacy syntax) prints KEY.
        || (subsub.is_none()
            && ops.len() == 1
            && !p.has('e', "edit")
            && !CHANGES.iter().any(|l| p.has_long(l)));
    let mut files: Vec<&str> = p.values('f', "file").collect();
    // The default files are only named for a change: reading them is ordinary.
    if files.is_empty() && !reads && p.values('\0', "blob").next().is_none() {
        files.push(if p.has_long("global") {
            "~/.gitconfig"
        } else if p.has_long("system") {
            "/etc/gitconfig"
        } else if p.has('e', "edit") {
            ".git/config"
        } else {
            // `git config KEY VALUE` in the repository: the policy judges the key (the
            // stdlib denies keys that run programs); reporting a write of `.git/config`
            // would make every `git config user.email …` a governance deny.
            ""
        });
        files.retain(|f| !f.is_empty());
    }
    if reads {
        out.reads(files);
    } else if !ops.is_empty() || subsub.is_some() || p.has('e', "edit") {
        out.writes(files);
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(git_subcommands, git_options);
}

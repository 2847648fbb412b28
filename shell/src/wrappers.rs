//! The one wrapper table: programs that run another command (`sudo`, `env`, `timeout`,
//! `xargs`, `find -exec`, `sh -c`, `eval`, …).
//!
//! The splitter reports the wrapped commands so that a policy decides each of them, and
//! the file model reads them for the files they change; both read this table, so a
//! wrapper seen by one is seen by the other. Options are read with closed specs (every
//! option listed): an unknown one means we cannot tell where the wrapped command
//! starts, which is [`Unanalysable`], never a guess.

use std::cell::RefCell;
use std::ops::Range;

use crate::names::{basename, is_assignment};
use crate::options::{parse_words, wrapper, Parsed, Spec};
use crate::shell_args::{parse_shell_args, SHELLS};

/// How a wrapped command gets its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// Exactly as written after the wrapper.
    AsWritten,
    /// With more arguments read from standard input (`xargs`): options included.
    WithStdinArgs,
    /// Once per file found (`find -exec`), `{}` standing for the file; `in_its_dir`
    /// for `-execdir`/`-okdir`, which run in each file's directory.
    PerFoundFile {
        /// Relative paths are relative to the found file's directory.
        in_its_dir: bool,
    },
}

/// A command run by a wrapper command.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Inner {
    /// A slice of the wrapper's argv.
    Argv {
        /// Indices into the wrapper's argv (the program name is index 0).
        range: Range<usize>,
        /// How it gets its arguments.
        runs: Runs,
    },
    /// A fixed argv (`xargs`' default `echo`).
    Literal {
        /// The command.
        argv: Vec<String>,
        /// How it gets its arguments.
        runs: Runs,
    },
    /// A script to parse like a command line (`sh -c`, `eval`, `trap`).
    Script(String),
}

/// What a wrapper command does besides being a command itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Wrapped<'a> {
    /// The commands it runs, in order.
    pub(crate) inners: Vec<Inner>,
    /// Directories it changes to before running them (`env -C`, `sudo -D`), in order.
    pub(crate) chdirs: Vec<&'a str>,
    /// Files it writes itself (`time -o`).
    pub(crate) writes: Vec<&'a str>,
    /// Files it opens in an editor (`sudo -e`).
    pub(crate) edits: Vec<&'a str>,
    /// Files it reads itself (`ssh -F config`, `parallel -a list`).
    pub(crate) reads: Vec<&'a str>,
    /// Network destinations it connects to itself (`ssh HOST`).
    pub(crate) network: Vec<&'a str>,
    /// Why some command it runs is not visible (`su` without `-c` starts a shell
    /// reading standard input).
    pub(crate) opaque: Vec<String>,
    /// Its own options, normalised (see [`crate::options::Opt::normalised`]).
    pub(crate) options: Vec<String>,
    /// Not a wrapper but a program with a model of its own, which only hands some
    /// option values to a shell (`git -c alias.x='!cmd'`, `tar -I`, `rsync -e`).
    pub(crate) own_model: bool,
}

/// A wrapper invocation whose wrapped command cannot be told statically.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unanalysable(pub(crate) String);

const ENV: Spec = wrapper(
    "i0v",
    "uCPS",
    "unset chdir split-string",
    "ignore-environment null debug list-signal-handling block-signal default-signal \
        ignore-signal",
);
/// `sudo`'s options, shared with `sudoedit`.
pub(crate) const SUDO: Spec = wrapper(
    "AbBEeHiKklnNPSsVv",
    "ugCDhprtUTR",
    "user group close-from chdir host prompt role type other-user command-timeout chroot",
    "askpass background bell edit set-home login remove-timestamp reset-timestamp list \
        non-interactive preserve-env preserve-groups shell stdin validate no-update",
);
const TIMEOUT: Spec = wrapper(
    "vfp",
    "sk",
    "signal kill-after",
    "foreground preserve-status verbose",
);
const NICE: Spec = Spec {
    numeric: true,
    ..wrapper("", "n", "adjustment", "")
};
const TIME: Spec = wrapper(
    "pavq",
    "fo",
    "format output",
    "append verbose quiet portability",
);
const XARGS: Spec = Spec {
    attached: "iel",
    ..wrapper(
        "0oprtx",
        "adEILnPs",
        "arg-file delimiter max-args max-procs max-chars process-slot-var",
        "null interactive no-run-if-empty verbose exit show-limits open-tty eof replace \
            max-lines",
    )
};
const FISH: Spec = wrapper(
    "hilnNPv",
    "cCdfDo",
    "command init-command debug debug-output features",
    "interactive login no-execute no-config print-rusage-self private profile \
        profile-startup print-debug-categories",
);
const SSH: Spec = wrapper(
    "1246AaCfGgKkMNnqsTtVvXxYy",
    "BbcDEeFIiJLlmOoPpQRSWw",
    "",
    "",
);
const WATCH: Spec = Spec {
    attached: "d",
    ..wrapper(
        "bcCegprtwx",
        "nq",
        "interval shotsdir",
        "beep color no-color differences errexit chgexit exec precise no-rerun no-title \
            no-wrap no-linewrap",
    )
};
const FLOCK: Spec = wrapper(
    "sexnoucFv",
    "wE",
    "timeout conflict-exit-code",
    "shared exclusive nonblock nb close unlock no-fork verbose fcntl",
);
const SCRIPT: Spec = Spec {
    attached: "t",
    ..wrapper(
        "aefqk",
        "cEIOBmT",
        "command echo log-in log-out log-io log-timing logging-format output-limit",
        "append return flush force quiet timing",
    )
};
const SU: Spec = Spec {
    posix: false,
    ..wrapper(
        "flmpPq",
        "cCgGsw",
        "command session-command group supp-group shell whitelist-environment",
        "fast login preserve-environment pty",
    )
};
const RUNUSER: Spec = wrapper(
    "flmpPq",
    "cCgGsuw",
    "command session-command group supp-group shell user whitelist-environment",
    "fast login preserve-environment pty",
);
const TASKSET: Spec = wrapper("acp", "", "", "all-tasks cpu-list pid");
const STRACE: Spec = Spec {
    attached: "kY",
    ..wrapper(
        "AcCdDfFhiJnqrtTvVwxyzZ",
        "abeEIoOpPsSuUX",
        "trace signal status output attach summary-columns summary-sort-by string-limit \
            abbrev verbose raw read write fault inject kvm decode-pids columns env user \
            argv0 detach-on trace-path trace-fds exit-on",
        "summary-only summary seccomp-bpf follow-forks output-separately decode-fds \
            absolute-timestamps relative-timestamps syscall-times timestamps quiet \
            successful-only failed-only stack-traces instruction-pointer secontext \
            daemonize debug no-abbrev tips summary-wall-clock",
    )
};
const LTRACE: Spec = wrapper(
    "bcCdfhiLrStTVx",
    "aAeFlnopsuwx",
    "align demangle indent library output",
    "debug no-signals",
);
const FAKEROOT: Spec = wrapper("uhv", "lfisb", "lib faked fd-base", "unknown-is-real");
const SYSTEMD_RUN: Spec = wrapper(
    "rtPqGSdhH",
    "upEM",
    "unit property description slice setenv uid gid nice working-directory host machine \
        on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar \
        timer-property path-property socket-property service-type send-sighup \
        background json",
    "user system scope remain-after-exit pty pipe quiet collect shell wait no-block \
        no-ask-password same-dir slice-inherit expand-environment on-clock-change \
        on-timezone-change ignore-failure",
);
// The short namespace options are flags; only their long forms take a file.
const UNSHARE: Spec = wrapper(
    "muinpCTUfrcl",
    "RwSG",
    "map-user map-group map-users map-groups propagation setgroups root wd setuid setgid \
        monotonic boottime load-interp",
    "mount uts ipc net pid user cgroup time fork kill-child mount-proc map-root-user \
        map-current-user map-auto keep-caps mount-binfmt",
);
const NSENTER: Spec = Spec {
    attached: "muinpCUTrwW",
    ..wrapper(
        "aFZce",
        "tSGN",
        "target setuid setgid net-socket wdns",
        "all mount uts ipc net pid cgroup user time preserve-credentials root wd no-fork \
            follow-context join-cgroup env user-parent keep-caps",
    )
};
const CHROOT: Spec = wrapper("", "", "userspec groups", "skip-chdir");
const PARALLEL: Spec = Spec {
    attached: "ie",
    ..wrapper(
        "0fgkqtuvmMvX",
        "aCdEIjLnNsSP",
        "arg-file colsep delimiter eof max-args max-replace-args max-lines max-chars \
            jobs sshlogin sshloginfile slf joblog results res timeout delay tmpdir \
            workdir wd env tag-string basefile bf return transferfile tf retries memfree \
            load halt shebang-wrap block block-size recstart recend arg-sep arg-file-sep \
            max-procs termseq nice resume-failed-from limit tagstring header rpl \
            sqlandworker sqlmaster sqlworker plus progress-bar fifo",
        "null dry-run keep-order group ungroup line-buffer tag verbose silent bar eta \
            progress pipe pipepart no-notice will-cite citation halt-on-error \
            resume resume-failed retry-failed shuf quote no-run-if-empty lb \
            linebuffer xargs xapply cat files files0 roundrobin round-robin compress \
            nonall onall trim keep-order controlmaster ssh-delay transfer cleanup \
            line-buffered keeporder group-by",
    )
};
/// `uv run`'s options (before the command it runs).
const UV_RUN: Spec = wrapper(
    "msUqvn",
    "pifP",
    "extra no-extra group no-group only-group env-file with with-editable \
        with-requirements package python index default-index index-url extra-index-url \
        find-links index-strategy keyring-provider resolution prerelease \
        upgrade-package reinstall-package cache-dir directory project config-file color \
        link-mode exclude-newer allow-insecure-host python-platform no-binary-package \
        no-build-package config-setting refresh-package",
    "all-extras no-dev dev no-default-groups all-groups module only-dev no-editable exact \
        no-env-file isolated active no-sync locked frozen script gui-script no-project \
        show-resolution no-index upgrade reinstall no-build-isolation no-build no-binary \
        refresh quiet verbose offline no-cache no-config native-tls managed-python \
        no-managed-python no-python-downloads all-packages compile-bytecode preview \
        no-progress",
);
/// `conda run`'s options.
const CONDA_RUN: Spec = wrapper(
    "vq",
    "np",
    "name prefix cwd",
    "live-stream no-capture-output debug-wrapper-scripts dev verbose quiet",
);
/// `poetry run`, `pipenv run`, `pdm run`, `bundle exec`: global options only.
const PROJECT_RUN: Spec = wrapper(
    "qvnP",
    "C",
    "directory project gemfile",
    "quiet verbose no-ansi no-interaction no-cache keep-file-descriptors",
);
const IONICE: Spec = wrapper("t", "cnpPu", "class classdata pid pgid uid", "ignore");
const CHRT: Spec = wrapper(
    "abdefimoprRv",
    "TPD",
    "sched-runtime sched-period sched-deadline",
    "all-tasks batch deadline ext fifo idle max other pid rr reset-on-fork verbose",
);

/// The argv of one command, with which of its words are dynamic (`$X`, `$(…)`): a
/// dynamic word is never taken for an option or a terminator.
struct Words<'a> {
    argv: &'a [String],
    dynamic: &'a [bool],
    /// The wrapper's options read so far, normalised.
    opts: RefCell<Vec<String>>,
}

impl<'a> Words<'a> {
    /// Word `i` when it is known before the command runs.
    fn fixed(&self, i: usize) -> Option<&'a str> {
        match self.dynamic.get(i) {
            Some(true) => None,
            _ => self.argv.get(i).map(String::as_str),
        }
    }

    /// The wrapped command from word `i` to the end, if there is one.
    fn rest(&self, i: usize) -> Vec<Inner> {
        if i < self.argv.len() {
            vec![Inner::Argv {
                range: i..self.argv.len(),
                runs: Runs::AsWritten,
            }]
        } else {
            Vec::new()
        }
    }

    /// The options of the wrapper, read with `spec`; `next` is an index into argv.
    fn options(&self, spec: &Spec) -> Result<Parsed<'a>, Unanalysable> {
        self.options_from(1, spec)
    }

    /// The options from word `from` on, read with `spec`; `next` is an index into
    /// argv.
    fn options_from(&self, from: usize, spec: &Spec) -> Result<Parsed<'a>, Unanalysable> {
        let args = self.argv.get(from..).unwrap_or_default();
        let dynamic = self.dynamic.get(from..).unwrap_or_default();
        let mut p = parse_words(args, dynamic, spec);
        self.opts.borrow_mut().extend(p.normalised(&[]));
        if let Some(opt) = p.unknown {
            let tool = self.argv.first().map_or("", |a| basename(a));
            return Err(Unanalysable(format!(
                "unknown option '{opt}' for '{tool}': cannot tell which command it runs"
            )));
        }
        p.next += from;
        Ok(p)
    }

    /// The words from `i` to the end joined with blanks: a command line given in
    /// several arguments that the program hands to a shell (`ssh`, `watch`).
    fn script(&self, i: usize) -> Vec<Inner> {
        match self.argv.get(i..) {
            Some(rest) if !rest.is_empty() => vec![Inner::Script(rest.join(" "))],
            _ => Vec::new(),
        }
    }
}

/// What wrapper command `argv` runs, or `None` when it is not a wrapper; `dynamic[i]`
/// tells that `argv[i]` is not known before the command runs (missing entries are
/// known).
pub(crate) fn unwrap<'a>(
    argv: &'a [String],
    dynamic: &'a [bool],
) -> Result<Option<Wrapped<'a>>, Unanalysable> {
    let w = Words {
        argv,
        dynamic,
        opts: RefCell::new(Vec::new()),
    };
    let Some(name) = w.fixed(0).map(basename) else {
        return Ok(None);
    };
    let mut out = Wrapped::default();
    out.inners = match name {
        "env" => {
            let p = w.options(&ENV)?;
            if p.has('S', "split-string") {
                return Err(Unanalysable(
                    "'env -S' is not supported: cannot tell which command it runs".into(),
                ));
            }
            out.chdirs.extend(p.values('C', "chdir"));
            let mut i = p.next;
            if w.fixed(i) == Some("-") {
                i += 1;
            }
            while w.fixed(i).is_some_and(|a| a.contains('=')) {
                i += 1;
            }
            w.rest(i)
        }
        "sudo" => {
            let p = w.options(&SUDO)?;
            out.chdirs.extend(p.values('D', "chdir"));
            if p.has('e', "edit") {
                // `sudo -e FILE…` is sudoedit: it runs no command.
                out.edits.extend(
                    argv.get(p.next..)
                        .unwrap_or_default()
                        .iter()
                        .map(String::as_str),
                );
                Vec::new()
            } else {
                let mut i = p.next;
                while w.fixed(i).is_some_and(is_assignment) {
                    i += 1;
                }
                if i >= argv.len() && (p.has('s', "shell") || p.has('i', "login")) {
                    out.opaque.push(
                        "'sudo' without a command starts a shell reading standard input".into(),
                    );
                }
                w.rest(i)
            }
        }
        // The first operand is the duration.
        "timeout" => w.rest(w.options(&TIMEOUT)?.next + 1),
        "nice" => w.rest(w.options(&NICE)?.next),
        "nohup" | "builtin" => w.rest(w.options(&wrapper("", "", "", ""))?.next),
        "setsid" => w.rest(w.options(&wrapper("cfw", "", "", "ctty fork wait"))?.next),
        "doas" => {
            let p = w.options(&wrapper("Lns", "uC", "", ""))?;
            if p.has_short('s') && p.next >= argv.len() {
                out.opaque
                    .push("'doas -s' starts a shell reading standard input".into());
            }
            w.rest(p.next)
        }
        "exec" => w.rest(w.options(&wrapper("cl", "a", "", ""))?.next),
        "stdbuf" => w.rest(
            w.options(&wrapper("", "ioe", "input output error", ""))?
                .next,
        ),
        "command" => {
            let p = w.options(&wrapper("pvV", "", "", ""))?;
            // `command -v NAME` only looks NAME up.
            if p.has_short('v') || p.has_short('V') {
                Vec::new()
            } else {
                w.rest(p.next)
            }
        }
        "time" => {
            let p = w.options(&TIME)?;
            out.writes.extend(p.values('o', "output"));
            w.rest(p.next)
        }
        "ionice" => {
            let p = w.options(&IONICE)?;
            // Changing the priority of running processes runs nothing.
            if p.has('p', "pid") || p.has('P', "pgid") || p.has('u', "uid") {
                Vec::new()
            } else {
                w.rest(p.next)
            }
        }
        "chrt" => {
            let p = w.options(&CHRT)?;
            if p.has('p', "pid") || p.has('m', "max") {
                Vec::new()
            } else {
                let mut i = p.next;
                let priority = |a: &str| !a.is_empty() && a.bytes().all(|c| c.is_ascii_digit());
                if w.fixed(i).is_some_and(priority) {
                    i += 1;
                }
                w.rest(i)
            }
        }
        // `busybox APPLET ARGS…`; its own `--list`, `--install`, `--help` run nothing.
        "busybox" => match w.fixed(1) {
            Some(a) if a.starts_with("--") => Vec::new(),
            _ => w.rest(1),
        },
        "xargs" => {
            let p = w.options(&XARGS)?;
            // The arguments come from this file instead of standard input.
            out.reads.extend(p.values('a', "arg-file"));
            if p.next < argv.len() {
                vec![Inner::Argv {
                    range: p.next..argv.len(),
                    runs: Runs::WithStdinArgs,
                }]
            } else {
                vec![Inner::Literal {
                    argv: vec!["echo".to_string()],
                    runs: Runs::WithStdinArgs,
                }]
            }
        }
        "find" => find_exec(&w)?,
        "trap" => trap(&w)?,
        "eval" => {
            if argv.len() <= 1 {
                Vec::new()
            } else if dynamic.iter().skip(1).any(|d| *d) {
                return Err(Unanalysable(
                    "'eval' of a dynamic string cannot be analysed".into(),
                ));
            } else {
                vec![Inner::Script(argv.get(1..).unwrap_or_default().join(" "))]
            }
        }
        _ if SHELLS.contains(&name) => {
            let sh = parse_shell_args(argv, dynamic);
            let i = sh.operand;
            match (sh.c_seen, argv.get(i), w.fixed(i)) {
                (false, _, _) | (true, None, _) => Vec::new(),
                (true, Some(_), Some(script)) => vec![Inner::Script(script.to_string())],
                (true, Some(_), None) => {
                    return Err(Unanalysable(format!(
                        "'{name} -c' with a dynamic command string cannot be analysed"
                    )))
                }
            }
        }
        "fish" => {
            // fish's options are GNU style; `-c CMD` (or `--command=CMD`) is the
            // command string, in a syntax close enough to POSIX for simple commands
            // (what is not POSIX fails to parse, which is never a silent pass).
            let p = w.options(&FISH)?;
            match p.values('c', "command").last() {
                Some(cmd) => vec![Inner::Script(cmd.to_string())],
                None if p.next < argv.len() => Vec::new(),
                None => {
                    out.opaque.push(READS_STDIN.replace("{}", name));
                    Vec::new()
                }
            }
        }
        "ssh" => ssh(&w, &mut out)?,
        "watch" => {
            let p = w.options(&WATCH)?;
            if p.has('x', "exec") {
                w.rest(p.next)
            } else {
                w.script(p.next)
            }
        }
        "flock" => {
            let p = w.options(&FLOCK)?;
            match w.fixed(p.next) {
                // `flock FD`: locks an open descriptor, runs nothing.
                Some(fd) if fd.bytes().all(|b| b.is_ascii_digit()) => Vec::new(),
                Some(file) => {
                    out.writes.push(file);
                    match w.fixed(p.next + 1) {
                        Some("-c" | "--command") => match w.fixed(p.next + 2) {
                            Some(cmd) => vec![Inner::Script(cmd.to_string())],
                            None if p.next + 2 < argv.len() => return Err(dynamic_script(name)),
                            None => Vec::new(),
                        },
                        _ => w.rest(p.next + 1),
                    }
                }
                None => Vec::new(),
            }
        }
        "script" => {
            let p = w.options(&SCRIPT)?;
            for l in ["log-in", "log-out", "log-io", "log-timing", "timing"] {
                out.writes.extend(p.values('\0', l));
            }
            out.writes
                .extend(p.values('I', "").chain(p.values('O', "")));
            out.writes
                .extend(p.values('B', "").chain(p.values('T', "")));
            let file = w.fixed(p.next);
            out.writes.push(file.unwrap_or("typescript"));
            let after = p.next + 1;
            match (p.values('c', "command").last(), w.fixed(after)) {
                (Some(cmd), _) => vec![Inner::Script(cmd.to_string())],
                // util-linux also takes `script FILE -c CMD`.
                (None, Some("-c" | "--command")) => match w.fixed(after + 1) {
                    Some(cmd) => vec![Inner::Script(cmd.to_string())],
                    None => return Err(dynamic_script(name)),
                },
                // BSD: `script [FILE [COMMAND…]]`.
                (None, Some(_)) => w.rest(after),
                (None, None) => {
                    out.opaque.push(READS_STDIN.replace("{}", name));
                    Vec::new()
                }
            }
        }
        "su" => su_like(&w, &SU, &mut out)?,
        "runuser" => {
            let p = w.options(&RUNUSER)?;
            if p.has('u', "user") {
                w.rest(p.next)
            } else {
                w.opts.borrow_mut().clear();
                su_like(&w, &SU, &mut out)?
            }
        }
        "taskset" => {
            let p = w.options(&TASKSET)?;
            if p.has('p', "pid") {
                Vec::new()
            } else {
                // The first operand is the mask or CPU list.
                w.rest(p.next + 1)
            }
        }
        "strace" | "ltrace" => {
            let spec = if name == "strace" { &STRACE } else { &LTRACE };
            let p = w.options(spec)?;
            out.writes.extend(p.values('o', "output"));
            w.rest(p.next)
        }
        "fakeroot" => {
            let p = w.options(&FAKEROOT)?;
            out.writes.extend(p.values('s', ""));
            out.reads.extend(p.values('i', ""));
            shell_default(&w, p.next, name, &mut out)
        }
        "systemd-run" => {
            let p = w.options(&SYSTEMD_RUN)?;
            shell_default(&w, p.next, name, &mut out)
        }
        "unshare" => {
            let p = w.options(&UNSHARE)?;
            p.values('w', "wd").for_each(|d| out.chdirs.push(d));
            shell_default(&w, p.next, name, &mut out)
        }
        "nsenter" => {
            let p = w.options(&NSENTER)?;
            shell_default(&w, p.next, name, &mut out)
        }
        "chroot" => {
            let p = w.options(&CHROOT)?;
            // The command's paths are inside NEWROOT: they are reported as written
            // (naming the host's files), which reports a protected name too often
            // rather than never.
            shell_default(&w, p.next + 1, name, &mut out)
        }
        "unbuffer" => w.rest(w.options(&wrapper("p", "", "", ""))?.next),
        "caffeinate" => w.rest(w.options(&wrapper("dimsu", "tw", "", ""))?.next),
        "firejail" => {
            // Every firejail option is one word (`--net=none`).
            let mut i = 1;
            while w.fixed(i).is_some_and(|a| a.starts_with("--") && a != "--") {
                w.opts
                    .borrow_mut()
                    .push(argv.get(i).cloned().unwrap_or_default());
                i += 1;
            }
            if w.fixed(i) == Some("--") {
                i += 1;
            } else if let Some(a) = w.fixed(i).filter(|a| a.len() > 1 && a.starts_with('-')) {
                return Err(unknown_option(a, name));
            }
            shell_default(&w, i, name, &mut out)
        }
        "parallel" => parallel(&w, &mut out)?,
        "uv" | "poetry" | "pipenv" | "pdm" | "bundle" | "conda" | "mamba" | "micromamba" => {
            let verb = if name == "bundle" { "exec" } else { "run" };
            if w.fixed(1) != Some(verb) {
                return Ok(None);
            }
            out.own_model = true;
            let spec = match name {
                "uv" => &UV_RUN,
                "conda" | "mamba" | "micromamba" => &CONDA_RUN,
                _ => &PROJECT_RUN,
            };
            let p = w.options_from(2, spec)?;
            p.values('\0', "directory").for_each(|d| out.chdirs.push(d));
            p.values('C', "").for_each(|d| out.chdirs.push(d));
            w.rest(p.next)
        }
        "git" => {
            out.own_model = true;
            git_commands(&w)
        }
        "tar" | "gtar" | "bsdtar" => {
            out.own_model = true;
            tar_programs(&w)
        }
        "rsync" => {
            out.own_model = true;
            rsync_shell(&w)
        }
        _ => return Ok(None),
    };
    out.options = w.opts.into_inner();
    Ok(Some(out))
}

/// A shell or interpreter reading its program from standard input.
pub(crate) const READS_STDIN: &str = "'{}' reads the commands it runs from standard input";

fn dynamic_script(name: &str) -> Unanalysable {
    Unanalysable(format!(
        "'{name}' with a dynamic command string cannot be analysed"
    ))
}

fn unknown_option(opt: &str, tool: &str) -> Unanalysable {
    Unanalysable(format!(
        "unknown option '{opt}' for '{tool}': cannot tell which command it runs"
    ))
}

/// The command from word `i`; without one, the program starts an interactive shell
/// (which reads standard input).
fn shell_default(w: &Words<'_>, i: usize, name: &str, out: &mut Wrapped<'_>) -> Vec<Inner> {
    if i < w.argv.len() {
        w.rest(i)
    } else {
        out.opaque.push(format!(
            "'{name}' without a command starts a shell reading standard input"
        ));
        Vec::new()
    }
}

/// `su [OPTS] [-] [USER [ARGS…]]`: `-c CMD` is run by the user's shell; without it,
/// the shell reads its commands from standard input (or runs ARGS as a script).
fn su_like<'a>(
    w: &Words<'a>,
    spec: &Spec,
    out: &mut Wrapped<'a>,
) -> Result<Vec<Inner>, Unanalysable> {
    let p = w.options(spec)?;
    let name = w.fixed(0).map_or("su", basename);
    let cmd = p
        .values('c', "command")
        .chain(p.values('C', "session-command"));
    match cmd.last() {
        Some(c) => Ok(vec![Inner::Script(c.to_string())]),
        None => {
            out.opaque.push(format!(
                "'{name}' without -c starts a shell reading standard input"
            ));
            Ok(Vec::new())
        }
    }
}

/// `ssh [OPTS] DEST [OPTS] [COMMAND…]`: the command words are joined into one line
/// run by the remote shell; `ProxyCommand` and `LocalCommand` run locally.
fn ssh<'a>(w: &Words<'a>, out: &mut Wrapped<'a>) -> Result<Vec<Inner>, Unanalysable> {
    let p = w.options(&SSH)?;
    let Some(dest) = w.argv.get(p.next) else {
        return Ok(Vec::new());
    };
    // ssh reads options after the destination too.
    let q = w.options_from(p.next + 1, &SSH)?;
    out.network.push(dest);
    let mut inners = Vec::new();
    for p in [&p, &q] {
        out.network
            .extend(p.values('J', "").chain(p.values('W', "")));
        out.reads.extend(p.values('F', "").chain(p.values('i', "")));
        out.writes.extend(p.values('E', ""));
        for o in p.values('o', "") {
            let (key, value) = o.split_once(['=', ' ']).map_or((o, ""), |(k, v)| {
                (k.trim(), v.trim_start_matches(['=', ' ']))
            });
            let runs = key.eq_ignore_ascii_case("proxycommand")
                || key.eq_ignore_ascii_case("localcommand")
                || key.eq_ignore_ascii_case("knownhostscommand");
            if runs && !value.eq_ignore_ascii_case("none") && !value.is_empty() {
                inners.push(Inner::Script(value.to_string()));
            }
        }
    }
    // `ssh -N`, `-W`, `-O`, `-G`, `-Q`, `-V`: no remote command.
    let no_shell = "NWOGQV".chars().any(|c| p.has_short(c) || q.has_short(c));
    match w.script(q.next).pop() {
        Some(cmd) => inners.push(cmd),
        None if !no_shell => out
            .opaque
            .push("'ssh' without a command runs a remote shell reading standard input".into()),
        None => {}
    }
    Ok(inners)
}

/// `parallel [OPTS] [COMMAND] ::: ARGS…`: COMMAND runs once per argument (a single
/// word is a shell line); without a command the arguments or the input lines are the
/// commands.
fn parallel<'a>(w: &Words<'a>, out: &mut Wrapped<'a>) -> Result<Vec<Inner>, Unanalysable> {
    let p = w.options(&PARALLEL)?;
    out.reads.extend(p.values('a', "arg-file"));
    let is_sep = |a: &str| matches!(a, ":::" | "::::" | ":::+" | "::::+");
    let end = (p.next..w.argv.len())
        .find(|&i| w.fixed(i).is_some_and(is_sep))
        .unwrap_or(w.argv.len());
    // Files after `::::` hold the arguments.
    let mut in_files = false;
    for i in end..w.argv.len() {
        match w.fixed(i) {
            Some(sep) if is_sep(sep) => in_files = sep.starts_with("::::"),
            Some(f) if in_files => out.reads.push(f),
            _ => {}
        }
    }
    if end == p.next {
        out.opaque
            .push("'parallel' without a command runs its arguments or input as commands".into());
        return Ok(Vec::new());
    }
    let single = (end == p.next + 1)
        .then(|| w.fixed(p.next))
        .flatten()
        .filter(|c| c.contains([' ', '\t', ';', '|', '&', '>', '<', '$', '`']));
    Ok(match single {
        Some(line) => vec![Inner::Script(line.to_string())],
        None => vec![Inner::Argv {
            range: p.next..end,
            runs: Runs::WithStdinArgs,
        }],
    })
}

/// Commands git runs with the shell: `git -c alias.NAME='!CMD' NAME`, `rebase
/// --exec CMD`, `bisect run CMD…`, `submodule foreach CMD`, and filter-branch's
/// filters.
fn git_commands(w: &Words<'_>) -> Vec<Inner> {
    let mut aliases = Vec::new();
    let mut i = 1;
    while let Some(a) = w.fixed(i) {
        match a {
            "-c" => {
                aliases.extend(w.fixed(i + 1));
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--super-prefix" | "--attr-source" => i += 2,
            _ if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = w.fixed(i) else {
        return Vec::new();
    };
    let mut inners: Vec<Inner> = aliases
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| {
            // Section names are case-insensitive, alias names are not.
            k.get(..6).filter(|p| p.eq_ignore_ascii_case("alias."))?;
            (k.get(6..)? == sub).then_some(v)
        })
        .filter_map(|v| v.trim_start().strip_prefix('!'))
        .map(|cmd| Inner::Script(cmd.to_string()))
        .collect();
    let first = i + 1;
    let script = |k: usize| w.fixed(k).map(|c| Inner::Script(c.to_string()));
    match sub {
        "rebase" | "filter-branch" => {
            let filters = [
                "--exec",
                "--setup",
                "--env-filter",
                "--tree-filter",
                "--index-filter",
                "--parent-filter",
                "--msg-filter",
                "--commit-filter",
                "--tag-name-filter",
            ];
            let mut k = first;
            while let Some(a) = w.fixed(k) {
                k += 1;
                if a == "--" {
                    break;
                }
                let (name, inline) = a.split_once('=').map_or((a, None), |(n, v)| (n, Some(v)));
                let takes = (sub == "rebase"
                    && (name == "-x" || "--exec".starts_with(name) && name.len() > 3))
                    || (sub == "filter-branch" && filters.contains(&name));
                if !takes {
                    continue;
                }
                match inline {
                    Some(v) => inners.push(Inner::Script(v.to_string())),
                    None => {
                        inners.extend(script(k));
                        k += 1;
                    }
                }
            }
        }
        "bisect" if w.fixed(first) == Some("run") => inners.extend(w.rest(first + 1)),
        "submodule" => {
            if let Some(k) = (first..w.argv.len()).find(|&k| w.fixed(k) == Some("foreach")) {
                let mut k = k + 1;
                while w.fixed(k).is_some_and(|a| a.starts_with('-')) {
                    k += 1;
                }
                inners.extend(w.script(k));
            }
        }
        _ => {}
    }
    inners
}

/// tar's programs: `--to-command`, `-I`/`--use-compress-program` and
/// `--checkpoint-action=exec=` are run by the shell.
fn tar_programs(w: &Words<'_>) -> Vec<Inner> {
    let mut inners = Vec::new();
    let mut i = 1;
    while let Some(a) = w.fixed(i) {
        i += 1;
        if a == "--" {
            break;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a, None),
        };
        let program = match name {
            "-I" => true,
            _ if name.starts_with("--") && name.len() > 4 => [
                "--to-command",
                "--use-compress-program",
                "--checkpoint-action",
            ]
            .iter()
            .any(|l| l.starts_with(name)),
            _ => false,
        };
        if let Some(v) = a
            .strip_prefix("-I")
            .filter(|v| !v.is_empty() && !a.starts_with("--"))
        {
            inners.push(Inner::Script(v.to_string()));
            continue;
        }
        if !program {
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None => {
                i += 1;
                w.fixed(i - 1)
            }
        };
        let value = match value {
            Some(v) if "--checkpoint-action".starts_with(name) => v.strip_prefix("exec="),
            v => v,
        };
        inners.extend(value.map(|v| Inner::Script(v.to_string())));
    }
    inners
}

/// `rsync -e CMD` / `--rsh=CMD`: the remote shell rsync runs.
fn rsync_shell(w: &Words<'_>) -> Vec<Inner> {
    let mut inners = Vec::new();
    let mut i = 1;
    while let Some(a) = w.fixed(i) {
        i += 1;
        if a == "--" {
            break;
        }
        let value = if a == "-e" || a == "--rsh" {
            i += 1;
            w.fixed(i - 1)
        } else if let Some(v) = a.strip_prefix("--rsh=") {
            Some(v)
        } else if a.starts_with('-') && !a.starts_with("--") {
            // `-avze CMD`, `-e'ssh -p 2'`: `e` takes the rest or the next word; the
            // other letters taking a value end the cluster.
            let cluster = a.get(1..).unwrap_or_default();
            let at = cluster
                .char_indices()
                .find(|(_, c)| "eBfTM@".contains(*c))
                .filter(|(_, c)| *c == 'e');
            match at.and_then(|(k, _)| cluster.get(k + 1..)) {
                Some("") => {
                    i += 1;
                    w.fixed(i - 1)
                }
                rest => rest,
            }
        } else {
            None
        };
        inners.extend(value.map(|v| Inner::Script(v.to_string())));
    }
    inners
}

/// The commands of `find … -exec CMD {} ;` (also `-execdir`, `-ok`, `-okdir`, and `+`
/// after `{}`).
fn find_exec(w: &Words<'_>) -> Result<Vec<Inner>, Unanalysable> {
    let n = w.argv.len();
    let mut found = Vec::new();
    let mut i = 1;
    while i < n {
        let Some(action @ ("-exec" | "-execdir" | "-ok" | "-okdir")) = w.fixed(i) else {
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut k = start;
        let end = loop {
            match w.fixed(k) {
                Some(";") => break Some(k),
                Some("+") if k > start && w.fixed(k - 1) == Some("{}") => break Some(k),
                _ if k >= n => break None,
                _ => k += 1,
            }
        };
        let Some(end) = end else {
            return Err(Unanalysable(format!(
                "'find {action}' without a terminating ';' or '+'"
            )));
        };
        if end == start {
            return Err(Unanalysable("'find -exec' without a command".into()));
        }
        found.push(Inner::Argv {
            range: start..end,
            runs: Runs::PerFoundFile {
                in_its_dir: action.ends_with("dir"),
            },
        });
        i = end + 1;
    }
    Ok(found)
}

/// `trap [-lpP] [[ACTION] SIGNAL…]`: ACTION runs later, like `sh -c ACTION`.
fn trap(w: &Words<'_>) -> Result<Vec<Inner>, Unanalysable> {
    let mut i = 1;
    match w.fixed(1) {
        Some("--") => i = 2,
        Some(a) if a.len() > 1 && a.starts_with('-') => return Ok(Vec::new()),
        _ => {}
    }
    if w.argv.len() < i + 2 {
        return Ok(Vec::new());
    }
    match w.fixed(i) {
        Some("-" | "") => Ok(Vec::new()),
        Some(action) => Ok(vec![Inner::Script(action.to_string())]),
        None => Err(Unanalysable(
            "'trap' with a dynamic action cannot be analysed".into(),
        )),
    }
}

#[cfg(test)]
mod tests;

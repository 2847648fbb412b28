//! Exec requests in shell form: a command line is split into simple commands (see
//! [`contextos_shell`]); for each, the shell model tells what it runs, reads, writes,
//! deletes, links and reaches over the network, where it runs and with which environment.
//! The command is decided as an exec request carrying all of that, each file as a path
//! request, and the strongest verdict wins. A line that cannot be analysed is `ask` (or
//! `deny` when strict), never `allow`; an allow of a command that is not fully modelled is
//! not an allow (see [`modelled`]).

use crate::decision::{Decision, Rejection, ShellDecision};
use crate::eval::EvalOptions;
use crate::policy::PolicySet;
use crate::request::{Domain, ExecRequest, PathOp, Request, RequestKind, Session};
use crate::shell_env::is_inert;
use contextos_grammar::ast::Effect;
use contextos_shell::{FileEffects, SimpleCommand};

pub use crate::shell_place::{Place, ShellBase};

/// How [`PolicySet::decide_shell`](crate::PolicySet::decide_shell) and `decide_argv` treat
/// a line: strictness, explanation, and where it runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellOptions<'a> {
    /// Unanalysable input is denied instead of asked.
    pub strict: bool,
    /// Collect why-not traces in every part (see [`crate::EvalOptions::explain`]).
    pub explain: bool,
    /// Where the line runs, so file targets can be brought into project-relative form.
    /// Without it, targets are judged relative to the project root.
    pub base: Option<&'a ShellBase>,
    /// The agent session the line comes from; every part is decided in it.
    pub session: Option<&'a Session>,
    /// Secret material the caller found in the line itself (`secret:DETECTOR`, from the
    /// scan detectors): every network request of the line carries it.
    pub carries: &'a [String],
}

/// Decides a shell command line ([`PolicySet::decide_shell`] calls it).
pub(crate) fn decide_shell(
    set: &PolicySet,
    line: &str,
    role: Option<&str>,
    opts: ShellOptions<'_>,
) -> ShellDecision {
    decide_commands(
        set,
        line.to_string(),
        contextos_shell::split(line),
        role,
        opts,
    )
}

/// Decides a command given as argv (no shell in between): the words are not split or
/// expanded again, but wrappers are unwrapped as in a line. The decision's `line` is
/// the argv quoted for a person to read.
pub(crate) fn decide_argv(
    set: &PolicySet,
    argv: &[String],
    role: Option<&str>,
    opts: ShellOptions<'_>,
) -> ShellDecision {
    let line = contextos_shell::quote(argv);
    decide_commands(set, line, contextos_shell::split_argv(argv), role, opts)
}

/// What the line has done so far that changes the meaning of later steps.
#[derive(Default)]
struct LineState {
    /// Links made earlier in the line: (link, what it reaches), both resolved.
    links: Vec<(String, String)>,
    /// Files written earlier in the line by a command that reached the network, with the
    /// program that wrote them: running one runs downloaded code.
    downloaded: Vec<(String, String)>,
}

impl LineState {
    /// `place` with an earlier link of the line followed.
    fn follow(&self, place: &str) -> String {
        for (link, target) in self.links.iter().rev() {
            if place == link {
                return target.clone();
            }
            if let Some(rest) = place
                .strip_prefix(link.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                return format!("{}/{rest}", target.trim_end_matches('/'));
            }
        }
        place.to_string()
    }
}

/// A file the command touches, resolved.
struct Target {
    op: PathOp,
    place: String,
    /// A `DST/basename(SRC)` guess (see [`contextos_shell::FileEffect::into_dir`]).
    guess: bool,
}

/// Decides the simple commands of one line (or argv): each command, each file it
/// touches; an analysis error is the unknown verdict, never allow.
fn decide_commands(
    set: &PolicySet,
    line: String,
    commands: Result<Vec<SimpleCommand>, contextos_shell::ShellError>,
    role: Option<&str>,
    opts: ShellOptions<'_>,
) -> ShellDecision {
    let unknown = if opts.strict {
        Effect::Deny
    } else {
        Effect::Ask
    };
    let eval = EvalOptions {
        explain: opts.explain,
    };
    let commands = match commands {
        Ok(c) => c,
        Err(e) => {
            return ShellDecision {
                line,
                verdict: unknown,
                parts: Vec::new(),
                guesses: Vec::new(),
                rejection: Some(Rejection {
                    code: "exec.unparsable".into(),
                    message: e.to_string(),
                }),
            }
        }
    };
    let default_base = ShellBase::default();
    let base = opts.base.unwrap_or(&default_base);
    let role = role.map(str::to_string);
    let session = opts.session.cloned();
    // What the whole line reads, and where each command reaches: network requests are
    // decided after the line, since a pipe or a substitution may feed a sender from a
    // command written after it (`curl -d @- x <<< "$(cat .env)"`).
    let mut line_reads: Vec<String> = Vec::new();
    let mut reaches: Vec<Reach> = Vec::new();
    let mut parts: Vec<Decision> = Vec::new();
    let mut guesses = Vec::new();
    // The strongest line-level finding, with the verdict it carries.
    let mut rejection: Option<(Effect, Rejection)> = None;
    let mut reject = |verdict: Effect, code: &str, message: String| {
        if rejection.as_ref().is_none_or(|(v, _)| verdict > *v) {
            rejection = Some((
                verdict,
                Rejection {
                    code: code.into(),
                    message,
                },
            ));
        }
    };
    let mut state = LineState::default();
    for cmd in &commands {
        let shown = cmd.argv.join(" ");
        if cmd.argv.first().is_some_and(|p| is_dynamic_word(p)) {
            reject(
                unknown,
                "exec.dynamic-program",
                format!(
                    "the program `{}` is only known at run time",
                    cmd.argv.first().map_or("", |s| s.as_str())
                ),
            );
        }
        let fx = contextos_shell::file_effects(&cmd.argv);
        let dir = base.locate(cmd.cwd.as_deref());
        let resolve = |t: &str| -> Place {
            if is_expansion(t) {
                return Place::Dynamic;
            }
            match &dir {
                Place::Known(d) => match base.resolve_from(d, t) {
                    Place::Known(p) => Place::Known(state.follow(&p)),
                    Place::Dynamic => Place::Dynamic,
                },
                // A relative path from an unknown directory is unknown; an absolute one
                // is not.
                Place::Dynamic if t.starts_with(['/', '~']) => base.resolve_from("", t),
                Place::Dynamic => Place::Dynamic,
            }
        };
        if fx.unknown && !base.contained {
            reject(
                unknown,
                "exec.unknown-targets",
                format!("`{shown}` changes files that cannot be known before it runs"),
            );
        }
        // A shell reading a here-document the splitter parsed hides nothing.
        let opaque = if cmd.stdin_script {
            Vec::new()
        } else {
            fx.opaque.clone()
        };
        if !opaque.is_empty() && !base.contained {
            reject(
                unknown,
                "exec.opaque",
                format!("`{shown}`: {}", opaque.join("; ")),
            );
        }
        // Every file the command touches, resolved where it lands.
        let mut targets: Vec<Target> = Vec::new();
        let mut dynamic_targets = false;
        // Redirections to `/dev/tcp/HOST/PORT` open connections, not files.
        let mut sockets: Vec<(String, &str)> = Vec::new();
        for t in cmd.writes.iter().chain(&cmd.reads) {
            if let Some(s) = crate::shell_net::dev_socket(t) {
                if !sockets.contains(&s) {
                    sockets.push(s);
                }
            }
        }
        let listed = cmd
            .writes
            .iter()
            .map(|t| (PathOp::Write, t.as_str(), false))
            .chain(cmd.reads.iter().map(|t| (PathOp::Read, t.as_str(), false)))
            .filter(|(_, t, _)| crate::shell_net::dev_socket(t).is_none())
            .chain(
                fx.effects
                    .iter()
                    .map(|e| (PathOp::from(e.op), e.path.as_str(), e.into_dir)),
            );
        for (op, written, guess) in listed {
            if is_dynamic_word(written) && !is_expansion(written) {
                // A glob: decided through the names it could expand to, and never known
                // exactly.
                dynamic_targets = true;
                if op != PathOp::Read && !base.contained {
                    reject(
                        unknown,
                        "exec.dynamic-target",
                        format!("the file `{written}` is only known at run time (a glob)"),
                    );
                }
                for sample in crate::glob::samples(written) {
                    if let Place::Known(place) = resolve(&sample) {
                        if base.reaches_host(&place) {
                            targets.push(Target { op, place, guess });
                        }
                    }
                }
                continue;
            }
            match resolve(written) {
                // The project directory itself (`git add .`, `grep -r x .`, `docker build
                // .`) is no file: what a command does to the whole tree is the exec rules'
                // business (`rm -rf .` is `std-exec-rm-root`).
                Place::Known(place) if place == "." => {}
                Place::Known(place) => {
                    if base.reaches_host(&place) {
                        targets.push(Target { op, place, guess });
                    }
                }
                Place::Dynamic => {
                    if base.contained || op == PathOp::Read && !written.starts_with(['/', '~']) {
                        // A read relative to the project is decided where it can be: the
                        // sandbox, or the model's static part; only writes are refused.
                        dynamic_targets |= op == PathOp::Read;
                        continue;
                    }
                    dynamic_targets = true;
                    if op != PathOp::Read {
                        reject(
                            unknown,
                            "exec.dynamic-target",
                            format!(
                                "the file `{written}` is only known at run time (expansion, glob or an unknown working directory)"
                            ),
                        );
                    }
                }
            }
        }
        // Running a file this line downloaded runs code from the network.
        let runs_downloaded = fx
            .runs_files
            .iter()
            .chain(cmd.argv.first().filter(|p| p.contains('/')))
            .filter_map(|f| match resolve(f) {
                Place::Known(p) => Some(p),
                Place::Dynamic => None,
            })
            .find_map(|p| {
                state
                    .downloaded
                    .iter()
                    .find(|(f, _)| *f == p)
                    .map(|(f, by)| (f.clone(), by.clone()))
            });
        let mut piped_from = cmd.piped_from.clone();
        if let Some((file, by)) = &runs_downloaded {
            piped_from.push(by.clone());
            reject(
                Effect::Deny,
                "exec.downloaded-code",
                format!("`{shown}` runs `{file}`, which `{by}` downloaded earlier in the line"),
            );
        }
        let req = ExecRequest {
            argv: cmd.argv.clone(),
            piped_from,
            env: cmd.env.clone(),
            cwd: match &dir {
                Place::Known(d) if d == "." => String::new(),
                Place::Known(d) => d.clone(),
                Place::Dynamic => "?".into(),
            },
            reads: targets
                .iter()
                .filter(|t| t.op == PathOp::Read)
                .map(|t| t.place.clone())
                .collect(),
            writes: targets
                .iter()
                .filter(|t| t.op != PathOp::Read && !t.guess)
                .map(|t| t.place.clone())
                .collect(),
            network: fx
                .network
                .iter()
                .cloned()
                .chain(sockets.iter().map(|(t, _)| t.clone()))
                .collect(),
            runs: fx
                .code
                .iter()
                .chain(fx.runs_files.iter())
                .cloned()
                .collect(),
            code: fx.code.clone(),
            options: fx.options.clone(),
            subcommand: fx.subcommand.clone(),
            operands: fx.operands.clone(),
            opaque: opaque.clone(),
            modelled: true,
        };
        // The files, decided as path requests so a shell route meets the same path rules
        // as a direct file operation.
        let mut outside_unallowed = false;
        let mut file_parts: Vec<(Decision, bool)> = Vec::new();
        for t in &targets {
            let d = crate::explain::decide(
                set,
                &Request::path(t.op, t.place.clone())
                    .with_role(role.clone())
                    .with_session(session.clone()),
                eval,
            );
            let outside = crate::shell_place::is_outside(&t.place);
            if outside && t.op == PathOp::Read && (d.verdict != Effect::Allow || d.default_applied)
            {
                outside_unallowed = true;
            }
            // A project file read with nothing to say about it adds nothing: the command's
            // own decision covers it.
            if t.op == PathOp::Read && !outside && d.verdict == Effect::Allow && d.default_applied {
                continue;
            }
            file_parts.push((d, t.guess));
        }
        let mut req = req;
        // In the sandbox what a command does beyond its words stays in the sandbox, and
        // the files it changed are decided one by one afterwards.
        req.modelled = base.contained
            || (opaque.is_empty() && modelled(cmd, &fx, &dir, dynamic_targets, outside_unallowed));
        // A bare redirection (`> file`) runs no program; only its writes are decided.
        if !cmd.argv.is_empty() {
            let exec = Request::new(RequestKind::Exec(req.clone()))
                .with_role(role.clone())
                .with_session(session.clone());
            parts.push(launder_guard(
                set,
                crate::explain::decide(set, &exec, eval),
                &req,
            ));
        }
        for (d, guess) in file_parts {
            if guess {
                guesses.push(parts.len());
            }
            parts.push(d);
        }
        line_reads.extend(
            targets
                .iter()
                .filter(|t| t.op == PathOp::Read)
                .map(|t| t.place.clone()),
        );
        for dest in &fx.network {
            reaches.push(Reach::of(&req, dest));
        }
        for (target, proto) in &sockets {
            reaches.push(Reach::socket(target.clone(), proto));
        }
        let (links, downloads) = learn(&fx, &req, &resolve);
        state.links.extend(links);
        state.downloaded.extend(downloads);
    }
    if !reaches.is_empty() {
        let mut carries = opts.carries.to_vec();
        carries.extend(crate::shell_net::secret_env_carries(set, &line));
        parts.extend(crate::shell_net::decide_reaches(
            set,
            &reaches,
            &line_reads,
            &carries,
            role.as_deref(),
            session.as_ref(),
            eval,
        ));
    }
    let mut verdict = parts.iter().map(|p| p.verdict).max();
    if let Some((v, _)) = &rejection {
        verdict = Some(verdict.map_or(*v, |p| p.max(*v)));
    }
    let verdict = verdict.unwrap_or_else(|| set.defaults[Domain::Exec.index()]);
    ShellDecision {
        line,
        verdict,
        parts,
        guesses,
        rejection: rejection.map(|(_, r)| r),
    }
}

use crate::shell_net::Reach;

/// What later steps of the line must know: links made (link, what it reaches) and files
/// downloaded (file, program).
type Learned = (Vec<(String, String)>, Vec<(String, String)>);

fn learn(fx: &FileEffects, req: &ExecRequest, resolve: &dyn Fn(&str) -> Place) -> Learned {
    let mut links = Vec::new();
    for l in &fx.links {
        let Place::Known(link) = resolve(&l.path) else {
            continue;
        };
        // A relative symbolic link's target is relative to the link's own directory.
        let target = if l.symbolic && !l.target.starts_with(['/', '~', '$']) {
            let parent = link.rsplit_once('/').map_or("", |(p, _)| p);
            let joined = if parent.is_empty() {
                l.target.clone()
            } else {
                format!("{parent}/{}", l.target)
            };
            resolve(&joined)
        } else {
            resolve(&l.target)
        };
        if let Place::Known(target) = target {
            links.push((link, target));
        }
    }
    let mut downloads = Vec::new();
    if !req.network.is_empty() {
        let by = req
            .argv
            .first()
            .map(|p| contextos_shell::basename(p).to_string())
            .unwrap_or_default();
        for w in &req.writes {
            downloads.push((w.clone(), by.clone()));
        }
    }
    (links, downloads)
}

/// Whether every part of a command is modelled, so that an allow may be answered as one:
/// its environment only holds variables that change no program's behaviour, it runs no
/// code the policy cannot see, its options are known to its model, its files are known
/// before it runs, and what it reads outside the project a rule allows.
fn modelled(
    cmd: &SimpleCommand,
    fx: &FileEffects,
    dir: &Place,
    dynamic_targets: bool,
    outside_unallowed: bool,
) -> bool {
    cmd.env.iter().all(|a| is_inert(a))
        && fx.code.is_empty()
        && !fx.unknown
        && !cmd.dynamic
        && !dynamic_targets
        && *dir != Place::Dynamic
        && (!fx.modelled || fx.unknown_options.is_empty())
        && !outside_unallowed
}

/// An allow of a command that is not fully modelled is demoted to the exec default: the
/// rule matched the words, but the words are not all the command does.
fn launder_guard(set: &PolicySet, mut d: Decision, req: &ExecRequest) -> Decision {
    if req.modelled || d.verdict != Effect::Allow || d.default_applied {
        return d;
    }
    let default = set.defaults[Domain::Exec.index()];
    if default == Effect::Allow {
        // The default allows anyway; the answer is still not an explicit allow.
        d.overruled.append(&mut d.decided_by);
        d.default_applied = true;
        return d;
    }
    d.overruled.append(&mut d.decided_by);
    d.verdict = default;
    d.default_applied = true;
    d.obligations.clear();
    d
}

/// A program name that expansion could change. `[` alone is the `test` builtin.
fn is_dynamic_word(w: &str) -> bool {
    (w.contains(['$', '`', '*', '?', '{']) && !is_home_word(w)) || (w.contains('[') && w != "[")
}

/// A word whose value comes from an expansion (not merely a glob).
fn is_expansion(w: &str) -> bool {
    w.contains(['$', '`']) && !is_home_word(w)
}

/// `$HOME/…` and `${HOME}/…` name the home directory, which the rules know.
fn is_home_word(w: &str) -> bool {
    let rest = w
        .strip_prefix("${HOME}")
        .or_else(|| w.strip_prefix("$HOME"))
        .filter(|r| r.is_empty() || r.starts_with('/'));
    rest.is_some_and(|r| !r.contains(['$', '`', '*', '?', '{', '[']))
}

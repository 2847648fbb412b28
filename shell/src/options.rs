//! The one command-line option parser, used by the wrapper table and every file model.
//!
//! Options are parsed with each program's real syntax (GNU `getopt_long` permutation
//! unless `posix`, `--`, combined short flags, `--opt=value`, unambiguous long-option
//! abbreviations). Two kinds of [`Spec`] exist because they fail in opposite
//! directions:
//!
//! * an open spec (a program whose files we report) lists only the options taking a
//!   value; any other option is a flag, so a value we did not know about becomes an
//!   extra reported path rather than hiding the file after it;
//! * a closed spec (a wrapper, whose options end where the wrapped command starts)
//!   lists every option; an unlisted one is reported in [`Parsed::unknown`], because
//!   we could not tell where the wrapped command starts.

/// Command-line syntax of one program. Long option lists are space-separated words.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    /// Short options taking a value, attached (`-tDIR`) or as the next argument.
    pub(crate) values: &'static str,
    /// Short options whose value, if any, is attached (`-i.bak`).
    pub(crate) attached: &'static str,
    /// Short flags. Only closed specs need them.
    pub(crate) flags: &'static str,
    /// Long options taking a value (`--file=F` or `--file F`).
    pub(crate) long_values: &'static str,
    /// Long options without a separate value: the ones a model asks about, the ones
    /// that must not pass for an abbreviation of a value option (`--head` of
    /// `--header`), and in a closed spec all the others.
    pub(crate) long_flags: &'static str,
    /// Options end at the first operand instead of being permuted.
    pub(crate) posix: bool,
    /// `-NUM` (and `--NUM`) is an option (`nice -10`).
    pub(crate) numeric: bool,
    /// Every option is listed: an unlisted one is [`Parsed::unknown`].
    pub(crate) closed: bool,
    /// Every option is listed, but an unlisted one only goes to [`Parsed::unlisted`]
    /// and is read as a flag: a program model, whose arguments all stay visible.
    pub(crate) complete: bool,
    /// Git's rules: `--no-X` negates flag `X` (and `--X` negates a flag `no-X`), and
    /// abbreviations are resolved over the negations too.
    pub(crate) negatable: bool,
}

/// A program without options worth naming.
pub(crate) const NONE: Spec = Spec {
    values: "",
    attached: "",
    flags: "",
    long_values: "",
    long_flags: "",
    posix: false,
    numeric: false,
    closed: false,
    complete: false,
    negatable: false,
};

/// An open spec: short options taking a value, long options taking a value, and long
/// flags worth naming.
pub(crate) const fn options(
    values: &'static str,
    long_values: &'static str,
    long_flags: &'static str,
) -> Spec {
    Spec {
        values,
        long_values,
        long_flags,
        ..NONE
    }
}

/// A complete spec for a program model: every option is listed (`--help` and
/// `--version` are added); short flags, short options taking a value, long flags
/// and long options taking a value. Unlisted options are [`Parsed::unlisted`].
pub(crate) const fn model(
    flags: &'static str,
    values: &'static str,
    long_flags: &'static str,
    long_values: &'static str,
) -> Spec {
    Spec {
        flags,
        complete: true,
        ..options(values, long_values, long_flags)
    }
}

/// A closed spec for a wrapper: every option is listed (`--help` and `--version` are
/// added), and options end at the wrapped command.
pub(crate) const fn wrapper(
    flags: &'static str,
    values: &'static str,
    long_values: &'static str,
    long_flags: &'static str,
) -> Spec {
    Spec {
        flags,
        posix: true,
        closed: true,
        ..options(values, long_values, long_flags)
    }
}

/// One option as parsed: its short letter or canonical long name, and its value.
/// `-NUM` of a numeric spec is short option `#` with the digits as its value.
#[derive(Debug)]
pub(crate) struct Opt<'a> {
    short: Option<char>,
    long: Option<&'a str>,
    /// `--no-X` for flag `X`, or `--X` for flag `no-X` (negatable specs).
    negated: bool,
    value: Option<&'a str>,
}

impl Opt<'_> {
    /// The option as a policy names it: a long option in full (`--no-verify`), a short
    /// one as `-x`, or as its long form when `aliases` maps it (`('n', "no-verify")`);
    /// a value joined with `=` (`--output=f`, `-o=f`).
    pub(crate) fn normalised(&self, aliases: &[(char, &str)]) -> String {
        let alias = self
            .short
            .and_then(|c| aliases.iter().find(|(a, _)| *a == c).map(|(_, l)| *l));
        let mut s = match (self.long.or(alias), self.short) {
            (Some(l), _) if self.negated => match l.strip_prefix("no-") {
                Some(pos) => format!("--{pos}"),
                None => format!("--no-{l}"),
            },
            (Some(l), _) => format!("--{l}"),
            (None, Some('#')) => return format!("-{}", self.value.unwrap_or_default()),
            (None, Some(c)) => format!("-{c}"),
            (None, None) => String::new(),
        };
        if let Some(v) = self.value {
            s.push('=');
            s.push_str(v);
        }
        s
    }
}

/// The options and operands of one invocation.
#[derive(Debug, Default)]
pub(crate) struct Parsed<'a> {
    opts: Vec<Opt<'a>>,
    /// The operands, in order.
    pub(crate) operands: Vec<&'a str>,
    /// Number of operands before `--`, when there is one.
    pub(crate) dashdash: Option<usize>,
    /// Index of the first argument not parsed as an option (`posix` specs).
    pub(crate) next: usize,
    /// The first option a closed spec does not list, as written.
    pub(crate) unknown: Option<String>,
    /// The options a complete spec does not list, as written (a short option as
    /// `-x`, whatever cluster it was in).
    pub(crate) unlisted: Vec<String>,
}

impl<'a> Parsed<'a> {
    fn is(o: &Opt<'_>, short: char, long: &str) -> bool {
        (short != '\0' && o.short == Some(short)) || (!long.is_empty() && o.long == Some(long))
    }

    /// Whether `-short` or `--long` was given (`'\0'` or `""` for a missing form).
    pub(crate) fn has(&self, short: char, long: &str) -> bool {
        self.opts.iter().any(|o| Self::is(o, short, long))
    }

    /// Whether `-short` was given.
    pub(crate) fn has_short(&self, short: char) -> bool {
        self.opts.iter().any(|o| o.short == Some(short))
    }

    /// Whether `--long` (or an abbreviation of it) was given, not negated.
    pub(crate) fn has_long(&self, long: &str) -> bool {
        self.opts.iter().any(|o| o.long == Some(long) && !o.negated)
    }

    /// The options in order, normalised (see [`Opt::normalised`]).
    pub(crate) fn normalised(&self, aliases: &[(char, &str)]) -> Vec<String> {
        self.opts.iter().map(|o| o.normalised(aliases)).collect()
    }

    /// The values of option `-short`/`--long` (`'\0'` for an option without a short
    /// form), in order.
    pub(crate) fn values(
        &self,
        short: char,
        long: &'static str,
    ) -> impl Iterator<Item = &'a str> + '_ {
        self.opts
            .iter()
            .filter(move |o| Self::is(o, short, long))
            .filter_map(|o| o.value)
    }

    /// The operands, in order.
    pub(crate) fn operands(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.operands.iter().copied()
    }
}

/// Whether `word` is one of the space-separated `words`.
pub(crate) fn listed(words: &str, word: &str) -> bool {
    // The option tables are ASCII: split them by bytes, which is several times faster than
    // decoding characters (a tenth of deciding a long wrapper chain). Text with other
    // characters keeps the Unicode split, so the answer never changes.
    if words.is_ascii() {
        words.split_ascii_whitespace().any(|w| w == word)
    } else {
        words.split_whitespace().any(|w| w == word)
    }
}

/// Long option `name` as resolved by [`resolve_long`].
struct Long<'a> {
    /// Canonical name (exact, or the listed option an abbreviation stands for).
    name: &'a str,
    /// The option takes a value.
    takes: bool,
    /// The option is listed.
    known: bool,
    /// A negation of a listed flag (negatable specs).
    negated: bool,
}

/// Long option `name` resolved: exact, a negation (negatable specs), or an
/// unambiguous abbreviation of a listed option or negation.
fn resolve_long<'a>(name: &'a str, spec: &Spec) -> Long<'a> {
    let hit = |name, takes, negated| Long {
        name,
        takes,
        known: true,
        negated,
    };
    if listed(spec.long_values, name) {
        return hit(name, true, false);
    }
    let numeric = spec.numeric && !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit());
    let help = (spec.closed || spec.complete) && matches!(name, "help" | "version");
    if listed(spec.long_flags, name) || numeric || help {
        return hit(name, false, false);
    }
    let flags = || spec.long_flags.split_whitespace();
    if spec.negatable {
        if let Some(f) = name
            .strip_prefix("no-")
            .and_then(|n| flags().find(|f| *f == n))
        {
            return hit(f, false, true);
        }
        if let Some(f) = flags().find(|f| f.strip_prefix("no-") == Some(name)) {
            return hit(f, false, true);
        }
    }
    let miss = Long {
        name,
        takes: false,
        known: false,
        negated: false,
    };
    if name.is_empty() {
        return miss;
    }
    // Every spelling an abbreviation may stand for: (written form, canonical, takes,
    // negated).
    let values = spec
        .long_values
        .split_whitespace()
        .map(|n| (n.to_string(), n, true, false));
    let plain = flags().map(|n| (n.to_string(), n, false, false));
    let negations = flags()
        .filter(|_| spec.negatable)
        .map(|n| match n.strip_prefix("no-") {
            Some(pos) => (pos.to_string(), n, false, true),
            None => (format!("no-{n}"), n, false, true),
        });
    let mut hits = values
        .chain(plain)
        .chain(negations)
        .filter(|(written, ..)| written.starts_with(name));
    let first = hits.next();
    // The same option listed twice (`verify` and `no-verify`) is one hit.
    let other = hits.find(|h| Some(&h.0) != first.as_ref().map(|f| &f.0));
    match (first, other) {
        (Some((_, n, takes, negated)), None) => hit(n, takes, negated),
        _ => miss,
    }
}

/// Parses `args` (the arguments after the program name) with `spec`.
pub(crate) fn parse<'a>(args: &'a [String], spec: &Spec) -> Parsed<'a> {
    parse_words(args, &[], spec)
}

/// Like [`parse`], where `dynamic[i]` tells that `args[i]` is not known before the
/// command runs (`$X`): such a word is never taken for an option.
pub(crate) fn parse_words<'a>(args: &'a [String], dynamic: &[bool], spec: &Spec) -> Parsed<'a> {
    let mut p = Parsed::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if p.unknown.is_some() {
            break;
        }
        let option = a
            .strip_prefix('-')
            .filter(|b| !b.is_empty() && !dynamic.get(i).copied().unwrap_or(false));
        if a == "--" && option.is_some() {
            p.dashdash = Some(p.operands.len());
            i += 1;
            break;
        }
        let Some(body) = option else {
            if spec.posix {
                break;
            }
            p.operands.push(a);
            i += 1;
            continue;
        };
        i += 1;
        // The next argument, consumed as an option's value.
        let take = |i: &mut usize| {
            *i += 1;
            args.get(*i - 1).map(String::as_str)
        };
        if let Some(long) = body.strip_prefix('-') {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let l = resolve_long(name, spec);
            // An unlisted `--opt=value` is one argument: it cannot hide where a
            // wrapped command starts.
            if spec.closed && !l.known && inline.is_none() {
                p.unknown = Some(a.clone());
            }
            if spec.complete && !l.known {
                p.unlisted.push(a.clone());
            }
            let value = match inline {
                Some(v) => Some(v),
                None if l.takes => take(&mut i),
                None => None,
            };
            p.opts.push(Opt {
                short: None,
                long: Some(l.name),
                negated: l.negated,
                value,
            });
            continue;
        }
        if spec.numeric && body.bytes().all(|b| b.is_ascii_digit()) {
            p.opts.push(Opt {
                short: Some('#'),
                long: None,
                negated: false,
                value: Some(body),
            });
            continue;
        }
        for (k, ch) in body.char_indices() {
            let rest = body.get(k + ch.len_utf8()..).unwrap_or_default();
            let (value, last) = if spec.values.contains(ch) {
                let value = if rest.is_empty() {
                    take(&mut i)
                } else {
                    Some(rest)
                };
                (value, true)
            } else if spec.attached.contains(ch) {
                ((!rest.is_empty()).then_some(rest), true)
            } else {
                if spec.closed && !spec.flags.contains(ch) {
                    p.unknown = Some(format!("-{ch}"));
                    break;
                }
                if spec.complete && !spec.flags.contains(ch) {
                    p.unlisted.push(format!("-{ch}"));
                }
                (None, false)
            };
            p.opts.push(Opt {
                short: Some(ch),
                long: None,
                negated: false,
                value,
            });
            if last {
                break;
            }
        }
    }
    p.next = i.min(args.len());
    if let Some(rest) = args.get(p.next..) {
        p.operands.extend(rest.iter().map(String::as_str));
    }
    p
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::test_support::words;

    const TIMEOUT: Spec = wrapper("vfp", "sk", "signal kill-after", "foreground");

    #[test]
    fn closed_specs_resolve_unambiguous_abbreviations() {
        // GNU getopt_long takes `--kill` for `--kill-after`, so `3` is its value and
        // the wrapped command starts after the duration.
        let args = words("--kill 3 10 rm f");
        let p = parse(&args, &TIMEOUT);
        assert_eq!(p.unknown, None);
        assert_eq!(p.next, 2);
        assert_eq!(p.values('k', "kill-after").collect::<Vec<_>>(), ["3"]);
    }

    #[test]
    fn closed_specs_report_unlisted_and_ambiguous_options() {
        let spec = wrapper("", "", "signal silent", "");
        for line in ["--frobnicate rm", "--si rm", "-Z rm"] {
            let args = words(line);
            assert!(parse(&args, &spec).unknown.is_some(), "{line}");
        }
        // An unlisted `--opt=value` is one argument: where the command starts is known.
        let args = words("--frob=1 rm");
        let p = parse(&args, &spec);
        assert_eq!((p.unknown, p.next), (None, 1));
        let args = words("--help");
        assert_eq!(parse(&args, &spec).unknown, None);
    }

    #[test]
    fn open_specs_take_unlisted_options_for_flags() {
        let args = words("-Z --frob f");
        let p = parse(&args, &options("", "", ""));
        assert_eq!(p.unknown, None);
        assert_eq!(p.operands, ["f"]);
    }

    #[test]
    fn dynamic_words_are_never_options() {
        let args = words("-u $U rm");
        let p = parse_words(&args, &[false, true, false], &wrapper("", "u", "", ""));
        assert_eq!(p.next, 2, "a dynamic value still belongs to its option");
        let args = words("-$X rm");
        let p = parse_words(&args, &[true, false], &wrapper("", "", "", ""));
        assert_eq!(p.next, 0);
    }

    #[test]
    fn numeric_options() {
        let nice = Spec {
            numeric: true,
            ..wrapper("", "n", "adjustment", "")
        };
        for line in ["-10 rm", "--10 rm"] {
            let args = words(line);
            let p = parse(&args, &nice);
            assert_eq!((p.unknown, p.next), (None, 1), "{line}");
        }
    }
}

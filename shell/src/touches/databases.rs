//! Database clients: the SQL or commands they run (`psql -c`, `mysql -e`,
//! `sqlite3 DB SQL`, `redis-cli CMD`), the servers they connect to, and the files
//! they read and write. A client reading its statements from standard input runs
//! statements that are not visible.

use super::effects::Out;
use crate::options::{model, options, parse, Spec};

/// Meta-commands of the clients that reach the shell or files.
fn escapes(name: &str, sql: &str, out: &mut Out) {
    let shell = match name {
        "psql" => [
            "\\!", "\\o", "\\w", "\\copy", "\\i", "\\ir", "\\g ", "\\gx ",
        ]
        .iter()
        .any(|m| sql.contains(m)),
        "mysql" | "mariadb" => sql.contains("\\!") || sql.to_ascii_lowercase().contains("system "),
        "sqlite3" => [
            ".shell", ".system", ".once", ".output", ".import", ".load", ".read",
        ]
        .iter()
        .any(|m| sql.contains(m)),
        _ => false,
    };
    if shell {
        out.opaque(format!("'{name}' meta-commands reach the shell or files"));
    }
    let lower = sql.to_ascii_lowercase();
    if name == "psql" && lower.contains("copy") && lower.contains("program") {
        out.opaque("'COPY … PROGRAM' runs a command on the server");
    }
}

const PSQL: Spec = Spec {
    negatable: false,
    ..model(
        "aAbeEHlnqsStxXwW01z",
        "cdfhpUoLvPFRTC",
        "echo-all no-align echo-errors echo-queries echo-hidden html list no-readline \
            quiet single-step single-line tuples-only expanded no-psqlrc no-password \
            password single-transaction field-separator-zero record-separator-zero csv",
        "command dbname file host port username output log-file set variable pset \
            field-separator record-separator table-attr",
    )
};

/// psql: `-c SQL` (code), `-f FILE` (run), the database (a name or URI) and `-h`.
pub(super) fn psql(args: &[String], out: &mut Out) {
    let p = parse(args, &PSQL);
    out.parsed(
        &p,
        &[
            ('c', "command"),
            ('d', "dbname"),
            ('f', "file"),
            ('h', "host"),
            ('p', "port"),
            ('U', "username"),
            ('o', "output"),
            ('L', "log-file"),
            ('v', "set"),
            ('l', "list"),
            ('t', "tuples-only"),
            ('A', "no-align"),
            ('q', "quiet"),
            ('X', "no-psqlrc"),
            ('1', "single-transaction"),
        ],
    );
    out.operands(p.operands());
    let sql: Vec<&str> = p.values('c', "command").collect();
    sql.iter().for_each(|s| {
        out.code(s);
        escapes("psql", s, out);
    });
    let files: Vec<&str> = p.values('f', "file").collect();
    files.iter().for_each(|f| out.runs_file(f));
    out.writes(p.values('o', "output").chain(p.values('L', "log-file")));
    p.values('h', "host").for_each(|h| out.net(h));
    for d in p.values('d', "dbname").chain(p.operands().take(1)) {
        if d.contains("://") || d.contains("host=") {
            out.net(d);
        }
    }
    let lists = p.has('l', "list");
    if sql.is_empty() && (files.is_empty() || files.contains(&"-")) && !lists {
        out.opaque("'psql' reads the statements it runs from standard input");
    }
}

/// mysql, mariadb: `-e SQL`, `--defaults-file`, `-h HOST`, `--tee FILE`.
pub(super) fn mysql(name: &str, args: &[String], out: &mut Out) {
    let spec = Spec {
        attached: "p",
        ..options(
            "ehPuDSO",
            "execute host port user database socket defaults-file defaults-extra-file \
                tee pager init-command ssl-ca ssl-cert ssl-key default-character-set \
                login-path protocol",
            "batch skip-column-names silent table verbose force no-auto-rehash",
        )
    };
    let p = parse(args, &spec);
    out.options(p.normalised(&[
        ('e', "execute"),
        ('h', "host"),
        ('P', "port"),
        ('u', "user"),
        ('D', "database"),
    ]));
    out.operands(p.operands());
    let sql: Vec<&str> = p.values('e', "execute").collect();
    sql.iter().for_each(|s| {
        out.code(s);
        escapes(name, s, out);
    });
    for s in p.values('\0', "init-command") {
        out.code(s);
    }
    p.values('h', "host").for_each(|h| out.net(h));
    out.reads(
        p.values('\0', "defaults-file")
            .chain(p.values('\0', "defaults-extra-file")),
    );
    out.writes(p.values('\0', "tee"));
    if p.values('\0', "pager").next().is_some() {
        out.opaque(format!("'{name} --pager' runs a program"));
    }
    if sql.is_empty() {
        out.opaque(format!(
            "'{name}' reads the statements it runs from standard input"
        ));
    }
}

/// sqlite3 `[OPTS] DB [SQL…]`: the database file is written (statements may change
/// it), the SQL is code; `-cmd`/`-init` run more.
pub(super) fn sqlite3(args: &[String], out: &mut Out) {
    const VALUES: [&str; 8] = [
        "-cmd",
        "-init",
        "-separator",
        "-newline",
        "-nullvalue",
        "-vfs",
        "-pagecache",
        "-lookaside",
    ];
    let mut ops = Vec::new();
    let mut i = 0;
    let mut readonly = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if a.starts_with('-') && a.len() > 1 {
            let name = if a.starts_with("--") {
                &a[1..]
            } else {
                a.as_str()
            };
            if VALUES.contains(&name) {
                let v = args.get(i).map_or("", String::as_str);
                out.options([format!("{name}={v}")]);
                match name {
                    "-cmd" => {
                        out.code(v);
                        escapes("sqlite3", v, out);
                    }
                    "-init" => out.runs_file(v),
                    _ => {}
                }
                i += 1;
            } else {
                readonly |= matches!(name, "-readonly" | "-safe");
                out.options([name.to_string()]);
            }
        } else {
            ops.push(a.as_str());
        }
    }
    out.operands(ops.iter().copied());
    let mut it = ops.into_iter();
    match it.next() {
        Some(db) if readonly => out.read(db),
        Some(db) => {
            out.read(db);
            out.write(db);
        }
        None => {}
    }
    let sql: Vec<&str> = it.collect();
    if sql.is_empty() {
        out.opaque("'sqlite3' reads the statements it runs from standard input");
    }
    for s in sql {
        out.code(s);
        escapes("sqlite3", s, out);
    }
}

/// redis-cli: the command words are operands (`FLUSHALL`), `-h`/`-u` the server;
/// `--eval FILE` runs a Lua script; without a command it reads standard input.
pub(super) fn redis_cli(args: &[String], out: &mut Out) {
    let spec = Spec {
        posix: true,
        ..options(
            "hpasunrid",
            "user pass askpass eval rdb functions-rdb pattern count quoted-pattern \
                cacert cacertdir cert key sni tls-ciphers tls-ciphersuites",
            "",
        )
    };
    let p = parse(args, &spec);
    out.options(p.normalised(&[
        ('h', "host"),
        ('p', "port"),
        ('a', "pass"),
        ('u', "uri"),
        ('n', "db"),
    ]));
    out.operands(p.operands());
    p.values('h', "")
        .chain(p.values('u', ""))
        .for_each(|h| out.net(h));
    p.values('\0', "eval").for_each(|f| out.runs_file(f));
    out.writes(p.values('\0', "rdb").chain(p.values('\0', "functions-rdb")));
    let cmd: Vec<&str> = p.operands().collect();
    if let Some(first) = cmd.first() {
        if first.eq_ignore_ascii_case("eval") {
            out.code(cmd.get(1).copied().unwrap_or_default());
        }
    } else if p.values('\0', "eval").next().is_none() && !p.has_long("scan") {
        out.opaque("'redis-cli' reads the commands it runs from standard input");
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(databases);
}

//! Programs that read the files named on their command line: pagers, filters,
//! comparers, checksums, searches and JSON/YAML processors. Reads are reported so
//! that `deny path read "secrets/**"` holds for `cat secrets/x` as for a direct read.

use super::effects::Out;
use crate::options::{listed, model, parse, Spec};

/// A program whose operands are all files read, after `skip` operands that are not
/// files (a pattern, a program text).
struct Reader {
    names: &'static str,
    spec: Spec,
    /// Short options a policy knows by their long name.
    aliases: &'static [(char, &'static str)],
    /// Options whose values are files read.
    read_values: &'static [(char, &'static str)],
}

const LINES: &[(char, &str)] = &[('n', "lines"), ('c', "bytes"), ('#', "lines")];

const READERS: &[Reader] = &[
    Reader {
        names: "cat",
        spec: model(
            "AbeEnstTuv",
            "",
            "show-all number-nonblank number squeeze-blank show-tabs show-nonprinting \
                show-ends",
            "",
        ),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "tac",
        spec: model("br", "s", "before regex", "separator"),
        aliases: &[('s', "separator"), ('b', "before"), ('r', "regex")],
        read_values: &[],
    },
    Reader {
        names: "head",
        spec: Spec {
            numeric: true,
            ..model(
                "qvz",
                "cn",
                "quiet silent verbose zero-terminated",
                "bytes lines",
            )
        },
        aliases: LINES,
        read_values: &[],
    },
    Reader {
        names: "tail",
        spec: Spec {
            numeric: true,
            ..model(
                "fFqvzr",
                "cns",
                "follow retry quiet silent verbose zero-terminated",
                "bytes lines pid sleep-interval max-unchanged-stats",
            )
        },
        aliases: LINES,
        read_values: &[],
    },
    Reader {
        names: "more",
        spec: Spec {
            numeric: true,
            ..model(
                "dflcpsu",
                "n",
                "silent logout no-pause print-over clean-print squeeze \
                plain",
                "lines",
            )
        },
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "nl",
        spec: model(
            "p",
            "bdfhilnsvw",
            "no-renumber",
            "body-numbering section-delimiter footer-numbering header-numbering \
                line-increment join-blank-lines number-format number-separator \
                starting-line-number number-width",
        ),
        aliases: &[
            ('b', "body-numbering"),
            ('n', "number-format"),
            ('s', "number-separator"),
            ('w', "number-width"),
        ],
        read_values: &[],
    },
    Reader {
        names: "wc",
        spec: model(
            "cmlLw",
            "",
            "bytes chars lines max-line-length words",
            "total files0-from",
        ),
        aliases: &[
            ('l', "lines"),
            ('c', "bytes"),
            ('m', "chars"),
            ('w', "words"),
        ],
        read_values: &[('\0', "files0-from")],
    },
    Reader {
        names: "cut",
        spec: model(
            "nsz",
            "bcdf",
            "complement only-delimited zero-terminated",
            "bytes characters delimiter fields output-delimiter",
        ),
        aliases: &[
            ('d', "delimiter"),
            ('f', "fields"),
            ('b', "bytes"),
            ('c', "characters"),
            ('s', "only-delimited"),
        ],
        read_values: &[],
    },
    Reader {
        names: "paste",
        spec: model("sz", "d", "serial zero-terminated", "delimiters"),
        aliases: &[('d', "delimiters"), ('s', "serial")],
        read_values: &[],
    },
    Reader {
        names: "join",
        spec: model(
            "iz",
            "aejotv12",
            "ignore-case check-order nocheck-order header zero-terminated",
            "",
        ),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "comm",
        spec: model(
            "123z",
            "",
            "check-order nocheck-order total zero-terminated",
            "output-delimiter",
        ),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "diff",
        spec: model(
            "abBdeEfilnNpPqrstTuwyZ",
            "CDFILSUWxX",
            "normal brief report-identical-files context unified ed rcs side-by-side \
                left-column suppress-common-lines show-c-function expand-tabs initial-tab \
                suppress-blank-empty paginate new-file unidirectional-new-file text \
                recursive no-dereference strip-trailing-cr ignore-case \
                ignore-file-name-case no-ignore-file-name-case ignore-tab-expansion \
                ignore-trailing-space ignore-space-change ignore-all-space \
                ignore-blank-lines minimal speed-large-files color",
            "show-function-line label tabsize ignore-matching-lines horizon-lines \
                palette from-file to-file exclude exclude-from starting-file width \
                line-format old-line-format new-line-format unchanged-line-format \
                old-group-format new-group-format changed-group-format \
                unchanged-group-format ifdef",
        ),
        aliases: &[
            ('u', "unified"),
            ('r', "recursive"),
            ('q', "brief"),
            ('N', "new-file"),
            ('a', "text"),
            ('w', "ignore-all-space"),
            ('B', "ignore-blank-lines"),
            ('i', "ignore-case"),
            ('x', "exclude"),
            ('X', "exclude-from"),
            ('U', "unified"),
        ],
        read_values: &[
            ('X', "exclude-from"),
            ('\0', "from-file"),
            ('\0', "to-file"),
        ],
    },
    Reader {
        names: "cmp",
        spec: model(
            "bls",
            "in",
            "print-bytes verbose quiet silent",
            "ignore-initial bytes",
        ),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "od",
        spec: Spec {
            attached: "w",
            ..model(
                "bcdfilosxv",
                "AjNSt",
                "output-duplicates traditional width strings",
                "address-radix skip-bytes read-bytes format endian",
            )
        },
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "hexdump hd",
        spec: model(
            "bcCdoxv",
            "efns",
            "one-byte-octal one-byte-char canonical \
            two-bytes-decimal two-bytes-octal two-bytes-hex no-squeezing",
            "format \
            format-file length skip color",
        ),
        aliases: &[],
        read_values: &[('F', "format-file")],
    },
    Reader {
        names: "strings",
        spec: Spec {
            numeric: true,
            ..model(
                "adfwDUh",
                "ntTeso",
                "all data print-file-name include-all-whitespace",
                "bytes radix encoding target output-separator unicode",
            )
        },
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "base64 base32 basenc",
        spec: model(
            "di",
            "w",
            "decode ignore-garbage base64 base64url base32 base32hex base16 base2msbf \
                base2lsbf z85",
            "wrap",
        ),
        aliases: &[('d', "decode"), ('i', "ignore-garbage"), ('w', "wrap")],
        read_values: &[],
    },
    Reader {
        names: "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum \
            shasum",
        spec: model(
            "bctzwrs0",
            "la",
            "binary check tag text zero ignore-missing quiet status strict warn base64 \
                raw untagged debug sysv",
            "length algorithm",
        ),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "file",
        spec: model(
            "bcdEhiklLNnprsSvzZ0",
            "eFfmP",
            "brief checking-printout exclude-quiet extension mime mime-type \
                mime-encoding keep-going list dereference no-dereference no-buffer no-pad \
                print0 preserve-date raw special-files uncompress uncompress-noraw apple",
            "exclude files-from separator magic-file parameter",
        ),
        aliases: &[],
        read_values: &[('f', "files-from"), ('m', "magic-file")],
    },
    Reader {
        names: "stat",
        spec: model(
            "Lft",
            "c",
            "dereference file-system terse",
            "format printf cached",
        ),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "less",
        spec: Spec {
            attached: "#",
            ..model(
                "aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~",
                "bhjkoOpPtTxyz",
                "quit-at-eof QUIT-AT-EOF quit-if-one-screen raw-control-chars \
                    RAW-CONTROL-CHARS chop-long-lines no-init ignore-case IGNORE-CASE \
                    LINE-NUMBERS line-numbers status-column squeeze-blank-lines \
                    mouse follow-name incsearch use-color no-histdups",
                "buffers max-back-scroll max-forw-scroll jump-target log-file \
                    LOG-FILE pattern prompt tag tag-file tabs window shift \
                    color header",
            )
        },
        aliases: &[],
        read_values: &[],
    },
];

/// Filters that read the files named, with their options.
const FILTERS: &[Reader] = &[
    Reader {
        names: "fold",
        spec: model("bs", "w", "bytes spaces", "width"),
        aliases: &[('w', "width")],
        read_values: &[],
    },
    Reader {
        names: "fmt",
        spec: Spec {
            numeric: true,
            ..model("cstu", "pwg", "crown-margin split-only tagged-paragraph uniform-spacing", "prefix width goal")
        },
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "expand unexpand",
        spec: model("ia", "t", "initial all first-only", "tabs"),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "rev tsort",
        spec: model("", "", "", ""),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "shuf",
        spec: model("erz", "inor", "echo repeat zero-terminated", "input-range head-count output random-source"),
        aliases: &[],
        read_values: &[('\0', "random-source")],
    },
    Reader {
        names: "column",
        spec: model("tnexjJLRr", "csoNdHiW", "table fillrows keep-empty-lines json", "separator output-separator table-columns table-name output-width"),
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "pr",
        spec: Spec {
            numeric: true,
            ..model("adFfJmrt", "eiNnoswWSlh", "across double-space form-feed join-lines merge no-file-warnings omit-header", "expand-tabs output-tabs first-line-number number-lines indent separator sep-string width page-width length header columns pages")
        },
        aliases: &[],
        read_values: &[],
    },
    Reader {
        names: "iconv",
        spec: model("cls", "ftc", "list silent", "from-code to-code output"),
        aliases: &[('f', "from-code"), ('t', "to-code")],
        read_values: &[],
    },
];

/// A reader of [`READERS`] or [`FILTERS`]; `false` when `name` is none.
pub(super) fn reader(name: &str, args: &[String], out: &mut Out) -> bool {
    let Some(r) = READERS
        .iter()
        .chain(FILTERS)
        .find(|r| listed(r.names, name))
    else {
        return false;
    };
    // `less +F f`, `more +/x f`: a command for the pager, not a file; `!` runs a
    // shell command and `|` pipes to one.
    if matches!(name, "less" | "more")
        && args
            .iter()
            .any(|a| a.starts_with('+') && a.contains(['!', '|']))
    {
        out.opaque(format!("'{name}' runs a shell command given with '+'"));
    }
    let args: Vec<String> = args
        .iter()
        .filter(|a| !(matches!(name, "less" | "more") && a.starts_with('+')))
        .cloned()
        .collect();
    let p = parse(&args, &r.spec);
    out.parsed(&p, r.aliases);
    for (s, l) in r.read_values {
        out.reads(p.values(*s, l));
    }
    out.operands(p.operands());
    match name {
        // `uniq [INPUT [OUTPUT]]`, like `cmp FILE1 FILE2 [SKIP1 [SKIP2]]`.
        "cmp" => out.reads(p.operands().take(2)),
        "less" => {
            out.reads(p.operands());
            out.writes(p.values('o', "log-file").chain(p.values('O', "LOG-FILE")));
        }
        "shuf" if p.has('e', "echo") => out.writes(p.values('o', "output")),
        "shuf" | "iconv" => {
            out.reads(p.operands());
            out.writes(p.values('o', "output"));
        }
        _ => out.reads(p.operands()),
    }
    true
}

/// `date -f FILE` reads dates from FILE (and prints the lines it cannot read).
pub(super) fn date(args: &[String], out: &mut Out) {
    let spec = model(
        "uRIj",
        "dfrsI",
        "utc universal rfc-email debug",
        "date file reference set iso-8601 rfc-3339 resolution",
    );
    let p = parse(args, &spec);
    out.parsed(
        &p,
        &[
            ('d', "date"),
            ('f', "file"),
            ('r', "reference"),
            ('u', "utc"),
        ],
    );
    out.operands(p.operands());
    out.reads(p.values('f', "file").chain(p.values('r', "reference")));
}

/// `dos2unix` and `unix2dos` convert the files in place, or `-n IN OUT`.
pub(super) fn dos2unix(args: &[String], out: &mut Out) {
    let p = parse(args, &crate::options::options("", "", "newfile"));
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    if p.has('n', "newfile") {
        let ops: Vec<&str> = p.operands().collect();
        for pair in ops.chunks(2) {
            if let [from, to] = pair {
                out.read(from);
                out.write(to);
            }
        }
    } else {
        out.reads(p.operands());
        out.writes(p.operands());
    }
}

/// `uniq [INPUT [OUTPUT]]`.
pub(super) fn uniq(args: &[String], out: &mut Out) {
    let spec = model(
        "cdDiuz",
        "fsw",
        "count repeated all-repeated group ignore-case unique zero-terminated",
        "skip-fields skip-chars check-chars",
    );
    let p = parse(args, &spec);
    out.parsed(&p, &[]);
    out.operands(p.operands());
    let mut ops = p.operands();
    out.reads(ops.next());
    out.writes(ops.next());
}

/// `xxd [OPTS] [INFILE [OUTFILE]]`: xxd reads its options by hand (`-c8`, `-len 16`,
/// `-ps`).
pub(super) fn xxd(args: &[String], out: &mut Out) {
    const VALUES: [&str; 12] = [
        "-c",
        "-cols",
        "-g",
        "-groupsize",
        "-l",
        "-len",
        "-o",
        "-s",
        "-seek",
        "-n",
        "-name",
        "-R",
    ];
    const FLAGS: [&str; 19] = [
        "-a",
        "-autoskip",
        "-b",
        "-bits",
        "-C",
        "-capitalize",
        "-e",
        "-E",
        "-EBCDIC",
        "-h",
        "-help",
        "-i",
        "-include",
        "-p",
        "-ps",
        "-postscript",
        "-plain",
        "-r",
        "-u",
    ];
    out.modelled();
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" {
            files.extend(args.iter().skip(i).map(String::as_str));
            break;
        }
        if !a.starts_with('-') || a == "-" {
            files.push(a.as_str());
        } else if VALUES.contains(&a.as_str()) {
            let v = args.get(i).map_or("", String::as_str);
            out.options([format!("{a}={v}")]);
            i += 1;
        } else if FLAGS.contains(&a.as_str())
            || matches!(a.as_str(), "-v" | "-version" | "-d")
            // `-c8`: a short value option with its value attached.
            || VALUES.iter().any(|v| v.len() == 2 && a.starts_with(v))
        {
            out.options([a.clone()]);
        } else {
            out.unknown_options([a.clone()]);
        }
    }
    out.operands(files.iter().copied());
    let mut it = files.into_iter();
    out.reads(it.next());
    out.writes(it.next());
}

const GREP: Spec = Spec {
    numeric: true,
    ..model(
        "EFGPiyvwxcLloqsbHhnTZzUaIrRV",
        "efmABCdD",
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case \
            no-ignore-case invert-match word-regexp line-regexp count color colour \
            files-without-match files-with-matches only-matching quiet silent no-messages \
            byte-offset with-filename no-filename null-data null line-number \
            line-buffered initial-tab unix-byte-offsets binary text recursive \
            dereference-recursive no-group-separator",
        "regexp file max-count label after-context before-context context \
            binary-files devices directories exclude exclude-from include exclude-dir \
            group-separator",
    )
};

/// grep: the pattern is the first operand unless `-e`/`-f` gave it; `-f FILE`
/// and the other operands are read; `-r` without a file searches `.`.
pub(super) fn grep(args: &[String], out: &mut Out) {
    let p = parse(args, &GREP);
    out.parsed(
        &p,
        &[
            ('#', "context"),
            ('e', "regexp"),
            ('f', "file"),
            ('i', "ignore-case"),
            ('v', "invert-match"),
            ('w', "word-regexp"),
            ('x', "line-regexp"),
            ('c', "count"),
            ('l', "files-with-matches"),
            ('L', "files-without-match"),
            ('o', "only-matching"),
            ('q', "quiet"),
            ('s', "no-messages"),
            ('n', "line-number"),
            ('H', "with-filename"),
            ('h', "no-filename"),
            ('r', "recursive"),
            ('R', "dereference-recursive"),
            ('E', "extended-regexp"),
            ('F', "fixed-strings"),
            ('P', "perl-regexp"),
            ('A', "after-context"),
            ('B', "before-context"),
            ('C', "context"),
            ('m', "max-count"),
            ('a', "text"),
        ],
    );
    out.operands(p.operands());
    out.reads(p.values('f', "file"));
    out.reads(p.values('\0', "exclude-from"));
    let skip = usize::from(!p.has('e', "regexp") && !p.has('f', "file"));
    let files: Vec<&str> = p.operands().skip(skip).collect();
    let recursive = p.has('r', "recursive") || p.has('R', "dereference-recursive");
    if files.is_empty() && recursive {
        out.read(".");
    }
    out.reads(files);
}

/// ripgrep and the silver searcher: the pattern first unless given by an option,
/// then paths; `rg --pre CMD` runs CMD on every file.
pub(super) fn rg(name: &str, args: &[String], out: &mut Out) {
    let spec = if name == "rg" {
        crate::options::options(
            "efgtTmABCMjdErVc",
            "regexp file glob iglob type type-not max-count after-context before-context \
                context max-columns threads max-depth pre pre-glob type-add type-clear \
                ignore-file replace sort sortr engine path-separator color colors \
                context-separator field-context-separator field-match-separator \
                dfa-size-limit regex-size-limit max-filesize encoding hostname-bin \
                hyperlink-format",
            "files type-list",
        )
    } else {
        crate::options::options(
            "ABCGgmpf",
            "after before context file-search-regex ignore ignore-dir depth max-count \
                path-to-ignore pager workers color-line-number color-match color-path",
            "",
        )
    };
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    if p.values('\0', "pre").next().is_some() {
        out.opaque("'rg --pre' runs a program on every file searched");
    }
    out.reads(p.values('f', "file"));
    out.reads(p.values('\0', "ignore-file"));
    out.reads(p.values('p', "path-to-ignore"));
    let given = p.has('e', "regexp") || p.has('f', "file") || p.has_long("files");
    let given = given || p.has_long("type-list");
    let paths: Vec<&str> = p.operands().skip(usize::from(!given)).collect();
    // `-g GLOB` narrows the search to the files the glob names, below each path: those
    // are read (a `!GLOB` only excludes).
    let globs: Vec<&str> = p
        .values('g', "glob")
        .chain(p.values('\0', "iglob"))
        .filter(|g| !g.starts_with('!'))
        .collect();
    for g in &globs {
        if paths.is_empty() || g.starts_with('/') {
            out.read(g);
        }
        for d in &paths {
            out.read(&format!("{}/{g}", d.trim_end_matches('/')));
        }
    }
    out.reads(paths);
}

/// jq: the filter is the first operand unless `-f`/`--from-file`; `--arg N V`,
/// `--argjson N V` take two values, `--slurpfile N F` and `--rawfile N F` read F;
/// after `--args`/`--jsonargs` the operands are values, not files.
pub(super) fn jq(args: &[String], out: &mut Out) {
    out.modelled();
    let (mut i, mut filter, mut values_only) = (0, false, false);
    let mut files = Vec::new();
    while let Some(a) = args.get(i) {
        i += 1;
        let two = |n: usize| args.get(i..i + n).map(|v| v.join("="));
        match a.as_str() {
            "--arg" | "--argjson" => {
                out.options([format!("{a}={}", two(2).unwrap_or_default())]);
                i += 2;
            }
            "--slurpfile" | "--rawfile" => {
                out.options([format!("{a}={}", two(2).unwrap_or_default())]);
                out.reads(args.get(i + 1).map(String::as_str));
                i += 2;
            }
            "-f" | "--from-file" => {
                out.options([format!("--from-file={}", two(1).unwrap_or_default())]);
                out.reads(args.get(i).map(String::as_str));
                filter = true;
                i += 1;
            }
            "-L" | "--indent" => {
                out.options([format!("{a}={}", two(1).unwrap_or_default())]);
                i += 1;
            }
            "--args" | "--jsonargs" => {
                out.options([a.clone()]);
                values_only = true;
            }
            "--" => {
                files.extend(args.iter().skip(i).map(String::as_str));
                break;
            }
            o if o.starts_with("--") => {
                const LONG: &str = "null-input raw-input slurp compact-output raw-output \
                    join-output raw-output0 ascii-output sort-keys color-output \
                    monochrome-output tab exit-status seq stream stream-errors unbuffered \
                    help version build-configuration";
                if !listed(LONG, o.trim_start_matches('-')) {
                    out.unknown_options([o.to_string()]);
                }
                out.options([o.to_string()]);
            }
            o if o.starts_with('-') && o.len() > 1 => {
                for c in o.chars().skip(1) {
                    if !"nrjasCMSecVhte0".contains(c) {
                        out.unknown_options([format!("-{c}")]);
                    }
                    out.options([format!("-{c}")]);
                }
            }
            _ => files.push(a.as_str()),
        }
    }
    out.operands(files.iter().copied());
    let mut files = files.into_iter();
    if !filter {
        if let Some(f) = files.next() {
            out.code(f);
        }
    }
    if !values_only {
        out.reads(files);
    }
}

/// yq (mikefarah's): `yq [eval|eval-all] EXPR FILE…`, `-i` edits the files in place.
pub(super) fn yq(args: &[String], out: &mut Out) {
    let spec = model(
        "iPCMNerjv0",
        "opIsf",
        "inplace prettyPrint colors no-colors no-doc exit-status null-input unwrapScalar \
            verbose nul-output header-preprocess no-header-preprocess",
        "output-format input-format indent split-exp front-matter from-file expression \
            xml-attribute-prefix xml-content-name lua-prefix csv-separator tsv-separator",
    );
    let p = parse(args, &spec);
    out.parsed(&p, &[]);
    let mut ops: Vec<&str> = p.operands().collect();
    if let Some(sub @ ("eval" | "e" | "eval-all" | "ea")) = ops.first().copied() {
        out.subcommand(sub);
        ops.remove(0);
    }
    out.operands(ops.iter().copied());
    let expr = p.values('\0', "expression").next().is_some() || p.has_long("from-file");
    let files = ops.get(usize::from(!expr)..).unwrap_or_default();
    if !expr {
        ops.first().iter().for_each(|e| out.code(e));
    }
    out.reads(p.values('\0', "from-file"));
    out.reads(files.iter().copied());
    if p.has('i', "inplace") {
        out.writes(files.iter().copied());
    }
}

/// gpg: the files named are read, `-o`/`--output` written; key servers are network.
pub(super) fn gpg(args: &[String], out: &mut Out) {
    let spec = crate::options::options(
        "oruRfN",
        "output recipient local-user default-key homedir keyring secret-keyring \
            trustdb-name keyserver keyserver-options passphrase passphrase-file \
            passphrase-fd command-fd status-fd logger-fd attribute-fd cipher-algo \
            digest-algo compress-algo s2k-cipher-algo s2k-digest-algo trust-model \
            pinentry-mode set-filename comment hidden-recipient encrypt-to \
            default-recipient trusted-key options log-file status-file command-file",
        "",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    out.writes(p.values('o', "output"));
    out.writes(
        p.values('\0', "log-file")
            .chain(p.values('\0', "status-file")),
    );
    out.reads(
        p.values('\0', "passphrase-file")
            .chain(p.values('\0', "options")),
    );
    out.reads(p.values('\0', "command-file"));
    p.values('\0', "keyserver").for_each(|k| out.net(k));
    let keys = [
        "recv-keys",
        "receive-keys",
        "send-keys",
        "search-keys",
        "refresh-keys",
    ];
    if keys.iter().any(|k| p.has_long(k)) {
        if p.values('\0', "keyserver").next().is_none() {
            out.net("keyserver");
        }
    } else {
        out.reads(p.operands());
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(readers);
}

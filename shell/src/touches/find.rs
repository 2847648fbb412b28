//! `find`'s own reads and writes; the commands it runs (`-exec`) come from the
//! wrapper table.

use super::effects::Out;

/// Options before the starting points (`-H`, `-L`, `-P`, `-D DEBUG`, `-O3`).
fn leading_options(args: &[String]) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            o if o.starts_with("-O") && o.len() > 2 => i += 1,
            _ => break,
        }
    }
    i
}

/// The starting points of find command `argv` (its program name first): `.` when
/// none is given.
pub(super) fn starting_points(argv: &[String]) -> Vec<String> {
    let args = argv.get(1..).unwrap_or_default();
    let from = leading_options(args);
    let points: Vec<String> = args
        .iter()
        .skip(from)
        .take_while(|a| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!" | ")" | ","))
        .cloned()
        .collect();
    if points.is_empty() {
        vec![".".to_string()]
    } else {
        points
    }
}

/// Primaries taking one argument (two for `-fprintf` and `-newerXY`'s reference).
const WITH_VALUE: &[&str] = &[
    "-amin",
    "-anewer",
    "-atime",
    "-cmin",
    "-cnewer",
    "-ctime",
    "-fstype",
    "-gid",
    "-group",
    "-ilname",
    "-iname",
    "-inum",
    "-ipath",
    "-iregex",
    "-iwholename",
    "-links",
    "-lname",
    "-maxdepth",
    "-mindepth",
    "-mmin",
    "-mtime",
    "-name",
    "-newer",
    "-path",
    "-perm",
    "-regex",
    "-regextype",
    "-samefile",
    "-size",
    "-type",
    "-uid",
    "-used",
    "-user",
    "-wholename",
    "-xtype",
    "-context",
    "-files0-from",
    "-fprint",
    "-fprint0",
    "-fls",
    "-printf",
    "-fprintf",
    "-used",
];

/// `find … -delete` deletes files found by the traversal (unknown); `-fprint F`
/// and friends write F. `args` are find's own words, without its `-exec` commands.
pub(super) fn find(args: &[String], out: &mut Out) {
    out.modelled();
    let from = leading_options(args);
    let mut i = 0;
    let mut points = true;
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    while let Some(a) = args.get(i) {
        i += 1;
        if i <= from {
            opts.push(a.clone());
            continue;
        }
        if points && !a.starts_with('-') && !matches!(a.as_str(), "(" | "!" | ")" | ",") {
            operands.push(a.as_str());
            continue;
        }
        points = false;
        match a.as_str() {
            "-delete" => out.unknown(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                out.writes(args.get(i).map(String::as_str));
            }
            "-files0-from" => out.reads(args.get(i).map(String::as_str)),
            _ => {}
        }
        if a.starts_with('-') {
            let takes = WITH_VALUE.contains(&a.as_str()) || a.starts_with("-newer");
            match args.get(i).filter(|_| takes) {
                Some(v) => {
                    opts.push(format!("{a}={v}"));
                    i += 1 + usize::from(a == "-fprintf");
                }
                None => opts.push(a.clone()),
            }
        }
    }
    out.options(opts);
    out.operands(operands);
}

//! Schedulers and service managers: crontab and systemctl, whose subcommands and
//! operands persistence rules name.

use super::effects::Out;
use crate::options::{model, parse};

/// `crontab [-u USER] FILE|-`, `-l`, `-r`, `-e`: installing a table reads FILE (or
/// standard input, whose content is not visible).
pub(super) fn crontab(args: &[String], out: &mut Out) {
    let p = parse(args, &model("lreiTVn", "usc", "", ""));
    out.parsed(&p, &[]);
    out.operands(p.operands.iter().copied());
    let lists = "lreTV".chars().any(|c| p.has_short(c));
    match p.operands.first() {
        Some(&"-") if !lists => out.opaque("'crontab -' installs a table read from standard input"),
        Some(f) if !lists => out.read(f),
        _ => {}
    }
    if p.operands.is_empty() && !lists {
        out.opaque("'crontab' installs a table read from standard input");
    }
}

/// `systemctl [OPTS] VERB [UNIT…]`.
pub(super) fn systemctl(args: &[String], out: &mut Out) {
    let spec = model(
        "fqlari",
        "HMtpnos",
        "user system global now force runtime no-block quiet no-pager full all \
            no-reload no-ask-password failed plain reverse after before with-dependencies \
            recursive show-types value firmware-setup dry-run wait mkdir marked \
            read-only no-warn no-legend ignore-inhibitors",
        "host machine type state property root lines output signal kill-whom \
            kill-value job-mode preset-mode boot-loader-menu boot-loader-entry \
            timestamp legend message check-inhibitors what drop-in when image \
            image-policy",
    );
    let p = parse(args, &spec);
    out.parsed(
        &p,
        &[
            ('H', "host"),
            ('M', "machine"),
            ('t', "type"),
            ('p', "property"),
            ('n', "lines"),
            ('o', "output"),
            ('s', "signal"),
            ('f', "force"),
            ('q', "quiet"),
            ('l', "full"),
            ('a', "all"),
            ('r', "recursive"),
            ('i', "ignore-inhibitors"),
        ],
    );
    p.values('H', "host").for_each(|h| out.net(h));
    let mut ops = p.operands();
    if let Some(verb) = ops.next() {
        out.subcommand(verb);
        if verb == "edit" {
            out.unknown(); // an editor opens unit files
        }
    }
    out.operands(ops);
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(system);
}

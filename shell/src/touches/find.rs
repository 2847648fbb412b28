//! `find`'s own writes; the commands it runs (`-exec`) come from the wrapper table.

use super::effects::Out;

/// `find … -delete` deletes files found by the traversal (unknown); `-fprint F`
/// and friends write F. `args` are find's own words, without its `-exec` commands.
pub(super) fn find(args: &[String], out: &mut Out) {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-delete" => out.unknown(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                out.writes(it.next().map(String::as_str));
            }
            _ => {}
        }
    }
}

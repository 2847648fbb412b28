//! What a command does to a file, shared by the splitter (redirections) and the file
//! model (program arguments).

/// What a command does to a file; the policy core maps it to a path request, so a
/// shell route meets the same path rules as a direct file operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileOp {
    /// The file is only read.
    Read,
    /// The file is created or changed.
    Write,
    /// The file is removed.
    Delete,
}

/// Device files a command may write to without changing any file: never reported, so
/// `cmd > /dev/null` or `tee /dev/stderr` is not taken for a write.
pub(crate) const PSEUDO_FILES: [&str; 4] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

/// Whether writing to `path` (as written) changes no file.
pub(crate) fn changes_no_file(path: &str) -> bool {
    PSEUDO_FILES.contains(&path)
}

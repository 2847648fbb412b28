//! Why a file cannot be merged: nothing may be written.

use super::markers::{BLOCK_BEGIN, BLOCK_END};

/// A merge refusal in `path`. `path` is empty when the error comes from a pure function
/// that was not told the file's name ([`super::plan`] fills it in).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {kind}", self.place())]
pub struct MergeError {
    /// The file the error is about (empty when not known).
    pub path: String,
    pub kind: MergeErrorKind,
}

/// What is wrong. Line and column numbers are 1-based and point into the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeErrorKind {
    #[error("`{marker}` appears again (first on line {first}); refusing to write")]
    DuplicateMarker {
        line: usize,
        first: usize,
        marker: &'static str,
    },
    #[error("`{BLOCK_END}` comes before `{BLOCK_BEGIN}` (line {begin}); refusing to write")]
    ReversedMarkers { line: usize, begin: usize },
    #[error("`{BLOCK_BEGIN}` has no matching `{BLOCK_END}`; refusing to write")]
    UnclosedBlock { line: usize },
    #[error("`{BLOCK_END}` has no `{BLOCK_BEGIN}` before it; refusing to write")]
    UnopenedBlock { line: usize },
    #[error("`{marker}` must be alone on its line; refusing to write")]
    InlineMarker { line: usize, marker: &'static str },
    /// `line` counts lines of the generated block, not of the file.
    #[error("line {line} of the generated block contains a block marker (emitter bug)")]
    MarkerInBlockText { line: usize },
    #[error("invalid JSON: {message}; refusing to overwrite")]
    JsonSyntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("duplicate key {key:?}; refusing to overwrite")]
    JsonDuplicateKey {
        line: usize,
        column: usize,
        key: String,
    },
    #[error("the JSON root is {found}, not an object; refusing to overwrite")]
    JsonRoot { found: &'static str },
    #[error("invalid JSON pointer {pointer:?}: {message}")]
    JsonPointer { pointer: String, message: String },
    #[error("{pointer}: {step} is {found}, not an object; refusing to overwrite")]
    JsonNotObject {
        pointer: String,
        step: String,
        found: &'static str,
    },
    #[error("{pointer} is {found}, not an array; refusing to overwrite")]
    JsonNotArray {
        pointer: String,
        found: &'static str,
    },
    #[error("the owned JSON parts {first} and {second} overlap (emitter bug)")]
    JsonPartsOverlap { first: String, second: String },
    #[error("{pointer}: {message} (emitter bug)")]
    HookMarker { pointer: String, message: String },
    #[error("cannot serialise JSON: {message}")]
    Serialize { message: String },
    #[error("invalid TOML: {message}; refusing to overwrite")]
    TomlSyntax { message: String },
    #[error("{pointer}: {step} is not a table; refusing to overwrite")]
    TomlNotTable { pointer: String, step: String },
    #[error("invalid ownership record: {message}")]
    RecordSyntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "unsupported ownership record version {found} (this ContextOS reads version {supported})"
    )]
    RecordVersion { found: String, supported: u32 },
    #[error("invalid ownership record: {message}")]
    RecordField { message: String },
    #[error("the caller did not read this file before planning")]
    NotRead,
}

impl From<MergeErrorKind> for MergeError {
    /// An error whose file is not known yet.
    fn from(kind: MergeErrorKind) -> MergeError {
        MergeError {
            path: String::new(),
            kind,
        }
    }
}

impl MergeError {
    /// Stable, documented reason code.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The file the error is about (empty when not known).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The same error, located in `file`.
    pub fn with_path(mut self, file: &str) -> MergeError {
        self.path = file.to_string();
        self
    }

    /// `path:line:column`, `path:line` or `path`, as far as the error is located; an
    /// unnamed file is `<text>`.
    fn place(&self) -> String {
        let file = if self.path.is_empty() {
            "<text>"
        } else {
            &self.path
        };
        match self.kind.position() {
            Some((line, Some(column))) => format!("{file}:{line}:{column}"),
            Some((line, None)) => format!("{file}:{line}"),
            None => file.to_string(),
        }
    }
}

impl MergeErrorKind {
    /// Stable, documented reason code.
    pub fn code(&self) -> &'static str {
        match self {
            MergeErrorKind::DuplicateMarker { .. } => "emit.block.duplicate-marker",
            MergeErrorKind::ReversedMarkers { .. } => "emit.block.reversed-markers",
            MergeErrorKind::UnclosedBlock { .. } => "emit.block.unclosed",
            MergeErrorKind::UnopenedBlock { .. } => "emit.block.unopened",
            MergeErrorKind::InlineMarker { .. } => "emit.block.inline-marker",
            MergeErrorKind::MarkerInBlockText { .. } => "emit.block.marker-in-text",
            MergeErrorKind::JsonSyntax { .. } => "emit.json.syntax",
            MergeErrorKind::JsonDuplicateKey { .. } => "emit.json.duplicate-key",
            MergeErrorKind::JsonRoot { .. } => "emit.json.root-not-object",
            MergeErrorKind::JsonPointer { .. } => "emit.json.pointer",
            MergeErrorKind::JsonNotObject { .. } => "emit.json.not-object",
            MergeErrorKind::JsonNotArray { .. } => "emit.json.not-array",
            MergeErrorKind::JsonPartsOverlap { .. } => "emit.json.parts-overlap",
            MergeErrorKind::HookMarker { .. } => "emit.json.hook-marker",
            MergeErrorKind::Serialize { .. } => "emit.json.serialize",
            MergeErrorKind::TomlSyntax { .. } => "emit.toml.syntax",
            MergeErrorKind::TomlNotTable { .. } => "emit.toml.not-table",
            MergeErrorKind::RecordSyntax { .. } => "emit.ownership.syntax",
            MergeErrorKind::RecordVersion { .. } => "emit.ownership.version",
            MergeErrorKind::RecordField { .. } => "emit.ownership.field",
            MergeErrorKind::NotRead => "emit.plan.not-read",
        }
    }

    /// Where in the file: line, and column where known.
    fn position(&self) -> Option<(usize, Option<usize>)> {
        match self {
            MergeErrorKind::DuplicateMarker { line, .. }
            | MergeErrorKind::ReversedMarkers { line, .. }
            | MergeErrorKind::UnclosedBlock { line }
            | MergeErrorKind::UnopenedBlock { line }
            | MergeErrorKind::InlineMarker { line, .. } => Some((*line, None)),
            MergeErrorKind::JsonSyntax { line, column, .. }
            | MergeErrorKind::JsonDuplicateKey { line, column, .. }
            | MergeErrorKind::RecordSyntax { line, column, .. } => Some((*line, Some(*column))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_and_position() {
        let located = MergeError::from(MergeErrorKind::UnclosedBlock { line: 3 });
        assert_eq!(
            located.to_string(),
            format!("<text>:3: `{BLOCK_BEGIN}` has no matching `{BLOCK_END}`; refusing to write")
        );
        let json = MergeError::from(MergeErrorKind::JsonDuplicateKey {
            line: 2,
            column: 7,
            key: "x".into(),
        })
        .with_path("s.json");
        assert_eq!(
            json.to_string(),
            "s.json:2:7: duplicate key \"x\"; refusing to overwrite"
        );
        let file = MergeError {
            path: "a.json".into(),
            kind: MergeErrorKind::NotRead,
        };
        assert_eq!(
            file.to_string(),
            "a.json: the caller did not read this file before planning"
        );
        assert_eq!(file.code(), "emit.plan.not-read");
    }
}

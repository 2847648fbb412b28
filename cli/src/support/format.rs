//! `--format`: how every command prints its report.

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    /// GitHub Actions workflow commands (`::error file=…`) where findings have locations;
    /// plain text elsewhere.
    Github,
    /// SARIF 2.1.0 (`scan`); plain text elsewhere.
    Sarif,
    /// JUnit XML (`test`); plain text elsewhere.
    Junit,
}

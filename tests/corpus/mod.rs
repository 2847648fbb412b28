//! The labelled corpus for `contextos scan --staged` (issue 4): a deterministic generator, a
//! location-based scorer, and helpers that run scanners on a staged index. Shared by the e2e
//! test and the bench binaries through `#[path = …] mod corpus;`.
pub mod formats;
pub mod generator;
pub mod score;
pub mod tools;

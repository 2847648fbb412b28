//! JetBrains Junie: its emitter (a managed block in `.junie/guidelines.md`).

pub mod emit;

//! Zed: its emitter (a managed block in `.rules`).

pub mod emit;

//! Kiro: its emitter (`.kiro/steering/ctx-<guide>.md`).

pub mod emit;

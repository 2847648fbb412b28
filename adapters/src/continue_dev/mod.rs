//! Continue: its emitter (`.continue/rules/ctx-<guide>.md`). Instructions only.

pub mod emit;

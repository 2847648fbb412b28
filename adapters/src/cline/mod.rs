//! Cline: its emitter (`.clinerules/ctx-<guide>.md`). No hook is written (see `emit`).

pub mod emit;

//! OpenCode: its emitter (`opencode.json`, the `permission` block).

pub mod emit;

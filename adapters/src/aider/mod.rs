//! Aider: its emitter (`.aider.conf.yml` reading `AGENTS.md`, `.aiderignore`).

pub mod emit;

//! `contextos-full`: every command in one process, `scan` (gix) and `run` (the Docker
//! client) included. `contextos` hands those two commands to it.

fn main() -> std::process::ExitCode {
    contextos::full()
}

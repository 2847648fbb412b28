//! `contextos`: the lean front binary (see the library's documentation).

fn main() -> std::process::ExitCode {
    contextos::front()
}

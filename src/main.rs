//! The `webdup` binary: parses flags, builds a validated config, calls the
//! library, and maps the outcome to an exit code.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}

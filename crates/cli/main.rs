//! The `webdup` binary: parses flags, builds a validated config, calls the
//! library, and maps the outcome to an exit code.

mod cli;

// glibc's allocator grows per-thread arenas with an mprotect call at a time,
// which dominated a 100,000-document run; mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::run()
}

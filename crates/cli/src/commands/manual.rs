//! `webdup completions` and `webdup man`: the flags described for a shell
//! and for `man`.

use std::io::{self, Write};
use std::process::ExitCode;

use crate::args::Cli;

/// A shell completion script on standard output.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    // Generated in memory: clap_complete panics when its writer
    // fails, and a closed pipe is no reason to panic.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "webdup", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The manual page (roff) on standard output.
pub fn man() -> anyhow::Result<ExitCode> {
    let mut out = io::stdout().lock();
    clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

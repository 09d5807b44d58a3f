//! A progress bar on standard error when it is a terminal; nothing otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use webdup::engine::Progress;

pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(quiet: bool) -> Bar {
        let show = !quiet && std::io::stderr().is_terminal();
        Bar { bar: show.then(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())) }
    }
}

impl Progress for Bar {
    fn start(&self, stage: &'static str, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(0);
            let style = ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            b.set_style(style);
            b.set_prefix(stage);
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

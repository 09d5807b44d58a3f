//! A progress bar on standard error when it is a terminal; nothing otherwise.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use webdup::engine::Progress;

pub struct Bar {
    bar: Option<ProgressBar>,
    failed: AtomicU64,
}

impl Bar {
    pub fn new(quiet: bool) -> Bar {
        let show = !quiet && std::io::stderr().is_terminal();
        // Hidden until a stage starts with its style, so nothing unlabeled
        // is ever drawn.
        Bar {
            bar: show.then(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())),
            failed: AtomicU64::new(0),
        }
    }
}

fn rate(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&format_rate(state.per_sec()));
}

/// `31.7/s`, `4.2/s`, `1250/s`: a rate people read at a glance.
fn format_rate(per_sec: f64) -> String {
    if per_sec >= 100.0 { format!("{per_sec:.0}/s") } else { format!("{per_sec:.1}/s") }
}

impl Progress for Bar {
    fn start(&self, stage: &'static str, total: u64) {
        if let Some(b) = &self.bar {
            let style = ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {rate} eta {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .with_key("rate", rate)
                .progress_chars("=> ");
            b.set_style(style);
            b.set_prefix(stage);
            self.failed.store(0, Ordering::Relaxed);
            b.set_message("");
            b.set_length(total);
            b.set_position(0);
            b.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    fn fail(&self, n: u64) {
        if let Some(b) = &self.bar {
            let failed = self.failed.fetch_add(n, Ordering::Relaxed) + n;
            b.set_message(format!("· {failed} failed"));
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_at_most_one_decimal() {
        assert_eq!(format_rate(31.6874), "31.7/s");
        assert_eq!(format_rate(0.04), "0.0/s");
        assert_eq!(format_rate(1249.6), "1250/s");
    }
}

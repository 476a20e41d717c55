//! The progress bars on a terminal: a replay's requests and a sweep's runs,
//! fed by the libraries' own progress (a replay's observer, a sweep's
//! per-run callback), drawn on stderr only when it is a terminal.

use indicatif::{ProgressBar, ProgressStyle};

use aisim_replay::runtime::ReplayObserver;

/// Shows dispatched requests on stderr.
#[derive(Debug)]
pub struct ProgressBarObserver {
    bar: ProgressBar,
}

impl ProgressBarObserver {
    /// A bar on stderr (hidden when stderr is not a terminal).
    pub fn new() -> ProgressBarObserver {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} replaying {pos}/{len} requests [{elapsed_precise}] {per_sec}",
            )
            .expect("valid template"),
        );
        ProgressBarObserver { bar }
    }
}

impl Default for ProgressBarObserver {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayObserver for ProgressBarObserver {
    fn progress(&mut self, dispatched: u64, remaining: u64) {
        self.bar.set_length(dispatched + remaining);
        self.bar.set_position(dispatched);
    }

    fn finished(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Runs done of a shard, on stderr.
#[derive(Debug)]
pub struct SweepBar {
    bar: ProgressBar,
}

impl SweepBar {
    /// A bar over `total` runs, `done` of them skipped already.
    pub fn new(total: u64, done: u64) -> SweepBar {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} sweep {pos}/{len} runs [{elapsed_precise}] eta {eta}",
            )
            .expect("valid template"),
        );
        bar.set_position(done);
        SweepBar { bar }
    }

    /// One more run done.
    pub fn tick(&self) {
        self.bar.inc(1);
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

//! A sweep's progress bar on a terminal (feature `progress`).

use indicatif::{ProgressBar, ProgressStyle};

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

//! A progress bar for terminals (feature `progress`).

use indicatif::{ProgressBar, ProgressStyle};

use crate::runtime::ReplayObserver;

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

//! The progress bars on a terminal: a replay's requests, a sweep's runs and
//! a calibration's replays, fed by the libraries' own progress (a replay's
//! observer, a sweep's per-run callback, a calibration's progress), drawn
//! on stderr only when it is a terminal.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use aisim_core::number::{rounded, HUMAN_DIGITS};
use aisim_lab::fidelity::calibrate::CalibrationProgress;
use aisim_replay::runtime::ReplayObserver;

/// The bar's rate to its significant digits (`97804/s`, not indicatif's
/// `97,804.2286/s`).
fn rate(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{}/s", rounded(state.per_sec(), HUMAN_DIGITS));
}

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
                "{spinner} replaying {pos}/{len} requests [{elapsed_precise}] {rate}",
            )
            .expect("valid template")
            .with_key("rate", rate),
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

/// A calibration's replays of its runs, and the line of each stage above
/// the bar, on stderr (neither when it is not a terminal).
#[derive(Debug)]
pub struct CalibrateBar {
    bar: ProgressBar,
}

impl CalibrateBar {
    /// A spinner, then a bar whose length the first replay sets.
    pub fn new() -> CalibrateBar {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{spinner} calibrate [{elapsed_precise}]")
                .expect("valid template"),
        );
        CalibrateBar { bar }
    }

    /// Shows what the calibration told.
    pub fn observe(&self, p: CalibrationProgress) {
        match p {
            CalibrationProgress::Replays { done, budget } => {
                if self.bar.length() == Some(0) {
                    self.bar.set_style(
                        ProgressStyle::with_template(
                            "{spinner} calibrate: {pos}/{len} replays of the runs at most [{elapsed_precise}]",
                        )
                        .expect("valid template"),
                    );
                }
                self.bar.set_length(u64::from(budget));
                self.bar.set_position(u64::from(done));
            }
            // A line names runs (user text) on a terminal.
            CalibrationProgress::Stage(line) => {
                self.bar
                    .println(aisim_core::safe_text::terminal_safe(&format!(
                        "calibrate: {line}"
                    )))
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Default for CalibrateBar {
    fn default() -> Self {
        Self::new()
    }
}

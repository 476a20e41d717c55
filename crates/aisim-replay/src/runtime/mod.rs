//! Runtimes: the event loop over a topology.

mod agg;
mod disagg;
mod driver;
mod pool;
mod scaler;
mod slots;
mod split;
mod workers;

pub(crate) use agg::AggTopology;
pub(crate) use disagg::DisaggTopology;
pub(crate) use driver::{Runtime, Topology};
pub(crate) use scaler::Scaler;
pub(crate) use split::{run_split, SplitParts};
pub(crate) use workers::{EngineFactory, Workers};

/// Hooks for progress display and streamed per-request records; the loop
/// calls them, they never change a result.
pub trait ReplayObserver {
    /// Called now and then with the requests dispatched so far and the number
    /// still to come (when known).
    fn progress(&mut self, _dispatched: u64, _remaining: u64) {}
    /// With `Replayer::stream_records`: ended requests' records, a batch at
    /// a time, in the order the loop finished with them (not sorted: workers
    /// run ahead independently; requests still in flight when the run ends
    /// come last, by id). An error stops the replay with `ReplayError::Output`.
    fn records(&mut self, _batch: &[crate::collector::RequestRecord]) -> std::io::Result<()> {
        Ok(())
    }
    /// Called once when the loop ends.
    fn finished(&mut self) {}
}

/// An observer that does nothing.
#[derive(Debug, Default)]
pub struct Silent;

impl ReplayObserver for Silent {}

//! The aggregated topology: N identical workers, each one engine; a pass
//! completion makes its tokens and completions visible.

use aisim_core::{EngineConfig, RejectReason, Request, SimTime};

use super::driver::{Front, Topology};
use super::pool::{Entry, Pool, Role};
use super::workers::Workers;
use crate::error::ReplayError;
use crate::event::EventKind;
use crate::policy::PlacementPolicy;
use crate::report::PoolTotals;

/// The aggregated topology's state.
pub(crate) struct AggTopology {
    pool: Pool,
    placement: Box<dyn PlacementPolicy>,
}

impl AggTopology {
    /// `workers` placed by `placement`.
    pub fn new(
        workers: Workers,
        engine: &EngineConfig,
        placement: Box<dyn PlacementPolicy>,
    ) -> AggTopology {
        let mut pool = Pool::new("workers", Role::Whole, 0, workers, engine);
        pool.capture_kv_events(placement.wants_kv_events());
        AggTopology { pool, placement }
    }
}

impl Topology for AggTopology {
    fn next_event(&self) -> Option<SimTime> {
        self.pool.next_event()
    }

    fn apply_due(&mut self, front: &mut Front<'_>) -> Result<(), ReplayError> {
        while let Some(ev) = self.pool.passes.pop_due(front.now) {
            let EventKind::PassComplete { worker } = ev.kind else {
                unreachable!("the pass heap holds pass completions only")
            };
            self.pool.finish_pass(front, worker, &mut *self.placement);
        }
        Ok(())
    }

    fn submit(
        &mut self,
        front: &mut Front<'_>,
        req: &Request,
    ) -> Result<Result<(), RejectReason>, ReplayError> {
        let at = self.pool.place_arrival(front, &mut *self.placement, req)?;
        self.pool.add(at, req, Entry::Whole)
    }

    fn abort(&mut self, front: &mut Front<'_>, id: u64) {
        if let Some(w) = front.collector.worker_of(id) {
            self.pool.abort(w, id);
        }
    }

    fn start_passes(
        &mut self,
        front: &mut Front<'_>,
        horizon: Option<Option<SimTime>>,
    ) -> Result<(), ReplayError> {
        self.pool.start_passes(front, horizon, &mut *self.placement)
    }

    fn saturated(&self, threshold: u32) -> bool {
        self.pool.saturated(threshold)
    }

    fn pools(&mut self, end: SimTime) -> Vec<PoolTotals> {
        vec![self.pool.totals(end)]
    }
}

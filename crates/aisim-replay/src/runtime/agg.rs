//! The aggregated topology: N identical workers, each one engine; a pass
//! completion makes its tokens and completions visible.

use std::borrow::Cow;

use aisim_core::{EngineConfig, RejectReason, Request, SimDuration, SimTime};

use super::driver::{Front, Topology};
use super::pool::{Entry, Pool, Role};
use super::scaler::{Recent, Scaler};
use super::workers::Workers;
use crate::call_log as calls;
use crate::error::ReplayError;
use crate::event::EventKind;
use crate::policy::PlacementPolicy;
use crate::report::PoolTotals;

/// The aggregated topology's state.
pub(crate) struct AggTopology {
    pool: Pool,
    placement: Box<dyn PlacementPolicy>,
    /// The scaling policy's state, when it ticks.
    scaler: Option<Scaler>,
    recent: Recent,
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
        AggTopology {
            pool,
            placement,
            scaler: None,
            recent: Recent::default(),
        }
    }

    /// Scales the pool with `scaler`; the first `initial` workers accept
    /// from the start.
    pub fn with_scaler(mut self, scaler: Scaler, initial: u32) -> AggTopology {
        self.pool.workers.limit_accepting(initial);
        self.scaler = Some(scaler);
        self
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
            if let Some(log) = front.collector.log() {
                let key = calls::key(front.now, calls::FINISH, u64::from(worker));
                log.begin(key);
                self.pool.segment = key;
            }
            self.pool.finish_pass(front, worker, &mut *self.placement);
            if let Some(s) = &mut self.scaler {
                s.stop_if_empty(front.now, &mut self.pool, worker);
            }
        }
        Ok(())
    }

    fn submit(
        &mut self,
        front: &mut Front<'_>,
        req: Cow<'_, Request>,
    ) -> Result<Result<(), RejectReason>, ReplayError> {
        let at = self.pool.place_arrival(front, &mut *self.placement, &req)?;
        if let Some(log) = front.collector.log() {
            if !log.owns(at.worker) {
                return Ok(Ok(())); // another part's worker serves it
            }
            self.pool.segment = log.key();
        }
        self.pool.add(at, &req, Entry::Whole)
    }

    fn abort(&mut self, front: &mut Front<'_>, id: u64) {
        if let Some(w) = front.collector.worker_of(id) {
            self.pool.abort(w, id);
            if let Some(s) = &mut self.scaler {
                s.stop_if_empty(front.now, &mut self.pool, w);
            }
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
        let mut totals = self.pool.totals(end);
        totals.scaling = self.scaler.as_mut().map(|s| s.finish(end));
        vec![totals]
    }

    fn first_tick(&self) -> Option<SimDuration> {
        self.scaler.as_ref().and_then(Scaler::first_tick)
    }

    fn scaling_tick(&mut self, front: &mut Front<'_>) -> Option<SimTime> {
        let s = self.scaler.as_mut()?;
        self.recent.read(&mut front.collector);
        s.tick_if_due(front, &mut self.pool, &self.recent);
        s.next_tick()
    }

    fn worker_ready(&mut self, front: &mut Front<'_>, worker: u32) {
        if let Some(s) = &mut self.scaler {
            s.ready(front.now, &mut self.pool, worker);
        }
    }

    fn holds_any(&self) -> bool {
        self.scaler
            .as_ref()
            .is_some_and(|s| s.holds_any(&self.pool))
    }
}

//! What a runtime does around a placement policy: refuse a placement outside
//! the topology, and hand the policy the engines' KV events when it asks.

use aisim_core::PassOutcome;

use super::{Placement, PlacementPolicy, WorkerView};
use crate::error::ReplayError;

/// `policy.place(req, view)`, refused with `ReplayError::Placement` when the
/// worker or rank lies outside the pool named `pool` (a policy's bug must not
/// panic the engine it indexes).
pub(crate) fn place_checked(
    policy: &mut dyn PlacementPolicy,
    req: &aisim_core::Request,
    view: &dyn WorkerView,
    pool: &str,
) -> Result<Placement, ReplayError> {
    let p = policy.place(req, view);
    let (workers, dp_size) = (view.workers(), view.dp_size());
    if p.worker < workers && p.rank < dp_size {
        return Ok(p);
    }
    Err(ReplayError::Placement {
        policy: policy.name().to_string(),
        pool: pool.to_string(),
        worker: p.worker,
        rank: p.rank,
        workers,
        dp_size,
    })
}

/// Hands worker `worker`'s KV events in `out` to the policy, rank by rank
/// (ranks without events are skipped).
pub(crate) fn deliver_kv_events(policy: &mut dyn PlacementPolicy, worker: u32, out: &PassOutcome) {
    for rank in 0..out.kv_event_ends.len() {
        let events = out.kv_events_of(rank);
        if !events.is_empty() {
            policy.on_kv_events(worker, rank as u32, events);
        }
    }
}

//! Placement and scaling policies: the narrow traits a runtime consults, and the
//! built-ins.

mod candidates;
mod hooks;
mod kv;
mod kv_index;
mod lane_ranges;
mod lpwl;
mod placement;
mod scaling;
mod sticky;

use std::sync::Arc;

use aisim_core::timing::TimingModel;

pub(crate) use hooks::{deliver_kv_events, place_checked};
pub use kv::{KvRouter, KvRouterConfig};
pub use kv_index::{PromptPages, RouterIndex};
pub use lpwl::LeastPrefillWorkLeft;
pub use placement::{
    LeastLoaded, Placement, PlacementPolicy, RandomPlacement, RoundRobin, WorkerView,
};
pub use scaling::{
    LoadPlanner, NoScaling, ScalingDecision, ScalingPolicy, ScalingSnapshot, COOL_TICKS,
};
pub use sticky::Sticky;

use crate::error::ReplayError;
use crate::spec::{ReplaySpec, RouterKind, ScalingKind};

/// Supplies the policies and the timing model of a run. Implement it to
/// inject your own; each method has the spec's choice as its default.
pub trait ReplayComposition {
    /// The placement policy for this spec.
    fn placement(&self, spec: &ReplaySpec) -> Box<dyn PlacementPolicy>;
    /// The placement policy of a disaggregated run's decode pool (the
    /// prefill pool's is `placement`): by default another of the same.
    fn decode_placement(&self, spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        self.placement(spec)
    }
    /// The scaling policy for this spec.
    fn scaling(&self, _spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        Box::new(NoScaling)
    }
    /// The pass timing of every engine (by default the spec's `timing`).
    fn timing(&self, spec: &ReplaySpec) -> Result<Arc<dyn TimingModel>, ReplayError> {
        Ok(spec.timing.build()?)
    }
}

/// Round robin placement, no scaling, whatever the spec says.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoundRobinComposition;

impl ReplayComposition for RoundRobinComposition {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(RoundRobin::default())
    }
}

/// The built-in policies, chosen by the names in the spec (what the CLI uses).
#[derive(Debug, Clone, Copy, Default)]
pub struct SpecComposition;

/// The built-in policy `kind` with the spec's parameters (`sticky` over the
/// spec's inner policy).
pub fn builtin_placement(kind: RouterKind, spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
    let r = &spec.router;
    match kind {
        RouterKind::RoundRobin => Box::new(RoundRobin::default()),
        RouterKind::Random => Box::new(RandomPlacement::new(spec.seed)),
        RouterKind::LeastLoaded => Box::new(LeastLoaded),
        RouterKind::Kv => Box::new(KvRouter::new(KvRouterConfig {
            block_size: spec.engine.effective_block_size(),
            prefill_load_scale: r.prefill_load_scale,
            temperature: r.temperature,
            seed: spec.seed,
        })),
        RouterKind::Lpwl => Box::new(LeastPrefillWorkLeft::default()),
        // `validate` refuses sticky over sticky; were it to get here, the
        // inner policy would be round robin.
        RouterKind::Sticky => Box::new(Sticky::new(match r.inner {
            Some(RouterKind::Sticky) | None => Box::new(RoundRobin::default()),
            Some(inner) => builtin_placement(inner, spec),
        })),
    }
}

impl ReplayComposition for SpecComposition {
    fn placement(&self, spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        builtin_placement(spec.router.policy, spec)
    }

    fn scaling(&self, spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        match spec.scaling.policy {
            ScalingKind::None => Box::new(NoScaling),
            ScalingKind::Load => match spec.scaling.load_planner(spec) {
                Some((p, max, ttft_ms)) => Box::new(LoadPlanner::new(
                    p.min_workers,
                    max,
                    crate::workload::ms_to_duration(p.tick_s * 1e3),
                    ttft_ms,
                    p.queue_depth,
                )),
                None => Box::new(NoScaling),
            },
        }
    }
}

#[cfg(test)]
mod test_view;
#[cfg(test)]
mod tests;

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
mod worker_view;

use std::sync::Arc;

use aisim_core::timing::TimingModel;

pub(crate) use hooks::{deliver_kv_events, place_checked};
pub use kv::{KvRouter, KvRouterConfig};
pub use kv_index::{PromptPages, RouterIndex};
pub use lpwl::LeastPrefillWorkLeft;
pub use placement::{LeastLoaded, Placement, PlacementPolicy, RandomPlacement, RoundRobin};
pub use scaling::{
    LoadPlanner, NoScaling, ScalingDecision, ScalingPolicy, ScalingSnapshot, COOL_TICKS,
};
pub use sticky::Sticky;
pub use worker_view::WorkerView;

use crate::error::ReplayError;
use crate::spec::{ReplaySpec, RouterKind};

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
    /// The scaling policy for this spec (a disaggregated run's prefill pool).
    fn scaling(&self, _spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        Box::new(NoScaling)
    }
    /// The scaling policy of a disaggregated run's decode pool: by default
    /// another of the same (its snapshots name the pool).
    fn decode_scaling(&self, spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        self.scaling(spec)
    }
    /// The pass timing of every engine (by default the spec's `timing`).
    fn timing(&self, spec: &ReplaySpec) -> Result<Arc<dyn TimingModel>, ReplayError> {
        Ok(spec.timing.build()?)
    }
    /// The pass timing of one disaggregated pool, when it has its own: by
    /// default the pool's `timing` in the spec built (`None` without one:
    /// the pool runs `timing`). Override it to give the pools different
    /// models of one's own; `timing` alone applies to both pools.
    fn pool_timing(
        &self,
        spec: &ReplaySpec,
        pool: DisaggPool,
    ) -> Result<Option<Arc<dyn TimingModel>>, ReplayError> {
        let pools = spec.pools();
        match pools.get(pool as usize).filter(|p| p.own_timing) {
            Some(p) => Ok(Some(p.timing.build()?)),
            None => Ok(None),
        }
    }
}

/// A disaggregated run's pool (`ReplayComposition::pool_timing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisaggPool {
    /// The prefill pool.
    Prefill = 0,
    /// The decode pool.
    Decode = 1,
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
        spec_planner(spec, 0)
    }

    fn decode_scaling(&self, spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        spec_planner(spec, 1)
    }
}

/// The planner of the spec's `n`th scaled pool (`ScalingSpec::plans`), or
/// none.
fn spec_planner(spec: &ReplaySpec, n: usize) -> Box<dyn ScalingPolicy> {
    match spec.scaling.plans(spec).get(n) {
        Some(plan) => Box::new(LoadPlanner::for_plan(plan)),
        None => Box::new(NoScaling),
    }
}

#[cfg(test)]
mod test_view;
#[cfg(test)]
mod tests;

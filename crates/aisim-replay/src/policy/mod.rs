//! Placement and scaling policies: the narrow traits a runtime consults, and the
//! built-ins.

mod placement;
mod scaling;

pub use placement::{
    LeastLoaded, Placement, PlacementPolicy, RandomPlacement, RoundRobin, WorkerView,
};
pub use scaling::{NoScaling, ScalingDecision, ScalingPolicy, ScalingSnapshot};

use crate::spec::{ReplaySpec, RouterKind, ScalingKind};

/// Supplies the policies of a run. Implement it to inject policies of your own.
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

impl ReplayComposition for SpecComposition {
    fn placement(&self, spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        match spec.router.policy {
            RouterKind::RoundRobin => Box::new(RoundRobin::default()),
            RouterKind::Random => Box::new(RandomPlacement::new(spec.seed)),
            RouterKind::LeastLoaded => Box::new(LeastLoaded),
        }
    }

    fn scaling(&self, spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        match spec.scaling.policy {
            ScalingKind::None => Box::new(NoScaling),
        }
    }
}

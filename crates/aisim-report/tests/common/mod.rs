//! What the report crate's tests share.
#![allow(dead_code)] // each test binary uses its own part

use aisim_replay::spec::{
    ArrivalSpec, LoadPlannerSpec, ScalingKind, SyntheticSpec, TopologySpec, WorkloadSpec,
};
use aisim_replay::ReplaySpec;

/// The load planner on a generated burst, from one worker up to four: a
/// report with a scaling section and its timeline.
pub fn planner_on_a_burst() -> ReplaySpec {
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 400,
            arrival: ArrivalSpec::Gamma {
                rate: 20.0,
                burstiness: 0.05,
            },
            ..SyntheticSpec::default()
        }),
        topology: TopologySpec::Aggregated { workers: 1 },
        ..ReplaySpec::default()
    };
    spec.scaling.policy = ScalingKind::Load;
    spec.scaling.load = Some(LoadPlannerSpec {
        max_workers: Some(4),
        tick_s: 2.0,
        startup_s: 1.0,
        ttft_ms: Some(200.0),
        ..LoadPlannerSpec::default()
    });
    spec
}

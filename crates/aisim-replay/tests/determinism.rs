//! The same spec twice gives byte-identical JSON (outside `host`), for every
//! backend and placement policy.

mod common;

use aisim_core::Backend;
use aisim_replay::spec::RouterKind;
use aisim_replay::ReplaySpec;
use common::*;

#[test]
fn identical_runs_give_identical_reports() {
    for backend in [Backend::Vllm, Backend::Sglang, Backend::Trtllm] {
        for policy in [
            RouterKind::RoundRobin,
            RouterKind::Random,
            RouterKind::LeastLoaded,
        ] {
            let mut spec = ReplaySpec::default();
            spec.topology = aisim_replay::spec::TopologySpec::Aggregated { workers: 3 };
            spec.engine.backend = backend;
            // 25,600 tokens of KV per worker: tight enough to preempt.
            spec.engine.num_gpu_blocks = 25_600 / spec.engine.effective_block_size();
            spec.router.policy = policy;
            let a = run(spec.clone());
            let b = run(spec);
            assert_eq!(
                json_without_host(&a),
                json_without_host(&b),
                "{backend:?} {policy:?}"
            );
            assert_eq!(a.report.outcomes.completed, 240, "{backend:?} {policy:?}");
            if backend != Backend::Trtllm {
                assert!(a.report.cache.preemptions > 0, "{backend:?} {policy:?}");
            }
        }
    }
}

#[test]
fn the_seed_changes_random_placement_only() {
    let mut spec = ReplaySpec::default();
    spec.topology = aisim_replay::spec::TopologySpec::Aggregated { workers: 3 };
    spec.router.policy = RouterKind::Random;
    let a = run(spec.clone());
    spec.seed = 7;
    let b = run(spec);
    let placements =
        |o: &aisim_replay::ReplayOutput| o.records.iter().map(|r| r.worker).collect::<Vec<_>>();
    assert_ne!(placements(&a), placements(&b));
}

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
            spec.engine.num_gpu_blocks = Some(25_600 / spec.engine.effective_block_size());
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

#[test]
fn fast_forward_changes_nothing_but_speed() {
    use aisim_replay::policy::SpecComposition;
    use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, WorkloadSpec};
    use aisim_replay::Replayer;
    let (mut preemptions, mut timed_out) = (0, 0);
    for (policy, timeout) in [
        (RouterKind::RoundRobin, None),
        (RouterKind::LeastLoaded, Some(0.5)),
        (RouterKind::Random, None),
        // The kv router hears of evictions by decode passes as they end,
        // fast-forwarded or not.
        (RouterKind::Kv, None),
        (RouterKind::Lpwl, Some(0.5)),
    ] {
        let mut spec = ReplaySpec {
            workload: WorkloadSpec::Synthetic(SyntheticSpec {
                requests: 600,
                input: LengthSpec::Uniform {
                    min: 100,
                    max: 5000,
                },
                output: LengthSpec::Uniform { min: 1, max: 200 },
                arrival: ArrivalSpec::Gamma {
                    rate: 30.0,
                    burstiness: 0.5,
                },
                prefix_groups: 4,
                prefix_tokens: 1024,
                turns: 1,
                think_ms: 0.0,
                trace_block_size: 512,
                total_cdf: None,
            }),
            topology: aisim_replay::spec::TopologySpec::Aggregated { workers: 3 },
            ..ReplaySpec::default()
        };
        spec.engine.num_gpu_blocks = Some(300);
        spec.router.policy = policy;
        spec.discipline.timeout_s = timeout;
        let on = Replayer::new(spec.clone(), SpecComposition)
            .unwrap()
            .run()
            .unwrap();
        let off = Replayer::new(spec, SpecComposition)
            .unwrap()
            .with_fast_forward(false)
            .run()
            .unwrap();
        assert_eq!(
            json_without_host(&on),
            json_without_host(&off),
            "{policy:?} timeout {timeout:?}"
        );
        preemptions += on.report.cache.preemptions;
        timed_out += on.report.outcomes.timed_out;
    }
    assert!(
        preemptions > 0 && timed_out > 0,
        "the cases exercise preemption and timeouts"
    );
}

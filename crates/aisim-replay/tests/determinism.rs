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

/// Whether a run may split here (it needs two cores).
fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// Records as the observer gets them, in order.
#[derive(Default)]
struct Streamed(Vec<String>);

impl aisim_replay::runtime::ReplayObserver for Streamed {
    fn records(&mut self, batch: &[aisim_replay::collector::RequestRecord]) -> std::io::Result<()> {
        self.0
            .extend(batch.iter().map(|r| serde_json::to_string(r).unwrap()));
        Ok(())
    }
}

#[test]
fn a_split_run_changes_nothing_but_speed() {
    use aisim_replay::policy::SpecComposition;
    use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, TopologySpec, WorkloadSpec};
    use aisim_replay::Replayer;
    let synthetic = |requests| {
        WorkloadSpec::Synthetic(SyntheticSpec {
            requests,
            input: LengthSpec::Uniform {
                min: 100,
                max: 12_000,
            },
            output: LengthSpec::Uniform { min: 1, max: 300 },
            arrival: ArrivalSpec::Gamma {
                rate: 40.0,
                burstiness: 0.5,
            },
            prefix_groups: 4,
            prefix_tokens: 2048,
            turns: 1,
            think_ms: 0.0,
            trace_block_size: 512,
            total_cdf: None,
        })
    };
    let (mut preemptions, mut rejected, mut split) = (0, 0, 0);
    let cases = [
        (Backend::Vllm, RouterKind::RoundRobin, 2, 1, 0),
        (Backend::Vllm, RouterKind::RoundRobin, 5, 1, 100),
        (Backend::Vllm, RouterKind::Random, 3, 1, 0),
        (Backend::Vllm, RouterKind::RoundRobin, 3, 2, 0),
        (Backend::Sglang, RouterKind::RoundRobin, 4, 1, 50),
        (Backend::Trtllm, RouterKind::Random, 2, 1, 0),
    ];
    for (backend, policy, workers, dp, warmup) in cases {
        let trace = WorkloadSpec::Trace {
            path: fixture("traces/mooncake_small.jsonl"),
            format: None,
            trace_block_size: None,
        };
        for workload in [synthetic(700), trace] {
            let mut spec = ReplaySpec {
                workload,
                topology: TopologySpec::Aggregated { workers },
                ..ReplaySpec::default()
            };
            spec.engine.backend = backend;
            spec.engine.dp_size = dp;
            // 10,240 tokens of KV a rank: prompts above it are refused, and
            // the rest preempt one another.
            spec.engine.num_gpu_blocks = Some(10_240 / spec.engine.effective_block_size());
            spec.router.policy = policy;
            spec.discipline.warmup_requests = warmup;
            let what = format!(
                "{backend:?} {policy:?} {workers} workers × dp {dp}, {:?}",
                spec.workload
            );
            let on = Replayer::new(spec.clone(), SpecComposition).unwrap();
            assert_eq!(on.would_split().unwrap(), two_cores(), "{what}");
            let off = || {
                Replayer::new(spec.clone(), SpecComposition)
                    .unwrap()
                    .with_split(false)
            };
            assert!(!off().would_split().unwrap());
            let (a, b) = (
                on.with_records(true).run().unwrap(),
                off().with_records(true).run().unwrap(),
            );
            assert_eq!(json_without_host(&a), json_without_host(&b), "{what}");
            let records =
                |o: &aisim_replay::ReplayOutput| serde_json::to_string(&o.records).unwrap();
            assert_eq!(records(&a), records(&b), "{what}");
            // Streamed records come in the order the single loop ends them.
            let (mut sa, mut sb) = (Streamed::default(), Streamed::default());
            let on = Replayer::new(spec.clone(), SpecComposition).unwrap();
            on.stream_records().run_observed(&mut sa).unwrap();
            off().stream_records().run_observed(&mut sb).unwrap();
            assert_eq!(sa.0, sb.0, "{what}");
            preemptions += a.report.cache.preemptions;
            rejected += a.report.outcomes.rejected;
            split += 1;
        }
    }
    assert!(
        split > 0 && preemptions > 0 && rejected > 0,
        "{preemptions} {rejected}"
    );
}

#[test]
fn runs_that_workers_can_affect_between_arrivals_stay_on_one_loop() {
    use aisim_replay::policy::SpecComposition;
    use aisim_replay::spec::TopologySpec;
    use aisim_replay::Replayer;
    let mut base = trace_spec(fixture("traces/mooncake_small.jsonl"), 4, 1.0, 1.0);
    base.timing = ReplaySpec::default().timing;
    let would = |spec: &ReplaySpec| {
        Replayer::new(spec.clone(), SpecComposition)
            .unwrap()
            .would_split()
            .unwrap()
    };
    assert_eq!(would(&base), two_cores());
    let mut off = Replayer::new(base.clone(), SpecComposition)
        .unwrap()
        .with_fast_forward(false);
    assert!(!off.would_split().unwrap(), "fast-forward off");
    off = off.with_fast_forward(true).with_split(false);
    assert!(!off.would_split().unwrap(), "split off");
    let mut one = base.clone();
    one.topology = TopologySpec::Aggregated { workers: 1 };
    let mut timeout = base.clone();
    timeout.discipline.timeout_s = Some(30.0);
    let mut kv = base.clone();
    kv.router.policy = RouterKind::Kv;
    let mut least = base.clone();
    least.router.policy = RouterKind::LeastLoaded;
    let mut demo = base.clone();
    demo.workload = aisim_replay::spec::WorkloadSpec::Demo; // its turns form sessions
    let mut sessions = base.clone();
    sessions.workload = {
        let mut s = small_synthetic(50, aisim_replay::spec::ArrivalSpec::Poisson { rate: 10.0 });
        s.turns = 3;
        aisim_replay::spec::WorkloadSpec::Synthetic(s)
    };
    for (spec, what) in [
        (one, "one worker"),
        (timeout, "a timeout"),
        (kv, "a cache-aware router"),
        (least, "a load-aware router"),
        (sessions, "sessions"),
        (demo, "a trace with sessions"),
    ] {
        assert!(!would(&spec), "{what}");
    }
}

#[test]
fn a_cancelled_split_run_stops() {
    use aisim_replay::policy::SpecComposition;
    use aisim_replay::{ReplayError, Replayer};
    let spec = trace_spec(fixture("traces/mooncake_small.jsonl"), 4, 1.0, 1.0);
    let replayer = Replayer::new(spec, SpecComposition).unwrap();
    assert_eq!(replayer.would_split().unwrap(), two_cores());
    let set = Some(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(
        true,
    )));
    let e = aisim_core::cancel::with_flag(set, || replayer.run()).unwrap_err();
    assert!(matches!(e, ReplayError::Cancelled), "{e}");
}

//! Tests on the real Mooncake trace in `../shared/traces` (not in a fresh clone:
//! run with `-- --ignored`; they fail loudly when the file is absent).

mod common;

use aisim_replay::spec::{TopologySpec, WorkloadSpec};
use aisim_replay::ReplaySpec;
use common::*;

/// The defaults on the shared trace with `workers` workers.
fn mooncake_spec(workers: u32) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Trace {
            path: mooncake(),
            format: None,
            trace_block_size: None,
        },
        topology: TopologySpec::Aggregated { workers },
        ..ReplaySpec::default()
    }
}

fn default_replay(workers: u32) -> aisim_replay::ReplayOutput {
    run(mooncake_spec(workers))
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_conservation() {
    let out = default_replay(8);
    let o = out.report.outcomes;
    assert_eq!((o.offered, o.completed), (3993, 3993));
    assert!(out.records.iter().all(|r| r.tokens == r.output_length));
    let requested: u64 = out.records.iter().map(|r| r.output_length as u64).sum();
    let emitted: u64 = out.records.iter().map(|r| r.tokens as u64).sum();
    assert_eq!(requested, emitted);
    let pool = &out.report.pools[0];
    assert!(pool.kv_peak_blocks <= pool.kv_capacity_blocks);
    assert!(out
        .report
        .workers
        .iter()
        .all(|w| w.kv_peak_blocks <= pool.kv_capacity_blocks));
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_default_replay_figures_are_pinned() {
    // aisim's own figures for `aisim replay TRACE --workers 8` (see docs/replay.md
    // for the comparison with the reference implementation).
    let r = default_replay(8).report;
    let close = |a: Option<f64>, b: f64, what: &str| {
        let a = a.unwrap();
        assert!((a - b).abs() <= 0.01, "{what}: {a} vs pinned {b}");
    };
    close(r.latency.ttft_ms.mean, 301.52, "mean TTFT");
    close(r.latency.ttft_ms.p90, 790.51, "p90 TTFT");
    close(r.latency.ttft_ms.p99, 1451.60, "p99 TTFT");
    close(r.latency.e2e_ms.mean, 1296.67, "mean E2E");
    close(r.latency.tpot_ms.mean, 7.30, "mean TPOT");
    assert!(
        (r.cache.prefix_reuse_ratio - 0.112).abs() < 0.0005,
        "{}",
        r.cache.prefix_reuse_ratio
    );
}

/// `close` for every (mean, p50, p90, p99) of TTFT, TPOT and E2E, to 0.01 ms.
fn assert_figures(r: &aisim_replay::report::ReplayReport, want: [[f64; 4]; 3]) {
    let l = &r.latency;
    for (name, got, want) in [
        ("TTFT", &l.ttft_ms, want[0]),
        ("TPOT", &l.tpot_ms, want[1]),
        ("E2E", &l.e2e_ms, want[2]),
    ] {
        let got = [got.mean, got.p50, got.p90, got.p99].map(Option::unwrap);
        for (i, what) in ["mean", "p50", "p90", "p99"].iter().enumerate() {
            assert!(
                (got[i] - want[i]).abs() <= 0.01,
                "{name} {what}: {} vs pinned {}",
                got[i],
                want[i]
            );
        }
    }
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_4_workers_dp_2_figures_are_pinned() {
    // `aisim replay TRACE --workers 4 --dp-size 2`. The reference
    // (aisimulate-driver TRACE --workers 4 --dp-size 2), nearest rank, ms:
    // TTFT 318.77 / 205.05 / 806.90 / 1,522.23, TPOT 11.64 / 7.25 / 12.58 /
    // 169.14, E2E 1,554.66 / 1,021.02 / 3,604.18 / 6,755.21 (docs/engine.md).
    let mut spec = mooncake_spec(4);
    spec.engine.dp_size = 2;
    let r = run(spec).report;
    assert_eq!(r.outcomes.completed, 3993);
    assert_figures(
        &r,
        [
            [318.77, 205.05, 806.90, 1522.23],
            [11.64, 7.25, 12.58, 169.14],
            [1554.66, 1021.02, 3604.18, 6755.21],
        ],
    );
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_sglang_page_1_figures_are_pinned() {
    // `aisim replay TRACE --workers 8 --backend sglang --block-size 1
    // --num-gpu-blocks 1048576`, at the default max_prefill_tokens and with it
    // raised to 1,000,000. The reference (aisimulate-driver TRACE --workers 8
    // --backend sglang --num-gpu-blocks 1048576), nearest rank, ms, the same
    // with or without the raise: TTFT 297.77 / 135.28 / 780.08 / 1,435.14, TPOT
    // 7.67 / 6.59 / 8.29 / 16.19, E2E 1,294.02 / 888.77 / 2,917.08 / 5,266.90.
    // At the default aisim starts fewer chunks in a pass's leftover prompt
    // budget, as SGLang does (docs/engine.md).
    for (max_prefill, want) in [
        (
            None,
            [
                [297.42, 135.28, 777.65, 1388.91],
                [7.71, 6.59, 8.29, 16.19],
                [1294.06, 888.77, 2917.08, 5266.90],
            ],
        ),
        (
            Some(1_000_000),
            [
                [297.77, 135.28, 780.08, 1435.14],
                [7.67, 6.59, 8.29, 16.19],
                [1294.01, 888.77, 2917.08, 5266.90],
            ],
        ),
    ] {
        let mut spec = mooncake_spec(8);
        spec.engine.backend = aisim_core::Backend::Sglang;
        spec.engine.block_size = Some(1);
        spec.engine.num_gpu_blocks = Some(1 << 20);
        if let Some(m) = max_prefill {
            spec.engine.max_prefill_tokens = m;
        }
        let r = run(spec).report;
        assert_eq!(r.outcomes.completed, 3993);
        assert_eq!(r.cache.preemptions, 0);
        assert!((r.cache.prefix_reuse_ratio - 0.11167).abs() < 0.00001);
        assert_figures(&r, want);
    }
}

#[test]
#[ignore = "needs ../shared/traces"]
fn kv_routing_reuses_more_and_answers_sooner_than_round_robin_on_mooncake() {
    // inference-lab's kv-aware router reaches 34 % reuse against round
    // robin's 9.7 % on this trace; the issue asks for at least twice round
    // robin's reuse and a lower mean TTFT.
    let rr = default_replay(8);
    let mut spec = mooncake_spec(8);
    spec.router.policy = aisim_replay::spec::RouterKind::Kv;
    let kv = run(spec);
    let (r, k) = (&rr.report, &kv.report);
    for o in [&r.outcomes, &k.outcomes] {
        assert_eq!((o.offered, o.completed), (3993, 3993));
    }
    let (reuse_rr, reuse_kv) = (r.cache.prefix_reuse_ratio, k.cache.prefix_reuse_ratio);
    assert!(
        reuse_kv >= 2.0 * reuse_rr,
        "reuse: kv {reuse_kv} vs round robin {reuse_rr}"
    );
    let (ttft_rr, ttft_kv) = (
        r.latency.ttft_ms.mean.unwrap(),
        k.latency.ttft_ms.mean.unwrap(),
    );
    assert!(
        ttft_kv < ttft_rr,
        "mean TTFT: kv {ttft_kv} ms vs round robin {ttft_rr} ms"
    );
    // Figures of docs/replay.md's worked example (reuse in %, TTFT in ms).
    let figures = |r: &aisim_replay::report::ReplayReport| {
        (
            (r.cache.prefix_reuse_ratio * 1000.0).round() / 10.0,
            r.latency.ttft_ms.mean.unwrap().round(),
        )
    };
    assert_eq!(figures(r), (11.2, 302.0));
    assert_eq!(figures(k), (49.1, 174.0));
    let e = k.cache.router_expected.as_ref().unwrap();
    assert_eq!((e.requests, e.fell_short), (3993, 0));
}

#[test]
#[ignore = "needs ../shared/traces"]
fn kv_routing_on_sglang_reuses_more_than_round_robin_on_mooncake() {
    // The radix cache's page events feed kv's index as the block pool's do.
    let spec = |policy| {
        let mut spec = mooncake_spec(8);
        spec.engine.backend = aisim_core::Backend::Sglang;
        spec.engine.block_size = Some(1);
        spec.engine.num_gpu_blocks = Some(1 << 20);
        spec.router.policy = policy;
        spec
    };
    let rr = run(spec(aisim_replay::spec::RouterKind::RoundRobin)).report;
    let kv = run(spec(aisim_replay::spec::RouterKind::Kv)).report;
    for o in [&rr.outcomes, &kv.outcomes] {
        assert_eq!((o.offered, o.completed), (3993, 3993));
    }
    let (reuse_rr, reuse_kv) = (rr.cache.prefix_reuse_ratio, kv.cache.prefix_reuse_ratio);
    assert!(
        reuse_kv >= 2.0 * reuse_rr,
        "reuse: kv {reuse_kv} vs round robin {reuse_rr}"
    );
    let e = kv.cache.router_expected.as_ref().unwrap();
    assert_eq!(e.requests, 3993);
    assert!(e.achieved_ratio > 0.99, "{e:?}");
    println!(
        "sglang page 1: reuse round robin {reuse_rr:.4}, kv {reuse_kv:.4}; TTFT mean {:.1} / {:.1} ms; kv expected {e:?}",
        rr.latency.ttft_ms.mean.unwrap(),
        kv.latency.ttft_ms.mean.unwrap()
    );
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_disaggregated_4_plus_4_conserves_and_repeats() {
    use aisim_replay::spec::{KvTransferMode, KvTransferSpec, PoolSpec};
    let spec = || ReplaySpec {
        topology: TopologySpec::Disaggregated {
            prefill: PoolSpec::new(4),
            decode: PoolSpec::new(4),
            kv_transfer: KvTransferSpec {
                bytes_per_token: Some(131_072),
                mode: KvTransferMode::DestinationMissing,
                ..KvTransferSpec::default()
            },
        },
        ..mooncake_spec(8)
    };
    let a = run(spec());
    assert_eq!(json_without_host(&a), json_without_host(&run(spec())));
    // Decode workers running ahead between handoffs change nothing.
    let slow = aisim_replay::Replayer::new(spec(), aisim_replay::policy::SpecComposition)
        .unwrap()
        .with_records(true)
        .with_fast_forward(false)
        .run()
        .unwrap();
    assert_eq!(json_without_host(&a), json_without_host(&slow));
    let r = &a.report;
    assert_eq!(r.outcomes.completed, 3993);
    // Every prompt is computed once, on the prefill pool.
    assert_eq!(r.cache.prompt_tokens, 61_194_628);
    let t = r.kv_transfer.as_ref().unwrap();
    assert_eq!(t.transfers, 3993);
    assert!(t.transferred_tokens < r.cache.prompt_tokens, "{t:?}");
    let passes: Vec<u64> = r.pools.iter().map(|p| p.passes).collect();
    let per_worker: u64 = r.workers.iter().map(|w| w.passes).sum();
    assert_eq!(passes.iter().sum::<u64>(), per_worker);
}

/// The kv router's placements and guesses on the shared trace, 8 workers, on
/// each backend at its default page size, as they were before its events
/// became page runs (the index keyed by trace block must change nothing):
/// requests completed per worker, tokens reused, the router's expected and
/// achieved reuse and the requests that fell short, and the mean TTFT. Each
/// backend at the KV capacity it was pinned at, its default then: 16,384
/// blocks of 64 (vLLM), 32 (TensorRT-LLM) and 16 (SGLang) tokens.
#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_kv_router_placements_are_pinned_on_every_backend() {
    use aisim_core::Backend;
    use aisim_replay::spec::RouterKind;
    let pinned = [
        (
            Backend::Vllm,
            1_048_576,
            [694, 643, 628, 521, 454, 401, 370, 282],
            [30_017_280, 30_017_280, 30_017_280, 0],
            174.26030314725767,
        ),
        (
            Backend::Trtllm,
            524_288,
            [658, 706, 560, 548, 477, 420, 361, 263],
            [20_599_808, 20_599_872, 20_599_808, 2],
            222.39550182319053,
        ),
        (
            Backend::Sglang,
            262_144,
            [668, 610, 586, 546, 500, 421, 370, 292],
            [12_737_331, 12_763_041, 12_737_331, 14],
            260.31964855972956,
        ),
    ];
    for (backend, kv_tokens, completed, reuse, ttft_mean) in pinned {
        let mut spec = mooncake_spec(8);
        spec.engine.backend = backend;
        spec.engine.kv_budget_tokens = Some(kv_tokens);
        spec.router.policy = RouterKind::Kv;
        let r = run(spec).report;
        let got: Vec<u64> = r.workers.iter().map(|w| w.completed).collect();
        assert_eq!(got, completed, "{backend:?}: completed per worker");
        let e = r.cache.router_expected.as_ref().expect("kv guesses");
        assert_eq!(e.requests, 3993);
        assert_eq!(
            [
                r.cache.reused_tokens,
                e.expected_tokens,
                e.reused_tokens,
                e.fell_short
            ],
            reuse,
            "{backend:?}: reused, expected, achieved, fell short"
        );
        let mean = r.latency.ttft_ms.mean.unwrap();
        assert!(
            (mean - ttft_mean).abs() < 1e-9,
            "{backend:?}: TTFT mean {mean} vs pinned {ttft_mean}"
        );
    }
}

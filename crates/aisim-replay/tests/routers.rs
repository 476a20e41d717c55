//! The cache-aware, least-prefill-work and sticky placement policies in
//! whole replays, and what a library user injects through
//! `ReplayComposition` (placement, timing) and how the report names it.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use aisim_core::kv::KvEvent;
use aisim_core::timing::{PassShape, PassTime, TimingModel};
use aisim_core::Request;
use aisim_replay::policy::{
    KvRouter, KvRouterConfig, Placement, PlacementPolicy, PromptPages, ReplayComposition,
    RouterIndex, SpecComposition, WorkerView,
};
use aisim_replay::spec::{ArrivalSpec, RouterKind, SyntheticSpec, TopologySpec, WorkloadSpec};
use aisim_replay::{ReplayError, ReplayOutput, ReplaySpec, Replayer};
use common::*;

/// 400 requests in 64 prefix groups of 2,048 tokens, on `workers` workers
/// of 600 blocks (38,400 tokens) each: no worker can hold every prefix.
fn grouped(workers: u32, policy: RouterKind) -> ReplaySpec {
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            prefix_groups: 64,
            prefix_tokens: 2048,
            ..SyntheticSpec::fixed(400, 2560, 16, ArrivalSpec::Poisson { rate: 40.0 })
        }),
        topology: TopologySpec::Aggregated { workers },
        ..ReplaySpec::default()
    };
    spec.engine.num_gpu_blocks = Some(600);
    spec.router.policy = policy;
    spec
}

/// The demo's multi-turn sessions on 4 workers.
fn demo(policy: RouterKind) -> ReplaySpec {
    let mut spec = ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 4 },
        ..ReplaySpec::default()
    };
    spec.router.policy = policy;
    spec
}

#[test]
fn every_new_policy_is_deterministic_and_its_counts_add_up() {
    let mut kv_sampled = grouped(4, RouterKind::Kv);
    kv_sampled.router.temperature = 0.7;
    let mut sticky_kv = demo(RouterKind::Sticky);
    sticky_kv.router.inner = Some(RouterKind::Kv);
    let mut lpwl_timeouts = grouped(3, RouterKind::Lpwl);
    lpwl_timeouts.discipline.timeout_s = Some(0.4);
    lpwl_timeouts.engine.num_gpu_blocks = Some(200);
    let cases = [
        ("kv", grouped(4, RouterKind::Kv)),
        ("kv at temperature 0.7", kv_sampled),
        ("lpwl", grouped(4, RouterKind::Lpwl)),
        ("lpwl with timeouts", lpwl_timeouts),
        ("sticky", demo(RouterKind::Sticky)),
        ("sticky over kv", sticky_kv),
        ("kv on the demo", demo(RouterKind::Kv)),
    ];
    for (what, spec) in cases {
        let a = run(spec.clone());
        let b = run(spec);
        assert_eq!(json_without_host(&a), json_without_host(&b), "{what}");
        assert_counts_add_up(&a, what);
        assert!(a.report.outcomes.offered > 0, "{what}");
    }
}

#[test]
fn the_seed_moves_kv_placement_only_at_a_positive_temperature() {
    let placements = |o: &ReplayOutput| o.records.iter().map(|r| r.worker).collect::<Vec<_>>();
    // The demo is a trace: the seed moves nothing else.
    let mut spec = demo(RouterKind::Kv);
    let a = run(spec.clone());
    spec.seed = 9;
    assert_eq!(placements(&a), placements(&run(spec.clone())));
    spec.router.temperature = 1.0;
    let b = run(spec.clone());
    spec.seed = 10;
    assert_ne!(placements(&b), placements(&run(spec)));
}

#[test]
fn sticky_keeps_every_session_on_one_worker() {
    for inner in [None, Some(RouterKind::Kv), Some(RouterKind::Lpwl)] {
        let mut spec = demo(RouterKind::Sticky);
        spec.router.inner = inner;
        let out = run(spec);
        let mut homes: BTreeMap<u64, BTreeSet<(u32, u32)>> = BTreeMap::new();
        for r in &out.records {
            if let Some(s) = r.session {
                homes.entry(s).or_default().insert((r.worker, r.rank));
            }
        }
        assert!(homes.len() > 1, "the demo has sessions");
        for (s, h) in &homes {
            assert_eq!(h.len(), 1, "{inner:?}: session {s} ran on {h:?}");
        }
        let workers: BTreeSet<u32> = homes.values().flatten().map(|p| p.0).collect();
        assert!(workers.len() > 1, "{inner:?}: sessions spread over workers");
        assert_eq!(
            out.report.policies.placement,
            format!("sticky({})", inner.unwrap_or_default().name())
        );
    }
}

#[test]
fn kv_reuses_more_than_round_robin_and_its_guesses_are_reported() {
    let rr = run(grouped(4, RouterKind::RoundRobin));
    let kv = run(grouped(4, RouterKind::Kv));
    let (r, k) = (&rr.report.cache, &kv.report.cache);
    assert!(
        k.prefix_reuse_ratio > 1.5 * r.prefix_reuse_ratio,
        "kv {} vs round robin {}",
        k.prefix_reuse_ratio,
        r.prefix_reuse_ratio
    );
    assert!(r.router_expected.is_none(), "round robin makes no guess");
    let e = k.router_expected.as_ref().expect("kv guesses");
    assert_eq!(e.requests, kv.report.outcomes.offered);
    // The totals are the records' own.
    let expected: u64 = kv
        .records
        .iter()
        .map(|r| u64::from(r.expected_cached_tokens.unwrap()))
        .sum();
    let reused: u64 = kv.records.iter().map(|r| u64::from(r.reused_first)).sum();
    assert_eq!((e.expected_tokens, e.reused_tokens), (expected, reused));
    let short = kv
        .records
        .iter()
        .filter(|r| r.reused_first < r.expected_cached_tokens.unwrap())
        .count() as u64;
    assert_eq!(e.fell_short, short);
    assert!(e.expected_tokens > 0);
    // A whole block boundary: the router's guess is in engine blocks.
    let bs = kv.report.pools[0].kv_block_size;
    assert!(kv
        .records
        .iter()
        .all(|r| r.expected_cached_tokens.unwrap() % bs == 0));
    assert_eq!(kv.report.policies.placement, "kv");
    assert_eq!(rr.report.policies.placement, "round_robin");
    assert_eq!(kv.report.policies.scaling, "none");
}

/// Every pass takes 7 ms, whatever it holds.
#[derive(Debug)]
struct SevenMs;

impl TimingModel for SevenMs {
    fn name(&self) -> &str {
        "seven_ms"
    }
    fn pass_time(&self, _shape: &PassShape<'_>) -> PassTime {
        PassTime {
            prefill_s: 0.007,
            decode_s: 0.0,
        }
    }
}

/// Everything on the last worker, with its own name, and 7 ms passes.
struct LastWorker;

struct LastWorkerPolicy;

impl PlacementPolicy for LastWorkerPolicy {
    fn name(&self) -> &str {
        "last_worker"
    }
    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        Placement::at(view.workers() - 1, 0)
    }
}

impl ReplayComposition for LastWorker {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(LastWorkerPolicy)
    }
    fn timing(&self, _spec: &ReplaySpec) -> Result<Arc<dyn TimingModel>, ReplayError> {
        Ok(Arc::new(SevenMs))
    }
}

#[test]
fn an_injected_timing_model_and_policy_run_and_are_named() {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec::fixed(
            1,
            100,
            4,
            ArrivalSpec::Poisson { rate: 1.0 },
        )),
        topology: TopologySpec::Aggregated { workers: 3 },
        ..ReplaySpec::default()
    };
    let out = Replayer::new(spec, LastWorker)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap();
    let r = &out.records[0];
    // One prefill pass then three decode passes of 7 ms each.
    assert_eq!(r.first_token_ns - r.planned_ns, 7 * MS);
    assert_eq!(r.terminal_ns - r.planned_ns, 28 * MS);
    assert_eq!(r.worker, 2);
    let p = &out.report.policies;
    assert_eq!(
        (p.placement.as_str(), p.scaling.as_str(), p.timing.as_str()),
        ("last_worker", "none", "seven_ms")
    );
}

/// Places on a worker or rank that does not exist.
struct Beyond(Placement);

struct BeyondPolicy(Placement);

impl PlacementPolicy for BeyondPolicy {
    fn name(&self) -> &str {
        "beyond"
    }
    fn place(&mut self, _req: &Request, _view: &dyn WorkerView) -> Placement {
        self.0
    }
}

impl ReplayComposition for Beyond {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(BeyondPolicy(self.0))
    }
}

#[test]
fn an_out_of_range_placement_stops_the_replay_with_an_internal_error() {
    let mut spec = demo(RouterKind::RoundRobin);
    spec.engine.dp_size = 2;
    for bad in [Placement::at(4, 0), Placement::at(1, 2)] {
        let e = Replayer::new(spec.clone(), Beyond(bad))
            .unwrap()
            .run()
            .unwrap_err();
        assert!(matches!(e, ReplayError::Placement { policy, .. } if policy == "beyond"));
    }
    // In range it runs.
    let ok = Replayer::new(spec, Beyond(Placement::at(3, 1)))
        .unwrap()
        .run()
        .unwrap();
    assert_counts_add_up(&ok, "in range");
}

#[test]
fn a_spec_refuses_router_parameters_its_policy_does_not_read() {
    let bad = |f: &dyn Fn(&mut ReplaySpec)| {
        let mut spec = demo(RouterKind::RoundRobin);
        f(&mut spec);
        Replayer::new(spec, SpecComposition)
            .err()
            .map(|e| e.to_string())
    };
    let e = bad(&|s| s.router.temperature = 0.5).unwrap();
    assert!(
        e.contains("router.temperature") && e.contains("only the kv policy"),
        "{e}"
    );
    let e = bad(&|s| s.router.prefill_load_scale = 2.0).unwrap();
    assert!(e.contains("router.prefill_load_scale"), "{e}");
    let e = bad(&|s| s.router.inner = Some(RouterKind::Kv)).unwrap();
    assert!(
        e.contains("router.inner") && e.contains("only the sticky policy"),
        "{e}"
    );
    let e = bad(&|s| {
        s.router.policy = RouterKind::Sticky;
        s.router.inner = Some(RouterKind::Sticky);
    })
    .unwrap();
    assert!(e.contains("router.inner"), "{e}");
    for t in [-1.0, f64::NAN, f64::INFINITY] {
        let e = bad(&|s| {
            s.router.policy = RouterKind::Kv;
            s.router.temperature = t;
        })
        .unwrap();
        assert!(
            e.contains("router.temperature") && e.contains("finite number, 0 or more"),
            "{e}"
        );
    }
    // Sticky over kv reads the kv parameters.
    assert!(bad(&|s| {
        s.router.policy = RouterKind::Sticky;
        s.router.inner = Some(RouterKind::Kv);
        s.router.temperature = 0.3;
        s.router.prefill_load_scale = 0.5;
    })
    .is_none());
}

#[test]
fn a_spec_file_with_router_parameters_round_trips() {
    let mut spec = demo(RouterKind::Sticky);
    spec.router.inner = Some(RouterKind::Kv);
    spec.router.temperature = 0.25;
    let back: ReplaySpec = serde_json::from_str(&spec.to_json()).unwrap();
    assert_eq!(back, spec);
    // A spec written before the new fields reads with their defaults.
    let path = temp_file(
        "router-spec.json",
        r#"{"version": 1, "workload": {"kind": "demo"}, "router": {"policy": "kv"}}"#,
    );
    let old = ReplaySpec::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            old.router.temperature,
            old.router.prefill_load_scale,
            old.router.inner
        ),
        (0.0, 1.0, None)
    );
}

/// `grouped` on SGLang at its default one-token pages, the same token
/// capacity a worker (38,400 pages).
fn grouped_sglang(workers: u32, policy: RouterKind) -> ReplaySpec {
    let mut spec = grouped(workers, policy);
    spec.engine.backend = aisim_core::Backend::Sglang;
    spec.engine.block_size = None;
    spec.engine.num_gpu_blocks = Some(600 * 64);
    spec
}

#[test]
fn kv_on_sglang_is_fed_by_the_radix_cache_and_reuses_more_than_round_robin() {
    let rr = run(grouped_sglang(4, RouterKind::RoundRobin));
    let kv = run(grouped_sglang(4, RouterKind::Kv));
    assert_eq!(kv.report.pools[0].kv_block_size, 1, "SGLang's page 1");
    let (r, k) = (&rr.report.cache, &kv.report.cache);
    assert!(
        k.prefix_reuse_ratio > 1.3 * r.prefix_reuse_ratio,
        "kv {} vs round robin {}",
        k.prefix_reuse_ratio,
        r.prefix_reuse_ratio
    );
    // The index follows the radix cache's page events: its guesses hold
    // (short only where a page was evicted between placement and admission).
    let e = k.router_expected.as_ref().expect("kv guesses");
    assert_eq!(e.requests, kv.report.outcomes.offered);
    assert!(e.expected_tokens > 0);
    assert!(e.achieved_ratio > 0.99, "{e:?}");
    assert_counts_add_up(&kv, "kv on sglang");
    // Fast-forwarded decode runs hand their evictions over too.
    let slow = Replayer::new(grouped_sglang(4, RouterKind::Kv), SpecComposition)
        .unwrap()
        .with_records(true)
        .with_fast_forward(false)
        .run()
        .unwrap();
    assert_eq!(json_without_host(&kv), json_without_host(&slow));
}

/// `grouped` disaggregated 2 + 2 (`policy` places on both pools).
fn grouped_disagg(policy: RouterKind) -> ReplaySpec {
    use aisim_replay::spec::{KvTransferSpec, PoolSpec};
    ReplaySpec {
        topology: TopologySpec::Disaggregated {
            prefill: PoolSpec::new(2),
            decode: PoolSpec::new(2),
            kv_transfer: aisim_replay::spec::KvTransferSpec {
                bytes_per_token: Some(131_072),
                ..KvTransferSpec::default()
            },
        },
        ..grouped(4, policy)
    }
}

#[test]
fn the_new_policies_place_both_pools_of_a_disaggregated_run() {
    let rr = run(grouped_disagg(RouterKind::RoundRobin));
    for policy in [RouterKind::Kv, RouterKind::Lpwl, RouterKind::Sticky] {
        let a = run(grouped_disagg(policy));
        assert_eq!(
            json_without_host(&a),
            json_without_host(&run(grouped_disagg(policy))),
            "{policy:?}"
        );
        assert_counts_add_up(&a, policy.name());
        assert_eq!(a.report.outcomes.completed, a.report.outcomes.offered);
        assert!(a.records.iter().all(|r| r.decode_worker.is_some()));
        let slow = Replayer::new(grouped_disagg(policy), SpecComposition)
            .unwrap()
            .with_records(true)
            .with_fast_forward(false)
            .run()
            .unwrap();
        assert_eq!(
            json_without_host(&a),
            json_without_host(&slow),
            "{policy:?}"
        );
    }
    // kv follows the prefill pool's cache there, where prompts are computed.
    let kv = run(grouped_disagg(RouterKind::Kv));
    let (r, k) = (&rr.report.cache, &kv.report.cache);
    assert!(
        k.prefix_reuse_ratio > 1.2 * r.prefix_reuse_ratio,
        "kv {} vs round robin {}",
        k.prefix_reuse_ratio,
        r.prefix_reuse_ratio
    );
    let e = k
        .router_expected
        .as_ref()
        .expect("kv guesses on the prefill pool");
    assert_eq!(e.requests, kv.report.outcomes.offered);
}

/// Places on the prefill pool with round robin, and beyond the decode pool.
struct BeyondDecode;

impl ReplayComposition for BeyondDecode {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(aisim_replay::policy::RoundRobin::default())
    }
    fn decode_placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(BeyondPolicy(Placement::at(2, 0)))
    }
}

#[test]
fn an_out_of_range_decode_placement_names_the_decode_pool() {
    let e = Replayer::new(grouped_disagg(RouterKind::RoundRobin), BeyondDecode)
        .unwrap()
        .run()
        .unwrap_err();
    assert!(e.is_internal(), "{e}");
    assert!(
        matches!(&e, ReplayError::Placement { policy, pool, worker: 2, workers: 2, .. } if policy == "beyond" && pool == "decode"),
        "{e}"
    );
}

/// On SGLang at its one-token pages, with every worker idle (equal loads),
/// `kv` sends a prompt to the worker holding its prefix, and what it
/// expected to find there is what the engine reused: three 512-token trace
/// blocks on worker 0, two on worker 1.
#[test]
fn kv_on_sglang_page_1_follows_the_prefix_and_guesses_the_engines_reuse() {
    let trace = [
        r#"{"timestamp": 0, "input_length": 2048, "output_length": 2, "hash_ids": [1, 2, 3, 4]}"#,
        r#"{"timestamp": 0, "input_length": 1536, "output_length": 2, "hash_ids": [20, 21, 22]}"#,
        r#"{"timestamp": 10000, "input_length": 2048, "output_length": 2, "hash_ids": [1, 2, 3, 9]}"#,
        r#"{"timestamp": 20000, "input_length": 1500, "output_length": 2, "hash_ids": [20, 21, 7]}"#,
    ]
    .join("\n");
    let path = temp_file("kv_sglang_page_1.jsonl", &trace);
    let mut spec = trace_spec(path, 4, 10.0, 5.0);
    spec.engine.backend = aisim_core::Backend::Sglang;
    spec.router.policy = RouterKind::Kv;
    let out = run(spec);
    assert_eq!(out.report.pools[0].kv_block_size, 1, "SGLang's page 1");
    assert_eq!(out.report.outcomes.completed, 4);
    // The first two start empty (the second sees the first's queued prompt).
    assert_eq!((record(&out, 0).worker, record(&out, 1).worker), (0, 1));
    for (id, worker, cached) in [(2, 0, 3 * 512), (3, 1, 2 * 512)] {
        let r = record(&out, id);
        assert_eq!(r.worker, worker, "request {id}");
        assert_eq!(r.expected_cached_tokens, Some(cached), "request {id}");
        assert_eq!(r.reused_first, cached, "request {id}");
    }
    let e = out.report.cache.router_expected.as_ref().unwrap();
    assert_eq!(
        (e.expected_tokens, e.reused_tokens, e.fell_short),
        (2560, 2560, 0)
    );
}

/// The kv router, with beside it an index fed the same events told page by
/// page, as the radix cache published them before its events became runs:
/// at every placement both must find the same overlap on every rank.
struct PerPageShadow {
    kv: KvRouter,
    per_page: RouterIndex,
    /// (placements compared, of which some rank overlapped, mismatches).
    seen: Arc<std::sync::Mutex<[u64; 3]>>,
}

impl PlacementPolicy for PerPageShadow {
    fn name(&self) -> &str {
        self.kv.name()
    }

    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement {
        let matchable = req.input_length.saturating_sub(1);
        let (mut spans, mut pages) = (PromptPages::default(), PromptPages::default());
        spans.fill(req, 1, matchable, self.kv.index());
        pages.fill(req, 1, matchable, &self.per_page);
        let mut seen = self.seen.lock().unwrap();
        seen[0] += 1;
        let mut overlapped = false;
        for w in 0..view.workers() {
            let a = self.kv.index().overlap(w, 0, &spans);
            let b = self.per_page.overlap(w, 0, &pages);
            seen[2] += u64::from(a != b);
            overlapped |= a > 0;
        }
        seen[1] += u64::from(overlapped);
        assert_eq!(self.kv.index().len(), self.per_page.len());
        self.kv.place(req, view)
    }

    fn wants_kv_events(&self) -> bool {
        true
    }

    fn on_kv_events(&mut self, worker: u32, rank: u32, events: &[KvEvent]) {
        self.kv.on_kv_events(worker, rank, events);
        let per_page: Vec<KvEvent> = events.iter().flat_map(|e| e.per_page()).collect();
        self.per_page.apply(worker, rank, &per_page);
    }
}

struct Shadowed(Arc<std::sync::Mutex<[u64; 3]>>);

impl ReplayComposition for Shadowed {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(PerPageShadow {
            kv: KvRouter::new(KvRouterConfig {
                block_size: 1,
                prefill_load_scale: 1.0,
                temperature: 0.0,
                seed: 0,
            }),
            per_page: RouterIndex::default(),
            seen: self.0.clone(),
        })
    }
}

#[test]
fn the_kv_index_of_page_runs_equals_the_per_page_one_on_sglang_and_is_deterministic() {
    // `grouped` on SGLang evicts (64 prefixes of 2,048 tokens against 38,400
    // pages a worker), so runs are stored and removed in pieces.
    let seen = Arc::new(std::sync::Mutex::new([0u64; 3]));
    let shadowed = Replayer::new(grouped_sglang(4, RouterKind::Kv), Shadowed(seen.clone()))
        .unwrap()
        .with_records(true)
        .run()
        .unwrap();
    let [placed, overlapped, mismatched] = *seen.lock().unwrap();
    assert_eq!(placed, 400);
    assert!(
        overlapped > 100,
        "only {overlapped} placements found a prefix"
    );
    assert_eq!(mismatched, 0);
    // The shadow places as `kv` does; and `kv` is deterministic.
    let (a, b) = (
        run(grouped_sglang(4, RouterKind::Kv)),
        run(grouped_sglang(4, RouterKind::Kv)),
    );
    assert_eq!(json_without_host(&a), json_without_host(&b));
    assert_eq!(json_without_host(&a), json_without_host(&shadowed));
}

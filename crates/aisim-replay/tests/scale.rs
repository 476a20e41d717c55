//! Replay at scale: memory and time follow what a run uses, not the size of
//! the topology, the request count or the length of a session.

mod common;

use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, RouterKind, SyntheticSpec, TopologySpec, WorkloadSpec};
use aisim_replay::workload::{SyntheticWorkload, Workload};
use aisim_replay::{ReplaySpec, Replayer};
use common::*;

fn synthetic(requests: u64, turns: u32) -> SyntheticSpec {
    SyntheticSpec {
        turns,
        ..SyntheticSpec::fixed(requests, 600, 20, ArrivalSpec::Constant { rate: 1000.0 })
    }
}

fn spec_with(workers: u32, workload: SyntheticSpec) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Synthetic(workload),
        topology: TopologySpec::Aggregated { workers },
        ..ReplaySpec::default()
    }
}

#[test]
fn idle_workers_cost_no_engine() {
    for (workers, policy) in [
        (100_000, RouterKind::RoundRobin),
        (100_000, RouterKind::LeastLoaded),
        (100_000, RouterKind::Random),
        (1_000_000, RouterKind::RoundRobin),
    ] {
        let mut spec = spec_with(workers, synthetic(4, 1));
        spec.router.policy = policy;
        let out = run(spec);
        let pool = &out.report.pools[0];
        assert_eq!(out.report.outcomes.completed, 4, "{policy:?}");
        assert_eq!(pool.workers, workers);
        // Only the workers that got a request were given an engine (and KV pool).
        assert!((1..=4).contains(&pool.workers_used), "{policy:?}: {pool:?}");
        assert_eq!(out.report.workers.len(), pool.workers_used as usize);
        let mut used: Vec<u32> = out.records.iter().map(|r| r.worker).collect();
        used.sort_unstable();
        used.dedup();
        let listed: Vec<u32> = out.report.workers.iter().map(|w| w.worker).collect();
        assert_eq!(listed, used, "the report lists exactly the workers used");
        // Every worker is provisioned, used or not.
        assert!((pool.worker_seconds - workers as f64 * out.report.duration_s).abs() < 1e-6);
    }
}

#[test]
fn least_loaded_spreads_over_lazy_workers() {
    // 40 requests arriving faster than they finish: every worker is used, evenly.
    let mut spec = spec_with(8, synthetic(40, 1));
    spec.router.policy = RouterKind::LeastLoaded;
    let out = run(spec.clone());
    assert_eq!(out.report.pools[0].workers_used, 8);
    let mut spread = vec![0u32; 8];
    for r in &out.records {
        spread[r.worker as usize] += 1;
    }
    assert!(spread.iter().all(|&n| n == 5), "{spread:?}");
}

#[test]
fn topologies_past_the_bounds_are_refused_naming_the_field() {
    let spec = spec_with(aisim_replay::spec::MAX_WORKERS + 1, synthetic(4, 1));
    let err = Replayer::new(spec, SpecComposition)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("topology.workers") && err.contains("16777217"),
        "{err}"
    );
    let mut spec = spec_with(1, synthetic(4, 1));
    spec.engine.dp_size = 100_000;
    let err = Replayer::new(spec, SpecComposition)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("engine.dp_size") && err.contains("100000"),
        "{err}"
    );
    assert!(err.contains("at most 1024"), "{err}");
}

/// A session's turns share their block ids: each turn moves the previous
/// turn's ids and appends its own, so over k turns the id vector is
/// reallocated O(log k) times (amortized growth), not copied k times.
#[test]
fn a_session_reuses_its_block_ids_from_turn_to_turn() {
    let turns = 2000;
    let mut w = SyntheticWorkload::new(synthetic(1, turns), 3, 1.0);
    let mut prev = w.next_root().unwrap();
    let (mut allocations, mut n, mut blocks) = (1, 1, 0);
    let mut at = prev.request.hash_ids.as_ptr();
    while let Some(next) = w.next_turn(prev) {
        blocks = next.request.hash_ids.len();
        let now_at = next.request.hash_ids.as_ptr();
        allocations += usize::from(now_at != at);
        at = now_at;
        n += 1;
        prev = next;
    }
    assert_eq!(n, turns);
    let log2 = usize::BITS - blocks.leading_zeros();
    assert!(
        allocations <= 2 * log2 as usize + 2,
        "{allocations} allocations for {blocks} ids over {turns} turns"
    );
}

#[test]
fn rejections_are_counted_by_kind_not_by_message() {
    // Every turn past the KV capacity is rejected, each with its own block
    // count in the message: one count per kind, whatever the session length.
    let mut spec = spec_with(1, synthetic(1, 3000));
    spec.engine.num_gpu_blocks = Some(256);
    let out = Replayer::new(spec, SpecComposition).unwrap().run().unwrap();
    let o = out.report.outcomes;
    assert_eq!(o.offered, 3000);
    assert!(o.rejected > 2000, "{o:?}");
    assert_eq!(
        out.report.rejections.into_iter().collect::<Vec<_>>(),
        vec![("larger_than_kv_cache".to_string(), o.rejected)]
    );
    assert!(
        out.records.is_empty(),
        "records are kept only when asked for"
    );
}

#[test]
fn past_the_exact_limit_percentiles_are_sketched_and_say_so() {
    let spec = spec_with(2, synthetic(300, 1));
    let exact = run(spec.clone()).report;
    let sketched = Replayer::new(spec, SpecComposition)
        .unwrap()
        .with_exact_limit(100)
        .run()
        .unwrap()
        .report;
    assert!(exact.discipline.sketched.is_empty());
    let d = &sketched.discipline;
    assert_eq!(d.exact_values_limit, 100);
    assert!(
        d.sketched.iter().any(|s| s == "latency.ttft_ms"),
        "{:?}",
        d.sketched
    );
    // ITL holds few distinct gaps here (and is checked against its limit only
    // when its buffer folds): still exact.
    assert!(
        !d.sketched.iter().any(|s| s == "latency.itl_ms"),
        "{:?}",
        d.sketched
    );
    assert_eq!(exact.latency.itl_ms, sketched.latency.itl_ms);
    let (a, b) = (&exact.latency.ttft_ms, &sketched.latency.ttft_ms);
    assert_eq!((a.count, a.min, a.max), (b.count, b.min, b.max));
    for (x, y) in [
        (a.p50, b.p50),
        (a.p90, b.p90),
        (a.p99, b.p99),
        (a.p999, b.p999),
    ] {
        let (x, y) = (x.unwrap(), y.unwrap());
        assert!(
            (x - y).abs() <= d.sketch_relative_accuracy * x,
            "{x} vs {y}"
        );
    }
    let (m, n) = (a.mean.unwrap(), b.mean.unwrap());
    assert!((m - n).abs() <= 1e-9 * m);
    assert_eq!(exact.outcomes, sketched.outcomes);
}

/// The in-flight curve folded as requests come and go gives what sorting
/// every record's dispatch and end edges would (the derivation it replaced),
/// under timeouts, drains, stops, sessions and concurrency mode.
#[test]
fn concurrency_folded_on_the_fly_is_the_sort_of_all_edges() {
    let mut cases = Vec::new();
    for turns in [1, 3] {
        for timeout in [None, Some(0.3)] {
            for (stop, drain, concurrency) in [
                (None, None, None),
                (Some(2.0), None, None),
                (None, Some(0.2), None),
                (None, None, Some(4)),
            ] {
                let mut spec = spec_with(
                    2,
                    SyntheticSpec {
                        turns,
                        think_ms: 20.0,
                        ..SyntheticSpec::fixed(60, 2000, 60, ArrivalSpec::Poisson { rate: 40.0 })
                    },
                );
                spec.discipline.timeout_s = timeout;
                spec.discipline.max_sim_time_s = stop;
                spec.discipline.drain_s = drain;
                spec.admission.concurrency = concurrency;
                cases.push(spec);
            }
        }
    }
    for spec in cases {
        let out = run(spec.clone());
        let end = (out.report.duration_s * 1e9).round() as u64;
        let mut edges: Vec<(u64, i64)> = Vec::new();
        let mut busy = 0u64;
        for r in &out.records {
            let until = if r.terminal_ns == u64::MAX {
                end
            } else {
                r.terminal_ns
            };
            edges.push((r.dispatch_ns, 1));
            edges.push((until, -1));
            busy += until - r.dispatch_ns;
        }
        edges.sort_unstable();
        let (mut cur, mut peak) = (0i64, 0i64);
        for (_, d) in edges {
            cur += d;
            peak = peak.max(cur);
        }
        let c = &out.report.concurrency;
        assert_eq!(c.peak, peak as u64, "{:?}", spec.discipline);
        let mean = busy as f64 / (out.report.duration_s * 1e9);
        assert!(
            (c.mean - mean).abs() <= 1e-9 * mean.max(1.0),
            "{} vs {mean}",
            c.mean
        );
    }
}

/// Collects streamed records, and fails once it has seen `fail_after`.
struct Stream {
    batches: Vec<Vec<aisim_replay::collector::RequestRecord>>,
    fail_after: Option<usize>,
}

impl aisim_replay::runtime::ReplayObserver for Stream {
    fn records(&mut self, batch: &[aisim_replay::collector::RequestRecord]) -> std::io::Result<()> {
        self.batches.push(batch.to_vec());
        let seen: usize = self.batches.iter().map(Vec::len).sum();
        match self.fail_after {
            Some(n) if seen >= n => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "reader gone",
            )),
            _ => Ok(()),
        }
    }
}

#[test]
fn streamed_records_are_every_kept_record_once_a_batch_at_a_time() {
    let spec = spec_with(64, synthetic(20_000, 1));
    let kept = Replayer::new(spec.clone(), SpecComposition)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap();
    let mut stream = Stream {
        batches: vec![],
        fail_after: None,
    };
    let streamed = Replayer::new(spec, SpecComposition)
        .unwrap()
        .stream_records()
        .run_observed(&mut stream)
        .unwrap();
    assert!(
        streamed.records.is_empty(),
        "nothing is kept when streaming"
    );
    assert_eq!(
        json_without_host(&streamed),
        json_without_host(&kept),
        "streaming changes no figure"
    );
    // Bounded batches: the runtime hands them over once 4,096 are held, and
    // one step of the loop ends at most the requests then in flight.
    assert!(stream.batches.len() > 2, "{} batches", stream.batches.len());
    let sizes: Vec<usize> = stream.batches.iter().map(Vec::len).collect();
    let peak = streamed.report.concurrency.peak as usize;
    assert!(
        peak < 10_000,
        "the test needs a run with fewer in flight: {peak}"
    );
    assert!(
        sizes.iter().all(|&n| n <= 4_096 + peak),
        "{sizes:?}, peak {peak}"
    );
    let mut all: Vec<_> = stream.batches.concat();
    all.sort_unstable_by_key(|r| r.id);
    let a = serde_json::to_string(&all).unwrap();
    let b = serde_json::to_string(&kept.records).unwrap();
    assert_eq!(a, b, "the same records, each once");
}

#[test]
fn a_record_sink_that_fails_stops_the_replay() {
    let mut stream = Stream {
        batches: vec![],
        fail_after: Some(1),
    };
    let e = Replayer::new(spec_with(4, synthetic(1_000_000, 1)), SpecComposition)
        .unwrap()
        .stream_records()
        .run_observed(&mut stream)
        .unwrap_err();
    assert!(matches!(e, aisim_replay::ReplayError::Output(_)), "{e}");
    // It stopped at the first batch instead of running a million requests.
    assert_eq!(stream.batches.len(), 1);
    assert!(stream.batches[0].len() < 10_000);
}

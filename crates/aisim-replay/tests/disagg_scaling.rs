//! The load planner on each disaggregated pool: both pools scale up under a
//! burst and back down after it within their own bounds; a draining worker
//! of each pool takes no new request (prefill: no prompt; decode: no
//! handoff) and stops only once what it holds is done, transfers included;
//! worker-seconds per pool from its timeline; determinism.

mod common;

use aisim_core::timing::TimingSpec;
use aisim_core::EngineConfig;
use aisim_replay::policy::SpecComposition;
use aisim_replay::report::ScalingReport;
use aisim_replay::spec::{
    ArrivalSpec, KvTransferSpec, LengthSpec, LoadPlannerSpec, PoolBoundsSpec, PoolSpec,
    ScalingKind, SyntheticSpec, TopologySpec, WorkloadSpec,
};
use aisim_replay::{ReplayOutput, ReplaySpec, Replayer};
use common::*;

fn disagg_topology(prefill: PoolSpec, decode: PoolSpec, latency_ms: f64) -> TopologySpec {
    TopologySpec::Disaggregated {
        prefill,
        decode,
        kv_transfer: KvTransferSpec {
            gb_s: 1.0,
            latency_ms,
            bytes_per_token: Some(100),
            ..KvTransferSpec::default()
        },
    }
}

/// A pool of `workers` whose workers run at most `seqs` requests at once.
fn pool(workers: u32, seqs: u32) -> PoolSpec {
    PoolSpec {
        workers,
        engine: Some(Box::new(EngineConfig {
            max_num_seqs: seqs,
            ..EngineConfig::default()
        })),
        ..PoolSpec::new(workers)
    }
}

/// 400 requests in the first 8 s, then one every 4 s until 130 s, on
/// 1 + 1 workers: a prefill worker computes one 40 ms prompt at a time
/// (25 a second), a decode worker holds 8 requests of 64 10-ms tokens
/// (12.5 a second), against 50 a second in the burst.
fn bursty() -> ReplaySpec {
    let mut rows = String::new();
    let row = |t: u64| {
        format!("{{\"timestamp\": {t}, \"input_length\": 512, \"output_length\": 64, \"hash_ids\": []}}\n")
    };
    for i in 0..400 {
        rows.push_str(&row(i * 20));
    }
    for i in 0..30 {
        rows.push_str(&row(10_000 + i * 4_000));
    }
    let mut spec = trace_spec(temp_file("disagg_bursty.jsonl", &rows), 1, 40.0, 10.0);
    spec.topology = disagg_topology(pool(1, 1), pool(1, 8), 1.0);
    spec.scaling.policy = ScalingKind::Load;
    spec.scaling.load = Some(LoadPlannerSpec {
        tick_s: 2.0,
        startup_s: 1.0,
        ttft_ms: Some(500.0),
        tpot_ms: Some(50.0),
        queue_depth: 2.0,
        prefill: Some(PoolBoundsSpec {
            min_workers: None,
            max_workers: Some(4),
        }),
        decode: Some(PoolBoundsSpec {
            min_workers: None,
            max_workers: Some(6),
        }),
        ..LoadPlannerSpec::default()
    });
    spec
}

fn scaling(out: &ReplayOutput) -> &ScalingReport {
    out.report.scaling.as_ref().expect("a scaling section")
}

fn counts(s: &ScalingReport, pool: &str) -> Vec<(f64, u32)> {
    s.timeline
        .iter()
        .filter(|c| c.pool == pool)
        .map(|c| (c.t_s, c.workers))
        .collect()
}

#[test]
fn each_pool_scales_up_under_a_burst_and_down_after_it_within_its_own_bounds() {
    let out = run(bursty());
    assert_counts_add_up(&out, "disaggregated planner");
    assert_eq!(out.report.outcomes.completed, 430);
    let s = scaling(&out);
    for (pool, max) in [("prefill", 4), ("decode", 6)] {
        let c = counts(s, pool);
        let n: Vec<u32> = c.iter().map(|&(_, n)| n).collect();
        assert!(n.iter().all(|&n| (1..=max).contains(&n)), "{pool}: {c:?}");
        assert_eq!(n[0], 1, "{pool} starts with the topology's count");
        let peak = *n.iter().max().unwrap();
        assert!(peak >= 3, "{pool} scaled up under the burst: {c:?}");
        let at_peak = c.iter().find(|x| x.1 == peak).unwrap().0;
        assert!(at_peak < 20.0, "{pool} peaked in the burst: {c:?}");
        assert_eq!(*n.last().unwrap(), 1, "{pool} back to its minimum: {c:?}");
        for w in c.windows(2) {
            assert!(w[0].0 < w[1].0, "{pool}: one entry per change, in order");
            assert_ne!(w[0].1, w[1].1, "{pool}: every entry is a change");
        }
    }
    // The decode pool, bound by its running slots, needed more than prefill.
    let peak = |pool| counts(s, pool).iter().map(|x| x.1).max().unwrap();
    assert!(peak("decode") > peak("prefill"), "{:?}", s.timeline);
}

#[test]
fn each_pools_worker_seconds_and_gpu_hours_match_its_timeline() {
    let out = run(bursty());
    let s = scaling(&out);
    assert_eq!(s.pools.len(), 2);
    for (i, name) in ["prefill", "decode"].into_iter().enumerate() {
        let pool = &out.report.pools[i];
        assert_eq!(pool.pool, name);
        let from_timeline = timeline_seconds(s, name);
        assert!(
            (pool.worker_seconds - from_timeline).abs() < 1e-6,
            "{name}: {} vs {from_timeline}",
            pool.worker_seconds
        );
        assert_eq!(s.pools[i].worker_seconds, pool.worker_seconds);
        let gpu_hours = from_timeline * pool.gpus_per_worker as f64 / 3600.0;
        assert!((pool.gpu_hours - gpu_hours).abs() < 1e-9);
        assert_eq!(s.pools[i].gpu_hours, pool.gpu_hours);
    }
}

#[test]
fn disaggregated_planner_runs_are_deterministic_and_read_back() {
    let a = run(bursty());
    let b = run(bursty());
    assert_eq!(json_without_host(&a), json_without_host(&b));
    let json = serde_json::to_string(&a.report).unwrap();
    let back: aisim_replay::ReplayReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a.report);
}

#[test]
fn a_draining_worker_of_each_pool_takes_no_new_request_and_finishes_what_it_holds() {
    // One request every 100 ms, 10 ms passes, a 300 ms transfer: at the
    // tick, the decode engines are empty but transfers are on their way.
    const LATENCY_MS: f64 = 300.0;
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            input: LengthSpec::Fixed { tokens: 64 },
            output: LengthSpec::Fixed { tokens: 1 },
            ..small_synthetic(30, ArrivalSpec::Constant { rate: 10.0 })
        }),
        topology: disagg_topology(PoolSpec::new(2), PoolSpec::new(2), LATENCY_MS),
        timing: TimingSpec::Fixed {
            prefill_ms: 10.0,
            decode_ms: 10.0,
        },
        ..ReplaySpec::default()
    };
    let out = run_scripted(spec);
    assert_counts_add_up(&out, "scripted");
    assert_eq!(out.report.outcomes.completed, 30);
    let tick = 1_000_000_000;
    let after: Vec<_> = out
        .records
        .iter()
        .filter(|r| r.dispatch_ns >= tick)
        .collect();
    assert!(!after.is_empty());
    let s = scaling(&out);
    // Transfer end = first token − the decode pass (decode workers are idle).
    let transfer_end = |r: &aisim_replay::collector::RequestRecord| r.first_token_ns - 10 * MS;
    for (pool, of) in [
        (
            "prefill",
            (|r| r.worker()) as fn(&aisim_replay::collector::RequestRecord) -> Option<u32>,
        ),
        ("decode", |r| r.decode_worker),
    ] {
        let kept = of(after[0]).unwrap();
        assert!(
            after.iter().all(|r| of(r) == Some(kept)),
            "{pool}: every request after the tick on worker {kept}"
        );
        let drained = 1 - kept;
        let on_drained: Vec<_> = out
            .records
            .iter()
            .filter(|r| of(r) == Some(drained))
            .collect();
        // What it held at the tick: a prefill worker the blocks of its
        // transfers, a decode worker the transfers coming to it.
        let last = match pool {
            "prefill" => on_drained.iter().map(|r| transfer_end(r)).max().unwrap(),
            _ => on_drained.iter().map(|r| r.terminal_ns).max().unwrap(),
        };
        assert!(
            last > tick + 100 * MS,
            "{pool} worker {drained} still had a transfer under way at the tick"
        );
        let stops: Vec<(u64, u32)> = counts(s, pool)
            .into_iter()
            .map(|(t, n)| ((t * 1e9).round() as u64, n))
            .collect();
        assert_eq!(
            stops,
            vec![(0, 2), (last, 1)],
            "{pool} worker {drained} stopped once what it held was done"
        );
    }
}

#[test]
fn a_spec_refuses_per_pool_planner_bounds_out_of_range_naming_the_pools_field() {
    let refused = |spec: ReplaySpec| {
        Replayer::new(spec, SpecComposition)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let mut over = bursty();
    over.scaling.load.as_mut().unwrap().decode = Some(PoolBoundsSpec {
        min_workers: Some(2),
        max_workers: None,
    });
    let e = refused(over);
    assert!(
        e.contains("`scaling.load.decode.min_workers`: 2 is above the 1 workers the decode pool starts with"),
        "{e}"
    );
    let mut zero = bursty();
    zero.scaling.load.as_mut().unwrap().prefill = Some(PoolBoundsSpec {
        min_workers: Some(0),
        max_workers: None,
    });
    assert!(refused(zero).contains("`scaling.load.prefill.min_workers`: 0"));
    let mut global = bursty();
    let p = global.scaling.load.as_mut().unwrap();
    p.decode = None;
    p.max_workers = Some(0);
    let e = refused(global);
    assert!(e.contains("`scaling.load.max_workers`"), "{e}");
    let mut tpot = bursty();
    tpot.scaling.load.as_mut().unwrap().tpot_ms = Some(0.0);
    assert!(refused(tpot).contains("scaling.load.tpot_ms"));
}

#[test]
fn a_planner_ceiling_past_max_workers_is_refused_before_any_slot_table() {
    let refused = |spec: ReplaySpec| {
        Replayer::new(spec, SpecComposition)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let huge = 4_000_000_000;
    let over = format!(
        "{huge} workers: at most {}",
        aisim_replay::spec::MAX_WORKERS
    );
    for pool in ["max_workers", "prefill.max_workers", "decode.max_workers"] {
        let mut spec = bursty();
        let p = spec.scaling.load.as_mut().unwrap();
        let bounds = PoolBoundsSpec {
            min_workers: None,
            max_workers: Some(huge),
        };
        match pool {
            "max_workers" => {
                (p.prefill, p.decode) = (None, None);
                p.max_workers = Some(huge);
            }
            "prefill.max_workers" => p.prefill = Some(bounds),
            _ => p.decode = Some(bounds),
        }
        let e = refused(spec);
        assert!(
            e.contains(&format!("`scaling.load.{pool}`: {over}")),
            "{pool}: {e}"
        );
    }
}

//! The load-based planner and the scaling seam: scale-up under a burst and
//! down after it within the bounds, draining workers, worker-seconds from
//! the timeline, determinism.

mod common;

use aisim_replay::report::ScalingReport;
use aisim_replay::spec::{
    ArrivalSpec, LengthSpec, LoadPlannerSpec, ScalingKind, SyntheticSpec, TopologySpec,
    WorkloadSpec,
};
use aisim_replay::{ReplayOutput, ReplaySpec, Replayer};
use common::*;

/// A burst of 400 requests in the first 8 s, then one every 4 s until
/// 130 s; fixed timing, at most 8 running requests a worker.
fn bursty(workers: u32) -> ReplaySpec {
    let mut rows = String::new();
    for i in 0..400 {
        rows.push_str(&format!(
            "{{\"timestamp\": {}, \"input_length\": 512, \"output_length\": 64, \"hash_ids\": []}}\n",
            i * 20
        ));
    }
    for i in 0..30 {
        rows.push_str(&format!(
            "{{\"timestamp\": {}, \"input_length\": 512, \"output_length\": 64, \"hash_ids\": []}}\n",
            10_000 + i * 4_000
        ));
    }
    let mut spec = trace_spec(temp_file("bursty.jsonl", &rows), workers, 20.0, 10.0);
    spec.engine.max_num_seqs = 8;
    spec.scaling.policy = ScalingKind::Load;
    spec.scaling.load = Some(LoadPlannerSpec {
        min_workers: 1,
        max_workers: Some(6),
        tick_s: 2.0,
        startup_s: 1.0,
        ttft_ms: Some(500.0),
        queue_depth: 2.0,
        ..LoadPlannerSpec::default()
    });
    spec
}

fn scaling(out: &ReplayOutput) -> &ScalingReport {
    out.report.scaling.as_ref().expect("a scaling section")
}

#[test]
fn the_planner_scales_up_under_a_burst_and_down_after_it_within_its_bounds() {
    let out = run(bursty(1));
    assert_counts_add_up(&out, "planner");
    assert_eq!(out.report.outcomes.completed, 430);
    assert_eq!(out.report.policies.scaling, "load");
    let s = scaling(&out);
    let counts: Vec<u32> = s.timeline.iter().map(|c| c.workers).collect();
    let peak = *counts.iter().max().unwrap();
    assert!(counts.iter().all(|&n| (1..=6).contains(&n)), "{counts:?}");
    assert_eq!(counts[0], 1, "it starts with the topology's count");
    assert!(peak >= 3, "scaled up under the burst: {counts:?}");
    let at_peak = counts.iter().position(|&n| n == peak).unwrap();
    assert!(
        s.timeline[at_peak].t_s < 20.0,
        "the peak came during the burst: {:?}",
        s.timeline
    );
    assert_eq!(
        *counts.last().unwrap(),
        1,
        "back to the minimum: {counts:?}"
    );
    for w in s.timeline.windows(2) {
        assert!(w[0].t_s < w[1].t_s, "one entry per change, in order");
        assert_ne!(w[0].workers, w[1].workers, "every entry is a change");
    }
    // Fixed at the peak, the same run pays for more.
    let mut fixed = bursty(peak);
    fixed.scaling = Default::default();
    let fixed = run(fixed);
    assert!(fixed.report.scaling.is_none());
    assert!(
        out.report.pools[0].worker_seconds < fixed.report.pools[0].worker_seconds,
        "{} vs {}",
        out.report.pools[0].worker_seconds,
        fixed.report.pools[0].worker_seconds
    );
}

#[test]
fn worker_seconds_and_gpu_hours_match_the_timeline() {
    let out = run(bursty(2));
    let s = scaling(&out);
    let pool = &out.report.pools[0];
    let from_timeline = timeline_seconds(s, "workers");
    assert!(
        (pool.worker_seconds - from_timeline).abs() < 1e-6,
        "{} vs {from_timeline}",
        pool.worker_seconds
    );
    assert_eq!(s.pools[0].worker_seconds, pool.worker_seconds);
    let gpu_hours = from_timeline * pool.gpus_per_worker as f64 / 3600.0;
    assert!((pool.gpu_hours - gpu_hours).abs() < 1e-9);
    assert_eq!(s.pools[0].gpu_hours, pool.gpu_hours);
    assert!(
        (s.end_s - (out.report.duration_s)).abs() < 1e-9,
        "the trace starts at 0"
    );
}

#[test]
fn planner_runs_are_deterministic_and_read_back() {
    let a = run(bursty(1));
    let b = run(bursty(1));
    assert_eq!(json_without_host(&a), json_without_host(&b));
    let slow = Replayer::new(bursty(1), aisim_replay::policy::SpecComposition)
        .unwrap()
        .with_records(true)
        .with_fast_forward(false)
        .run()
        .unwrap();
    assert_eq!(json_without_host(&a), json_without_host(&slow));
    let json = serde_json::to_string(&a.report).unwrap();
    let back: aisim_replay::ReplayReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a.report);
}

#[test]
fn a_draining_worker_takes_no_new_request_and_finishes_what_it_holds() {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            input: LengthSpec::Fixed { tokens: 64 },
            output: LengthSpec::Fixed { tokens: 200 },
            ..small_synthetic(40, ArrivalSpec::Constant { rate: 10.0 })
        }),
        topology: TopologySpec::Aggregated { workers: 2 },
        timing: aisim_core::timing::TimingSpec::Fixed {
            prefill_ms: 10.0,
            decode_ms: 10.0,
        },
        ..ReplaySpec::default()
    };
    let out = run_scripted(spec);
    assert_counts_add_up(&out, "planner");
    assert_eq!(out.report.outcomes.completed, 40);
    assert_eq!(out.report.policies.scaling, "drain_one");
    let tick = 1_000_000_000;
    // The workers held the same at the tick: the higher one drains.
    let on_1: Vec<_> = out
        .records
        .iter()
        .filter(|r| r.worker() == Some(1))
        .collect();
    assert!(!on_1.is_empty());
    assert!(
        on_1.iter().all(|r| r.dispatch_ns < tick),
        "no request placed on the draining worker"
    );
    let last_on_1 = on_1.iter().map(|r| r.terminal_ns).max().unwrap();
    assert!(last_on_1 > tick, "it finished what it held after the tick");
    assert!(out
        .records
        .iter()
        .filter(|r| r.dispatch_ns >= tick)
        .all(|r| r.worker() == Some(0)));
    let s = scaling(&out);
    let t: Vec<(u64, u32)> = s
        .timeline
        .iter()
        .map(|c| ((c.t_s * 1e9).round() as u64, c.workers))
        .collect();
    assert_eq!(
        t,
        vec![(0, 2), (last_on_1, 1)],
        "it stopped with its last request"
    );
    assert!((out.report.pools[0].worker_seconds - timeline_seconds(s, "workers")).abs() < 1e-6);
}

#[test]
fn a_spec_refuses_planner_settings_without_effect_or_out_of_bounds() {
    let refused = |spec: ReplaySpec| {
        Replayer::new(spec, aisim_replay::policy::SpecComposition)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let mut none_with_load = bursty(1);
    none_with_load.scaling.policy = ScalingKind::None;
    assert!(refused(none_with_load).contains("scaling.load"));
    let mut huge = bursty(1);
    huge.scaling.load.as_mut().unwrap().max_workers = Some(u32::MAX);
    let e = refused(huge);
    assert!(
        e.contains(&format!(
            "`scaling.load.max_workers`: {} workers: at most {}",
            u32::MAX,
            aisim_replay::spec::MAX_WORKERS
        )),
        "{e}"
    );
    let e = refused(bursty(7));
    assert!(
        e.contains("`scaling.load.max_workers`: 6 is below the 7 workers the topology starts with"),
        "{e}"
    );
    let mut tpot = bursty(1);
    tpot.scaling.load.as_mut().unwrap().tpot_ms = Some(50.0);
    let e = refused(tpot);
    assert!(
        e.contains("`scaling.load.tpot_ms`: has no effect on an aggregated topology"),
        "{e}"
    );
    let mut tick = bursty(1);
    tick.scaling.load.as_mut().unwrap().tick_s = 0.0;
    assert!(refused(tick).contains("scaling.load.tick_s"));
}

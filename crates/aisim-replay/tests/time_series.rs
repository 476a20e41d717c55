//! The report's time series against the report's own totals: KV occupancy
//! never above capacity, counts that add up, and the integral of the
//! requests in flight equal to the concurrency's.

mod common;

use aisim_core::timing::TimingSpec;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, TopologySpec, WorkloadSpec};
use aisim_replay::timeseries::KV_WORKERS_SHOWN;
use aisim_replay::{ReplayReport, ReplaySpec};
use common::{run, small_synthetic};

/// A saturated synthetic run: small KV pools, long prompts, bursts of
/// arrivals (preemptions), optionally with a timeout and a too-long request
/// cap (timeouts and rejections in the series).
fn saturated(workers: u32, overloaded: bool) -> ReplaySpec {
    let mut w = small_synthetic(300, ArrivalSpec::Poisson { rate: 60.0 });
    w.input = LengthSpec::Uniform {
        min: 200,
        max: 1500,
    };
    w.output = LengthSpec::Uniform { min: 20, max: 200 };
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(w),
        topology: TopologySpec::Aggregated { workers },
        timing: TimingSpec::Fixed {
            prefill_ms: 20.0,
            decode_ms: 8.0,
        },
        ..ReplaySpec::default()
    };
    spec.engine.num_gpu_blocks = Some(120);
    if overloaded {
        spec.discipline.timeout_s = Some(2.0);
        spec.engine.max_model_len = Some(1600);
    }
    spec
}

fn check_kv_within_capacity(r: &ReplayReport) {
    let kv = &r.time_series.kv;
    let cap = kv.capacity_blocks;
    assert_eq!(cap, r.pools[0].kv_capacity_blocks);
    for w in &kv.shown {
        for (i, (&peak, &mean)) in w.peak_blocks.iter().zip(&w.mean_occupancy).enumerate() {
            assert!(
                peak <= cap,
                "worker {} bin {i}: {peak} of {cap} blocks",
                w.worker
            );
            assert!(
                (0.0..=1.0).contains(&mean),
                "worker {} bin {i}: {mean}",
                w.worker
            );
        }
    }
    assert!(kv.peak_blocks_max.iter().all(|&p| p <= cap));
    assert!(kv.mean_occupancy.iter().all(|m| (0.0..=1.0).contains(m)));
    // The bins' peaks are the report's: the run did fill its pools.
    let peak = kv.peak_blocks_max.iter().copied().max().unwrap();
    assert_eq!(peak, r.pools[0].kv_peak_blocks);
    assert!(peak * 10 >= cap * 9, "saturated: peak {peak} of {cap}");
}

#[test]
fn kv_occupancy_in_the_time_series_never_exceeds_capacity() {
    for (workers, overloaded) in [(1, false), (3, false), (3, true)] {
        let r = run(saturated(workers, overloaded)).report;
        check_kv_within_capacity(&r);
        assert_eq!(r.time_series.kv.shown.len(), workers as usize);
    }
}

#[test]
fn the_series_adds_up_to_the_report() {
    for overloaded in [false, true] {
        let out = run(saturated(3, overloaded));
        let r = &out.report;
        let ts = &r.time_series;
        let n = ts.bins as usize;
        for v in [
            &ts.arrivals,
            &ts.completed,
            &ts.timed_out,
            &ts.rejected,
            &ts.output_tokens,
        ] {
            assert_eq!(v.len(), n);
        }
        let sum = |v: &[u64]| v.iter().sum::<u64>();
        let o = r.outcomes;
        assert_eq!(sum(&ts.arrivals), o.offered);
        assert_eq!(sum(&ts.completed), o.completed);
        assert_eq!(sum(&ts.timed_out), o.timed_out);
        assert_eq!(sum(&ts.rejected), o.rejected);
        if overloaded {
            assert!(o.timed_out > 0 && o.rejected > 0, "{o:?}");
        }
        let emitted: u64 = out.records.iter().map(|r| r.tokens as u64).sum();
        assert_eq!(sum(&ts.output_tokens), emitted);
        // ∫ in flight dt: the bins' means times their lengths, against the
        // report's mean concurrency (the run starts at its first arrival,
        // the bins at 0: nothing is in flight before).
        let first_s = out.records.iter().map(|r| r.planned_ns).min().unwrap() as f64 * 1e-9;
        let busy: f64 = (0..n)
            .map(|i| (ts.waiting_mean[i] + ts.running_mean[i]) * ts.bin_length_s(i))
            .sum();
        let expected = r.concurrency.mean * (ts.end_s - first_s);
        assert!(
            (busy - expected).abs() <= 1e-9 * expected,
            "{busy} vs {expected}"
        );
        // The same for each worker's KV blocks.
        for w in &ts.kv.shown {
            let block_s: f64 = (0..n)
                .map(|i| w.mean_occupancy[i] * ts.bin_length_s(i))
                .sum();
            let report = r.workers.iter().find(|x| x.worker == w.worker).unwrap();
            let expected = report.kv_mean_occupancy * (ts.end_s - first_s);
            assert!(
                (block_s - expected).abs() <= 1e-9 * expected.max(1e-12),
                "{block_s} vs {expected}"
            );
        }
        assert!(n as u64 <= aisim_replay::timeseries::MAX_BINS);
        assert!((ts.end_s - (n as f64 - 1.0) * ts.bin_width_s) <= ts.bin_width_s + 1e-12);
    }
}

#[test]
fn many_workers_show_the_busiest_few_and_the_whole() {
    let r = run(saturated(12, false)).report;
    let kv = &r.time_series.kv;
    assert_eq!(kv.workers, 12);
    assert_eq!(kv.shown.len(), KV_WORKERS_SHOWN);
    let mean = |w: u32| {
        r.workers
            .iter()
            .find(|x| x.worker == w)
            .map_or(0.0, |x| x.kv_mean_occupancy)
    };
    let shown_least = kv
        .shown
        .iter()
        .map(|w| mean(w.worker))
        .fold(f64::INFINITY, f64::min);
    for w in 0..12 {
        if !kv.shown.iter().any(|s| s.worker == w) {
            assert!(mean(w) <= shown_least, "worker {w} busier than one shown");
        }
    }
    assert!(kv.shown.windows(2).all(|p| p[0].worker < p[1].worker));
    check_kv_within_capacity(&r);
}

//! `--seeds N` in the library: N seeds of one spec, each figure's mean and
//! 95 % interval, the same whatever the threads.

#[path = "../../aisim-replay/tests/common/mod.rs"]
mod common;

use aisim_lab::seeds::{replay_seeds, SeedsError, MAX_SEEDS};
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{
    ArrivalSpec, LengthSpec, RouterKind, SyntheticSpec, TopologySpec, WorkloadSpec,
};
use aisim_replay::{ReplayReport, ReplaySpec};

/// A small Poisson workload of varied lengths on two workers: its latencies
/// and duration vary with the seed, its request count does not.
fn spec() -> ReplaySpec {
    let mut synthetic = common::small_synthetic(60, ArrivalSpec::Poisson { rate: 40.0 });
    synthetic.input = LengthSpec::Uniform { min: 50, max: 800 };
    synthetic.output = LengthSpec::Uniform { min: 2, max: 40 };
    ReplaySpec {
        workload: WorkloadSpec::Synthetic(synthetic),
        topology: TopologySpec::Aggregated { workers: 2 },
        seed: 7,
        ..ReplaySpec::default()
    }
}

fn first(spec: ReplaySpec) -> ReplayReport {
    common::run(spec).report
}

#[test]
fn the_summary_is_byte_identical_whatever_the_threads() {
    let base = first(spec());
    let one = replay_seeds(1, &base, 6, &SpecComposition).unwrap();
    let three = replay_seeds(3, &base, 6, &SpecComposition).unwrap();
    let json = |s: &aisim_lab::seeds::SeedsReport| serde_json::to_string_pretty(s).unwrap();
    assert_eq!(json(&one), json(&three));
    let again = replay_seeds(3, &base, 6, &SpecComposition).unwrap();
    assert_eq!(json(&one), json(&again));
    assert_eq!((one.n, one.first_seed), (6, 7));
    // It reads back in order (serde_json's default float parsing may differ
    // from the written value in the last place).
    let back: aisim_lab::seeds::SeedsReport = serde_json::from_str(&json(&one)).unwrap();
    assert_eq!(
        (back.n, back.first_seed, back.metrics.0.len()),
        (6, 7, one.metrics.0.len())
    );
    for ((k, a), (kb, b)) in one.metrics.0.iter().zip(&back.metrics.0) {
        assert_eq!(k, kb);
        let close = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * x.abs().max(1.0),
            (x, y) => x == y,
        };
        assert!(
            close(a.mean, b.mean)
                && close(a.ci95_low, b.ci95_low)
                && close(a.ci95_high, b.ci95_high),
            "{k}"
        );
    }
}

#[test]
fn each_figure_is_the_mean_of_the_seeds_with_an_interval_around_it() {
    let base = first(spec());
    let n = 5u64;
    let s = replay_seeds(2, &base, n, &SpecComposition).unwrap();
    // The mean is the mean of the seeds' own reports.
    let p99s: Vec<f64> = (0..n)
        .map(|k| {
            let one = first(ReplaySpec {
                seed: 7 + k,
                ..spec()
            });
            one.latency.ttft_ms.p99.unwrap()
        })
        .collect();
    let m = s.metrics.get("ttft_ms.p99").unwrap();
    let mean = p99s.iter().sum::<f64>() / n as f64;
    assert!(
        (m.mean.unwrap() - mean).abs() < 1e-9 * mean,
        "{m:?} vs {mean}"
    );
    assert!(
        p99s.iter().any(|&p| p != p99s[0]),
        "the seeds differ: {p99s:?}"
    );
    assert!(m.ci95_low.unwrap() < m.mean.unwrap() && m.mean.unwrap() < m.ci95_high.unwrap());
    // Every figure's interval holds its mean and is cut at 0.
    for (key, m) in &s.metrics.0 {
        if let (Some(lo), Some(mean), Some(hi)) = (m.ci95_low, m.mean, m.ci95_high) {
            assert!(0.0 <= lo && lo <= mean && mean <= hi, "{key}: {m:?}");
        }
    }
    // Every latency statistic and throughput figure is there.
    for key in [
        "ttft_ms.mean",
        "ttft_ms.p50",
        "ttft_ms.p999",
        "ttft_ms.std",
        "tpot_ms.p90",
        "itl_ms.p99",
        "e2e_ms.p90",
        "e2e_from_dispatch_ms.max",
        "latency_offered.e2e_ms.p99",
        "throughput.request_rps",
        "throughput.output_tok_s",
        "throughput.goodput_rps",
        "duration_s",
    ] {
        assert!(s.metrics.get(key).is_some(), "{key} missing");
    }
    assert!(s.metrics.get("host.wall_s").is_none());
}

#[test]
fn a_figure_identical_across_seeds_has_a_zero_width_interval() {
    let base = first(spec());
    let s = replay_seeds(2, &base, 4, &SpecComposition).unwrap();
    let offered = s.metrics.get("outcomes.offered").unwrap();
    assert_eq!(
        (offered.mean, offered.ci95_low, offered.ci95_high),
        (Some(60.0), Some(60.0), Some(60.0))
    );
}

#[test]
fn one_seed_is_its_own_report_with_a_point_interval() {
    let base = first(spec());
    let s = replay_seeds(4, &base, 1, &SpecComposition).unwrap();
    let p99 = base.latency.ttft_ms.p99;
    let m = s.metrics.get("ttft_ms.p99").unwrap();
    assert_eq!((m.mean, m.ci95_low, m.ci95_high), (p99, p99, p99));
    // Every figure of the report, none more.
    assert_eq!(
        s.metrics.0.len(),
        aisim_lab::seeds::figures(&serde_json::to_string(&base).unwrap())
            .unwrap()
            .len()
    );
}

#[test]
fn a_figure_null_in_some_seed_is_null() {
    // Overloaded with a timeout: the offered-cohort p99 is infinite (null).
    let mut spec = spec();
    spec.discipline.timeout_s = Some(0.05);
    spec.engine.max_num_seqs = 1;
    let base = first(spec);
    assert_eq!(base.latency_offered.ttft_ms.p99, None);
    let s = replay_seeds(2, &base, 3, &SpecComposition).unwrap();
    let m = s.metrics.get("latency_offered.ttft_ms.p99").unwrap();
    assert_eq!((m.mean, m.ci95_low, m.ci95_high), (None, None, None));
}

#[test]
fn a_random_router_on_a_trace_varies_too() {
    let mut spec = ReplaySpec::default();
    spec.router.policy = RouterKind::Random;
    assert!(aisim_lab::seeds::seed_matters(&spec));
    spec.router.policy = RouterKind::RoundRobin;
    assert!(
        !aisim_lab::seeds::seed_matters(&spec),
        "the demo trace, round robin"
    );
}

#[test]
fn a_seed_count_out_of_range_is_refused() {
    let base = first(spec());
    for n in [0, MAX_SEEDS + 1] {
        let e = replay_seeds(1, &base, n, &SpecComposition).unwrap_err();
        assert!(matches!(e, SeedsError::Count { .. }) && !e.is_internal());
        assert_eq!(e.to_string(), format!("--seeds {n}: allowed: 1 ..= 10000"));
    }
}

#[test]
fn a_generated_workload_that_draws_nothing_does_not_take_seeds() {
    let mut fixed = common::small_synthetic(30, ArrivalSpec::Constant { rate: 10.0 });
    fixed.prefix_groups = 1;
    fixed.prefix_tokens = 512;
    let spec = |s| ReplaySpec {
        workload: WorkloadSpec::Synthetic(s),
        ..ReplaySpec::default()
    };
    assert!(!aisim_lab::seeds::seed_matters(&spec(fixed.clone())));
    // And indeed every seed gives the same report.
    let json = |seed| {
        let mut r = first(ReplaySpec {
            seed,
            ..spec(fixed.clone())
        });
        r.spec.seed = 0;
        r.host.wall_s = 0.0;
        r.host.simulated_requests_per_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(json(1), json(2));
    // Anything drawn makes it random.
    let poisson = common::small_synthetic(30, ArrivalSpec::Poisson { rate: 10.0 });
    let uniform = SyntheticSpec {
        input: LengthSpec::Uniform { min: 5, max: 20 },
        ..fixed.clone()
    };
    let groups = SyntheticSpec {
        prefix_groups: 2,
        ..fixed.clone()
    };
    for s in [poisson, uniform, groups] {
        assert!(aisim_lab::seeds::seed_matters(&spec(s)));
    }
}

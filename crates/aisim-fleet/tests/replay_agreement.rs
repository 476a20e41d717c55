//! The planners' one-pool GPU count agrees with the replay: the smallest
//! worker count whose replay (least-loaded router, the profile's iteration
//! timing and KV capacity) meets the P99 TTFT target is what the batch model
//! asks for, within 0.8× to 1.5×. A bare CDF is checked against a synthetic
//! replay of the same CDF; a trace against the replay of the trace itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aisim_core::profile::resolve_profile;
use aisim_core::timing::TimingSpec;
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::{Cdf, LengthSource};
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::plan::Planner;
use aisim_fleet::pool_model::SizingModel;
use aisim_fleet::sizing::SizingTargets;
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{
    AdmissionSpec, ArrivalSpec, LengthSpec, RouterKind, SyntheticSpec, TopologySpec,
    TotalLengthCdf, WorkloadSpec,
};
use aisim_replay::{ReplaySpec, Replayer};
use rand_core::SeedableRng;

const PROFILE: &str = "h100/llama-3.1-8b";

/// The one-pool GPU count `optimize` reports for `cdf` at `lam` in `model`.
fn planned(cdf: Cdf, lam: f64, slo_ms: f64, long_max_ctx: u32, model: SizingModel) -> u64 {
    let p = resolve_profile(PROFILE).unwrap();
    let planner = Planner {
        cdf,
        lam,
        targets: SizingTargets {
            slo_ms,
            ..SizingTargets::default()
        },
        long_max_ctx,
        gpu_short: Arc::clone(&p),
        gpu_long: p,
        method: CalibrationMethod::Exact,
        model,
        seed: 42,
    };
    let params = OptimizeParams {
        b_short: 4096,
        gamma_max: 1.0,
        p_compress: 0.0,
        verify_top: 0,
        n_sim_req: 1000,
        seeds: 1,
        verify_engine: false,
        engine_coefficients: None,
    };
    let r = optimize(&planner, &params).unwrap();
    assert!(r.baseline.slo_met, "{:?}", r.baseline);
    r.baseline.total_gpus
}

/// The replay's P99 TTFT (ms, offered view: an unfinished request is
/// infinitely slow) with `workers` workers.
fn replay_p99_ms(mut spec: ReplaySpec, workers: u32) -> f64 {
    spec.topology = TopologySpec::Aggregated { workers };
    spec.timing = TimingSpec::Iteration {
        profile: PROFILE.into(),
    };
    spec.router.policy = RouterKind::LeastLoaded;
    let out = Replayer::new(spec, SpecComposition).unwrap().run().unwrap();
    out.report
        .latency_offered
        .ttft_ms
        .p99
        .unwrap_or(f64::INFINITY)
}

/// The fewest workers (up to `most`) whose replay meets `slo_ms`, by
/// bisection (more workers never make the P99 worse here).
fn fewest_workers(spec: &ReplaySpec, slo_ms: f64, most: u32) -> u32 {
    let meets = |w: u32| replay_p99_ms(spec.clone(), w) <= slo_ms;
    assert!(meets(most), "{most} workers miss {slo_ms} ms");
    let (mut lo, mut hi) = (0u32, most); // meets(hi), and lo = 0 never does
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

fn assert_agrees(planned: u64, replayed: u32, what: &str) {
    let ratio = planned as f64 / replayed as f64;
    eprintln!("{what}: planner {planned} GPUs, replay {replayed} workers ({ratio:.2}×)");
    assert!(
        (0.8..=1.5).contains(&ratio),
        "{what}: the planner asks {planned} GPUs, the replay needs {replayed} ({ratio:.2}×)"
    );
}

fn cdf_replay(cdf: &Cdf, lam: f64, max_tokens: u64) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 20_000,
            input: LengthSpec::Fixed { tokens: 1 },
            output: LengthSpec::Fixed { tokens: 1 },
            arrival: ArrivalSpec::Poisson { rate: lam },
            total_cdf: Some(TotalLengthCdf {
                points: cdf.points.clone(),
                min_tokens: 1,
                max_tokens,
                pairs: None,
            }),
            ..SyntheticSpec::default()
        }),
        discipline: aisim_replay::spec::DisciplineSpec {
            warmup_requests: 4_000,
            ..Default::default()
        },
        ..ReplaySpec::default()
    }
}

#[test]
fn a_bare_cdf_is_sized_as_its_synthetic_replay_needs() {
    let azure = Cdf::builtin("azure").unwrap();
    assert_eq!(azure.length_source(), LengthSource::Split80_20);
    for lam in [20.0, 100.0] {
        let plan = planned(azure.clone(), lam, 500.0, 65536, SizingModel::Batch);
        let replayed = fewest_workers(&cdf_replay(&azure, lam, 65536), 500.0, 4 * plan as u32);
        assert_agrees(plan, replayed, &format!("azure at {lam} req/s"));
    }
}

#[test]
fn the_slot_model_overstates_what_the_replay_needs() {
    // The reference's model, kept for its results, is not what the replay
    // needs: every slot at 65,536 tokens serves one request at a time.
    let azure = Cdf::builtin("azure").unwrap();
    let slots = planned(azure.clone(), 100.0, 500.0, 65536, SizingModel::Slots);
    let batch = planned(azure, 100.0, 500.0, 65536, SizingModel::Batch);
    assert!(
        slots as f64 > 2.0 * batch as f64,
        "slots {slots}, batch {batch}"
    );
}

/// A trace of `n` Poisson arrivals at `rate` with input and output lengths
/// drawn independently from wide ranges (no shared prefixes), written to a
/// scratch file.
fn scratch_trace(name: &str, n: usize, rate: f64, seed: u64) -> PathBuf {
    use aisim_replay::workload::random::{exponential, uniform_int};
    let dir = std::env::temp_dir().join(format!("aisim-agreement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut t_ms = 0.0;
    let mut text = String::new();
    for _ in 0..n {
        t_ms += exponential(&mut rng, rate) * 1e3;
        let input = uniform_int(&mut rng, 200, 24_000);
        let output = uniform_int(&mut rng, 10, 600);
        text += &format!(
            "{{\"timestamp\": {}, \"input_length\": {input}, \"output_length\": {output}, \"hash_ids\": []}}\n",
            t_ms.round()
        );
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn trace_replay(path: &Path, speedup: f64) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Trace {
            path: path.to_path_buf(),
            format: None,
            trace_block_size: None,
        },
        admission: AdmissionSpec {
            speedup,
            ..AdmissionSpec::default()
        },
        ..ReplaySpec::default()
    }
}

/// The trace's mean rate, req/s.
fn trace_rate(path: &Path) -> f64 {
    let t = aisim_replay::trace::read_trace(path, None, None).unwrap();
    let first = t.records.first().unwrap().timestamp_ms;
    let last = t.records.last().unwrap().timestamp_ms;
    (t.records.len() - 1) as f64 / ((last - first) / 1e3)
}

#[test]
fn a_trace_is_sized_on_its_own_lengths_as_its_replay_needs() {
    let path = scratch_trace("wide.jsonl", 3_000, 4.0, 7);
    let cdf = Cdf::resolve(&format!("trace:{}", path.display())).unwrap();
    assert_eq!(cdf.length_source(), LengthSource::TracePairs);
    // Its own means, not 80/20 of the total: outputs average about 305 tokens.
    let (mean_in, mean_out) = cdf.mean_lengths();
    assert!((mean_in - 12_100.0).abs() < 400.0 && (mean_out - 305.0).abs() < 15.0);
    for speedup in [1.0, 2.0] {
        let lam = trace_rate(&path) * speedup;
        let plan = planned(cdf.clone(), lam, 5000.0, 131_072, SizingModel::Batch);
        let replayed = fewest_workers(&trace_replay(&path, speedup), 5000.0, 4 * plan as u32);
        assert_agrees(plan, replayed, &format!("the trace at {speedup}×"));
    }
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// `../shared/traces/mooncake_synthetic_trace.jsonl`, loudly absent.
fn shared_trace() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    assert!(
        p.exists(),
        "{} is missing: this test needs ../shared",
        p.display()
    );
    p
}

#[test]
#[ignore = "needs ../shared"]
fn mooncake_at_twice_its_rate_is_sized_as_its_replay_needs() {
    let path = shared_trace();
    let cdf = Cdf::resolve(&format!("trace:{}", path.display())).unwrap();
    let lam = trace_rate(&path) * 2.0;
    let plan = planned(cdf, lam, 5000.0, 131_072, SizingModel::Batch);
    let replayed = fewest_workers(&trace_replay(&path, 2.0), 5000.0, 4 * plan as u32);
    assert_agrees(plan, replayed, "Mooncake at 2×");
}

//! The worked examples of fleet.md reproduce.

use std::sync::Arc;

use aisim_core::profile::resolve_profile;
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::disagg::{disagg, DisaggParams};
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::pareto::pareto;
use aisim_fleet::plan::Planner;
use aisim_fleet::pool_model::SizingModel;
use aisim_fleet::power::{grid_flex, tok_per_watt};
use aisim_fleet::sizing::SizingTargets;

fn planner(cdf: &str, lam: f64, gpu: &str) -> Planner {
    let p = resolve_profile(gpu).unwrap();
    Planner {
        cdf: Cdf::builtin(cdf).unwrap(),
        lam,
        targets: SizingTargets::default(),
        long_max_ctx: 65536,
        gpu_short: Arc::clone(&p),
        gpu_long: p,
        method: CalibrationMethod::Exact,
        model: aisim_fleet::pool_model::SizingModel::Slots,
        seed: 42,
    }
}

fn within(a: f64, b: f64, rel: f64) -> bool {
    (a / b - 1.0).abs() <= rel
}

#[test]
fn pareto_lmsys_anchor() {
    let r = pareto(&planner("lmsys", 100.0, "a100")).unwrap();
    assert_eq!(r.baseline.total_gpus, 13);
    assert!(
        within(r.baseline.annual_cost_kusd, 252.0, 0.01),
        "{}",
        r.baseline.annual_cost_kusd
    );
    let rec = r.recommended.expect("a recommendation");
    assert_eq!(
        (
            rec.candidate.b_short,
            rec.candidate.n_short,
            rec.candidate.n_long
        ),
        (8192, 4, 4)
    );
    assert!(
        within(rec.candidate.annual_cost_kusd, 155.0, 0.01),
        "{}",
        rec.candidate.annual_cost_kusd
    );
    assert!(within(rec.saving, 0.385, 0.01), "{}", rec.saving);
    assert!(
        within(rec.candidate.p99_ttft_short_ms, 14.0, 0.10),
        "{}",
        rec.candidate.p99_ttft_short_ms
    );
    assert!(
        within(rec.candidate.p99_ttft_long_ms, 213.0, 0.10),
        "{}",
        rec.candidate.p99_ttft_long_ms
    );
}

#[test]
fn disagg_azure_anchor() {
    let h100 = resolve_profile("h100").unwrap();
    let cdf = Cdf::builtin("azure").unwrap();
    let mean = cdf.mean_upper();
    let p = DisaggParams {
        lam: 100.0,
        max_ctx: 8192,
        mean_isl: 0.75 * mean,
        mean_osl: 0.25 * mean,
        slo_ttft_ms: 500.0,
        slo_tpot_ms: 100.0,
        max_prefill: 32,
        max_decode: 64,
        prefill_efficiency: 0.90,
        decode_efficiency: 0.92,
        ttft_multiplier: 1.80,
        model: SizingModel::Slots,
    };
    let r = disagg(h100.as_ref(), h100.as_ref(), &p).unwrap();
    let b = r.best.unwrap();
    assert_eq!((b.n_prefill, b.n_decode, b.total_gpus), (1, 3, 4));
    assert!(within(b.system_rps, 113.7, 0.01), "{}", b.system_rps);
    assert!(
        within(b.ttft_ms, 162.0, 0.10) && within(b.tpot_ms, 45.0, 0.10),
        "{} {}",
        b.ttft_ms,
        b.tpot_ms
    );
    assert!(
        within(b.annual_cost_kusd, 141.0, 0.01),
        "{}",
        b.annual_cost_kusd
    );
}

#[test]
fn tok_per_watt_anchor() {
    let cdf = Cdf::builtin("azure").unwrap();
    let profiles: Vec<_> = ["h100", "a100", "a10g"]
        .iter()
        .map(|k| resolve_profile(k).unwrap())
        .collect();
    let refs: Vec<&dyn aisim_core::profile::GpuProfile> =
        profiles.iter().map(|p| p.as_ref()).collect();
    let r = tok_per_watt(&cdf, 100.0, 8192, &refs, &SizingTargets::default(), None).unwrap();
    assert!(
        (r.mean_output_tokens - 325.0).abs() < 1.0,
        "{}",
        r.mean_output_tokens
    );
    let got: Vec<(u64, f64)> = r.rows.iter().map(|x| (x.n_gpus, x.tok_per_watt)).collect();
    for ((n, tpw), (en, etpw)) in got.iter().zip([(7, 8.09), (13, 6.55), (21, 13.54)]) {
        assert_eq!(*n, en);
        assert!((tpw - etpw).abs() < 0.01, "{tpw} vs {etpw}");
    }
}

#[test]
fn grid_flex_anchor() {
    let cdf = Cdf::builtin("azure").unwrap();
    let h100 = resolve_profile("h100").unwrap();
    let pcts = [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0];
    let r = grid_flex(&cdf, 200.0, 40, &h100, 500.0, 8192, &pcts, 0, 42).unwrap();
    assert!((r.baseline_kw - 23.3).abs() < 0.05, "{}", r.baseline_kw);
    assert_eq!(r.deepest_safe_pct, Some(30.0));
}

#[test]
fn optimize_runs_and_verifies_the_cheapest() {
    let p = OptimizeParams {
        b_short: 4096,
        gamma_max: 2.0,
        p_compress: 0.75,
        verify_top: 3,
        n_sim_req: 20_000,
        seeds: 1,
        verify_engine: false,
        engine_coefficients: None,
    };
    let r = optimize(&planner("azure", 200.0, "a100"), &p).unwrap();
    assert_eq!(r.candidates.len(), 11);
    assert_eq!(r.simulated.len(), 3);
    assert!(r.simulated.iter().all(|c| c.source == "simulated"));
    let best = r.best.unwrap();
    assert!(best.cost_per_hr <= r.baseline.cost_per_hr);
    // Sweep order is γ = 1.0 … 2.0.
    assert_eq!(r.candidates[0].gamma, Some(1.0));
    assert_eq!(r.candidates[10].gamma, Some(2.0));
}

#[test]
fn optimize_with_seeds_gives_intervals() {
    let p = OptimizeParams {
        b_short: 4096,
        gamma_max: 1.2,
        p_compress: 0.75,
        verify_top: 1,
        n_sim_req: 10_000,
        seeds: 4,
        verify_engine: false,
        engine_coefficients: None,
    };
    let r = optimize(&planner("azure", 200.0, "a100"), &p).unwrap();
    let (short, long) = r.simulated[0]
        .p99_interval_ms
        .expect("intervals with several seeds");
    // A pool that never queues has a P99 (a prefill time) every seed shares; the
    // other one varies between seeds.
    assert!(
        short.lo <= short.hi && long.lo <= long.hi,
        "{short:?} {long:?}"
    );
    assert!(
        short.lo < short.hi || long.lo < long.hi,
        "{short:?} {long:?}"
    );
    assert!((r.simulated[0].p99_ttft_short_ms - short.mean).abs() < 1e-12);
}

#[test]
fn verify_engine_replays_the_top_candidates() {
    let p = OptimizeParams {
        b_short: 4096,
        gamma_max: 1.1,
        p_compress: 0.75,
        verify_top: 1,
        n_sim_req: 2_000,
        seeds: 1,
        verify_engine: true,
        engine_coefficients: None,
    };
    let r = optimize(&planner("lmsys", 20.0, "h100"), &p).unwrap();
    assert_eq!(r.engine.len(), 1);
    let e = &r.engine[0];
    assert_eq!(e.source, "engine");
    assert!(
        e.p99_ttft_short_ms.is_finite() && e.p99_ttft_short_ms > 0.0,
        "{e:?}"
    );
    assert_eq!(
        (e.n_short, e.n_long),
        (r.simulated[0].n_short, r.simulated[0].n_long)
    );
    // At this light load every pool keeps up: the engine agrees the SLO holds.
    assert!(e.slo_met, "{e:?}");
}

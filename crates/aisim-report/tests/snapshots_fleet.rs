//! Snapshots of the fleet renderings (regenerate with `cargo xtask golden`):
//! the labels of seeds and spans, pareto's stars and recommendation, and
//! optimize's recommendation by the deepest check.

use std::sync::Arc;

use aisim_core::profile::resolve_profile;
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{generate, Arrivals, DesConfig, InstancePick, PoolSpec, RouterSpec};
use aisim_fleet::disagg::{disagg, disagg_verified, DisaggParams, DisaggVerifyParams};
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::pareto::pareto;
use aisim_fleet::plan::Planner;
use aisim_fleet::pool_model::SizingModel;
use aisim_fleet::power::{grid_flex, tok_per_watt};
use aisim_fleet::reports::{compare_routers, simulate_seeds, whatif};
use aisim_fleet::sizing::SizingTargets;

fn planner(cdf: &str, lam: f64, short: &str, long: &str) -> Planner {
    Planner {
        cdf: Cdf::builtin(cdf).unwrap(),
        lam,
        targets: SizingTargets::default(),
        long_max_ctx: 65536,
        gpu_short: resolve_profile(short).unwrap(),
        gpu_long: resolve_profile(long).unwrap(),
        method: CalibrationMethod::Exact,
        model: aisim_fleet::pool_model::SizingModel::Slots,
        seed: 42,
    }
}

#[test]
fn pareto_tables() {
    let r = pareto(&planner("lmsys", 100.0, "a100", "a100")).unwrap();
    insta::assert_snapshot!("pareto_threshold", aisim_report::fleet::render_pareto(&r));
    let r = pareto(&planner("lmsys", 0.5, "h100", "a100")).unwrap();
    insta::assert_snapshot!("pareto_baseline", aisim_report::fleet::render_pareto(&r));
}

#[test]
fn optimize_table_over_seeds() {
    let p = OptimizeParams {
        b_short: 4096,
        gamma_max: 1.2,
        p_compress: 0.75,
        verify_top: 2,
        n_sim_req: 2000,
        seeds: 3,
        verify_engine: false,
        engine_coefficients: None,
    };
    let r = optimize(&planner("azure", 50.0, "a100", "a100"), &p).unwrap();
    insta::assert_snapshot!(aisim_report::fleet::render_optimize(&r));
}

#[test]
fn simulate_and_compare_tables_over_seeds() {
    let a100 = resolve_profile("a100").unwrap();
    let pool = |id: &str, n, max_ctx| PoolSpec {
        id: id.into(),
        profile: Arc::clone(&a100),
        n_gpus: n,
        max_ctx,
    };
    let cfg = DesConfig {
        pools: vec![pool("short", 3, 4096), pool("long", 4, 65536)],
        router: RouterSpec::Length {
            threshold: Some(4096),
        },
        pick: InstancePick::ShortestQueue,
        queue_cap: 512,
        warmup_frac: 0.1,
        slo_ms: 500.0,
        seed: 42,
    };
    let cdf = Cdf::builtin("azure").unwrap();
    let requests = |s| generate(&cdf, 20.0, 2000, &Arrivals::Poisson, s);
    let r = simulate_seeds(&cfg, "3 + 4 GPUs", 3, 42, requests).unwrap();
    insta::assert_snapshot!("simulate", aisim_report::fleet::render_simulate(&r));
    let routers = [
        RouterSpec::Length {
            threshold: Some(4096),
        },
        RouterSpec::Random,
    ];
    let r = compare_routers(&cfg, &routers, 2, 42, requests).unwrap();
    insta::assert_snapshot!("compare_routers", aisim_report::fleet::render_compare(&r));
}

/// `disagg` with the command's defaults.
#[test]
fn disagg_table() {
    let cdf = Cdf::builtin("azure").unwrap();
    let mean = cdf.mean_upper();
    let p = DisaggParams {
        lam: 200.0,
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
    let (h100, a100) = (
        resolve_profile("h100").unwrap(),
        resolve_profile("a100").unwrap(),
    );
    let r = disagg(h100.as_ref(), a100.as_ref(), &p).unwrap();
    insta::assert_snapshot!(aisim_report::fleet::render_disagg(&r));
}

/// `disagg --verify engine` at 28 req/s on up to 4 + 4 H100s serving
/// Llama 3.1 8B: the analytic best (1 + 2) fails its replay, 1 + 3 passes.
#[test]
fn disagg_engine_check_table() {
    let cdf = Cdf::builtin("azure").unwrap();
    let mean = cdf.mean_upper();
    let p = DisaggParams {
        lam: 28.0,
        max_ctx: 8192,
        mean_isl: 0.75 * mean,
        mean_osl: 0.25 * mean,
        slo_ttft_ms: 500.0,
        slo_tpot_ms: 100.0,
        max_prefill: 4,
        max_decode: 4,
        prefill_efficiency: 0.90,
        decode_efficiency: 0.92,
        ttft_multiplier: 1.80,
        model: SizingModel::Slots,
    };
    let v = DisaggVerifyParams {
        top: 3,
        n_req: 2000,
        seed: 42,
        kv_bytes_per_token: None,
        kv_transfer_gb_s: 50.0,
        kv_transfer_latency_ms: 0.0,
        coefficients: None,
    };
    let g = resolve_profile("h100/llama-3.1-8b/tp1").unwrap();
    let r = disagg_verified(g.as_ref(), g.as_ref(), &p, &v).unwrap();
    insta::assert_snapshot!(aisim_report::fleet::render_disagg(&r));
}

/// `whatif` over a range of rates, with a GPU comparison.
#[test]
fn whatif_table() {
    let compare = [resolve_profile("h100").unwrap()];
    let r = whatif(
        &planner("azure", 50.0, "a100", "a100"),
        4096,
        &[50.0, 200.0],
        &compare,
    )
    .unwrap();
    insta::assert_snapshot!(aisim_report::fleet::render_whatif(&r));
}

/// `tok-per-watt`, sized for the SLO and over a utilization sweep.
#[test]
fn tok_per_watt_tables() {
    let cdf = Cdf::builtin("azure").unwrap();
    let profiles: Vec<_> = ["h100", "a100"]
        .iter()
        .map(|k| resolve_profile(k).unwrap())
        .collect();
    let refs: Vec<_> = profiles.iter().map(|p| p.as_ref()).collect();
    let targets = SizingTargets::default();
    let sized = tok_per_watt(&cdf, 100.0, 8192, &refs, &targets, None).unwrap();
    insta::assert_snapshot!(
        "tok_per_watt",
        aisim_report::fleet::render_tok_per_watt(&sized)
    );
    let swept = tok_per_watt(&cdf, 100.0, 8192, &refs, &targets, Some(&[0.2, 0.6])).unwrap();
    insta::assert_snapshot!(
        "tok_per_watt_rho_sweep",
        aisim_report::fleet::render_tok_per_watt(&swept)
    );
}

/// `grid-flex`, analytic and verified by the DES.
#[test]
fn grid_flex_tables() {
    let cdf = Cdf::builtin("azure").unwrap();
    let h100 = resolve_profile("h100").unwrap();
    let cuts = [0.0, 10.0, 30.0];
    let analytic = grid_flex(&cdf, 200.0, 40, &h100, 500.0, 8192, &cuts, 0, 42).unwrap();
    insta::assert_snapshot!(
        "grid_flex",
        aisim_report::fleet::render_grid_flex(&analytic)
    );
    let verified = grid_flex(&cdf, 200.0, 40, &h100, 500.0, 8192, &cuts, 1000, 42).unwrap();
    insta::assert_snapshot!(
        "grid_flex_verified",
        aisim_report::fleet::render_grid_flex(&verified)
    );
}

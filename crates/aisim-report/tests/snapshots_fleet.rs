//! Snapshots of the fleet renderings (regenerate with `cargo xtask golden`):
//! the labels of seeds and spans, pareto's stars and recommendation, and
//! optimize's recommendation by the deepest check.

use std::sync::Arc;

use aisim_core::profile::resolve_profile;
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{generate, Arrivals, DesConfig, InstancePick, PoolSpec, RouterSpec};
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::pareto::pareto;
use aisim_fleet::plan::Planner;
use aisim_fleet::reports::{compare_routers, simulate_seeds};
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

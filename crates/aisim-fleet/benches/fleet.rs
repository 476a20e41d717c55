//! Fleet-planning benchmarks (release): `cargo bench -p aisim-fleet --bench fleet`.
//! Targets: optimize (azure, λ 200, default sweep, 3 verified with 40,000
//! requests) under 2 s; pareto under 1 s; a 50,000-request DES under 1 s.

use std::sync::Arc;
use std::time::Instant;

use aisim_core::profile::resolve_profile;
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{
    generate, run_des, Arrivals, DesConfig, InstancePick, PoolSpec, RouterSpec,
};
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::pareto::pareto;
use aisim_fleet::plan::Planner;
use aisim_fleet::sizing::SizingTargets;

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let a100 = resolve_profile("a100").unwrap();
    let planner = |cdf: &str, lam: f64| Planner {
        cdf: Cdf::builtin(cdf).unwrap(),
        lam,
        targets: SizingTargets::default(),
        long_max_ctx: 65536,
        gpu_short: Arc::clone(&a100),
        gpu_long: Arc::clone(&a100),
        method: CalibrationMethod::Exact,
        model: aisim_fleet::pool_model::SizingModel::Slots,
        seed: 42,
    };
    let p = planner("azure", 200.0);
    let params = OptimizeParams {
        b_short: 4096,
        gamma_max: 2.0,
        p_compress: 0.75,
        verify_top: 3,
        n_sim_req: 40_000,
        seeds: 1,
        verify_engine: false,
        engine_coefficients: None,
    };
    println!(
        "optimize (azure, 200 req/s, 11 gammas, 3 verified x 40,000): {:.1} ms",
        best_of(5, || optimize(&p, &params).unwrap()) * 1e3
    );
    let lm = planner("lmsys", 100.0);
    println!(
        "pareto (lmsys, 100 req/s): {:.1} ms",
        best_of(5, || pareto(&lm).unwrap()) * 1e3
    );
    let cfg = DesConfig {
        pools: vec![
            PoolSpec {
                id: "short".into(),
                profile: Arc::clone(&a100),
                n_gpus: 12,
                max_ctx: 4096,
            },
            PoolSpec {
                id: "long".into(),
                profile: Arc::clone(&a100),
                n_gpus: 14,
                max_ctx: 65536,
            },
        ],
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
    println!(
        "simulate (DES, 50,000 requests, 12 + 14 GPUs, generation included): {:.1} ms",
        best_of(5, || run_des(
            &cfg,
            &generate(&cdf, 200.0, 50_000, &Arrivals::Poisson, 42).unwrap()
        )
        .unwrap())
            * 1e3
    );
}

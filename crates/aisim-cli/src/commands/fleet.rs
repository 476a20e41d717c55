//! The fleet-planning subcommands: thin wrappers over `aisim-fleet`.

use std::path::PathBuf;
use std::sync::Arc;

use aisim_core::profile::{resolve_profile, GpuProfile};
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{generate, Arrivals, DesConfig, InstancePick, PoolSpec, RouterSpec};
use aisim_fleet::disagg::{disagg, DisaggParams};
use aisim_fleet::fleet_file::FleetPlan;
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::pareto::pareto;
use aisim_fleet::plan::Planner;
use aisim_fleet::power::{grid_flex, tok_per_watt};
use aisim_fleet::reports::{compare_routers, parse_arrivals, simulate_seeds, whatif};
use aisim_fleet::sizing::SizingTargets;
use clap::{Args, ValueEnum};

use crate::exit::{input, CliError};
use crate::output::OutputArgs;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CalibrationArg {
    Exact,
    Sampled,
}

/// Workload, targets and pools shared by the fleet commands.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Length CDF: azure, lmsys, agent_heavy, a JSON file, or trace:FILE.
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 200.0)]
    lam: f64,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0)]
    slo: f64,
    /// Short-pool threshold, total tokens.
    #[arg(long, default_value_t = 4096)]
    b_short: u64,
    /// Longest context of the long pool.
    #[arg(long, default_value_t = 65536)]
    long_max_ctx: u32,
    /// Profile of the short pool.
    #[arg(long, default_value = "a100")]
    gpu_short: String,
    /// Profile of the long pool (and of a one-pool baseline).
    #[arg(long, default_value = "a100")]
    gpu_long: String,
    /// Calibration: exact expectation, or a Monte-Carlo estimate.
    #[arg(long, value_enum, default_value_t = CalibrationArg::Exact)]
    calibration: CalibrationArg,
    /// Samples of the sampled calibration.
    #[arg(long, default_value_t = 3000)]
    samples: u64,
    /// Turn the 0.85 utilization cap off.
    #[arg(long)]
    no_util_cap: bool,
    /// Node availability in (0, 1]: GPU counts are divided by it.
    #[arg(long)]
    availability: Option<f64>,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

fn profile(key: &str) -> Result<Arc<dyn GpuProfile>, CliError> {
    resolve_profile(key).map_err(input)
}

fn positive(field: &'static str, v: f64) -> Result<(), CliError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(input(anyhow::anyhow!(
            "{field} {v}: must be a finite number above 0"
        )))
    }
}

impl PlanArgs {
    fn planner(&self) -> Result<Planner, CliError> {
        positive("--lam", self.lam)?;
        positive("--slo", self.slo)?;
        if let Some(a) = self.availability {
            if !(a > 0.0 && a <= 1.0) {
                return Err(input(anyhow::anyhow!(
                    "--availability {a}: must be in (0, 1]"
                )));
            }
        }
        Ok(Planner {
            cdf: Cdf::resolve(&self.cdf).map_err(input)?,
            lam: self.lam,
            targets: SizingTargets {
                slo_ms: self.slo,
                util_cap: (!self.no_util_cap).then_some(0.85),
                availability: self.availability,
            },
            long_max_ctx: self.long_max_ctx,
            gpu_short: profile(&self.gpu_short)?,
            gpu_long: profile(&self.gpu_long)?,
            method: match self.calibration {
                CalibrationArg::Exact => CalibrationMethod::Exact,
                CalibrationArg::Sampled => CalibrationMethod::Sampled(self.samples),
            },
            seed: self.seed,
        })
    }
}

fn emit<T: serde::Serialize>(
    out: &OutputArgs,
    report: &T,
    table: impl FnOnce(&T) -> String,
) -> Result<(), CliError> {
    out.emit(|| table(report), &aisim_report::to_json(report))
}

/// Flags of `optimize`.
#[derive(Debug, Args)]
pub struct OptimizeArgs {
    #[command(flatten)]
    plan: PlanArgs,
    /// Largest compression band of the sweep (from 1.0 in steps of 0.1).
    #[arg(long, default_value_t = 2.0)]
    gamma_max: f64,
    /// Success probability of compressing a borderline request.
    #[arg(long, default_value_t = 0.75)]
    p_compress: f64,
    /// Cheapest candidates verified by simulation.
    #[arg(long, default_value_t = 3)]
    verify_top: usize,
    /// Requests per simulated pool.
    #[arg(long, default_value_t = 40000)]
    n_sim_req: u64,
    /// Seeds per verification, run in parallel (mean and 95 % interval).
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// How the top candidates are verified: `slots` (slot-level M/G/c
    /// simulation), or `engine` (that, plus a replay through the engines).
    #[arg(long, value_enum, default_value_t = VerifyArg::Slots)]
    verify: VerifyArg,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum VerifyArg {
    Slots,
    Engine,
}

/// Runs `optimize`.
pub fn run_optimize(a: OptimizeArgs) -> Result<(), CliError> {
    if !(a.gamma_max >= 1.0 && a.gamma_max.is_finite()) {
        return Err(input(anyhow::anyhow!(
            "--gamma-max {}: must be at least 1.0",
            a.gamma_max
        )));
    }
    let p = OptimizeParams {
        b_short: a.plan.b_short,
        gamma_max: a.gamma_max,
        p_compress: a.p_compress.clamp(0.0, 1.0),
        verify_top: a.verify_top,
        n_sim_req: a.n_sim_req,
        seeds: a.seeds,
        verify_engine: a.verify == VerifyArg::Engine,
    };
    let r = optimize(&a.plan.planner()?, &p).map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_optimize)
}

/// Flags of `pareto`.
#[derive(Debug, Args)]
pub struct ParetoArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `pareto`.
pub fn run_pareto(a: ParetoArgs) -> Result<(), CliError> {
    let r = pareto(&a.plan.planner()?);
    emit(&a.output, &r, aisim_report::fleet::render_pareto)
}

/// Flags of `disagg`.
#[derive(Debug, Args)]
pub struct DisaggArgs {
    /// Length CDF (for the mean input and output lengths).
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 200.0)]
    lam: f64,
    /// Prefill profile.
    #[arg(long, default_value = "h100")]
    gpu_prefill: String,
    /// Decode profile.
    #[arg(long, default_value = "a100")]
    gpu_decode: String,
    /// Context window.
    #[arg(long, default_value_t = 8192)]
    max_ctx: u32,
    /// Mean input tokens [default: 0.75 × the CDF's mean total (upper edges)].
    #[arg(long)]
    mean_isl: Option<f64>,
    /// Mean output tokens [default: 0.25 × the CDF's mean total].
    #[arg(long)]
    mean_osl: Option<f64>,
    /// TTFT target, ms.
    #[arg(long, default_value_t = 500.0)]
    slo_ttft: f64,
    /// TPOT target, ms.
    #[arg(long, default_value_t = 100.0)]
    slo_tpot: f64,
    /// Most prefill GPUs.
    #[arg(long, default_value_t = 32)]
    max_prefill: u64,
    /// Most decode GPUs.
    #[arg(long, default_value_t = 64)]
    max_decode: u64,
    /// Prefill pool efficiency.
    #[arg(long, default_value_t = 0.90)]
    prefill_efficiency: f64,
    /// Decode pool efficiency.
    #[arg(long, default_value_t = 0.92)]
    decode_efficiency: f64,
    /// Effective TTFT over prefill compute.
    #[arg(long, default_value_t = 1.80)]
    ttft_multiplier: f64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `disagg`.
pub fn run_disagg(a: DisaggArgs) -> Result<(), CliError> {
    positive("--lam", a.lam)?;
    let cdf = Cdf::resolve(&a.cdf).map_err(input)?;
    let mean = cdf.mean_upper();
    let p = DisaggParams {
        lam: a.lam,
        max_ctx: a.max_ctx,
        mean_isl: a.mean_isl.unwrap_or(0.75 * mean),
        mean_osl: a.mean_osl.unwrap_or(0.25 * mean),
        slo_ttft_ms: a.slo_ttft,
        slo_tpot_ms: a.slo_tpot,
        max_prefill: a.max_prefill,
        max_decode: a.max_decode,
        prefill_efficiency: a.prefill_efficiency,
        decode_efficiency: a.decode_efficiency,
        ttft_multiplier: a.ttft_multiplier,
    };
    let r = disagg(
        profile(&a.gpu_prefill)?.as_ref(),
        profile(&a.gpu_decode)?.as_ref(),
        &p,
    );
    emit(&a.output, &r, aisim_report::fleet::render_disagg)
}

#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
enum RouterArg {
    Length,
    CompressRoute,
    Spillover,
    LeastLoaded,
    Random,
}

/// DES settings shared by `simulate` and `compare-routers`.
#[derive(Debug, Args)]
pub struct DesArgs {
    /// Short-pool GPUs.
    #[arg(long)]
    n_s: u64,
    /// Long-pool GPUs.
    #[arg(long)]
    n_l: u64,
    /// Compression band of compress_route.
    #[arg(long, default_value_t = 1.5)]
    gamma: f64,
    /// Requests.
    #[arg(long, default_value_t = 50000)]
    n_req: u64,
    /// Arrivals: poisson, gamma:B (burstiness), or trace:FILE (rescaled to --lam).
    #[arg(long, default_value = "poisson")]
    arrivals: String,
    /// Seeds run in parallel (mean and 95 % interval).
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Fraction of requests excluded as warm-up.
    #[arg(long, default_value_t = 0.1)]
    warmup: f64,
}

fn des_config(plan: &Planner, d: &DesArgs, b_short: u64, router: RouterSpec) -> DesConfig {
    DesConfig {
        pools: vec![
            PoolSpec {
                id: "short".into(),
                profile: Arc::clone(&plan.gpu_short),
                n_gpus: d.n_s,
                max_ctx: b_short as u32,
            },
            PoolSpec {
                id: "long".into(),
                profile: Arc::clone(&plan.gpu_long),
                n_gpus: d.n_l,
                max_ctx: plan.long_max_ctx,
            },
        ],
        router,
        pick: InstancePick::ShortestQueue,
        queue_cap: 512,
        warmup_frac: d.warmup.clamp(0.0, 0.9),
        slo_ms: plan.targets.slo_ms,
        seed: plan.seed,
    }
}

/// Flags of `simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    des: DesArgs,
    /// Router between the pools.
    #[arg(long, value_enum, default_value_t = RouterArg::Length)]
    router: RouterArg,
    #[command(flatten)]
    output: OutputArgs,
}

fn router_spec(r: RouterArg, b_short: u64, gamma: f64) -> RouterSpec {
    match r {
        RouterArg::Length => RouterSpec::Length {
            threshold: Some(b_short),
        },
        RouterArg::CompressRoute => RouterSpec::CompressRoute {
            b_short,
            gamma,
            compress_latency_ms: 3.0,
        },
        RouterArg::Spillover => RouterSpec::Spillover { threshold: 0.85 },
        RouterArg::LeastLoaded => RouterSpec::LeastLoaded,
        RouterArg::Random => RouterSpec::Random,
    }
}

/// What both simulating commands set up: the planner, the arrivals and the DES.
fn des_setup(
    p: &PlanArgs,
    d: &DesArgs,
    router: RouterSpec,
) -> Result<(Planner, Arrivals, DesConfig), CliError> {
    let plan = p.planner()?;
    let arrivals = parse_arrivals(&d.arrivals).map_err(input)?;
    let cfg = des_config(&plan, d, p.b_short, router);
    Ok((plan, arrivals, cfg))
}

/// Runs `simulate`.
pub fn run_simulate(a: SimulateArgs) -> Result<(), CliError> {
    let router = router_spec(a.router, a.plan.b_short, a.des.gamma);
    let (plan, arrivals, cfg) = des_setup(&a.plan, &a.des, router)?;
    let label = format!("{} + {} GPUs, {:?} router", a.des.n_s, a.des.n_l, a.router).to_lowercase();
    let r = simulate_seeds(&cfg, &label, a.des.seeds, plan.seed, |s| {
        generate(&plan.cdf, plan.lam, a.des.n_req, &arrivals, s)
    });
    emit(&a.output, &r, aisim_report::fleet::render_simulate)
}

/// Flags of `compare-routers`.
#[derive(Debug, Args)]
pub struct CompareRoutersArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    des: DesArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `compare-routers`.
pub fn run_compare_routers(a: CompareRoutersArgs) -> Result<(), CliError> {
    let b = a.plan.b_short;
    let routers = [
        RouterArg::Length,
        RouterArg::CompressRoute,
        RouterArg::Random,
    ]
    .map(|r| router_spec(r, b, a.des.gamma));
    let (plan, arrivals, cfg) = des_setup(&a.plan, &a.des, routers[0].clone())?;
    let r = compare_routers(&cfg, &routers, a.des.seeds, plan.seed, |s| {
        generate(&plan.cdf, plan.lam, a.des.n_req, &arrivals, s)
    });
    emit(&a.output, &r, aisim_report::fleet::render_compare)
}

/// Flags of `whatif`.
#[derive(Debug, Args)]
pub struct WhatIfArgs {
    #[command(flatten)]
    plan: PlanArgs,
    /// Arrival rates to evaluate (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "50,100,200,400")]
    lam_range: Vec<f64>,
    /// Profiles to put side by side (one pool each).
    #[arg(long, num_args = 1..)]
    gpu_compare: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `whatif`.
pub fn run_whatif(a: WhatIfArgs) -> Result<(), CliError> {
    let plan = a.plan.planner()?;
    for &l in &a.lam_range {
        positive("--lam-range", l)?;
    }
    let compare = a
        .gpu_compare
        .iter()
        .map(|k| profile(k))
        .collect::<Result<Vec<_>, _>>()?;
    let r = whatif(&plan, a.plan.b_short, &a.lam_range, &compare);
    emit(&a.output, &r, aisim_report::fleet::render_whatif)
}

/// Flags of `simulate-fleet`.
#[derive(Debug, Args)]
pub struct SimulateFleetArgs {
    /// Fleet file: {"pools": [{"id", "gpu", "n_gpus", "max_ctx"}], "router": ..., "workloads": {name: {"cdf", "lam_frac"}}}.
    file: PathBuf,
    /// Total arrival rate, req/s.
    #[arg(long, default_value_t = 200.0)]
    lam: f64,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0)]
    slo: f64,
    /// Requests.
    #[arg(long, default_value_t = 50000)]
    n_req: u64,
    /// Arrivals: poisson, gamma:B or trace:FILE.
    #[arg(long, default_value = "poisson")]
    arrivals: String,
    /// Seeds run in parallel.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `simulate-fleet`.
pub fn run_simulate_fleet(a: SimulateFleetArgs) -> Result<(), CliError> {
    positive("--lam", a.lam)?;
    let plan = FleetPlan::from_file(&a.file).map_err(input)?;
    let arrivals = parse_arrivals(&a.arrivals).map_err(input)?;
    let cfg = DesConfig {
        pools: plan.pools.clone(),
        router: plan.router.clone(),
        pick: InstancePick::ShortestQueue,
        queue_cap: 512,
        warmup_frac: 0.1,
        slo_ms: a.slo,
        seed: a.seed,
    };
    let r = simulate_seeds(&cfg, &a.file.display().to_string(), a.seeds, a.seed, |s| {
        plan.requests(a.lam, a.n_req, &arrivals, s)
    });
    emit(&a.output, &r, aisim_report::fleet::render_simulate)
}

/// Flags of `tok-per-watt`.
#[derive(Debug, Args)]
pub struct TokPerWattArgs {
    /// Length CDF.
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 100.0)]
    lam: f64,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0)]
    slo: f64,
    /// Context window of the pool.
    #[arg(long, default_value_t = 8192)]
    max_ctx: u32,
    /// Profiles.
    #[arg(long, num_args = 1.., default_values_t = ["h100".to_string(), "a100".to_string(), "a10g".to_string()])]
    gpus: Vec<String>,
    /// Use utilizations 0.2, 0.4, 0.6, 0.8 instead of sizing for the SLO.
    #[arg(long)]
    rho_sweep: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `tok-per-watt`.
pub fn run_tok_per_watt(a: TokPerWattArgs) -> Result<(), CliError> {
    positive("--lam", a.lam)?;
    let cdf = Cdf::resolve(&a.cdf).map_err(input)?;
    let profiles = a
        .gpus
        .iter()
        .map(|k| profile(k))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&dyn GpuProfile> = profiles.iter().map(|p| p.as_ref()).collect();
    let targets = SizingTargets {
        slo_ms: a.slo,
        ..Default::default()
    };
    let rhos = [0.2, 0.4, 0.6, 0.8];
    let r = tok_per_watt(
        &cdf,
        a.lam,
        a.max_ctx,
        &refs,
        &targets,
        a.rho_sweep.then_some(&rhos[..]),
    );
    emit(&a.output, &r, aisim_report::fleet::render_tok_per_watt)
}

/// Flags of `grid-flex`.
#[derive(Debug, Args)]
pub struct GridFlexArgs {
    /// Length CDF.
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 200.0)]
    lam: f64,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0)]
    slo: f64,
    /// Profile.
    #[arg(long, default_value = "h100")]
    gpu: String,
    /// Fleet size.
    #[arg(long, default_value_t = 40)]
    n_gpus: u64,
    /// Context window.
    #[arg(long, default_value_t = 8192)]
    max_ctx: u32,
    /// Power cuts, % of nominal (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,5,10,15,20,25,30,40,50"
    )]
    flex_pcts: Vec<f64>,
    /// Verify each cut by simulating this many requests (0: analytic only).
    #[arg(long, default_value_t = 0)]
    verify_des: u64,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `grid-flex`.
pub fn run_grid_flex(a: GridFlexArgs) -> Result<(), CliError> {
    positive("--lam", a.lam)?;
    if a.n_gpus == 0 {
        return Err(input(anyhow::anyhow!(
            "--n-gpus 0: a fleet needs at least one GPU"
        )));
    }
    for &p in &a.flex_pcts {
        if !(0.0..100.0).contains(&p) {
            return Err(input(anyhow::anyhow!(
                "--flex-pcts {p}: a cut is a percentage in [0, 100)"
            )));
        }
    }
    let cdf = Cdf::resolve(&a.cdf).map_err(input)?;
    let g = profile(&a.gpu)?;
    let r = grid_flex(
        &cdf,
        a.lam,
        a.n_gpus,
        &g,
        a.slo,
        a.max_ctx,
        &a.flex_pcts,
        a.verify_des,
        a.seed,
    );
    emit(&a.output, &r, aisim_report::fleet::render_grid_flex)
}

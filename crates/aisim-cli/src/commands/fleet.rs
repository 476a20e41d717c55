//! The fleet-planning subcommands: thin wrappers over `aisim-fleet`.

use std::path::PathBuf;
use std::sync::Arc;

use aisim_core::profile::{resolve_profile, GpuProfile};
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{generate, Arrivals, DesConfig, InstancePick, PoolSpec, RouterSpec};
use aisim_fleet::disagg::{
    disagg, disagg_verified, DisaggParams, DisaggVerifyParams, MAX_VERIFY_TOP,
};
use aisim_fleet::fleet_file::FleetPlan;
use aisim_fleet::optimize::{optimize, OptimizeParams};
use aisim_fleet::pareto::pareto;
use aisim_fleet::plan::Planner;
use aisim_fleet::power::{grid_flex, tok_per_watt};
use aisim_fleet::reports::{compare_routers, parse_arrivals, simulate_seeds, whatif};
use aisim_fleet::sizing::SizingTargets;
use clap::{Args, ValueEnum};

use crate::exit::{input, CliError};
use crate::output::{HtmlArgs, OutputArgs};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CalibrationArg {
    Exact,
    Sampled,
}

/// Workload, target and pools shared by the fleet commands.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Length CDF: azure, lmsys, agent_heavy, a JSON file, or trace:FILE.
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s [default: 200].
    #[arg(long, allow_negative_numbers = true)]
    lam: Option<f64>,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0, allow_negative_numbers = true)]
    slo: f64,
    /// Short-pool threshold, total tokens [default: 4096].
    #[arg(long, allow_negative_numbers = true)]
    b_short: Option<u64>,
    /// Longest context of the long pool.
    #[arg(long, default_value_t = 65536, allow_negative_numbers = true)]
    long_max_ctx: u32,
    /// Profile of the short pool.
    #[arg(long, default_value = "a100")]
    gpu_short: String,
    /// Profile of the long pool (and of a one-pool baseline).
    #[arg(long, default_value = "a100")]
    gpu_long: String,
    /// Seed [default: 42].
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
}

/// How the analytic sizing is done (the commands that size pools).
#[derive(Debug, Args)]
pub struct SizingArgs {
    /// Calibration: exact expectation, or a Monte-Carlo estimate.
    #[arg(long, value_enum, default_value_t = CalibrationArg::Exact)]
    calibration: CalibrationArg,
    /// Samples of the sampled calibration [default: 3000].
    #[arg(long, allow_negative_numbers = true)]
    samples: Option<u64>,
    /// Turn the 0.85 utilization cap off.
    #[arg(long)]
    no_util_cap: bool,
    /// Node availability in (0, 1]: GPU counts are divided by it.
    #[arg(long, allow_negative_numbers = true)]
    availability: Option<f64>,
}

const DEFAULT_LAM: f64 = 200.0;
const DEFAULT_B_SHORT: u64 = 4096;
const DEFAULT_SEED: u64 = 42;

fn profile(key: &str) -> Result<Arc<dyn GpuProfile>, CliError> {
    resolve_profile(key).map_err(input)
}

/// A flag the user gave that would have no effect: an error, not a silent no-op.
fn no_effect(given: bool, flag: &str, why: &str) -> Result<(), CliError> {
    if given {
        Err(input(anyhow::anyhow!("{flag} has no effect here: {why}")))
    } else {
        Ok(())
    }
}

impl PlanArgs {
    fn lam(&self) -> f64 {
        self.lam.unwrap_or(DEFAULT_LAM)
    }

    fn b_short(&self) -> u64 {
        self.b_short.unwrap_or(DEFAULT_B_SHORT)
    }

    /// The planner; without sizing flags, the default targets and exact calibration.
    fn planner(&self, sizing: Option<&SizingArgs>) -> Result<Planner, CliError> {
        let (method, util_cap, availability) = match sizing {
            Some(z) => {
                no_effect(
                    z.samples.is_some() && z.calibration == CalibrationArg::Exact,
                    "--samples",
                    "it sizes the sampled calibration; add --calibration sampled",
                )?;
                let method = match z.calibration {
                    CalibrationArg::Exact => CalibrationMethod::Exact,
                    CalibrationArg::Sampled => {
                        CalibrationMethod::Sampled(z.samples.unwrap_or(3000))
                    }
                };
                (method, (!z.no_util_cap).then_some(0.85), z.availability)
            }
            None => (CalibrationMethod::Exact, Some(0.85), None),
        };
        let planner = Planner {
            cdf: Cdf::resolve(&self.cdf).map_err(input)?,
            lam: self.lam(),
            targets: SizingTargets {
                slo_ms: self.slo,
                util_cap,
                availability,
            },
            long_max_ctx: self.long_max_ctx,
            gpu_short: profile(&self.gpu_short)?,
            gpu_long: profile(&self.gpu_long)?,
            method,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
        };
        planner.validate().map_err(input)?;
        Ok(planner)
    }

    /// `--seed` drives only sampled calibration in the purely analytic commands.
    fn seed_needs_sampling(&self, sizing: &SizingArgs) -> Result<(), CliError> {
        no_effect(
            self.seed.is_some() && sizing.calibration == CalibrationArg::Exact,
            "--seed",
            "with exact calibration nothing is random",
        )
    }
}

fn emit<T: serde::Serialize>(
    out: &OutputArgs,
    report: &T,
    table: impl FnOnce(&T) -> String,
) -> Result<(), CliError> {
    out.emit(|| table(report), &aisim_report::to_json(report))
}

/// `emit`, after the `--html` page of a simulating command.
fn emit_with_html<T: serde::Serialize>(
    out: &OutputArgs,
    html: &HtmlArgs,
    report: &T,
    table: impl FnOnce(&T) -> String,
    page: impl FnOnce(&T) -> String,
) -> Result<(), CliError> {
    out.check_stdout(html.on_stdout())?;
    html.write(|| page(report))?;
    out.emit_beside(
        html.on_stdout(),
        || table(report),
        &aisim_report::to_json(report),
    )
}

/// Flags of `optimize`.
#[derive(Debug, Args)]
pub struct OptimizeArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    sizing: SizingArgs,
    /// Largest compression band of the sweep (from 1.0 in steps of 0.1; at most 101).
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
    gamma_max: f64,
    /// Success probability of compressing a borderline request, in [0, 1].
    #[arg(long, default_value_t = 0.75, allow_negative_numbers = true)]
    p_compress: f64,
    /// Cheapest candidates verified by simulation (0: analytic only).
    #[arg(long, default_value_t = 3, allow_negative_numbers = true)]
    verify_top: usize,
    /// Requests per simulated pool [default: 40000].
    #[arg(long, allow_negative_numbers = true)]
    n_sim_req: Option<u64>,
    /// Seeds per verification, run in parallel (mean and 95 % interval) [default: 1].
    #[arg(long, allow_negative_numbers = true)]
    seeds: Option<u64>,
    /// How the top candidates are verified: `slots` (slot-level M/G/c
    /// simulation), or `engine` (that, plus a replay through the engines)
    /// [default: slots].
    #[arg(long, value_enum)]
    verify: Option<VerifyArg>,
    /// Timing of --verify engine: physics or fitted:FITTED.json, the physics
    /// model of each pool's profile [default: the profile's iteration model].
    #[arg(long)]
    timing: Option<String>,
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
    let analytic_only = a.verify_top == 0;
    let why = "--verify-top 0 runs no verification";
    no_effect(analytic_only && a.n_sim_req.is_some(), "--n-sim-req", why)?;
    no_effect(analytic_only && a.seeds.is_some(), "--seeds", why)?;
    no_effect(analytic_only && a.verify.is_some(), "--verify", why)?;
    let verify_engine = a.verify == Some(VerifyArg::Engine);
    no_effect(
        a.timing.is_some() && !verify_engine,
        "--timing",
        "it times --verify engine's replay",
    )?;
    let engine_coefficients = a
        .timing
        .as_deref()
        .map(super::timing::physics_coefficients)
        .transpose()
        .map_err(input)?;
    if analytic_only {
        a.plan.seed_needs_sampling(&a.sizing)?;
    }
    let p = OptimizeParams {
        b_short: a.plan.b_short(),
        gamma_max: a.gamma_max,
        p_compress: a.p_compress,
        verify_top: a.verify_top,
        n_sim_req: a.n_sim_req.unwrap_or(40000),
        seeds: a.seeds.unwrap_or(1),
        verify_engine,
        engine_coefficients,
    };
    let r = optimize(&a.plan.planner(Some(&a.sizing))?, &p).map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_optimize)
}

/// Flags of `pareto`.
#[derive(Debug, Args)]
pub struct ParetoArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    sizing: SizingArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `pareto`.
pub fn run_pareto(a: ParetoArgs) -> Result<(), CliError> {
    no_effect(
        a.plan.b_short.is_some(),
        "--b-short",
        "pareto tries every CDF breakpoint as the threshold",
    )?;
    a.plan.seed_needs_sampling(&a.sizing)?;
    let r = pareto(&a.plan.planner(Some(&a.sizing))?).map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_pareto)
}

/// Flags of `disagg`.
#[derive(Debug, Args)]
pub struct DisaggArgs {
    /// Length CDF (for the mean input and output lengths).
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 200.0, allow_negative_numbers = true)]
    lam: f64,
    /// Prefill profile.
    #[arg(long, default_value = "h100")]
    gpu_prefill: String,
    /// Decode profile.
    #[arg(long, default_value = "a100")]
    gpu_decode: String,
    /// Context window.
    #[arg(long, default_value_t = 8192, allow_negative_numbers = true)]
    max_ctx: u32,
    /// Mean input tokens [default: 0.75 × the CDF's mean total (upper edges)].
    #[arg(long, allow_negative_numbers = true)]
    mean_isl: Option<f64>,
    /// Mean output tokens [default: 0.25 × the CDF's mean total].
    #[arg(long, allow_negative_numbers = true)]
    mean_osl: Option<f64>,
    /// TTFT target, ms.
    #[arg(long, default_value_t = 500.0, allow_negative_numbers = true)]
    slo_ttft: f64,
    /// TPOT target, ms.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    slo_tpot: f64,
    /// Most prefill GPUs.
    #[arg(long, default_value_t = 32, allow_negative_numbers = true)]
    max_prefill: u64,
    /// Most decode GPUs (at most a million splits in all).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true)]
    max_decode: u64,
    /// Prefill pool efficiency, in (0, 1].
    #[arg(long, default_value_t = 0.90, allow_negative_numbers = true)]
    prefill_efficiency: f64,
    /// Decode pool efficiency, in (0, 1].
    #[arg(long, default_value_t = 0.92, allow_negative_numbers = true)]
    decode_efficiency: f64,
    /// Effective TTFT over prefill compute.
    #[arg(long, default_value_t = 1.80, allow_negative_numbers = true)]
    ttft_multiplier: f64,
    /// Also replay the cheapest splits through the disaggregated runtime
    /// (`engine`) and recommend by that check [default: analytic only].
    #[arg(long, value_enum)]
    verify: Option<DisaggVerifyArg>,
    /// Cheapest splits of the Pareto set replayed by --verify engine, 1 to
    /// 100 [default: 3].
    #[arg(long, allow_negative_numbers = true)]
    verify_top: Option<u64>,
    /// Requests per replay of --verify engine (the first fifth warm-up)
    /// [default: 20000].
    #[arg(long, allow_negative_numbers = true)]
    n_sim_req: Option<u64>,
    /// Seed of --verify engine's replays [default: 42].
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// KV bytes of one token sent from prefill to decode by --verify engine
    /// [default: from the profile's model, GPU/MODEL/tpN].
    #[arg(long, allow_negative_numbers = true)]
    kv_bytes_per_token: Option<u64>,
    /// KV link bandwidth of --verify engine, GB/s [default: 50].
    #[arg(long, allow_negative_numbers = true)]
    kv_transfer_gb_s: Option<f64>,
    /// Fixed cost of a KV transfer of --verify engine, ms [default: 0].
    #[arg(long, allow_negative_numbers = true)]
    kv_transfer_latency_ms: Option<f64>,
    /// Timing of --verify engine: physics or fitted:FITTED.json, the physics
    /// model of the profile [default: the profile's iteration model].
    #[arg(long)]
    timing: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum DisaggVerifyArg {
    Engine,
}

/// Runs `disagg`.
pub fn run_disagg(a: DisaggArgs) -> Result<(), CliError> {
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
    let engine = a.verify == Some(DisaggVerifyArg::Engine);
    let why = "it sets --verify engine's replay";
    no_effect(!engine && a.verify_top.is_some(), "--verify-top", why)?;
    no_effect(!engine && a.n_sim_req.is_some(), "--n-sim-req", why)?;
    no_effect(!engine && a.seed.is_some(), "--seed", why)?;
    no_effect(
        !engine && a.kv_bytes_per_token.is_some(),
        "--kv-bytes-per-token",
        why,
    )?;
    no_effect(
        !engine && a.kv_transfer_gb_s.is_some(),
        "--kv-transfer-gb-s",
        why,
    )?;
    no_effect(
        !engine && a.kv_transfer_latency_ms.is_some(),
        "--kv-transfer-latency-ms",
        why,
    )?;
    no_effect(!engine && a.timing.is_some(), "--timing", why)?;
    let (prefill, decode) = (profile(&a.gpu_prefill)?, profile(&a.gpu_decode)?);
    let r = if engine {
        let coefficients = a
            .timing
            .as_deref()
            .map(super::timing::physics_coefficients)
            .transpose()
            .map_err(input)?;
        let top = a.verify_top.unwrap_or(3);
        aisim_fleet::validate::count("--verify-top", top, MAX_VERIFY_TOP).map_err(input)?;
        let v = DisaggVerifyParams {
            top: top as usize,
            n_req: a.n_sim_req.unwrap_or(20000),
            seed: a.seed.unwrap_or(DEFAULT_SEED),
            kv_bytes_per_token: a.kv_bytes_per_token,
            kv_transfer_gb_s: a.kv_transfer_gb_s.unwrap_or(50.0),
            kv_transfer_latency_ms: a.kv_transfer_latency_ms.unwrap_or(0.0),
            coefficients,
        };
        disagg_verified(prefill.as_ref(), decode.as_ref(), &p, &v)
    } else {
        disagg(prefill.as_ref(), decode.as_ref(), &p)
    }
    .map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_disagg)
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
#[value(rename_all = "snake_case")]
enum RouterArg {
    Length,
    CompressRoute,
    Spillover,
    LeastLoaded,
    Random,
}

/// Request-level simulation settings shared by `simulate`, `compare-routers`
/// and `simulate-fleet`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Requests (at most 10 million).
    #[arg(long, default_value_t = 50000, allow_negative_numbers = true)]
    n_req: u64,
    /// Arrivals: poisson, gamma:B (burstiness), or trace:FILE (rescaled to --lam).
    #[arg(long, default_value = "poisson")]
    arrivals: String,
    /// Seeds run in parallel (mean and 95 % interval).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seeds: u64,
    /// Fraction of requests excluded as warm-up, in [0, 1).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    warmup: f64,
    #[command(flatten)]
    html: HtmlArgs,
}

impl RunArgs {
    fn config(
        &self,
        pools: Vec<PoolSpec>,
        router: RouterSpec,
        slo_ms: f64,
        seed: u64,
    ) -> DesConfig {
        DesConfig {
            pools,
            router,
            pick: InstancePick::ShortestQueue,
            queue_cap: 512,
            warmup_frac: self.warmup,
            slo_ms,
            seed,
        }
    }
}

/// Pool sizes of `simulate` and `compare-routers`.
#[derive(Debug, Args)]
pub struct DesArgs {
    /// Short-pool GPUs.
    #[arg(long, allow_negative_numbers = true)]
    n_s: u64,
    /// Long-pool GPUs.
    #[arg(long, allow_negative_numbers = true)]
    n_l: u64,
    #[command(flatten)]
    run: RunArgs,
}

fn two_pools(plan: &Planner, d: &DesArgs, b_short: u64) -> Result<Vec<PoolSpec>, CliError> {
    plan.validate_threshold(b_short).map_err(input)?;
    if d.n_s == 0 && d.n_l == 0 {
        return Err(input(anyhow::anyhow!(
            "--n-s 0 --n-l 0: a fleet needs at least one GPU"
        )));
    }
    Ok(vec![
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
    ])
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
    /// Compression band of `--router compress_route`, at least 1 [default: 1.5].
    #[arg(long, allow_negative_numbers = true)]
    gamma: Option<f64>,
    #[command(flatten)]
    output: OutputArgs,
}

const DEFAULT_GAMMA: f64 = 1.5;

fn router_spec(r: RouterArg, b_short: u64, gamma: f64) -> Result<RouterSpec, CliError> {
    Ok(match r {
        RouterArg::Length => RouterSpec::Length {
            threshold: Some(b_short),
        },
        RouterArg::CompressRoute => {
            // The library checks it as `router.gamma`; here it is the flag.
            aisim_fleet::validate::within("--gamma", gamma, 1.0, f64::MAX).map_err(input)?;
            RouterSpec::CompressRoute {
                b_short,
                gamma,
                compress_latency_ms: 3.0,
            }
        }
        RouterArg::Spillover => RouterSpec::Spillover { threshold: 0.85 },
        RouterArg::LeastLoaded => RouterSpec::LeastLoaded,
        RouterArg::Random => RouterSpec::Random,
    })
}

/// What both two-pool simulating commands set up: the planner, the arrivals and the DES.
fn des_setup(
    p: &PlanArgs,
    d: &DesArgs,
    router: RouterSpec,
) -> Result<(Planner, Arrivals, DesConfig), CliError> {
    let plan = p.planner(None)?;
    let arrivals = parse_arrivals(&d.run.arrivals).map_err(input)?;
    let pools = two_pools(&plan, d, p.b_short())?;
    let cfg = d.run.config(pools, router, plan.targets.slo_ms, plan.seed);
    cfg.validate().map_err(input)?;
    Ok((plan, arrivals, cfg))
}

/// Runs `simulate`.
pub fn run_simulate(a: SimulateArgs) -> Result<(), CliError> {
    no_effect(
        a.gamma.is_some() && a.router != RouterArg::CompressRoute,
        "--gamma",
        "only --router compress_route compresses",
    )?;
    let router = router_spec(a.router, a.plan.b_short(), a.gamma.unwrap_or(DEFAULT_GAMMA))?;
    let (plan, arrivals, cfg) = des_setup(&a.plan, &a.des, router)?;
    let label = format!("{} + {} GPUs, {:?} router", a.des.n_s, a.des.n_l, a.router).to_lowercase();
    let r = simulate_seeds(&cfg, &label, a.des.run.seeds, plan.seed, |s| {
        generate(&plan.cdf, plan.lam, a.des.run.n_req, &arrivals, s)
    })
    .map_err(input)?;
    emit_with_html(
        &a.output,
        &a.des.run.html,
        &r,
        aisim_report::fleet::render_simulate,
        aisim_report::html::render_simulate_html,
    )
}

/// Flags of `compare-routers`.
#[derive(Debug, Args)]
pub struct CompareRoutersArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    des: DesArgs,
    /// Compression band of the compress_route router, at least 1.
    #[arg(long, default_value_t = DEFAULT_GAMMA, allow_negative_numbers = true)]
    gamma: f64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `compare-routers`.
pub fn run_compare_routers(a: CompareRoutersArgs) -> Result<(), CliError> {
    let b = a.plan.b_short();
    let routers = [
        RouterArg::Length,
        RouterArg::CompressRoute,
        RouterArg::Random,
    ]
    .map(|r| router_spec(r, b, a.gamma))
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let (plan, arrivals, cfg) = des_setup(&a.plan, &a.des, routers[0].clone())?;
    let r = compare_routers(&cfg, &routers, a.des.run.seeds, plan.seed, |s| {
        generate(&plan.cdf, plan.lam, a.des.run.n_req, &arrivals, s)
    })
    .map_err(input)?;
    emit_with_html(
        &a.output,
        &a.des.run.html,
        &r,
        aisim_report::fleet::render_compare,
        aisim_report::html::render_compare_routers_html,
    )
}

/// Flags of `whatif`.
#[derive(Debug, Args)]
pub struct WhatIfArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    sizing: SizingArgs,
    /// Arrival rates to evaluate (comma-separated) [default: 50,100,200,400,
    /// or the one --lam].
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with = "lam",
        allow_negative_numbers = true
    )]
    lam_range: Option<Vec<f64>>,
    /// Profiles to put side by side (one pool each).
    #[arg(long, num_args = 1..)]
    gpu_compare: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `whatif`.
pub fn run_whatif(a: WhatIfArgs) -> Result<(), CliError> {
    a.plan.seed_needs_sampling(&a.sizing)?;
    // One --lam is a range of one rate.
    let lams = match (&a.lam_range, a.plan.lam) {
        (Some(r), _) => r.clone(),
        (None, Some(l)) => vec![l],
        (None, None) => vec![50.0, 100.0, 200.0, 400.0],
    };
    let mut plan = a.plan.planner(Some(&a.sizing))?;
    plan.lam = lams.first().copied().unwrap_or(DEFAULT_LAM);
    let compare = a
        .gpu_compare
        .iter()
        .map(|k| profile(k))
        .collect::<Result<Vec<_>, _>>()?;
    let r = whatif(&plan, a.plan.b_short(), &lams, &compare).map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_whatif)
}

/// Flags of `simulate-fleet`.
#[derive(Debug, Args)]
pub struct SimulateFleetArgs {
    /// Fleet file: {"pools": [{"id", "gpu", "n_gpus", "max_ctx"}], "router": ..., "workloads": {name: {"cdf", "lam_frac"}}}.
    file: PathBuf,
    /// Total arrival rate, req/s.
    #[arg(long, default_value_t = 200.0, allow_negative_numbers = true)]
    lam: f64,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0, allow_negative_numbers = true)]
    slo: f64,
    #[command(flatten)]
    run: RunArgs,
    /// Seed.
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    seed: u64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `simulate-fleet`.
pub fn run_simulate_fleet(a: SimulateFleetArgs) -> Result<(), CliError> {
    let plan = FleetPlan::from_file(&a.file).map_err(input)?;
    let arrivals = parse_arrivals(&a.run.arrivals).map_err(input)?;
    let cfg = a
        .run
        .config(plan.pools.clone(), plan.router.clone(), a.slo, a.seed);
    let r = simulate_seeds(
        &cfg,
        &a.file.display().to_string(),
        a.run.seeds,
        a.seed,
        |s| plan.requests(a.lam, a.run.n_req, &arrivals, s),
    )
    .map_err(input)?;
    emit_with_html(
        &a.output,
        &a.run.html,
        &r,
        aisim_report::fleet::render_simulate,
        aisim_report::html::render_simulate_html,
    )
}

/// Flags of `tok-per-watt`.
#[derive(Debug, Args)]
pub struct TokPerWattArgs {
    /// Length CDF.
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    lam: f64,
    /// P99 TTFT target the pools are sized for, ms [default: 500].
    #[arg(long, allow_negative_numbers = true)]
    slo: Option<f64>,
    /// Context window of the pool.
    #[arg(long, default_value_t = 8192, allow_negative_numbers = true)]
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
    no_effect(
        a.rho_sweep && a.slo.is_some(),
        "--slo",
        "--rho-sweep sets the utilizations instead of sizing for the SLO",
    )?;
    let cdf = Cdf::resolve(&a.cdf).map_err(input)?;
    let profiles = a
        .gpus
        .iter()
        .map(|k| profile(k))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&dyn GpuProfile> = profiles.iter().map(|p| p.as_ref()).collect();
    let targets = SizingTargets {
        slo_ms: a.slo.unwrap_or(500.0),
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
    )
    .map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_tok_per_watt)
}

/// Flags of `grid-flex`.
#[derive(Debug, Args)]
pub struct GridFlexArgs {
    /// Length CDF.
    #[arg(long, default_value = "azure")]
    cdf: String,
    /// Arrival rate, req/s.
    #[arg(long, default_value_t = 200.0, allow_negative_numbers = true)]
    lam: f64,
    /// P99 TTFT target, ms.
    #[arg(long, default_value_t = 500.0, allow_negative_numbers = true)]
    slo: f64,
    /// Profile.
    #[arg(long, default_value = "h100")]
    gpu: String,
    /// Fleet size.
    #[arg(long, default_value_t = 40, allow_negative_numbers = true)]
    n_gpus: u64,
    /// Context window.
    #[arg(long, default_value_t = 8192, allow_negative_numbers = true)]
    max_ctx: u32,
    /// Power cuts, % of nominal (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,5,10,15,20,25,30,40,50",
        allow_negative_numbers = true
    )]
    flex_pcts: Vec<f64>,
    /// Verify each cut by simulating this many requests (0: analytic only).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    verify_des: u64,
    /// Seed of the --verify-des simulation [default: 42].
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `grid-flex`.
pub fn run_grid_flex(a: GridFlexArgs) -> Result<(), CliError> {
    no_effect(
        a.seed.is_some() && a.verify_des == 0,
        "--seed",
        "only --verify-des simulates",
    )?;
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
        a.seed.unwrap_or(DEFAULT_SEED),
    )
    .map_err(input)?;
    emit(&a.output, &r, aisim_report::fleet::render_grid_flex)
}

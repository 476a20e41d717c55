//! The fleet-planning jobs: `optimize`, `pareto`, `disagg`, `simulate`,
//! `compare-routers`, `whatif`, `simulate-fleet`, `tok-per-watt` and
//! `grid-flex`, each a request with the CLI's flags and defaults and one
//! call into `aisim-fleet`.

use std::path::PathBuf;
use std::sync::Arc;

use aisim_core::profile::{resolve_profile, GpuProfile};
use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::cdf::{Cdf, LengthSource};
use aisim_fleet::des::{generate, Arrivals, DesConfig, InstancePick, PoolSpec, RouterSpec};
use aisim_fleet::disagg::{
    disagg as disagg_plan, disagg_verified, DisaggParams, DisaggReport, DisaggVerifyParams,
    MAX_VERIFY_TOP,
};
use aisim_fleet::fleet_file::FleetPlan;
use aisim_fleet::optimize::{optimize as optimize_plan, OptimizeParams, OptimizeReport};
use aisim_fleet::pareto::{pareto as pareto_plan, ParetoReport};
use aisim_fleet::plan::Planner;
pub use aisim_fleet::pool_model::SizingModel;
use aisim_fleet::power::{grid_flex as flex, tok_per_watt as per_watt};
use aisim_fleet::power::{GridFlexReport, TokPerWattReport};
use aisim_fleet::reports::{
    compare_routers as compare, parse_arrivals, simulate_seeds, whatif as what_if,
    CompareRoutersReport, SimulateReport, WhatIfReport,
};
use aisim_fleet::sizing::SizingTargets;
use serde::{Deserialize, Serialize};

use super::error::no_effect;
use super::timing_form::physics_coefficients;
use super::{JobError, Version};

const DEFAULT_LAM: f64 = 200.0;
const DEFAULT_B_SHORT: u64 = 4096;
const DEFAULT_SEED: u64 = 42;
const DEFAULT_GAMMA: f64 = 1.5;

fn profile(key: &str) -> Result<Arc<dyn GpuProfile>, JobError> {
    Ok(resolve_profile(key)?)
}

/// Workload, target and pools shared by the two-pool planners (`--cdf`,
/// `--lam`, `--slo-ttft-ms`, `--b-short`, `--long-max-ctx`, `--gpu-short`,
/// `--gpu-long`, `--seed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlanRequest {
    /// Length CDF: azure, lmsys, agent_heavy, a JSON file, or trace:FILE.
    pub cdf: String,
    /// Arrival rate, req/s [default: 200].
    pub lam: Option<f64>,
    /// P99 TTFT target, ms.
    pub slo: f64,
    /// Short-pool threshold, total tokens [default: 4096].
    pub b_short: Option<u64>,
    /// Longest context of the long pool.
    pub long_max_ctx: u32,
    /// Profile of the short pool.
    pub gpu_short: String,
    /// Profile of the long pool (and of a one-pool baseline).
    pub gpu_long: String,
    /// Seed [default: 42].
    pub seed: Option<u64>,
}

impl Default for PlanRequest {
    fn default() -> PlanRequest {
        PlanRequest {
            cdf: "azure".into(),
            lam: None,
            slo: 500.0,
            b_short: None,
            long_max_ctx: 65536,
            gpu_short: "a100".into(),
            gpu_long: "a100".into(),
            seed: None,
        }
    }
}

/// How the analytic sizing is calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Calibration {
    /// The exact expectation.
    #[default]
    Exact,
    /// A Monte-Carlo estimate.
    Sampled,
}

/// How the analytic sizing is done (`--calibration`, `--samples`,
/// `--no-util-cap`, `--availability`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SizingRequest {
    /// The model pools are sized with: `batch` (GPUs running continuous
    /// batching, as the replay's engines) or `slots` (the reference fleet
    /// simulator's KV slots).
    pub model: SizingModel,
    /// Calibration: exact expectation, or a Monte-Carlo estimate.
    pub calibration: Calibration,
    /// Samples of the sampled calibration [default: 3000].
    pub samples: Option<u64>,
    /// Turn the 0.85 utilization cap off.
    pub no_util_cap: bool,
    /// Node availability in (0, 1]: GPU counts are divided by it.
    pub availability: Option<f64>,
}

impl PlanRequest {
    fn lam(&self) -> f64 {
        self.lam.unwrap_or(DEFAULT_LAM)
    }

    fn b_short(&self) -> u64 {
        self.b_short.unwrap_or(DEFAULT_B_SHORT)
    }

    /// The planner; without sizing, the default targets and exact calibration.
    fn planner(&self, sizing: Option<&SizingRequest>) -> Result<Planner, JobError> {
        let model = sizing.map_or(SizingModel::default(), |z| z.model);
        let (method, util_cap, availability) = match sizing {
            Some(z) => {
                no_effect(
                    z.samples.is_some() && z.calibration == Calibration::Exact,
                    "--samples",
                    "it sizes the sampled calibration; add --calibration sampled",
                )?;
                let method = match z.calibration {
                    Calibration::Exact => CalibrationMethod::Exact,
                    Calibration::Sampled => CalibrationMethod::Sampled(z.samples.unwrap_or(3000)),
                };
                (method, (!z.no_util_cap).then_some(0.85), z.availability)
            }
            None => (CalibrationMethod::Exact, Some(0.85), None),
        };
        let planner = Planner {
            cdf: Cdf::resolve(&self.cdf)?,
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
            model,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
        };
        planner.validate()?;
        Ok(planner)
    }

    /// `--seed` drives only sampled calibration in the purely analytic commands.
    fn seed_needs_sampling(&self, sizing: &SizingRequest) -> Result<(), JobError> {
        no_effect(
            self.seed.is_some() && sizing.calibration == Calibration::Exact,
            "--seed",
            "with exact calibration nothing is random",
        )
    }
}

/// How `optimize` verifies its top candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verify {
    /// Slot-level M/G/c simulation.
    Slots,
    /// That, plus a replay through the engines.
    Engine,
}

/// `aisim optimize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OptimizeRequest {
    /// Request version.
    pub version: Version,
    /// Workload, target and pools.
    pub plan: PlanRequest,
    /// Sizing.
    pub sizing: SizingRequest,
    /// Largest compression band of the sweep.
    pub gamma_max: f64,
    /// Success probability of compressing a borderline request, in [0, 1].
    pub p_compress: f64,
    /// Cheapest candidates verified by simulation (0: analytic only).
    pub verify_top: usize,
    /// Requests per simulated pool [default: 40000].
    pub n_sim_req: Option<u64>,
    /// Seeds per verification [default: 1].
    pub seeds: Option<u64>,
    /// How the top candidates are verified [default: slots].
    pub verify: Option<Verify>,
    /// Timing of `verify: engine`: physics or fitted:FITTED.json.
    pub timing: Option<String>,
}

impl Default for OptimizeRequest {
    fn default() -> OptimizeRequest {
        OptimizeRequest {
            version: Version::CURRENT,
            plan: PlanRequest::default(),
            sizing: SizingRequest::default(),
            gamma_max: 2.0,
            p_compress: 0.75,
            verify_top: 3,
            n_sim_req: None,
            seeds: None,
            verify: None,
            timing: None,
        }
    }
}

/// Runs `optimize`.
pub fn optimize(a: &OptimizeRequest) -> Result<OptimizeReport, JobError> {
    let analytic_only = a.verify_top == 0;
    let why = "--verify-top 0 runs no verification";
    no_effect(analytic_only && a.n_sim_req.is_some(), "--n-sim-req", why)?;
    no_effect(analytic_only && a.seeds.is_some(), "--seeds", why)?;
    no_effect(analytic_only && a.verify.is_some(), "--verify", why)?;
    let verify_engine = a.verify == Some(Verify::Engine);
    no_effect(
        a.timing.is_some() && !verify_engine,
        "--timing",
        "it times --verify engine's replay",
    )?;
    let engine_coefficients = a.timing.as_deref().map(physics_coefficients).transpose()?;
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
    Ok(optimize_plan(&a.plan.planner(Some(&a.sizing))?, &p)?)
}

/// `aisim pareto`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ParetoRequest {
    /// Request version.
    pub version: Version,
    /// Workload, target and pools.
    pub plan: PlanRequest,
    /// Sizing.
    pub sizing: SizingRequest,
}

/// Runs `pareto`.
pub fn pareto(a: &ParetoRequest) -> Result<ParetoReport, JobError> {
    no_effect(
        a.plan.b_short.is_some(),
        "--b-short",
        "pareto tries every CDF breakpoint as the threshold",
    )?;
    a.plan.seed_needs_sampling(&a.sizing)?;
    Ok(pareto_plan(&a.plan.planner(Some(&a.sizing))?)?)
}

/// How `disagg` checks its splits besides the analytic model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisaggVerify {
    /// Replay the cheapest splits through the disaggregated runtime.
    Engine,
}

/// `aisim disagg`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DisaggRequest {
    /// Request version.
    pub version: Version,
    /// Length CDF (for the mean input and output lengths).
    pub cdf: String,
    /// Arrival rate, req/s.
    pub lam: f64,
    /// Prefill profile.
    pub gpu_prefill: String,
    /// Decode profile.
    pub gpu_decode: String,
    /// Context window.
    pub max_ctx: u32,
    /// Mean input tokens [default: 0.75 × the CDF's mean total].
    pub mean_isl: Option<f64>,
    /// Mean output tokens [default: 0.25 × the CDF's mean total].
    pub mean_osl: Option<f64>,
    /// TTFT target, ms.
    pub slo_ttft: f64,
    /// TPOT target, ms.
    pub slo_tpot: f64,
    /// Most prefill GPUs.
    pub max_prefill: u64,
    /// Most decode GPUs.
    pub max_decode: u64,
    /// The model splits are sized with: `batch` (each pool's GPUs running
    /// continuous batching, as the replay's disaggregated runtime) or
    /// `slots` (the reference fleet simulator's) [default: batch].
    pub model: SizingModel,
    /// Prefill pool efficiency, in (0, 1]; the slot model's [default: 0.90].
    pub prefill_efficiency: Option<f64>,
    /// Decode pool efficiency, in (0, 1]; the slot model's [default: 0.92].
    pub decode_efficiency: Option<f64>,
    /// Effective TTFT over prefill compute; the slot model's [default: 1.80].
    pub ttft_multiplier: Option<f64>,
    /// Also replay the cheapest splits [default: analytic only].
    pub verify: Option<DisaggVerify>,
    /// Cheapest splits replayed by `verify: engine`, 1 to 100 [default: 3].
    pub verify_top: Option<u64>,
    /// Requests per replay of `verify: engine` [default: 20000].
    pub n_sim_req: Option<u64>,
    /// Seed of `verify: engine`'s replays [default: 42].
    pub seed: Option<u64>,
    /// KV bytes of one token sent from prefill to decode [default: from the profile's model].
    pub kv_bytes_per_token: Option<u64>,
    /// KV link bandwidth, GB/s [default: 50].
    pub kv_transfer_gb_s: Option<f64>,
    /// Fixed cost of a KV transfer, ms [default: 0].
    pub kv_transfer_latency_ms: Option<f64>,
    /// Timing of `verify: engine`: physics or fitted:FITTED.json.
    pub timing: Option<String>,
}

impl Default for DisaggRequest {
    fn default() -> DisaggRequest {
        DisaggRequest {
            version: Version::CURRENT,
            cdf: "azure".into(),
            lam: 200.0,
            gpu_prefill: "h100".into(),
            gpu_decode: "a100".into(),
            max_ctx: 8192,
            mean_isl: None,
            mean_osl: None,
            slo_ttft: 500.0,
            slo_tpot: 100.0,
            max_prefill: 32,
            max_decode: 64,
            model: SizingModel::default(),
            prefill_efficiency: None,
            decode_efficiency: None,
            ttft_multiplier: None,
            verify: None,
            verify_top: None,
            n_sim_req: None,
            seed: None,
            kv_bytes_per_token: None,
            kv_transfer_gb_s: None,
            kv_transfer_latency_ms: None,
            timing: None,
        }
    }
}

/// Runs `disagg`.
pub fn disagg(a: &DisaggRequest) -> Result<DisaggReport, JobError> {
    let cdf = Cdf::resolve(&a.cdf)?;
    // A trace's own mean lengths; a CDF's mean total split 75/25 (the reference's rule).
    let (isl, osl) = match cdf.length_source() {
        LengthSource::TracePairs => cdf.mean_lengths(),
        LengthSource::Split80_20 => (0.75 * cdf.mean_upper(), 0.25 * cdf.mean_upper()),
    };
    // A mean taken from the workload is the workload's to answer for.
    for (given, mean, flag) in [
        (a.mean_isl, isl, "--mean-isl"),
        (a.mean_osl, osl, "--mean-osl"),
    ] {
        if given.is_none() {
            aisim_fleet::validate::tokens(flag, mean).map_err(|_| {
                JobError::msg(format!(
                    "invalid `--cdf` = {}: its mean {} is {} tokens, out of range (above 0, at most {}); give {flag}",
                    a.cdf,
                    if flag == "--mean-isl" { "prompt" } else { "output" },
                    aisim_core::number::rounded(mean, 4),
                    aisim_fleet::validate::MAX_CONTEXT
                ))
            })?;
        }
    }
    let p = DisaggParams {
        lam: a.lam,
        max_ctx: a.max_ctx,
        mean_isl: a.mean_isl.unwrap_or(isl),
        mean_osl: a.mean_osl.unwrap_or(osl),
        slo_ttft_ms: a.slo_ttft,
        slo_tpot_ms: a.slo_tpot,
        max_prefill: a.max_prefill,
        max_decode: a.max_decode,
        prefill_efficiency: a.prefill_efficiency.unwrap_or(0.90),
        decode_efficiency: a.decode_efficiency.unwrap_or(0.92),
        ttft_multiplier: a.ttft_multiplier.unwrap_or(1.80),
        model: a.model,
    };
    for (given, flag) in [
        (a.prefill_efficiency.is_some(), "--prefill-efficiency"),
        (a.decode_efficiency.is_some(), "--decode-efficiency"),
        (a.ttft_multiplier.is_some(), "--ttft-multiplier"),
    ] {
        no_effect(
            a.model == SizingModel::Batch && given,
            flag,
            "it is a factor of the slot model; the batch model has none (add --sizing-model slots)",
        )?;
    }
    let engine = a.verify == Some(DisaggVerify::Engine);
    let why = "it sets --verify engine's replay";
    for (given, flag) in [
        (a.verify_top.is_some(), "--verify-top"),
        (a.n_sim_req.is_some(), "--n-sim-req"),
        (a.seed.is_some(), "--seed"),
        (a.kv_bytes_per_token.is_some(), "--kv-bytes-per-token"),
        (a.kv_transfer_gb_s.is_some(), "--kv-transfer-gb-s"),
        (
            a.kv_transfer_latency_ms.is_some(),
            "--kv-transfer-latency-ms",
        ),
        (a.timing.is_some(), "--timing"),
    ] {
        no_effect(!engine && given, flag, why)?;
    }
    let (prefill, decode) = (profile(&a.gpu_prefill)?, profile(&a.gpu_decode)?);
    if !engine {
        return Ok(disagg_plan(prefill.as_ref(), decode.as_ref(), &p)?);
    }
    let coefficients = a.timing.as_deref().map(physics_coefficients).transpose()?;
    let top = a.verify_top.unwrap_or(3);
    aisim_fleet::validate::count("--verify-top", top, MAX_VERIFY_TOP)?;
    let v = DisaggVerifyParams {
        top: top as usize,
        n_req: a.n_sim_req.unwrap_or(20000),
        seed: a.seed.unwrap_or(DEFAULT_SEED),
        kv_bytes_per_token: a.kv_bytes_per_token,
        kv_transfer_gb_s: a.kv_transfer_gb_s.unwrap_or(50.0),
        kv_transfer_latency_ms: a.kv_transfer_latency_ms.unwrap_or(0.0),
        coefficients,
    };
    Ok(disagg_verified(prefill.as_ref(), decode.as_ref(), &p, &v)?)
}

/// A router between two pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    /// By length, at the short pool's threshold.
    #[default]
    Length,
    /// By length, compressing borderline requests into the short pool.
    CompressRoute,
    /// Short pool first, spilling over at 85 % load.
    Spillover,
    /// The least loaded pool.
    LeastLoaded,
    /// A random pool.
    Random,
}

fn router_spec(r: Router, b_short: u64, gamma: f64) -> Result<RouterSpec, JobError> {
    Ok(match r {
        Router::Length => RouterSpec::Length {
            threshold: Some(b_short),
        },
        Router::CompressRoute => {
            // The library checks it as `router.gamma`; here it is the flag.
            aisim_fleet::validate::within("--gamma", gamma, 1.0, f64::MAX)?;
            RouterSpec::CompressRoute {
                b_short,
                gamma,
                compress_latency_ms: 3.0,
            }
        }
        Router::Spillover => RouterSpec::Spillover { threshold: 0.85 },
        Router::LeastLoaded => RouterSpec::LeastLoaded,
        Router::Random => RouterSpec::Random,
    })
}

/// Request-level simulation settings shared by `simulate`, `compare-routers`
/// and `simulate-fleet` (`--n-req`, `--arrivals`, `--seeds`, `--warmup`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunRequest {
    /// Requests (at most 10 million).
    pub n_req: u64,
    /// Arrivals: poisson, gamma:B (burstiness), or trace:FILE (rescaled to the rate).
    pub arrivals: String,
    /// Seeds run in parallel (mean and 95 % interval).
    pub seeds: u64,
    /// Fraction of requests excluded as warm-up, in [0, 1).
    pub warmup: f64,
}

impl Default for RunRequest {
    fn default() -> RunRequest {
        RunRequest {
            n_req: 50000,
            arrivals: "poisson".into(),
            seeds: 1,
            warmup: 0.1,
        }
    }
}

impl RunRequest {
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

/// Pool sizes of `simulate` and `compare-routers` (both required, as on
/// the command line), and how they are run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesRequest {
    /// Short-pool GPUs.
    pub n_s: u64,
    /// Long-pool GPUs.
    pub n_l: u64,
    /// How the simulation runs.
    #[serde(default)]
    pub run: RunRequest,
}

fn two_pools(plan: &Planner, d: &DesRequest, b_short: u64) -> Result<Vec<PoolSpec>, JobError> {
    plan.validate_threshold(b_short)?;
    if d.n_s == 0 && d.n_l == 0 {
        return Err(JobError::msg(
            "--n-s 0 --n-l 0: a fleet needs at least one GPU",
        ));
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

/// What both two-pool simulating jobs set up: the planner, the arrivals and the DES.
fn des_setup(
    p: &PlanRequest,
    d: &DesRequest,
    router: RouterSpec,
) -> Result<(Planner, Arrivals, DesConfig), JobError> {
    let plan = p.planner(None)?;
    let arrivals = parse_arrivals(&d.run.arrivals)?;
    let pools = two_pools(&plan, d, p.b_short())?;
    let cfg = d.run.config(pools, router, plan.targets.slo_ms, plan.seed);
    cfg.validate()?;
    Ok((plan, arrivals, cfg))
}

/// `aisim simulate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulateRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// Workload, target and pools.
    #[serde(default)]
    pub plan: PlanRequest,
    /// Pool sizes and the simulation.
    pub des: DesRequest,
    /// Router between the pools.
    #[serde(default)]
    pub router: Router,
    /// Compression band of `router: compress_route`, at least 1 [default: 1.5].
    #[serde(default)]
    pub gamma: Option<f64>,
}

/// Runs `simulate`.
pub fn simulate(a: &SimulateRequest) -> Result<SimulateReport, JobError> {
    no_effect(
        a.gamma.is_some() && a.router != Router::CompressRoute,
        "--gamma",
        "only --router compress_route compresses",
    )?;
    let router = router_spec(a.router, a.plan.b_short(), a.gamma.unwrap_or(DEFAULT_GAMMA))?;
    let (plan, arrivals, cfg) = des_setup(&a.plan, &a.des, router)?;
    let label = format!("{} + {} GPUs, {:?} router", a.des.n_s, a.des.n_l, a.router).to_lowercase();
    Ok(simulate_seeds(
        &cfg,
        &label,
        a.des.run.seeds,
        plan.seed,
        |s| generate(&plan.cdf, plan.lam, a.des.run.n_req, &arrivals, s),
    )?)
}

/// `aisim compare-routers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareRoutersRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// Workload, target and pools.
    #[serde(default)]
    pub plan: PlanRequest,
    /// Pool sizes and the simulation.
    pub des: DesRequest,
    /// Compression band of the compress_route router, at least 1.
    #[serde(default = "default_gamma")]
    pub gamma: f64,
}

fn default_gamma() -> f64 {
    DEFAULT_GAMMA
}

/// Runs `compare-routers`.
pub fn compare_routers(a: &CompareRoutersRequest) -> Result<CompareRoutersReport, JobError> {
    let b = a.plan.b_short();
    let routers = [Router::Length, Router::CompressRoute, Router::Random]
        .map(|r| router_spec(r, b, a.gamma))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let (plan, arrivals, cfg) = des_setup(&a.plan, &a.des, routers[0].clone())?;
    Ok(compare(&cfg, &routers, a.des.run.seeds, plan.seed, |s| {
        generate(&plan.cdf, plan.lam, a.des.run.n_req, &arrivals, s)
    })?)
}

/// `aisim whatif`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WhatIfRequest {
    /// Request version.
    pub version: Version,
    /// Workload, target and pools.
    pub plan: PlanRequest,
    /// Sizing.
    pub sizing: SizingRequest,
    /// Arrival rates to evaluate [default: 50, 100, 200, 400, or the one `lam`].
    pub lam_range: Option<Vec<f64>>,
    /// Profiles to put side by side (one pool each).
    pub gpu_compare: Vec<String>,
}

/// Runs `whatif`.
pub fn whatif(a: &WhatIfRequest) -> Result<WhatIfReport, JobError> {
    a.plan.seed_needs_sampling(&a.sizing)?;
    if a.lam_range.is_some() && a.plan.lam.is_some() {
        return Err(JobError::msg(
            "--lam-range and --lam cannot be used together: one --lam is a range of one rate",
        ));
    }
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
    Ok(what_if(&plan, a.plan.b_short(), &lams, &compare)?)
}

/// `aisim simulate-fleet FILE` (the file required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulateFleetRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The fleet file (pools, router, workloads).
    pub file: PathBuf,
    /// Total arrival rate, req/s [default: 200].
    #[serde(default = "default_fleet_lam")]
    pub lam: f64,
    /// P99 TTFT target, ms [default: 500].
    #[serde(default = "default_slo")]
    pub slo: f64,
    /// How the simulation runs.
    #[serde(default)]
    pub run: RunRequest,
    /// Seed [default: 42].
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_fleet_lam() -> f64 {
    200.0
}

fn default_slo() -> f64 {
    500.0
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

/// Runs `simulate-fleet`.
pub fn simulate_fleet(a: &SimulateFleetRequest) -> Result<SimulateReport, JobError> {
    let plan = FleetPlan::from_file(&a.file)?;
    let arrivals = parse_arrivals(&a.run.arrivals)?;
    let cfg = a
        .run
        .config(plan.pools.clone(), plan.router.clone(), a.slo, a.seed);
    Ok(simulate_seeds(
        &cfg,
        &a.file.display().to_string(),
        a.run.seeds,
        a.seed,
        |s| plan.requests(a.lam, a.run.n_req, &arrivals, s),
    )?)
}

/// `aisim tok-per-watt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TokPerWattRequest {
    /// Request version.
    pub version: Version,
    /// Length CDF.
    pub cdf: String,
    /// Arrival rate, req/s.
    pub lam: f64,
    /// P99 TTFT target the pools are sized for, ms [default: 500].
    pub slo: Option<f64>,
    /// Context window of the pool.
    pub max_ctx: u32,
    /// Profiles.
    pub gpus: Vec<String>,
    /// Use utilizations 0.2, 0.4, 0.6, 0.8 instead of sizing for the SLO.
    pub rho_sweep: bool,
}

impl Default for TokPerWattRequest {
    fn default() -> TokPerWattRequest {
        TokPerWattRequest {
            version: Version::CURRENT,
            cdf: "azure".into(),
            lam: 100.0,
            slo: None,
            max_ctx: 8192,
            gpus: vec!["h100".into(), "a100".into(), "a10g".into()],
            rho_sweep: false,
        }
    }
}

/// Runs `tok-per-watt`.
pub fn tok_per_watt(a: &TokPerWattRequest) -> Result<TokPerWattReport, JobError> {
    no_effect(
        a.rho_sweep && a.slo.is_some(),
        "--slo-ttft-ms",
        "--rho-sweep sets the utilizations instead of sizing for the SLO",
    )?;
    let cdf = Cdf::resolve(&a.cdf)?;
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
    Ok(per_watt(
        &cdf,
        a.lam,
        a.max_ctx,
        &refs,
        &targets,
        a.rho_sweep.then_some(&rhos[..]),
    )?)
}

/// `aisim grid-flex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GridFlexRequest {
    /// Request version.
    pub version: Version,
    /// Length CDF.
    pub cdf: String,
    /// Arrival rate, req/s.
    pub lam: f64,
    /// P99 TTFT target, ms.
    pub slo: f64,
    /// Profile.
    pub gpu: String,
    /// Fleet size.
    pub n_gpus: u64,
    /// Context window.
    pub max_ctx: u32,
    /// Power cuts, % of nominal.
    pub flex_pcts: Vec<f64>,
    /// Verify each cut by simulating this many requests (0: analytic only).
    pub verify_des: u64,
    /// Seed of the `verify_des` simulation [default: 42].
    pub seed: Option<u64>,
}

impl Default for GridFlexRequest {
    fn default() -> GridFlexRequest {
        GridFlexRequest {
            version: Version::CURRENT,
            cdf: "azure".into(),
            lam: 200.0,
            slo: 500.0,
            gpu: "h100".into(),
            n_gpus: 40,
            max_ctx: 8192,
            flex_pcts: vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0],
            verify_des: 0,
            seed: None,
        }
    }
}

/// Runs `grid-flex`.
pub fn grid_flex(a: &GridFlexRequest) -> Result<GridFlexReport, JobError> {
    no_effect(
        a.seed.is_some() && a.verify_des == 0,
        "--seed",
        "only --verify-des simulates",
    )?;
    let cdf = Cdf::resolve(&a.cdf)?;
    let g = profile(&a.gpu)?;
    Ok(flex(
        &cdf,
        a.lam,
        a.n_gpus,
        &g,
        a.slo,
        a.max_ctx,
        &a.flex_pcts,
        a.verify_des,
        a.seed.unwrap_or(DEFAULT_SEED),
    )?)
}

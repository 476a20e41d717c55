//! The fleet-planning subcommands: thin wrappers over `aisim-fleet`.

use std::path::{Path, PathBuf};

use aisim_lab::jobs::fleet::{
    self as jobs, Calibration, CompareRoutersRequest, DesRequest, DisaggRequest, DisaggVerify,
    GridFlexRequest, OptimizeRequest, ParetoRequest, PlanRequest, Router, RunRequest,
    SimulateFleetRequest, SimulateRequest, SizingModel, SizingRequest, TokPerWattRequest, Verify,
    WhatIfRequest,
};
use aisim_lab::jobs::Version;
use clap::{Args, ValueEnum};

use crate::exit::{job, CliError};
use crate::output::{check_paths, HtmlArgs, OutputArgs};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CalibrationArg {
    Exact,
    Sampled,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum SizingModelArg {
    /// GPUs running continuous batching, as the replay's engines do
    Batch,
    /// The reference fleet simulator's KV slots at the pool's maximum context
    Slots,
}

impl From<SizingModelArg> for SizingModel {
    fn from(a: SizingModelArg) -> SizingModel {
        match a {
            SizingModelArg::Batch => SizingModel::Batch,
            SizingModelArg::Slots => SizingModel::Slots,
        }
    }
}

/// The P99 TTFT target every planner sizes for (`--slo` is its former name).
#[derive(Args, Debug, Clone, Copy)]
pub struct SloTtftArg {
    /// P99 TTFT target, ms.
    #[arg(
        long = "slo-ttft-ms",
        alias = "slo",
        value_name = "MS",
        default_value_t = 500.0,
        allow_negative_numbers = true
    )]
    pub ms: f64,
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
    #[command(flatten)]
    slo: SloTtftArg,
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
    /// The sizing model: GPUs running continuous batching as the replay's
    /// engines do (batch), or the reference fleet simulator's KV slots at the
    /// pool's maximum context (slots)
    #[arg(long, value_enum, default_value_t = SizingModelArg::Batch)]
    sizing_model: SizingModelArg,
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

impl PlanArgs {
    fn request(&self) -> PlanRequest {
        PlanRequest {
            cdf: self.cdf.clone(),
            lam: self.lam,
            slo: self.slo.ms,
            b_short: self.b_short,
            long_max_ctx: self.long_max_ctx,
            gpu_short: self.gpu_short.clone(),
            gpu_long: self.gpu_long.clone(),
            seed: self.seed,
        }
    }
}

impl SizingArgs {
    fn request(&self) -> SizingRequest {
        SizingRequest {
            model: self.sizing_model.into(),
            calibration: match self.calibration {
                CalibrationArg::Exact => Calibration::Exact,
                CalibrationArg::Sampled => Calibration::Sampled,
            },
            samples: self.samples,
            no_util_cap: self.no_util_cap,
            availability: self.availability,
        }
    }
}

/// Refuses, before the work, an output (`--out`, `--html`) that is a file
/// the command reads (`files`: each flag and its value, `trace:` and
/// `fitted:` forms included), or the other output.
fn check_files(
    files: &[(&str, Option<&str>)],
    out: &OutputArgs,
    html: Option<&HtmlArgs>,
) -> Result<(), CliError> {
    let inputs: Vec<(&str, &Path)> = files
        .iter()
        .filter_map(|(flag, v)| {
            let v = (*v)?;
            let path = ["trace:", "fitted:"]
                .iter()
                .find_map(|form| v.strip_prefix(form))
                .unwrap_or(v);
            Some((*flag, Path::new(path)))
        })
        .collect();
    check_paths(
        &inputs,
        &[
            ("--out", out.out.as_ref()),
            ("--html", html.and_then(|h| h.html.as_ref())),
        ],
    )
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
    check_files(
        &[
            ("--cdf", Some(&a.plan.cdf)),
            ("--timing", a.timing.as_deref()),
        ],
        &a.output,
        None,
    )?;
    let r = jobs::optimize(&OptimizeRequest {
        version: Version::CURRENT,
        plan: a.plan.request(),
        sizing: a.sizing.request(),
        gamma_max: a.gamma_max,
        p_compress: a.p_compress,
        verify_top: a.verify_top,
        n_sim_req: a.n_sim_req,
        seeds: a.seeds,
        verify: a.verify.map(|v| match v {
            VerifyArg::Slots => Verify::Slots,
            VerifyArg::Engine => Verify::Engine,
        }),
        timing: a.timing,
    })
    .map_err(job)?;
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
    check_files(&[("--cdf", Some(&a.plan.cdf))], &a.output, None)?;
    let r = jobs::pareto(&ParetoRequest {
        version: Version::CURRENT,
        plan: a.plan.request(),
        sizing: a.sizing.request(),
    })
    .map_err(job)?;
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
    #[arg(
        long = "slo-ttft-ms",
        alias = "slo-ttft",
        value_name = "MS",
        default_value_t = 500.0,
        allow_negative_numbers = true
    )]
    slo_ttft: f64,
    /// TPOT target, ms.
    #[arg(
        long = "slo-tpot-ms",
        alias = "slo-tpot",
        value_name = "MS",
        default_value_t = 100.0,
        allow_negative_numbers = true
    )]
    slo_tpot: f64,
    /// Most prefill GPUs.
    #[arg(long, default_value_t = 32, allow_negative_numbers = true)]
    max_prefill: u64,
    /// Most decode GPUs (at most a million splits in all).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true)]
    max_decode: u64,
    /// How splits are sized: each pool's GPUs running continuous batching,
    /// as the replay's disaggregated runtime (batch), or the reference fleet
    /// simulator's slots with efficiencies and a TTFT multiplier (slots)
    #[arg(long, value_enum, default_value_t = SizingModelArg::Batch)]
    sizing_model: SizingModelArg,
    /// Prefill pool efficiency, in (0, 1], of the slot model [default: 0.90].
    #[arg(long, allow_negative_numbers = true)]
    prefill_efficiency: Option<f64>,
    /// Decode pool efficiency, in (0, 1], of the slot model [default: 0.92].
    #[arg(long, allow_negative_numbers = true)]
    decode_efficiency: Option<f64>,
    /// Effective TTFT over prefill compute, of the slot model [default: 1.80].
    #[arg(long, allow_negative_numbers = true)]
    ttft_multiplier: Option<f64>,
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
    check_files(
        &[("--cdf", Some(&a.cdf)), ("--timing", a.timing.as_deref())],
        &a.output,
        None,
    )?;
    let r = jobs::disagg(&DisaggRequest {
        version: Version::CURRENT,
        cdf: a.cdf,
        lam: a.lam,
        gpu_prefill: a.gpu_prefill,
        gpu_decode: a.gpu_decode,
        max_ctx: a.max_ctx,
        mean_isl: a.mean_isl,
        mean_osl: a.mean_osl,
        slo_ttft: a.slo_ttft,
        slo_tpot: a.slo_tpot,
        max_prefill: a.max_prefill,
        max_decode: a.max_decode,
        model: a.sizing_model.into(),
        prefill_efficiency: a.prefill_efficiency,
        decode_efficiency: a.decode_efficiency,
        ttft_multiplier: a.ttft_multiplier,
        verify: a.verify.map(|DisaggVerifyArg::Engine| DisaggVerify::Engine),
        verify_top: a.verify_top,
        n_sim_req: a.n_sim_req,
        seed: a.seed,
        kv_bytes_per_token: a.kv_bytes_per_token,
        kv_transfer_gb_s: a.kv_transfer_gb_s,
        kv_transfer_latency_ms: a.kv_transfer_latency_ms,
        timing: a.timing,
    })
    .map_err(job)?;
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
    fn request(&self) -> RunRequest {
        RunRequest {
            n_req: self.n_req,
            arrivals: self.arrivals.clone(),
            seeds: self.seeds,
            warmup: self.warmup,
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

impl DesArgs {
    /// [`check_files`] for the two-pool simulations.
    fn check_files(&self, plan: &PlanArgs, output: &OutputArgs) -> Result<(), CliError> {
        check_files(
            &[
                ("--cdf", Some(&plan.cdf)),
                ("--arrivals", Some(&self.run.arrivals)),
            ],
            output,
            Some(&self.run.html),
        )
    }

    fn request(&self) -> DesRequest {
        DesRequest {
            n_s: self.n_s,
            n_l: self.n_l,
            run: self.run.request(),
        }
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
    /// Compression band of `--router compress_route`, at least 1 [default: 1.5].
    #[arg(long, allow_negative_numbers = true)]
    gamma: Option<f64>,
    #[command(flatten)]
    output: OutputArgs,
}

impl RouterArg {
    fn request(self) -> Router {
        match self {
            RouterArg::Length => Router::Length,
            RouterArg::CompressRoute => Router::CompressRoute,
            RouterArg::Spillover => Router::Spillover,
            RouterArg::LeastLoaded => Router::LeastLoaded,
            RouterArg::Random => Router::Random,
        }
    }
}

/// Runs `simulate`.
pub fn run_simulate(a: SimulateArgs) -> Result<(), CliError> {
    a.des.check_files(&a.plan, &a.output)?;
    let r = jobs::simulate(&SimulateRequest {
        version: Version::CURRENT,
        plan: a.plan.request(),
        des: a.des.request(),
        router: a.router.request(),
        gamma: a.gamma,
    })
    .map_err(job)?;
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
    #[arg(long, default_value_t = 1.5, allow_negative_numbers = true)]
    gamma: f64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `compare-routers`.
pub fn run_compare_routers(a: CompareRoutersArgs) -> Result<(), CliError> {
    a.des.check_files(&a.plan, &a.output)?;
    let r = jobs::compare_routers(&CompareRoutersRequest {
        version: Version::CURRENT,
        plan: a.plan.request(),
        des: a.des.request(),
        gamma: a.gamma,
    })
    .map_err(job)?;
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
    check_files(&[("--cdf", Some(&a.plan.cdf))], &a.output, None)?;
    let r = jobs::whatif(&WhatIfRequest {
        version: Version::CURRENT,
        plan: a.plan.request(),
        sizing: a.sizing.request(),
        lam_range: a.lam_range,
        gpu_compare: a.gpu_compare,
    })
    .map_err(job)?;
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
    #[command(flatten)]
    slo: SloTtftArg,
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
    check_files(
        &[
            ("FILE", a.file.to_str()),
            ("--arrivals", Some(&a.run.arrivals)),
        ],
        &a.output,
        Some(&a.run.html),
    )?;
    let r = jobs::simulate_fleet(&SimulateFleetRequest {
        version: Version::CURRENT,
        file: a.file,
        lam: a.lam,
        slo: a.slo.ms,
        run: a.run.request(),
        seed: a.seed,
    })
    .map_err(job)?;
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
    #[arg(
        long = "slo-ttft-ms",
        alias = "slo",
        value_name = "MS",
        allow_negative_numbers = true
    )]
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
    check_files(&[("--cdf", Some(&a.cdf))], &a.output, None)?;
    let r = jobs::tok_per_watt(&TokPerWattRequest {
        version: Version::CURRENT,
        cdf: a.cdf,
        lam: a.lam,
        slo: a.slo,
        max_ctx: a.max_ctx,
        gpus: a.gpus,
        rho_sweep: a.rho_sweep,
    })
    .map_err(job)?;
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
    #[command(flatten)]
    slo: SloTtftArg,
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
    check_files(&[("--cdf", Some(&a.cdf))], &a.output, None)?;
    let r = jobs::grid_flex(&GridFlexRequest {
        version: Version::CURRENT,
        cdf: a.cdf,
        lam: a.lam,
        slo: a.slo.ms,
        gpu: a.gpu,
        n_gpus: a.n_gpus,
        max_ctx: a.max_ctx,
        flex_pcts: a.flex_pcts,
        verify_des: a.verify_des,
        seed: a.seed,
    })
    .map_err(job)?;
    emit(&a.output, &r, aisim_report::fleet::render_grid_flex)
}

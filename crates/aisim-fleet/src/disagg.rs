//! `disagg`: an analytic prefill/decode split.

use aisim_core::profile::GpuProfile;
use serde::Serialize;

use crate::validate;
use crate::FleetError;

/// Disagg parameters.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DisaggParams {
    /// Arrival rate, req/s.
    pub lam: f64,
    /// Context window.
    pub max_ctx: u32,
    /// Mean input tokens.
    pub mean_isl: f64,
    /// Mean output tokens.
    pub mean_osl: f64,
    /// TTFT target, ms.
    pub slo_ttft_ms: f64,
    /// TPOT target, ms.
    pub slo_tpot_ms: f64,
    /// Most prefill GPUs tried.
    pub max_prefill: u64,
    /// Most decode GPUs tried.
    pub max_decode: u64,
    /// Prefill pool efficiency (0.90).
    pub prefill_efficiency: f64,
    /// Decode pool efficiency (0.92).
    pub decode_efficiency: f64,
    /// Effective TTFT multiplier over the prefill compute (1.80).
    pub ttft_multiplier: f64,
}

/// One split.
#[derive(Debug, Clone, Serialize)]
pub struct DisaggPoint {
    /// Prefill GPUs.
    pub n_prefill: u64,
    /// Decode GPUs.
    pub n_decode: u64,
    /// Both.
    pub total_gpus: u64,
    /// Requests per second the split sustains.
    pub system_rps: f64,
    /// Effective TTFT, ms.
    pub ttft_ms: f64,
    /// TPOT, ms.
    pub tpot_ms: f64,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Thousands of dollars per year.
    pub annual_cost_kusd: f64,
    /// SLOs hold and the rate covers λ.
    pub slo_met: bool,
}

/// The disagg report.
#[derive(Debug, Clone, Serialize)]
pub struct DisaggReport {
    /// Schema version.
    pub schema_version: u32,
    /// Parameters.
    pub params: DisaggParams,
    /// Prefill profile key.
    pub gpu_prefill: String,
    /// Decode profile key.
    pub gpu_decode: String,
    /// Cheapest feasible split.
    pub best: Option<DisaggPoint>,
    /// Feasible splits not dominated in (cost, TTFT).
    pub points: Vec<DisaggPoint>,
    /// Aggregated baselines: each profile alone serving prefill and decode.
    pub aggregated: Vec<AggregatedBaseline>,
}

/// An aggregated fleet of one profile for comparison.
#[derive(Debug, Clone, Serialize)]
pub struct AggregatedBaseline {
    /// Profile key.
    pub gpu: String,
    /// GPUs to cover λ at the decode efficiency.
    pub n_gpus: u64,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Per-GPU throughput, req/s.
    pub per_gpu_rps: f64,
}

impl DisaggParams {
    /// Checks every parameter; the grid of splits is bounded by [`validate::MAX_SWEEP`].
    pub fn validate(
        &self,
        prefill: &dyn GpuProfile,
        decode: &dyn GpuProfile,
    ) -> Result<(), FleetError> {
        validate::rate("--lam", self.lam)?;
        validate::context("--max-ctx", self.max_ctx, prefill)?;
        validate::context("--max-ctx", self.max_ctx, decode)?;
        validate::tokens("--mean-isl", self.mean_isl)?;
        validate::tokens("--mean-osl", self.mean_osl)?;
        validate::positive("--slo-ttft", self.slo_ttft_ms)?;
        validate::positive("--slo-tpot", self.slo_tpot_ms)?;
        validate::count("--max-prefill", self.max_prefill, validate::MAX_SWEEP)?;
        validate::count(
            "--max-decode",
            self.max_decode,
            validate::MAX_SWEEP / self.max_prefill,
        )?;
        validate::share("--prefill-efficiency", self.prefill_efficiency)?;
        validate::share("--decode-efficiency", self.decode_efficiency)?;
        validate::positive("--ttft-multiplier", self.ttft_multiplier)
    }
}

/// Sweeps every split up to the limits.
pub fn disagg(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
) -> Result<DisaggReport, FleetError> {
    p.validate(prefill, decode)?;
    let isl = p.mean_isl.round().max(1.0) as u32;
    let osl = p.mean_osl.round().max(1.0) as u32;
    let slots_p = prefill.n_slots(p.max_ctx);
    let slots_d = decode.n_slots(p.max_ctx);
    let prefill_ttft_ms = (isl as u64).div_ceil(prefill.chunk().max(1) as u64) as f64
        * prefill.iter_n_s(slots_p as f64)
        * 1e3;
    let ttft_ms = p.ttft_multiplier * prefill_ttft_ms;
    let tpot_ms = decode.iter_n_s(slots_d as f64) * 1e3;
    let prefill_rate = prefill.throughput_rps(p.max_ctx, isl, 1);
    let decode_rate = decode.throughput_rps(p.max_ctx, 1, osl);
    let mut all = Vec::new();
    for n_p in 1..=p.max_prefill {
        for n_d in 1..=p.max_decode {
            let rps = (p.prefill_efficiency * n_p as f64 * prefill_rate)
                .min(p.decode_efficiency * n_d as f64 * decode_rate);
            let cost = n_p as f64 * prefill.cost_per_hr() + n_d as f64 * decode.cost_per_hr();
            all.push(DisaggPoint {
                n_prefill: n_p,
                n_decode: n_d,
                total_gpus: n_p + n_d,
                system_rps: rps,
                ttft_ms,
                tpot_ms,
                cost_per_hr: cost,
                annual_cost_kusd: cost * 8.76,
                slo_met: ttft_ms <= p.slo_ttft_ms && tpot_ms <= p.slo_tpot_ms && rps >= p.lam,
            });
        }
    }
    let feasible: Vec<&DisaggPoint> = all.iter().filter(|d| d.slo_met).collect();
    let best = feasible
        .iter()
        .min_by(|a, b| {
            a.cost_per_hr
                .total_cmp(&b.cost_per_hr)
                .then(b.system_rps.total_cmp(&a.system_rps))
        })
        .map(|d| (*d).clone());
    // Pareto set over (cost, rate): no other feasible split is cheaper and faster.
    let points = feasible
        .iter()
        .filter(|d| {
            !feasible
                .iter()
                .any(|o| o.cost_per_hr < d.cost_per_hr && o.system_rps >= d.system_rps)
        })
        .map(|d| (*d).clone())
        .collect();
    let aggregated = [prefill, decode]
        .iter()
        .map(|g| {
            let rate = g.throughput_rps(p.max_ctx, isl, osl);
            let n = (p.lam / (p.decode_efficiency * rate)).ceil().max(1.0) as u64;
            AggregatedBaseline {
                gpu: g.key().to_string(),
                n_gpus: n,
                cost_per_hr: n as f64 * g.cost_per_hr(),
                per_gpu_rps: rate,
            }
        })
        .collect();
    Ok(DisaggReport {
        schema_version: crate::SCHEMA_VERSION,
        params: *p,
        gpu_prefill: prefill.key().to_string(),
        gpu_decode: decode.key().to_string(),
        best,
        points,
        aggregated,
    })
}

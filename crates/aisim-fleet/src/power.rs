//! Power views: tokens per watt, and demand response (grid flexibility).

use std::sync::Arc;

use aisim_core::profile::{GpuProfile, ProfileOverride};
use serde::Serialize;

use crate::calibrate::{calibrate, CalibrationMethod, ServiceModel};
use crate::cdf::{Cdf, LengthSource};
use crate::erlang::p99_wait_plus;
use crate::mgc::simulate_mgc;
use crate::plan::{check_served, served_part, WorkloadNote};
use crate::pool_model::{PoolModel, SizingModel, TtftFigure};
use crate::sizing::{min_gpus, SizingTargets};
use crate::validate;
use crate::FleetError;

/// The largest batch in `1..=max_batch` whose power stays within `target_w`
/// (bisection; power rises with the batch). 1 when even one sequence exceeds it.
pub fn invert_power(profile: &dyn GpuProfile, target_w: f64, max_batch: u64) -> u64 {
    let p = profile.power();
    let (mut lo, mut hi) = (1u64, max_batch.max(1));
    if p.watts(hi as f64) <= target_w {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if p.watts(mid as f64) <= target_w {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The batch size at which a profile draws its nominal power.
fn full_batch(profile: &dyn GpuProfile) -> u64 {
    match profile.max_slots() {
        0 => profile.n_slots(profile.calibration_ctx()),
        s => s as u64,
    }
}

/// One row of `tok-per-watt`.
#[derive(Debug, Clone, Serialize)]
pub struct TokPerWattRow {
    /// Profile key.
    pub gpu: String,
    /// GPUs.
    pub n_gpus: u64,
    /// Utilization.
    pub rho: f64,
    /// Mean sequences in flight per GPU.
    pub n_active: f64,
    /// Output tokens per joule.
    pub tok_per_watt: f64,
    /// Watts per GPU at that batch.
    pub watts_per_gpu: f64,
    /// Dollars per million output tokens.
    pub usd_per_mtok: f64,
    /// P99 TTFT, ms.
    pub p99_ttft_ms: f64,
}

/// The tok-per-watt report.
#[derive(Debug, Clone, Serialize)]
pub struct TokPerWattReport {
    /// Schema version.
    pub schema_version: u32,
    /// Workload.
    pub cdf: String,
    /// Rate.
    pub lam: f64,
    /// Mean output tokens of the served requests: a trace's own mean, or 20 %
    /// of a CDF's interval-midpoint mean total in whole tokens.
    pub mean_output_tokens: f64,
    /// Rows.
    pub rows: Vec<TokPerWattRow>,
    /// What the pools are sized on, and what is refused.
    pub workload: WorkloadNote,
}

/// Tokens per watt per profile: sized for the SLO, or at the given utilizations.
pub fn tok_per_watt(
    cdf: &Cdf,
    lam: f64,
    max_ctx: u32,
    profiles: &[&dyn GpuProfile],
    targets: &SizingTargets,
    rho_sweep: Option<&[f64]>,
) -> Result<TokPerWattReport, FleetError> {
    validate::rate("--lam", lam)?;
    targets.validate()?;
    validate::count("--gpus", profiles.len() as u64, validate::MAX_POINTS)?;
    for p in profiles {
        validate::context("--max-ctx", max_ctx, *p)?;
    }
    for &r in rho_sweep.unwrap_or_default() {
        validate::share("rho", r)?;
    }
    check_served(cdf, max_ctx, "--max-ctx")?;
    let (workload, offered, name) = (power_workload(cdf, lam, max_ctx), lam, cdf.name.clone());
    let (cdf, lam) = &served_part(cdf, lam, max_ctx);
    let lam = *lam;
    // Whole tokens (azure: 325), as the reference computes it; a trace's own mean.
    let mean_out = match cdf.length_source() {
        LengthSource::TracePairs => cdf.mean_lengths().1,
        LengthSource::Split80_20 => (0.2 * cdf.mean_mid()).floor(),
    };
    let mut rows = Vec::new();
    for &p in profiles {
        let cal = calibrate(cdf, 1, max_ctx, p, CalibrationMethod::Exact, 0);
        let (n_slots, mu_gpu) = (cal.n_slots, cal.mu_gpu);
        let model = PoolModel::Slots(cal);
        let sizes: Vec<(u64, f64)> = match rho_sweep {
            None => {
                let s = min_gpus(lam, &model, targets);
                vec![(s.n_gpus, s.rho)]
            }
            Some(rhos) => rhos
                .iter()
                .map(|&r| ((lam / (r * mu_gpu)).ceil().max(1.0) as u64, r))
                .collect(),
        };
        for (n, rho) in sizes {
            let n_active = rho * n_slots as f64;
            let watts = p.power().watts(n_active);
            let tokens_per_s = mu_gpu * rho * mean_out;
            rows.push(TokPerWattRow {
                gpu: p.key().to_string(),
                n_gpus: n,
                rho,
                n_active,
                tok_per_watt: tokens_per_s / watts,
                watts_per_gpu: watts,
                usd_per_mtok: p.cost_per_hr() / (tokens_per_s * 3600.0) * 1e6,
                p99_ttft_ms: model.true_p99_ttft_s(n, lam) * 1e3,
            });
        }
    }
    Ok(TokPerWattReport {
        schema_version: crate::SCHEMA_VERSION,
        cdf: name,
        lam: offered,
        mean_output_tokens: mean_out,
        rows,
        workload,
    })
}

/// One demand-response level.
#[derive(Debug, Clone, Serialize)]
pub struct GridFlexPoint {
    /// Power reduction committed, %.
    pub flex_pct: f64,
    /// Batch cap per GPU that fits it.
    pub batch_cap: u64,
    /// Watts per GPU at the cap.
    pub watts_per_gpu: f64,
    /// Fleet kW.
    pub fleet_kw: f64,
    /// Analytic P99 TTFT at the cap, ms.
    pub p99_ttft_ms: f64,
    /// Simulated P99 TTFT (slot-level M/G/c), ms, with `--verify-des`.
    pub p99_ttft_sim_ms: Option<f64>,
    /// Whether the SLO holds (by the simulation when run).
    pub slo_met: bool,
}

/// The grid-flex report.
#[derive(Debug, Clone, Serialize)]
pub struct GridFlexReport {
    /// Schema version.
    pub schema_version: u32,
    /// Profile.
    pub gpu: String,
    /// GPUs.
    pub n_gpus: u64,
    /// Rate.
    pub lam: f64,
    /// SLO, ms.
    pub slo_ms: f64,
    /// Fleet kW with no cut.
    pub baseline_kw: f64,
    /// Levels.
    pub points: Vec<GridFlexPoint>,
    /// Deepest cut that meets the SLO, %.
    pub deepest_safe_pct: Option<f64>,
    /// What the fleet serves, and what is refused.
    pub workload: WorkloadNote,
}

/// The power/latency trade-off of capping the batch to cut power by each of
/// `flex_pcts` (% of nominal power, never below idle). Each cap is recalibrated
/// as a throttled profile: fewer slots, faster iterations.
#[allow(clippy::too_many_arguments)]
pub fn grid_flex(
    cdf: &Cdf,
    lam: f64,
    n_gpus: u64,
    profile: &Arc<dyn GpuProfile>,
    slo_ms: f64,
    max_ctx: u32,
    flex_pcts: &[f64],
    verify_requests: u64,
    seed: u64,
) -> Result<GridFlexReport, FleetError> {
    validate::rate("--lam", lam)?;
    validate::positive("--slo-ttft-ms", slo_ms)?;
    validate::count("--n-gpus", n_gpus, validate::MAX_GPUS)?;
    validate::context("--max-ctx", max_ctx, profile.as_ref())?;
    validate::count("--flex-pcts", flex_pcts.len() as u64, validate::MAX_POINTS)?;
    for &p in flex_pcts {
        if !(0.0..100.0).contains(&p) {
            return Err(FleetError::invalid(
                "--flex-pcts",
                p,
                "a cut is a percentage in [0, 100)",
            ));
        }
    }
    if verify_requests > 0 {
        validate::count("--verify-des", verify_requests, validate::MAX_REQUESTS)?;
    }
    check_served(cdf, max_ctx, "--max-ctx")?;
    let (workload, offered) = (power_workload(cdf, lam, max_ctx), lam);
    let (cdf, lam) = &served_part(cdf, lam, max_ctx);
    let lam = *lam;
    let (idle, nominal) = (profile.power().idle_w(), profile.power().nominal_w());
    let full = full_batch(profile.as_ref());
    let slots_full = profile.n_slots(max_ctx);
    let mut points = Vec::new();
    for &pct in flex_pcts {
        let target = idle.max(nominal * (1.0 - pct / 100.0));
        let cap = slots_full
            .min(invert_power(profile.as_ref(), target, full))
            .max(1);
        let watts = profile.power().watts(cap as f64);
        let capped = ProfileOverride::batch_cap(Arc::clone(profile), cap, max_ctx);
        let cal = calibrate(cdf, 1, max_ctx, &capped, CalibrationMethod::Exact, 0);
        let p99 = p99_wait_plus(
            n_gpus * cap,
            lam,
            cal.mu_gpu / cap as f64,
            cal.cv2,
            &cal.prefill,
        ) * 1e3;
        let sim = (verify_requests > 0).then(|| {
            let model = ServiceModel::new(&capped, cap, max_ctx as u64);
            simulate_mgc(
                lam,
                n_gpus * cap,
                verify_requests,
                verify_requests / 5,
                seed,
                |rng| {
                    let (l_in, l_out) = cdf.sample_lengths(1, max_ctx as u64, rng);
                    model.cost(l_in, l_out)
                },
            )
            .p99_ttft_ms
        });
        points.push(GridFlexPoint {
            flex_pct: pct,
            batch_cap: cap,
            watts_per_gpu: watts,
            fleet_kw: n_gpus as f64 * watts / 1e3,
            p99_ttft_ms: p99,
            p99_ttft_sim_ms: sim,
            slo_met: sim.unwrap_or(p99) <= slo_ms,
        });
    }
    let baseline_kw = points.first().map_or(0.0, |p| p.fleet_kw);
    let deepest_safe_pct = points
        .iter()
        .filter(|p| p.slo_met)
        .map(|p| p.flex_pct)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    Ok(GridFlexReport {
        schema_version: crate::SCHEMA_VERSION,
        gpu: profile.key().to_string(),
        n_gpus,
        lam: offered,
        slo_ms,
        baseline_kw,
        points,
        deepest_safe_pct,
        workload,
    })
}

/// The power planners' workload: the slot model's calibration, the true P99
/// of wait + prefill, requests longer than `--max-ctx` refused.
fn power_workload(cdf: &Cdf, lam: f64, max_ctx: u32) -> WorkloadNote {
    WorkloadNote::new(
        cdf,
        lam,
        (max_ctx, "--max-ctx"),
        SizingModel::Slots,
        TtftFigure::P99OfWaitPlusPrefill,
        CalibrationMethod::Exact,
    )
}

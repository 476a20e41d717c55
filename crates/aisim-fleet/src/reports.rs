//! Reports of the simulating commands and of what-if, built from the pieces
//! of the other modules.

use std::sync::Arc;

use aisim_core::profile::GpuProfile;
use serde::Serialize;

use crate::des::{
    interval, run_des, run_seeds, Arrivals, DesConfig, DesMetrics, DesResult, FleetRequest,
    Interval, RouterSpec,
};
use crate::plan::{Candidate, Planner};
use crate::sizing::min_gpus;
use crate::validate;
use crate::FleetError;

/// A DES run over one or more seeds.
#[derive(Debug, Clone, Serialize)]
pub struct SimulateReport {
    /// Schema version.
    pub schema_version: u32,
    /// Label (router or fleet file).
    pub label: String,
    /// Seeds run.
    pub seeds: u64,
    /// The seed of `result` (the first one run).
    pub first_seed: u64,
    /// The first seed's full result (one seed, not a mean).
    pub result: DesResult,
    /// Fleet P99 TTFT, ms: mean and 95 % interval over the seeds.
    pub p99_ttft_ms: Interval,
    /// Fleet SLO compliance: mean and 95 % interval over the seeds.
    pub slo_compliance: Interval,
}

/// Runs `seeds` seeds of the DES; `requests(seed)` gives a fresh copy of the
/// workload for each.
pub fn simulate_seeds(
    cfg: &DesConfig,
    label: &str,
    seeds: u64,
    seed: u64,
    requests: impl Fn(u64) -> Result<Vec<FleetRequest>, FleetError> + Sync,
) -> Result<SimulateReport, FleetError> {
    validate::count("--seeds", seeds, validate::MAX_SEEDS)?;
    cfg.validate()?;
    let results = run_seeds(seeds, seed, |s| {
        let mut c = cfg.clone();
        c.seed = s;
        run_des(&c, &requests(s)?)
    })
    .into_iter()
    .collect::<Result<Vec<DesResult>, _>>()?;
    let p99: Vec<f64> = results.iter().map(|r| r.fleet.p99_ttft_ms).collect();
    let slo: Vec<f64> = results.iter().map(|r| r.fleet.slo_compliance).collect();
    Ok(SimulateReport {
        schema_version: crate::SCHEMA_VERSION,
        label: label.to_string(),
        seeds,
        first_seed: seed,
        result: results.into_iter().next().expect("at least one seed"),
        p99_ttft_ms: interval(&p99).within(0.0, f64::INFINITY),
        slo_compliance: interval(&slo).within(0.0, 1.0),
    })
}

/// One router's row in `compare-routers`.
#[derive(Debug, Clone, Serialize)]
pub struct RouterRow {
    /// Router.
    pub router: RouterSpec,
    /// Fleet metrics of the first seed (`first_seed`), not a mean.
    pub fleet: DesMetrics,
    /// P99 TTFT, ms: mean and 95 % interval over the seeds.
    pub p99_ttft_ms: Interval,
    /// SLO compliance: mean and 95 % interval over the seeds.
    pub slo_compliance: Interval,
}

/// `compare-routers`.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRoutersReport {
    /// Schema version.
    pub schema_version: u32,
    /// Seeds run per router.
    pub seeds: u64,
    /// The seed of each row's `fleet` metrics.
    pub first_seed: u64,
    /// Rows.
    pub rows: Vec<RouterRow>,
}

/// Each router on identical arrivals (a fresh copy of every request per router).
pub fn compare_routers(
    cfg: &DesConfig,
    routers: &[RouterSpec],
    seeds: u64,
    seed: u64,
    requests: impl Fn(u64) -> Result<Vec<FleetRequest>, FleetError> + Sync,
) -> Result<CompareRoutersReport, FleetError> {
    let rows = routers
        .iter()
        .map(|r| {
            let c = DesConfig {
                router: r.clone(),
                ..cfg.clone()
            };
            let rep = simulate_seeds(&c, "", seeds, seed, &requests)?;
            Ok(RouterRow {
                router: r.clone(),
                fleet: rep.result.fleet,
                p99_ttft_ms: rep.p99_ttft_ms,
                slo_compliance: rep.slo_compliance,
            })
        })
        .collect::<Result<_, FleetError>>()?;
    Ok(CompareRoutersReport {
        schema_version: crate::SCHEMA_VERSION,
        seeds,
        first_seed: seed,
        rows,
    })
}

/// One arrival rate of `whatif`.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfRow {
    /// Rate.
    pub lam: f64,
    /// Cheapest configuration meeting the SLO (two pools or one).
    pub best: Candidate,
    /// One pool for everything.
    pub baseline: Candidate,
}

/// One profile of `whatif --gpu-compare`, at one rate.
#[derive(Debug, Clone, Serialize)]
pub struct GpuCompareRow {
    /// Rate.
    pub lam: f64,
    /// Profile key.
    pub gpu: String,
    /// GPUs for one pool.
    pub n_gpus: u64,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Cost over the cheapest profile at this rate.
    pub cost_ratio: f64,
    /// P99 TTFT, ms.
    pub p99_ttft_ms: f64,
}

/// `whatif`.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfReport {
    /// Schema version.
    pub schema_version: u32,
    /// Per rate.
    pub candidates: Vec<WhatIfRow>,
    /// Profiles side by side (with `--gpu-compare`).
    pub gpu_compare: Vec<GpuCompareRow>,
    /// What the plans were sized on, and the requests refused (the refused
    /// rate is that of the first rate; it scales with the rate).
    pub workload: crate::plan::WorkloadNote,
}

/// The cheapest SLO-meeting configuration per rate, and profiles side by side.
pub fn whatif(
    base: &Planner,
    b_short: u64,
    lams: &[f64],
    compare: &[Arc<dyn GpuProfile>],
) -> Result<WhatIfReport, FleetError> {
    base.validate_sizing()?;
    base.validate_threshold(b_short)?;
    validate::count("--lam-range", lams.len() as u64, validate::MAX_POINTS)?;
    if compare.len() as u64 > validate::MAX_POINTS {
        return Err(FleetError::invalid(
            "--gpu-compare",
            compare.len(),
            format!("at most {} profiles", validate::MAX_POINTS),
        ));
    }
    for &lam in lams {
        validate::rate("--lam-range", lam)?;
    }
    for g in compare {
        validate::context("--long-max-ctx", base.long_max_ctx, g.as_ref())?;
    }
    // A calibration does not depend on the rate: once per profile, on the
    // requests a pool serves (the refused ones are the report's line).
    let (served, served_lam) = base.served();
    let served_share = if base.lam > 0.0 {
        served_lam / base.lam
    } else {
        1.0
    };
    let compare_cals: Vec<_> = compare
        .iter()
        .map(|g| {
            crate::pool_model::PoolModel::new(
                base.model,
                &served,
                1,
                base.long_max_ctx,
                g.as_ref(),
                base.method,
                base.seed,
            )
        })
        .collect();
    let mut candidates = Vec::new();
    let mut gpu_compare = Vec::new();
    for &lam in lams {
        let p = Planner {
            lam,
            ..base.clone()
        };
        let two = p.two_pool(b_short, 1.0, 0.0).candidate;
        let one = p.one_pool().candidate;
        let best = [two, one.clone()]
            .into_iter()
            .min_by(|a, b| {
                (!a.slo_met)
                    .cmp(&!b.slo_met)
                    .then(a.cost_per_hr.total_cmp(&b.cost_per_hr))
            })
            .expect("two options");
        candidates.push(WhatIfRow {
            lam,
            best,
            baseline: one,
        });
        let rows: Vec<GpuCompareRow> = compare
            .iter()
            .zip(&compare_cals)
            .map(|(g, cal)| {
                let s = min_gpus(lam * served_share, cal, &p.targets);
                GpuCompareRow {
                    lam,
                    gpu: g.key().to_string(),
                    n_gpus: s.n_gpus,
                    cost_per_hr: s.n_gpus as f64 * g.cost_per_hr(),
                    cost_ratio: 0.0,
                    p99_ttft_ms: s.p99_ttft_ms,
                }
            })
            .collect();
        let cheapest = rows
            .iter()
            .map(|r| r.cost_per_hr)
            .fold(f64::INFINITY, f64::min);
        gpu_compare.extend(rows.into_iter().map(|mut r| {
            r.cost_ratio = r.cost_per_hr / cheapest;
            r
        }));
    }
    let workload = Planner {
        lam: lams.first().copied().unwrap_or(base.lam),
        ..base.clone()
    }
    .workload_note();
    Ok(WhatIfReport {
        schema_version: crate::SCHEMA_VERSION,
        candidates,
        gpu_compare,
        workload,
    })
}

/// Arrivals by name: `poisson`, `gamma:B`, `trace:FILE`.
pub fn parse_arrivals(s: &str) -> Result<Arrivals, crate::FleetError> {
    if s == "poisson" {
        return Ok(Arrivals::Poisson);
    }
    if let Some(b) = s.strip_prefix("gamma:") {
        let shape = b
            .parse::<f64>()
            .map_err(|_| crate::FleetError::invalid("--arrivals", s, "gamma:B needs a number B"))?;
        validate::gamma_shape(shape)?;
        return Ok(Arrivals::Gamma(shape));
    }
    if let Some(path) = s.strip_prefix("trace:") {
        let t = aisim_replay::trace::read_trace(std::path::Path::new(path), None, None)?;
        let mut ts: Vec<f64> = t.records.iter().map(|r| r.timestamp_ms / 1e3).collect();
        if ts.is_empty() {
            return Err(crate::FleetError::invalid(
                "--arrivals",
                s,
                "the trace has no requests to take arrival times from",
            ));
        }
        ts.sort_by(f64::total_cmp);
        return Ok(Arrivals::Times(ts));
    }
    Err(crate::FleetError::invalid(
        "--arrivals",
        s,
        "use poisson, gamma:B or trace:FILE",
    ))
}

//! One run's result (`DIR/<id>.json`): the run's id and axes, the plan it
//! belongs to, its spec, the report's headline figures, its outcome counts,
//! GPU-hours and cost, and the full report when asked for. Nothing from
//! the host, so any process writes the same bytes.

use serde::{Deserialize, Serialize};

use super::grid::Ordered;
use super::plan::PlanLine;
use aisim_core::summary::Summary;
use aisim_replay::report::{Outcomes, ReplayReport};
use aisim_replay::ReplaySpec;

/// The result of one run of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// The run's id in its plan.
    pub id: String,
    /// Its 0-based index.
    pub index: u64,
    /// Runs in the plan.
    pub runs: u64,
    /// The plan's digest.
    pub plan: String,
    /// Its axis values.
    pub axes: Ordered,
    /// The spec it replayed (as planned).
    pub spec: ReplaySpec,
    /// Headline figures.
    pub metrics: Headline,
    /// Requests by outcome.
    pub outcomes: Outcomes,
    /// GPU-hours of every pool (scaled pools over their timeline), hours.
    pub gpu_hours: f64,
    /// Each pool's GPU-hours at its own timing profile's price, summed,
    /// dollars; `null` when a pool's timing has no profile or the profile
    /// no price.
    pub cost_usd: Option<f64>,
    /// The whole replay report without its `host` section (`--full-report`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
}

/// A latency's headline statistics, ms (`null` when no request has one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stat {
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
}

impl Stat {
    fn of(s: &Summary) -> Stat {
        Stat {
            mean: s.mean,
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
        }
    }
}

/// The figures a sweep compares runs by (the report's, over its cohort).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Headline {
    /// Time to first token, ms.
    pub ttft_ms: Stat,
    /// Time per output token, ms.
    pub tpot_ms: Stat,
    /// Inter-token latency, ms.
    pub itl_ms: Stat,
    /// End-to-end latency, ms.
    pub e2e_ms: Stat,
    /// Completed requests per simulated second.
    pub request_rps: f64,
    /// Output tokens per simulated second.
    pub output_tok_s: f64,
    /// Prompt and output tokens per simulated second.
    pub total_tok_s: f64,
    /// Completed requests meeting the spec's SLAs per second; `null` when
    /// the spec sets none.
    pub goodput_rps: Option<f64>,
    /// Fraction of the cohort meeting every SLA the spec sets; `null` when
    /// it sets none.
    pub sla_attainment: Option<f64>,
    /// Prompt tokens served from the prefix cache over prompt tokens.
    pub prefix_reuse_ratio: f64,
}

impl RunResult {
    /// The result of `line`'s replay.
    pub fn of(line: &PlanLine, report: &ReplayReport, full: bool) -> RunResult {
        let l = &report.latency;
        let gpu_hours = gpu_hours(report);
        RunResult {
            id: line.id.clone(),
            index: line.index,
            runs: line.runs,
            plan: line.plan.clone(),
            axes: line.axes.clone(),
            spec: line.spec.clone(),
            metrics: Headline {
                ttft_ms: Stat::of(&l.ttft_ms),
                tpot_ms: Stat::of(&l.tpot_ms),
                itl_ms: Stat::of(&l.itl_ms),
                e2e_ms: Stat::of(&l.e2e_ms),
                request_rps: report.throughput.request_rps,
                output_tok_s: report.throughput.output_tok_s,
                total_tok_s: report.throughput.total_tok_s,
                goodput_rps: report.throughput.goodput_rps,
                sla_attainment: report.sla.attainment.all,
                prefix_reuse_ratio: report.cache.prefix_reuse_ratio,
            },
            outcomes: report.outcomes,
            gpu_hours,
            cost_usd: cost_usd(report),
            report: full.then(|| {
                let mut json = serde_json::to_value(report).expect("reports serialize");
                if let Some(map) = json.as_object_mut() {
                    map.remove("host");
                }
                json
            }),
        }
    }

    /// Whether `other` is this run's result: the same run of the same plan.
    pub fn belongs_to(&self, line: &PlanLine) -> bool {
        self.id == line.id
            && self.index == line.index
            && self.plan == line.plan
            && self.runs == line.runs
            && self.spec == line.spec
    }
}

/// Each pool's GPU-hours (a scaled pool's over its timeline), with the
/// spec's pool it ran (by the report's pool name).
fn pool_gpu_hours(report: &ReplayReport) -> impl Iterator<Item = (&str, f64)> {
    report.pools.iter().map(|p| {
        let hours = report
            .scaling
            .as_ref()
            .and_then(|s| s.pools.iter().find(|s| s.pool == p.pool))
            .map_or(p.gpu_hours, |s| s.gpu_hours);
        (p.pool.as_str(), hours)
    })
}

/// GPU-hours of a run: every pool's.
fn gpu_hours(report: &ReplayReport) -> f64 {
    pool_gpu_hours(report).map(|(_, h)| h).sum()
}

/// Dollars of a run: each pool's GPU-hours at its own timing profile's
/// price (a disaggregated pool may run another GPU than the top-level
/// timing names); `None` when any pool has no price.
fn cost_usd(report: &ReplayReport) -> Option<f64> {
    let pools = report.spec.pools();
    pool_gpu_hours(report)
        .map(|(name, hours)| {
            let pool = pools.iter().find(|p| pool_name(p.field) == name)?;
            Some(price_per_gpu_hour(pool.timing)? * hours)
        })
        .sum()
}

/// The report's name of the pool at spec field `field`.
fn pool_name(field: &str) -> &str {
    match field {
        "topology" => "workers",
        f => f.rsplit('.').next().unwrap_or(f),
    }
}

/// A timing profile's price of one GPU-hour, when it has one.
fn price_per_gpu_hour(timing: &aisim_core::timing::TimingSpec) -> Option<f64> {
    let p = aisim_core::profile::resolve_profile(timing.profile_key()?).ok()?;
    let price = p.cost_per_hr() / f64::from(p.gpus().max(1));
    (price.is_finite() && price > 0.0).then_some(price)
}

/// Service-level objectives a run is held to by `sweep merge --best` and
/// the HTML page: the p99 of each given latency at or below its limit, and
/// every offered request completed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Slo {
    /// TTFT p99 limit, ms.
    pub ttft_ms: Option<f64>,
    /// TPOT p99 limit, ms.
    pub tpot_ms: Option<f64>,
    /// E2E p99 limit, ms.
    pub e2e_ms: Option<f64>,
}

impl Slo {
    /// Whether any limit is given.
    pub fn is_set(&self) -> bool {
        self.ttft_ms.is_some() || self.tpot_ms.is_some() || self.e2e_ms.is_some()
    }

    /// Whether `r` meets every limit given.
    pub fn met_by(&self, r: &RunResult) -> bool {
        let within =
            |limit: Option<f64>, s: &Stat| limit.is_none_or(|l| s.p99.is_some_and(|v| v <= l));
        let m = &r.metrics;
        r.outcomes.completed == r.outcomes.offered
            && within(self.ttft_ms, &m.ttft_ms)
            && within(self.tpot_ms, &m.tpot_ms)
            && within(self.e2e_ms, &m.e2e_ms)
    }

    /// The limits, `ttft p99 ≤ 500 ms, ...`, for messages.
    pub fn shown(&self) -> String {
        let parts: Vec<String> = [
            ("ttft", self.ttft_ms),
            ("tpot", self.tpot_ms),
            ("e2e", self.e2e_ms),
        ]
        .iter()
        .filter_map(|(n, l)| l.map(|l| format!("{n} p99 ≤ {} ms", aisim_core::number::float(l))))
        .collect();
        if parts.is_empty() {
            "every request completed".into()
        } else {
            format!("{} and every request completed", parts.join(", "))
        }
    }
}

/// What `best` compares runs by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostBasis {
    /// Dollars: every run has a price.
    Dollars,
    /// GPU-hours: some run has no price.
    GpuHours,
}

/// The cheapest run meeting `slo` (dollars when every run has a price,
/// else GPU-hours; ties to the lowest id), with the basis used; `None`
/// when no run meets it.
pub fn best<'a>(results: &'a [RunResult], slo: &Slo) -> (Option<&'a RunResult>, CostBasis) {
    let basis = if !results.is_empty() && results.iter().all(|r| r.cost_usd.is_some()) {
        CostBasis::Dollars
    } else {
        CostBasis::GpuHours
    };
    let cost = |r: &RunResult| match basis {
        CostBasis::Dollars => r.cost_usd.unwrap_or(f64::INFINITY),
        CostBasis::GpuHours => r.gpu_hours,
    };
    let pick = results
        .iter()
        .filter(|r| slo.met_by(r))
        .min_by(|a, b| cost(a).total_cmp(&cost(b)).then(a.index.cmp(&b.index)));
    (pick, basis)
}

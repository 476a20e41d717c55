//! Saturation search (`aisim sweep saturate`, docs/sweeps.md): the highest
//! arrival rate at which a replay still holds its SLOs and completes at least
//! 99 % of its offered cohort, found by bisection over a range, with the
//! curve of throughput, goodput and latency percentiles against rate.
//!
//! "The SLOs hold" at a rate when the share of the offered cohort that
//! completes within every limit given (`sla.attainment.all` of the replay
//! report, the requests `vllm bench serve --goodput` counts) is at least
//! the attainment asked for (0.9 by default, DistServe's SLO attainment).
//! Each probe is a whole replay, deterministic, so the search is too.

mod error;
mod probe;
mod range;
mod search;
mod setting;

use serde::{Deserialize, Serialize};

pub use error::SaturateError;
pub use probe::{Axis, Condition, Point, Tail, MIN_COMPLETED};
pub use range::{Range, RangeError};
pub use search::{curve_values, search, Probed, SearchSettings, Searched, Status};
pub use setting::Setting;

use aisim_replay::policy::ReplayComposition;
use aisim_replay::spec::ReplaySpec;
use aisim_replay::Replayer;
use probe::Scale;

/// Version of the saturation report's schema.
pub const SATURATE_SCHEMA_VERSION: u32 = 1;

/// Most curve points of one search.
pub const MAX_POINTS: u32 = 1000;

/// Most bisection probes: 64 halvings take any bracket of floats to adjacent ones.
pub const MAX_PROBES: u32 = 64;

/// The definition the report carries, word for word.
pub const DEFINITION: &str = "a rate holds when at least `attainment` of the offered cohort completes within every SLO limit given (TTFT, TPOT, E2E; a request that does not complete misses them all) and at least `min_completed` of it completes";

/// What to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Saturation {
    /// The axis.
    pub axis: Axis,
    /// Its range.
    pub range: Range,
    /// How the search runs.
    pub search: SearchSettings,
    /// Least share of the offered cohort within every SLO limit.
    pub attainment: f64,
}

impl Saturation {
    /// Checks the settings (the range checked itself when parsed).
    pub fn validate(&self) -> Result<(), SaturateError> {
        let bad = |setting, reason: String| Err(SaturateError::Setting { setting, reason });
        let s = &self.search;
        let f = aisim_core::number::float;
        if !(2..=MAX_POINTS).contains(&s.points) {
            return bad(
                "points",
                format!(
                    "{} is outside 2 ..= {MAX_POINTS} (the curve has both ends)",
                    s.points
                ),
            );
        }
        if !(s.tolerance > 0.0 && s.tolerance < 1.0) {
            return bad(
                "tolerance",
                format!(
                    "{} must be above 0 and below 1 (a share of the found rate)",
                    f(s.tolerance)
                ),
            );
        }
        if s.max_probes > MAX_PROBES {
            return bad(
                "max_probes",
                format!("{} is above {MAX_PROBES}", s.max_probes),
            );
        }
        if !(self.attainment > 0.0 && self.attainment <= 1.0) {
            return bad(
                "attainment",
                format!(
                    "{} must be above 0 and at most 1 (a share of the offered cohort)",
                    f(self.attainment)
                ),
            );
        }
        Ok(())
    }
}

/// The condition as the report states it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionReport {
    /// TTFT limit, ms (`null`: none).
    pub ttft_ms: Option<f64>,
    /// TPOT limit, ms.
    pub tpot_ms: Option<f64>,
    /// E2E limit, ms.
    pub e2e_ms: Option<f64>,
    /// The shares that must be met.
    #[serde(flatten)]
    pub shares: Condition,
    /// [`DEFINITION`].
    pub definition: String,
}

/// The bracket the search ended with, both ends in both units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bracket {
    /// The highest setting seen to hold below `fails` (`null`: even the low end fails).
    pub holds: Option<Setting>,
    /// The lowest failing setting above `holds` (`null`: even the high end holds).
    pub fails: Option<Setting>,
}

/// A saturation search's result (`--format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaturateReport {
    /// [`SATURATE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The axis searched.
    pub axis: Axis,
    /// Its range, in the axis's unit.
    pub range: Range,
    /// A trace's mean rate at speedup 1, req/s (`null` for a generated workload).
    pub trace_rate_rps: Option<f64>,
    /// What must hold.
    pub condition: ConditionReport,
    /// How the search ran.
    pub search: SearchSettings,
    /// How it ended.
    pub status: Status,
    /// The answer, when the search found it to the tolerance.
    pub found: Option<Setting>,
    /// The bracket.
    pub bracket: Bracket,
    /// Curve points that hold above the bracket's failing end.
    pub holds_again: Vec<Setting>,
    /// The evenly spaced points, low to high.
    pub curve: Vec<Point>,
    /// The bisection probes, in the order they ran.
    pub probes: Vec<Point>,
    /// The spec every probe ran, but for its rate (`admission.speedup` or
    /// `workload.arrival.rate`).
    pub spec: ReplaySpec,
}

impl SaturateReport {
    /// Every probe, curve and bisection, by increasing rate.
    pub fn by_rate(&self) -> Vec<&Point> {
        let mut all: Vec<&Point> = self.curve.iter().chain(&self.probes).collect();
        all.sort_by(|a, b| a.setting.rate_rps.total_cmp(&b.setting.rate_rps));
        all
    }
}

/// Runs the search on `base` (validated, with at least one SLO limit), its
/// curve on at most `threads` threads.
pub fn saturate<C>(
    base: &ReplaySpec,
    s: &Saturation,
    threads: usize,
    composition: &C,
) -> Result<SaturateReport, SaturateError>
where
    C: ReplayComposition + Clone + Sync,
{
    s.validate()?;
    let sla = &base.sla;
    if !sla.is_set() {
        return Err(SaturateError::Workload(
            "no SLO limit to hold: give at least one of --slo-ttft-ms, --slo-tpot-ms, --slo-e2e-ms (or `sla` in the spec file)".into(),
        ));
    }
    let (scale, trace) = Scale::of(base, s.axis)?;
    let condition = Condition {
        attainment: s.attainment,
        min_completed: MIN_COMPLETED,
    };
    let found = search(s.range, &s.search, threads, |value| {
        let at = scale.setting(s.axis, value);
        let report = Replayer::new(scale.spec_at(base, at), composition.clone())
            .map(|r| r.with_loaded_trace(trace.clone()))
            .and_then(|r| r.run())
            .map_err(|source| SaturateError::Probe { at, source })?
            .report;
        let point = Point::of(at, &report, &condition);
        let holds = point.holds;
        Ok::<_, SaturateError>((point, holds))
    })?;
    let at = |v: f64| scale.setting(s.axis, v);
    let points = |p: Vec<Probed<Point>>| p.into_iter().map(|p| p.outcome).collect();
    Ok(SaturateReport {
        schema_version: SATURATE_SCHEMA_VERSION,
        axis: s.axis,
        range: s.range,
        trace_rate_rps: scale.trace_rate_rps(),
        condition: ConditionReport {
            ttft_ms: sla.ttft_ms,
            tpot_ms: sla.tpot_ms,
            e2e_ms: sla.e2e_ms,
            shares: condition,
            definition: DEFINITION.into(),
        },
        search: s.search,
        status: found.status,
        found: found.holds.filter(|_| found.status.answered()).map(at),
        bracket: Bracket {
            holds: found.holds.map(at),
            fails: found.fails.map(at),
        },
        holds_again: found.holds_again.iter().copied().map(at).collect(),
        curve: points(found.curve),
        probes: points(found.probes),
        spec: base.clone(),
    })
}

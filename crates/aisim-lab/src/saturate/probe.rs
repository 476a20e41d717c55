//! One probe: the spec at a value of the searched axis, and what its report
//! says against the condition.

use aisim_core::number::float;
use serde::{Deserialize, Serialize};

use super::error::SaturateError;
use super::setting::Setting;
use aisim_core::summary::Summary;
// An empty cohort's shares are 0: it holds nothing.
use aisim_replay::report::{ratio as share, ReplayReport};
use aisim_replay::spec::{ReplaySpec, WorkloadSpec};
use std::sync::Arc;

use aisim_replay::trace::TraceData;
use aisim_replay::workload::load_trace;

/// The axis a search moves along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Arrivals per second (`--rate-range`).
    Rate,
    /// `admission.speedup`, the trace-time compression (`--speedup-range`).
    Speedup,
}

/// How a value on the axis becomes a spec: a trace's rate moves with the
/// speedup; a generated workload's rate is its arrival rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Scale {
    /// A trace (or the demo): `rate_rps` is its mean rate at speedup 1.
    Trace { rate_rps: f64 },
    /// A generated workload at `rate_rps` arrivals per second (speedup 1).
    Synthetic { rate_rps: f64 },
}

/// A trace's mean arrival rate at speedup 1: `(rows − 1) / (last − first
/// timestamp)`, the rate of evenly spaced arrivals over the same span.
fn trace_rate(trace: &TraceData) -> Result<f64, SaturateError> {
    let (lo, hi) = trace
        .records
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r.timestamp_ms), hi.max(r.timestamp_ms))
        });
    let n = trace.records.len();
    if n < 2 || hi <= lo {
        return Err(SaturateError::Workload(format!(
            "the trace {} has {n} request(s) over {} ms: no mean rate to scale; search --speedup-range instead",
            trace.path.display(),
            float(if n == 0 { 0.0 } else { hi - lo })
        )));
    }
    Ok((n - 1) as f64 / ((hi - lo) * 1e-3))
}

impl Scale {
    /// The scale of `spec`'s workload on `axis`, with its trace (read once,
    /// by `workload::load_trace`, for every probe to share; `None` for a
    /// generated workload).
    pub(super) fn of(
        spec: &ReplaySpec,
        axis: Axis,
    ) -> Result<(Scale, Option<Arc<TraceData>>), SaturateError> {
        if let Some(k) = spec.admission.concurrency {
            return Err(SaturateError::Workload(format!(
                "admission.concurrency {k} (--concurrency) leaves no arrival rate to search: a request arrives when one in flight ends"
            )));
        }
        if let WorkloadSpec::Synthetic(s) = &spec.workload {
            let rate = s.arrival.rate();
            if axis == Axis::Rate && spec.admission.speedup != 1.0 {
                return Err(SaturateError::Workload(format!(
                    "admission.speedup {} would scale the rate --rate-range sets on a generated workload (its workload.arrival.rate): leave the speedup at 1, or search --speedup-range",
                    float(spec.admission.speedup)
                )));
            }
            return Ok((Scale::Synthetic { rate_rps: rate }, None));
        }
        let Some(trace) = load_trace(&spec.workload).map_err(SaturateError::Trace)? else {
            return Err(SaturateError::Workload(
                "the workload has no trace whose rate could be scaled".into(),
            ));
        };
        let rate_rps = trace_rate(&trace)?;
        Ok((Scale::Trace { rate_rps }, Some(Arc::new(trace))))
    }

    /// A trace's mean rate at speedup 1 (`None` for a generated workload).
    pub(super) fn trace_rate_rps(self) -> Option<f64> {
        match self {
            Scale::Trace { rate_rps } => Some(rate_rps),
            Scale::Synthetic { .. } => None,
        }
    }

    /// The setting at `value` on `axis`.
    pub(super) fn setting(self, axis: Axis, value: f64) -> Setting {
        match (self, axis) {
            (Scale::Trace { rate_rps }, Axis::Rate) => Setting {
                rate_rps: value,
                speedup: value / rate_rps,
            },
            (Scale::Trace { rate_rps } | Scale::Synthetic { rate_rps }, Axis::Speedup) => Setting {
                rate_rps: rate_rps * value,
                speedup: value,
            },
            (Scale::Synthetic { .. }, Axis::Rate) => Setting {
                rate_rps: value,
                speedup: 1.0,
            },
        }
    }

    /// `base` run at `setting`.
    pub(super) fn spec_at(self, base: &ReplaySpec, setting: Setting) -> ReplaySpec {
        let mut spec = base.clone();
        spec.admission.speedup = setting.speedup;
        if let (Scale::Synthetic { .. }, WorkloadSpec::Synthetic(s)) = (self, &mut spec.workload) {
            *s.arrival.rate_mut() = setting.rate_rps / setting.speedup;
        }
        spec
    }
}

/// What must hold at a rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// Least share of the offered cohort that must complete within every
    /// SLO limit (`sla.attainment.all` of the replay report).
    pub attainment: f64,
    /// Least share of the offered cohort that must complete at all.
    pub min_completed: f64,
}

/// Least share of the offered cohort that must complete (issue 12).
pub const MIN_COMPLETED: f64 = 0.99;

impl Condition {
    /// Whether the replay `p` shows meets it.
    pub fn holds(&self, p: &Point) -> bool {
        p.offered > 0 && p.completed_share >= self.min_completed && p.attainment >= self.attainment
    }
}

/// Three percentiles of a latency, ms (`null` when no request had one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tail {
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
}

impl From<&Summary> for Tail {
    fn from(s: &Summary) -> Tail {
        Tail {
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
        }
    }
}

/// One replay of the search, as the curve shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Where it ran.
    #[serde(flatten)]
    pub setting: Setting,
    /// Requests in the offered cohort.
    pub offered: u64,
    /// Of them, completed.
    pub completed: u64,
    /// `completed / offered` (0 for an empty cohort).
    pub completed_share: f64,
    /// Share of the offered cohort completed within every SLO limit.
    pub attainment: f64,
    /// Completed requests per second of simulated time.
    pub throughput_rps: f64,
    /// Output tokens per second.
    pub output_tok_s: f64,
    /// Completed requests within every SLO limit, per second.
    pub goodput_rps: f64,
    /// TTFT of the completed requests, ms.
    pub ttft_ms: Tail,
    /// TPOT of the completed requests with two tokens or more, ms.
    pub tpot_ms: Tail,
    /// Whether the condition held.
    pub holds: bool,
}

impl Point {
    /// The figures of `report`, run at `setting`, judged by `condition`.
    pub fn of(setting: Setting, report: &ReplayReport, condition: &Condition) -> Point {
        let o = &report.outcomes;
        let t = &report.throughput;
        let mut point = Point {
            setting,
            offered: o.offered,
            completed: o.completed,
            completed_share: share(o.completed, o.offered),
            // A search always holds runs to a limit (`saturate`
            // refuses a base with none); a run with none has no attainment to meet.
            attainment: report.sla.attainment.all.unwrap_or(0.0),
            throughput_rps: t.request_rps,
            output_tok_s: t.output_tok_s,
            goodput_rps: t.goodput_rps.unwrap_or(0.0),
            ttft_ms: Tail::from(&report.latency.ttft_ms),
            tpot_ms: Tail::from(&report.latency.tpot_ms),
            holds: false,
        };
        point.holds = condition.holds(&point);
        point
    }
}

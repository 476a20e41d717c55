//! Comparing replays with measured runs: per metric and statistic the signed
//! error in %, and the mean absolute percentage error per metric and overall.

use std::collections::BTreeMap;
use std::sync::Arc;

use aisim_core::timing::TimingSpec;
use serde::Serialize;

use super::measured::{Measured, MeasuredRun, LATENCY_METRICS};
use super::stats::{Stats, STAT_NAMES};
use super::FidelityError;
use aisim_core::summary::Summary;
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::WorkloadSpec;
use aisim_replay::trace::TraceData;
use aisim_replay::{ReplayOutput, ReplayReport, Replayer};

/// One compared statistic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricError {
    /// Metric (`ttft_ms`, ..., `output_tok_s`, `completed`).
    pub metric: String,
    /// Statistic (`mean`, `p50`, `p90`, `p99`; `value` for scalars).
    pub stat: String,
    /// Measured value.
    pub measured: f64,
    /// Simulated value (absent when the replay has none, e.g. no request completed).
    pub simulated: Option<f64>,
    /// `(simulated − measured) / measured × 100`; absent when it is undefined
    /// (no simulated value, or a measured 0 with a simulated value above 0).
    pub error_pct: Option<f64>,
}

/// One run's comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunValidation {
    /// The run's name.
    pub name: String,
    /// Every statistic present in the measurement.
    pub metrics: Vec<MetricError>,
    /// Mean absolute error in % per metric, and `overall` over every statistic.
    pub mape_pct: BTreeMap<String, f64>,
}

/// Several runs' comparisons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidationReport {
    /// Per run.
    pub runs: Vec<RunValidation>,
    /// Mean absolute error in % per metric and `overall`, over all runs' statistics.
    pub mape_pct: BTreeMap<String, f64>,
    /// Runs of a set left out: their measurements hold nothing to compare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

fn stats_of(s: &Summary) -> Stats {
    Stats {
        mean: s.mean,
        p50: s.p50,
        p90: s.p90,
        p99: s.p99,
    }
}

/// What a replay's report says, in the measured-run shape (every metric and
/// statistic present): a run's own figures as its measurement.
pub fn measured_from_report(r: &ReplayReport) -> Measured {
    Measured {
        // A replay's own cohort: as many offered as the trace holds.
        offered: (r.outcomes.completed < r.outcomes.offered).then_some(r.outcomes.offered),
        completed: Some(r.outcomes.completed),
        ttft_ms: Some(stats_of(&r.latency.ttft_ms)),
        tpot_ms: Some(stats_of(&r.latency.tpot_ms)),
        itl_ms: Some(stats_of(&r.latency.itl_ms)),
        e2e_ms: Some(stats_of(&r.latency.e2e_ms)),
        output_tok_s: Some(r.throughput.output_tok_s),
    }
}

fn error_pct(measured: f64, simulated: Option<f64>) -> Option<f64> {
    let s = simulated?;
    if measured == 0.0 {
        return (s == 0.0).then_some(0.0);
    }
    Some((s - measured) / measured * 100.0)
}

/// Measured against simulated for every statistic the measurement holds.
pub fn compare(measured: &Measured, report: &ReplayReport) -> Vec<MetricError> {
    let simulated = measured_from_report(report);
    let mut out = Vec::new();
    let mut push = |metric: &str, stat: &str, m: Option<f64>, s: Option<f64>| {
        if let Some(m) = m {
            out.push(MetricError {
                metric: metric.into(),
                stat: stat.into(),
                measured: m,
                simulated: s,
                error_pct: error_pct(m, s),
            });
        }
    };
    for metric in LATENCY_METRICS {
        let (Some(m), Some(s)) = (measured.latency(metric), simulated.latency(metric)) else {
            continue;
        };
        for ((stat, mv), sv) in STAT_NAMES.iter().zip(m.values()).zip(s.values()) {
            push(metric, stat, mv, sv);
        }
    }
    push(
        "output_tok_s",
        "value",
        measured.output_tok_s,
        simulated.output_tok_s,
    );
    push(
        "completed",
        "value",
        measured.completed.map(|c| c as f64),
        simulated.completed.map(|c| c as f64),
    );
    out
}

/// Mean absolute error per metric and `overall` (statistics without an error left out).
pub fn mape(metrics: &[MetricError]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for m in metrics {
        if let Some(e) = m.error_pct {
            for key in [m.metric.as_str(), "overall"] {
                let s = sums.entry(key.to_string()).or_default();
                s.0 += e.abs();
                s.1 += 1;
            }
        }
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / n as f64))
        .collect()
}

/// Replays `run` as its spec says, with `timing` instead of the spec's when
/// given; the trace must hold as many requests as the run measured.
pub fn replay(
    run: &MeasuredRun,
    timing: Option<&TimingSpec>,
) -> Result<ReplayReport, FidelityError> {
    Ok(replay_output(run, timing, false, None)?.report)
}

/// [`replay`], with every request's record when `records` is set, and the trace
/// already read when `trace` holds it (calibration replays a run many times).
pub fn replay_output(
    run: &MeasuredRun,
    timing: Option<&TimingSpec>,
    records: bool,
    trace: Option<Arc<TraceData>>,
) -> Result<ReplayOutput, FidelityError> {
    let mut spec = run.replay_spec();
    if let Some(t) = timing {
        spec.timing = t.clone();
    }
    let out = Replayer::new(spec, SpecComposition)?
        .with_records(records)
        .with_loaded_trace(trace)
        .run()?;
    let report = &out.report;
    let (sent, field) = match run.measured.offered {
        Some(n) => (Some(n), "measured.offered"),
        None => (run.measured.completed, "measured.completed"),
    };
    if let (Some(n), WorkloadSpec::Trace { path, .. }) = (sent, &run.spec.workload) {
        if report.outcomes.offered != n {
            return Err(FidelityError::Field {
                path: path.clone(),
                field: format!("run `{}`: {field}", run.name),
                reason: format!(
                    "{n} requests measured but the trace holds {}: the trace must be the measured workload",
                    report.outcomes.offered
                ),
            });
        }
    }
    Ok(out)
}

/// Replays every run and compares it with its measurement.
pub fn validate(
    runs: &[MeasuredRun],
    timing: Option<&TimingSpec>,
) -> Result<ValidationReport, FidelityError> {
    let mut out = Vec::with_capacity(runs.len());
    let mut left_out = Vec::new();
    for run in runs {
        let report = replay(run, timing)?;
        let metrics = compare(&run.measured, &report);
        // Nothing to compare is no error of 0 %: a lone run is refused, a
        // run of a set left out and named.
        if metrics.iter().all(|m| m.error_pct.is_none()) {
            if runs.len() == 1 {
                return Err(nothing_to_compare(&run.name));
            }
            left_out.push(run.name.clone());
            continue;
        }
        out.push(RunValidation {
            name: run.name.clone(),
            mape_pct: mape(&metrics),
            metrics,
        });
    }
    if out.is_empty() {
        return Err(nothing_to_compare(&left_out.join(", ")));
    }
    let all: Vec<MetricError> = out.iter().flat_map(|r| r.metrics.iter().cloned()).collect();
    Ok(ValidationReport {
        mape_pct: mape(&all),
        runs: out,
        left_out,
    })
}

fn nothing_to_compare(run: &str) -> FidelityError {
    FidelityError::NothingToCompare {
        run: run.to_string(),
        reason: "every measured statistic is missing or 0 (a measured run needs a latency or a throughput above 0)".into(),
    }
}

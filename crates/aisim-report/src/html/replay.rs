//! The replay page: latency CDFs, the run over time, KV occupancy, the
//! inter-turn gaps, and the report's tables.

use aisim_core::summary::Summary;
use aisim_replay::curves::{Cdf, ReportCdfs};
use aisim_replay::timeseries::{TimeSeries, WorkerKv};
use aisim_replay::ReplayReport;

use super::svg::{Chart, Series};
use super::{page, Part};
use crate::replay::{replay_tables, workers_line};

/// One run to draw: its label (the legend's prefix when several runs share
/// a chart), its report, and its latency curves when the run kept them.
#[derive(Debug, Clone, Copy)]
pub struct ReplayRun<'a> {
    /// Legend prefix (empty for a single run).
    pub label: &'a str,
    /// The report.
    pub report: &'a ReplayReport,
    /// The curves (`Replayer::with_cdfs`); without them a CDF is drawn
    /// through the report's percentiles.
    pub cdfs: Option<&'a ReportCdfs>,
}

impl ReplayRun<'_> {
    fn name(&self, series: &str) -> String {
        match (self.label.is_empty(), series.is_empty()) {
            (true, _) => series.to_string(),
            (false, true) => self.label.to_string(),
            (false, false) => format!("{}: {series}", self.label),
        }
    }
}

/// A curve through a summary's percentiles, for a run whose values are gone
/// (a report read back from JSON).
fn summary_points(s: &Summary) -> Vec<(f64, f64)> {
    let at = [
        (s.min, 0.0),
        (s.p50, 0.5),
        (s.p75, 0.75),
        (s.p90, 0.9),
        (s.p95, 0.95),
        (s.p99, 0.99),
        (s.p999, 0.999),
        (s.max, 1.0),
    ];
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (v, p) in at {
        let Some(v) = v else { continue };
        match points.last_mut() {
            Some(last) if last.0 == v => last.1 = p,
            _ => points.push((v, p)),
        }
    }
    points
}

fn cdf_points(cdf: Option<&Cdf>, summary: &Summary) -> Vec<(f64, f64)> {
    cdf.map_or_else(|| summary_points(summary), |c| c.points.clone())
}

fn cdf_chart(title: &str, unit: &str, series: Vec<Series>) -> Chart {
    Chart::cdf(title, unit, "requests", series)
}

/// A per-bin series as points at the middle of each bin, over its length.
fn over_time(ts: &TimeSeries, value: impl Fn(usize, f64) -> f64) -> Vec<(f64, f64)> {
    (0..ts.bins as usize)
        .map(|i| {
            let len = ts.bin_length_s(i);
            (
                i as f64 * ts.bin_width_s + len / 2.0,
                value(i, len.max(f64::MIN_POSITIVE)),
            )
        })
        .collect()
}

/// The bin widths of `runs`: one width, or each run's when they differ.
fn bins_of(runs: &[ReplayRun]) -> String {
    let first = runs
        .first()
        .map_or(0.0, |r| r.report.time_series.bin_width_s);
    if runs
        .iter()
        .all(|r| r.report.time_series.bin_width_s == first)
    {
        return format!("bins of {first} s");
    }
    let each: Vec<String> = runs
        .iter()
        .map(|r| format!("{} s in {}", r.report.time_series.bin_width_s, r.label))
        .collect();
    format!("bins of {}", each.join(", "))
}

fn time_chart(title: &str, y_label: &str, bins: &str, series: Vec<Series>) -> Chart {
    Chart::new(
        &format!("{title} ({bins})"),
        "simulated time (s)",
        y_label,
        series,
    )
}

/// The worker of `ts` with the highest mean KV occupancy over the run
/// (each bin weighted by its length; ties to the lower index).
fn busiest(ts: &TimeSeries) -> Option<&WorkerKv> {
    let mean = |w: &WorkerKv| -> f64 {
        (0..ts.bins as usize)
            .map(|i| w.mean_occupancy[i] * ts.bin_length_s(i))
            .sum()
    };
    ts.kv
        .shown
        .iter()
        .map(|w| (mean(w), w))
        .fold(None, |best: Option<(f64, &WorkerKv)>, (m, w)| match best {
            Some((b, _)) if b >= m => best,
            _ => Some((m, w)),
        })
        .map(|(_, w)| w)
}

/// The charts of `runs`, each run's series overlaid on the same charts.
pub fn replay_charts(runs: &[ReplayRun]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let latency = [
        ("TTFT (first token − planned arrival)", "TTFT (ms)"),
        ("TPOT (time per output token after the first)", "TPOT (ms)"),
        ("E2E (end − planned arrival)", "E2E (ms)"),
    ];
    for (k, (title, unit)) in latency.into_iter().enumerate() {
        let series = runs
            .iter()
            .map(|r| {
                let l = &r.report.latency;
                let (cdf, summary) = match k {
                    0 => (r.cdfs.map(|c| &c.ttft_ms), &l.ttft_ms),
                    1 => (r.cdfs.map(|c| &c.tpot_ms), &l.tpot_ms),
                    _ => (r.cdfs.map(|c| &c.e2e_ms), &l.e2e_ms),
                };
                Series::cdf(r.name("completed requests"), cdf_points(cdf, summary))
            })
            .collect();
        charts.push(cdf_chart(&format!("CDF of {title}"), unit, series));
    }
    if runs.is_empty() {
        return charts;
    }
    let bins = bins_of(runs);
    let mut tokens = Vec::new();
    let mut requests = Vec::new();
    let mut concurrency = Vec::new();
    let mut kv = Vec::new();
    for r in runs {
        let ts = &r.report.time_series;
        tokens.push(Series::line(
            r.name("output tokens"),
            over_time(ts, |i, len| ts.output_tokens[i] as f64 / len),
        ));
        let counts = [
            ("arrivals", &ts.arrivals),
            ("completed", &ts.completed),
            ("timed out", &ts.timed_out),
            ("rejected", &ts.rejected),
        ];
        for (k, (name, counts)) in counts.into_iter().enumerate() {
            // Arrivals and completions always; the failures when there are any.
            if k < 2 || counts.iter().any(|&c| c > 0) {
                requests.push(Series::line(
                    r.name(name),
                    over_time(ts, |i, len| counts[i] as f64 / len),
                ));
            }
        }
        concurrency.push(Series::line(
            r.name("in flight"),
            over_time(ts, |i, _| ts.waiting_mean[i] + ts.running_mean[i]),
        ));
        concurrency.push(Series::line(
            r.name("running"),
            over_time(ts, |i, _| ts.running_mean[i]),
        ));
        concurrency.push(Series::line(
            r.name("waiting (queue)"),
            over_time(ts, |i, _| ts.waiting_mean[i]),
        ));
        // One run: each worker shown; several: each run's busiest, so the
        // chart keeps a few lines that its legend tells apart.
        let shown: Vec<&WorkerKv> = if runs.len() == 1 {
            ts.kv.shown.iter().collect()
        } else {
            busiest(ts).into_iter().collect()
        };
        for w in shown {
            let busiest = if runs.len() == 1 { "" } else { ", the busiest" };
            kv.push(Series::line(
                r.name(&format!("worker {}{busiest}", w.worker)),
                over_time(ts, |i, _| w.mean_occupancy[i] * 100.0),
            ));
        }
        kv.push(Series::line(
            r.name(&format!("all {} workers", ts.kv.workers)),
            over_time(ts, |i, _| ts.kv.mean_occupancy[i] * 100.0),
        ));
    }
    charts.push(time_chart(
        "Output throughput",
        "output tokens / s",
        &bins,
        tokens,
    ));
    charts.push(time_chart("Requests", "requests / s", &bins, requests));
    charts.push(time_chart(
        "Concurrency: requests in flight, running and waiting for their first scheduling",
        "requests (mean over the bin)",
        &bins,
        concurrency,
    ));
    let mut kv_chart = time_chart(
        "KV cache occupancy",
        "KV blocks in use (% of capacity)",
        &bins,
        kv,
    );
    kv_chart.y_range = Some((0.0, 100.0));
    charts.push(kv_chart);
    let gaps: Vec<Series> = runs
        .iter()
        .filter_map(|r| {
            let s = r.report.sessions.as_ref()?;
            let c = r.cdfs;
            Some([
                Series::cdf(
                    r.name("realized"),
                    cdf_points(c.map(|c| &c.realized_gap_ms), &s.realized_gap_ms),
                ),
                Series::cdf(
                    r.name("trace"),
                    cdf_points(c.map(|c| &c.trace_gap_ms), &s.trace_gap_ms),
                ),
            ])
        })
        .flatten()
        .collect();
    if !gaps.is_empty() {
        charts.push(cdf_chart(
            "CDF of the inter-turn gap: realized (dispatch − end of the previous turn) and on the trace clock",
            "gap (ms)",
            gaps,
        ));
    }
    charts
}

/// The replay page of one run.
pub fn render_replay_html(report: &ReplayReport, cdfs: Option<&ReportCdfs>) -> String {
    let run = ReplayRun {
        label: "",
        report,
        cdfs,
    };
    let ts = &report.time_series;
    let mut parts = vec![
        Part::Note(format!(
            "{} on {}. Latency curves are over the completed requests of the cohort; the charts over time cover every request, warm-up included, in {} bins of {} s of simulated time (the last one cut at the end of the run, {:.3} s).",
            report.workload.source,
            workers_line(report),
            ts.bins,
            ts.bin_width_s,
            ts.end_s
        )),
        Part::Heading("Latency".into()),
    ];
    let charts = replay_charts(&[run]);
    let (latency, rest) = charts.split_at(3.min(charts.len()));
    parts.extend(latency.iter().cloned().map(Part::Chart));
    parts.push(Part::Heading("Over time".into()));
    if ts.kv.shown.len() < ts.kv.workers as usize {
        parts.push(Part::Note(format!(
            "KV occupancy: the {} workers with the highest mean occupancy one by one, and the mean over all {} workers.",
            ts.kv.shown.len(),
            ts.kv.workers
        )));
    }
    parts.extend(rest.iter().cloned().map(Part::Chart));
    parts.push(Part::Heading("Tables".into()));
    parts.extend(replay_tables(report).into_iter().map(Part::Table));
    page(&format!("aisim replay: {}", report.workload.source), &parts)
}

//! The page of `aisim sweep merge --html`: each headline figure against
//! each axis (over the runs sharing an axis value: the lowest, the median
//! and the highest, and the lowest among the runs meeting the SLOs when
//! they are given), then every run in a table.

use aisim_replay::sweep::{cell, columns, RunResult, Slo};
use serde_json::Value;

use super::svg::{Chart, Series};
use super::{page, Part};
use crate::table::Table;

/// A figure the page draws: its title, unit and value in a run.
struct Figure {
    title: &'static str,
    unit: &'static str,
    of: fn(&RunResult) -> Option<f64>,
}

const FIGURES: [Figure; 5] = [
    Figure {
        title: "TTFT p99",
        unit: "ms",
        of: |r| r.metrics.ttft_ms.p99,
    },
    Figure {
        title: "TPOT p99",
        unit: "ms",
        of: |r| r.metrics.tpot_ms.p99,
    },
    Figure {
        title: "E2E p99",
        unit: "ms",
        of: |r| r.metrics.e2e_ms.p99,
    },
    Figure {
        title: "Throughput",
        unit: "tokens/s",
        of: |r| Some(r.metrics.total_tok_s),
    },
    Figure {
        title: "GPU-hours",
        unit: "h",
        of: |r| Some(r.gpu_hours),
    },
];

/// The page over `results` (one plan's, by id); runs meeting `slo` are
/// marked when it is given.
pub fn render_sweep_html(results: &[RunResult], slo: Option<&Slo>) -> String {
    let mut parts = Vec::new();
    let plan = results.first().map_or("", |r| r.plan.as_str());
    let meeting = slo.map(|s| results.iter().filter(|r| s.met_by(r)).count());
    parts.push(Part::Note(format!(
        "{} runs of plan {plan}.{}",
        results.len(),
        match (slo, meeting) {
            (Some(s), Some(n)) => format!(" {n} meet the SLOs ({}).", s.shown()),
            _ => String::new(),
        }
    )));
    let axes: Vec<String> = results
        .first()
        .map(|r| r.axes.0.iter().map(|(f, _)| f.clone()).collect())
        .unwrap_or_default();
    for axis in &axes {
        parts.push(Part::Heading(format!("Against {axis}")));
        let values = axis_values(results, axis);
        let numeric = values.iter().all(Value::is_number);
        let x_of = |i: usize| {
            if numeric {
                values[i].as_f64().unwrap_or(i as f64)
            } else {
                i as f64
            }
        };
        if !numeric {
            let names: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{i} = {}", cell(v)))
                .collect();
            parts.push(Part::Note(format!("x positions: {}", names.join(", "))));
        }
        for fig in &FIGURES {
            let mut low = Vec::new();
            let mut mid = Vec::new();
            let mut high = Vec::new();
            let mut best_ok = Vec::new();
            for (i, v) in values.iter().enumerate() {
                let at: Vec<&RunResult> = results
                    .iter()
                    .filter(|r| r.axes.0.iter().any(|(f, w)| f == axis && w == v))
                    .collect();
                let mut ys: Vec<f64> = at.iter().filter_map(|r| (fig.of)(r)).collect();
                ys.sort_by(f64::total_cmp);
                if let (Some(&lo), Some(&hi)) = (ys.first(), ys.last()) {
                    low.push((x_of(i), lo));
                    mid.push((x_of(i), ys[(ys.len() - 1) / 2]));
                    high.push((x_of(i), hi));
                }
                if let Some(s) = slo {
                    let ok = at
                        .iter()
                        .filter(|r| s.met_by(r))
                        .filter_map(|r| (fig.of)(r))
                        .min_by(f64::total_cmp);
                    if let Some(y) = ok {
                        best_ok.push((x_of(i), y));
                    }
                }
            }
            let mut series = vec![
                Series::line("lowest", low),
                Series::line("median", mid),
                Series::line("highest", high),
            ];
            if slo.is_some() {
                series.push(Series::line("lowest meeting the SLOs", best_ok));
            }
            parts.push(Part::Chart(Chart {
                title: format!("{} against {axis}", fig.title),
                x_label: axis.clone(),
                y_label: format!("{}, {}", fig.title, fig.unit),
                series,
                y_range: None,
            }));
        }
    }
    parts.push(Part::Heading("Runs".into()));
    parts.push(Part::Table(runs_table(results, slo)));
    page("aisim sweep", &parts)
}

/// Each value the axis takes, in run order (the grid's order).
fn axis_values(results: &[RunResult], axis: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for r in results {
        for (f, v) in &r.axes.0 {
            if f == axis && !out.contains(v) {
                out.push(v.clone());
            }
        }
    }
    out
}

/// Every run: its id, axes and figures (the CSV's columns), and whether it
/// meets the SLOs.
fn runs_table(results: &[RunResult], slo: Option<&Slo>) -> Table {
    let (mut header, rows) = columns(results);
    if slo.is_some() {
        header.insert(1, "meets SLOs".into());
    }
    let mut t = Table::new(header);
    for (r, mut row) in results.iter().zip(rows) {
        if let Some(s) = slo {
            row.insert(1, if s.met_by(r) { "yes" } else { "no" }.into());
        }
        t.row(row);
    }
    t
}

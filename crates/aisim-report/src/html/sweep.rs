//! The page of `aisim sweep merge --html`: each headline figure against
//! each axis (over the runs sharing an axis value: the lowest, the median
//! and the highest, and the lowest among the runs meeting the SLOs when
//! they are given), then every run in a table.

use aisim_lab::sweep::{cell, columns_with, RunResult, Slo};
use std::collections::HashMap;

use serde_json::Value;

use super::svg::{Chart, Series};
use super::{page, Part};
use crate::table::{sig, Table};

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
        let at_value = by_value(results, |r| {
            r.axes.0.iter().find(|(f, _)| f == axis).map(|(_, v)| v)
        });
        // Numbers on a numeric axis, joined; names (a router) at named
        // ticks, as dots no line joins.
        let numeric = at_value.iter().all(|(v, _)| v.is_number());
        let x_of = |i: usize| {
            if numeric {
                at_value[i].0.as_f64().unwrap_or(i as f64)
            } else {
                i as f64
            }
        };
        let categories =
            (!numeric).then(|| at_value.iter().map(|(v, _)| cell(v)).collect::<Vec<_>>());
        let series_of = |name: &str, points: Vec<(f64, f64)>| {
            if numeric {
                Series::line_points(name, points)
            } else {
                Series::points(name, points)
            }
        };
        for fig in &FIGURES {
            let mut low = Vec::new();
            let mut mid = Vec::new();
            let mut high = Vec::new();
            let mut best_ok = Vec::new();
            for (i, (_, at)) in at_value.iter().enumerate() {
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
                series_of("lowest", low),
                series_of("median", mid),
                series_of("highest", high),
            ];
            if slo.is_some() {
                series.push(series_of("lowest meeting the SLOs", best_ok));
            }
            parts.push(Part::Chart(Chart {
                x_categories: categories.clone(),
                ..Chart::new(
                    &format!("{} against {axis}", fig.title),
                    axis,
                    &format!("{}, {}", fig.title, fig.unit),
                    series,
                )
            }));
        }
    }
    parts.push(Part::Heading("Runs".into()));
    parts.push(Part::Table(runs_table(results, slo)));
    page("aisim sweep", &parts)
}

/// The items grouped by the value `value_of` gives (items without one
/// left out), in one pass over a map: by increasing value when every value
/// is a number (a chart's x), else in first-appearance order (the grid's).
fn by_value<'a, T>(
    items: &'a [T],
    value_of: impl Fn(&'a T) -> Option<&'a Value>,
) -> Vec<(&'a Value, Vec<&'a T>)> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<(&Value, Vec<&T>)> = Vec::new();
    for item in items {
        let Some(v) = value_of(item) else { continue };
        let k = *index.entry(v.to_string()).or_insert_with(|| {
            groups.push((v, Vec::new()));
            groups.len() - 1
        });
        groups[k].1.push(item);
    }
    if groups.iter().all(|(v, _)| v.is_number()) {
        groups.sort_by(|a, b| {
            let x = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
            x(a.0).total_cmp(&x(b.0))
        });
    }
    groups
}

/// Every run: its id, axes and figures (the CSV's columns, the figures
/// rounded to their significant digits), and whether it meets the SLOs.
fn runs_table(results: &[RunResult], slo: Option<&Slo>) -> Table {
    let (mut header, rows) = columns_with(results, sig);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn groups(values: &[Value]) -> Vec<(Value, usize)> {
        by_value(values, Some)
            .into_iter()
            .map(|(v, g)| (v.clone(), g.len()))
            .collect()
    }

    #[test]
    fn numbers_come_by_increasing_value_and_names_in_grid_order() {
        let nums = [16, 4, 8, 4].map(Value::from);
        assert_eq!(
            groups(&nums),
            [(4.into(), 2), (8.into(), 1), (16.into(), 1)]
        );
        let names = ["kv", "round_robin", "kv"].map(Value::from);
        assert_eq!(
            groups(&names),
            [("kv".into(), 2), ("round_robin".into(), 1)]
        );
    }

    proptest! {
        #[test]
        fn every_item_is_in_its_value_group_once(xs in proptest::collection::vec(-5i64..5, 0..60)) {
            let values: Vec<Value> = xs.iter().map(|&x| Value::from(x)).collect();
            let g = groups(&values);
            prop_assert_eq!(g.iter().map(|(_, n)| n).sum::<usize>(), xs.len());
            for w in g.windows(2) {
                prop_assert!(w[0].0.as_i64() < w[1].0.as_i64());
            }
            for (v, n) in &g {
                prop_assert_eq!(*n, values.iter().filter(|w| *w == v).count());
            }
        }
    }

    #[test]
    fn a_long_axis_groups_in_one_pass() {
        // 100 000 distinct seeds: a scan per value would be 10^10 steps.
        let values: Vec<Value> = (0..100_000).rev().map(Value::from).collect();
        let g = groups(&values);
        assert_eq!(g.len(), 100_000);
        assert_eq!(g[0], (0.into(), 1));
        assert_eq!(g[99_999], (99_999.into(), 1));
    }
}

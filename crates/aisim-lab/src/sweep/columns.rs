//! Results as flat columns: the id, each axis, each headline figure, the
//! outcome counts, GPU-hours and cost; what `sweep merge --csv` writes and
//! the HTML page's table shows.

use serde_json::Value;

use super::result::{RunResult, Stat};
use aisim_core::number::float;

/// Column names and one row of cells per result (empty: no value), each
/// figure in full (the CSV's form).
pub fn columns(results: &[RunResult]) -> (Vec<String>, Vec<Vec<String>>) {
    columns_with(results, float)
}

/// [`columns`] with each figure written by `num` (a table for a person
/// rounds them; the counts and the axes' values are as given).
pub fn columns_with(
    results: &[RunResult],
    num: fn(f64) -> String,
) -> (Vec<String>, Vec<Vec<String>>) {
    let axes: Vec<String> = results
        .first()
        .map(|r| r.axes.0.iter().map(|(f, _)| f.clone()).collect())
        .unwrap_or_default();
    let mut header = vec!["id".to_string()];
    header.extend(axes.iter().cloned());
    header.extend(figures(None, num).into_iter().map(|(name, _)| name));
    let rows = results
        .iter()
        .map(|r| {
            let mut row = vec![r.id.clone()];
            row.extend(axes.iter().map(|a| {
                r.axes
                    .0
                    .iter()
                    .find(|(f, _)| f == a)
                    .map_or(String::new(), |(_, v)| cell(v))
            }));
            row.extend(figures(Some(r), num).into_iter().map(|(_, v)| v));
            row
        })
        .collect();
    (header, rows)
}

/// An axis value as text: strings without their quotes.
pub fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Each figure's column name and, for a result, its cell.
fn figures(r: Option<&RunResult>, write: fn(f64) -> String) -> Vec<(String, String)> {
    let num = |v: Option<f64>| v.map_or(String::new(), write);
    let mut out = Vec::new();
    let mut stat = |name: &str, s: Option<&Stat>| {
        for (part, v) in [
            ("mean", s.and_then(|s| s.mean)),
            ("p50", s.and_then(|s| s.p50)),
            ("p90", s.and_then(|s| s.p90)),
            ("p99", s.and_then(|s| s.p99)),
        ] {
            out.push((format!("{name}_{part}"), num(v)));
        }
    };
    let m = r.map(|r| &r.metrics);
    stat("ttft_ms", m.map(|m| &m.ttft_ms));
    stat("tpot_ms", m.map(|m| &m.tpot_ms));
    stat("itl_ms", m.map(|m| &m.itl_ms));
    stat("e2e_ms", m.map(|m| &m.e2e_ms));
    let o = r.map(|r| &r.outcomes);
    let count = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    out.extend(
        [
            ("request_rps", num(m.map(|m| m.request_rps))),
            ("output_tok_s", num(m.map(|m| m.output_tok_s))),
            ("total_tok_s", num(m.map(|m| m.total_tok_s))),
            ("goodput_rps", num(m.and_then(|m| m.goodput_rps))),
            ("sla_attainment", num(m.and_then(|m| m.sla_attainment))),
            ("prefix_reuse_ratio", num(m.map(|m| m.prefix_reuse_ratio))),
            ("offered", count(o.map(|o| o.offered))),
            ("completed", count(o.map(|o| o.completed))),
            ("timed_out", count(o.map(|o| o.timed_out))),
            ("rejected", count(o.map(|o| o.rejected))),
            ("incomplete", count(o.map(|o| o.incomplete))),
            ("gpu_hours", num(r.map(|r| r.gpu_hours))),
            ("cost_usd", num(r.and_then(|r| r.cost_usd))),
        ]
        .map(|(n, v)| (n.to_string(), v)),
    );
    out
}

/// The columns as CSV, a header line first.
pub fn to_csv(results: &[RunResult]) -> String {
    let (header, rows) = columns(results);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).expect("writing to memory");
    for row in rows {
        // An axis value is user text: no cell may run as a formula.
        let row = row.iter().map(|c| aisim_core::safe_text::csv_safe(c));
        w.write_record(row.map(|c| c.into_owned()))
            .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are text")
}

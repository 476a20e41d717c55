//! The page of `aisim compare`: the warnings, both runs' charts overlaid,
//! and the table of every figure with its deltas.

use aisim_replay::ReplayReport;

use super::{page, replay_charts, Part, ReplayRun};
use crate::compare::{comparison_table, Comparison};
use crate::replay::name_of;

fn describe(label: &str, path: &str, r: &ReplayReport) -> String {
    format!(
        "{label}: {path}, {} on {} x {} worker(s), {} dispatch.",
        r.workload.source,
        r.spec.workers(),
        name_of(&r.spec.engine.backend),
        name_of(&r.spec.dispatch),
    )
}

/// The comparison `c` of reports `a` and `b` as one page. Reports read back
/// from JSON keep no curves, so their CDFs are drawn through their
/// percentiles (min, p50, p75, p90, p95, p99, p99.9, max).
pub fn render_compare_html(c: &Comparison, a: &ReplayReport, b: &ReplayReport) -> String {
    let runs = [
        ReplayRun {
            label: "A",
            report: a,
            cdfs: None,
        },
        ReplayRun {
            label: "B",
            report: b,
            cdfs: None,
        },
    ];
    let mut parts = vec![
        Part::Note(describe("A", &c.a, a)),
        Part::Note(describe("B", &c.b, b)),
    ];
    parts.extend(
        c.warnings
            .iter()
            .map(|w| Part::Note(format!("warning: {w}"))),
    );
    parts.push(Part::Note(
        "The latency curves pass through each report's percentiles (min, p50, p75, p90, p95, p99, p99.9, max): a report read back from JSON keeps no curve.".into(),
    ));
    parts.push(Part::Heading("Latency".into()));
    let charts = replay_charts(&runs);
    let (latency, rest) = charts.split_at(3.min(charts.len()));
    parts.extend(latency.iter().cloned().map(Part::Chart));
    parts.push(Part::Heading("Over time".into()));
    parts.extend(rest.iter().cloned().map(Part::Chart));
    parts.push(Part::Heading("Every figure".into()));
    parts.push(Part::Table(comparison_table(
        c,
        "B − A, and the change relative to A".into(),
    )));
    page(&format!("aisim compare: {} vs {}", c.a, c.b), &parts)
}

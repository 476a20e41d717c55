//! The page of `aisim compare`: each run named by what differs in its spec,
//! the spec differences, the warnings, both runs' charts overlaid, and the
//! headline figures then every figure with its deltas.

use aisim_replay::ReplayReport;

use super::{page, replay_charts, Part, ReplayRun};
use crate::compare::{comparison_table, headline, run_name, spec_table, Comparison, SAME_SPECS};

/// Differing spec fields named in the page's title; the lines below it name
/// them all.
const IN_TITLE: usize = 3;

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
    let all = c.spec_differences.len();
    let mut parts = vec![
        Part::Note(format!("A: {} ({}).", run_name(c, true, all), c.a)),
        Part::Note(format!("B: {} ({}).", run_name(c, false, all), c.b)),
    ];
    match spec_table(c) {
        Some(t) => parts.push(Part::Table(t)),
        None => parts.push(Part::Note(format!("{SAME_SPECS}."))),
    }
    parts.extend(
        c.warnings
            .iter()
            .map(|w| Part::Note(format!("warning: {w}"))),
    );
    parts.push(Part::Note(
        "The latency curves pass through each report's percentiles (min, p50, p75, p90, p95, p99, p99.9, max): a report read back from JSON keeps no curve.".into(),
    ));
    parts.push(Part::Heading("Headline figures".into()));
    parts.push(Part::Table(comparison_table(
        headline(c).into_iter(),
        "B − A, and the change relative to A".into(),
    )));
    parts.push(Part::Heading("Latency".into()));
    let charts = replay_charts(&runs);
    let (latency, rest) = charts.split_at(3.min(charts.len()));
    parts.extend(latency.iter().cloned().map(Part::Chart));
    parts.push(Part::Heading("Over time".into()));
    parts.extend(rest.iter().cloned().map(Part::Chart));
    parts.push(Part::Heading("Every figure".into()));
    parts.push(Part::Table(comparison_table(
        c.metrics.iter(),
        "B − A, and the change relative to A".into(),
    )));
    page(
        &format!(
            "aisim compare: A ({}) vs B ({})",
            run_name(c, true, IN_TITLE),
            run_name(c, false, IN_TITLE)
        ),
        &parts,
    )
}

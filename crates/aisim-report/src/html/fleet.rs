//! The fleet pages of the request-level simulation (`simulate`,
//! `simulate-fleet`, `compare-routers`): TTFT and queue-wait CDFs per scope,
//! and the commands' tables.

use aisim_fleet::des::DesMetrics;
use aisim_fleet::reports::{CompareRoutersReport, SimulateReport};

use super::svg::{Chart, Series};
use super::{page, Part};

fn cdf_chart(title: &str, unit: &str, series: Vec<Series>) -> Chart {
    Chart::cdf(title, unit, "completed requests", series)
}

/// TTFT and queue-wait CDFs of each scope (`name` gives its legend).
fn des_charts<'a>(scopes: impl Iterator<Item = (String, &'a DesMetrics)> + Clone) -> [Chart; 2] {
    [
        cdf_chart(
            "CDF of TTFT (first token − arrival), measured requests",
            "TTFT (ms)",
            scopes
                .clone()
                .map(|(n, m)| Series::cdf(n, m.ttft_cdf_ms.points.clone()))
                .collect(),
        ),
        cdf_chart(
            "CDF of the queue wait (admission − arrival), measured requests",
            "queue wait (ms)",
            scopes
                .map(|(n, m)| Series::cdf(n, m.queue_wait_cdf_ms.points.clone()))
                .collect(),
        ),
    ]
}

/// The page of `simulate` and `simulate-fleet`: the first seed's curves.
pub fn render_simulate_html(r: &SimulateReport) -> String {
    let scopes = std::iter::once(&r.result.fleet)
        .chain(&r.result.pools)
        .map(|m| (m.pool.clone(), m));
    let mut parts = vec![Part::Note(format!(
        "{}: the curves are of seed {} (after warm-up); the table's intervals are over {} seed(s).",
        r.label, r.first_seed, r.seeds
    ))];
    parts.extend(des_charts(scopes).into_iter().map(Part::Chart));
    parts.push(Part::Heading("Tables".into()));
    parts.push(Part::Table(crate::fleet::simulate_table(r)));
    parts.push(Part::Note(crate::fleet::simulate_summary(r)));
    page(&format!("aisim fleet simulation: {}", r.label), &parts)
}

/// The page of `compare-routers`: each router's fleet-wide curves.
pub fn render_compare_routers_html(r: &CompareRoutersReport) -> String {
    let scopes = r
        .rows
        .iter()
        .map(|row| (crate::fleet::router_name(&row.router), &row.fleet));
    let mut parts = vec![Part::Note(format!(
        "Routers on identical arrivals: fleet-wide curves of seed {} (after warm-up); the table's intervals are over {} seed(s).",
        r.first_seed, r.seeds
    ))];
    parts.extend(des_charts(scopes).into_iter().map(Part::Chart));
    parts.push(Part::Heading("Tables".into()));
    parts.push(Part::Table(crate::fleet::compare_table(r)));
    page("aisim compare-routers", &parts)
}

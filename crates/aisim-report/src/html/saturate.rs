//! The page of `aisim sweep saturate`: throughput and goodput, the TTFT and
//! TPOT percentiles, and the shares against rate, then the probes' table.

use aisim_replay::saturate::{Point, SaturateReport};

use super::svg::{Chart, Series};
use super::{page, Part};
use crate::saturate::{curve_table, heading, holds_again, verdict};

/// A curve's legend and the figure it reads from a probe.
type Figure = (&'static str, fn(&Point) -> Option<f64>);

/// A chart of `figures` against rate, every probe a point.
fn against_rate(title: &str, y_label: &str, points: &[&Point], figures: &[Figure]) -> Chart {
    Chart {
        title: title.to_string(),
        x_label: "offered rate (req/s)".into(),
        y_label: y_label.to_string(),
        series: figures
            .iter()
            .map(|(name, f)| {
                Series::line(
                    *name,
                    points
                        .iter()
                        .filter_map(|p| f(p).map(|y| (p.setting.rate_rps, y)))
                        .collect(),
                )
            })
            .collect(),
        y_range: None,
    }
}

/// The page.
pub fn render_saturate_html(r: &SaturateReport) -> String {
    let points = r.by_rate();
    let charts = [
        against_rate(
            "Throughput and goodput against offered rate",
            "requests per second",
            &points,
            &[
                ("offered", |p| Some(p.setting.rate_rps)),
                ("completed", |p| Some(p.throughput_rps)),
                ("within every SLO limit", |p| Some(p.goodput_rps)),
            ],
        ),
        against_rate(
            "TTFT percentiles against offered rate",
            "TTFT (ms)",
            &points,
            &[
                ("p50", |p| p.ttft_ms.p50),
                ("p90", |p| p.ttft_ms.p90),
                ("p99", |p| p.ttft_ms.p99),
            ],
        ),
        against_rate(
            "TPOT percentiles against offered rate",
            "TPOT (ms)",
            &points,
            &[
                ("p50", |p| p.tpot_ms.p50),
                ("p90", |p| p.tpot_ms.p90),
                ("p99", |p| p.tpot_ms.p99),
            ],
        ),
        against_rate(
            "Shares of the offered cohort against offered rate",
            "fraction of the offered cohort",
            &points,
            &[
                ("completed", |p| Some(p.completed_share)),
                ("within every SLO limit", |p| Some(p.attainment)),
            ],
        ),
    ];
    let mut parts: Vec<Part> = heading(r).into_iter().map(Part::Note).collect();
    parts.push(Part::Note(verdict(r)));
    parts.extend(holds_again(r).map(|w| Part::Note(format!("Warning: {w}"))));
    parts.extend(charts.into_iter().map(Part::Chart));
    parts.push(Part::Heading("Probes".into()));
    parts.push(Part::Table(curve_table(r)));
    page("aisim sweep saturate", &parts)
}

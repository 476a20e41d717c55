//! The page of `aisim sweep saturate`: throughput and goodput, the TTFT and
//! TPOT percentiles, and the shares against rate, then the probes' table.

use aisim_lab::saturate::{Point, SaturateReport, Tail};

use aisim_core::number::{rounded, HUMAN_DIGITS};

use super::svg::{Chart, Mark, Scale, Series};
use super::{page, Part};
use crate::saturate::{curve_table, heading, holds_again, verdict};

/// A figure of a probe (`None`: the probe has none).
type Figure = Box<dyn Fn(&Point) -> Option<f64>>;

/// A chart of `figures` (legend, figure) against rate, every probe a
/// point, the highest rate found to hold marked.
fn against_rate(
    title: &str,
    y_label: &str,
    points: &[&Point],
    figures: Vec<(&str, Figure)>,
    holds: Option<&Mark>,
) -> Chart {
    let series = figures
        .into_iter()
        .map(|(name, f)| {
            Series::line_points(
                name,
                points
                    .iter()
                    .filter_map(|p| f(p).map(|y| (p.setting.rate_rps, y)))
                    .collect(),
            )
        })
        .collect();
    Chart {
        x_marks: holds.into_iter().cloned().collect(),
        ..Chart::new(title, "offered rate (req/s)", y_label, series)
    }
}

/// A latency chart: by decades when the latencies span them (a saturated
/// probe's are thousands of times an idle one's), the SLO limit marked.
fn latency_chart(mut chart: Chart, limit: Option<(&str, f64)>) -> Chart {
    chart.y_scale = Scale::Auto;
    chart.y_marks = limit
        .map(|(name, ms)| Mark {
            at: ms,
            label: format!("SLO: {name} ≤ {} ms", rounded(ms, HUMAN_DIGITS)),
        })
        .into_iter()
        .collect();
    chart
}

/// The p50, p90 and p99 of the latency `tail` reads.
fn percentiles(tail: fn(&Point) -> Tail) -> Vec<(&'static str, Figure)> {
    vec![
        ("p50", Box::new(move |p| tail(p).p50)),
        ("p90", Box::new(move |p| tail(p).p90)),
        ("p99", Box::new(move |p| tail(p).p99)),
    ]
}

/// The page.
pub fn render_saturate_html(r: &SaturateReport) -> String {
    let points = r.by_rate();
    let figure = |f: fn(&Point) -> f64| -> Figure { Box::new(move |p| Some(f(p))) };
    let holds = r.bracket.holds.map(|h| Mark {
        at: h.rate_rps,
        label: format!("holds up to {} req/s", rounded(h.rate_rps, HUMAN_DIGITS)),
    });
    let holds = holds.as_ref();
    let c = &r.condition;
    let charts = [
        against_rate(
            "Throughput and goodput against offered rate",
            "requests per second",
            &points,
            vec![
                ("offered", figure(|p| p.setting.rate_rps)),
                ("completed", figure(|p| p.throughput_rps)),
                ("within every SLO limit", figure(|p| p.goodput_rps)),
            ],
            holds,
        ),
        latency_chart(
            against_rate(
                "TTFT percentiles against offered rate",
                "TTFT (ms)",
                &points,
                percentiles(|p| p.ttft_ms),
                holds,
            ),
            c.ttft_ms.map(|ms| ("TTFT", ms)),
        ),
        latency_chart(
            against_rate(
                "TPOT percentiles against offered rate",
                "TPOT (ms)",
                &points,
                percentiles(|p| p.tpot_ms),
                holds,
            ),
            c.tpot_ms.map(|ms| ("TPOT", ms)),
        ),
        against_rate(
            "Shares of the offered cohort against offered rate",
            "fraction of the offered cohort",
            &points,
            vec![
                ("completed", figure(|p| p.completed_share)),
                ("within every SLO limit", figure(|p| p.attainment)),
            ],
            holds,
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

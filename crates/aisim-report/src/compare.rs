//! `aisim compare`'s table: the comparison `aisim-lab` computes. It leads
//! with the fields of the specs that differ (what was changed between the
//! runs), then the headline figures with their deltas; `--all` gives every
//! figure of both runs.

use aisim_core::number::NOISE;
pub use aisim_lab::compare::{compare, Comparison, MetricDelta, SpecDifference};
use serde_json::Value;

use crate::table::{num, Table};

/// The figures shown without `--all`, in this order: `*` stands for one
/// part of the path (a pool's name, each throughput figure), so a pool or a
/// rate the report gains is shown without being listed here.
pub const HEADLINE: [&str; 19] = [
    "outcomes.offered",
    "outcomes.completed",
    "outcomes.timed_out",
    "outcomes.rejected",
    "latency.ttft_ms.p50",
    "latency.ttft_ms.p90",
    "latency.ttft_ms.p99",
    "latency.tpot_ms.p50",
    "latency.tpot_ms.p99",
    "latency.e2e_ms.p50",
    "latency.e2e_ms.p99",
    "throughput.*",
    "sla.attainment.all",
    "cache.prefix_reuse_ratio",
    "cache.preemptions",
    "pools.*.gpus",
    "pools.*.gpu_hours",
    "pools.*.kv_peak_tokens",
    "duration_s",
];

/// Whether the dotted `path` matches `pattern` (`*`: any one part).
fn matches(pattern: &str, path: &str) -> bool {
    let (p, m): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), path.split('.').collect());
    p.len() == m.len() && p.iter().zip(&m).all(|(p, m)| *p == "*" || p == m)
}

/// The headline figures of `c`, in [`HEADLINE`]'s order.
pub fn headline(c: &Comparison) -> Vec<&MetricDelta> {
    let mut out: Vec<&MetricDelta> = Vec::new();
    for pattern in HEADLINE {
        for m in &c.metrics {
            if matches(pattern, &m.metric) && !out.iter().any(|o| o.metric == m.metric) {
                out.push(m);
            }
        }
    }
    out
}

/// Whole numbers (counts, token totals) without decimals, others with 3.
fn digits(x: f64) -> usize {
    if x.fract() == 0.0 {
        0
    } else {
        3
    }
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| num(x, digits(x)))
}

fn signed(v: Option<f64>, digits: usize, unit: &str) -> String {
    // Noise around zero is no change, not `-0.000`.
    let v = v.map(|x| if x.abs() < NOISE { 0.0 } else { x });
    v.map_or_else(|| "-".to_string(), |x| format!("{x:+.digits$}{unit}"))
}

/// A spec value as the tables show it: text without its quotes, `-` for
/// absent, anything else as JSON.
pub fn spec_value(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The spec differences as a table (`None` when the specs are identical).
pub fn spec_table(c: &Comparison) -> Option<Table> {
    if c.spec_differences.is_empty() {
        return None;
    }
    let mut t = Table::new(["field", "A", "B"])
        .titled("Spec differences (`-`: absent)")
        .as_text();
    for d in &c.spec_differences {
        t.row([d.field.clone(), spec_value(&d.a), spec_value(&d.b)]);
    }
    Some(t)
}

/// The line said when the specs are identical.
pub const SAME_SPECS: &str = "Spec differences: none (the two specs are identical)";

/// What tells run A (`a`: true) or B apart: its value of each differing
/// spec field, at most `most` of them ("N more" for the rest), the fields
/// both runs set first; its file name when the specs are identical.
pub fn run_name(c: &Comparison, a: bool, most: usize) -> String {
    if c.spec_differences.is_empty() {
        return if a { c.a.clone() } else { c.b.clone() };
    }
    let (both, one): (Vec<&SpecDifference>, Vec<&SpecDifference>) = c
        .spec_differences
        .iter()
        .partition(|d| !d.a.is_null() && !d.b.is_null());
    let mut parts: Vec<String> = both
        .into_iter()
        .chain(one)
        .take(most)
        .map(|d| format!("{} {}", d.field, spec_value(if a { &d.a } else { &d.b })))
        .collect();
    if c.spec_differences.len() > most {
        parts.push(format!("{} more", c.spec_differences.len() - most));
    }
    parts.join(", ")
}

/// The comparison as text: the runs, their spec differences, the warnings,
/// then the headline figures (`all`: every figure).
pub fn render_comparison(c: &Comparison, all: bool) -> String {
    let mut out = format!("A: {}\nB: {}\n\n", c.a, c.b);
    match spec_table(c) {
        Some(t) => out.push_str(&t.render()),
        None => out.push_str(&format!("{SAME_SPECS}\n")),
    }
    out.push('\n');
    for w in &c.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if !c.warnings.is_empty() {
        out.push('\n');
    }
    if all {
        out.push_str(&comparison_table(c.metrics.iter(), "Every figure".into()).render());
        return out;
    }
    let shown = headline(c);
    out.push_str(&comparison_table(shown.iter().copied(), "Headline figures".into()).render());
    let rest: Vec<&MetricDelta> = c
        .metrics
        .iter()
        .filter(|m| !shown.iter().any(|s| s.metric == m.metric))
        .collect();
    if !rest.is_empty() {
        let differ = rest.iter().filter(|m| m.a != m.b).count();
        out.push_str(&format!(
            "\n{} more figures ({differ} of them differ): --all shows every figure\n",
            rest.len()
        ));
    }
    out
}

/// `metrics` with their deltas, as a table titled `title` (the terminal's
/// and the HTML page's).
pub fn comparison_table<'m>(
    metrics: impl Iterator<Item = &'m MetricDelta>,
    title: String,
) -> Table {
    let mut t = Table::new(["metric", "A", "B", "B - A", "change"]).titled(title);
    for m in metrics {
        t.row([
            m.metric.clone(),
            cell(m.a),
            cell(m.b),
            signed(m.delta, m.delta.map_or(0, digits), ""),
            signed(m.delta_pct, 1, "%"),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_one_part_per_star() {
        assert!(matches("pools.*.gpus", "pools.prefill.gpus"));
        assert!(!matches("pools.*.gpus", "pools.gpus"));
        assert!(!matches("pools.*.gpus", "pools.a.b.gpus"));
        assert!(matches("duration_s", "duration_s"));
        assert!(!matches("latency.ttft_ms.p50", "latency.ttft_ms.p500"));
    }
}

//! `aisim compare`'s table: the comparison `aisim-lab` computes, every
//! figure of both runs with its deltas.

pub use aisim_lab::compare::{compare, Comparison, MetricDelta};

use crate::table::{num, Table};

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
    v.map_or_else(|| "-".to_string(), |x| format!("{x:+.digits$}{unit}"))
}

/// The comparison as a table, warnings first.
pub fn render_comparison(c: &Comparison) -> String {
    let mut out = String::new();
    for w in &c.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if !c.warnings.is_empty() {
        out.push('\n');
    }
    out.push_str(&comparison_table(c, format!("A: {}\nB: {}", c.a, c.b)).render());
    out
}

/// Every figure of both runs with its deltas, as a table titled `title`
/// (the terminal's and the HTML page's).
pub fn comparison_table(c: &Comparison, title: String) -> Table {
    let mut t = Table::new(["metric", "A", "B", "B - A", "change"]).titled(title);
    for m in &c.metrics {
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

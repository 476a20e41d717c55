//! `aisim sweep saturate` as text: what was searched and what held, the
//! verdict, then every probe by increasing rate.

use aisim_core::number::float;
use aisim_lab::saturate::{Axis, Point, SaturateReport, Setting, Status};

use crate::table::{num, opt_num, Table};

fn ms(v: Option<f64>) -> String {
    opt_num(v, 1)
}

fn pct(share: f64) -> String {
    format!("{}%", num(share * 100.0, 1))
}

/// A setting as the axis names it: `12.5 req/s (speedup 3.1)`.
pub fn setting(s: &Setting) -> String {
    format!(
        "{} req/s (speedup {})",
        num(s.rate_rps, 3),
        num(s.speedup, 4)
    )
}

/// The flag that set the range, for messages.
pub fn range_flag(axis: Axis) -> &'static str {
    aisim_lab::jobs::sweep::range_flag(axis)
}

/// The condition in one line: the limits and the shares.
pub fn condition(r: &SaturateReport) -> String {
    let c = &r.condition;
    let limits: Vec<String> = [("TTFT", c.ttft_ms), ("TPOT", c.tpot_ms), ("E2E", c.e2e_ms)]
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| format!("{name} ≤ {} ms", float(v))))
        .collect();
    format!(
        "{}, for at least {} of the offered cohort, and at least {} completed",
        limits.join(", "),
        pct(c.shares.attainment),
        pct(c.shares.min_completed)
    )
}

/// What the search found, or why the range did not answer: one line.
pub fn verdict(r: &SaturateReport) -> String {
    let flag = format!("{} {}", range_flag(r.axis), r.range);
    let b = &r.bracket;
    let probes = r.probes.len();
    let tol = pct(r.search.tolerance);
    match (r.status, b.holds, b.fails) {
        (Status::Found, Some(h), Some(f)) => format!(
            "saturates at {}: it holds, {} fails (within {tol}, {probes} bisection probe(s))",
            setting(&h),
            setting(&f)
        ),
        (Status::ProbeLimit, Some(h), Some(f)) => format!(
            "{flag}: not narrowed to {tol} in {probes} bisection probe(s): {} holds, {} fails; raise --max-probes or --tolerance",
            setting(&h),
            setting(&f)
        ),
        (Status::LoFails, _, Some(f)) => format!(
            "{flag}: even the low end, {}, misses the condition; lower LO",
            setting(&f)
        ),
        (Status::HiHolds, Some(h), _) => format!(
            "{flag}: even the high end, {}, holds; raise HI",
            setting(&h)
        ),
        _ => format!("{flag}: the search ended without a bracket"),
    }
}

/// A warning when the condition holds again above the bracket.
pub fn holds_again(r: &SaturateReport) -> Option<String> {
    (!r.holds_again.is_empty()).then(|| {
        let at: Vec<String> = r.holds_again.iter().map(setting).collect();
        format!(
            "the condition holds again above the bracket, at {}: it is not monotone in the rate, and the answer is its lowest edge",
            at.join(", ")
        )
    })
}

/// Every probe, by increasing rate: the curve's and the bisection's.
pub fn curve_table(r: &SaturateReport) -> Table {
    let mut rows: Vec<(&Point, String)> = r
        .curve
        .iter()
        .map(|p| (p, "curve".to_string()))
        .chain(
            r.probes
                .iter()
                .enumerate()
                .map(|(k, p)| (p, format!("bisect {}", k + 1))),
        )
        .collect();
    rows.sort_by(|a, b| a.0.setting.rate_rps.total_cmp(&b.0.setting.rate_rps));
    let mut t = Table::new([
        "rate req/s",
        "speedup",
        "probe",
        "offered",
        "completed",
        "in SLO",
        "thru req/s",
        "good req/s",
        "TTFT p50",
        "p90",
        "p99",
        "TPOT p50",
        "p90",
        "p99",
        "holds",
    ])
    .titled("Probes by rate (rate: the arrival rate offered; thru and good: completed requests per second of the run, drain included; latencies in ms, of the completed requests)");
    for (p, probe) in rows {
        t.row([
            num(p.setting.rate_rps, 3),
            num(p.setting.speedup, 4),
            probe,
            p.offered.to_string(),
            pct(p.completed_share),
            pct(p.attainment),
            num(p.throughput_rps, 3),
            num(p.goodput_rps, 3),
            ms(p.ttft_ms.p50),
            ms(p.ttft_ms.p90),
            ms(p.ttft_ms.p99),
            ms(p.tpot_ms.p50),
            ms(p.tpot_ms.p90),
            ms(p.tpot_ms.p99),
            if p.holds { "yes" } else { "no" }.to_string(),
        ]);
    }
    t
}

/// The heading lines: what was searched, under which condition.
pub fn heading(r: &SaturateReport) -> Vec<String> {
    let axis = match r.axis {
        Axis::Rate => format!("rate {} req/s", r.range),
        Axis::Speedup => format!("speedup {}", r.range),
    };
    let mut lines = vec![
        format!("Saturation search over {axis}"),
        format!("condition: {}", condition(r)),
    ];
    if let Some(rate) = r.trace_rate_rps {
        lines.push(format!(
            "trace mean rate at speedup 1: {} req/s",
            num(rate, 3)
        ));
    }
    lines
}

/// The whole text.
pub fn render_saturate(r: &SaturateReport) -> String {
    let mut out = heading(r).join("\n");
    out.push('\n');
    out.push_str(&verdict(r));
    out.push('\n');
    if let Some(w) = holds_again(r) {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push('\n');
    out.push_str(&curve_table(r).render());
    out
}

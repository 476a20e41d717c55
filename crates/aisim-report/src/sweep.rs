//! `aisim sweep merge --best`: the cheapest run meeting the SLOs, as a
//! table, or a line saying that none does.

use aisim_lab::sweep::{cell, CostBasis, RunResult, Slo};

use crate::table::{num, opt_num, Table};

/// The answer of `--best` over `results`.
pub fn render_best(
    results: &[RunResult],
    best: Option<&RunResult>,
    basis: CostBasis,
    slo: &Slo,
) -> String {
    let meeting = results.iter().filter(|r| slo.met_by(r)).count();
    let Some(r) = best else {
        return format!(
            "no run of the {} meets the SLOs ({})\n",
            runs(results.len()),
            slo.shown()
        );
    };
    let by = match basis {
        CostBasis::Dollars => "cost",
        CostBasis::GpuHours => "GPU-hours",
    };
    let mut t = Table::new(["run", "value"]).titled(format!(
        "cheapest run by {by} meeting the SLOs ({}): {meeting} of {} meet them",
        slo.shown(),
        runs(results.len())
    ));
    let ms = |v: Option<f64>| opt_num(v, 2);
    t.row(["id".to_string(), r.id.clone()]);
    for (field, v) in &r.axes.0 {
        t.row([field.clone(), cell(v)]);
    }
    t.row(["gpu_hours".to_string(), num(r.gpu_hours, 4)]);
    t.row(["cost_usd".to_string(), opt_num(r.cost_usd, 2)]);
    let m = &r.metrics;
    t.row(["ttft_ms p99".to_string(), ms(m.ttft_ms.p99)]);
    t.row(["tpot_ms p99".to_string(), ms(m.tpot_ms.p99)]);
    t.row(["e2e_ms p99".to_string(), ms(m.e2e_ms.p99)]);
    t.row(["total_tok_s".to_string(), num(m.total_tok_s, 1)]);
    t.row([
        "completed".to_string(),
        format!("{}/{}", r.outcomes.completed, r.outcomes.offered),
    ]);
    t.render()
}

fn runs(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

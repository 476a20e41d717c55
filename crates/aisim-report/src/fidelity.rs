//! Tables of `aisim validate` and `aisim calibrate`.

use aisim_core::timing::COEFFICIENT_NAMES;
use aisim_lab::fidelity::validate::ValidationReport;
use aisim_lab::jobs::fidelity::CalibrationReport;

use crate::table::Table;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{x:.digits$}"))
}

/// Per run, metric and statistic: measured, simulated, signed error; then
/// the mean absolute errors.
pub fn render_validation(r: &ValidationReport) -> String {
    let mut out = String::new();
    for run in &r.runs {
        out.push_str(&format!("measured run `{}`\n", run.name));
        let mut t = Table::new(["metric", "stat", "measured", "simulated", "error %"]);
        for m in &run.metrics {
            t.row([
                m.metric.clone(),
                m.stat.clone(),
                format!("{:.3}", m.measured),
                opt(m.simulated, 3),
                opt(m.error_pct, 2),
            ]);
        }
        out.push_str(&t.render());
        out.push_str(&mape_line(&run.mape_pct));
        out.push('\n');
    }
    if r.runs.len() > 1 {
        out.push_str("all runs\n");
        out.push_str(&mape_line(&r.mape_pct));
    }
    if !r.left_out.is_empty() {
        out.push_str(&format!(
            "left out, nothing to compare: {}\n",
            r.left_out.join(", ")
        ));
    }
    out
}

fn mape_line(m: &std::collections::BTreeMap<String, f64>) -> String {
    let parts: Vec<String> = m
        .iter()
        .filter(|(k, _)| k.as_str() != "overall")
        .map(|(k, v)| format!("{k} {v:.2}"))
        .collect();
    format!(
        "mean absolute error %: {} | overall {}\n",
        parts.join(", "),
        opt(m.get("overall").copied(), 2)
    )
}

/// The fitted coefficients, the objective, and the errors before and after.
pub fn render_calibration(r: &CalibrationReport) -> String {
    let mut t = Table::new(["coefficient", "fitted", "value"]);
    for (name, v) in COEFFICIENT_NAMES.iter().zip(r.fit.coefficients.to_array()) {
        let fitted = if r.fit.fitted.iter().any(|f| f == name) {
            "yes"
        } else {
            "no"
        };
        t.row([name.to_string(), fitted.to_string(), format!("{v:.4}")]);
    }
    let mut out = t.render();
    out.push_str(&format!(
        "score (squared errors of the statistics and requests, docs/fidelity.md) {:.6} -> {:.6} in {} evaluations, {:.1} s\n\n",
        r.fit.start_objective, r.fit.objective, r.fit.evaluations, r.host.wall_s
    ));
    if !r.fit.at_bounds.is_empty() {
        out.push_str(&format!(
            "warning: {} ended at a bound of the search: the runs do not pin {}; fit more runs or loads, or hold {} with --fit\n\n",
            r.fit.at_bounds.join(", "),
            if r.fit.at_bounds.len() == 1 { "it" } else { "them" },
            if r.fit.at_bounds.len() == 1 { "it" } else { "them" },
        ));
    }
    let mut e = Table::new(["run", "metric", "zero-shot MAPE %", "calibrated MAPE %"]);
    for (z, c) in r.zero_shot.runs.iter().zip(&r.calibrated.runs) {
        for (metric, zv) in &z.mape_pct {
            e.row([
                z.name.clone(),
                metric.clone(),
                format!("{zv:.2}"),
                opt(c.mape_pct.get(metric).copied(), 2),
            ]);
        }
    }
    out.push_str(&e.render());
    out
}

//! Tables of `aisim validate` and `aisim calibrate`.

use aisim_lab::fidelity::calibrate::FIT_NAMES;
use aisim_lab::fidelity::validate::{RunValidation, ValidationReport};
use aisim_lab::jobs::fidelity::CalibrationReport;

use crate::table::{sig, Table};

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

/// The fitted coefficients, the objective, and the errors before and after;
/// then the runs held out and the leave-one-run-out folds, when asked for.
pub fn render_calibration(r: &CalibrationReport) -> String {
    let f = &r.fit;
    let mut t = Table::new(["coefficient", "fitted", "value", "share", "held because"]);
    let values = f.coefficients.to_array();
    for (i, name) in FIT_NAMES.iter().enumerate() {
        let value = match values.get(i) {
            // To their significant digits: a request overhead of 5e-6 ms
            // is not 0.0000, nor is noise of 1e-17 a value.
            Some(v) => sig(*v),
            None => match f.frontend_ms {
                Some(v) => sig(v),
                None => continue,
            },
        };
        let fitted = if f.fitted.iter().any(|n| n == name) {
            "yes"
        } else {
            "no"
        };
        let held = f
            .held
            .iter()
            .find(|h| h.name == *name)
            .map_or(String::new(), |h| h.reason.clone());
        t.row([
            name.to_string(),
            fitted.to_string(),
            value,
            opt(f.shares.get(*name).copied(), 3).replace("n/a", "-"),
            held,
        ]);
    }
    let mut out = t.render();
    out.push_str(&format!(
        "score (squared errors of the statistics and requests, plus the priors; docs/fidelity.md) {:.6} -> {:.6} in {} evaluations, {:.1} s\n\n",
        f.start_objective, f.objective, f.evaluations, r.host.wall_s
    ));
    if !f.at_bounds.is_empty() {
        out.push_str(&format!(
            "warning: {} ended at a bound of the search: the runs do not pin {}; fit more runs or loads, or hold {} with --fit\n\n",
            f.at_bounds.join(", "),
            if f.at_bounds.len() == 1 { "it" } else { "them" },
            if f.at_bounds.len() == 1 { "it" } else { "them" },
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
    if let Some(h) = &r.holdout {
        out.push_str("\nheld out (not fitted to): signed error of the means, %, zero-shot -> under the fit\n");
        let mut t = held_out_table();
        for (z, c) in h.zero_shot.runs.iter().zip(&h.calibrated.runs) {
            t.row(held_out_row(z, Some(c)));
        }
        out.push_str(&t.render());
    }
    if let Some(folds) = &r.cross_validation {
        out.push_str("\nleave one run out: each run under the fit on the others, signed error of the means, %, zero-shot -> under that fit\n");
        let mut t = held_out_table();
        for fold in folds {
            t.row(held_out_row(&fold.zero_shot, fold.calibrated.as_ref()));
        }
        out.push_str(&t.render());
        for fold in folds {
            if let Some(why) = &fold.refused {
                out.push_str(&format!("{}: {why}\n", fold.held_out));
            }
        }
    }
    out
}

fn held_out_table() -> Table {
    Table::new(["run", "TTFT", "TPOT", "E2E", "MAPE, all stats"])
}

/// A held-out run's signed mean errors, zero-shot then under the fit
/// (`refused` when there is no fit).
fn held_out_row(z: &RunValidation, c: Option<&RunValidation>) -> [String; 5] {
    let mean = |r: &RunValidation, metric: &str| {
        r.metrics
            .iter()
            .find(|m| m.metric == metric && m.stat == "mean")
            .and_then(|m| m.error_pct)
    };
    let pair = |zv: Option<f64>, cv: Option<Option<f64>>| match cv {
        Some(cv) => format!("{} -> {}", signed(zv), signed(cv)),
        None => format!("{} -> refused", signed(zv)),
    };
    let cell = |metric: &str| pair(mean(z, metric), c.map(|c| mean(c, metric)));
    [
        z.name.clone(),
        cell("ttft_ms"),
        cell("tpot_ms"),
        cell("e2e_ms"),
        pair(
            z.mape_pct.get("overall").copied(),
            c.map(|c| c.mape_pct.get("overall").copied()),
        ),
    ]
}

fn signed(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{x:+.1}"))
}

//! The `seeds` section of a replay report (`--seeds N`) as a table: one row
//! per figure, its mean and 95 % interval over the seeds.

use aisim_lab::seeds::SeedsReport;

use crate::table::{opt_num, Table};

fn cell(v: Option<f64>) -> String {
    opt_num(v, 3)
}

/// Every figure's mean and interval, in the report's order.
pub fn render_seeds(s: &SeedsReport) -> String {
    let last = s.first_seed.wrapping_add(s.n - 1);
    let title = format!(
        "Seeds: mean and 95 % Student-t interval over {} seed(s), {} ..= {} (the tables above are seed {}'s; `-`: null in a seed)",
        s.n, s.first_seed, last, s.first_seed
    );
    let mut t = Table::new(["figure", "mean", "95% low", "95% high"]).titled(title);
    for (key, m) in &s.metrics.0 {
        t.row([
            key.clone(),
            cell(m.mean),
            cell(m.ci95_low),
            cell(m.ci95_high),
        ]);
    }
    t.render()
}

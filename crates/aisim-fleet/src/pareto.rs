//! `pareto`: every CDF breakpoint as the short-pool threshold; cost against the
//! worst pool's P99.

use serde::Serialize;

use crate::plan::{Candidate, Planner};

/// One threshold.
#[derive(Debug, Clone, Serialize)]
pub struct ParetoPoint {
    /// The plan.
    #[serde(flatten)]
    pub candidate: Candidate,
    /// `(baseline − cost) / baseline`.
    pub saving: f64,
    /// Larger of the two pools' P99 TTFT, ms.
    pub worst_p99_ms: f64,
    /// No other point is strictly cheaper with a strictly lower worst P99.
    pub pareto: bool,
}

/// The pareto report.
#[derive(Debug, Clone, Serialize)]
pub struct ParetoReport {
    /// Schema version.
    pub schema_version: u32,
    /// Workload.
    pub cdf: String,
    /// Rate.
    pub lam: f64,
    /// Target, ms.
    pub slo_ms: f64,
    /// One pool for everything.
    pub baseline: Candidate,
    /// Every threshold.
    pub candidates: Vec<ParetoPoint>,
    /// Cheapest non-dominated point meeting the SLO.
    pub recommended: Option<ParetoPoint>,
}

/// Runs the sweep over breakpoints `t` with `0.01 ≤ F(t) ≤ 0.999` (not the last).
pub fn pareto(planner: &Planner) -> ParetoReport {
    let baseline = planner.one_pool().candidate;
    let pts = &planner.cdf.points;
    let mut candidates: Vec<ParetoPoint> = pts[..pts.len().saturating_sub(1)]
        .iter()
        .filter(|&&(_, f)| (0.01..=0.999).contains(&f))
        .map(|&(t, _)| {
            let mut c = planner.two_pool(t, 1.0, 0.0).candidate;
            c.gamma = None;
            let worst = c.p99_ttft_short_ms.max(c.p99_ttft_long_ms);
            ParetoPoint {
                saving: (baseline.cost_per_hr - c.cost_per_hr) / baseline.cost_per_hr,
                worst_p99_ms: worst,
                candidate: c,
                pareto: false,
            }
        })
        .collect();
    for i in 0..candidates.len() {
        let (ci, wi) = (
            candidates[i].candidate.cost_per_hr,
            candidates[i].worst_p99_ms,
        );
        candidates[i].pareto = !candidates
            .iter()
            .any(|o| o.candidate.cost_per_hr < ci && o.worst_p99_ms < wi);
    }
    let recommended = candidates
        .iter()
        .filter(|p| p.pareto && p.candidate.slo_met)
        .min_by(|a, b| {
            a.candidate
                .cost_per_hr
                .total_cmp(&b.candidate.cost_per_hr)
                .then(a.worst_p99_ms.total_cmp(&b.worst_p99_ms))
        })
        .cloned();
    ParetoReport {
        schema_version: crate::SCHEMA_VERSION,
        cdf: planner.cdf.name.clone(),
        lam: planner.lam,
        slo_ms: planner.targets.slo_ms,
        baseline,
        candidates,
        recommended,
    }
}

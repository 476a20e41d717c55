//! `pareto`: every CDF breakpoint as the short-pool threshold; cost against the
//! worst pool's P99.

use serde::Serialize;

use crate::plan::{Candidate, Planner};
use crate::FleetError;

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
    /// Not dominated: no other threshold is at most as costly with at most
    /// the worst P99, and better in one of the two.
    pub pareto: bool,
}

/// What `recommended` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recommendation {
    /// A two-pool threshold, no worse than the baseline.
    Threshold,
    /// The one-pool baseline: no threshold meeting the SLO beats it.
    Baseline,
    /// Nothing meets the SLO.
    None,
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
    /// Cheapest non-dominated threshold meeting the SLO; the baseline instead
    /// when that is cheaper (or as cheap with no worse a P99), or when no
    /// threshold meets the SLO but the baseline does.
    pub recommended: Option<ParetoPoint>,
    /// What `recommended` is.
    pub recommendation: Recommendation,
    /// What the plans were sized on, and the requests refused.
    pub workload: crate::plan::WorkloadNote,
}

/// Whether `a` dominates `b` in (cost, worst P99): no worse in both, better in one.
fn dominates(a: &ParetoPoint, b: &ParetoPoint) -> bool {
    let (ca, cb) = (a.candidate.cost_per_hr, b.candidate.cost_per_hr);
    ca <= cb && a.worst_p99_ms <= b.worst_p99_ms && (ca < cb || a.worst_p99_ms < b.worst_p99_ms)
}

/// Marks exactly the non-dominated points.
pub fn mark_pareto(points: &mut [ParetoPoint]) {
    let flags: Vec<bool> = points
        .iter()
        .map(|p| !points.iter().any(|o| dominates(o, p)))
        .collect();
    for (p, f) in points.iter_mut().zip(flags) {
        p.pareto = f;
    }
}

fn point(candidate: Candidate, baseline_cost: f64) -> ParetoPoint {
    ParetoPoint {
        saving: (baseline_cost - candidate.cost_per_hr) / baseline_cost,
        worst_p99_ms: candidate.p99_ttft_short_ms.max(candidate.p99_ttft_long_ms),
        candidate,
        pareto: false,
    }
}

/// Runs the sweep over breakpoints `t` with `0.01 ≤ F(t) ≤ 0.999` (not the last).
pub fn pareto(planner: &Planner) -> Result<ParetoReport, FleetError> {
    planner.validate()?;
    let baseline = planner.one_pool().candidate;
    let pts = &planner.cdf.points;
    let mut candidates: Vec<ParetoPoint> = pts[..pts.len().saturating_sub(1)]
        .iter()
        .filter(|&&(t, f)| (0.01..=0.999).contains(&f) && t <= planner.long_max_ctx as u64)
        .map(|&(t, _)| {
            let mut c = planner.two_pool(t, 1.0, 0.0).candidate;
            c.gamma = None;
            point(c, baseline.cost_per_hr)
        })
        .collect();
    mark_pareto(&mut candidates);
    let best = candidates
        .iter()
        .filter(|p| p.pareto && p.candidate.slo_met)
        .min_by(|a, b| {
            a.candidate
                .cost_per_hr
                .total_cmp(&b.candidate.cost_per_hr)
                .then(a.worst_p99_ms.total_cmp(&b.worst_p99_ms))
        })
        .cloned();
    let base = point(baseline.clone(), baseline.cost_per_hr);
    let base_wins = |p: &ParetoPoint| {
        base.candidate.slo_met
            && (base.candidate.cost_per_hr < p.candidate.cost_per_hr
                || (base.candidate.cost_per_hr == p.candidate.cost_per_hr
                    && base.worst_p99_ms <= p.worst_p99_ms))
    };
    let (recommended, recommendation) = match best {
        Some(p) if !base_wins(&p) => (Some(p), Recommendation::Threshold),
        _ if base.candidate.slo_met => (Some(base), Recommendation::Baseline),
        _ => (None, Recommendation::None),
    };
    Ok(ParetoReport {
        schema_version: crate::SCHEMA_VERSION,
        cdf: planner.cdf.name.clone(),
        lam: planner.lam,
        slo_ms: planner.targets.slo_ms,
        baseline,
        candidates,
        recommended,
        recommendation,
        workload: planner.workload_note(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pt(cost: f64, worst: f64) -> ParetoPoint {
        let c = Candidate {
            gamma: None,
            b_short: 1,
            n_short: 1,
            n_long: 0,
            total_gpus: 1,
            cost_per_hr: cost,
            annual_cost_kusd: cost * 8.76,
            lam_short: 1.0,
            lam_long: 0.0,
            p99_ttft_short_ms: worst,
            p99_ttft_long_ms: 0.0,
            slo_met: true,
            source: "analytic",
            analytic_p99_ms: None,
            p99_interval_ms: None,
        };
        point(c, 10.0)
    }

    proptest! {
        #[test]
        fn stars_are_exactly_the_non_dominated_set(
            raw in proptest::collection::vec((0u8..8, 0u8..8), 1..20)
        ) {
            let mut pts: Vec<ParetoPoint> =
                raw.iter().map(|&(c, w)| pt(c as f64, w as f64)).collect();
            mark_pareto(&mut pts);
            for p in &pts {
                // Starred iff no point is ≤ in both and < in one.
                let dominated = raw.iter().any(|&(c, w)| {
                    let (c, w) = (c as f64, w as f64);
                    let (pc, pw) = (p.candidate.cost_per_hr, p.worst_p99_ms);
                    c <= pc && w <= pw && (c < pc || w < pw)
                });
                prop_assert_eq!(p.pareto, !dominated);
            }
            // The cheapest point with the lowest P99 among the cheapest is always starred.
            let best = pts.iter().min_by(|a, b| a.candidate.cost_per_hr.total_cmp(&b.candidate.cost_per_hr).then(a.worst_p99_ms.total_cmp(&b.worst_p99_ms))).unwrap();
            prop_assert!(best.pareto);
        }
    }

    #[test]
    fn the_baseline_is_recommended_when_every_split_costs_more() {
        let resolve = |k| aisim_core::profile::resolve_profile(k).unwrap();
        // Short pools on dearer H100s, the one-pool baseline on A100s, a light load.
        let planner = Planner {
            cdf: crate::cdf::Cdf::builtin("lmsys").unwrap(),
            lam: 0.5,
            targets: crate::sizing::SizingTargets::default(),
            long_max_ctx: 65536,
            gpu_short: resolve("h100"),
            gpu_long: resolve("a100"),
            method: crate::calibrate::CalibrationMethod::Exact,
            model: crate::pool_model::SizingModel::Slots,
            seed: 42,
        };
        let r = pareto(&planner).unwrap();
        assert!(r.baseline.slo_met);
        assert!(r
            .candidates
            .iter()
            .all(|p| p.candidate.cost_per_hr > r.baseline.cost_per_hr));
        assert_eq!(r.recommendation, Recommendation::Baseline);
        let rec = r.recommended.unwrap();
        assert_eq!(rec.candidate.total_gpus, r.baseline.total_gpus);
        assert_eq!(rec.saving, 0.0);
    }

    #[test]
    fn equal_cost_and_higher_p99_is_dominated() {
        let mut pts = vec![pt(5.0, 100.0), pt(5.0, 200.0), pt(4.0, 300.0)];
        mark_pareto(&mut pts);
        assert_eq!(
            pts.iter().map(|p| p.pareto).collect::<Vec<_>>(),
            [true, false, true]
        );
    }
}

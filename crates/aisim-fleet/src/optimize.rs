//! `optimize`: sweep the compression band γ, size both pools analytically,
//! rank by cost and verify the cheapest by slot-level simulation.

use serde::Serialize;

use crate::plan::{Candidate, Planner};
use crate::pool_model::SizingModel;
use crate::validate;
use crate::FleetError;

/// Most γ values of one sweep: past `γ·b_short ≥ long_max_ctx` more steps
/// change nothing, and this keeps a typo from sizing a million plans.
pub const MAX_GAMMA_STEPS: u32 = 1000;

/// Optimize parameters beyond the planner's.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct OptimizeParams {
    /// Short-pool threshold.
    pub b_short: u64,
    /// Largest γ of the sweep (from 1.0 in steps of 0.1).
    pub gamma_max: f64,
    /// Probability that a compressed borderline request succeeds short.
    pub p_compress: f64,
    /// Candidates verified by simulation.
    pub verify_top: usize,
    /// Requests per simulated pool.
    pub n_sim_req: u64,
    /// Seeds per verification (run in parallel).
    pub seeds: u64,
    /// Also replay the verified candidates through the engine-level replay.
    pub verify_engine: bool,
    /// That replay's timing: the physics model of each pool's profile with
    /// these coefficients (`--timing fitted:FILE`), or the profile's
    /// iteration model when absent.
    pub engine_coefficients: Option<aisim_core::timing::PhysicsCoefficients>,
}

/// The optimize report.
#[derive(Debug, Clone, Serialize)]
pub struct OptimizeReport {
    /// Schema version.
    pub schema_version: u32,
    /// Workload name.
    pub cdf: String,
    /// Arrival rate.
    pub lam: f64,
    /// P99 TTFT target, ms.
    pub slo_ms: f64,
    /// Parameters.
    pub params: OptimizeParams,
    /// First seed of the simulations (seeds run `seed`, `seed + 1`, ...; the
    /// engine replay runs this one).
    pub seed: u64,
    /// Every γ, analytic, in sweep order.
    pub candidates: Vec<Candidate>,
    /// The verified ones.
    pub simulated: Vec<Candidate>,
    /// The same, replayed through the engines (with `--verify engine`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub engine: Vec<Candidate>,
    /// Cheapest analytic candidate meeting the SLO.
    pub best: Option<Candidate>,
    /// Cheapest candidate meeting the SLO by the deepest check that ran
    /// (`recommended_by`); none when no candidate passed that check, even
    /// if a shallower check passed one.
    pub recommended: Option<Candidate>,
    /// The check the recommendation rests on: `engine`, `simulated` or `analytic`.
    pub recommended_by: &'static str,
    /// One pool for everything.
    pub baseline: Candidate,
    /// What the plans were sized on, and the requests refused.
    pub workload: crate::plan::WorkloadNote,
}

fn cheapest_ok(c: &[Candidate]) -> Option<Candidate> {
    c.iter()
        .filter(|c| c.slo_met)
        .min_by(|a, b| a.cost_per_hr.total_cmp(&b.cost_per_hr))
        .cloned()
}

impl OptimizeParams {
    /// Checks the threshold, the sweep, the compression probability and the
    /// verification sizes.
    pub fn validate(&self, planner: &Planner) -> Result<(), FleetError> {
        planner.validate_threshold(self.b_short)?;
        let max_gamma = 1.0 + 0.1 * MAX_GAMMA_STEPS as f64;
        validate::within("--gamma-max", self.gamma_max, 1.0, max_gamma)?;
        validate::within("--p-compress", self.p_compress, 0.0, 1.0)?;
        validate::count("--n-sim-req", self.n_sim_req, validate::MAX_REQUESTS)?;
        validate::count("--seeds", self.seeds, validate::MAX_SEEDS)
    }
}

/// The cheapest candidate meeting the SLO by the deepest check that ran
/// (engine, then slot-level simulation, then analytic), and that check's
/// name; `None` when no candidate passed it, whatever a shallower check said.
pub fn recommend(
    analytic: &[Candidate],
    simulated: &[Candidate],
    engine: &[Candidate],
) -> (Option<Candidate>, &'static str) {
    if !engine.is_empty() {
        (cheapest_ok(engine), "engine")
    } else if !simulated.is_empty() {
        (cheapest_ok(simulated), "simulated")
    } else {
        (cheapest_ok(analytic), "analytic")
    }
}

/// Runs the sweep.
pub fn optimize(planner: &Planner, p: &OptimizeParams) -> Result<OptimizeReport, FleetError> {
    planner.validate()?;
    p.validate(planner)?;
    let steps = ((p.gamma_max - 1.0) / 0.1).round().max(0.0) as u32;
    let mut plans: Vec<_> = (0..=steps)
        .map(|i| {
            planner.two_pool(
                p.b_short,
                ((1.0 + 0.1 * i as f64) * 10.0).round() / 10.0,
                p.p_compress,
            )
        })
        .collect();
    // The batch model weighs one pool against the splits (a split that costs
    // more than one pool is never the answer); the reference's slot model
    // sweeps γ only, and its figures are kept.
    if planner.model == SizingModel::Batch {
        plans.push(planner.one_pool());
    }
    let candidates: Vec<Candidate> = plans.iter().map(|pl| pl.candidate.clone()).collect();
    // Cheapest first; ties to the smaller γ (sweep order, stable sort).
    let mut order: Vec<usize> = (0..plans.len()).collect();
    order.sort_by(|&a, &b| {
        candidates[a]
            .cost_per_hr
            .total_cmp(&candidates[b].cost_per_hr)
    });
    let simulated: Vec<Candidate> = order
        .iter()
        .take(p.verify_top)
        .map(|&i| planner.verify_seeds(&plans[i], p.n_sim_req, p.seeds))
        .collect::<Result<_, _>>()?;
    let engine = if p.verify_engine {
        order
            .iter()
            .take(p.verify_top)
            .map(|&i| planner.verify_engine(&plans[i], p.n_sim_req, p.engine_coefficients))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    let best = cheapest_ok(&candidates);
    let (recommended, recommended_by) = recommend(&candidates, &simulated, &engine);
    Ok(OptimizeReport {
        schema_version: crate::SCHEMA_VERSION,
        cdf: planner.cdf.name.clone(),
        lam: planner.lam,
        slo_ms: planner.targets.slo_ms,
        params: *p,
        seed: planner.seed,
        candidates,
        simulated,
        engine,
        best,
        recommended,
        recommended_by,
        baseline: planner.one_pool().candidate,
        workload: planner.workload_note(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(cost: f64, slo_met: bool, source: &'static str) -> Candidate {
        Candidate {
            gamma: Some(1.0),
            b_short: 4096,
            n_short: 1,
            n_long: 1,
            total_gpus: 2,
            cost_per_hr: cost,
            annual_cost_kusd: cost * 8.76,
            lam_short: 1.0,
            lam_long: 1.0,
            p99_ttft_short_ms: 1.0,
            p99_ttft_long_ms: 1.0,
            slo_met,
            source,
            analytic_p99_ms: None,
            p99_interval_ms: None,
        }
    }

    #[test]
    fn the_deepest_check_that_ran_decides() {
        let analytic = [cand(1.0, true, "analytic"), cand(2.0, true, "analytic")];
        let simulated = [cand(1.0, true, "simulated"), cand(2.0, true, "simulated")];
        // The engine fails the cheapest and passes the dearer one.
        let engine = [cand(1.0, false, "engine"), cand(2.0, true, "engine")];
        let (r, by) = recommend(&analytic, &simulated, &engine);
        assert_eq!((r.map(|c| c.cost_per_hr), by), (Some(2.0), "engine"));
        // The engine fails every one: no recommendation, though simulation passed them.
        let engine = [cand(1.0, false, "engine"), cand(2.0, false, "engine")];
        let (r, by) = recommend(&analytic, &simulated, &engine);
        assert!(r.is_none() && by == "engine");
        // Without the engine, the simulation decides, even against the analytic sweep.
        let simulated = [cand(1.0, false, "simulated"), cand(2.0, false, "simulated")];
        let (r, by) = recommend(&analytic, &simulated, &[]);
        assert!(r.is_none() && by == "simulated");
        let (r, by) = recommend(&analytic, &[], &[]);
        assert_eq!((r.map(|c| c.cost_per_hr), by), (Some(1.0), "analytic"));
    }
}

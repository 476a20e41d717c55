//! Two-pool plans: a short pool for requests up to `b_short` tokens and a long
//! pool for the rest, each sized as an M/G/c queue.

use std::sync::Arc;

use aisim_core::profile::GpuProfile;
use serde::Serialize;

use crate::calibrate::{CalibrationMethod, ServiceModel};
use crate::cdf::{Cdf, LengthSource};
use crate::mgc::simulate_mgc;
use crate::pool_model::{PoolModel, SizingModel, TtftFigure};
use crate::sizing::{min_gpus_counted, pool_at, PoolSize, SizingTargets};
use crate::validate;
use crate::FleetError;

/// Below this share of traffic a long pool gets no GPUs.
const MIN_LONG_SHARE: f64 = 1e-6;

/// Everything a two-pool plan depends on.
#[derive(Debug, Clone)]
pub struct Planner {
    /// The workload's length CDF.
    pub cdf: Cdf,
    /// Arrival rate, req/s.
    pub lam: f64,
    /// Sizing targets.
    pub targets: SizingTargets,
    /// Longest context of the long pool.
    pub long_max_ctx: u32,
    /// Profile of the short pool.
    pub gpu_short: Arc<dyn GpuProfile>,
    /// Profile of the long pool.
    pub gpu_long: Arc<dyn GpuProfile>,
    /// Exact or sampled calibration.
    pub method: CalibrationMethod,
    /// The batch model (default) or the reference's slot model.
    pub model: SizingModel,
    /// Seed of sampled calibration and simulation.
    pub seed: u64,
}

/// One pool of a plan, with what it was calibrated on.
#[derive(Debug, Clone)]
pub struct PlannedPool {
    /// The size.
    pub size: PoolSize,
    /// Its model (calibrated on its slice).
    pub model: PoolModel,
    /// The CDF slice it serves.
    pub cdf: Cdf,
    /// Smallest length it serves.
    pub lo_clamp: u64,
    /// Its maximum context.
    pub pool_max: u32,
    /// P99 evaluations the sizing search made (bounded whatever the rate).
    pub evaluations: u32,
}

/// A candidate fleet, in the JSON shape scripts rely on.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Compression band (optimize).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gamma: Option<f64>,
    /// Short-pool threshold.
    pub b_short: u64,
    /// Short-pool GPUs.
    pub n_short: u64,
    /// Long-pool GPUs.
    pub n_long: u64,
    /// Both.
    pub total_gpus: u64,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Thousands of dollars per year (`$/hr × 8.76`).
    pub annual_cost_kusd: f64,
    /// Short-pool rate, req/s.
    pub lam_short: f64,
    /// Long-pool rate, req/s.
    pub lam_long: f64,
    /// Short-pool P99 TTFT, ms.
    pub p99_ttft_short_ms: f64,
    /// Long-pool P99 TTFT, ms.
    pub p99_ttft_long_ms: f64,
    /// Whether both pools meet the SLO.
    pub slo_met: bool,
    /// `analytic` or `simulated` (the P99s above come from the M/G/c simulation).
    pub source: &'static str,
    /// With `source = simulated`: the analytic P99s for comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analytic_p99_ms: Option<(f64, f64)>,
    /// With several seeds: 95 % intervals of the simulated short and long P99s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_interval_ms: Option<(crate::des::Interval, crate::des::Interval)>,
}

/// What a plan was sized on: where the lengths come from, the model, and the
/// requests longer than every pool (refused, as an engine refuses a prompt
/// beyond its maximum length, and not sized for).
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadNote {
    /// Where each request's input and output lengths come from.
    pub lengths: LengthSource,
    /// The sizing model.
    pub sizing_model: SizingModel,
    /// What the candidates' P99 TTFT figures are.
    pub ttft_figure: TtftFigure,
    /// How the model's expectations were computed.
    pub calibration: CalibrationMethod,
    /// Longest total (input + output) a pool serves, tokens (`--long-max-ctx`).
    pub max_ctx: u32,
    /// Share of requests longer than that: refused, not sized for.
    pub refused_share: f64,
    /// Their rate, req/s (the pools are sized for `lam` minus it).
    pub refused_rps: f64,
    /// How many of the trace's requests that is (a trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_requests: Option<u64>,
    /// The flag that sets `max_ctx`.
    #[serde(skip)]
    pub max_ctx_flag: &'static str,
}

impl WorkloadNote {
    /// The note of `cdf` at `lam` req/s served up to `max_ctx` tokens (set
    /// by the flag named beside it), sized by `model`.
    pub fn new(
        cdf: &Cdf,
        lam: f64,
        (max_ctx, max_ctx_flag): (u32, &'static str),
        sizing_model: SizingModel,
        ttft_figure: TtftFigure,
        calibration: CalibrationMethod,
    ) -> WorkloadNote {
        let share = cdf.share_above(max_ctx as u64);
        WorkloadNote {
            lengths: cdf.length_source(),
            sizing_model,
            ttft_figure,
            calibration,
            max_ctx,
            refused_share: share,
            refused_rps: share * lam,
            refused_requests: cdf.count_above(max_ctx as u64),
            max_ctx_flag,
        }
    }
}

/// The part of `cdf` pools of at most `max_ctx` tokens serve, and its rate
/// out of `lam` (the longer requests are refused, as an engine refuses a
/// prompt beyond its maximum length).
pub fn served_part(cdf: &Cdf, lam: f64, max_ctx: u32) -> (Cdf, f64) {
    let max = max_ctx as u64;
    let served = cdf.up_to(max).unwrap_or_else(|| cdf.clone());
    (served, lam * (1.0 - cdf.share_above(max)))
}

/// An error naming `flag` when every request of `cdf` is longer than `max_ctx`.
pub fn check_served(cdf: &Cdf, max_ctx: u32, flag: &'static str) -> Result<(), FleetError> {
    if cdf.up_to(max_ctx as u64).is_none() {
        return Err(FleetError::invalid(
            flag,
            max_ctx,
            format!(
                "every request of {} is longer: no pool could serve any",
                cdf.name
            ),
        ));
    }
    Ok(())
}

/// A plan: the candidate row and its pools (for simulation).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The row.
    pub candidate: Candidate,
    /// Short pool.
    pub short: PlannedPool,
    /// Long pool, if any traffic goes long.
    pub long: Option<PlannedPool>,
}

impl Planner {
    /// Checks the rate, the targets, the long pool's context and the
    /// calibration (the entry points call it, so no bad value gets through).
    pub fn validate(&self) -> Result<(), FleetError> {
        validate::rate("--lam", self.lam)?;
        self.validate_sizing()
    }

    /// [`Planner::validate`] without the rate (for sweeps over rates).
    pub fn validate_sizing(&self) -> Result<(), FleetError> {
        self.targets.validate()?;
        validate::context("--long-max-ctx", self.long_max_ctx, self.gpu_long.as_ref())?;
        check_served(&self.cdf, self.long_max_ctx, "--long-max-ctx")?;
        if let CalibrationMethod::Sampled(n) = self.method {
            validate::count("--samples", n, validate::MAX_REQUESTS)?;
        }
        Ok(())
    }

    /// Checks a short-pool threshold: 1 to `long_max_ctx` tokens, leaving a
    /// KV slot on the short pool's profile.
    pub fn validate_threshold(&self, b_short: u64) -> Result<(), FleetError> {
        validate::count("--b-short", b_short, self.long_max_ctx as u64)?;
        validate::context("--b-short", b_short as u32, self.gpu_short.as_ref())
    }

    /// What the plans are sized on, and what is refused.
    pub fn workload_note(&self) -> WorkloadNote {
        WorkloadNote::new(
            &self.cdf,
            self.lam,
            (self.long_max_ctx, "--long-max-ctx"),
            self.model,
            self.model.ttft_figure(),
            self.method,
        )
    }

    /// The workload the pools serve (up to `long_max_ctx`) and its rate.
    pub(crate) fn served(&self) -> (Cdf, f64) {
        served_part(&self.cdf, self.lam, self.long_max_ctx)
    }

    fn size(
        &self,
        cdf: Cdf,
        lo: u64,
        pool_max: u32,
        lam: f64,
        profile: &dyn GpuProfile,
    ) -> PlannedPool {
        let model = PoolModel::new(
            self.model,
            &cdf,
            lo,
            pool_max,
            profile,
            self.method,
            self.seed,
        );
        let (size, evaluations) = min_gpus_counted(lam, &model, &self.targets);
        PlannedPool {
            size,
            evaluations,
            model,
            cdf,
            lo_clamp: lo,
            pool_max,
        }
    }

    /// Short pool up to `b_short`; requests in `(b_short, γ·b_short]` go short
    /// with probability `p_compress` (compressed), the rest long. Crate-only:
    /// the entry points (optimize, pareto, whatif) validate its inputs first.
    pub(crate) fn two_pool(&self, b_short: u64, gamma: f64, p_compress: f64) -> Plan {
        let (served, lam) = self.served();
        let alpha = served.eval(b_short as f64);
        let cut = (gamma * b_short as f64).floor();
        let borderline = (served.eval(gamma * b_short as f64) - alpha).max(0.0);
        let short_share = (alpha + p_compress * borderline).min(1.0);
        let lam_s = short_share * lam;
        let lam_l = (lam - lam_s).max(0.0);
        let short_cdf = served.short_part(b_short).unwrap_or_else(|| served.clone());
        let short = self.size(short_cdf, 1, b_short as u32, lam_s, self.gpu_short.as_ref());
        let long = if 1.0 - short_share < MIN_LONG_SHARE || lam_l <= self.model.min_rate() {
            None
        } else {
            served.long_part(cut).map(|c| {
                self.size(
                    c,
                    (cut as u64).max(1),
                    self.long_max_ctx,
                    lam_l,
                    self.gpu_long.as_ref(),
                )
            })
        };
        let n_long = long.as_ref().map_or(0, |p| p.size.n_gpus);
        let cost = short.size.n_gpus as f64 * self.gpu_short.cost_per_hr()
            + n_long as f64 * self.gpu_long.cost_per_hr();
        let candidate = Candidate {
            gamma: Some(gamma),
            b_short,
            n_short: short.size.n_gpus,
            n_long,
            total_gpus: short.size.n_gpus + n_long,
            cost_per_hr: cost,
            annual_cost_kusd: cost * 8.76,
            lam_short: lam_s,
            lam_long: long.as_ref().map_or(0.0, |_| lam_l),
            p99_ttft_short_ms: short.size.p99_ttft_ms,
            p99_ttft_long_ms: long.as_ref().map_or(0.0, |p| p.size.p99_ttft_ms),
            slo_met: short.size.slo_met && long.as_ref().is_none_or(|p| p.size.slo_met),
            source: "analytic",
            analytic_p99_ms: None,
            p99_interval_ms: None,
        };
        Plan {
            candidate,
            short,
            long,
        }
    }

    /// One pool for everything (`b_short = long_max_ctx`), on the long pool's profile.
    pub(crate) fn one_pool(&self) -> Plan {
        let (served, lam) = self.served();
        let pool = self.size(served, 1, self.long_max_ctx, lam, self.gpu_long.as_ref());
        let cost = pool.size.n_gpus as f64 * self.gpu_long.cost_per_hr();
        let candidate = Candidate {
            gamma: None,
            b_short: self.long_max_ctx as u64,
            n_short: pool.size.n_gpus,
            n_long: 0,
            total_gpus: pool.size.n_gpus,
            cost_per_hr: cost,
            annual_cost_kusd: cost * 8.76,
            lam_short: lam,
            lam_long: 0.0,
            p99_ttft_short_ms: pool.size.p99_ttft_ms,
            p99_ttft_long_ms: 0.0,
            slo_met: pool.size.slo_met,
            source: "analytic",
            analytic_p99_ms: None,
            p99_interval_ms: None,
        };
        Plan {
            candidate,
            short: pool,
            long: None,
        }
    }

    /// The plan's P99s by slot-level M/G/c simulation over `seeds` seeds (in
    /// parallel; the mean, with a 95 % interval when there are several).
    pub fn verify_seeds(
        &self,
        plan: &Plan,
        n_req: u64,
        seeds: u64,
    ) -> Result<Candidate, FleetError> {
        validate::count("--n-sim-req", n_req, validate::MAX_REQUESTS)?;
        validate::count("--seeds", seeds, validate::MAX_SEEDS)?;
        let runs = crate::des::run_seeds(seeds, self.seed, |s| self.verify(plan, n_req, s));
        let shorts: Vec<f64> = runs.iter().map(|c| c.p99_ttft_short_ms).collect();
        let longs: Vec<f64> = runs.iter().map(|c| c.p99_ttft_long_ms).collect();
        let latency = |xs: &[f64]| crate::des::interval(xs).within(0.0, f64::INFINITY);
        let (is, il) = (latency(&shorts), latency(&longs));
        let mut c = runs.into_iter().next().expect("at least one seed");
        c.p99_ttft_short_ms = is.mean;
        c.p99_ttft_long_ms = il.mean;
        c.slo_met = is.mean <= self.targets.slo_ms && il.mean <= self.targets.slo_ms;
        if seeds > 1 {
            c.p99_interval_ms = Some((is, il));
        }
        Ok(c)
    }

    /// The plan's P99s by slot-level M/G/c simulation of `n_req` requests per
    /// pool (the first fifth dropped as warm-up).
    pub(crate) fn verify(&self, plan: &Plan, n_req: u64, seed: u64) -> Candidate {
        let sim = |pool: &PlannedPool, profile: &dyn GpuProfile, seed: u64| -> f64 {
            if pool.size.n_gpus == 0 {
                return 0.0;
            }
            let draw = |rng: &mut rand_pcg::Pcg64| {
                pool.cdf
                    .sample_lengths(pool.lo_clamp, pool.pool_max as u64, rng)
            };
            let (lam, n) = (pool.size.lam, pool.size.n_gpus);
            match &pool.model {
                PoolModel::Slots(cal) => {
                    let model = ServiceModel::new(profile, cal.n_slots, pool.pool_max as u64);
                    simulate_mgc(lam, n * cal.n_slots, n_req, n_req / 5, seed, |rng| {
                        let (l_in, l_out) = draw(rng);
                        model.cost(l_in, l_out)
                    })
                    .p99_ttft_ms
                }
                // The GPUs as servers of prompt work at the operating point.
                PoolModel::Batch(b) => match b.state(lam / n as f64) {
                    Some(st) => {
                        simulate_mgc(lam, n, n_req, n_req / 5, seed, |rng| {
                            b.cost(&st, draw(rng).0)
                        })
                        .p99_ttft_ms
                    }
                    None => f64::INFINITY,
                },
            }
        };
        let mut c = plan.candidate.clone();
        c.analytic_p99_ms = Some((c.p99_ttft_short_ms, c.p99_ttft_long_ms));
        let short_profile = if plan.long.is_none() && c.gamma.is_none() {
            self.gpu_long.as_ref()
        } else {
            self.gpu_short.as_ref()
        };
        c.p99_ttft_short_ms = sim(&plan.short, short_profile, seed);
        c.p99_ttft_long_ms = plan
            .long
            .as_ref()
            .map_or(0.0, |p| sim(p, self.gpu_long.as_ref(), seed ^ 0x5a5a));
        c.slo_met =
            c.p99_ttft_short_ms <= self.targets.slo_ms && c.p99_ttft_long_ms <= self.targets.slo_ms;
        c.source = "simulated";
        c
    }

    /// A pool's size at a given GPU count (for what-if tables).
    pub fn pool_at(&self, pool: &PlannedPool, n: u64) -> PoolSize {
        pool_at(n, pool.size.lam, &pool.model, self.targets.slo_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planner_of(cdf: Cdf, lam: f64) -> Planner {
        let h100 = aisim_core::profile::resolve_profile("h100/llama-3.1-8b").unwrap();
        Planner {
            cdf,
            lam,
            targets: SizingTargets::default(),
            long_max_ctx: 65536,
            gpu_short: h100.clone(),
            gpu_long: h100,
            method: CalibrationMethod::Exact,
            model: SizingModel::Batch,
            seed: 42,
        }
    }

    #[test]
    fn requests_longer_than_every_pool_are_refused_and_counted() {
        let mut pairs = vec![(1000, 100); 9];
        pairs.push((100_000, 10));
        let p = planner_of(Cdf::from_pairs("t".into(), pairs).unwrap(), 10.0);
        p.validate().unwrap();
        let w = p.workload_note();
        assert_eq!(w.lengths, LengthSource::TracePairs);
        assert_eq!(w.refused_requests, Some(1));
        assert!((w.refused_share - 0.1).abs() < 1e-12);
        assert!((w.refused_rps - 1.0).abs() < 1e-12);
        // The pools serve the other nine tenths.
        let one = p.one_pool();
        assert!((one.candidate.lam_short - 9.0).abs() < 1e-12);
        assert_eq!(one.short.cdf.pairs.as_deref().map(<[_]>::len), Some(9));
        // A CDF: the share above the limit, a point added at the limit.
        let cdf = Cdf::new("c", &[(1000.0, 0.5), (100_000.0, 1.0)]).unwrap();
        let p = planner_of(cdf, 10.0);
        let w = p.workload_note();
        let want = 1.0 - (0.5 + 0.5 * (65536.0 - 1000.0) / 99_000.0);
        assert!(
            (w.refused_share - want).abs() < 1e-12,
            "{}",
            w.refused_share
        );
        assert_eq!(w.refused_requests, None);
        let served = p.served().0;
        assert_eq!(served.points.last(), Some(&(65536, 1.0)));
        // Nothing at or below the limit: an error naming the flag.
        let p = planner_of(
            Cdf::from_pairs("t".into(), vec![(100_000, 10)]).unwrap(),
            1.0,
        );
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("--long-max-ctx") && e.contains("longer"), "{e}");
    }

    #[test]
    fn a_billion_requests_per_second_sizes_every_gamma_in_few_evaluations() {
        let a100 = aisim_core::profile::resolve_profile("a100").unwrap();
        let planner = Planner {
            cdf: Cdf::builtin("azure").unwrap(),
            lam: 1e9,
            targets: SizingTargets::default(),
            long_max_ctx: 65536,
            gpu_short: a100.clone(),
            gpu_long: a100,
            method: CalibrationMethod::Exact,
            model: SizingModel::Slots,
            seed: 42,
        };
        planner.validate().unwrap();
        let mut total = planner.one_pool().short.evaluations;
        for step in 0..=10 {
            let plan = planner.two_pool(4096, 1.0 + 0.1 * step as f64, 0.75);
            for pool in std::iter::once(&plan.short).chain(plan.long.as_ref()) {
                assert!(
                    pool.evaluations <= 64,
                    "γ step {step}: {}",
                    pool.evaluations
                );
                assert!(pool.size.slo_met && pool.size.n_gpus > 0);
                total += pool.evaluations;
            }
        }
        // The whole default optimize sweep: a few hundred P99 evaluations.
        assert!(total <= 23 * 64, "{total}");
    }
}

//! Fitting the physics model's coefficients to measured runs: every
//! candidate is judged by replaying the runs, and a bounded Nelder–Mead
//! search then a Levenberg–Marquardt polish (deterministic: fixed start,
//! fixed simplex, no sampling) minimize the mean squared log-ratio of
//! simulated to measured statistics (and per-request latencies, when the
//! runs hold them).

use std::path::Path;
use std::sync::Arc;

use aisim_core::profile::ComputedProfile;
use aisim_core::timing::{PhysicsCoefficients, TimingSpec, COEFFICIENT_NAMES};
use serde::{Deserialize, Serialize};

use super::json_file::read_json;
use super::measured::MeasuredRun;
use super::optimize::{levenberg_marquardt, nelder_mead, score, Problem};
use super::request_times::MeasuredRequests;
use super::validate::{compare, replay_output};
use super::FidelityError;
use aisim_replay::trace::TraceData;
use aisim_replay::workload::load_trace;

/// Version of the fitted-coefficients file.
pub const FITTED_VERSION: u32 = 1;

/// Scale coefficients are searched in log space within these factors of 1.
const SCALE_BOUNDS: (f64, f64) = (0.02, 50.0);
/// Overheads (ms) are searched as `ln(ms + OVERHEAD_FLOOR_MS)` up to this many ms,
/// so 0 is reachable and the search moves by factors at any scale.
const OVERHEAD_MAX_MS: f64 = 1000.0;
const OVERHEAD_FLOOR_MS: f64 = 0.1;
/// Cost of a statistic the replay cannot give (no request completed).
const MISSING_PENALTY: f64 = 100.0;

/// What to fit and how long to search.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// Coefficients to fit (names of [`COEFFICIENT_NAMES`]); the others stay at `start`.
    pub fit: Vec<&'static str>,
    /// Starting coefficients.
    pub start: PhysicsCoefficients,
    /// Most replays of the whole set of runs.
    pub max_evaluations: u32,
}

impl CalibrateOptions {
    /// Fit every coefficient the runs can tell apart: `allreduce` only when
    /// a run is tensor-parallel; `pass_ms` only when a run has per-request
    /// measurements or an MoE model. From the summary alone, on a dense
    /// model the weights read is the same every pass, so its scale and a
    /// per-pass constant are the same thing to the decode passes (only
    /// compute-bound prompt passes, which hide the weights, separate them,
    /// too weakly for a summary); each request's TTFT, set mostly by prompt
    /// passes, and its E2E, mostly by decode passes, separate them.
    pub fn for_runs(runs: &[MeasuredRun]) -> CalibrateOptions {
        let profiles: Vec<ComputedProfile> = runs
            .iter()
            .filter_map(|r| r.spec.timing.profile_key())
            .filter_map(|k| ComputedProfile::from_key(k).ok())
            .collect();
        let tp = runs.iter().any(|r| r.spec.engine.tp_size > 1)
            || profiles.iter().any(|p| p.serving().tp > 1);
        let moe = profiles.iter().any(|p| p.model().moe.is_some());
        let per_request = runs.iter().any(|r| r.requests.is_some());
        CalibrateOptions {
            fit: COEFFICIENT_NAMES
                .iter()
                .copied()
                .filter(|n| (tp || *n != "allreduce") && (moe || per_request || *n != "pass_ms"))
                .collect(),
            start: PhysicsCoefficients::default(),
            max_evaluations: 1000,
        }
    }
}

/// The outcome of a fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The fitted coefficients.
    pub coefficients: PhysicsCoefficients,
    /// Names of the coefficients that were fitted.
    pub fitted: Vec<String>,
    /// The runs fitted to.
    pub runs: Vec<String>,
    /// Replays of the whole set of runs done.
    pub evaluations: u32,
    /// The score at the start (docs/fidelity.md).
    pub start_objective: f64,
    /// The same at the fit.
    pub objective: f64,
    /// Fitted coefficients that ended at a bound of the search: the runs did
    /// not pin them (too few requests or loads), so their values say little.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at_bounds: Vec<String>,
}

/// The fitted-coefficients file `aisim calibrate --out` writes and
/// `--timing fitted:FILE` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedFile {
    /// Format version ([`FITTED_VERSION`]).
    pub version: u32,
    /// The coefficients.
    pub coefficients: PhysicsCoefficients,
    /// The profiles (HARDWARE/MODEL[/tpN]) of the runs they were fitted on:
    /// used with another, they describe other hardware or another model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// How they were found (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
}

impl FittedFile {
    /// Reads a fitted-coefficients file.
    pub fn from_file(path: &Path) -> Result<FittedFile, FidelityError> {
        let f: FittedFile = read_json(path)?;
        if f.version != FITTED_VERSION {
            return Err(FidelityError::field(
                path,
                "version",
                format!("{}: this aisim reads version {FITTED_VERSION}", f.version),
            ));
        }
        f.coefficients
            .validate("coefficients")
            .map_err(|e| FidelityError::field(path, "coefficients", e.to_string()))?;
        Ok(f)
    }
}

/// The physics timing of `run` under `c`: its spec's physics (or iteration)
/// profile; any other timing cannot be calibrated.
pub fn physics_timing(
    run: &MeasuredRun,
    c: PhysicsCoefficients,
) -> Result<TimingSpec, FidelityError> {
    match run.spec.timing.profile_key() {
        Some(profile) => Ok(TimingSpec::Physics {
            profile: profile.to_string(),
            coefficients: c,
        }),
        None => Err(FidelityError::Field {
            path: format!("run {}", run.name).into(),
            field: "spec.timing".into(),
            reason: "calibration fits the physics model: give the run a `physics` timing with a profile (HARDWARE/MODEL)".into(),
        }),
    }
}

/// A run made ready for fitting, once for every evaluation: its trace, read,
/// and its per-request measurements, when its `requests` file has them in
/// the generic shape, with their mean TTFT and E2E (ms).
struct Target<'r> {
    run: &'r MeasuredRun,
    trace: Option<Arc<TraceData>>,
    requests: Option<(MeasuredRequests, f64, f64)>,
}

fn targets(runs: &[MeasuredRun]) -> Result<Vec<Target<'_>>, FidelityError> {
    runs.iter()
        .map(|run| {
            let trace = load_trace(&run.spec.workload)?.map(Arc::new);
            let requests = run
                .requests
                .as_deref()
                .map(MeasuredRequests::read)
                .transpose()?
                .map(|m| {
                    let n = m.requests.len().max(1) as f64;
                    let mean_ttft = m.requests.iter().map(|r| r.ttft_ms).sum::<f64>() / n;
                    let mean_e2e = m.requests.iter().map(|r| r.e2e_ms).sum::<f64>() / n;
                    (m, mean_ttft, mean_e2e)
                });
            Ok(Target {
                run,
                trace,
                requests,
            })
        })
        .collect()
}

/// `ln(simulated / measured)`, or the cost of a value the replay cannot give.
fn log_ratio(measured: f64, simulated: Option<f64>) -> f64 {
    match simulated {
        Some(s) if s > 0.0 => (s / measured).ln(),
        _ => MISSING_PENALTY.sqrt(),
    }
}

/// The residuals whose sum of squares is the score: `ln(simulated /
/// measured)` of every summary statistic of every run (the request count
/// left out: timing does not set it), each weighted so the summary
/// statistics' squares average; then, for runs with per-request
/// measurements, `(simulated − measured) / measured mean` of every
/// request's TTFT and E2E, weighted so they average too. The score is the mean over the summary plus the mean over
/// the requests: the summary keeps the fit on what is reported, the
/// requests make coefficients that trade against each other on average
/// (a per-pass constant and the weights scale, the per-request constant
/// and the KV scale) identifiable.
fn residuals(targets: &[Target<'_>], c: PhysicsCoefficients) -> Result<Vec<f64>, FidelityError> {
    let (mut summary, mut requests) = (Vec::new(), Vec::new());
    for t in targets {
        let timing = physics_timing(t.run, c)?;
        let out = replay_output(t.run, Some(&timing), t.requests.is_some(), t.trace.clone())?;
        for m in compare(&t.run.measured, &out.report) {
            if m.metric == "completed" || m.measured <= 0.0 {
                continue;
            }
            summary.push(log_ratio(m.measured, m.simulated));
        }
        if let Some((measured, mean_ttft, mean_e2e)) = &t.requests {
            let (mean_ttft, mean_e2e) = (*mean_ttft, *mean_e2e);
            let simulated = measured.simulated(&out.records)?;
            for (m, s) in measured.requests.iter().zip(simulated) {
                for (mv, sv, scale) in [
                    (m.ttft_ms, s.map(|s| s.0), mean_ttft),
                    (m.e2e_ms, s.map(|s| s.1), mean_e2e),
                ] {
                    if scale > 0.0 {
                        requests.push(sv.map_or(MISSING_PENALTY.sqrt(), |sv| (sv - mv) / scale));
                    }
                }
            }
        }
    }
    for group in [&mut summary, &mut requests] {
        let w = 1.0 / (group.len().max(1) as f64).sqrt();
        group.iter_mut().for_each(|v| *v *= w);
    }
    summary.extend(requests);
    Ok(summary)
}

/// Maps search coordinates to coefficients and back, in log space (shifted
/// for the overheads), clamped to the bounds.
struct Space {
    index: Vec<usize>,
    start: [f64; 6],
}

impl Space {
    fn is_overhead(i: usize) -> bool {
        COEFFICIENT_NAMES[i].ends_with("_ms")
    }

    fn to_x(&self, c: [f64; 6]) -> Vec<f64> {
        self.index
            .iter()
            .map(|&i| {
                if Self::is_overhead(i) {
                    (c[i].max(0.0) + OVERHEAD_FLOOR_MS).ln()
                } else {
                    c[i].max(SCALE_BOUNDS.0).ln()
                }
            })
            .collect()
    }

    fn coefficients(&self, x: &[f64]) -> PhysicsCoefficients {
        let mut a = self.start;
        for (v, &i) in x.iter().zip(&self.index) {
            a[i] = if Self::is_overhead(i) {
                (v.exp() - OVERHEAD_FLOOR_MS).max(0.0)
            } else {
                v.exp()
            };
        }
        PhysicsCoefficients::from_array(a)
    }
}

/// The fit as a minimization problem over [`Space`]'s coordinates.
struct Fitting<'t, 'r> {
    space: Space,
    targets: &'t [Target<'r>],
    evaluations: u32,
}

impl Problem for Fitting<'_, '_> {
    fn clamp(&self, x: &mut [f64]) {
        for (v, &i) in x.iter_mut().zip(&self.space.index) {
            let (lo, hi) = if Space::is_overhead(i) {
                (
                    OVERHEAD_FLOOR_MS.ln(),
                    (OVERHEAD_MAX_MS + OVERHEAD_FLOOR_MS).ln(),
                )
            } else {
                (SCALE_BOUNDS.0.ln(), SCALE_BOUNDS.1.ln())
            };
            *v = v.clamp(lo, hi);
        }
    }

    /// A factor 1.5 for scales, 10 for overheads (whose scale is unknown:
    /// 1 µs to a second).
    fn step(&self, k: usize) -> f64 {
        if Space::is_overhead(self.space.index[k]) {
            10f64.ln()
        } else {
            1.5f64.ln()
        }
    }

    fn residuals(&mut self, x: &[f64]) -> Result<Vec<f64>, FidelityError> {
        self.evaluations += 1;
        residuals(self.targets, self.space.coefficients(x))
    }
}

/// Share of the evaluations Nelder–Mead may use before the polish.
const SIMPLEX_SHARE: f64 = 0.4;

/// Fits `options.fit` to `runs`.
pub fn calibrate(runs: &[MeasuredRun], options: &CalibrateOptions) -> Result<Fit, FidelityError> {
    calibrate_observed(runs, options, &mut |_| {})
}

/// [`calibrate`], telling `stage` what each stage of the search did (a
/// line of text: the search takes seconds, a terminal shows it going).
pub fn calibrate_observed(
    runs: &[MeasuredRun],
    options: &CalibrateOptions,
    stage: &mut dyn FnMut(String),
) -> Result<Fit, FidelityError> {
    let mut index = Vec::new();
    for name in &options.fit {
        match COEFFICIENT_NAMES.iter().position(|n| n == name) {
            Some(i) if !index.contains(&i) => index.push(i),
            Some(_) => {}
            None => {
                return Err(FidelityError::Field {
                    path: "--fit".into(),
                    field: name.to_string(),
                    reason: format!("not a coefficient; use {}", COEFFICIENT_NAMES.join(", ")),
                })
            }
        }
    }
    let targets = targets(runs)?;
    let mut p = Fitting {
        space: Space {
            index,
            start: options.start.to_array(),
        },
        targets: &targets,
        evaluations: 0,
    };
    let x0 = p.space.to_x(p.space.start);
    let start_objective = score(&p.residuals(&x0)?);
    let mut best = (x0, start_objective);
    let max = options.max_evaluations;
    let simplex_budget = (max as f64 * SIMPLEX_SHARE) as u32;
    let mut tell = |method: &str, before: f64, best: f64, evaluations: u32| {
        stage(format!(
            "{method}: score {before:.6} -> {best:.6} after {evaluations} replays of the runs"
        ))
    };
    // Restarts from the best point rebuild a simplex that may have collapsed
    // (against a bound, or along a coordinate), until one no longer helps.
    while !p.space.index.is_empty() && p.evaluations < simplex_budget {
        let before = best.1;
        let budget = simplex_budget - p.evaluations;
        best = nelder_mead(&mut p, best, budget)?;
        tell("Nelder-Mead", before, best.1, p.evaluations);
        if before - best.1 <= 1e-12 * before.max(1e-300) {
            break;
        }
    }
    if !p.space.index.is_empty() && p.evaluations < max {
        let before = best.1;
        let budget = max - p.evaluations;
        best = levenberg_marquardt(&mut p, best, budget)?;
        tell("Levenberg-Marquardt", before, best.1, p.evaluations);
    }
    let mut lo_hi = best.0.clone();
    let at_bounds = p
        .space
        .index
        .iter()
        .enumerate()
        .filter(|&(k, _)| {
            // Clamped up and down: a coordinate at a bound stays where it is
            // only one way.
            let v = best.0[k];
            lo_hi[k] = f64::NEG_INFINITY;
            p.clamp(&mut lo_hi);
            let lo = lo_hi[k];
            lo_hi[k] = f64::INFINITY;
            p.clamp(&mut lo_hi);
            let hi = lo_hi[k];
            lo_hi[k] = v;
            (v - lo).abs() <= 1e-9 || (hi - v).abs() <= 1e-9
        })
        .map(|(_, &i)| COEFFICIENT_NAMES[i].to_string())
        .collect();
    Ok(Fit {
        at_bounds,
        coefficients: p.space.coefficients(&best.0),
        fitted: p
            .space
            .index
            .iter()
            .map(|&i| COEFFICIENT_NAMES[i].to_string())
            .collect(),
        runs: runs.iter().map(|r| r.name.clone()).collect(),
        evaluations: p.evaluations,
        start_objective,
        objective: best.1,
    })
}

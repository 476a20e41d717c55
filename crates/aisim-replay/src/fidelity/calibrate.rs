//! Fitting the physics model's coefficients to measured runs: every
//! candidate is judged by replaying the runs, and a bounded Nelder–Mead
//! search (deterministic: fixed start, fixed simplex, no sampling) minimizes
//! the mean squared log-ratio of simulated to measured statistics.

use std::path::Path;

use aisim_core::timing::{PhysicsCoefficients, TimingSpec, COEFFICIENT_NAMES};
use serde::{Deserialize, Serialize};

use super::json_file::read_json;
use super::measured::MeasuredRun;
use super::validate::{compare, replay};
use super::FidelityError;

/// Version of the fitted-coefficients file.
pub const FITTED_VERSION: u32 = 1;

/// Scale coefficients are searched in log space within these factors of 1.
const SCALE_BOUNDS: (f64, f64) = (0.02, 50.0);
/// Overheads (ms) are searched as `ln(ms + OVERHEAD_FLOOR_MS)` up to this many ms,
/// so 0 is reachable and the search moves by factors at any scale.
const OVERHEAD_MAX_MS: f64 = 1000.0;
const OVERHEAD_FLOOR_MS: f64 = 1e-3;
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
    /// a run is tensor-parallel, and `pass_ms` only for MoE models: on a
    /// dense model the weights read is the same every pass, so its scale
    /// and a per-pass constant are the same thing to a replay (only
    /// compute-bound passes, which hide the weights, separate them).
    pub fn for_runs(runs: &[MeasuredRun]) -> CalibrateOptions {
        let tp = runs.iter().any(|r| r.spec.engine.tp_size > 1);
        let moe = runs.iter().any(|r| {
            r.spec
                .timing
                .profile_key()
                .and_then(|k| aisim_core::profile::ComputedProfile::from_key(k).ok())
                .is_some_and(|p| p.model().moe.is_some())
        });
        CalibrateOptions {
            fit: COEFFICIENT_NAMES
                .iter()
                .copied()
                .filter(|n| (tp || *n != "allreduce") && (moe || *n != "pass_ms"))
                .collect(),
            start: PhysicsCoefficients::default(),
            max_evaluations: 600,
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
    /// Mean squared log-ratio of simulated to measured at the start.
    pub start_objective: f64,
    /// The same at the fit.
    pub objective: f64,
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

/// Mean squared log-ratio of simulated to measured over every statistic
/// of every run (the request count left out: timing does not set it).
pub fn objective(runs: &[MeasuredRun], c: PhysicsCoefficients) -> Result<f64, FidelityError> {
    let (mut sum, mut n) = (0.0, 0u32);
    for run in runs {
        let report = replay(run, Some(&physics_timing(run, c)?))?;
        for m in compare(&run.measured, &report) {
            if m.metric == "completed" || m.measured <= 0.0 {
                continue;
            }
            sum += match m.simulated {
                Some(s) if s > 0.0 => (s / m.measured).ln().powi(2),
                _ => MISSING_PENALTY,
            };
            n += 1;
        }
    }
    Ok(if n == 0 { 0.0 } else { sum / n as f64 })
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

    fn clamp(&self, x: &mut [f64]) {
        for (v, &i) in x.iter_mut().zip(&self.index) {
            let (lo, hi) = if Self::is_overhead(i) {
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

    /// First step along each coordinate: a factor 1.5 for scales, 10 for
    /// overheads (whose scale is unknown: 1 µs to a second).
    fn step(&self, k: usize) -> f64 {
        if Self::is_overhead(self.index[k]) {
            10f64.ln()
        } else {
            1.5f64.ln()
        }
    }
}

/// Fits `options.fit` to `runs`.
pub fn calibrate(runs: &[MeasuredRun], options: &CalibrateOptions) -> Result<Fit, FidelityError> {
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
    let space = Space {
        index,
        start: options.start.to_array(),
    };
    let evaluations = std::cell::Cell::new(0u32);
    let mut f = |x: &[f64]| -> Result<f64, FidelityError> {
        evaluations.set(evaluations.get() + 1);
        objective(runs, space.coefficients(x))
    };
    let x0 = space.to_x(space.start);
    let start_objective = f(&x0)?;
    let mut best = (x0, start_objective);
    // Restarts from the best point rebuild a simplex that may have collapsed
    // (against a bound, or along a coordinate), until one no longer helps.
    while !space.index.is_empty() && evaluations.get() < options.max_evaluations {
        let before = best.1;
        let budget = options.max_evaluations - evaluations.get();
        best = nelder_mead(&space, best, budget, &mut f)?;
        if before - best.1 <= 1e-12 * before.max(1e-300) {
            break;
        }
    }
    let evaluations = evaluations.get();
    Ok(Fit {
        coefficients: space.coefficients(&best.0),
        fitted: space
            .index
            .iter()
            .map(|&i| COEFFICIENT_NAMES[i].to_string())
            .collect(),
        runs: runs.iter().map(|r| r.name.clone()).collect(),
        evaluations,
        start_objective,
        objective: best.1,
    })
}

type Point = (Vec<f64>, f64);

/// Bounded Nelder–Mead (reflection 1, expansion 2, contraction ½, shrink ½)
/// from `start`, at most `budget` evaluations.
fn nelder_mead(
    space: &Space,
    start: Point,
    budget: u32,
    f: &mut dyn FnMut(&[f64]) -> Result<f64, FidelityError>,
) -> Result<Point, FidelityError> {
    let d = start.0.len();
    let mut used = 0u32;
    let mut eval = |x: &mut Vec<f64>, used: &mut u32| -> Result<f64, FidelityError> {
        space.clamp(x);
        *used += 1;
        f(x)
    };
    let mut simplex: Vec<Point> = vec![start.clone()];
    for k in 0..d {
        let mut x = start.0.clone();
        x[k] += space.step(k);
        let v = eval(&mut x, &mut used)?;
        simplex.push((x, v));
    }
    while used < budget {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (lo, hi) = (simplex[0].1, simplex[d].1);
        let spread = simplex
            .iter()
            .flat_map(|p| p.0.iter().zip(&simplex[0].0).map(|(a, b)| (a - b).abs()))
            .fold(0.0, f64::max);
        if hi - lo < 1e-12 || spread < 1e-7 {
            break;
        }
        let centroid: Vec<f64> = (0..d)
            .map(|k| simplex[..d].iter().map(|p| p.0[k]).sum::<f64>() / d as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&simplex[d].0)
                .map(|(c, w)| c + t * (c - w))
                .collect()
        };
        let mut r = along(1.0);
        let fr = eval(&mut r, &mut used)?;
        if fr < simplex[0].1 {
            let mut e = along(2.0);
            let fe = eval(&mut e, &mut used)?;
            simplex[d] = if fe < fr { (e, fe) } else { (r, fr) };
        } else if fr < simplex[d - 1].1 {
            simplex[d] = (r, fr);
        } else {
            let t = if fr < simplex[d].1 { 0.5 } else { -0.5 };
            let mut c = along(t);
            let fc = eval(&mut c, &mut used)?;
            if fc < simplex[d].1.min(fr) {
                simplex[d] = (c, fc);
            } else {
                let best = simplex[0].0.clone();
                for p in simplex.iter_mut().skip(1) {
                    let mut x: Vec<f64> =
                        p.0.iter()
                            .zip(&best)
                            .map(|(a, b)| b + 0.5 * (a - b))
                            .collect();
                    let v = eval(&mut x, &mut used)?;
                    *p = (x, v);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(simplex.swap_remove(0))
}

//! Fitting the physics model's coefficients to measured runs: every
//! candidate is judged by replaying the runs, and a bounded Nelder–Mead
//! search then a Levenberg–Marquardt polish (deterministic: fixed start,
//! fixed simplex, no sampling) minimize the mean squared log-ratio of
//! simulated to measured statistics (and per-request latencies, when the
//! runs hold them).

use std::collections::BTreeMap;
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
use aisim_replay::frontend::check_frontend_ms;
use aisim_replay::record::RequestRecord;
use aisim_replay::trace::TraceData;
use aisim_replay::workload::load_trace;

/// Version of the fitted-coefficients file.
pub const FITTED_VERSION: u32 = 1;

/// What calibration can fit: the physics coefficients
/// ([`COEFFICIENT_NAMES`]), then the time a request spends outside the
/// engine (`frontend_ms`, for runs served over HTTP).
pub const FIT_NAMES: [&str; 7] = {
    let c = COEFFICIENT_NAMES;
    [c[0], c[1], c[2], c[3], c[4], c[5], "frontend_ms"]
};
const _: () = assert!(
    COEFFICIENT_NAMES.len() == 6,
    "FIT_NAMES lists each coefficient"
);
/// Index of `frontend_ms` in [`FIT_NAMES`].
const FRONTEND: usize = 6;

/// Scale coefficients are searched in log space within these factors of 1.
const SCALE_BOUNDS: (f64, f64) = (0.02, 50.0);
/// Overheads (ms) are searched as `ln(ms + OVERHEAD_FLOOR_MS)` up to this many ms,
/// so 0 is reachable and the search moves by factors at any scale.
const OVERHEAD_MAX_MS: f64 = 1000.0;
const OVERHEAD_FLOOR_MS: f64 = 0.1;
/// Cost of a statistic the replay cannot give (no request completed).
const MISSING_PENALTY: f64 = 100.0;

/// How far a summary statistic's log-ratio may be off from the model's
/// structure alone (5 %): the width of the data term. Zero-shot, the shared
/// runs' mean E2E and per-token time sit within 5 % on H100 (docs/fidelity.md).
const DATA_WIDTH: f64 = 0.05;
/// Beyond this log-ratio (5 %) a statistic's cost grows linearly, not
/// quadratically (soft-L1): a stage's p99 of a few dozen requests, or a
/// server's warm-up outliers, cannot drag the whole fit.
const ROBUST_SCALE: f64 = 0.05;
/// The width of one request's TTFT or E2E error, relative to the run's
/// mean: the summary's 5 %. Averaged over the run's requests, they weigh as
/// much as its summary; wider, the fit leans on the summary alone and the
/// coefficients that trade against each other on average drift (a fit on
/// the RTX PRO 6000 run's first 150 requests then missed its last 150 by
/// 8.7 % in mean E2E, against 3 % at this width).
const REQUEST_WIDTH: f64 = 0.05;
/// The prior's width of a scale, in log space: a factor 1.5 is one width.
/// The attainable rates the zero-shot model assumes are met to within
/// 0.85–1.25 by the shared kernel profiles (docs/fidelity.md).
pub const PRIOR_SCALE_WIDTH: f64 = 0.405_465_108_108_164_4; // ln 1.5
/// The prior's width of each overhead, ms, in [`FIT_NAMES`]' order from
/// `pass_ms`: 1 ms per pass (a scheduler step's CPU time with CUDA graphs),
/// 0.05 ms per request in a pass, 25 ms outside the engine (the size of
/// its default: a server's front end is known to its order only).
pub const PRIOR_OVERHEAD_WIDTH_MS: [f64; 3] = [1.0, 0.05, 25.0];
/// A scale is fitted when a 10 % change of it moves some run's mean TTFT,
/// TPOT or E2E by at least this share of 10 % (0.05: 0.5 %); below, its
/// term is too small a share of the runs' time for the data to pin it, and
/// it stays where physics put it.
pub const MATERIAL_SHARE: f64 = 0.05;

/// What to fit and how long to search.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// What to fit (names of [`FIT_NAMES`]); the others stay at `start`.
    pub fit: Vec<&'static str>,
    /// Whether `fit` was asked for by name: then every one is fitted,
    /// material or not.
    pub fit_given: bool,
    /// Starting coefficients.
    pub start: PhysicsCoefficients,
    /// Starting time outside the engine, ms (runs served over HTTP); `None`:
    /// the default of where each run was served.
    pub start_frontend_ms: Option<f64>,
    /// Most replays of the whole set of runs.
    pub max_evaluations: u32,
    /// Weight of the priors: 1, the documented widths; 0, none (the search
    /// alone fits the data, as a test of it needs).
    pub prior_weight: f64,
}

impl CalibrateOptions {
    /// The candidates the runs can tell apart: `allreduce` only when a run
    /// is tensor-parallel; `pass_ms` only when a run has per-request
    /// measurements or an MoE model (from the summary alone, on a dense
    /// model the weights read is the same every pass, so its scale and a
    /// per-pass constant are the same thing to the decode passes; each
    /// request's TTFT, set mostly by prompt passes, and its E2E, mostly by
    /// decode passes, separate them); `frontend_ms` only when a run was
    /// served over HTTP. Of these, [`calibrate`] fits the scales that are a
    /// material share of the runs' time.
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
        let http = runs.iter().any(|r| !r.served.is_in_process());
        CalibrateOptions {
            fit: FIT_NAMES
                .iter()
                .copied()
                .filter(|n| match *n {
                    "allreduce" => tp,
                    "pass_ms" => moe || per_request,
                    "frontend_ms" => http,
                    _ => true,
                })
                .collect(),
            fit_given: false,
            start: PhysicsCoefficients::default(),
            start_frontend_ms: None,
            max_evaluations: 200,
            prior_weight: 1.0,
        }
    }
}

/// A candidate left at its start, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Held {
    /// Its name ([`FIT_NAMES`]).
    pub name: String,
    /// Why it was not fitted.
    pub reason: String,
}

/// The outcome of a fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The fitted coefficients.
    pub coefficients: PhysicsCoefficients,
    /// The time outside the engine, ms, of the runs served over HTTP
    /// (absent when none was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend_ms: Option<f64>,
    /// Names of what was fitted.
    pub fitted: Vec<String>,
    /// Candidates left at their start, each with its reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Held>,
    /// Per scale candidate, its share of the runs' time: the largest
    /// relative change of a run's mean TTFT, TPOT or E2E per relative change
    /// of the scale, at the start (see [`MATERIAL_SHARE`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shares: BTreeMap<String, f64>,
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
    /// The time outside the engine, ms, fitted on runs served over HTTP:
    /// replays of a server with that front end use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend_ms: Option<f64>,
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
        if let Some(ms) = f.frontend_ms {
            check_frontend_ms(ms)
                .map_err(|reason| FidelityError::field(path, "frontend_ms", reason))?;
        }
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
            fitted_on: Vec::new(),
        }),
        None => Err(FidelityError::Field {
            path: format!("run `{}`", run.name).into(),
            field: "spec.timing".into(),
            reason: "calibration fits the physics model: give the run a `physics` timing with a profile (HARDWARE/MODEL)".into(),
        }),
    }
}

/// `runs` with the physics timing of their profiles under `c`, and those
/// served over HTTP with `frontend_ms` outside the engine (else their
/// default).
pub fn runs_at(
    runs: &[MeasuredRun],
    c: PhysicsCoefficients,
    frontend_ms: Option<f64>,
) -> Result<Vec<MeasuredRun>, FidelityError> {
    runs.iter()
        .map(|r| {
            let mut r = r.clone();
            r.spec.timing = physics_timing(&r, c)?;
            if let Some(ms) = frontend_ms {
                r.set_frontend_ms(ms);
            }
            Ok(r)
        })
        .collect()
}

/// A run made ready for fitting, once for every evaluation: its trace, read,
/// and its per-request measurements, when its `requests` file has them in
/// the generic shape, with their mean TTFT and E2E (ms).
struct Target {
    run: MeasuredRun,
    trace: Option<Arc<TraceData>>,
    requests: Option<(MeasuredRequests, f64, f64)>,
}

fn targets(runs: &[MeasuredRun]) -> Result<Vec<Target>, FidelityError> {
    runs.iter()
        .map(|run| {
            let trace = load_trace(&run.spec.workload)?.map(Arc::new);
            let requests = run
                .requests
                .as_deref()
                .map(MeasuredRequests::read)
                .transpose()?
                .map(|m| {
                    let done = || m.requests.iter().filter(|r| r.completed);
                    let n = done().count().max(1) as f64;
                    let mean_ttft = done().map(|r| r.ttft_ms).sum::<f64>() / n;
                    let mean_e2e = done().map(|r| r.e2e_ms).sum::<f64>() / n;
                    (m, mean_ttft, mean_e2e)
                });
            Ok(Target {
                run: run.clone(),
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

/// The residual whose square is the soft-L1 cost of `e` at `scale`:
/// `e²` for small `e`, `2·scale·|e|` for large.
fn robust(e: f64, scale: f64) -> f64 {
    let z = e / scale;
    e.signum() * scale * (2.0 * ((1.0 + z * z).sqrt() - 1.0)).sqrt()
}

/// The point the fit is at: every candidate's value ([`FIT_NAMES`]' order).
type Values = [f64; 7];

fn coefficients_of(v: &Values) -> PhysicsCoefficients {
    PhysicsCoefficients::from_array([v[0], v[1], v[2], v[3], v[4], v[5]])
}

/// One run replayed at `v`: its summary compared, and its records when it
/// has per-request measurements.
fn replay_at(
    t: &mut Target,
    v: &Values,
    records: bool,
) -> Result<aisim_replay::ReplayOutput, FidelityError> {
    t.run.set_frontend_ms(v[FRONTEND]);
    let timing = physics_timing(&t.run, coefficients_of(v))?;
    replay_output(&t.run, Some(&timing), records, t.trace.clone())
}

/// The summary's log-ratios of one replay (the request count left out:
/// timing does not set it), with their metric and statistic.
fn summary_errors(run: &MeasuredRun, report: &aisim_replay::ReplayReport) -> Vec<(String, f64)> {
    compare(&run.measured, report)
        .into_iter()
        .filter(|m| m.metric != "completed" && m.measured > 0.0)
        .map(|m| {
            (
                format!("{} {}", m.metric, m.stat),
                log_ratio(m.measured, m.simulated),
            )
        })
        .collect()
}

/// The residuals whose sum of squares is the score (docs/fidelity.md,
/// "How calibration fits"). Per run: the log-ratio of every summary
/// statistic, soft-L1 beyond [`ROBUST_SCALE`], over [`DATA_WIDTH`], weighted
/// so the run's statistics average; for runs with per-request
/// measurements, every request's TTFT and E2E error relative to the run's
/// mean, over [`REQUEST_WIDTH`], averaged the same way. Then the priors:
/// each fitted scale's log over [`PRIOR_SCALE_WIDTH`], each fitted
/// overhead's distance from its default over its width. A run counts as
/// much as another; more runs outweigh the priors more.
fn residuals(targets: &mut [Target], v: &Values, prior: &Prior) -> Result<Vec<f64>, FidelityError> {
    let mut out = Vec::new();
    for t in targets.iter_mut() {
        let out_run = replay_at(t, v, t.requests.is_some())?;
        let summary = summary_errors(&t.run, &out_run.report);
        let w = 1.0 / (summary.len().max(1) as f64).sqrt();
        out.extend(
            summary
                .iter()
                .map(|(_, e)| w * robust(*e, ROBUST_SCALE) / DATA_WIDTH),
        );
        if let Some((measured, mean_ttft, mean_e2e)) = &t.requests {
            let (mean_ttft, mean_e2e) = (*mean_ttft, *mean_e2e);
            let simulated = measured.simulated(&out_run.records)?;
            let mut requests = Vec::new();
            // A request that did not complete was offered, not measured.
            for (m, s) in measured.requests.iter().zip(simulated) {
                if !m.completed {
                    continue;
                }
                for (mv, sv, scale) in [
                    (m.ttft_ms, s.map(|s| s.0), mean_ttft),
                    (m.e2e_ms, s.map(|s| s.1), mean_e2e),
                ] {
                    if scale > 0.0 {
                        requests.push(sv.map_or(MISSING_PENALTY.sqrt(), |sv| (sv - mv) / scale));
                    }
                }
            }
            let w = 1.0 / (requests.len().max(1) as f64).sqrt();
            out.extend(requests.iter().map(|e| w * e / REQUEST_WIDTH));
        }
    }
    out.extend(prior.residuals(v));
    Ok(out)
}

/// Where each candidate's prior is centred and how wide it is.
struct Prior {
    /// Indices (into [`FIT_NAMES`]) of the fitted candidates.
    index: Vec<usize>,
    /// The centres: 1 for scales, the global defaults for overheads.
    centre: Values,
    /// See [`CalibrateOptions::prior_weight`].
    weight: f64,
}

impl Prior {
    fn residuals(&self, v: &Values) -> Vec<f64> {
        if self.weight == 0.0 {
            return Vec::new();
        }
        let w = self.weight.sqrt();
        self.index
            .iter()
            .map(|&i| {
                w * if is_overhead(i) {
                    (v[i] - self.centre[i]) / PRIOR_OVERHEAD_WIDTH_MS[i - 4]
                } else {
                    v[i].max(f64::MIN_POSITIVE).ln() / PRIOR_SCALE_WIDTH
                }
            })
            .collect()
    }
}

fn is_overhead(i: usize) -> bool {
    FIT_NAMES[i].ends_with("_ms")
}

/// Maps search coordinates to values and back, in log space (shifted for
/// the overheads), clamped to the bounds.
struct Space {
    index: Vec<usize>,
    start: Values,
}

impl Space {
    fn to_x(&self, c: Values) -> Vec<f64> {
        self.index
            .iter()
            .map(|&i| {
                if is_overhead(i) {
                    (c[i].max(0.0) + OVERHEAD_FLOOR_MS).ln()
                } else {
                    c[i].max(SCALE_BOUNDS.0).ln()
                }
            })
            .collect()
    }

    fn values(&self, x: &[f64]) -> Values {
        let mut a = self.start;
        for (v, &i) in x.iter().zip(&self.index) {
            a[i] = if is_overhead(i) {
                // exp(ln 0.1) − 0.1 is 1e-17, not 0: snap rounding to 0.
                let ms = v.exp() - OVERHEAD_FLOOR_MS;
                if ms < 1e-9 {
                    0.0
                } else {
                    ms
                }
            } else {
                v.exp()
            };
        }
        a
    }
}

/// The fit as a minimization problem over [`Space`]'s coordinates.
struct Fitting<'t, 'o> {
    space: Space,
    prior: Prior,
    targets: &'t mut [Target],
    evaluations: u32,
    /// Most evaluations the search may make.
    budget: u32,
    /// Told of each evaluation and stage.
    observe: &'o mut dyn FnMut(CalibrationProgress),
}

/// What a calibration tells its observer as it goes (the search takes
/// seconds; a terminal shows it going).
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationProgress {
    /// A stage of the search ended: what it did, as a line of text.
    Stage(String),
    /// `done` replays of the set of runs so far, of at most `budget` (the
    /// search may stop before, when it no longer improves).
    Replays {
        /// Replays made.
        done: u32,
        /// Most replays the search may make.
        budget: u32,
    },
}

impl Problem for Fitting<'_, '_> {
    fn clamp(&self, x: &mut [f64]) {
        for (v, &i) in x.iter_mut().zip(&self.space.index) {
            let (lo, hi) = if is_overhead(i) {
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
        if is_overhead(self.space.index[k]) {
            10f64.ln()
        } else {
            1.5f64.ln()
        }
    }

    fn residuals(&mut self, x: &[f64]) -> Result<Vec<f64>, FidelityError> {
        self.evaluations += 1;
        let v = self.space.values(x);
        let out = residuals(self.targets, &v, &self.prior);
        (self.observe)(CalibrationProgress::Replays {
            done: self.evaluations,
            budget: self.budget.max(self.evaluations),
        });
        out
    }
}

/// Share of the evaluations Nelder–Mead may use before the polish.
const SIMPLEX_SHARE: f64 = 0.4;

/// The mean TTFT, TPOT and E2E log-ratios of every run at `v`.
fn mean_errors(targets: &mut [Target], v: &Values) -> Result<Vec<f64>, FidelityError> {
    let mut out = Vec::new();
    for t in targets.iter_mut() {
        let report = replay_at(t, v, false)?.report;
        for (name, e) in summary_errors(&t.run, &report) {
            if ["ttft_ms mean", "tpot_ms mean", "e2e_ms mean"].contains(&name.as_str()) {
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// Each scale candidate's share of the runs' time at `v` (see
/// [`MATERIAL_SHARE`]): a 10 % change of it, and the largest relative
/// change of a run's mean TTFT, TPOT or E2E that follows, over 10 %.
fn shares(
    targets: &mut [Target],
    v: &Values,
    candidates: &[usize],
) -> Result<BTreeMap<String, f64>, FidelityError> {
    let base = mean_errors(targets, v)?;
    let step = 1.1f64.ln();
    let mut out = BTreeMap::new();
    for &i in candidates.iter().filter(|&&i| !is_overhead(i)) {
        let mut moved = *v;
        moved[i] *= 1.1;
        let after = mean_errors(targets, &moved)?;
        let share = base
            .iter()
            .zip(&after)
            .map(|(a, b)| (b - a).abs() / step)
            .fold(0.0, f64::max);
        out.insert(FIT_NAMES[i].to_string(), share);
    }
    Ok(out)
}

/// The capacity guard: under `v` every run's simulated server must carry
/// the load its real one carried: complete as many requests, and finish
/// within twice the measured p99 E2E (else four times the mean) of the
/// last arrival, not after a backlog the real server never had.
fn check_capacity(targets: &mut [Target], v: &Values) -> Result<(), FidelityError> {
    for t in targets.iter_mut() {
        let out = replay_at(t, v, true)?;
        let cohort = || out.records.iter().filter(|r| r.in_cohort);
        let done = cohort()
            .filter(|r| r.outcome == aisim_replay::collector::Outcome::Completed)
            .count() as u64;
        let name = &t.run.name;
        if let Some(want) = t.run.measured.completed {
            if done < want {
                return Err(FidelityError::Overloaded {
                    reason: format!(
                        "under it the simulated server completes {done} of run `{name}`'s requests, the real one {want}"
                    ),
                });
            }
        }
        let e2e = t.run.measured.e2e_ms;
        let allowed_ms = match (e2e.and_then(|s| s.p99), e2e.and_then(|s| s.mean)) {
            (Some(p99), _) => 2.0 * p99,
            (None, Some(mean)) => 4.0 * mean,
            (None, None) => continue,
        };
        let last_arrival = cohort().map(|r| r.planned_ns).max().unwrap_or(0);
        let last_end = cohort()
            .filter_map(|r| RequestRecord::at(r.terminal_ns))
            .max()
            .unwrap_or(0);
        let tail_ms = last_end.saturating_sub(last_arrival) as f64 * 1e-6;
        if tail_ms > allowed_ms {
            return Err(FidelityError::Overloaded {
                reason: format!(
                    "under it the simulated server of run `{name}` ends {tail_ms:.0} ms after the last arrival, beyond the {allowed_ms:.0} ms the measured E2E allows: it cannot carry the load the real server carried"
                ),
            });
        }
    }
    Ok(())
}

/// Fits `options.fit` to `runs`.
pub fn calibrate(runs: &[MeasuredRun], options: &CalibrateOptions) -> Result<Fit, FidelityError> {
    calibrate_observed(runs, options, &mut |_| {})
}

/// [`calibrate`], telling `observe` of each replay of the runs and what
/// each stage of the search did (the search takes seconds, a terminal
/// shows it going).
pub fn calibrate_observed(
    runs: &[MeasuredRun],
    options: &CalibrateOptions,
    observe: &mut dyn FnMut(CalibrationProgress),
) -> Result<Fit, FidelityError> {
    let mut candidates = Vec::new();
    for name in &options.fit {
        match FIT_NAMES.iter().position(|n| n == name) {
            Some(i) if !candidates.contains(&i) => candidates.push(i),
            Some(_) => {}
            None => {
                return Err(FidelityError::Field {
                    path: "--fit".into(),
                    field: name.to_string(),
                    reason: format!("not a coefficient; use {}", FIT_NAMES.join(", ")),
                })
            }
        }
    }
    let served = runs.iter().find(|r| !r.served.is_in_process());
    let http = served.is_some();
    // The prior's centre is the default of where the runs were served; the
    // start, what their replays use (their specs', else that default).
    let default_frontend = served.map_or(0.0, |r| r.served.default_ms());
    let own_frontend = served.and_then(MeasuredRun::frontend_ms).unwrap_or(0.0);
    let mut start: Values = [0.0; 7];
    start[..6].copy_from_slice(&options.start.to_array());
    start[FRONTEND] = options.start_frontend_ms.unwrap_or(own_frontend);
    let mut centre: Values = [0.0; 7];
    centre[..6].copy_from_slice(&PhysicsCoefficients::default().to_array());
    centre[FRONTEND] = default_frontend;
    let mut held = Vec::new();
    if !http {
        candidates.retain(|&i| i != FRONTEND);
    }
    let mut targets = targets(runs)?;
    let shares = shares(&mut targets, &start, &candidates)?;
    if !options.fit_given {
        candidates.retain(|&i| match shares.get(FIT_NAMES[i]) {
            Some(&share) if share < MATERIAL_SHARE => {
                held.push(Held {
                    name: FIT_NAMES[i].into(),
                    reason: format!(
                        "a share of {share:.3} of the runs' time, under {MATERIAL_SHARE}: the data cannot pin it"
                    ),
                });
                false
            }
            _ => true,
        });
    }
    for (i, name) in FIT_NAMES.iter().enumerate() {
        if !candidates.contains(&i) && !held.iter().any(|h| h.name == *name) {
            held.push(Held {
                name: name.to_string(),
                reason: if i == FRONTEND && !http {
                    "no run was served over HTTP".into()
                } else if options.fit_given {
                    "not named by --fit".into()
                } else {
                    "the runs cannot tell it apart (docs/fidelity.md)".into()
                },
            });
        }
    }
    let mut p = Fitting {
        space: Space {
            index: candidates.clone(),
            start,
        },
        prior: Prior {
            index: candidates,
            centre,
            weight: options.prior_weight,
        },
        targets: &mut targets,
        evaluations: 0,
        budget: options.max_evaluations,
        observe,
    };
    let x0 = p.space.to_x(p.space.start);
    let start_objective = score(&p.residuals(&x0)?);
    let mut best = (x0, start_objective);
    let max = options.max_evaluations;
    let simplex_budget = (max as f64 * SIMPLEX_SHARE) as u32;
    let tell = |p: &mut Fitting, method: &str, before: f64, best: f64| {
        (p.observe)(CalibrationProgress::Stage(format!(
            "{method}: score {before:.6} -> {best:.6} after {} replays of the runs",
            p.evaluations
        )))
    };
    // Restarts from the best point rebuild a simplex that may have collapsed
    // (against a bound, or along a coordinate), until one no longer helps.
    while !p.space.index.is_empty() && p.evaluations < simplex_budget {
        let before = best.1;
        let budget = simplex_budget - p.evaluations;
        best = nelder_mead(&mut p, best, budget)?;
        tell(&mut p, "Nelder-Mead", before, best.1);
        if before - best.1 <= 1e-12 * before.max(1e-300) {
            break;
        }
    }
    if !p.space.index.is_empty() && p.evaluations < max {
        let before = best.1;
        let budget = max - p.evaluations;
        best = levenberg_marquardt(&mut p, best, budget)?;
        tell(&mut p, "Levenberg-Marquardt", before, best.1);
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
        .map(|(_, &i)| i)
        .collect::<Vec<_>>();
    let values = p.space.values(&best.0);
    // An overhead at 0, its default, is where the prior holds it, not a
    // value the search was stopped at.
    let at_bounds = at_bounds
        .into_iter()
        .filter(|&i| values[i] != p.prior.centre[i])
        .map(|i| FIT_NAMES[i].to_string())
        .collect();
    let fitted = p
        .space
        .index
        .iter()
        .map(|&i| FIT_NAMES[i].to_string())
        .collect();
    let evaluations = p.evaluations;
    let observe = p.observe;
    check_capacity(&mut targets, &values)?;
    observe(CalibrationProgress::Stage(
        "capacity guard: every run's load is carried".into(),
    ));
    Ok(Fit {
        at_bounds,
        coefficients: coefficients_of(&values),
        frontend_ms: http.then_some(values[FRONTEND]),
        fitted,
        held,
        shares,
        runs: runs.iter().map(|r| r.name.clone()).collect(),
        evaluations,
        start_objective,
        objective: best.1,
    })
}

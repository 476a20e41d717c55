//! Measured runs, validation and calibration on fixtures.

#[path = "../../aisim-replay/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use aisim_core::timing::{PhysicsCoefficients, TimingSpec, COEFFICIENT_NAMES};
use aisim_lab::fidelity::calibrate::{calibrate, CalibrateOptions, MATERIAL_SHARE};
use aisim_lab::fidelity::measured::{MeasuredRun, Served, MEASURED_VERSION};
use aisim_lab::fidelity::timed_request::{requests_text, timed_requests};
use aisim_lab::fidelity::validate::{compare, measured_from_report, replay, validate};
use aisim_lab::fidelity::FidelityError;
use aisim_replay::frontend::FrontendSpec;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, WorkloadSpec};
use aisim_replay::ReplaySpec;
use common::*;

fn physics(c: PhysicsCoefficients) -> TimingSpec {
    TimingSpec::Physics {
        profile: "h100/llama-3.1-8b".into(),
        coefficients: c,
        fitted_on: Vec::new(),
    }
}

fn dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-fidelity-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A measured run whose measurement is `spec`'s own replay (its summary
/// and, in the generic per-request shape, every request), written to and
/// read back from `dir`.
fn self_measured(spec: ReplaySpec, dir: &Path, name: &str) -> MeasuredRun {
    let out = run(spec.clone());
    let requests = dir.join(format!("{name}.requests.jsonl"));
    std::fs::write(&requests, requests_text(&timed_requests(&out.records))).unwrap();
    let run = MeasuredRun {
        version: MEASURED_VERSION,
        name: name.into(),
        measured: measured_from_report(&out.report),
        spec,
        requests: Some(requests),
        served: Default::default(),
        origin: None,
    };
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, run.to_json()).unwrap();
    MeasuredRun::from_file(&path).unwrap()
}

#[test]
fn a_run_measured_by_its_own_replay_validates_with_zero_error() {
    let d = dir("self");
    let mut spec = trace_spec(fixture("traces/mooncake_small.jsonl"), 2, 1.0, 1.0);
    spec.timing = physics(PhysicsCoefficients::default());
    let report = run(spec.clone()).report;
    let exact = compare(&measured_from_report(&report), &report);
    assert_eq!(exact.len(), 4 * 4 + 2, "every statistic is compared");
    assert!(exact.iter().all(|m| m.error_pct == Some(0.0)), "{exact:?}");
    // Through the file: serde_json's default float parser may miss the last
    // bit of a decimal, so "0 %" is 0 to 1e-9 % there.
    let run = self_measured(spec, &d, "self");
    let v = validate(&[run], None).unwrap();
    let metrics = &v.runs[0].metrics;
    assert_eq!(metrics.len(), 4 * 4 + 2);
    for m in metrics {
        assert!(m.error_pct.unwrap().abs() < 1e-9, "{m:?}");
    }
    assert!(v.mape_pct["overall"] < 1e-9);
    std::fs::remove_dir_all(&d).ok();
}

/// Mixed lengths (prompts 100 to 8000 tokens, 10 to 300 out),
/// tensor-parallel over PCIe (so the all-reduce is a sizeable term), at
/// evenly spaced arrivals `gap_s` apart. Every scheduling decision of these
/// two loads depends on token counts only, not on when passes end, so the
/// score is smooth in the coefficients: 20 s apart every request runs alone
/// (TTFT: the compute slope and its attention curvature, the all-reduce
/// slope where short prompts are memory-bound, the per-pass constant; TPOT:
/// the weights and the KV slope), and 1 µs apart they all arrive during the
/// first pass and batch (the per-request constant, passes where memory
/// hides compute).
fn recovery_spec(c: PhysicsCoefficients, gap_s: f64) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 60,
            input: LengthSpec::Uniform {
                min: 100,
                max: 8000,
            },
            output: LengthSpec::Uniform { min: 10, max: 300 },
            arrival: ArrivalSpec::Constant { rate: 1.0 / gap_s },
            ..SyntheticSpec::default()
        }),
        timing: TimingSpec::Physics {
            profile: RECOVERY_PROFILE.into(),
            coefficients: c,
            fitted_on: Vec::new(),
        },
        ..ReplaySpec::default()
    }
}

const RECOVERY_PROFILE: &str = "rtx4090/llama-3.1-8b/tp2";

#[test]
fn calibration_recovers_known_coefficients() {
    let chosen = PhysicsCoefficients {
        compute: 1.6,
        weights: 1.3,
        kv: 2.0,
        allreduce: 1.5,
        pass_ms: 4.0,
        request_ms: 0.3,
    };
    let d = dir("recover");
    let runs: Vec<MeasuredRun> = [("alone", 20.0), ("burst", 1e-6)]
        .iter()
        .map(|&(name, gap)| {
            let mut r = self_measured(recovery_spec(chosen, gap), &d, name);
            // Replayed from the defaults, then fitted back.
            r.spec.timing = TimingSpec::Physics {
                profile: RECOVERY_PROFILE.into(),
                coefficients: PhysicsCoefficients::default(),
                fitted_on: Vec::new(),
            };
            r
        })
        .collect();
    let mut options = CalibrateOptions::for_runs(&runs);
    assert_eq!(
        options.fit, COEFFICIENT_NAMES,
        "tensor-parallel runs with per-request measurements, in process, exercise every engine term"
    );
    // The search alone: without priors, every coefficient, material or not.
    options.prior_weight = 0.0;
    options.fit_given = true;
    options.max_evaluations = 1000;
    let fit = calibrate(&runs, &options).unwrap();
    let got = fit.coefficients.to_array();
    for (i, (g, w)) in got.iter().zip(chosen.to_array()).enumerate() {
        assert!(
            (g - w).abs() <= 0.02 * w,
            "{}: fitted {g}, chosen {w} ({fit:?})",
            COEFFICIENT_NAMES[i]
        );
    }
    assert!(fit.objective < 1e-6 * fit.start_objective, "{fit:?}");
    let again = calibrate(&runs, &options).unwrap();
    assert_eq!(again, fit, "the same fit on a second run");
    std::fs::remove_dir_all(&d).ok();
}

fn write_run(d: &Path, name: &str, json: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, json).unwrap();
    p
}

#[test]
fn bad_measured_runs_name_the_field() {
    let d = dir("bad");
    let trace = fixture("traces/mooncake_small.jsonl");
    let spec = format!(
        r#"{{"workload": {{"kind": "trace", "path": "{}"}}}}"#,
        trace.display()
    );
    let cases = [
        (r#"{"version": 1, "measured": {}}"#.to_string(), "`spec`"),
        (format!(r#"{{"version": 1, "spec": {spec}, "measured": {{"ttfb_ms": {{"mean": 1}}}}}}"#), "`measured.ttfb_ms`"),
        (format!(r#"{{"version": 1, "spec": {spec}, "measured": {{"ttft_ms": {{"p95": 1}}}}}}"#), "`measured.ttft_ms.p95`"),
        (format!(r#"{{"version": 1, "spec": {spec}, "measured": {{"e2e_ms": {{"mean": -3}}}}}}"#), "`measured.e2e_ms.mean`"),
        (format!(r#"{{"version": 1, "spec": {spec}, "measured": {{"completed": 2.5}}}}"#), "`measured.completed`"),
        (format!(r#"{{"version": 2, "spec": {spec}, "measured": {{}}}}"#), "`version`"),
        (format!(r#"{{"version": 1, "spec": {spec}}}"#), "`measured`"),
        (format!(r#"{{"version": 1, "spec": {spec}, "measured": {{}}, "extra": 1}}"#), "`extra`"),
        (r#"{"version": 1, "spec": {"workload": {"kind": "demo"}, "topology": {"kind": "aggregated", "workers": 0}}, "measured": {}}"#.to_string(), "`spec.topology.workers`"),
        (format!(r#"{{"version": 1, "spec": {spec}, "measured": {{}}, "requests": "nope.jsonl"}}"#), "`requests`"),
    ];
    for (i, (json, field)) in cases.iter().enumerate() {
        let p = write_run(&d, &format!("bad{i}.json"), json);
        let e = MeasuredRun::from_file(&p).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(field) && text.contains(&format!("bad{i}.json")),
            "{text}"
        );
        assert!(!e.is_internal());
    }
    // A trace that is not the measured workload: counts differ.
    let p = write_run(
        &d,
        "count.json",
        &format!(r#"{{"version": 1, "spec": {spec}, "measured": {{"completed": 7}}}}"#),
    );
    let run = MeasuredRun::from_file(&p).unwrap();
    let e = replay(&run, None).unwrap_err().to_string();
    assert!(
        e.contains("measured.completed") && e.contains("7 requests measured"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_per_request_file_that_is_not_the_runs_requests_is_refused_naming_line_and_field() {
    let d = dir("bad-requests");
    let spec = recovery_spec(PhysicsCoefficients::default(), 20.0);
    let run = self_measured(spec, &d, "run");
    let path = run.requests.clone().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let options = CalibrateOptions {
        max_evaluations: 1,
        ..CalibrateOptions::for_runs(std::slice::from_ref(&run))
    };
    // Line 3's prompt length changed: named with its line and field.
    let mut rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let was = rows[2]["input_tokens"].as_u64().unwrap();
    rows[2]["input_tokens"] = (was + 1).into();
    let edited: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, &edited).unwrap();
    let e = calibrate(std::slice::from_ref(&run), &options).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("run.requests.jsonl")
            && msg.contains("line 3: input_tokens")
            && msg.contains(&format!("{}", was + 1)),
        "{msg}"
    );
    assert!(!e.is_internal());
    // A request left out: the counts differ.
    let short: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, short).unwrap();
    let msg = calibrate(std::slice::from_ref(&run), &options)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("59 measured requests") && msg.contains("has 60"),
        "{msg}"
    );
    std::fs::remove_dir_all(&d).ok();
}

/// A summary-only measured run (as an HTTP client's files give): `spec`
/// replayed under `truth`, its summary as the measurement, then set to be
/// replayed from `spec`'s own timing.
fn summary_measured(
    spec: ReplaySpec,
    truth: PhysicsCoefficients,
    dir: &Path,
    name: &str,
    served: Served,
) -> MeasuredRun {
    let mut measured_spec = spec.clone();
    if let TimingSpec::Physics { coefficients, .. } = &mut measured_spec.timing {
        *coefficients = truth;
    }
    let out = run(measured_spec);
    let run = MeasuredRun {
        version: MEASURED_VERSION,
        name: name.into(),
        measured: measured_from_report(&out.report),
        spec,
        requests: None,
        served,
        origin: None,
    };
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, run.to_json()).unwrap();
    MeasuredRun::from_file(&path).unwrap()
}

/// 200 requests of mixed lengths on one H100 (TP 1), arriving at `rate`.
fn h100_spec(rate: f64) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 200,
            input: LengthSpec::Uniform {
                min: 200,
                max: 3000,
            },
            output: LengthSpec::Uniform { min: 20, max: 300 },
            arrival: ArrivalSpec::Constant { rate },
            ..SyntheticSpec::default()
        }),
        timing: physics(PhysicsCoefficients::default()),
        ..ReplaySpec::default()
    }
}

#[test]
fn the_priors_hold_a_term_the_runs_cannot_see_and_let_the_data_move_the_rest() {
    let d = dir("priors");
    let truth = PhysicsCoefficients {
        weights: 1.2,
        ..PhysicsCoefficients::default()
    };
    let run = summary_measured(h100_spec(4.0), truth, &d, "tp1", Served::InProcess);
    let options = CalibrateOptions {
        fit: vec!["weights", "allreduce"],
        fit_given: true,
        ..CalibrateOptions::for_runs(std::slice::from_ref(&run))
    };
    let fit = calibrate(std::slice::from_ref(&run), &options).unwrap();
    let c = fit.coefficients;
    // One GPU has no all-reduce: the data are flat in it, the prior holds it.
    assert!((c.allreduce - 1.0).abs() < 0.02, "{fit:?}");
    // The weights' misfit outweighs the prior most of the way to the truth.
    assert!(c.weights > 1.1 && c.weights <= 1.2 + 1e-6, "{fit:?}");
    // Without the priors the search goes all the way.
    let free = calibrate(
        std::slice::from_ref(&run),
        &CalibrateOptions {
            prior_weight: 0.0,
            ..options
        },
    )
    .unwrap();
    assert!(
        (free.coefficients.weights - 1.2).abs() < 0.01,
        "{:?}",
        free.coefficients
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn only_material_scales_are_fitted_and_the_held_ones_say_why() {
    let d = dir("material");
    let run = summary_measured(
        h100_spec(4.0),
        PhysicsCoefficients::default(),
        &d,
        "run",
        Served::InProcess,
    );
    let options = CalibrateOptions::for_runs(std::slice::from_ref(&run));
    assert!(!options.fit.contains(&"allreduce") && !options.fit.contains(&"frontend_ms"));
    let fit = calibrate(std::slice::from_ref(&run), &options).unwrap();
    assert_eq!(
        fit.shares.keys().collect::<Vec<_>>(),
        ["compute", "kv", "weights"],
        "a share per candidate scale"
    );
    for (name, share) in &fit.shares {
        let fitted = fit.fitted.contains(name);
        let held = fit.held.iter().find(|h| &h.name == name);
        assert_eq!(fitted, *share >= MATERIAL_SHARE, "{name}: {fit:?}");
        if !fitted {
            assert!(held.unwrap().reason.contains("share of"), "{fit:?}");
        }
    }
    // Decode passes of an 8B model are weight reads: a material share.
    assert!(fit.shares["weights"] > 0.3, "{fit:?}");
    let why = |n: &str| {
        fit.held
            .iter()
            .find(|h| h.name == n)
            .unwrap()
            .reason
            .clone()
    };
    assert!(why("frontend_ms").contains("HTTP"), "{fit:?}");
    assert!(why("allreduce").contains("cannot tell"), "{fit:?}");
    // Measured by its own model, nothing moves.
    assert_eq!(fit.coefficients, PhysicsCoefficients::default(), "{fit:?}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_fit_under_which_the_server_cannot_carry_its_runs_load_is_refused() {
    let d = dir("guard");
    let run = summary_measured(
        h100_spec(6.0),
        PhysicsCoefficients::default(),
        &d,
        "busy",
        Served::InProcess,
    );
    // A start 20 times too slow, and only a scale the runs barely see to
    // fit: the simulated server cannot keep up with 6 requests a second.
    let options = CalibrateOptions {
        fit: vec!["kv"],
        fit_given: true,
        start: PhysicsCoefficients {
            compute: 20.0,
            weights: 20.0,
            ..PhysicsCoefficients::default()
        },
        max_evaluations: 10,
        ..CalibrateOptions::for_runs(std::slice::from_ref(&run))
    };
    let e = calibrate(std::slice::from_ref(&run), &options).unwrap_err();
    assert!(matches!(e, FidelityError::Overloaded { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("refused") && msg.contains("busy") && msg.contains("after the last arrival"),
        "{msg}"
    );
    assert!(!e.is_internal());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_time_outside_the_engine_is_fitted_on_runs_served_over_http() {
    let d = dir("frontend");
    let mut measured = h100_spec(4.0);
    measured.frontend = FrontendSpec {
        served: Served::HttpStreaming,
        request_ms: Some(40.0),
    };
    let mut run = summary_measured(
        measured,
        PhysicsCoefficients::default(),
        &d,
        "http",
        Served::HttpStreaming,
    );
    // Replayed with the default time outside the engine, then fitted.
    run.spec.frontend = FrontendSpec::default();
    let zero = validate(std::slice::from_ref(&run), None).unwrap();
    let ttft = |v: &aisim_lab::fidelity::validate::ValidationReport| {
        v.runs[0]
            .metrics
            .iter()
            .find(|m| m.metric == "ttft_ms" && m.stat == "mean")
            .unwrap()
            .error_pct
            .unwrap()
    };
    assert!(ttft(&zero) < -5.0, "25 ms of the 40 only: {}", ttft(&zero));
    let options = CalibrateOptions::for_runs(std::slice::from_ref(&run));
    assert!(options.fit.contains(&"frontend_ms"));
    let fit = calibrate(std::slice::from_ref(&run), &options).unwrap();
    let ms = fit.frontend_ms.unwrap();
    assert!(
        ms > 33.0 && ms < 41.0,
        "most of the way from 25 to 40: {fit:?}"
    );
    let c = fit.coefficients;
    assert!(c.compute < 1.15 && c.compute > 0.9, "{fit:?}");
    assert!(fit.fitted.iter().any(|f| f == "frontend_ms"));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn holdout_and_cross_validation_report_errors_on_runs_not_fitted() {
    use aisim_lab::jobs::fidelity::{calibrate as calibrate_job, CalibrateRequest};
    let d = dir("holdout");
    let truth = PhysicsCoefficients {
        weights: 1.3,
        ..PhysicsCoefficients::default()
    };
    let light = summary_measured(h100_spec(2.0), truth, &d, "light", Served::InProcess);
    let heavy = summary_measured(h100_spec(6.0), truth, &d, "heavy", Served::InProcess);
    let _ = (light, heavy);
    let request = CalibrateRequest {
        version: Default::default(),
        runs: vec![d.join("light.json")],
        fit: None,
        timing: None,
        max_evaluations: None,
        holdout: vec![d.join("heavy.json")],
        cross_validate: false,
    };
    let report = calibrate_job(&request).unwrap().report;
    let h = report.holdout.as_ref().unwrap();
    assert_eq!(h.calibrated.runs[0].name, "heavy");
    let overall = |v: &aisim_lab::fidelity::validate::RunValidation| v.mape_pct["overall"];
    let (z, c) = (
        overall(&h.zero_shot.runs[0]),
        overall(&h.calibrated.runs[0]),
    );
    assert!(
        c < 0.5 * z,
        "the fit on the light run helps the heavy one: {z} -> {c}"
    );
    assert!(report.cross_validation.is_none());
    let both = CalibrateRequest {
        runs: vec![d.join("light.json"), d.join("heavy.json")],
        holdout: Vec::new(),
        cross_validate: true,
        ..request.clone()
    };
    let report = calibrate_job(&both).unwrap().report;
    let folds = report.cross_validation.unwrap();
    assert_eq!(
        folds
            .iter()
            .map(|f| f.held_out.as_str())
            .collect::<Vec<_>>(),
        ["light", "heavy"]
    );
    for f in &folds {
        let c = f.calibrated.as_ref().unwrap();
        assert_eq!(c.name, f.held_out);
        assert!(f
            .fit
            .as_ref()
            .unwrap()
            .runs
            .iter()
            .all(|r| r != &f.held_out));
        assert!(overall(c) < overall(&f.zero_shot), "{f:?}");
    }
    // One run cannot be cross-validated.
    let one = CalibrateRequest {
        runs: vec![d.join("light.json")],
        cross_validate: true,
        ..request
    };
    let e = calibrate_job(&one).unwrap_err().to_string();
    assert!(e.contains("two runs or more"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

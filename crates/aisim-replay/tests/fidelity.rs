//! Measured runs, validation and calibration on fixtures.

mod common;

use std::path::{Path, PathBuf};

use aisim_core::timing::{PhysicsCoefficients, TimingSpec};
use aisim_replay::fidelity::calibrate::{calibrate, CalibrateOptions};
use aisim_replay::fidelity::measured::{MeasuredRun, MEASURED_VERSION};
use aisim_replay::fidelity::validate::{compare, measured_from_report, replay, validate};
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, WorkloadSpec};
use aisim_replay::ReplaySpec;
use common::*;

fn physics(c: PhysicsCoefficients) -> TimingSpec {
    TimingSpec::Physics {
        profile: "h100/llama-3.1-8b".into(),
        coefficients: c,
    }
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("aisim-fidelity-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A measured run whose measurement is `spec`'s own replay, written to and
/// read back from `dir`.
fn self_measured(spec: ReplaySpec, dir: &Path, name: &str) -> MeasuredRun {
    let run = MeasuredRun {
        version: MEASURED_VERSION,
        name: name.into(),
        measured: measured_from_report(&run(spec.clone()).report),
        spec,
        requests: None,
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

/// Mixed lengths at a given rate: at 0.5/s requests mostly run alone (TTFT
/// shows the compute slope and the per-pass constant, TPOT the weights and
/// the KV slope), at 8/s they batch (the per-request constant).
fn recovery_spec(c: PhysicsCoefficients, rate: f64) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 60,
            input: LengthSpec::Uniform {
                min: 100,
                max: 8000,
            },
            output: LengthSpec::Uniform { min: 10, max: 300 },
            arrival: ArrivalSpec::Poisson { rate },
            ..SyntheticSpec::default()
        }),
        timing: physics(c),
        ..ReplaySpec::default()
    }
}

#[test]
fn calibration_recovers_known_coefficients() {
    let chosen = PhysicsCoefficients {
        compute: 1.6,
        weights: 1.3,
        kv: 2.0,
        allreduce: 1.0,
        pass_ms: 0.0,
        request_ms: 0.0,
    };
    let d = dir("recover");
    let runs: Vec<MeasuredRun> = [0.5, 8.0]
        .iter()
        .map(|&rate| {
            let mut r = self_measured(recovery_spec(chosen, rate), &d, &format!("rate{rate}"));
            // Replayed from the defaults, then fitted back.
            r.spec.timing = physics(PhysicsCoefficients::default());
            r
        })
        .collect();
    let mut options = CalibrateOptions::for_runs(&runs);
    assert_eq!(
        options.fit,
        ["compute", "weights", "kv", "request_ms"],
        "tp 1, a dense model"
    );
    // The three roofline scales: the overheads trade against the KV scale
    // at these lengths (see docs/fidelity.md), so they stay at 0 here.
    options.fit = vec!["compute", "weights", "kv"];
    let fit = calibrate(&runs, &options).unwrap();
    let got = fit.coefficients.to_array();
    for (i, (g, w)) in got.iter().zip(chosen.to_array()).enumerate() {
        assert!(
            (g - w).abs() <= 0.02 * w,
            "coefficient {i}: fitted {g}, chosen {w} ({fit:?})"
        );
    }
    assert!(fit.objective < fit.start_objective);
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

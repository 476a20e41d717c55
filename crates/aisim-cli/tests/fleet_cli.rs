//! The fleet commands as a user runs them: JSON shapes and bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn aisim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aisim"))
        .args(args)
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = aisim(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aisim-fleet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn fails_with(args: &[&str], needle: &str) {
    let o = aisim(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected `{needle}` in: {err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn json_shapes_scripts_rely_on() {
    let v = json(&[
        "optimize",
        "--lam",
        "100",
        "--n-sim-req",
        "5000",
        "--format",
        "json",
    ]);
    for key in ["candidates", "best", "recommended", "baseline"] {
        assert!(v.get(key).is_some(), "optimize.{key}");
    }
    for key in [
        "gamma",
        "n_short",
        "n_long",
        "total_gpus",
        "cost_per_hr",
        "annual_cost_kusd",
        "p99_ttft_short_ms",
        "p99_ttft_long_ms",
        "slo_met",
        "source",
    ] {
        assert!(v["candidates"][0].get(key).is_some(), "candidate.{key}");
    }
    let v = json(&["disagg", "--lam", "100", "--format", "json"]);
    for key in [
        "n_prefill",
        "n_decode",
        "total_gpus",
        "system_rps",
        "ttft_ms",
        "tpot_ms",
        "cost_per_hr",
        "slo_met",
    ] {
        assert!(v["best"].get(key).is_some(), "disagg.best.{key}");
    }
    assert!(v["points"].as_array().is_some_and(|p| !p.is_empty()));
    let v = json(&["tok-per-watt", "--format", "json"]);
    for key in [
        "gpu",
        "n_gpus",
        "rho",
        "n_active",
        "tok_per_watt",
        "watts_per_gpu",
        "usd_per_mtok",
        "p99_ttft_ms",
    ] {
        assert!(v["rows"][0].get(key).is_some(), "tok-per-watt.rows.{key}");
    }
    let v = json(&[
        "pareto", "--cdf", "lmsys", "--lam", "100", "--format", "json",
    ]);
    assert_eq!(v["recommended"]["b_short"], 8192);
}

#[test]
fn simulations_are_reproducible_and_report_completed_beside_offered() {
    let args = [
        "simulate", "--lam", "100", "--n-s", "12", "--n-l", "14", "--n-req", "5000", "--format",
        "json",
    ];
    let a = json(&args);
    assert_eq!(a, json(&args));
    assert_eq!(a["result"]["total_offered"], 5000);
    assert!(a["result"]["total_completed"].as_u64().unwrap() > 0);
    let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fleet.json");
    let v = json(&[
        "simulate-fleet",
        fleet.to_str().unwrap(),
        "--lam",
        "50",
        "--n-req",
        "3000",
        "--seeds",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(v["seeds"], 3);
    assert_eq!(v["result"]["pools"].as_array().unwrap().len(), 2);
    let v = json(&[
        "compare-routers",
        "--lam",
        "100",
        "--n-s",
        "12",
        "--n-l",
        "14",
        "--n-req",
        "3000",
        "--format",
        "json",
    ]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_input_is_a_clear_error() {
    let unsorted = temp("unsorted.json", "[[1024, 0.5], [512, 1.0]]");
    fails_with(&["pareto", "--cdf", unsorted.to_str().unwrap()], "sorted");
    let decreasing = temp(
        "decreasing.json",
        "{\"cdf\": [[512, 0.7], [1024, 0.5], [2048, 1.0]]}",
    );
    fails_with(
        &["pareto", "--cdf", decreasing.to_str().unwrap()],
        "decreases",
    );
    let outside = temp("outside.json", "[[512, 0.5], [1024, 1.2]]");
    fails_with(
        &["pareto", "--cdf", outside.to_str().unwrap()],
        "outside [0, 1]",
    );
    fails_with(&["optimize", "--lam=-5"], "--lam");
    fails_with(
        &["optimize", "--gpu-short", "z900"],
        "unknown profile `z900`",
    );
    fails_with(&["pareto", "--cdf", "nonesuch"], "not a built-in CDF");
    let no_pool = temp(
        "fleet.json",
        r#"{"pools": [{"id": "a", "gpu": "a100", "n_gpus": 2, "max_ctx": 8192}],
            "router": {"kind": "model", "map": {"x": "b"}, "fallback": "a"},
            "workloads": {"x": {"cdf": "azure", "lam_frac": 1.0}}}"#,
    );
    fails_with(&["simulate-fleet", no_pool.to_str().unwrap()], "pool `b`");
    let no_pools = temp(
        "empty.json",
        r#"{"pools": [], "workloads": {"x": {"cdf": "azure", "lam_frac": 1.0}}}"#,
    );
    fails_with(&["simulate-fleet", no_pools.to_str().unwrap()], "pools");
    fails_with(&["grid-flex", "--flex-pcts", "120"], "--flex-pcts");
    fails_with(
        &[
            "simulate",
            "--n-s",
            "1",
            "--n-l",
            "1",
            "--arrivals",
            "weekly",
        ],
        "--arrivals",
    );
}

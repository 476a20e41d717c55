//! The fleet commands as a user runs them: JSON shapes and bad input.

mod common;

use std::path::Path;

use common::{aisim, temp_file as temp};

fn json(args: &[&str]) -> serde_json::Value {
    let o = aisim(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
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
        "pareto",
        "--cdf",
        "lmsys",
        "--lam",
        "100",
        "--sizing-model",
        "slots",
        "--format",
        "json",
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
    fails_with(
        &["simulate-fleet", no_pool.to_str().unwrap()],
        "`router.map` = b: names no pool",
    );
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

const SIM: [&str; 5] = ["simulate", "--n-s", "1", "--n-l", "1"];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(extra).copied().collect()
}

#[test]
fn every_non_finite_zero_or_negative_float_flag_is_refused_by_name() {
    let disagg_floats = [
        "--lam",
        "--mean-isl",
        "--mean-osl",
        "--slo-ttft-ms",
        "--slo-tpot-ms",
        "--prefill-efficiency",
        "--decode-efficiency",
        "--ttft-multiplier",
    ];
    for bad in ["nan", "inf", "-1", "0"] {
        for flag in disagg_floats {
            fails_with(&["disagg", flag, bad], flag);
        }
        for cmd in ["optimize", "pareto", "whatif"] {
            fails_with(&[cmd, "--slo-ttft-ms", bad], "--slo-ttft-ms");
            fails_with(&[cmd, "--availability", bad], "--availability");
        }
        fails_with(&["tok-per-watt", "--slo-ttft-ms", bad], "--slo-ttft-ms");
        fails_with(&["tok-per-watt", "--lam", bad], "--lam");
        fails_with(&["grid-flex", "--slo-ttft-ms", bad], "--slo-ttft-ms");
        fails_with(&["grid-flex", "--lam", bad], "--lam");
        fails_with(
            &["whatif", "--lam-range", &format!("100,{bad}")],
            "--lam-range",
        );
        fails_with(&with(&SIM, &["--slo-ttft-ms", bad]), "--slo-ttft-ms");
        fails_with(&with(&SIM, &["--lam", bad]), "--lam");
        fails_with(
            &with(&SIM, &["--router", "compress_route", "--gamma", bad]),
            "--gamma",
        );
        fails_with(
            &[
                "compare-routers",
                "--n-s",
                "1",
                "--n-l",
                "1",
                "--gamma",
                bad,
            ],
            "--gamma",
        );
        let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fleet.json");
        fails_with(
            &[
                "simulate-fleet",
                fleet.to_str().unwrap(),
                "--slo-ttft-ms",
                bad,
            ],
            "--slo-ttft-ms",
        );
        fails_with(
            &["simulate-fleet", fleet.to_str().unwrap(), "--lam", bad],
            "--lam",
        );
    }
    for bad in ["nan", "-0.5", "1.5"] {
        fails_with(&["optimize", "--p-compress", bad], "--p-compress");
        fails_with(&with(&SIM, &["--warmup", bad]), "--warmup");
    }
    for bad in [
        "gamma:nan",
        "gamma:0",
        "gamma:-1",
        "gamma:1e-300",
        "gamma:x",
    ] {
        fails_with(&with(&SIM, &["--arrivals", bad]), "--arrivals");
    }
    for bad in ["nan", "0.5", "1e9"] {
        fails_with(&["optimize", "--gamma-max", bad], "--gamma-max");
    }
}

#[test]
fn zero_counts_and_contexts_are_refused_by_name() {
    fails_with(
        &["optimize", "--calibration", "sampled", "--samples", "0"],
        "--samples",
    );
    fails_with(&["optimize", "--n-sim-req", "0"], "--n-sim-req");
    fails_with(&["optimize", "--seeds", "0"], "--seeds");
    fails_with(&["optimize", "--b-short", "0"], "--b-short");
    fails_with(&["optimize", "--b-short", "100000"], "--b-short");
    fails_with(&["optimize", "--long-max-ctx", "0"], "--long-max-ctx");
    fails_with(&with(&SIM, &["--n-req", "0"]), "--n-req");
    fails_with(&with(&SIM, &["--seeds", "0"]), "--seeds");
    fails_with(&["simulate", "--n-s", "0", "--n-l", "0"], "--n-s 0 --n-l 0");
    fails_with(&["tok-per-watt", "--max-ctx", "0"], "--max-ctx");
    fails_with(&["grid-flex", "--max-ctx", "0"], "--max-ctx");
    fails_with(&["grid-flex", "--n-gpus", "0"], "--n-gpus");
    fails_with(&["disagg", "--max-ctx", "0"], "--max-ctx");
    fails_with(&["disagg", "--max-prefill", "0"], "--max-prefill");
    fails_with(
        &[
            "disagg",
            "--max-prefill",
            "100000",
            "--max-decode",
            "100000",
        ],
        "--max-decode",
    );
    fails_with(&["optimize", "--seeds", "-1"], "--seeds");
    let many: Vec<String> = (1..=1001).map(|k| k.to_string()).collect();
    fails_with(&["whatif", "--lam-range", &many.join(",")], "--lam-range");
    let cuts: Vec<String> = (0..1001).map(|k| format!("{}", k as f64 / 20.0)).collect();
    fails_with(
        &["grid-flex", "--flex-pcts", &cuts.join(",")],
        "--flex-pcts",
    );
}

#[test]
fn fleet_file_fields_are_refused_with_file_line_and_field() {
    let cases = [
        (
            "zero_ctx.json",
            r#"{"pools": [{"id": "a", "gpu": "a100", "n_gpus": 2, "max_ctx": 0}],
                "workloads": {"x": {"cdf": "azure", "lam_frac": 1.0}}}"#,
            "`max_ctx` = 0",
        ),
        (
            "dup.json",
            r#"{"pools": [{"id": "a", "gpu": "a100", "n_gpus": 2, "max_ctx": 8192},
                          {"id": "a", "gpu": "h100", "n_gpus": 2, "max_ctx": 8192}],
                "workloads": {"x": {"cdf": "azure", "lam_frac": 1.0}}}"#,
            "id `a` is used by pools 0 and 1",
        ),
        (
            "no_traffic.json",
            r#"{"pools": [{"id": "a", "gpu": "a100", "n_gpus": 2, "max_ctx": 8192}],
                "workloads": {"x": {"cdf": "azure", "lam_frac": 0}}}"#,
            "every `lam_frac` is 0",
        ),
    ];
    for (name, text, needle) in cases {
        let f = temp(name, text);
        let o = aisim(&["simulate-fleet", f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(needle) && err.contains(name) && err.contains(" line "),
            "{err}"
        );
    }
}

#[test]
fn flags_that_would_have_no_effect_are_errors() {
    for extra in [
        &["--availability", "0.9"][..],
        &["--no-util-cap"],
        &["--calibration", "sampled"],
        &["--samples", "10"],
    ] {
        let o = aisim(&with(&SIM, extra));
        assert_eq!(o.status.code(), Some(2), "simulate {extra:?}");
        let o = aisim(&with(
            &["compare-routers", "--n-s", "1", "--n-l", "1"],
            extra,
        ));
        assert_eq!(o.status.code(), Some(2), "compare-routers {extra:?}");
    }
    fails_with(&with(&SIM, &["--gamma", "2"]), "--gamma has no effect");
    fails_with(&["whatif", "--lam", "100", "--lam-range", "50,60"], "--lam");
    fails_with(&["pareto", "--b-short", "2048"], "--b-short has no effect");
    fails_with(&["pareto", "--seed", "7"], "--seed has no effect");
    fails_with(&["optimize", "--samples", "10"], "--samples has no effect");
    fails_with(
        &["optimize", "--verify-top", "0", "--seeds", "2"],
        "--seeds has no effect",
    );
    fails_with(
        &["optimize", "--verify-top", "0", "--n-sim-req", "10"],
        "--n-sim-req has no effect",
    );
    fails_with(
        &["optimize", "--verify-top", "0", "--verify", "engine"],
        "--verify has no effect",
    );
    fails_with(
        &["tok-per-watt", "--rho-sweep", "--slo-ttft-ms", "100"],
        "--slo-ttft-ms has no effect",
    );
    fails_with(&["grid-flex", "--seed", "3"], "--seed has no effect");
    // whatif's --lam is a range of one rate.
    let v = json(&["whatif", "--lam", "150", "--format", "json"]);
    let rows = v["candidates"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["lam"], 150.0);
}

#[test]
fn huge_rates_and_fleets_finish_with_bounded_work() {
    let v = json(&[
        "optimize",
        "--lam",
        "1e9",
        "--verify-top",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(v["recommended_by"], "analytic");
    assert!(v["baseline"]["total_gpus"].as_u64().unwrap() > 100_000_000);
    let v = json(&[
        "tok-per-watt",
        "--lam",
        "1e9",
        "--gpus",
        "a100",
        "--format",
        "json",
    ]);
    assert!(v["rows"][0]["n_gpus"].as_u64().unwrap() > 100_000_000);
    let v = json(&with(
        &["simulate", "--n-s", "1000000", "--n-l", "1"],
        &["--n-req", "5000", "--format", "json"],
    ));
    let short = &v["result"]["pools"][0];
    assert!(short["instances_used"].as_u64().unwrap() <= 5000);
    assert_eq!(v["result"]["total_offered"], 5000);
    let fleet = temp(
        "ten_million.json",
        r#"{"pools": [{"id": "a", "gpu": "a100", "n_gpus": 10000000, "max_ctx": 65536}],
            "workloads": {"a": {"cdf": "azure", "lam_frac": 1.0}}}"#,
    );
    let v = json(&[
        "simulate-fleet",
        fleet.to_str().unwrap(),
        "--n-req",
        "5000",
        "--format",
        "json",
    ]);
    assert!(v["result"]["pools"][0]["instances_used"].as_u64().unwrap() <= 5000);
}

#[test]
fn seeds_are_labelled_and_many_seeds_run_on_a_bounded_pool() {
    let v = json(&with(
        &SIM,
        &[
            "--lam", "5", "--n-req", "200", "--seeds", "300", "--format", "json",
        ],
    ));
    assert_eq!(
        (v["seeds"].as_u64(), v["first_seed"].as_u64()),
        (Some(300), Some(42))
    );
    let o = aisim(&with(
        &SIM,
        &["--lam", "5", "--n-req", "200", "--seeds", "3"],
    ));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("seed 42 of 3") && table.contains("mean over 3 seed(s)"),
        "{table}"
    );
    let o = aisim(&[
        "compare-routers",
        "--n-s",
        "1",
        "--n-l",
        "1",
        "--lam",
        "5",
        "--n-req",
        "200",
        "--seeds",
        "2",
    ]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("(mean of 2 seed(s) [95 %])") && table.contains("(seed 42)"),
        "{table}"
    );
}

#[test]
fn pareto_stars_exactly_the_non_dominated_rows_and_never_recommends_worse_than_the_baseline() {
    for (cdf, lam) in [("lmsys", "100"), ("azure", "200"), ("agent_heavy", "30")] {
        let v = json(&["pareto", "--cdf", cdf, "--lam", lam, "--format", "json"]);
        let rows: Vec<(f64, f64, bool)> = v["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["cost_per_hr"].as_f64().unwrap(),
                    r["worst_p99_ms"].as_f64().unwrap(),
                    r["pareto"].as_bool().unwrap(),
                )
            })
            .collect();
        for &(c, w, starred) in &rows {
            let dominated = rows
                .iter()
                .any(|&(oc, ow, _)| oc <= c && ow <= w && (oc < c || ow < w));
            assert_eq!(starred, !dominated, "{cdf}: ({c}, {w})");
        }
        let base = v["baseline"]["cost_per_hr"].as_f64().unwrap();
        if v["baseline"]["slo_met"].as_bool().unwrap() {
            let rec = v["recommended"]["cost_per_hr"].as_f64().unwrap();
            assert!(
                rec <= base,
                "{cdf}: recommended {rec} dearer than the baseline {base}"
            );
        }
        let kind = v["recommendation"].as_str().unwrap();
        assert!(["threshold", "baseline", "none"].contains(&kind), "{kind}");
    }
    let v = json(&[
        "optimize",
        "--lam",
        "50",
        "--n-sim-req",
        "3000",
        "--format",
        "json",
    ]);
    assert_eq!(v["recommended_by"], "simulated");
    if let Some(rec) = v["recommended"].as_object() {
        assert_eq!(rec["source"], "simulated");
        assert_eq!(rec["slo_met"], true);
    }
}

const DISAGG_VERIFY: &[&str] = &[
    "disagg",
    "--lam",
    "28",
    "--gpu-prefill",
    "h100/llama-3.1-8b/tp1",
    "--gpu-decode",
    "h100/llama-3.1-8b/tp1",
    "--max-prefill",
    "4",
    "--max-decode",
    "4",
    "--verify",
    "engine",
    "--n-sim-req",
    "2000",
    "--sizing-model",
    "slots",
];

fn disagg_verify(extra: &[&str]) -> Vec<String> {
    DISAGG_VERIFY
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn disagg_verify_engine_marks_splits_and_recommends_by_the_replay() {
    let args = disagg_verify(&["--format", "json"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = aisim(&args);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    // Byte-identical (the report has no host section).
    assert_eq!(a.stdout, aisim(&args).stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let rows = v["engine"]["verified"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let meets: Vec<bool> = rows.iter().map(|r| r["meets"].as_bool().unwrap()).collect();
    // The cheapest feasible splits: 1 + 2, 1 + 3, 2 + 2 (too little decode).
    assert_eq!(meets, [false, true, false]);
    for key in ["ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms"] {
        assert!(rows[0][key].is_number(), "{key}");
    }
    assert_eq!(v["best"]["n_decode"], 2);
    assert_eq!(v["recommended"]["n_decode"], 3);
    assert_eq!(v["recommended_by"], "engine");
    assert_eq!(v["engine"]["kv_bytes_per_token"], 131072);
    // The table says which check the recommendation rests on.
    let args = disagg_verify(&["--verify-top", "1"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = aisim(&args);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("Engine check"), "{table}");
    assert!(
        table.contains("recommended (engine check): none of the 1 replayed splits"),
        "{table}"
    );
    // The analytic best the replay fails is never shown as feasible.
    assert!(
        table.contains("(the engine check: no (TTFT), not feasible)"),
        "{table}"
    );
    // The batch model (the default) prices a prefill GPU's compute once:
    // its best split is the replay's.
    let args: Vec<&str> = DISAGG_VERIFY[..DISAGG_VERIFY.len() - 2]
        .iter()
        .copied()
        .chain(["--format", "json"])
        .collect();
    let v = json(&args);
    assert_eq!(v["params"]["model"], "batch");
    assert_eq!(
        (
            v["best"]["n_prefill"].clone(),
            v["best"]["n_decode"].clone()
        ),
        (1.into(), 2.into())
    );
    assert_eq!(v["recommended"], v["best"]);
    assert_eq!(v["recommended_by"], "engine");
    // Without the check the recommendation is the analytic best.
    let v = json(&["disagg", "--lam", "100", "--format", "json"]);
    assert_eq!(v["recommended_by"], "analytic");
    assert_eq!(v["recommended"], v["best"]);
    assert!(v.get("engine").is_none());
}

#[test]
fn disagg_verify_engine_replays_two_profiles_and_recommends_by_them() {
    // An A100 decode pool: 1 + 3 no longer meets the SLOs in the replay.
    let mut args: Vec<&str> = DISAGG_VERIFY.to_vec();
    for (flag, value) in [
        ("--gpu-decode", "a100/llama-3.1-8b/tp1"),
        ("--max-decode", "6"),
    ] {
        let at = args.iter().position(|a| *a == flag).unwrap();
        args[at + 1] = value;
    }
    args.extend(["--verify-top", "4", "--format", "json"]);
    let o = aisim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["engine"]["verified"].as_array().unwrap();
    let marked: Vec<(u64, u64, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["split"]["n_prefill"].as_u64().unwrap(),
                r["split"]["n_decode"].as_u64().unwrap(),
                r["meets"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        marked,
        [(1, 3, false), (1, 4, false), (2, 3, false), (1, 5, true)]
    );
    assert_eq!(v["recommended"]["n_decode"], 5);
    assert_eq!(v["recommended_by"], "engine");
}

#[test]
fn disagg_verify_flags_reject_bad_values_and_no_ops() {
    let bad = |extra: &[&str], needle: &str| {
        let args = disagg_verify(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_with(&args, needle);
    };
    bad(&["--verify-top", "0"], "--verify-top");
    bad(&["--verify-top", "101"], "--verify-top");
    bad(&["--verify-top", "-1"], "--verify-top");
    bad(&["--n-sim-req", "0"], "--n-sim-req");
    bad(&["--kv-transfer-gb-s", "0"], "--kv-transfer-gb-s");
    bad(&["--kv-transfer-gb-s", "nan"], "--kv-transfer-gb-s");
    bad(
        &["--kv-transfer-latency-ms", "-1"],
        "--kv-transfer-latency-ms",
    );
    bad(&["--kv-bytes-per-token", "0"], "--kv-bytes-per-token");
    bad(&["--gpu-decode", "h100/llama-3.1-70b/tp4"], "--gpu-decode");
    bad(&["--timing", "nonsense"], "nonsense");
    fails_with(&["disagg", "--verify", "slots"], "--verify");
    fails_with(
        &[
            "disagg",
            "--verify",
            "engine",
            "--gpu-prefill",
            "h100",
            "--gpu-decode",
            "h100",
        ],
        "--kv-bytes-per-token",
    );
    for (flag, value) in [
        ("--verify-top", "2"),
        ("--n-sim-req", "100"),
        ("--seed", "7"),
        ("--kv-bytes-per-token", "131072"),
        ("--kv-transfer-gb-s", "25"),
        ("--kv-transfer-latency-ms", "1"),
        ("--timing", "physics"),
    ] {
        fails_with(&["disagg", flag, value], &format!("{flag} has no effect"));
    }
    // The slot model's factors mean nothing to the batch model.
    for flag in [
        "--prefill-efficiency",
        "--decode-efficiency",
        "--ttft-multiplier",
    ] {
        fails_with(&["disagg", flag, "0.5"], &format!("{flag} has no effect"));
        let v = json(&[
            "disagg",
            flag,
            "0.5",
            "--sizing-model",
            "slots",
            "--format",
            "json",
        ]);
        assert_eq!(v["params"]["model"], "slots");
    }
}

/// The batch model's counts: the fewest GPUs below their capacity may be
/// one; a target at the idle prefill's floor is out of reach in a bounded
/// search (never a trillion GPUs); one pool is a candidate, so no split
/// dearer than it is recommended; `whatif --gpu-compare` sizes what the
/// pools serve; `disagg` refuses a context shorter than its mean request
/// and says whether its aggregated baseline meets the TTFT target.
#[test]
fn batch_sizing_is_bounded_and_never_dearer_than_one_pool() {
    let h = "h100/llama-3.1-8b";
    let pools = ["--gpu-short", h, "--gpu-long", h];
    let v = json(
        &[
            &[
                "optimize",
                "--lam",
                "1",
                "--verify-top",
                "0",
                "--format",
                "json",
            ][..],
            &pools,
        ]
        .concat(),
    );
    assert_eq!(v["baseline"]["total_gpus"], 1, "{}", v["baseline"]);
    let best = v["recommended"]["cost_per_hr"].as_f64().unwrap();
    assert!(best <= v["baseline"]["cost_per_hr"].as_f64().unwrap());
    // One request of 1,000 prompt tokens: its idle prefill is the floor;
    // just above it the count stays small and the target is missed.
    let trace = temp(
        "one-request.jsonl",
        r#"{"timestamp": 0, "input_length": 1000, "output_length": 100, "hash_ids": []}"#,
    );
    let cdf = format!("trace:{}", trace.display());
    for slo in ["16", "16.00000001"] {
        let v = json(
            &[
                &[
                    "optimize",
                    "--cdf",
                    &cdf,
                    "--lam",
                    "0.02",
                    "--verify-top",
                    "0",
                    "--slo-ttft-ms",
                    slo,
                    "--format",
                    "json",
                ][..],
                &pools,
            ]
            .concat(),
        );
        let n = v["baseline"]["total_gpus"].as_u64().unwrap();
        assert!((1..=64).contains(&n), "{slo}: {n}");
    }
    // whatif's comparison of the same profile is its one-pool count.
    let v = json(
        &[
            &[
                "whatif",
                "--cdf",
                "lmsys",
                "--lam",
                "400",
                "--long-max-ctx",
                "4096",
                "--gpu-compare",
                h,
                "--format",
                "json",
            ][..],
            &pools,
        ]
        .concat(),
    );
    assert!(
        v["workload"]["refused_share"].as_f64().unwrap() > 0.01,
        "{v}"
    );
    let one_pool = &v["candidates"][0]["baseline"]["total_gpus"];
    assert!(one_pool.as_u64().unwrap() > 1, "{v}");
    assert_eq!(&v["gpu_compare"][0]["n_gpus"], one_pool, "{v}");
    fails_with(&["disagg", "--max-ctx", "1024"], "--max-ctx");
    // A mean taken from the CDF is blamed on --cdf, not on a flag not given.
    let huge = temp("huge-cdf.json", "[[100000000, 1.0]]");
    fails_with(
        &["disagg", "--cdf", huge.to_str().unwrap()],
        "invalid `--cdf`",
    );
    let v = json(&["disagg", "--format", "json"]);
    assert!(v["aggregated"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["ttft_met"].is_boolean()));
    let v = json(&["disagg", "--sizing-model", "slots", "--format", "json"]);
    assert!(v["aggregated"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["ttft_met"].is_null()));
}

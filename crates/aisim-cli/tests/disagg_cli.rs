//! `aisim replay` with a disaggregated topology: the flags, their errors,
//! the pools in the JSON report.

mod common;

use common::{aisim, assert_refused, json_ok, stderr, stdout, without_host};

const DISAGG: &[&str] = &[
    "replay",
    "--prefill-workers",
    "2",
    "--decode-workers",
    "3",
    "--kv-bytes-per-token",
    "131072",
    "--format",
    "json",
    "-q",
];

fn run_json(extra: &[&str]) -> serde_json::Value {
    let args: Vec<&str> = DISAGG.iter().chain(extra).copied().collect();
    let o = aisim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn a_disaggregated_run_reports_each_pool_and_its_transfers() {
    let v = run_json(&[
        "--kv-transfer-mode",
        "destination-missing",
        "--decode-max-num-seqs",
        "64",
    ]);
    let pools = v["pools"].as_array().unwrap();
    let names: Vec<&str> = pools.iter().map(|p| p["pool"].as_str().unwrap()).collect();
    assert_eq!(names, ["prefill", "decode"]);
    assert_eq!(pools[0]["workers"], 2);
    assert_eq!(pools[1]["workers"], 3);
    for p in pools {
        assert!(p["passes"].as_u64().unwrap() > 0, "{p}");
        assert!(p["gpu_hours"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["kv_peak_blocks"].as_u64().unwrap() > 0, "{p}");
    }
    let t = &v["kv_transfer"];
    assert_eq!(t["mode"], "destination_missing");
    assert_eq!(t["transfers"], v["outcomes"]["completed"]);
    let spec = &v["spec"]["topology"];
    assert_eq!(spec["kind"], "disaggregated");
    assert_eq!(spec["decode"]["engine"]["max_num_seqs"], 64);
    assert!(spec["prefill"].get("engine").is_none(), "{spec}");
    // Same flags, same report (outside `host`).
    let again = run_json(&[
        "--kv-transfer-mode",
        "destination-missing",
        "--decode-max-num-seqs",
        "64",
    ]);
    assert_eq!(
        without_host(&v.to_string()),
        without_host(&again.to_string())
    );
}

/// A 1 + 1 disaggregated replay with a link, and `extra`.
fn one_and_one(extra: &[&'static str]) -> Vec<&'static str> {
    let base = [
        "replay",
        "--prefill-workers",
        "1",
        "--decode-workers",
        "1",
        "--kv-bytes-per-token",
        "100",
    ];
    base.iter().chain(extra).copied().collect()
}

#[test]
fn flags_of_the_other_topology_are_errors_naming_both() {
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (
            vec!["replay", "--workers", "4", "--prefill-workers", "2"],
            &["--workers", "--prefill-workers"],
        ),
        (
            vec!["replay", "--decode-workers", "2"],
            &["--decode-workers", "--prefill-workers"],
        ),
        (
            vec!["replay", "--workers", "2", "--kv-transfer-gb-s", "10"],
            &["--kv-transfer-gb-s", "--prefill-workers"],
        ),
        (
            vec!["replay", "--prefill-max-num-seqs", "8"],
            &["--prefill-max-num-seqs", "aggregated"],
        ),
        (
            vec!["replay", "--prefill-workers", "1", "--decode-workers", "1"],
            &["bytes_per_token"],
        ),
        (
            one_and_one(&["--dp-size", "2"]),
            &["--dp-size", "topology.prefill"],
        ),
        (
            one_and_one(&["--backend", "sglang"]),
            &["--backend", "sglang"],
        ),
        (
            one_and_one(&["--kv-transfer-gb-s", "0"]),
            &["--kv-transfer-gb-s", "0"],
        ),
        (
            one_and_one(&["--decode-num-gpu-blocks", "0"]),
            &["--decode-num-gpu-blocks"],
        ),
    ];
    for (args, want) in cases {
        let o = aisim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        for w in want {
            assert!(e.contains(w), "{args:?}: `{w}` missing from: {e}");
        }
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn the_profile_model_gives_the_bytes_of_a_token() {
    let o = aisim(&[
        "replay",
        "--prefill-workers",
        "1",
        "--decode-workers",
        "1",
        "--profile",
        "h100/llama-3.1-8b/tp1",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Llama 3.1 8B: 32 layers × 8 KV heads × 2 × 128 × 2 bytes, in the
    // run's spec (derived when the run is built, not written by
    // --print-spec, which keeps what was set).
    assert_eq!(
        v["spec"]["topology"]["kv_transfer"]["bytes_per_token"],
        32 * 8 * 2 * 128 * 2
    );
}

#[test]
fn the_router_queue_flags() {
    let o = aisim(&[
        "replay",
        "--workers",
        "1",
        "--router-queue-threshold",
        "1",
        "--router-queue-capacity",
        "0",
        "--format",
        "json",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rejected = v["rejections"]["router_queue_full"].as_u64().unwrap();
    assert_eq!(v["outcomes"]["rejected"].as_u64(), Some(rejected));
    assert!(rejected > 0);
    assert_eq!(v["spec"]["router"]["queue"]["capacity"], 0);
    for (args, want) in [
        (
            &["replay", "--router-queue-capacity", "4"][..],
            "--router-queue-threshold",
        ),
        (
            &["replay", "--router-queue-threshold", "0"][..],
            "router.queue.threshold",
        ),
    ] {
        let o = aisim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

#[test]
fn every_router_places_a_disaggregated_run() {
    for (router, name) in [
        ("kv", "kv"),
        ("lpwl", "lpwl"),
        ("sticky", "sticky(round_robin)"),
    ] {
        let v = run_json(&["--router", router]);
        assert_eq!(v["policies"]["placement"], name, "{router}");
        assert_eq!(
            v["outcomes"]["completed"], v["outcomes"]["offered"],
            "{router}"
        );
    }
    // kv's guesses are the prefill placements': one per request.
    let v = run_json(&["--router", "kv"]);
    let e = &v["cache"]["router_expected"];
    assert_eq!(e["requests"], v["outcomes"]["offered"]);
    let v = run_json(&["--router", "sticky", "--router-inner", "kv"]);
    assert_eq!(v["policies"]["placement"], "sticky(kv)");
}

#[test]
fn each_pool_runs_its_own_timing_from_flags() {
    let args = one_and_one(&[
        "--synthetic",
        "--requests",
        "1",
        "--input-tokens",
        "1000",
        "--output-tokens",
        "3",
        "--prefill-timing",
        "fixed:10,99",
        "--decode-timing",
        "fixed:99,4",
        "--kv-transfer-gb-s",
        "0.1",
        "--kv-transfer-latency-ms",
        "2",
        "--format",
        "json",
    ]);
    let v = json_ok(&args);
    // The prefill pool's 10 ms pass + 1,000 × 100 B / 0.1 GB/s + 2 ms + the
    // decode pool's 4 ms.
    assert_eq!(v["latency"]["ttft_ms"]["max"], 17.0);
    assert_eq!(v["spec"]["topology"]["decode"]["timing"]["decode_ms"], 4.0);
    assert_eq!(v["policies"]["decode_timing"], "fixed");
    // The table shows each pool's timing.
    let table = stdout(&aisim(&args[..args.len() - 2]));
    for row in [
        "timing, prefill  fixed: 10 ms prefill, 99 ms decode",
        "timing, decode   fixed: 99 ms prefill, 4 ms decode",
    ] {
        assert!(table.contains(row), "{row} not in\n{table}");
    }
    // Profiles of two models: refused, naming both flags.
    assert_refused(
        &one_and_one(&[
            "--prefill-profile",
            "h100/llama-3.1-8b",
            "--decode-profile",
            "h100/llama-3.1-70b/tp4",
        ]),
        "--decode-profile: invalid replay spec: `topology.decode.timing.profile`: h100/llama-3.1-70b/tp4 serves llama-3.1-70b, but the prefill pool's profile h100/llama-3.1-8b (`topology.prefill.timing.profile`, --prefill-profile) serves llama-3.1-8b",
    );
    assert_refused(
        &one_and_one(&["--decode-timing", "fixed:-1,4"]),
        "--decode-timing: invalid replay spec: `topology.decode.timing.prefill_ms`",
    );
    assert_refused(
        &["replay", "--prefill-profile", "h100/llama-3.1-8b"],
        "--prefill-profile has no effect on an aggregated topology",
    );
}

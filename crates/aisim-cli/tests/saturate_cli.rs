//! `aisim sweep saturate`: the found rate on a server of known capacity, its
//! outputs and their determinism, the ends of the range, and bad input
//! refused with the flag named (exit 2).

mod common;

use common::{aisim, fixture, stderr, stdout, temp_dir, temp_file};

/// One worker running one request at a time, 20 ms prefill and 8 × 5 ms
/// decode passes each: S = 60 ms, capacity 16.667 req/s (the derivation is
/// in aisim-replay's tests/saturate.rs).
const SERVER: [&str; 14] = [
    "sweep",
    "saturate",
    "--synthetic",
    "--requests",
    "200",
    "--input-tokens",
    "100",
    "--output-tokens",
    "9",
    "--constant-rate",
    "--timing",
    "fixed:20,5",
    "--max-num-seqs",
    "1",
];

fn saturate(extra: &[&str]) -> std::process::Output {
    let mut args = SERVER.to_vec();
    args.extend_from_slice(extra);
    aisim(&args)
}

/// Exit 2 with stderr containing `says`.
fn assert_refused(o: &std::process::Output, says: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains(says), "wanted {says:?} in: {e}");
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn the_found_rate_is_within_2_percent_of_the_capacity() {
    let o = saturate(&[
        "--rate-range",
        "1..40",
        "--slo-ttft-ms",
        "40",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["status"], "found");
    let found = v["found"]["rate_rps"].as_f64().unwrap();
    let capacity = 1e3 / 60.0;
    assert!((found - capacity).abs() <= 0.02 * capacity, "{found}");
    // The probe at the answer holds; the one at the bracket's failing end
    // does not.
    let probe_at = |rate: &serde_json::Value| {
        v["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["rate_rps"] == *rate)
            .unwrap_or_else(|| panic!("no probe at {rate}"))["holds"]
            .clone()
    };
    assert_eq!(probe_at(&v["found"]["rate_rps"]), true);
    assert_eq!(probe_at(&v["bracket"]["fails"]["rate_rps"]), false);
    assert_eq!(v["condition"]["attainment"], 0.9);
    assert_eq!(v["condition"]["min_completed"], 0.99);
}

#[test]
fn the_outputs_are_byte_identical_on_any_threads() {
    let dir = temp_dir("saturate-outputs");
    let (json_file, html_file) = (dir.join("s.json"), dir.join("s.html"));
    let base = ["--rate-range", "1..40", "--slo-ttft-ms", "40"];
    let mut args = base.to_vec();
    args.extend_from_slice(&["--threads", "1", "--format", "json"]);
    let one = saturate(&args);
    let mut args = base.to_vec();
    let (j, h) = (json_file.to_str().unwrap(), html_file.to_str().unwrap());
    args.extend_from_slice(&["--threads", "2", "--out", j, "--html", h]);
    let two = saturate(&args);
    assert!(
        one.status.success() && two.status.success(),
        "{}",
        stderr(&two)
    );
    assert_eq!(std::fs::read(&json_file).unwrap(), one.stdout);
    let table = stdout(&two);
    assert!(
        table.starts_with("Saturation search over rate 1..40 req/s\n"),
        "{table}"
    );
    assert!(table.contains("\nsaturates at 16.691 req/s"), "{table}");
    let page = std::fs::read_to_string(&html_file).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>")
            && page.contains("TTFT percentiles against offered rate")
    );
}

#[test]
fn a_range_that_does_not_bracket_writes_its_outputs_and_exits_2() {
    for (range, status, says) in [
        ("20..40", "lo_fails", "--rate-range 20..40: even the low end, 20.000 req/s (speedup 1.0000), misses the condition; lower LO"),
        ("1..10", "hi_holds", "--rate-range 1..10: even the high end, 10.000 req/s (speedup 1.0000), holds; raise HI"),
    ] {
        let o = saturate(&["--rate-range", range, "--slo-ttft-ms", "40", "--format", "json"]);
        assert_eq!(o.status.code(), Some(2), "{range}");
        assert_eq!(json(&o)["status"], status);
        assert_eq!(stderr(&o), format!("error: {says}\n"));
    }
    // Too few probes for the tolerance: the bracket is reported, exit 2.
    let o = saturate(&[
        "--rate-range",
        "1..40",
        "--slo-ttft-ms",
        "40",
        "--max-probes",
        "2",
        "--format",
        "json",
    ]);
    assert_refused(&o, "not narrowed to 1.0% in 2 bisection probe(s)");
    assert_eq!(json(&o)["status"], "probe_limit");
}

/// `sweep saturate` over speedups 0.5..64 of a trace (the demo's unless
/// `extra` names one), 1 worker at a fixed 20 / 5 ms, TTFT p99 ≤ 2 s, as
/// JSON: found or not bracketed (exit 0 or 2), never an error.
fn speedup_search(extra: &[&str]) -> std::process::Output {
    let (global, rest): (Vec<&str>, Vec<&str>) = extra.iter().partition(|a| a.starts_with('-'));
    let mut args = global;
    args.extend(["sweep", "saturate"]);
    args.extend(rest);
    args.extend([
        "--workers",
        "1",
        "--timing",
        "fixed:20,5",
        "--speedup-range",
        "0.5..64",
        "--slo-ttft-ms",
        "2000",
        "--format",
        "json",
    ]);
    let o = aisim(&args);
    assert!(
        o.status.code().is_some_and(|c| c == 0 || c == 2),
        "{}",
        stderr(&o)
    );
    o
}

#[test]
fn a_trace_is_searched_through_its_speedup() {
    // Five requests a second apart: (5 − 1) / 4 s = 1 req/s on the trace's
    // own clock, so a probe's rate is its speedup.
    let rows: String = (0..5)
        .map(|i| format!("{{\"timestamp\": {}, \"input_length\": 64, \"output_length\": 4, \"hash_ids\": [{i}]}}\n", i * 1000))
        .collect();
    let trace = temp_file("one-a-second.jsonl", &rows);
    let v = json(&speedup_search(&[trace.to_str().unwrap()]));
    let rate = v["trace_rate_rps"].as_f64().unwrap();
    assert!((rate - 1.0).abs() <= 1e-12, "{rate}");
    for p in v["curve"].as_array().unwrap() {
        let (r, s) = (
            p["rate_rps"].as_f64().unwrap(),
            p["speedup"].as_f64().unwrap(),
        );
        assert!((r - rate * s).abs() <= 1e-9 * r, "{p}");
    }
}

#[test]
fn bad_ranges_exit_2_naming_the_flag() {
    for flag in ["--rate-range", "--speedup-range"] {
        for (value, why) in [
            ("5..1", "LO 5 must be below HI 1"),
            ("0..", "LO 0 must be a finite number above 0"),
            ("a..b", "LO `a` is not a number"),
            ("-1..5", "LO -1 must be a finite number above 0"),
            ("3", "`3` has no `..`"),
        ] {
            let o = saturate(&[flag, value, "--slo-ttft-ms", "40"]);
            assert_refused(
                &o,
                &format!("error: invalid value '{value}' for '{flag} <LO..HI>': {why}"),
            );
        }
    }
    let o = saturate(&["--slo-ttft-ms", "40"]);
    assert_refused(&o, "--rate-range <LO..HI>");
    let o = saturate(&[
        "--rate-range",
        "1..2",
        "--speedup-range",
        "1..2",
        "--slo-ttft-ms",
        "40",
    ]);
    assert_refused(&o, "cannot be used with");
}

#[test]
fn bad_settings_and_flags_without_effect_exit_2_naming_the_flag() {
    for (extra, says) in [
        (
            &["--tolerance", "0"][..],
            "error: --tolerance: 0 must be above 0 and below 1",
        ),
        (
            &["--tolerance", "-0.5"],
            "error: --tolerance: -0.5 must be above 0",
        ),
        (
            &["--attainment", "1.5"],
            "error: --attainment: 1.5 must be above 0 and at most 1",
        ),
        (
            &["--points", "1"],
            "error: --points: 1 is outside 2 ..= 1000",
        ),
        (
            &["--max-probes", "65"],
            "error: --max-probes: 65 is above 64",
        ),
        (
            &["--max-probes", "-1"],
            "error: invalid value '-1' for '--max-probes <N>'",
        ),
        (
            &["--threads", "0"],
            "error: --threads 0: at least 1 thread runs the replays",
        ),
        (
            &["--seeds", "3"],
            "error: --seeds has no effect with sweep saturate",
        ),
        (
            &["--per-request", "x.jsonl"],
            "error: --per-request has no effect with sweep saturate",
        ),
        (
            &["--speedup", "2"],
            "error: --speedup has no effect with sweep saturate: --rate-range sets the rate",
        ),
        (
            &["--rate", "5"],
            "error: --rate has no effect with sweep saturate: --rate-range sets",
        ),
    ] {
        let mut args = vec!["--rate-range", "1..40", "--slo-ttft-ms", "40"];
        args.extend_from_slice(extra);
        let o = saturate(&args);
        assert_refused(&o, says);
    }
    let o = aisim(&[
        "sweep",
        "saturate",
        "--concurrency",
        "4",
        "--speedup-range",
        "1..2",
        "--slo-ttft-ms",
        "40",
    ]);
    assert_refused(
        &o,
        "error: admission.concurrency 4 (--concurrency) leaves no arrival rate",
    );
    let o = saturate(&["--rate-range", "1..40"]);
    assert_refused(
        &o,
        "error: no SLO limit to hold: give at least one of --slo-ttft-ms",
    );
    // --rate is the base rate a speedup scales.
    let o = saturate(&[
        "--speedup-range",
        "0.5..8",
        "--rate",
        "4",
        "--slo-ttft-ms",
        "40",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let found = json(&o)["found"].clone();
    assert_eq!(
        found["rate_rps"].as_f64().unwrap(),
        4.0 * found["speedup"].as_f64().unwrap()
    );
}

#[test]
fn the_trace_is_read_once_for_every_probe() {
    // `-v` logs each read of the trace file (`trace read`).
    let trace = fixture("traces/mooncake_small.jsonl");
    let o = speedup_search(&["-v", &trace]);
    let probes = json(&o)["curve"].as_array().unwrap().len();
    assert!(probes > 1);
    assert_eq!(
        stderr(&o).matches("trace read").count(),
        1,
        "{}",
        stderr(&o)
    );
}

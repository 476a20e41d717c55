//! One SLO flag family across commands: `--slo-ttft-ms`, `--slo-tpot-ms`,
//! `--slo-e2e-ms` (units in the name). The names each command had before
//! (`--sla-*-ms` on replay, saturate and sweep merge; `--slo` on the
//! planners; `--slo-ttft` / `--slo-tpot` on disagg) still work, hidden.

mod common;

use common::*;

/// `args` with `flag value` added, run, its stdout (JSON without `host`
/// where it has one).
fn json_with(args: &[&str], flag: &str, value: &str) -> serde_json::Value {
    let all = [args, &[flag, value, "--format", "json"]].concat();
    let o = aisim(&all);
    assert_eq!(o.status.code(), Some(0), "{all:?}: {}", stderr(&o));
    without_host(&stdout(&o))
}

#[test]
fn every_old_slo_flag_is_a_hidden_alias_of_the_new_one() {
    let fleet = fixture("fleet.json");
    let replay = ["replay", "--synthetic", "--requests", "40"];
    let saturate = [
        "sweep",
        "saturate",
        "--synthetic",
        "--requests",
        "40",
        "--rate-range",
        "1..200",
        "--tolerance",
        "0.2",
    ];
    let cases: Vec<(Vec<&str>, &str, &str, &str)> = vec![
        (replay.to_vec(), "--sla-ttft-ms", "--slo-ttft-ms", "150"),
        (replay.to_vec(), "--sla-tpot-ms", "--slo-tpot-ms", "7"),
        (replay.to_vec(), "--sla-e2e-ms", "--slo-e2e-ms", "900"),
        (saturate.to_vec(), "--sla-ttft-ms", "--slo-ttft-ms", "300"),
        (vec!["optimize"], "--slo", "--slo-ttft-ms", "50"),
        (vec!["pareto"], "--slo", "--slo-ttft-ms", "50"),
        (vec!["whatif"], "--slo", "--slo-ttft-ms", "50"),
        (
            vec!["simulate", "--n-s", "8", "--n-l", "8"],
            "--slo",
            "--slo-ttft-ms",
            "50",
        ),
        (
            vec!["compare-routers", "--n-s", "8", "--n-l", "8"],
            "--slo",
            "--slo-ttft-ms",
            "50",
        ),
        (
            vec!["simulate-fleet", &fleet],
            "--slo",
            "--slo-ttft-ms",
            "50",
        ),
        (vec!["tok-per-watt"], "--slo", "--slo-ttft-ms", "50"),
        (vec!["grid-flex"], "--slo", "--slo-ttft-ms", "50"),
        (vec!["disagg"], "--slo-ttft", "--slo-ttft-ms", "3000"),
        (vec!["disagg"], "--slo-tpot", "--slo-tpot-ms", "50"),
    ];
    for (args, old, new, value) in cases {
        let a = json_with(&args, old, value);
        let b = json_with(&args, new, value);
        assert_eq!(a, b, "{args:?}: {old} and {new} differ");
        // The value reached the run: without the flag the answer differs
        // (saturate refuses to run with no limit at all).
        // (tok-per-watt's default sizing meets any of these targets alike.)
        let o = aisim(&[&args[..], &["--format", "json"]].concat());
        if o.status.success() && args[0] != "tok-per-watt" {
            let default = without_host(&stdout(&o));
            assert_ne!(default, b, "{args:?}: {new} {value} changed nothing");
        }
    }
    // A replay's thresholds land in its report.
    let v = json_with(&replay, "--sla-ttft-ms", "150");
    assert_eq!(v["sla"]["ttft_ms"], 150.0);
    // sweep merge's limits parse under both names: a bad value is named by
    // the new flag either way.
    for flag in ["--sla-ttft-ms", "--slo-ttft-ms"] {
        let o = aisim(&["sweep", "merge", "x", "--best", flag, "abc"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("--slo-ttft-ms <MS>"), "{}", stderr(&o));
    }
    // The old names are hidden: help shows only the new ones.
    for cmd in [
        &["replay"][..],
        &["sweep", "saturate"],
        &["sweep", "merge"],
        &["optimize"],
        &["disagg"],
        &["whatif"],
    ] {
        let o = aisim(&[cmd, &["--help"]].concat());
        let help = stdout(&o);
        assert!(help.contains("--slo-ttft-ms"), "{cmd:?}: {help}");
        for old in ["--sla-", "--slo <", "--slo-ttft <", "--slo-tpot <"] {
            assert!(!help.contains(old), "{cmd:?} shows {old}: {help}");
        }
    }
}

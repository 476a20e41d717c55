//! `aisim replay --seeds N`: the JSON `seeds` section, its determinism, the
//! first seed's report unchanged, and the flag refused where it does nothing.

mod common;

use common::{aisim, stderr, stdout, without_host};

const SMALL: [&str; 8] = [
    "replay",
    "--synthetic",
    "--requests",
    "40",
    "--rate",
    "20",
    "--workers",
    "2",
];

fn replay_json(extra: &[&str]) -> String {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--format", "json"]);
    let o = aisim(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn the_seeds_section_is_deterministic_and_leaves_the_first_report_alone() {
    let a = replay_json(&["--seeds", "5", "--seed", "9"]);
    let b = replay_json(&["--seeds", "5", "--seed", "9"]);
    assert_eq!(
        without_host(&a),
        without_host(&b),
        "byte-identical outside host"
    );
    let mut with = without_host(&a);
    let seeds = with.as_object_mut().unwrap().remove("seeds").unwrap();
    assert_eq!(
        with,
        without_host(&replay_json(&["--seed", "9"])),
        "the report is seed 9's own"
    );
    assert_eq!(
        (seeds["n"].as_u64(), seeds["first_seed"].as_u64()),
        (Some(5), Some(9))
    );
    let metrics = seeds["metrics"].as_object().unwrap();
    for key in [
        "ttft_ms.p99",
        "e2e_ms.p90",
        "tpot_ms.mean",
        "throughput.output_tok_s",
    ] {
        let m = &metrics[key];
        let (lo, mean, hi) = (
            m["ci95_low"].as_f64().unwrap(),
            m["mean"].as_f64().unwrap(),
            m["ci95_high"].as_f64().unwrap(),
        );
        assert!(lo < mean && mean < hi, "{key}: {m}");
    }
    let offered = &metrics["outcomes.offered"];
    assert_eq!(
        offered,
        &serde_json::json!({"mean": 40.0, "ci95_low": 40.0, "ci95_high": 40.0})
    );
    assert!(!metrics.contains_key("host.wall_s"));
}

#[test]
fn one_seed_gives_the_report_s_own_figures_as_points() {
    let v: serde_json::Value = serde_json::from_str(&replay_json(&["--seeds", "1"])).unwrap();
    let p99 = &v["latency"]["ttft_ms"]["p99"];
    let m = &v["seeds"]["metrics"]["ttft_ms.p99"];
    assert!(p99.is_f64());
    assert_eq!(
        (&m["mean"], &m["ci95_low"], &m["ci95_high"]),
        (p99, p99, p99)
    );
}

#[test]
fn the_table_shows_the_seeds() {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&["--seeds", "3"]);
    let o = aisim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("Seeds: mean and 95 % Student-t interval over 3 seed(s), 42 ..= 44 (the tables above are seed 42's"),
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("outcomes.offered "))
        .unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["outcomes.offered", "40.000", "40.000", "40.000"]
    );
}

#[test]
fn a_random_router_on_a_trace_takes_seeds() {
    let o = aisim(&[
        "replay", "--router", "random", "--seeds", "2", "--format", "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["seeds"]["n"], 2);
}

#[test]
fn seeds_where_they_do_nothing_or_out_of_range_exit_2_naming_the_flag() {
    let cases: [(&[&str], &str); 9] = [
        (&["replay", "--synthetic", "--constant-rate", "--input-tokens", "100", "--output-tokens", "10", "--seeds", "3"],
         "error: --seeds has no effect on a generated workload with the round_robin router: nothing is random (the seed draws"),
        (&["replay", "--synthetic", "--constant-rate", "--input-tokens", "100", "--output-tokens", "10", "--seed", "3"],
         "error: --seed has no effect on a generated workload"),
        (&["replay", "--seeds", "3"], "error: --seeds has no effect on the built-in demo trace with the round_robin router: nothing is random"),
        (&["replay", "--router", "least_loaded", "--seeds", "3"], "error: --seeds has no effect on the built-in demo trace with the least_loaded router"),
        (&["replay", "--synthetic", "--seeds", "0"], "error: --seeds 0: allowed: 1 ..= 10000"),
        (&["replay", "--synthetic", "--seeds", "10001"], "error: --seeds 10001: allowed: 1 ..= 10000"),
        (&["replay", "--synthetic", "--seeds", "-1"], "'--seeds <N>'"),
        (&["replay", "--synthetic", "--seeds", "2.5"], "'--seeds <N>'"),
        (&["replay", "--synthetic", "--print-spec", "--seeds", "2"], "error: --seeds has no effect with --print-spec"),
    ];
    for (args, want) in cases {
        let o = aisim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}

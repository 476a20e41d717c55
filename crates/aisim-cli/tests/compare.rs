//! `aisim compare`: deltas between two reports, warnings, refusals; and the
//! per-request file's format chosen by its extension.

mod common;

use common::{aisim, fixture, stderr, stdout, temp_dir};

/// Replays with `args` and writes the JSON report to `dir/name`.
fn report(dir: &std::path::Path, name: &str, args: &[&str]) -> String {
    let path = dir.join(name).to_str().unwrap().to_string();
    let mut all = vec!["replay", "-q", "--out", &path];
    all.extend_from_slice(args);
    let o = aisim(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    path
}

fn comparison(a: &str, b: &str) -> serde_json::Value {
    let o = aisim(&["compare", a, b, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn two_runs_of_the_same_spec_differ_by_nothing_outside_host() {
    let dir = temp_dir("compare-same");
    let args = ["--synthetic", "--requests", "200", "--timeout", "2"];
    let (a, b) = (report(&dir, "a.json", &args), report(&dir, "b.json", &args));
    let c = comparison(&a, &b);
    assert_eq!(c["warnings"], serde_json::json!([]));
    let metrics = c["metrics"].as_array().unwrap();
    assert!(
        metrics.len() > 100,
        "every figure of the report: {}",
        metrics.len()
    );
    for m in metrics {
        let name = m["metric"].as_str().unwrap();
        assert!(!name.starts_with("host."), "{name}");
        assert_eq!(m["a"], m["b"], "{name}");
        if !m["a"].is_null() {
            assert_eq!(
                (m["delta"].as_f64(), m["delta_pct"].as_f64()),
                (Some(0.0), Some(0.0)),
                "{name}"
            );
        }
    }
}

#[test]
fn deltas_are_b_minus_a_and_differing_disciplines_are_warned_about() {
    let dir = temp_dir("compare-differ");
    let a = report(&dir, "a.json", &["--workers", "2"]);
    let b = report(&dir, "b.json", &["--workers", "4", "--timeout", "3"]);
    let c = comparison(&a, &b);
    let warnings = c["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].as_str().unwrap().contains("timeout_s"),
        "{warnings:?}"
    );
    let gpus = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "pools.workers.gpus")
        .unwrap();
    assert_eq!(
        [&gpus["a"], &gpus["b"], &gpus["delta"], &gpus["delta_pct"]],
        [2.0, 4.0, 2.0, 100.0]
            .map(serde_json::Value::from)
            .each_ref()
    );
    // The table says it too, above the figures.
    let o = aisim(&["compare", &a, &b]);
    let table = stdout(&o);
    let warning = table
        .find("warning: the disciplines differ")
        .expect("warned");
    assert!(warning < table.find("Headline figures").unwrap(), "{table}");
}

#[test]
fn the_table_leads_with_the_spec_differences_then_the_headline_figures() {
    let dir = temp_dir("compare-spec");
    let base = ["--synthetic", "--requests", "200"];
    let a = report(&dir, "a.json", &[&base[..], &["--workers", "2"]].concat());
    let b = report(
        &dir,
        "b.json",
        &[&base[..], &["--workers", "3", "--router", "least_loaded"]].concat(),
    );
    let c = comparison(&a, &b);
    // Field by field, both values, in the JSON.
    assert_eq!(
        c["spec_differences"],
        serde_json::json!([
            {"field": "router.policy", "a": "round_robin", "b": "least_loaded"},
            {"field": "topology.workers", "a": 2, "b": 3},
        ])
    );
    let all_metrics = c["metrics"].as_array().unwrap().len();
    let o = aisim(&["compare", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    let lines: Vec<&str> = table.lines().collect();
    // The runs, then what differs between their specs, then the figures.
    assert_eq!(&lines[..2], [format!("A: {a}"), format!("B: {b}")]);
    assert!(lines[3].starts_with("Spec differences"), "{table}");
    let row = |field: &str| -> Vec<&str> {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{field} ")))
            .unwrap_or_else(|| panic!("no {field} row: {table}"))
            .split_whitespace()
            .collect()
    };
    assert_eq!(
        row("router.policy"),
        ["router.policy", "round_robin", "least_loaded"]
    );
    assert_eq!(row("topology.workers"), ["topology.workers", "2", "3"]);
    let headline = lines.iter().position(|l| *l == "Headline figures").unwrap();
    assert!(
        headline
            > lines
                .iter()
                .position(|l| l.starts_with("topology.workers"))
                .unwrap()
    );
    // The headline: a few figures, among them TTFT p99 and the GPUs.
    let figures: Vec<&str> = lines[headline + 3..]
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(figures.len() < 40, "{figures:?}");
    for f in [
        "latency.ttft_ms.p99",
        "latency.tpot_ms.p99",
        "pools.workers.gpus",
        "outcomes.completed",
    ] {
        assert!(figures.contains(&f), "{f}: {figures:?}");
    }
    assert_eq!(row("pools.workers.gpus")[1..3], ["2", "3"]);
    let more = all_metrics - figures.len();
    assert!(
        table.contains(&format!("\n{more} more figures ("))
            && table.ends_with("--all shows every figure\n"),
        "{table}"
    );
    // --all: every figure, one row each.
    let o = aisim(&["compare", &a, &b, "--all"]);
    let every = stdout(&o);
    let start = every.find("Every figure\n").expect("titled");
    assert_eq!(every[start..].lines().count(), 3 + all_metrics, "{every}");
    assert!(every.contains("\nlatency.itl_ms.p999 "), "{every}");
    // Identical specs say so.
    let o = aisim(&["compare", &a, &a]);
    assert!(
        stdout(&o).contains("\nSpec differences: none (the two specs are identical)\n"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        comparison(&a, &a)["spec_differences"],
        serde_json::json!([])
    );
}

#[test]
fn a_file_that_is_not_a_replay_report_is_refused_by_name() {
    let dir = temp_dir("compare-bad");
    let good = report(&dir, "a.json", &["--synthetic", "--requests", "20"]);
    let fleet = fixture("fleet.json");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"schema_version\": 1,\n  oops}").unwrap();
    let other = dir.join("other.json");
    std::fs::write(&other, "{\"schema_version\": 1, \"spec\": 3}").unwrap();
    for (bad, says) in [
        (fleet.as_str(), "no `schema_version`"),
        (broken.to_str().unwrap(), "line 2 column"),
        (other.to_str().unwrap(), "invalid type"),
        ("/nonexistent/r.json", "cannot read /nonexistent/r.json"),
    ] {
        let o = aisim(&["compare", &good, bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(bad) && err.contains(says), "{err}");
    }
}

#[test]
fn per_request_records_are_csv_when_the_file_ends_in_csv() {
    let dir = temp_dir("per-request-csv");
    let (csv, jsonl) = (dir.join("r.CSV"), dir.join("r.jsonl"));
    let trace = fixture("traces/bailian_small.jsonl");
    for file in [&csv, &jsonl] {
        let o = aisim(&[
            "replay",
            &trace,
            "-q",
            "--out",
            "/dev/null",
            "--per-request",
            file.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let csv = std::fs::read_to_string(csv).unwrap();
    let jsonl = std::fs::read_to_string(jsonl).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(
        &header[..5],
        ["id", "line", "chat_id", "request_id", "session_id"]
    );
    assert_eq!(csv.lines().count(), 1 + jsonl.lines().count());
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(
        keys.len(),
        header.len(),
        "the same fields, every key present"
    );
}

#[test]
fn requests_the_router_queue_refused_were_never_placed() {
    // One worker, a router queue of 3 behind a threshold of 1 and a 1 s
    // timeout: the demo overflows the queue.
    let dir = temp_dir("per-request-unplaced");
    let records = dir.join("records.jsonl");
    let o = aisim(&[
        "replay",
        "-q",
        "--workers",
        "1",
        "--router-queue-threshold",
        "1",
        "--router-queue-capacity",
        "3",
        "--timeout",
        "1",
        "--per-request",
        records.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcomes = &report["outcomes"];
    assert_eq!(
        rows.len() as u64,
        outcomes["offered"].as_u64().unwrap(),
        "a record for every offered request"
    );
    let refused: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["reject_kind"] == "router_queue_full")
        .collect();
    let full = report["rejections"]["router_queue_full"].as_u64().unwrap();
    assert!(full > 0, "the queue overflowed");
    assert_eq!(refused.len() as u64, full);
    for r in &refused {
        assert_eq!(r["outcome"], "rejected", "{r}");
        assert!(
            r["reject_reason"]
                .as_str()
                .is_some_and(|w| w.contains("router queue was full")),
            "{r}"
        );
        assert!(r["worker"].is_null() && r["rank"].is_null(), "{r}");
        assert!(r["first_admit_ms"].is_null(), "{r}");
    }
    // Whatever was never placed was never admitted; what was admitted has
    // its worker and rank.
    for r in &rows {
        assert_eq!(r["worker"].is_null(), r["rank"].is_null(), "{r}");
        if r["worker"].is_null() {
            assert!(r["first_admit_ms"].is_null(), "{r}");
        }
        if !r["first_admit_ms"].is_null() {
            assert_eq!(r["worker"], 0, "{r}");
        }
    }
    // The records' outcomes add up to the report's.
    for outcome in ["completed", "timed_out", "rejected", "incomplete"] {
        let n = rows.iter().filter(|r| r["outcome"] == outcome).count() as u64;
        assert_eq!(n, outcomes[outcome].as_u64().unwrap(), "{outcome}");
    }
    assert!(outcomes["timed_out"].as_u64().unwrap() > 0);
}

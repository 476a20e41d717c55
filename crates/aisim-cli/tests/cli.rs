//! The `aisim` binary as a user runs it: exit codes, errors, output forms.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn aisim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aisim"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aisim-cli-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
        .display()
        .to_string()
}

fn without_host(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.as_object_mut().unwrap().remove("host");
    v
}

#[test]
fn the_demo_replays_by_default() {
    let o = aisim(&["replay", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcomes"]["completed"], 240);
    assert_eq!(v["spec"]["topology"]["workers"], 4);
    for key in [
        "schema_version",
        "discipline",
        "latency",
        "latency_offered",
        "throughput",
        "cache",
        "duration_s",
        "pools",
        "host",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in [
        "mean", "min", "max", "p50", "p75", "p90", "p95", "p99", "p999", "std", "count",
    ] {
        assert!(
            v["latency"]["ttft_ms"].get(key).is_some(),
            "missing ttft_ms.{key}"
        );
    }
    let table = stdout(&aisim(&["replay"]));
    assert!(table.contains("Outcomes") && table.contains("TTFT"));
}

#[test]
fn a_bad_trace_row_exits_2_naming_file_line_and_field() {
    let p = temp("bad.jsonl", "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 1, \"input_length\": -5, \"output_length\": 1}\n");
    let o = aisim(&["replay", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("bad.jsonl:2") && e.contains("input_length"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn usage_and_configuration_errors_exit_2() {
    for args in [
        &["replay", "--workers", "0"][..],
        &["replay", "--timing", "fixed:10"],
        &["replay", "--profile", "nonesuch"],
        &["replay", "--block-size", "0"],
        &["replay", "--dispatch", "sometimes"],
        &["replay", "/no/such/trace.jsonl"],
        &["replay", "--timing", "table:/no/such/table.json"],
        &["replay", "--no-such-flag"],
    ] {
        let o = aisim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
    }
}

#[test]
fn print_spec_then_spec_reproduces_the_run() {
    let o = aisim(&[
        "replay",
        "--workers",
        "3",
        "--backend",
        "sglang",
        "--print-spec",
    ]);
    assert!(o.status.success());
    let spec = temp("run.json", &stdout(&o));
    let a = aisim(&[
        "replay",
        "--workers",
        "3",
        "--backend",
        "sglang",
        "--format",
        "json",
    ]);
    let b = aisim(&[
        "replay",
        "--spec",
        spec.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(without_host(&stdout(&a)), without_host(&stdout(&b)));
    // An unknown field in a spec file is an error naming it.
    let bad = temp(
        "bad-spec.json",
        &stdout(&o).replacen("\"seed\"", "\"sead\"", 1),
    );
    let o = aisim(&["replay", "--spec", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("sead"));
}

#[test]
fn out_and_per_request_files() {
    let dir = std::env::temp_dir().join(format!("aisim-cli-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.json");
    let per = dir.join("r.jsonl");
    let trace = fixture("traces/azure_small.csv");
    let o = aisim(&[
        "replay",
        &trace,
        "--out",
        out.to_str().unwrap(),
        "--per-request",
        per.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["outcomes"]["completed"], 3);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&per)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["outcome"], "completed");
}

#[test]
fn burstgpt_skips_are_reported() {
    let o = aisim(&[
        "replay",
        &fixture("traces/burstgpt_small.csv"),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["workload"]["skipped_rows"], 2);
    assert_eq!(v["outcomes"]["offered"], 3);
}

#[test]
fn gen_trace_writes_a_trace_that_replays() {
    let dir = std::env::temp_dir().join(format!("aisim-cli-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("gen.jsonl");
    let o = aisim(&[
        "gen-trace",
        "--requests",
        "20",
        "--turns",
        "3",
        "--think-ms",
        "100",
        "--out",
        p.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 60);
    let o = aisim(&["replay", p.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcomes"]["completed"], 60);
    assert_eq!(v["sessions"]["sessions"], 20);
    // Same seed, same bytes.
    let a = stdout(&aisim(&["gen-trace", "--requests", "5"]));
    assert_eq!(a, stdout(&aisim(&["gen-trace", "--requests", "5"])));
}

#[test]
fn profiles_list_as_table_and_json() {
    let o = aisim(&["profiles", "--format", "json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let keys: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"a100") && keys.contains(&"h100/llama-3.1-8b/tp1"));
    assert!(stdout(&aisim(&["profiles"])).contains("Profiles"));
}

#[test]
fn a_profile_sets_timing_and_kv_capacity() {
    let o = aisim(&["replay", "--profile", "h100/llama-3.1-8b", "--print-spec"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["timing"]["kind"], "iteration");
    // 29,707 blocks of 16 tokens = 475,312 tokens (7,426 blocks of 64), and
    // tp 1: the profile's facts, whatever the block size.
    assert_eq!(v["engine"]["kv_budget_tokens"], 475_312);
    assert_eq!(v["engine"]["num_gpu_blocks"], serde_json::Value::Null);
    assert_eq!(v["engine"]["tp_size"], 1);
    let o = aisim(&[
        "replay",
        "--profile",
        "h200/llama-3.1-70b/tp2",
        "--print-spec",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["engine"]["tp_size"], 2);
    let table = stdout(&aisim(&[
        "replay",
        "--profile",
        "h200/llama-3.1-70b/tp2",
        "--workers",
        "2",
    ]));
    assert!(
        table.contains("(dp 1 x tp 2: 2 GPUs each, 4 in all)"),
        "{table}"
    );
    let o = aisim(&[
        "replay",
        "--profile",
        "h200/llama-3.1-70b/tp2",
        "--tp-size",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("engine.tp_size") && e.contains("tp 2"), "{e}");
}

#[test]
fn the_block_size_keeps_the_kv_capacity_in_tokens_and_num_gpu_blocks_overrides_it() {
    let pool = |args: &[&str]| {
        let o = aisim(&[&["replay", "--format", "json"], args].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let p = &v["pools"][0];
        (
            p["kv_capacity_tokens"].as_u64().unwrap(),
            p["kv_capacity_blocks"].as_u64().unwrap(),
        )
    };
    assert_eq!(pool(&[]), (1_048_576, 16_384));
    assert_eq!(pool(&["--block-size", "16"]), (1_048_576, 65_536));
    assert_eq!(
        pool(&["--backend", "sglang", "--block-size", "1"]),
        (262_144, 262_144)
    );
    assert_eq!(
        pool(&["--block-size", "16", "--num-gpu-blocks", "1000"]),
        (16_000, 1000)
    );
    let o = aisim(&["replay", "--dp-size", "5000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("dp_size"), "{}", stderr(&o));
}

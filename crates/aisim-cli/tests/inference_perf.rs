//! `aisim measured import --from inference-perf` on run folders the test
//! writes in the client's layout (and, ignored, on the real H100 runs of
//! `../shared/real/inference-perf`).

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

/// A latency distribution in the client's shape (seconds).
fn dist(mean: f64) -> Value {
    json!({"mean": mean, "min": mean * 0.8, "median": mean, "p90": mean * 1.1, "p99": mean * 1.3, "max": mean * 1.5})
}

/// One stage's (or the summary's) lifecycle metrics.
fn metrics(count: u64, ok: u64, ttft_s: f64, e2e_s: f64) -> Value {
    json!({
        "load_summary": {"count": count, "requested_rate": 5.0, "achieved_rate": 5.0},
        "successes": {
            "count": ok,
            "latency": {
                "request_latency": dist(e2e_s),
                "time_to_first_token": dist(ttft_s),
                "time_per_output_token": dist(0.004),
                "inter_token_latency": dist(0.004)
            },
            "prompt_len": {"mean": 133.0, "median": 133.0},
            "output_len": {"mean": 15.2, "median": 16.0}
        },
        "failures": {"count": count - ok}
    })
}

const CONFIG: &str = "data:
  type: shared_prefix
  shared_prefix:
    num_groups: 2
    num_prompts_per_group: 5
    system_prompt_len: 64
    question_len: 64
    output_len: 16
load:
  type: constant
  stages:
  - rate: 5.0
    duration: 4
  - rate: 10.0
    duration: 2
";

/// A two-stage run folder (20 requests at 5/s, then 20 at 10/s).
fn run_folder(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    std::fs::write(results.join("config.yaml"), CONFIG).unwrap();
    let write = |file: &str, v: Value| std::fs::write(results.join(file), v.to_string()).unwrap();
    write("stage_0_lifecycle_metrics.json", metrics(20, 20, 0.05, 0.2));
    write(
        "stage_1_lifecycle_metrics.json",
        metrics(20, 20, 0.06, 0.26),
    );
    write(
        "summary_lifecycle_metrics.json",
        metrics(40, 40, 0.055, 0.23),
    );
    std::fs::write(
        dir.join("exp-config.yaml"),
        "model: mistralai/Mixtral-8x7B-v0.1\ntensor_parallelism: 2\nmax_model_len: 4096\nmax_num_batched_tokens: 1024\nmax_num_seqs: 64\n",
    )
    .unwrap();
    dir
}

/// The run's measured run, in a folder of its own (the run folder's files
/// are the import's inputs).
fn out(dir: &Path) -> PathBuf {
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    out
}

fn import(dir: &Path, extra: &[&str]) -> std::process::Output {
    let out = out(dir).join("run.json");
    let mut args = vec![
        "measured",
        "import",
        "--from",
        "inference-perf",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    aisim(&args)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The rows of a JSON-lines file.
fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_stage_becomes_a_summary_only_run_over_http_with_the_earlier_stages_as_warm_up() {
    let dir = run_folder("ip-stage");
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let trace = out(&dir).join("run.trace.jsonl");
    assert!(
        stderr(&o).contains("(20 requests)")
            && stderr(&o).ends_with(&format!("its trace {} beside it\n", trace.display())),
        "{}",
        stderr(&o)
    );
    let run = read(&out(&dir).join("run.json"));
    assert_eq!(run["served"], "http_streaming");
    assert!(run.get("requests").is_none(), "summary-only");
    // The client's measurements, in ms; the per-token time from the means.
    let m = &run["measured"];
    assert_eq!(m["completed"], 20);
    assert!(m.get("offered").is_none());
    assert!((m["ttft_ms"]["mean"].as_f64().unwrap() - 60.0).abs() < 1e-9);
    assert!((m["ttft_ms"]["p99"].as_f64().unwrap() - 78.0).abs() < 1e-9);
    assert!((m["e2e_ms"]["p50"].as_f64().unwrap() - 260.0).abs() < 1e-9);
    let tpot = m["tpot_ms"]["mean"].as_f64().unwrap();
    assert!((tpot - 200.0 / 15.0).abs() < 1e-9, "{tpot}");
    // The serving limits and tensor parallelism of exp-config.yaml.
    let spec = &run["spec"];
    assert_eq!(spec["timing"]["profile"], "h100/mixtral-8x7b/tp2");
    assert_eq!(spec["engine"]["max_num_seqs"], 64);
    assert_eq!(spec["engine"]["max_num_batched_tokens"], 1024);
    assert_eq!(spec["engine"]["max_model_len"], 4096);
    assert_eq!(spec["discipline"]["warmup_requests"], 20);
    // Both stages' requests, back to back, every prompt 133 tokens long;
    // request 10 repeats request 0's prompt whole (10 prompts).
    let rows = read_lines(&out(&dir).join("run.trace.jsonl"));
    assert_eq!(rows.len(), 40);
    // Stage 0's 20 requests from 1 s to its end at 5 s (exponential gaps
    // rescaled to its 4 s); stage 1 after stage 0's end, its slowest request
    // (0.3 s) and a second: from 6.3 s to 8.3 s.
    let at = |i: usize| rows[i]["timestamp"].as_f64().unwrap();
    assert!((0..39).all(|i| at(i) <= at(i + 1)));
    assert!(
        at(0) > 1000.0 && (at(19) - 5000.0).abs() < 1e-6,
        "{} {}",
        at(0),
        at(19)
    );
    assert!(
        at(20) > 6300.0 && (at(39) - 8300.0).abs() < 1e-6,
        "{} {}",
        at(20),
        at(39)
    );
    assert!(rows
        .iter()
        .all(|r| r["input_length"] == 133 && r["output_length"] == 16));
    assert_eq!(rows[10]["hash_ids"], rows[0]["hash_ids"]);
    assert_ne!(rows[1]["hash_ids"], rows[0]["hash_ids"]);
    // It validates: the replay's cohort is the stage's 20 requests.
    let o = aisim(&[
        "validate",
        out(&dir).join("run.json").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let completed = v["runs"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "completed")
        .unwrap()
        .clone();
    assert_eq!(completed["simulated"], 20.0);
}

#[test]
fn the_summary_has_no_warm_up_and_failed_requests_are_offered() {
    let dir = run_folder("ip-summary");
    let o = import(
        &dir,
        &["--stage", "summary", "--profile", "h100/mixtral-8x7b/tp2"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = read(&out(&dir).join("run.json"));
    assert_eq!(run["spec"]["discipline"]["warmup_requests"], 0);
    assert_eq!(run["measured"]["completed"], 40);
    // An overloaded stage: 20 sent, 12 completed.
    let results = dir.join("results");
    std::fs::write(
        results.join("stage_0_lifecycle_metrics.json"),
        metrics(20, 12, 0.5, 3.0).to_string(),
    )
    .unwrap();
    let o = import(&dir, &["--stage", "0", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("8 of 20 requests failed"),
        "{}",
        stderr(&o)
    );
    let run = read(&out(&dir).join("run.json"));
    assert_eq!(
        (
            run["measured"]["offered"].clone(),
            run["measured"]["completed"].clone()
        ),
        (json!(20), json!(12))
    );
    let o = aisim(&["validate", out(&dir).join("run.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn what_cannot_be_rebuilt_is_an_error_naming_the_file_and_field() {
    let dir = run_folder("ip-errors");
    let profile = ["--profile", "h100/mixtral-8x7b"];
    let refused = |extra: &[&str], needles: &[&str]| {
        let o = import(&dir, extra);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {e}");
        for n in needles {
            assert!(e.contains(n), "{extra:?}: `{n}` not in {e}");
        }
    };
    refused(&profile, &["--from inference-perf needs --stage"]);
    refused(&["--stage", "0"], &["needs --profile HARDWARE/MODEL"]);
    refused(
        &["--stage", "x", "--profile", "h100/mixtral-8x7b"],
        &["--stage `x`"],
    );
    refused(
        &["--stage", "2", "--profile", "h100/mixtral-8x7b"],
        &["config.yaml", "--stage 2: the run has 2 stage(s)"],
    );
    refused(
        &["--stage", "0", "--profile", "h100/mixtral-8x7b/tp4"],
        &["exp-config.yaml", "tensor_parallelism", "tp4"],
    );
    let config = dir.join("results/config.yaml");
    for (from, to, field) in [
        ("type: shared_prefix", "type: random", "data.type"),
        ("type: constant", "type: poisson", "load.type"),
        (
            "num_groups: 2",
            "num_groups: 0",
            "data.shared_prefix.num_groups",
        ),
    ] {
        std::fs::write(&config, CONFIG.replace(from, to)).unwrap();
        refused(
            &["--stage", "0", "--profile", "h100/mixtral-8x7b"],
            &["config.yaml", field],
        );
    }
    // Later clients' names for the prompt set, and no system prompt at all.
    let aliased = CONFIG
        .replace("num_groups:", "num_unique_system_prompts:")
        .replace("num_prompts_per_group:", "num_users_per_system_prompt:")
        .replace("system_prompt_len: 64", "system_prompt_len: 0");
    std::fs::write(&config, aliased).unwrap();
    let o = import(&dir, &["--stage", "0", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(&config, CONFIG).unwrap();
    let stage = dir.join("results/stage_0_lifecycle_metrics.json");
    let mut m = metrics(20, 20, 0.05, 0.2);
    m["successes"].as_object_mut().unwrap().remove("prompt_len");
    std::fs::write(&stage, m.to_string()).unwrap();
    refused(
        &["--stage", "0", "--profile", "h100/mixtral-8x7b"],
        &[
            "stage_0_lifecycle_metrics.json",
            "successes.prompt_len.mean",
        ],
    );
    // --stage means nothing to other sources.
    let o = aisim(&[
        "measured", "import", "x.jsonl", "--out", "y.json", "--stage", "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--stage has no effect here"),
        "{}",
        stderr(&o)
    );
    // Without results/config.yaml, profile.yaml (what was asked) is read, with a warning.
    std::fs::write(&stage, metrics(20, 20, 0.05, 0.2).to_string()).unwrap();
    std::fs::rename(&config, dir.join("profile.yaml")).unwrap();
    let o = import(&dir, &["--stage", "0", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("is absent: reading"), "{}", stderr(&o));
}

/// Imports every stage of the real H100 runs into `out`: (run folder name,
/// stage, measured-run file).
fn import_shared_stages(out: &Path) -> Vec<(String, u32, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real/inference-perf");
    assert!(
        root.is_dir(),
        "{} is missing: these tests need ../shared",
        root.display()
    );
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("2026"))
        .collect();
    dirs.sort();
    let mut runs = Vec::new();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let profile = if name.contains("mixtral") {
            "h100/mixtral-8x7b".to_string()
        } else {
            format!(
                "h100/{}",
                root.join("models/codellama-34b-instruct-hf/config.json")
                    .display()
            )
        };
        for stage in 0..2u32 {
            if !dir
                .join(format!("results/stage_{stage}_lifecycle_metrics.json"))
                .is_file()
            {
                continue;
            }
            let run = out.join(format!("{name}-{stage}.json"));
            let stage_arg = stage.to_string();
            let o = aisim(&[
                "measured",
                "import",
                "--from",
                "inference-perf",
                dir.to_str().unwrap(),
                "--stage",
                &stage_arg,
                "--profile",
                &profile,
                "--out",
                run.to_str().unwrap(),
            ]);
            assert_eq!(o.status.code(), Some(0), "{name} {stage}: {}", stderr(&o));
            runs.push((name.clone(), stage, run));
        }
    }
    runs
}

/// The signed error, %, of a metric's mean in a validation report's run.
fn mean_error(run: &Value, metric: &str) -> Option<f64> {
    run["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == metric && m["stat"] == "mean")
        .and_then(|m| m["error_pct"].as_f64())
}

fn median_abs(v: &[f64]) -> f64 {
    let mut a: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    a.sort_by(f64::total_cmp);
    let n = a.len();
    if n % 2 == 1 {
        a[n / 2]
    } else {
        (a[n / 2 - 1] + a[n / 2]) / 2.0
    }
}

/// The real H100 runs, zero-shot (nothing fitted): issue 27's targets over
/// the ten completed stages (median |mean E2E| ≤ 15 %, none above 25 %;
/// median |mean TTFT| ≤ 25 %), and each stage's mean E2E and per-token
/// time within 10 %; the overloaded `reasoning` runs import, and their
/// completions are compared.
#[test]
#[ignore = "needs ../shared"]
fn the_shared_h100_runs_import_and_validate_zero_shot() {
    let out = temp_dir("ip-shared");
    let runs = import_shared_stages(&out);
    assert_eq!(runs.len(), 12, "10 completed stages and 2 overloaded runs");
    let (mut e2e, mut ttft) = (Vec::new(), Vec::new());
    for (name, stage, run) in &runs {
        let o = aisim(&["validate", run.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{name} {stage}: {}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let r = &v["runs"][0];
        if name.contains("reasoning") {
            continue;
        }
        for metric in ["e2e_ms", "tpot_ms"] {
            let e = mean_error(r, metric).unwrap();
            assert!(
                e.abs() <= 10.0,
                "{name} stage {stage}: {metric} mean off by {e:.1} %"
            );
        }
        e2e.push(mean_error(r, "e2e_ms").unwrap());
        ttft.push(mean_error(r, "ttft_ms").unwrap());
    }
    assert_eq!(e2e.len(), 10);
    assert!(median_abs(&e2e) <= 15.0, "{e2e:?}");
    assert!(e2e.iter().all(|e| e.abs() <= 25.0), "{e2e:?}");
    assert!(median_abs(&ttft) <= 25.0, "{ttft:?}");
}

/// The real H100 runs held out: for each run with two stages, calibrated
/// on one stage (its summary only) and validated on the other, both ways
/// round; issue 27's targets: median |mean E2E| ≤ 5 % and none above 10 %,
/// median |mean TTFT| ≤ 10 %, median |mean TPOT| ≤ 5 %.
#[test]
#[ignore = "needs ../shared"]
fn calibration_on_one_h100_stage_predicts_the_other() {
    let out = temp_dir("ip-holdout");
    let runs = import_shared_stages(&out);
    let (mut e2e, mut ttft, mut tpot) = (Vec::new(), Vec::new(), Vec::new());
    for (name, stage, fit_on) in runs.iter().filter(|r| r.1 == 0) {
        let Some((_, _, other)) = runs.iter().find(|r| &r.0 == name && r.1 == 1) else {
            continue;
        };
        for (a, b) in [(fit_on, other), (other, fit_on)] {
            let fitted = out.join("fitted.json");
            let o = aisim(&[
                "calibrate",
                a.to_str().unwrap(),
                "--holdout",
                b.to_str().unwrap(),
                "--out",
                fitted.to_str().unwrap(),
                "--format",
                "json",
            ]);
            assert_eq!(o.status.code(), Some(0), "{name} {stage}: {}", stderr(&o));
            let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
            let r = &v["holdout"]["calibrated"]["runs"][0];
            e2e.push(mean_error(r, "e2e_ms").unwrap());
            ttft.push(mean_error(r, "ttft_ms").unwrap());
            tpot.push(mean_error(r, "tpot_ms").unwrap());
        }
    }
    assert_eq!(e2e.len(), 8, "four runs, both ways round");
    assert!(median_abs(&e2e) <= 5.0, "{e2e:?}");
    assert!(e2e.iter().all(|e| e.abs() <= 10.0), "{e2e:?}");
    assert!(median_abs(&ttft) <= 10.0, "{ttft:?}");
    assert!(median_abs(&tpot) <= 5.0, "{tpot:?}");
}

/// The client's per-request log for `run_folder`'s 40 requests: request
/// `i` sent at `0.2·i` s (out of order in the file), prompts of `130 + i%3`
/// tokens, 16 tokens out, first token 50 ms and last 250 ms after sending;
/// `failed` of stage 1's requests with an error. In the layout of clients
/// of February 2026 (token times in `info`).
fn per_request_log(failed: usize) -> Value {
    let rows: Vec<Value> = (0..40)
        .rev()
        .map(|i| {
            let start = 1000.0 + 0.2 * i as f64;
            let error = (i >= 40 - failed).then(|| json!({"error_type": "timeout", "error_msg": "x"}));
            json!({
                "start_time": start,
                "end_time": start + 0.25,
                "request": "a prompt's text",
                "response": "the answer",
                "info": {
                    "input_tokens": 130 + i % 3,
                    "output_tokens": 16,
                    "output_token_times": (0..16).map(|k| start + 0.05 + 0.2 * k as f64 / 15.0).collect::<Vec<_>>(),
                },
                "error": error,
            })
        })
        .collect();
    Value::Array(rows)
}

#[test]
fn a_per_request_log_gives_the_real_send_times_lengths_and_latencies() {
    let dir = run_folder("ip-logged");
    let log = dir.join("results/per_request_lifecycle_metrics.json");
    std::fs::write(&log, per_request_log(0).to_string()).unwrap();
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = read(&out(&dir).join("run.json"));
    assert_eq!(run["requests"], "run.requests.jsonl");
    let rows = read_lines(&out(&dir).join("run.trace.jsonl"));
    assert_eq!(rows.len(), 40);
    for (i, r) in rows.iter().enumerate() {
        let at = r["timestamp"].as_f64().unwrap();
        assert!((at - 200.0 * i as f64).abs() < 1e-6, "row {i}: {at}");
        assert_eq!(r["input_length"], 130 + i % 3);
        assert_eq!(r["output_length"], 16);
    }
    // Stage 1's 20 requests, each its TTFT and E2E, in the generic shape.
    let reqs = read_lines(&out(&dir).join("run.requests.jsonl"));
    assert_eq!(reqs.len(), 20);
    for r in &reqs {
        let send = r["send_s"].as_f64().unwrap();
        let ttft = r["first_token_s"].as_f64().unwrap() - send;
        let e2e = r["end_s"].as_f64().unwrap() - send;
        assert!(
            (ttft - 0.05).abs() < 1e-9 && (e2e - 0.25).abs() < 1e-9,
            "{r}"
        );
    }
    // It validates and calibrates with them.
    let runfile = out(&dir).join("run.json");
    let o = aisim(&["validate", runfile.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fitted = out(&dir).join("fitted.json");
    let o = aisim(&[
        "calibrate",
        runfile.to_str().unwrap(),
        "--out",
        fitted.to_str().unwrap(),
        "--max-evaluations",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fit: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        fit["fit"]["fitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "pass_ms"),
        "per-request data pin a per-pass constant: {fit}"
    );
    // The first stage of the two: the log's later stage is left out.
    let o = import(&dir, &["--stage", "0", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_lines(&out(&dir).join("run.trace.jsonl"));
    assert_eq!(rows.len(), 20);
    assert_eq!(read_lines(&out(&dir).join("run.requests.jsonl")).len(), 20);
    // A failed request leaves the summary alone as the measurement.
    std::fs::write(&log, per_request_log(2).to_string()).unwrap();
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&runfile).get("requests").is_none());
    // A log of another run, or a bad row, is an error naming the field.
    let mut short = per_request_log(0);
    short.as_array_mut().unwrap().pop();
    std::fs::write(&log, short.to_string()).unwrap();
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("39 requests logged")
            && stderr(&o).contains("per_request_lifecycle_metrics.json"),
        "{}",
        stderr(&o)
    );
    let mut bad = per_request_log(0);
    bad[3]["end_time"] = json!(1.0);
    std::fs::write(&log, bad.to_string()).unwrap();
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("[3].end_time"), "{}", stderr(&o));
    let mut no_len = per_request_log(0);
    no_len[5]["info"]["input_tokens"] = json!(0);
    std::fs::write(&log, no_len.to_string()).unwrap();
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("[5].info.input_tokens"),
        "the row's place in the file: {}",
        stderr(&o)
    );
    std::fs::write(&log, "[{\"start_time\": 1,").unwrap();
    let o = import(&dir, &["--stage", "1", "--profile", "h100/mixtral-8x7b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("per_request_lifecycle_metrics.json"),
        "{}",
        stderr(&o)
    );
}

//! `aisim measured import --from FORMAT` on the load generators' result
//! files of `fixtures/measured/` (written by hand from each tool's
//! documented schema): the import, `validate` of the imported run, the
//! round trip through the generic shape, and every error path of each
//! reader (exit 2, naming the file, the line or JSON path, and the field).

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

const PROFILE: &str = "h100/llama-3.1-8b";

/// `aisim measured import --from FROM INPUT --profile h100/llama-3.1-8b
/// --out DIR/NAME.json`: the run's path.
fn import(from: &str, input: &str, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.json"));
    let o = aisim(&[
        "measured",
        "import",
        "--from",
        from,
        input,
        "--profile",
        PROFILE,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    out
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `a` equals `b` to a relative 1e-9 (the same numbers, summed in
/// another order).
fn close(a: &Value, b: f64, what: &str) {
    let a = a
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: {a} is no number"));
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "{what}: {a} is not {b}"
    );
}

/// The generic per-request file an import wrote, imported again with the
/// run's spec, gives the same measurement and the same trace.
fn round_trip(run: &Path, dir: &Path) {
    let v = read(run);
    let requests = dir.join(v["requests"].as_str().unwrap());
    let again = dir.join("again.json");
    let o = aisim(&[
        "measured",
        "import",
        requests.to_str().unwrap(),
        "--spec-from",
        run.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = read(&again);
    assert_eq!(w["measured"], v["measured"]);
    assert_eq!(w["spec"]["timing"], v["spec"]["timing"]);
    let trace = |p: &Path| std::fs::read_to_string(p.with_extension("trace.jsonl")).unwrap();
    assert_eq!(trace(&again), trace(run));
    let reqs = |p: &Path| std::fs::read_to_string(p.with_extension("requests.jsonl")).unwrap();
    assert_eq!(reqs(&again), reqs(run));
}

/// `aisim validate RUN --format json`: the metrics it compared.
fn validated_metrics(run: &Path) -> Vec<String> {
    let v = json_ok(&["validate", run.to_str().unwrap(), "--format", "json"]);
    let mut m: Vec<String> = v["runs"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap().to_string())
        .collect();
    m.dedup();
    m
}

fn fails(args: &[&str], wants: &[&str]) {
    let o = aisim(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wants {
        assert!(err.contains(w), "{args:?}: `{w}` not in {err}");
    }
}

/// Imports `input` as `--from FROM` and expects exit 2 naming `wants`.
fn refused(from: &str, input: &Path, wants: &[&str]) {
    let out = input.with_file_name("out.json");
    fails(
        &[
            "measured",
            "import",
            "--from",
            from,
            input.to_str().unwrap(),
            "--profile",
            PROFILE,
            "--out",
            out.to_str().unwrap(),
        ],
        wants,
    );
}

// ---------------------------------------------------------------- vllm-bench

fn vllm_fixture() -> Value {
    read(Path::new(&fixture("measured/vllm_bench.json")))
}

/// The metrics `validate` compares when the file has every token's time.
const WITH_ITL: [&str; 6] = [
    "ttft_ms",
    "tpot_ms",
    "itl_ms",
    "e2e_ms",
    "output_tok_s",
    "completed",
];

/// ... and when it has the first and last only.
const WITHOUT_ITL: [&str; 5] = ["ttft_ms", "tpot_ms", "e2e_ms", "output_tok_s", "completed"];

#[test]
fn vllm_bench_imports_as_the_client_measured_it() {
    let dir = temp_dir("formats-vllm");
    let run = import(
        "vllm-bench",
        &fixture("measured/vllm_bench.json"),
        &dir,
        "v",
    );
    let v = read(&run);
    let f = vllm_fixture();
    let m = &v["measured"];
    // Two failed requests: offered, not completed, replayed all the same.
    assert_eq!(m["offered"], 30);
    assert_eq!(m["completed"], f["completed"]);
    assert_eq!(f["failed"], 2);
    // The statistics vLLM printed, from the same requests (its medians and
    // percentiles interpolate as aisim's import does).
    for (metric, stat, key) in [
        ("ttft_ms", "mean", "mean_ttft_ms"),
        ("ttft_ms", "p50", "median_ttft_ms"),
        ("ttft_ms", "p99", "p99_ttft_ms"),
        ("tpot_ms", "mean", "mean_tpot_ms"),
        ("tpot_ms", "p50", "median_tpot_ms"),
        ("itl_ms", "mean", "mean_itl_ms"),
        ("itl_ms", "p50", "median_itl_ms"),
        ("itl_ms", "p99", "p99_itl_ms"),
        ("e2e_ms", "mean", "mean_e2el_ms"),
        ("e2e_ms", "p50", "median_e2el_ms"),
        ("e2e_ms", "p99", "p99_e2el_ms"),
    ] {
        close(&m[metric][stat], f[key].as_f64().unwrap(), key);
    }
    assert_eq!(
        v["origin"],
        json!({"from": "vllm-bench", "arrival": "sent", "prefix_reuse": "unknown"})
    );
    assert_eq!(v["served"], "http_streaming");
    // The trace: every request at its start time from the first, in order.
    let trace = lines(&dir.join("v.trace.jsonl"));
    assert_eq!(trace.len(), 30);
    let starts: Vec<f64> = f["start_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    for (i, row) in trace.iter().enumerate() {
        let want = ((starts[i] - starts[0]) * 1e6).round() / 1e3;
        close(&row["timestamp"], want, &format!("trace row {i}"));
        assert_eq!(row["input_length"], f["input_lens"][i]);
        assert_eq!(row["hash_ids"], json!([]));
    }
    // The failed ones keep their prompt and are replayed with one token.
    assert_eq!(trace[11]["output_length"], 1);
    let requests = lines(&dir.join("v.requests.jsonl"));
    let failed: Vec<&str> = requests
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert_eq!(failed.len(), 2);
    assert!(failed[0].contains("ServerDisconnectedError"), "{failed:?}");
    assert_eq!(failed[1], "Service Unavailable");
    assert_eq!(
        requests[0]["itl_s"].as_array().unwrap().len() + 1,
        f["output_lens"][0].as_u64().unwrap() as usize
    );
}

#[test]
fn a_vllm_bench_run_validates_with_its_itl_and_round_trips() {
    let dir = temp_dir("formats-vllm-validate");
    let run = import(
        "vllm-bench",
        &fixture("measured/vllm_bench.json"),
        &dir,
        "v",
    );
    assert_eq!(validated_metrics(&run), WITH_ITL);
    round_trip(&run, &dir);
}

#[test]
fn calibrate_fits_an_imported_run_with_failed_requests_on_its_completed_ones() {
    let dir = temp_dir("formats-vllm-calibrate");
    let run = import(
        "vllm-bench",
        &fixture("measured/vllm_bench.json"),
        &dir,
        "v",
    );
    let fitted = dir.join("fitted.json");
    let v = json_ok(&[
        "calibrate",
        run.to_str().unwrap(),
        "--out",
        fitted.to_str().unwrap(),
        "--max-evaluations",
        "8",
        "--format",
        "json",
    ]);
    // The 30 offered requests are replayed; the 28 completed are compared
    // one by one (the failed two have no latency to compare).
    assert!(v["fit"]["evaluations"].as_u64().unwrap() >= 1, "{v}");
    assert!(fitted.is_file());
}

#[test]
fn a_chunk_of_several_tokens_leaves_the_itl_unknown() {
    let dir = temp_dir("formats-vllm-chunks");
    let mut f = vllm_fixture();
    // Request 0's last two tokens came in one chunk.
    let gaps = f["itls"][0].as_array_mut().unwrap();
    let last = gaps.pop().unwrap().as_f64().unwrap();
    let before = gaps.pop().unwrap().as_f64().unwrap();
    gaps.push(json!(before + last));
    let p = dir.join("chunks.json");
    std::fs::write(&p, f.to_string()).unwrap();
    let run = import("vllm-bench", p.to_str().unwrap(), &dir, "c");
    let v = read(&run);
    assert!(v["measured"].get("itl_ms").is_none(), "{}", v["measured"]);
    assert!(v["measured"].get("tpot_ms").is_some());
}

/// The fixture with `change` made, written to a file of its own.
fn vllm_with(tag: &str, change: impl FnOnce(&mut Value)) -> PathBuf {
    let dir = temp_dir(&format!("formats-vllm-bad-{tag}"));
    let mut f = vllm_fixture();
    change(&mut f);
    let p = dir.join("result.json");
    std::fs::write(&p, f.to_string()).unwrap();
    p
}

#[test]
fn bad_vllm_bench_files_exit_2_naming_the_json_path() {
    let p = vllm_with("no-start", |f| {
        f.as_object_mut().unwrap().remove("start_times");
    });
    refused(
        "vllm-bench",
        &p,
        &["result.json", "`start_times`", "arrival process is unknown"],
    );
    let p = vllm_with("not-detailed", |f| {
        f.as_object_mut().unwrap().remove("itls");
    });
    refused("vllm-bench", &p, &["`itls`", "--save-detailed"]);
    let p = vllm_with("short", |f| {
        f["ttfts"].as_array_mut().unwrap().pop();
    });
    refused(
        "vllm-bench",
        &p,
        &["`ttfts`", "29 entries", "start_times has 30"],
    );
    let p = vllm_with("not-array", |f| f["output_lens"] = json!(5));
    refused(
        "vllm-bench",
        &p,
        &["`output_lens`", "a number: must be an array"],
    );
    let p = vllm_with("bad-ttft", |f| f["ttfts"][3] = json!("fast"));
    refused("vllm-bench", &p, &["`ttfts[3]`", "number of seconds"]);
    let p = vllm_with("negative-ttft", |f| f["ttfts"][4] = json!(-0.01));
    refused("vllm-bench", &p, &["`ttfts[4]`", "0 seconds or more"]);
    let p = vllm_with("bad-gap", |f| f["itls"][2][1] = json!(null));
    refused("vllm-bench", &p, &["`itls[2][1]`", "number of seconds"]);
    let p = vllm_with("negative-gap", |f| f["itls"][2][1] = json!(-0.001));
    refused("vllm-bench", &p, &["`itls[2][1]`", "0 seconds or more"]);
    let p = vllm_with("gaps-not-array", |f| f["itls"][2] = json!(0.01));
    refused("vllm-bench", &p, &["`itls[2]`", "must be an array"]);
    let p = vllm_with("bad-len", |f| f["input_lens"][5] = json!(-3));
    refused("vllm-bench", &p, &["`input_lens[5]`", "whole number"]);
    let p = vllm_with("bad-error", |f| f["errors"][6] = json!(7));
    refused("vllm-bench", &p, &["`errors[6]`", "failure's text"]);
    let p = vllm_with("bad-start", |f| f["start_times"][7] = json!(-1.0));
    refused("vllm-bench", &p, &["`start_times[7]`", "aisim's clock"]);
    let p = vllm_with("empty", |f| {
        for k in [
            "start_times",
            "input_lens",
            "output_lens",
            "ttfts",
            "itls",
            "errors",
        ] {
            f[k] = json!([]);
        }
    });
    refused("vllm-bench", &p, &["`start_times`", "no requests"]);
    let p = vllm_with("not-object", |f| *f = json!([1, 2]));
    refused("vllm-bench", &p, &["`(file)`", "not a JSON object"]);
    let p = temp_file("formats-vllm-broken.json", "{\"start_times\": [1.0,");
    refused("vllm-bench", &p, &["formats-vllm-broken.json", "line 1"]);
    let dir = temp_dir("formats-vllm-folder");
    refused("vllm-bench", &dir, &["is a folder", "name the JSON"]);
    let out = dir.join("x.json");
    fails(
        &[
            "measured",
            "import",
            "--from",
            "vllm-bench",
            &fixture("measured/vllm_bench.json"),
            "--out",
            out.to_str().unwrap(),
        ],
        &["--from vllm-bench needs --profile"],
    );
    fails(
        &[
            "measured",
            "import",
            "--from",
            "vllm-bench",
            &fixture("measured/vllm_bench.json"),
            "--profile",
            PROFILE,
            "--trace-block-size",
            "32",
            "--out",
            out.to_str().unwrap(),
        ],
        &["--trace-block-size has no effect with --from vllm-bench"],
    );
}

// -------------------------------------------------------------------- aiperf

fn aiperf_records() -> Vec<Value> {
    lines(Path::new(&fixture("measured/aiperf/profile_export.jsonl")))
}

#[test]
fn aiperf_imports_with_its_conversations_and_chunk_gaps() {
    let dir = temp_dir("formats-aiperf");
    let run = import("aiperf", &fixture("measured/aiperf"), &dir, "a");
    let v = read(&run);
    let recs = aiperf_records();
    // The warm-up request is left out; the failed one is offered.
    let profiled: Vec<&Value> = recs
        .iter()
        .filter(|r| r["metadata"]["benchmark_phase"] == "profiling")
        .collect();
    assert_eq!(recs.len(), 25);
    assert_eq!(profiled.len(), 24);
    let done: Vec<&&Value> = profiled.iter().filter(|r| r["error"].is_null()).collect();
    let m = &v["measured"];
    assert_eq!(m["offered"], 24);
    assert_eq!(m["completed"], 23);
    let mean =
        |f: &dyn Fn(&Value) -> f64| done.iter().map(|r| f(r)).sum::<f64>() / done.len() as f64;
    let metric = |r: &Value, tag: &str| r["metrics"][tag]["value"].as_f64().unwrap();
    close(
        &m["ttft_ms"]["mean"],
        mean(&|r| metric(r, "time_to_first_token")),
        "ttft",
    );
    close(
        &m["e2e_ms"]["mean"],
        mean(&|r| metric(r, "request_latency")),
        "e2e",
    );
    let gaps: Vec<f64> = done
        .iter()
        .flat_map(|r| {
            r["metrics"]["inter_chunk_latency"]["value"]
                .as_array()
                .unwrap()
                .clone()
        })
        .map(|g| g.as_f64().unwrap())
        .collect();
    close(
        &m["itl_ms"]["mean"],
        gaps.iter().sum::<f64>() / gaps.len() as f64,
        "itl",
    );
    // inputs.json beside the export: every prompt hashed from its text.
    assert_eq!(
        v["origin"],
        json!({"from": "aiperf", "arrival": "sent", "prefix_reuse": "prompt_text"})
    );
    // Eight conversations of three turns: later turns wait their think time.
    let trace = lines(&dir.join("a.trace.jsonl"));
    let ids = |r: &Value| r["hash_ids"].as_array().unwrap().clone();
    let shared = |a: &Value, b: &Value| {
        ids(a)
            .iter()
            .zip(ids(b))
            .take_while(|(x, y)| *x == y)
            .count()
    };
    for r in &trace {
        let want = r["input_length"].as_u64().unwrap().div_ceil(16) as usize;
        assert_eq!(ids(r).len(), want);
    }
    // Every conversation opens with the same system prompt (1,200
    // characters, about 290 tokens: 18 whole blocks), and no more.
    let openers: Vec<&Value> = trace
        .iter()
        .filter(|r| r.get("delay_ms").is_none())
        .collect();
    assert_eq!(openers.len(), 8);
    for o in &openers[1..] {
        assert_eq!(shared(openers[0], o), 18);
    }
    // A later turn holds the conversation so far: its earlier turn's blocks
    // past the system prompt too (all but the last one or two: a block is
    // the file's mean characters a token, and a turn's own text runs a
    // little short or long of its tokens), and its own after them.
    let of = |s: u64| -> Vec<&Value> { trace.iter().filter(|r| r["session_id"] == s).collect() };
    for s in 0..8 {
        let turns = of(s);
        let (n, k) = (ids(turns[0]).len(), shared(turns[0], turns[1]));
        assert!(
            k > 18 && k + 2 >= n && k < ids(turns[1]).len(),
            "conversation {s}: {k} of {n}"
        );
    }
    assert_eq!(trace.len(), 24);
    let sessions: std::collections::BTreeSet<u64> = trace
        .iter()
        .map(|r| r["session_id"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, (0..8).collect());
    assert_eq!(
        trace.iter().filter(|r| r.get("delay_ms").is_some()).count(),
        16
    );
    // The first request sent is the trace's first, at 0.
    let first_send = profiled
        .iter()
        .map(|r| r["metadata"]["request_start_ns"].as_u64().unwrap())
        .min()
        .unwrap();
    let second = profiled
        .iter()
        .map(|r| r["metadata"]["request_start_ns"].as_u64().unwrap())
        .filter(|&s| s > first_send)
        .min()
        .unwrap();
    close(&trace[0]["timestamp"], 0.0, "first arrival");
    close(
        &trace[1]["timestamp"],
        ((second - first_send) as f64 / 1e6 * 1e3).round() / 1e3,
        "second arrival",
    );
}

#[test]
fn aiperf_prompts_are_hashed_from_inputs_json_or_are_unknown_without_it() {
    let dir = temp_dir("formats-aiperf-inputs");
    // The export alone: nothing of the prompts is known.
    let alone = dir.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::copy(
        fixture("measured/aiperf/profile_export.jsonl"),
        alone.join("profile_export.jsonl"),
    )
    .unwrap();
    let run = import("aiperf", alone.to_str().unwrap(), &dir, "alone");
    assert_eq!(read(&run)["origin"]["prefix_reuse"], "unknown");
    assert!(lines(&dir.join("alone.trace.jsonl"))
        .iter()
        .all(|r| r["hash_ids"] == json!([])));
    // Token ids: hashed exactly, 16 to a block.
    let tokens = dir.join("tokens");
    std::fs::create_dir_all(&tokens).unwrap();
    std::fs::copy(
        fixture("measured/aiperf/profile_export.jsonl"),
        tokens.join("profile_export.jsonl"),
    )
    .unwrap();
    let mut inputs = read(Path::new(&fixture("measured/aiperf/inputs.json")));
    for (i, session) in inputs["data"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        for (t, p) in session["payloads"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            // 40 shared tokens, then the conversation's, then the turn's.
            let mut ids: Vec<u64> = (0..40).collect();
            ids.extend((0..30 * (t as u64 + 1)).map(|k| 1000 * (i as u64 + 1) + k));
            *p = json!({"prompt": ids});
        }
    }
    std::fs::write(tokens.join("inputs.json"), inputs.to_string()).unwrap();
    let run = import("aiperf", tokens.to_str().unwrap(), &dir, "tokens");
    assert_eq!(read(&run)["origin"]["prefix_reuse"], "token_ids");
    let trace = lines(&dir.join("tokens.trace.jsonl"));
    let first = |s: u64, turn: usize| -> Vec<Value> {
        trace
            .iter()
            .filter(|r| r["session_id"] == s)
            .nth(turn)
            .unwrap()["hash_ids"]
            .as_array()
            .unwrap()
            .clone()
    };
    // Two conversations share the first 32 tokens' two blocks exactly.
    let (a, b) = (first(0, 0), first(1, 0));
    assert_eq!(a[..2], b[..2]);
    assert_ne!(a[2], b[2]);
    // A conversation's turns share its first 64 tokens' four blocks.
    let (t0, t1) = (first(0, 0), first(0, 1));
    assert_eq!(t0[..4], t1[..4]);
    assert_ne!(t0[4], t1[4]);
}

#[test]
fn bad_aiperf_inputs_exit_2_naming_the_file_and_field() {
    let dir = temp_dir("formats-aiperf-inputs-bad");
    let case = |tag: &str, inputs: Value| -> PathBuf {
        let d = dir.join(tag);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(
            fixture("measured/aiperf/profile_export.jsonl"),
            d.join("profile_export.jsonl"),
        )
        .unwrap();
        std::fs::write(d.join("inputs.json"), inputs.to_string()).unwrap();
        d
    };
    let fixture_inputs = read(Path::new(&fixture("measured/aiperf/inputs.json")));
    refused(
        "aiperf",
        &case("no-data", json!({"sessions": []})),
        &["inputs.json", "`data`", "missing"],
    );
    let mut short = fixture_inputs.clone();
    let cut = short["data"][3]["session_id"].as_str().unwrap().to_string();
    short["data"][3]["payloads"].as_array_mut().unwrap().pop();
    refused(
        "aiperf",
        &case("short", short),
        &[
            "profile_export.jsonl:",
            "`metadata.conversation_id`",
            &format!("{cut}, turn 2: no such payload"),
        ],
    );
    let mut no_prompt = fixture_inputs.clone();
    no_prompt["data"][0]["payloads"][0] = json!({"model": "m"});
    refused(
        "aiperf",
        &case("no-prompt", no_prompt),
        &[
            "inputs.json",
            "`data[0].payloads[0]`",
            "neither messages nor a prompt",
        ],
    );
    let mut bad_content = fixture_inputs.clone();
    bad_content["data"][1]["payloads"][0]["messages"][1]["content"] = json!(5);
    refused(
        "aiperf",
        &case("content", bad_content),
        &["`data[1].payloads[0]`", "messages[1].content"],
    );
    let mut bad_id = fixture_inputs;
    bad_id["data"][2]["session_id"] = json!(7);
    refused(
        "aiperf",
        &case("id", bad_id),
        &["`data[2].session_id`", "7: must be"],
    );
}

#[test]
fn an_aiperf_run_validates_with_its_itl_and_round_trips() {
    let dir = temp_dir("formats-aiperf-validate");
    let run = import(
        "aiperf",
        &fixture("measured/aiperf/profile_export.jsonl"),
        &dir,
        "a",
    );
    assert_eq!(validated_metrics(&run), WITH_ITL);
    round_trip(&run, &dir);
}

/// The fixture with `change` made to record `i` (0-based line), written
/// to a file of its own.
fn aiperf_with(tag: &str, i: usize, change: impl FnOnce(&mut Value)) -> PathBuf {
    let dir = temp_dir(&format!("formats-aiperf-bad-{tag}"));
    let mut recs = aiperf_records();
    change(&mut recs[i]);
    let text: String = recs.iter().map(|r| format!("{r}\n")).collect();
    let p = dir.join("profile_export.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

/// A change made to a record.
type Change = Box<dyn FnOnce(&mut Value)>;

/// A change that removes the field at a dotted path (`metrics.value`).
fn removed(path: &'static str) -> Change {
    Box::new(move |r| {
        let (parents, last) = path.rsplit_once('.').map_or(("", path), |(p, l)| (p, l));
        let field = parents
            .split('.')
            .filter(|k| !k.is_empty())
            .fold(r, |v, k| &mut v[k]);
        field.as_object_mut().unwrap().remove(last);
    })
}

#[test]
fn bad_aiperf_files_exit_2_naming_the_line_and_field() {
    // Line 3 is a completed request of the profiling phase.
    assert_eq!(
        aiperf_records()[2]["metadata"]["benchmark_phase"],
        "profiling"
    );
    assert!(aiperf_records()[2]["error"].is_null());
    let cases: Vec<(&str, Change, Vec<&str>)> = vec![
        (
            "no-metadata",
            removed("metadata"),
            vec![":3:", "`metadata`", "missing"],
        ),
        (
            "start",
            Box::new(|r| r["metadata"]["request_start_ns"] = json!(1.5)),
            vec![
                ":3:",
                "`metadata.request_start_ns`",
                "whole number of nanoseconds",
            ],
        ),
        (
            "no-end",
            removed("metadata.request_end_ns"),
            vec![":3:", "`metadata.request_end_ns`", "missing"],
        ),
        (
            "end-before-start",
            Box::new(|r| {
                let start = r["metadata"]["request_start_ns"].as_u64().unwrap();
                r["metadata"]["request_end_ns"] = json!(start - 1);
            }),
            vec![
                ":3:",
                "`metadata.request_end_ns`",
                "is before request_start_ns",
            ],
        ),
        (
            "unit",
            Box::new(|r| r["metrics"]["time_to_first_token"]["unit"] = json!("tokens")),
            vec![":3:", "`metrics.time_to_first_token.unit`", "unit of time"],
        ),
        (
            "ttft-value",
            Box::new(|r| r["metrics"]["time_to_first_token"]["value"] = json!("x")),
            vec![
                ":3:",
                "`metrics.time_to_first_token.value`",
                "must be a number",
            ],
        ),
        (
            "ttft-list",
            Box::new(|r| r["metrics"]["time_to_first_token"]["value"] = json!([1.0])),
            vec![":3:", "`metrics.time_to_first_token.value`", "one number"],
        ),
        (
            "metric-shape",
            Box::new(|r| r["metrics"]["request_latency"] = json!(12.5)),
            vec![":3:", "`metrics.request_latency`", "{\"value\", \"unit\"}"],
        ),
        (
            "no-value",
            removed("metrics.request_latency.value"),
            vec![":3:", "`metrics.request_latency.value`", "missing"],
        ),
        (
            "no-ttft",
            removed("metrics.time_to_first_token"),
            vec![
                ":3:",
                "`metrics.time_to_first_token`",
                "missing on a request that completed",
            ],
        ),
        (
            "no-input",
            removed("metrics.input_sequence_length"),
            vec![":3:", "`metrics.input_sequence_length`", "missing"],
        ),
        (
            "no-output",
            removed("metrics.output_sequence_length"),
            vec![":3:", "`metrics.output_sequence_length`", "missing"],
        ),
        (
            "tokens",
            Box::new(|r| r["metrics"]["output_sequence_length"]["value"] = json!(2.5)),
            vec![
                ":3:",
                "`metrics.output_sequence_length.value`",
                "whole number",
            ],
        ),
        (
            "negative-gap",
            Box::new(|r| r["metrics"]["inter_chunk_latency"]["value"][0] = json!(-1.0)),
            vec![":3:", "`metrics.inter_chunk_latency.value`", "0 or more"],
        ),
        (
            "long-gaps",
            Box::new(|r| {
                let ttft = r["metrics"]["time_to_first_token"]["value"]
                    .as_f64()
                    .unwrap();
                r["metrics"]["request_latency"]["value"] = json!(ttft + 1.0);
            }),
            vec![":3:", "`metrics.inter_chunk_latency`", "at most"],
        ),
        (
            "phase",
            Box::new(|r| r["metadata"]["benchmark_phase"] = json!("cooldown")),
            vec![":3:", "`metadata.benchmark_phase`", "warmup, profiling"],
        ),
        (
            "error",
            Box::new(|r| r["error"] = json!("boom")),
            vec![":3:", "`error`", "null or {code, type, message}"],
        ),
        (
            "turn",
            Box::new(|r| r["metadata"]["turn_index"] = json!(-1)),
            vec![":3:", "`metadata.turn_index`", "whole number"],
        ),
        (
            "not-object",
            Box::new(|r| *r = json!([1])),
            vec![":3:", "not a JSON object"],
        ),
    ];
    for (tag, change, wants) in cases {
        let p = aiperf_with(tag, 2, change);
        refused("aiperf", &p, &wants);
    }
    // The same request twice, and a conversation's turn twice.
    let dir = temp_dir("formats-aiperf-bad-twice");
    let mut recs = aiperf_records();
    let again = recs[2].clone();
    recs.push(again);
    let p = dir.join("profile_export.jsonl");
    std::fs::write(
        &p,
        recs.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    refused(
        "aiperf",
        &p,
        &[":26:", "`metadata.x_request_id`", "measured twice"],
    );
    let mut recs = aiperf_records();
    let mut again = recs[2].clone();
    again["metadata"]["x_request_id"] = json!("another");
    recs.push(again);
    std::fs::write(
        &p,
        recs.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    refused(
        "aiperf",
        &p,
        &[":26:", "`metadata.turn_index`", "has this turn twice"],
    );
    let p = temp_file("formats-aiperf-broken.jsonl", "{\"metadata\": \n");
    refused("aiperf", &p, &["formats-aiperf-broken.jsonl:1"]);
    let p = temp_file("formats-aiperf-empty.jsonl", "\n");
    refused("aiperf", &p, &["no requests of the profiling phase"]);
    let dir = temp_dir("formats-aiperf-folder");
    refused("aiperf", &dir, &["holds none of profile_export.jsonl"]);
}

// ------------------------------------------------------------------ guidellm

fn guidellm_report() -> Value {
    read(Path::new(&fixture("measured/guidellm/benchmarks.json")))
}

/// `aisim measured import --from guidellm INPUT --benchmark N ...`.
fn import_guidellm(input: &str, dir: &Path, name: &str, benchmark: &str) -> PathBuf {
    let out = dir.join(format!("{name}.json"));
    let o = aisim(&[
        "measured",
        "import",
        "--from",
        "guidellm",
        input,
        "--benchmark",
        benchmark,
        "--profile",
        PROFILE,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    out
}

#[test]
fn guidellm_imports_one_benchmark_at_its_planned_arrivals() {
    let dir = temp_dir("formats-guidellm");
    let run = import_guidellm(&fixture("measured/guidellm"), &dir, "g", "1");
    let v = read(&run);
    let b = &guidellm_report()["benchmarks"][1];
    let m = &v["measured"];
    // 27 successful, 2 cut off at the benchmark's end, 1 errored.
    assert_eq!(m["offered"], 30);
    assert_eq!(m["completed"], 27);
    let ok = b["requests"]["successful"].as_array().unwrap();
    let t = |r: &Value, k: &str| r["info"]["timings"][k].as_f64().unwrap();
    let mean = |f: &dyn Fn(&Value) -> f64| ok.iter().map(f).sum::<f64>() / ok.len() as f64;
    // From the planned arrival (targeted_start), not the send.
    close(
        &m["ttft_ms"]["mean"],
        mean(&|r| (t(r, "first_token_iteration") - t(r, "targeted_start")) * 1e3),
        "ttft",
    );
    close(
        &m["e2e_ms"]["mean"],
        mean(&|r| (t(r, "request_end") - t(r, "targeted_start")) * 1e3),
        "e2e",
    );
    close(
        &m["tpot_ms"]["mean"],
        mean(&|r| {
            (t(r, "request_end") - t(r, "first_token_iteration"))
                / (r["output_tokens"].as_f64().unwrap() - 1.0)
                * 1e3
        }),
        "tpot",
    );
    // No per-token times in a GuideLLM report: no ITL.
    assert!(m.get("itl_ms").is_none());
    assert_eq!(
        v["origin"],
        json!({"from": "guidellm", "arrival": "planned", "prefix_reuse": "unknown"})
    );
    // Ten conversations of three turns.
    let trace = lines(&dir.join("g.trace.jsonl"));
    assert_eq!(trace.len(), 30);
    let sessions: std::collections::BTreeSet<u64> = trace
        .iter()
        .map(|r| r["session_id"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions.len(), 10);
    assert_eq!(
        trace.iter().filter(|r| r.get("delay_ms").is_some()).count(),
        20
    );
    // The conversations start a quarter of a second apart.
    for s in 0..10 {
        let row = trace.iter().find(|r| r["session_id"] == s).unwrap();
        close(
            &row["timestamp"],
            250.0 * s as f64,
            &format!("conversation {s}"),
        );
    }
    let requests = lines(&dir.join("g.requests.jsonl"));
    let errors: Vec<&str> = requests
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert_eq!(errors.len(), 3);
    assert_eq!(
        errors
            .iter()
            .filter(|e| **e == "incomplete (cancelled)")
            .count(),
        2,
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("Internal Server Error")),
        "{errors:?}"
    );
}

#[test]
fn a_guidellm_benchmark_validates_round_trips_and_reads_the_same_from_yaml() {
    let dir = temp_dir("formats-guidellm-validate");
    let run = import_guidellm(
        &fixture("measured/guidellm/benchmarks.json"),
        &dir,
        "g",
        "1",
    );
    assert_eq!(validated_metrics(&run), WITHOUT_ITL);
    round_trip(&run, &dir);
    let yaml = dir.join("benchmarks.yaml");
    std::fs::write(&yaml, serde_yaml_ng::to_string(&guidellm_report()).unwrap()).unwrap();
    let from_yaml = import_guidellm(yaml.to_str().unwrap(), &dir, "y", "1");
    assert_eq!(read(&from_yaml)["measured"], read(&run)["measured"]);
    // The synchronous benchmark: one request at a time, no conversations.
    let sync = import_guidellm(&fixture("measured/guidellm"), &dir, "s", "0");
    assert_eq!(read(&sync)["measured"]["completed"], 6);
    assert!(read(&sync)["measured"].get("offered").is_none());
    let trace = lines(&dir.join("s.trace.jsonl"));
    assert!(trace.iter().all(|r| r.get("session_id").is_none()));
}

/// The report with `change` made, written to a file of its own.
fn guidellm_with(tag: &str, change: impl FnOnce(&mut Value)) -> PathBuf {
    let dir = temp_dir(&format!("formats-guidellm-bad-{tag}"));
    let mut f = guidellm_report();
    change(&mut f);
    let p = dir.join("benchmarks.json");
    std::fs::write(&p, f.to_string()).unwrap();
    p
}

/// Imports `input` as `--from guidellm` with `extra` flags; exit 2 naming `wants`.
fn guidellm_refused(input: &Path, extra: &[&str], wants: &[&str]) {
    let out = input.with_file_name("out.json");
    let args = [
        "measured",
        "import",
        "--from",
        "guidellm",
        input.to_str().unwrap(),
        "--profile",
        PROFILE,
        "--out",
        out.to_str().unwrap(),
    ];
    fails(&[&args[..], extra].concat(), wants);
}

#[test]
fn bad_guidellm_reports_exit_2_naming_the_json_path() {
    let report = PathBuf::from(fixture("measured/guidellm/benchmarks.json"));
    guidellm_refused(
        &report,
        &[],
        &["`benchmarks`", "2 benchmarks", "--benchmark N"],
    );
    guidellm_refused(
        &report,
        &["--benchmark", "2"],
        &["`benchmarks`", "--benchmark 2", "0 ..= 1"],
    );
    let out = temp_dir("formats-guidellm-flag").join("x.json");
    fails(
        &[
            "measured",
            "import",
            "--from",
            "aiperf",
            &fixture("measured/aiperf"),
            "--benchmark",
            "1",
            "--profile",
            PROFILE,
            "--out",
            out.to_str().unwrap(),
        ],
        &["--benchmark has no effect here"],
    );
    let one = ["--benchmark", "1"];
    let s = "benchmarks[1].requests.successful";
    let cases: Vec<(&str, Change, Vec<String>)> = vec![
        (
            "sample",
            Box::new(|f| {
                f["benchmarks"][1]["request_totals"]["successful"] = json!(270);
            }),
            vec![
                format!("`{s}`"),
                "27 requests of the 270".into(),
                "sample".into(),
            ],
        ),
        (
            "no-benchmarks",
            Box::new(|f| {
                f.as_object_mut().unwrap().remove("benchmarks");
            }),
            vec![
                "`benchmarks`".into(),
                "not a GuideLLM benchmarks report".into(),
            ],
        ),
        (
            "no-requests",
            Box::new(|f| {
                f["benchmarks"][1]
                    .as_object_mut()
                    .unwrap()
                    .remove("requests");
            }),
            vec!["`benchmarks[1].requests`".into(), "missing".into()],
        ),
        (
            "list",
            Box::new(|f| f["benchmarks"][1]["requests"]["errored"] = json!(3)),
            vec![
                "`benchmarks[1].requests.errored`".into(),
                "list of requests".into(),
            ],
        ),
        (
            "not-object",
            Box::new(|f| f["benchmarks"][1]["requests"]["successful"][4] = json!("x")),
            vec![format!("`{s}[4]`"), "must be an object".into()],
        ),
        (
            "no-timings",
            Box::new(|f| {
                f["benchmarks"][1]["requests"]["successful"][4]["info"]
                    .as_object_mut()
                    .unwrap()
                    .remove("timings");
            }),
            vec![format!("`{s}[4].info.timings`"), "missing".into()],
        ),
        (
            "bad-time",
            Box::new(|f| {
                f["benchmarks"][1]["requests"]["successful"][4]["info"]["timings"]["request_end"] =
                    json!("late")
            }),
            vec![
                format!("`{s}[4].info.timings.request_end`"),
                "number of seconds".into(),
            ],
        ),
        (
            "no-start",
            Box::new(|f| {
                let t = f["benchmarks"][1]["requests"]["successful"][4]["info"]["timings"]
                    .as_object_mut()
                    .unwrap();
                t.remove("request_start");
                t.remove("resolve_start");
            }),
            vec![
                format!("`{s}[4].info.timings.request_start`"),
                "missing".into(),
            ],
        ),
        (
            "no-first",
            Box::new(|f| {
                f["benchmarks"][1]["requests"]["successful"][4]["info"]["timings"]
                    ["first_token_iteration"] = Value::Null
            }),
            vec![
                format!("`{s}[4].info.timings.first_token_iteration`"),
                "missing on a successful request".into(),
            ],
        ),
        (
            "first-before-arrival",
            Box::new(|f| {
                let t = &mut f["benchmarks"][1]["requests"]["successful"][4]["info"]["timings"];
                t["first_token_iteration"] = json!(t["targeted_start"].as_f64().unwrap() - 1.0);
            }),
            vec![
                format!("`{s}[4].info.timings.first_token_iteration`"),
                "is before the send time".into(),
            ],
        ),
        (
            "no-prompt",
            Box::new(|f| {
                let r = f["benchmarks"][1]["requests"]["successful"][4]
                    .as_object_mut()
                    .unwrap();
                r.remove("prompt_tokens");
                r.remove("input_metrics");
            }),
            vec![format!("`{s}[4].prompt_tokens`"), "missing".into()],
        ),
        (
            "bad-output",
            Box::new(|f| {
                f["benchmarks"][1]["requests"]["successful"][4]["output_tokens"] = json!(-2)
            }),
            vec![format!("`{s}[4].output_tokens`"), "whole number".into()],
        ),
        (
            "turn",
            Box::new(|f| {
                f["benchmarks"][1]["requests"]["successful"][4]["info"]["turn_index"] = json!("one")
            }),
            vec![format!("`{s}[4].info.turn_index`"), "whole number".into()],
        ),
        (
            "twice",
            Box::new(|f| {
                let id = f["benchmarks"][1]["requests"]["successful"][3]["request_id"].clone();
                f["benchmarks"][1]["requests"]["successful"][4]["request_id"] = id;
            }),
            vec![format!("`{s}[4].request_id`"), "measured twice".into()],
        ),
    ];
    for (tag, change, wants) in cases {
        let p = guidellm_with(tag, change);
        let wants: Vec<&str> = wants.iter().map(String::as_str).collect();
        guidellm_refused(&p, &one, &wants);
    }
    let p = temp_file(
        "formats-guidellm-broken.yaml",
        "benchmarks:\n  - requests: [\n",
    );
    guidellm_refused(&p, &one, &["formats-guidellm-broken.yaml", "`(file)`"]);
    let dir = temp_dir("formats-guidellm-folder");
    guidellm_refused(&dir, &one, &["holds none of benchmarks.json"]);
}

// -------------------------------------------------------------- sglang-bench

fn sglang_runs() -> Vec<Value> {
    lines(Path::new(&fixture("measured/sglang_bench.jsonl")))
}

/// `aisim measured import --from sglang-bench INPUT --benchmark N ...`.
fn sglang_import(input: &str, run: &str, out: &Path) -> std::process::Output {
    aisim(&[
        "measured",
        "import",
        "--from",
        "sglang-bench",
        input,
        "--benchmark",
        run,
        "--profile",
        PROFILE,
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn an_sglang_run_with_send_times_imports_as_the_client_measured_it() {
    let dir = temp_dir("formats-sglang");
    let run = dir.join("s.json");
    let o = sglang_import(&fixture("measured/sglang_bench.jsonl"), "1", &run);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = read(&run);
    let f = &sglang_runs()[1];
    let m = &v["measured"];
    assert_eq!(m["offered"], 32);
    assert_eq!(m["completed"], f["completed"]);
    for (metric, stat, key) in [
        ("ttft_ms", "mean", "mean_ttft_ms"),
        ("ttft_ms", "p50", "median_ttft_ms"),
        ("ttft_ms", "p99", "p99_ttft_ms"),
        ("itl_ms", "mean", "mean_itl_ms"),
        ("itl_ms", "p50", "median_itl_ms"),
        ("itl_ms", "p99", "p99_itl_ms"),
        ("e2e_ms", "mean", "mean_e2e_latency_ms"),
        ("e2e_ms", "p50", "median_e2e_latency_ms"),
        ("e2e_ms", "p99", "p99_e2e_latency_ms"),
    ] {
        close(&m[metric][stat], f[key].as_f64().unwrap(), key);
    }
    assert_eq!(
        v["origin"],
        json!({"from": "sglang-bench", "arrival": "sent", "prefix_reuse": "unknown"})
    );
    let trace = lines(&dir.join("s.trace.jsonl"));
    assert_eq!(trace.len(), 32);
    let s0 = f["start_times"][0].as_f64().unwrap();
    let s5 = f["start_times"][5].as_f64().unwrap();
    close(
        &trace[5]["timestamp"],
        ((s5 - s0) * 1e6).round() / 1e3,
        "arrival 5",
    );
    assert_eq!(validated_metrics(&run), WITH_ITL);
    round_trip(&run, &dir);
    // The arrays may be under `details`, as some forms of bench_serving write.
    let mut nested = f.clone();
    let mut details = serde_json::Map::new();
    for k in [
        "start_times",
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "errors",
    ] {
        details.insert(k.into(), nested.as_object_mut().unwrap().remove(k).unwrap());
    }
    nested["details"] = Value::Object(details);
    let p = dir.join("nested.jsonl");
    std::fs::write(&p, format!("{nested}\n")).unwrap();
    let again = dir.join("n.json");
    let o = sglang_import(p.to_str().unwrap(), "0", &again);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&again)["measured"], v["measured"]);
}

#[test]
fn bad_sglang_files_exit_2_naming_the_line_and_field() {
    let input = fixture("measured/sglang_bench.jsonl");
    let dir = temp_dir("formats-sglang-bad");
    let out = dir.join("out.json");
    // Upstream bench_serving keeps no send times: the arrival is unknown.
    let o = sglang_import(&input, "0", &out);
    assert_eq!(o.status.code(), Some(2));
    for w in [
        "sglang_bench.jsonl:1:",
        "`start_times`",
        "arrival process is unknown",
        "send_s",
    ] {
        assert!(stderr(&o).contains(w), "`{w}` not in {}", stderr(&o));
    }
    let write = |tag: &str, runs: &[Value]| -> PathBuf {
        let p = dir.join(format!("{tag}.jsonl"));
        std::fs::write(
            &p,
            runs.iter().map(|r| format!("{r}\n")).collect::<String>(),
        )
        .unwrap();
        p
    };
    fails(
        &[
            "measured",
            "import",
            "--from",
            "sglang-bench",
            &input,
            "--profile",
            PROFILE,
            "--out",
            out.to_str().unwrap(),
        ],
        &["2 runs, one a line", "--benchmark N"],
    );
    let o = sglang_import(&input, "2", &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--benchmark 2: the file holds 2 runs"),
        "{}",
        stderr(&o)
    );
    let runs = sglang_runs();
    let with = |tag: &str, change: &dyn Fn(&mut Value)| {
        let mut r = runs.clone();
        change(&mut r[1]);
        write(tag, &r)
    };
    for (tag, change, wants) in [
        (
            "short",
            &(|r: &mut Value| {
                r["itls"].as_array_mut().unwrap().pop();
            }) as &dyn Fn(&mut Value),
            vec![":2:", "`itls`", "31 entries, but start_times has 32"],
        ),
        (
            "not-detailed",
            &|r: &mut Value| {
                r.as_object_mut().unwrap().remove("ttfts");
            },
            vec![":2:", "`ttfts`", "--output-details"],
        ),
        (
            "bad-ttft",
            &|r: &mut Value| r["ttfts"][2] = json!(true),
            vec![":2:", "`ttfts[2]`", "number of seconds"],
        ),
        (
            "bad-gap",
            &|r: &mut Value| r["itls"][3][0] = json!("x"),
            vec![":2:", "`itls[3][0]`", "number of seconds"],
        ),
        (
            "bad-len",
            &|r: &mut Value| r["output_lens"][4] = json!(1.5),
            vec![":2:", "`output_lens[4]`", "whole number"],
        ),
        (
            "bad-error",
            &|r: &mut Value| r["errors"][4] = json!({"x": 1}),
            vec![":2:", "`errors[4]`", "failure's text"],
        ),
        (
            "gap-count",
            &|r: &mut Value| {
                let n = r["output_lens"][0].as_u64().unwrap();
                r["output_lens"][0] = json!(n + 5);
                // More tokens than chunks is a chunk of several: still fine;
                // a negative gap is not.
                r["itls"][0][0] = json!(-0.5);
            },
            vec![":2:", "`itls[0][0]`", "0 seconds or more"],
        ),
    ] {
        let p = with(tag, change);
        let o = sglang_import(p.to_str().unwrap(), "1", &out);
        assert_eq!(o.status.code(), Some(2), "{tag}: {}", stderr(&o));
        for w in wants {
            assert!(stderr(&o).contains(w), "{tag}: `{w}` not in {}", stderr(&o));
        }
    }
    let p = temp_file("formats-sglang-broken.jsonl", "{\"completed\": 3,\n");
    let o = sglang_import(p.to_str().unwrap(), "0", &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("formats-sglang-broken.jsonl:1"),
        "{}",
        stderr(&o)
    );
    let o = sglang_import(dir.to_str().unwrap(), "0", &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a folder"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------- blis

/// The fixture's data rows, each a map of column to cell.
fn blis_rows() -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(fixture("measured/blis/observed.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

/// A copy of the fixture's trace in a folder of its own, its header and
/// data changed by `header` and `data`.
fn blis_with(
    tag: &str,
    header: &dyn Fn(String) -> String,
    data: &dyn Fn(String) -> String,
) -> PathBuf {
    let dir = temp_dir(&format!("formats-blis-{tag}"));
    let read = |f: &str| std::fs::read_to_string(fixture(&format!("measured/blis/{f}"))).unwrap();
    std::fs::write(dir.join("t.yaml"), header(read("observed.yaml"))).unwrap();
    std::fs::write(dir.join("t.csv"), data(read("observed.csv"))).unwrap();
    dir.join("t.csv")
}

#[test]
fn a_blis_trace_imports_at_its_planned_arrivals_with_its_prefix_groups() {
    let dir = temp_dir("formats-blis");
    let run = import("blis", &fixture("measured/blis"), &dir, "b");
    let v = read(&run);
    let rows = blis_rows();
    assert_eq!(rows.len(), 38);
    // The header's two warm-up requests are left out; one error, one timeout.
    let measured = &rows[2..];
    let m = &v["measured"];
    assert_eq!(m["offered"], 36);
    assert_eq!(m["completed"], 34);
    let us = |r: &std::collections::BTreeMap<String, String>, k: &str| r[k].parse::<f64>().unwrap();
    let ok: Vec<_> = measured.iter().filter(|r| r["status"] == "ok").collect();
    let mean = |f: &dyn Fn(&std::collections::BTreeMap<String, String>) -> f64| {
        ok.iter().map(|r| f(r)).sum::<f64>() / ok.len() as f64
    };
    close(
        &m["ttft_ms"]["mean"],
        mean(&|r| (us(r, "first_chunk_time_us") - us(r, "arrival_time_us")) / 1e3),
        "ttft",
    );
    close(
        &m["e2e_ms"]["mean"],
        mean(&|r| (us(r, "last_chunk_time_us") - us(r, "arrival_time_us")) / 1e3),
        "e2e",
    );
    assert!(m.get("itl_ms").is_none());
    assert_eq!(
        v["origin"],
        json!({"from": "blis", "arrival": "planned", "prefix_reuse": "prefix_groups"})
    );
    assert_eq!(v["served"], "http_streaming");
    let trace = lines(&dir.join("b.trace.jsonl"));
    assert_eq!(trace.len(), 36);
    // Arrivals from the first measured one, in microseconds.
    let first = us(&measured[0], "arrival_time_us");
    for (row, t) in measured.iter().zip(&trace) {
        close(
            &t["timestamp"],
            (us(row, "arrival_time_us") - first) / 1e3,
            "arrival",
        );
        // The server's prompt tokens when it reported them, else the client's.
        let want = match row["server_input_tokens"].as_str() {
            "0" => &row["input_tokens"],
            n => n,
        };
        assert_eq!(&t["input_length"].to_string(), want);
    }
    // Prompts of a group share its whole blocks (16 tokens), and no more.
    let ids = |i: usize| trace[i]["hash_ids"].as_array().unwrap().clone();
    let same = |a: usize, b: usize| {
        ids(a)
            .iter()
            .zip(ids(b))
            .take_while(|(x, y)| *x == y)
            .count()
    };
    let groups: Vec<(&str, usize)> = measured
        .iter()
        .map(|r| {
            (
                r["prefix_group"].as_str(),
                r["prefix_length"].parse::<usize>().unwrap(),
            )
        })
        .collect();
    let (g0, len0) = groups[0];
    let other = groups.iter().skip(1).position(|(g, _)| *g == g0).unwrap() + 1;
    assert_eq!(same(0, other), len0 / 16);
    let stranger = groups.iter().position(|(g, _)| *g != g0).unwrap();
    assert_eq!(same(0, stranger), 0);
    assert_eq!(
        ids(0).len(),
        (us(&measured[0], "server_input_tokens") as usize).div_ceil(16)
    );
    // Six conversations of two rounds: the second waits its think time.
    let sessions: std::collections::BTreeSet<u64> = trace
        .iter()
        .filter_map(|r| r["session_id"].as_u64())
        .collect();
    assert_eq!(sessions.len(), 6);
    assert_eq!(
        trace.iter().filter(|r| r.get("delay_ms").is_some()).count(),
        6
    );
    let requests = lines(&dir.join("b.requests.jsonl"));
    let errors: Vec<&str> = requests
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert_eq!(
        errors,
        ["HTTP 503: Service Unavailable", "context deadline exceeded"]
    );
}

#[test]
fn a_blis_trace_validates_round_trips_and_a_simulated_one_runs_in_process() {
    let dir = temp_dir("formats-blis-validate");
    let run = import("blis", &fixture("measured/blis/observed.csv"), &dir, "b");
    assert_eq!(validated_metrics(&run), WITHOUT_ITL);
    round_trip(&run, &dir);
    // The header named instead of the data: the same run.
    let by_header = import("blis", &fixture("measured/blis/observed.yaml"), &dir, "h");
    assert_eq!(read(&by_header)["measured"], read(&run)["measured"]);
    let generated = blis_with(
        "generated",
        &|h| h.replace("mode: real", "mode: generated"),
        &|d| d,
    );
    let sim = import("blis", generated.to_str().unwrap(), &dir, "g");
    assert!(
        read(&sim).get("served").is_none(),
        "in process: the default"
    );
}

#[test]
fn bad_blis_traces_exit_2_naming_the_file_line_and_field() {
    let same = |s: String| s;
    let header = |from: &'static str, to: &'static str| move |h: String| h.replace(from, to);
    let cases: Vec<(&str, PathBuf, Vec<&str>)> = vec![
        (
            "version",
            blis_with(
                "version",
                &header("trace_version: 2", "trace_version: 1"),
                &same,
            ),
            vec!["t.yaml", "`trace_version`", "1: this aisim reads"],
        ),
        (
            "unit",
            blis_with("unit", &header("time_unit: us", "time_unit: ms"), &same),
            vec!["t.yaml", "`time_unit`", "`ms`"],
        ),
        (
            "mode",
            blis_with("mode", &header("mode: real", "mode: live"), &same),
            vec!["t.yaml", "`mode`", "one of real, generated, replayed"],
        ),
        (
            "warm-up",
            blis_with(
                "warm-up",
                &header("warm_up_requests: 2", "warm_up_requests: two"),
                &same,
            ),
            vec!["t.yaml", "`warm_up_requests`", "whole number"],
        ),
        (
            "all-warm-up",
            blis_with(
                "all-warm-up",
                &header("warm_up_requests: 2", "warm_up_requests: 38"),
                &same,
            ),
            vec!["t.csv", "all of them warm-up"],
        ),
        (
            "yaml",
            blis_with("yaml", &|_| "trace_version: [2\n".into(), &same),
            vec!["t.yaml", "`(file)`"],
        ),
        (
            "column",
            blis_with("column", &same, &|d| {
                d.replacen("send_time_us", "sent_us", 1)
            }),
            vec!["t.csv:1:", "`send_time_us`", "missing from the header row"],
        ),
        (
            "time",
            blis_with("time", &same, &|d| {
                let mut l: Vec<String> = d.lines().map(String::from).collect();
                let mut cells: Vec<String> = l[5].split(',').map(String::from).collect();
                cells[19] = "-5".into();
                l[5] = cells.join(",");
                l.join("\n") + "\n"
            }),
            vec!["t.csv:6:", "`arrival_time_us`", "`-5`", "microseconds"],
        ),
        (
            "status",
            blis_with("status", &same, &|d| {
                let mut l: Vec<String> = d.lines().map(String::from).collect();
                l[6] = l[6].replacen(",ok,", ",fine,", 1);
                l.join("\n") + "\n"
            }),
            vec!["t.csv:7:", "`status`", "`fine`: one of ok, error, timeout"],
        ),
        (
            "tokens",
            blis_with("tokens", &same, &|d| {
                let mut l: Vec<String> = d.lines().map(String::from).collect();
                let mut cells: Vec<String> = l[7].split(',').map(String::from).collect();
                cells[10] = "many".into();
                l[7] = cells.join(",");
                l.join("\n") + "\n"
            }),
            vec!["t.csv:8:", "`output_tokens`", "`many`"],
        ),
        (
            "early",
            blis_with("early", &same, &|d| {
                let mut l: Vec<String> = d.lines().map(String::from).collect();
                let mut cells: Vec<String> = l[8].split(',').map(String::from).collect();
                let arrival: i64 = cells[19].parse().unwrap();
                cells[21] = (arrival - 1).to_string();
                l[8] = cells.join(",");
                l.join("\n") + "\n"
            }),
            vec![
                "t.csv:9:",
                "`first_chunk_time_us`",
                "is before the send time",
            ],
        ),
        (
            "twice",
            blis_with("twice", &same, &|d| {
                let mut l: Vec<String> = d.lines().map(String::from).collect();
                let id = l[9].split(',').next().unwrap().to_string();
                let mut cells: Vec<String> = l[10].split(',').map(String::from).collect();
                cells[0] = id;
                l[10] = cells.join(",");
                l.join("\n") + "\n"
            }),
            vec!["t.csv:11:", "`request_id`", "measured twice"],
        ),
    ];
    for (_, p, wants) in cases {
        refused("blis", &p, &wants);
    }
    let lone = temp_file("formats-blis-lone.csv", "request_id\n");
    refused(
        "blis",
        &lone,
        &["formats-blis-lone.csv", "no YAML header of the same name"],
    );
    let dir = temp_dir("formats-blis-two");
    std::fs::write(dir.join("a.csv"), "x\n").unwrap();
    std::fs::write(dir.join("b.csv"), "x\n").unwrap();
    std::fs::write(dir.join("a.yaml"), "x: 1\n").unwrap();
    refused("blis", &dir, &["holds 1 YAML and 2 CSV files"]);
}

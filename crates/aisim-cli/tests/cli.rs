//! The `aisim` binary as a user runs it: exit codes, errors, output forms.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{
    aisim, ci_grid_run, command, fixture, json_ok, stderr, stdout, temp_dir, temp_file as temp,
    without_host,
};

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

/// The first argument decides which subcommands' flags are built
/// (`deferred.rs`): any first argument, even bytes that are not UTF-8,
/// gets clap's own answer, and a flag before the subcommand (which builds
/// every subcommand) parses as it always did.
#[test]
fn any_first_argument_is_parsed_or_refused_cleanly() {
    use std::os::unix::ffi::OsStrExt;
    let not_utf8 = std::ffi::OsStr::from_bytes(b"repl\xffay");
    let o = common::command().arg(not_utf8).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let typo = aisim(&["replya"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        stderr(&typo).contains("replay"),
        "a suggestion: {}",
        stderr(&typo)
    );
    let flag_first = aisim(&["-v", "replay", "--workers", "-1"]);
    assert_eq!(flag_first.status.code(), Some(2));
    let named = aisim(&["replay", "--workers", "-1"]);
    assert_eq!(named.status.code(), Some(2));
    assert_eq!(
        stderr(&flag_first),
        stderr(&named),
        "the same number check either way"
    );
    assert!(stderr(&named).contains("negative"), "{}", stderr(&named));
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
    let dir = temp_dir("out");
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
    let dir = temp_dir("gen");
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
    // The printed spec holds what was set, not the profile's engine facts
    // (applied when the run is built), so it can be a sweep's base.
    assert_eq!(v["engine"]["kv_budget_tokens"], serde_json::Value::Null);
    assert_eq!(v["engine"]["num_gpu_blocks"], serde_json::Value::Null);
    assert_eq!(v["engine"]["tp_size"], 1);
    // The run: the profile's 29,707 blocks of 16 tokens = 475,312 tokens,
    // 7,426 whole blocks of 64 = 475,264 a worker, and the same from the
    // printed spec.
    let dir = temp_dir("print-spec-profile");
    let printed = dir.join("spec.json");
    std::fs::write(&printed, stdout(&o)).unwrap();
    let kv = |args: &[&str]| {
        let o = aisim(args);
        assert!(o.status.success(), "{}", stderr(&o));
        let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        r["pools"][0]["kv_capacity_tokens"].clone()
    };
    let flags = [
        "replay",
        "--profile",
        "h100/llama-3.1-8b",
        "--format",
        "json",
    ];
    assert_eq!(kv(&flags), 475_264);
    let from_file = [
        "replay",
        "--spec",
        printed.to_str().unwrap(),
        "--format",
        "json",
    ];
    assert_eq!(kv(&from_file), 475_264);
    let table = stdout(&aisim(&[
        "replay",
        "--profile",
        "h200/llama-3.1-70b/tp2",
        "--workers",
        "2",
    ]));
    assert!(
        table.contains("2 vllm workers, 2 GPUs each (dp 1 x tp 2); 4 GPUs in all"),
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
    // One default capacity in tokens on every backend.
    assert_eq!(pool(&["--backend", "sglang"]), (1_048_576, 1_048_576));
    assert_eq!(pool(&["--backend", "trtllm"]), (1_048_576, 32_768));
    assert_eq!(
        pool(&["--backend", "sglang", "--block-size", "64"]),
        (1_048_576, 16_384)
    );
    assert_eq!(
        pool(&["--block-size", "16", "--num-gpu-blocks", "1000"]),
        (16_000, 1000)
    );
    let o = aisim(&["replay", "--dp-size", "5000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("dp_size"), "{}", stderr(&o));
}

#[test]
fn input_errors_print_one_paragraph_and_no_backtrace_even_with_rust_backtrace() {
    for args in [
        &["replay", "--workers", "0"][..],
        &["replay", "/no/such/trace.jsonl"],
        &["replay", "--spec", "/no/such/spec.json"],
        &["replay", "--timing", "table:/no/such/table.json"],
        &["simulate", "--cdf", "/no/such/cdf.json"],
    ] {
        let o = command()
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.starts_with("error: "), "{args:?}: {e}");
        assert!(
            !e.contains("backtrace") && !e.contains("  0: ") && !e.contains("panicked"),
            "{args:?}: {e}"
        );
        // Every `caused by` says something the lines above it do not.
        let lines: Vec<&str> = e.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if let Some(cause) = line.trim().strip_prefix("caused by: ") {
                assert!(
                    !lines[..i].iter().any(|l| l.contains(cause)),
                    "{args:?}: repeated cause in {e}"
                );
            }
        }
    }
    // The typical repetition: a file error embeds the OS error once.
    let o = aisim(&["replay", "/no/such/trace.jsonl"]);
    assert_eq!(
        stderr(&o).matches("No such file or directory").count(),
        1,
        "{}",
        stderr(&o)
    );
}

#[test]
fn negative_numbers_reach_the_flags_own_check() {
    for (args, flag) in [
        (&["replay", "--workers", "-1"][..], "--workers"),
        (&["replay", "--max-num-seqs", "-3"], "--max-num-seqs"),
        (&["replay", "--warmup", "-1"], "--warmup"),
        (&["replay", "--synthetic", "--seed", "-7"], "--seed"),
        (&["replay", "--speedup", "-2"], "admission.speedup"),
        (&["replay", "--timeout", "-0.5"], "discipline.timeout_s"),
        (
            &["replay", "--router", "kv", "--router-temperature", "-1"],
            "--router-temperature: invalid replay spec: `router.temperature`",
        ),
        (
            &["replay", "--router", "kv", "--prefill-load-scale", "-1"],
            "--prefill-load-scale: invalid replay spec: `router.prefill_load_scale`",
        ),
        (
            &["replay", "--synthetic", "--rate", "-3"],
            "workload.arrival.rate",
        ),
        (&["gen-trace", "--requests", "-5"], "--requests"),
        (
            &["gen-trace", "--turns", "2", "--think-ms", "-5"],
            "think_ms",
        ),
        (&["simulate", "--n-s", "-3"], "--n-s"),
        (&["optimize", "--lam", "-5"], "--lam"),
        (&["grid-flex", "--n-gpus", "-4"], "--n-gpus"),
    ] {
        let o = aisim(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        let value = args[args.len() - 1];
        assert!(e.contains(flag), "{args:?}: {e}");
        assert!(
            e.contains(value) && !e.contains("unexpected argument"),
            "{args:?}: {e}"
        );
    }
    let o = aisim(&["replay", "--workers", "-1"]);
    assert!(
        stderr(&o).contains(
            "invalid value '-1' for '--workers <WORKERS>': `-1` is negative: a count is expected"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn flags_that_would_be_ignored_are_errors_naming_them() {
    let trace = fixture("traces/azure_small.csv");
    let synthetic_spec = temp(
        "synthetic-spec.json",
        &stdout(&aisim(&[
            "replay",
            "--synthetic",
            "--requests",
            "7",
            "--print-spec",
        ])),
    );
    let spec = synthetic_spec.to_str().unwrap();
    for (args, needles) in [
        (
            &["replay", &trace, "--requests", "5"][..],
            &["--requests", "azure_small.csv"][..],
        ),
        (
            &["replay", &trace, "--rate", "5"],
            &["--rate", "--synthetic"],
        ),
        (&["replay", &trace, "--turns", "2"], &["--turns"]),
        (&["replay", &trace, "--constant-rate"], &["--constant-rate"]),
        (
            &["replay", &trace, "--burstiness", "0.5"],
            &["--burstiness"],
        ),
        (
            &["replay", &trace, "--input-tokens", "9"],
            &["--input-tokens"],
        ),
        (
            &["replay", "--prefix-groups", "2"],
            &["--prefix-groups", "demo"],
        ),
        (
            &["replay", "--synthetic", "--trace-block-size", "16"],
            &["--trace-block-size", "TRACE"],
        ),
        (
            &["replay", "--trace-format", "azure"],
            &["--trace-format", "demo"],
        ),
        (
            &["replay", "--spec", spec, "--trace-block-size", "16"],
            &["--trace-block-size"],
        ),
        (
            &["replay", "--synthetic", "--think-ms", "5"],
            &["--think-ms", "--turns"],
        ),
        (
            &["replay", "--synthetic", "--prefix-tokens", "64"],
            &["--prefix-tokens", "--prefix-groups"],
        ),
        (
            &["replay", "--synthetic", "--concurrency", "4", "--rate", "3"],
            &["--rate", "--concurrency"],
        ),
        (
            &[
                "replay",
                "--backend",
                "sglang",
                "--max-num-batched-tokens",
                "512",
            ],
            &["--max-num-batched-tokens", "sglang", "max_prefill_tokens"],
        ),
        (
            &["replay", "--backend", "sglang", "--preemption", "fifo"],
            &["--preemption", "sglang"],
        ),
        (
            &["replay", "--print-spec", "--format", "json"],
            &["--format", "--print-spec"],
        ),
        (
            &["replay", "--print-spec", "--per-request", "x.jsonl"],
            &["--per-request", "--print-spec"],
        ),
        (
            &["replay", "--synthetic", "--dispatch", "tracets"],
            &["--dispatch tracets", "--turns"],
        ),
        (
            &["replay", &trace, "--seed", "3"],
            &["--seed", "round_robin", "--router random"],
        ),
        (
            &["replay", &trace, "--router", "kv", "--seed", "3"],
            &["--seed", "kv", "--router-temperature"],
        ),
        (
            &["replay", "--router-temperature", "0"],
            &["--router-temperature", "round_robin", "--router kv"],
        ),
        (
            &["replay", "--router", "lpwl", "--prefill-load-scale", "2"],
            &["--prefill-load-scale", "lpwl"],
        ),
        (
            &["replay", "--router", "sticky", "--prefill-load-scale", "2"],
            &["--prefill-load-scale", "round_robin"],
        ),
        (
            &["replay", "--router", "kv", "--router-inner", "lpwl"],
            &["--router-inner", "kv", "--router sticky"],
        ),
        (
            &["replay", "--max-workers", "4"],
            &["--max-workers", "scaling policy none", "--planner load"],
        ),
        (
            &["replay", "--planner", "none", "--startup-s", "5"],
            &["--startup-s", "--planner load"],
        ),
        (
            &["replay", "--planner", "load", "--decode-max-workers", "2"],
            &["--decode-max-workers has no effect on an aggregated topology"],
        ),
        (
            &["replay", "--planner", "load", "--planner-tpot-ms", "50"],
            &["--planner-tpot-ms has no effect on an aggregated topology"],
        ),
        (
            &[
                "replay",
                "--prefill-workers",
                "1",
                "--decode-workers",
                "1",
                "--kv-bytes-per-token",
                "100",
                "--prefill-min-workers",
                "1",
            ],
            &["--prefill-min-workers has no effect with the scaling policy none"],
        ),
        (
            &[
                "replay",
                "--planner",
                "load",
                "--prefill-workers",
                "2",
                "--decode-workers",
                "1",
                "--kv-bytes-per-token",
                "100",
                "--prefill-max-workers",
                "1",
            ],
            &[
                "--prefill-max-workers: ",
                "`scaling.load.prefill.max_workers`: 1 is below the 2 workers the prefill pool starts with",
            ],
        ),
        (
            &[
                "replay",
                "--planner",
                "load",
                "--workers",
                "4",
                "--max-workers",
                "2",
            ],
            &[
                "--max-workers: ",
                "2 is below the 4 workers the topology starts with",
            ],
        ),
        (
            &["gen-trace", "--think-ms", "5"],
            &["--think-ms", "--turns"],
        ),
        (&["gen-trace", "--synthetic"], &["--synthetic"]),
    ] {
        let o = aisim(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        for n in needles {
            assert!(e.contains(n), "{args:?}: `{n}` missing in {e}");
        }
    }
    // Where they do apply, the same flags refine the workload, also a spec file's.
    let o = aisim(&[
        "replay",
        "--spec",
        spec,
        "--requests",
        "9",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcomes"]["offered"], 9);
    let o = aisim(&["replay", "--spec", spec, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcomes"]["offered"], 7);
}

#[test]
fn a_printed_spec_runs_from_any_folder() {
    let here = temp_dir("here");
    let there = temp_dir("there");
    std::fs::copy(fixture("traces/azure_small.csv"), here.join("t.csv")).unwrap();
    let run = |dir: &Path, args: &[&str]| command().current_dir(dir).args(args).output().unwrap();
    // Printed with a relative TRACE in one folder, run from another.
    let o = run(
        &here,
        &[
            "replay",
            "t.csv",
            "--workers",
            "2",
            "--print-spec",
            "--out",
            "spec.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let spec = here.join("spec.json");
    let a = run(
        &here,
        &["replay", "t.csv", "--workers", "2", "--format", "json"],
    );
    let b = run(
        &there,
        &[
            "replay",
            "--spec",
            spec.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(b.status.success(), "{}", stderr(&b));
    let outcomes = |o: &Output| without_host(&stdout(o))["outcomes"].clone();
    assert_eq!(outcomes(&a), outcomes(&b));
    assert_eq!(outcomes(&b)["completed"], 3);
    // A hand-written spec with a relative path: relative to the spec file.
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace(here.join("t.csv").to_str().unwrap(), "t.csv");
    assert!(text.contains("\"t.csv\""), "{text}");
    std::fs::write(here.join("relative.json"), text).unwrap();
    let c = run(
        &there,
        &[
            "replay",
            "--spec",
            here.join("relative.json").to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(c.status.success(), "{}", stderr(&c));
    assert_eq!(outcomes(&a), outcomes(&c));
}

#[test]
fn a_bad_value_is_named_by_the_flag_that_set_it_or_the_file() {
    for (args, first_line) in [
        (
            &["replay", "--speedup", "-2"][..],
            "error: --speedup: invalid replay spec: `admission.speedup`: -2 must be a finite number above 0",
        ),
        (
            &["replay", "--dp-size", "0"],
            "error: --dp-size: invalid engine configuration: `dp_size` = 0: must be at least 1",
        ),
        (
            &["replay", "--synthetic", "--turns", "0"],
            "error: --turns: invalid replay spec: `workload.turns`: 0: at least 1 turn per session",
        ),
        (
            &["replay", "--drain", "-1"],
            "error: --drain: invalid replay spec: `discipline.drain_s`: -1 must be a finite number, 0 or more",
        ),
        (
            &["gen-trace", "--requests", "0"],
            "error: --requests: invalid replay spec: `workload.requests`: 0: at least 1 request",
        ),
    ] {
        let o = aisim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o), format!("{first_line}\n"), "{args:?}");
    }
    let spec =
        stdout(&aisim(&["replay", "--print-spec"])).replace("\"workers\": 4", "\"workers\": 0");
    let file = temp("zero-workers.json", &spec);
    let o = aisim(&["replay", "--spec", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: invalid replay spec: `topology.workers`: 0 workers: at least 1 is needed\n",
            file.display()
        )
    );
}

#[test]
fn integer_flags_read_whole_numbers_by_the_readers_rule() {
    // `1e2` and `100.0` are 100, as in a trace; the run offers exactly that many.
    for n in ["1e2", "100.0", "100"] {
        let o = aisim(&["replay", "--synthetic", "--requests", n, "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{n}: {}", stderr(&o));
        assert!(stdout(&o).contains("\"offered\": 100,"), "{n}");
    }
    for (n, why) in [
        ("2.5", "`2.5` is not a whole number"),
        ("1e300", "`1e300` is out of range (at most 4294967295)"),
        ("-3", "`-3` is negative: a count is expected"),
    ] {
        let o = aisim(&["replay", "--workers", n]);
        assert_eq!(o.status.code(), Some(2), "{n}");
        assert!(stderr(&o).contains(why), "{n}: {}", stderr(&o));
    }
}

#[test]
fn huge_values_are_quoted_in_exponent_form_in_every_message() {
    let cases: [&[&str]; 4] = [
        &[
            "disagg",
            "--cdf",
            "azure",
            "--lam",
            "100",
            "--gpu-prefill",
            "h100",
            "--gpu-decode",
            "h100",
            "--mean-isl",
            "1e308",
        ],
        &["optimize", "--cdf", "azure", "--lam", "1e308"],
        &["replay", "--timing", "fixed:1e308,5"],
        &[
            "simulate", "--cdf", "azure", "--lam", "10", "--n-s", "1", "--n-l", "1", "--warmup",
            "1e300",
        ],
    ];
    for args in cases {
        let o = aisim(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("= 1e30") && !e.contains("00000000"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn the_largest_kv_pool_costs_what_it_holds() {
    // The most blocks a pool may have (2^26): reserving their metadata up
    // front would be an abort under a memory limit. Run under 2 GB; one more
    // block is refused, naming the flag and the memory.
    let over = aisim(&["replay", "--num-gpu-blocks", "67108865"]);
    assert_eq!(over.status.code(), Some(2));
    assert!(
        stderr(&over).contains("--num-gpu-blocks") && stderr(&over).contains("2.5 GiB"),
        "{}",
        stderr(&over)
    );
    for backend in ["vllm", "sglang"] {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 2000000 && exec '{}' replay --num-gpu-blocks 67108864 --block-size 1 --backend {backend} --format json",
                env!("CARGO_BIN_EXE_aisim")
            ))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{backend}: {}", stderr(&o));
        assert!(stdout(&o).contains("\"completed\": 240"), "{backend}");
    }
}

#[test]
fn errors_found_while_running_lead_with_the_flag_too() {
    // The speedup is checked against each trace line only once the trace is
    // read, after the spec's own checks: the message still names the flag.
    let trace = fixture("traces/mooncake_small.jsonl");
    let o = aisim(&["replay", &trace, "--speedup", "1e-300"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.starts_with("error: --speedup: invalid replay spec: `admission.speedup`: 1e-300 stretches line 2 of"),
        "{e}"
    );
    assert!(!e.contains("caused by"), "{e}");
}

#[test]
fn every_router_runs_and_the_report_names_the_policy_that_ran() {
    for (args, name) in [
        (&["--router", "kv"][..], "kv"),
        (
            &[
                "--router",
                "kv",
                "--router-temperature",
                "0.5",
                "--seed",
                "3",
            ],
            "kv",
        ),
        (&["--router", "lpwl"], "lpwl"),
        (&["--router", "sticky"], "sticky(round_robin)"),
        (
            &[
                "--router",
                "sticky",
                "--router-inner",
                "kv",
                "--prefill-load-scale",
                "2",
            ],
            "sticky(kv)",
        ),
    ] {
        let mut all = vec!["replay", "--format", "json", "-q"];
        all.extend_from_slice(args);
        let o = aisim(&all);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["policies"]["placement"], name, "{args:?}");
        assert_eq!(v["policies"]["scaling"], "none", "{args:?}");
        let o = &v["outcomes"];
        let ended: u64 = ["completed", "timed_out", "rejected", "incomplete"]
            .iter()
            .map(|k| o[k].as_u64().unwrap())
            .sum();
        assert_eq!(ended, o["offered"].as_u64().unwrap(), "{args:?}");
    }
    // Sticky over sticky is refused, naming the flag.
    let o = aisim(&["replay", "--router", "sticky", "--router-inner", "sticky"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--router-inner: invalid replay spec: `router.inner`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_load_planner_scales_each_disaggregated_pool_from_flags() {
    let args = [
        "replay",
        "--synthetic",
        "--requests",
        "400",
        "--rate",
        "40",
        "--burstiness",
        "0.05",
        "--timing",
        "fixed:40,10",
        "--prefill-workers",
        "1",
        "--decode-workers",
        "1",
        "--prefill-max-num-seqs",
        "1",
        "--decode-max-num-seqs",
        "4",
        "--kv-bytes-per-token",
        "100",
        "--planner",
        "load",
        "--prefill-max-workers",
        "3",
        "--decode-max-workers",
        "5",
        "--planner-tick-s",
        "2",
        "--startup-s",
        "1",
        "--planner-ttft-ms",
        "300",
        "--planner-tpot-ms",
        "40",
        "--format",
        "json",
    ];
    let v = json_ok(&args);
    let load = &v["spec"]["scaling"]["load"];
    assert_eq!(load["prefill"]["max_workers"], 3);
    assert_eq!(load["decode"]["max_workers"], 5);
    assert_eq!(load["tpot_ms"], 40.0);
    let timeline = v["scaling"]["timeline"].as_array().unwrap();
    for (pool, max) in [("prefill", 3), ("decode", 5)] {
        let n: Vec<u64> = timeline
            .iter()
            .filter(|c| c["pool"] == pool)
            .map(|c| c["workers"].as_u64().unwrap())
            .collect();
        assert!(
            n.len() > 1 && n.iter().all(|&n| (1..=max).contains(&n)),
            "{pool}: {n:?}"
        );
        // The burst drives each pool to its own cap (3 and 5), not a shared one.
        assert_eq!(n.iter().max(), Some(&max), "{pool}: {n:?}");
    }
    let pools = v["pools"].as_array().unwrap();
    assert!(pools
        .iter()
        .all(|p| p["worker_seconds"].as_f64().unwrap() > 0.0));
    // The table names each pool's planner and its target.
    let table = stdout(&aisim(&args[..args.len() - 2]));
    for row in [
        "planner, prefill  1..=3 workers, a tick every 2 s, startup 1 s; targets: p90 TTFT 300 ms",
        "planner, decode   1..=5 workers, a tick every 2 s, startup 1 s; targets: p90 TPOT 40 ms",
    ] {
        assert!(table.contains(row), "{row} not in\n{table}");
    }
}

#[test]
fn the_load_planner_runs_from_flags_and_its_timeline_is_in_the_json() {
    let args = [
        "replay",
        "--synthetic",
        "--requests",
        "400",
        "--rate",
        "20",
        "--burstiness",
        "0.05",
        "--workers",
        "1",
        "--planner",
        "load",
        "--max-workers",
        "4",
        "--planner-tick-s",
        "2",
        "--startup-s",
        "1",
        "--planner-ttft-ms",
        "200",
        "--format",
        "json",
    ];
    let o = aisim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["policies"]["scaling"], "load");
    assert_eq!(v["spec"]["scaling"]["load"]["max_workers"], 4);
    let timeline = v["scaling"]["timeline"].as_array().unwrap();
    assert!(timeline.len() > 1, "{timeline:?}");
    for c in timeline {
        assert!(c["t_s"].is_f64() && c["pool"] == "workers" && c["workers"].is_u64());
    }
    // The same run from its printed spec.
    let dir = temp_dir("planner-spec");
    let spec = dir.join("spec.json");
    let mut print = args[..args.len() - 2].to_vec();
    print.extend(["--print-spec", "--out", spec.to_str().unwrap()]);
    assert!(aisim(&print).status.success());
    let again = aisim(&[
        "replay",
        "--spec",
        spec.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(without_host(&stdout(&o)), without_host(&stdout(&again)));
}

/// Human output rounds to meaningful digits; JSON keeps the full value.
#[test]
fn tables_round_floats_and_json_keeps_them() {
    let args = [
        "replay",
        "--synthetic",
        "--requests",
        "20",
        "--timing",
        "fixed:20.123456789,5.000000001",
        "--timeout",
        "2.0000000001",
    ];
    let o = aisim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {table}"))
            .to_string()
    };
    assert!(
        line("timing ").ends_with("fixed: 20.12 ms prefill, 5 ms decode"),
        "{table}"
    );
    assert!(
        line("timeout / drain ").ends_with("2 s / until done"),
        "{table}"
    );
    let o = aisim(&[&args[..], &["--format", "json"]].concat());
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["spec"]["timing"]["prefill_ms"], 20.123456789);
    assert_eq!(json["spec"]["discipline"]["timeout_s"], 2.0000000001);
}

/// Commands that write files say on stderr what they wrote (the file, how
/// many rows or runs); stdout keeps what it carried.
#[test]
fn gen_trace_and_sweep_merge_say_what_they_wrote() {
    let dir = temp_dir("said");
    let trace = dir.join("t.jsonl");
    let o = aisim(&[
        "gen-trace",
        "--requests",
        "7",
        "--turns",
        "3",
        "--think-ms",
        "10",
        "--out",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = std::fs::read_to_string(&trace).unwrap().lines().count();
    assert_eq!(rows, 21);
    assert_eq!(
        stderr(&o),
        format!("wrote 21 requests in 7 sessions to {}\n", trace.display())
    );
    // On stdout the trace alone; the note on stderr.
    let o = aisim(&["gen-trace", "--requests", "5"]);
    assert_eq!(stdout(&o).lines().count(), 5);
    assert_eq!(stderr(&o), "wrote 5 requests to stdout\n");
    // A sweep merged: its runs, plan and files.
    let (_, runs) = ci_grid_run(&dir);
    let runs = runs.as_str();
    let (results, csv) = (dir.join("r.jsonl"), dir.join("r.csv"));
    let o = aisim(&[
        "sweep",
        "merge",
        runs,
        "--out",
        results.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let digest = std::fs::read_to_string(&results).unwrap();
    let first: serde_json::Value = serde_json::from_str(digest.lines().next().unwrap()).unwrap();
    assert_eq!(
        stderr(&o),
        format!(
            "merged 8 runs of plan {} into {}, the CSV to {}\n",
            first["plan"].as_str().unwrap(),
            results.display(),
            csv.display()
        )
    );
}

/// The table says what a figure is when it has none: one arrival has no
/// offered rate, and no SLO threshold means no goodput (both `null` in JSON).
#[test]
fn a_one_request_run_has_no_offered_rate_and_no_goodput_without_an_slo() {
    let args = ["replay", "--synthetic", "--requests", "1"];
    let o = aisim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("no offered rate: 1 arrival only, no span to divide by"),
        "{table}"
    );
    assert!(
        table.contains("Goodput: not measured, no SLO threshold was given"),
        "{table}"
    );
    assert!(!table.contains("100.0%"), "{table}");
    let o = aisim(&[&args[..], &["--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["throughput"]["offered_rps"].is_null(), "{v}");
    assert!(v["throughput"]["goodput_rps"].is_null(), "{v}");
    assert!(v["sla"]["attainment"]["all"].is_null(), "{v}");
    // With a threshold, goodput is measured and its row shows.
    let o = aisim(&[&args[..], &["--slo-ttft-ms", "1000000"]].concat());
    let table = stdout(&o);
    let goodput = table
        .split("Goodput: 1 requests met every threshold")
        .nth(1)
        .expect("a goodput table");
    let rows: Vec<&str> = goodput.lines().skip(3).take(2).collect();
    assert!(
        rows[0].starts_with("TTFT") && rows[0].ends_with("100.0%"),
        "{table}"
    );
    assert!(
        rows[1].starts_with("all") && rows[1].ends_with("100.0%"),
        "{table}"
    );
}

//! Never lose or mix a user's data (docs/errors.md, "Output files"): an
//! output that is an input, or another output, is refused before any work;
//! outputs appear whole or not at all; a sweep refuses inputs that changed
//! under its plan; runs end; degenerate input is an error, not a number;
//! user text reaches a terminal or a spreadsheet defused. A test per class.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The command failed with exit 2, and stderr holds every `needle`.
fn refused_with(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
}

fn ok(o: Output) -> Output {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

/// A copy of the small Mooncake fixture in `dir`.
fn trace_in(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(fixture("traces/mooncake_small.jsonl"), &p).unwrap();
    p
}

/// The files of `dir`, by name.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

#[test]
fn an_output_that_is_an_input_or_another_output_is_refused_and_nothing_is_touched() {
    let dir = temp_dir("safety-clash");
    let t = trace_in(&dir, "t.jsonl");
    let before = std::fs::read_to_string(&t).unwrap();
    // The trace as --per-request, also through `..` and a symlink.
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&t, &link).unwrap();
    for same in [t.clone(), sub.join("../t.jsonl"), link] {
        let o = aisim(&["replay", s(&t), "--per-request", s(&same)]);
        refused_with(&o, &["--per-request", "is also TRACE"]);
    }
    assert_eq!(std::fs::read_to_string(&t).unwrap(), before);
    // A spec file, and the trace it names.
    let spec = dir.join("s.json");
    std::fs::write(
        &spec,
        stdout(&ok(aisim(&["replay", s(&t), "--print-spec"]))),
    )
    .unwrap();
    let o = aisim(&["replay", "--spec", s(&spec), "--per-request", s(&spec)]);
    refused_with(&o, &["is also --spec"]);
    let o = aisim(&["replay", "--spec", s(&spec), "--per-request", s(&t)]);
    refused_with(&o, &["is also --spec's workload.path"]);
    // Two outputs on one file.
    let f = dir.join("f.json");
    let o = aisim(&["replay", "--out", s(&f), "--per-request", s(&f)]);
    refused_with(&o, &["--per-request", "is also --out"]);
    let o = aisim(&["replay", "--out", s(&f), "--html", s(&f)]);
    refused_with(&o, &["--html", "is also --out"]);
    assert!(!f.exists());
    // compare, validate's runs, a fleet file, an import over its source.
    let a = dir.join("a.json");
    ok(aisim(&["replay", "--out", s(&a), "--format", "json"]));
    let o = aisim(&["compare", s(&a), s(&a), "--out", s(&a)]);
    refused_with(&o, &["--out", "is also A.json"]);
    let fleet = dir.join("fleet.json");
    std::fs::copy(fixture("fleet.json"), &fleet).unwrap();
    let o = aisim(&["simulate-fleet", s(&fleet), "--html", s(&fleet)]);
    refused_with(&o, &["--html", "is also FILE"]);
    let requests = dir.join("in.jsonl");
    std::fs::write(&requests, REQUESTS).unwrap();
    let o = aisim(&["measured", "import", s(&requests), "--out", s(&requests)]);
    refused_with(&o, &["--out", "is also INPUT"]);
    let run = dir.join("run.json");
    ok(aisim(&[
        "measured",
        "import",
        s(&requests),
        "--out",
        s(&run),
    ]));
    let trace = dir.join("run.trace.jsonl");
    let o = aisim(&["measured", "import", s(&trace), "--out", s(&run)]);
    refused_with(&o, &["--out's trace", "is also INPUT"]);
    let o = aisim(&["validate", s(&run), "--out", s(&trace)]);
    refused_with(&o, &["--out", "run.json's workload.path"]);
    assert_eq!(std::fs::read_to_string(&requests).unwrap(), REQUESTS);
}

#[test]
fn sweep_merge_outputs_are_checked_against_each_other_and_the_results() {
    let dir = temp_dir("safety-merge");
    let plan = plan_of(&dir, "g", "");
    let out = dir.join("out");
    ok(sweep_run(&plan, &out, &["--quiet"]));
    let x = dir.join("x");
    let o = aisim(&["sweep", "merge", s(&out), "--out", s(&x), "--csv", s(&x)]);
    refused_with(&o, &["--csv", "is also --out"]);
    let o = aisim(&["sweep", "merge", s(&out), "--out", s(&out.join("0.json"))]);
    refused_with(&o, &["--out", "is also DIR"]);
    assert!(!x.exists());
}

#[test]
fn an_output_whose_folder_is_missing_is_refused_before_the_work() {
    let dir = temp_dir("safety-folder");
    let per_request = dir.join("p.jsonl");
    let o = aisim(&[
        "replay",
        "--synthetic",
        "--requests",
        "1000000",
        "--per-request",
        s(&per_request),
        "--out",
        "/nonexistent/x.json",
    ]);
    refused_with(
        &o,
        &["--out /nonexistent/x.json: the folder /nonexistent does not exist"],
    );
    assert!(!per_request.exists(), "nothing ran");
    let (_, run) = imported(&dir);
    let o = aisim(&["calibrate", s(&run), "--out", "/nonexistent/f.json"]);
    refused_with(&o, &["the folder /nonexistent does not exist"]);
    let o = aisim(&["gen-trace", "--out", "/nonexistent/t.jsonl"]);
    refused_with(&o, &["the folder /nonexistent does not exist"]);
}

#[test]
fn a_command_that_fails_half_way_leaves_the_old_file_and_no_temporary() {
    let dir = temp_dir("safety-atomic");
    let out = dir.join("t.jsonl");
    std::fs::write(&out, "old\n").unwrap();
    // Turn 3's prompt (the conversation so far) would not fit a length.
    let o = aisim(&[
        "gen-trace",
        "--requests",
        "3",
        "--turns",
        "3",
        "--input-tokens",
        "2000000000",
        "--out",
        s(&out),
    ]);
    refused_with(&o, &["turn 3 of session", "more than a prompt can hold"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    assert_eq!(names(&dir), ["t.jsonl"]);
    // A device is written, never replaced.
    ok(aisim(&["replay", "--out", "/dev/null"]));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
}

#[test]
fn a_run_whose_clock_would_pass_its_limit_stops_with_an_error_naming_the_timing() {
    let one = temp_file(
        "one.jsonl",
        "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 500}\n",
    );
    let o = aisim(&["replay", s(&one), "--timing", "fixed:1e11,1e11"]);
    refused_with(
        &o,
        &[
            "clock would pass its limit of 2^63 ns",
            "timing model `fixed`",
        ],
    );
}

/// This machine's name, as temporary file names carry it.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// The common per-request file in `dir` and its measured run (an H100
/// physics timing), imported.
fn imported(dir: &Path) -> (PathBuf, PathBuf) {
    let requests = dir.join("in.jsonl");
    std::fs::write(&requests, REQUESTS).unwrap();
    let run = dir.join("run.json");
    let args = ["measured", "import", s(&requests), "--out", s(&run)];
    ok(aisim(
        &[&args[..], &["--profile", "h100/llama-3.1-8b"]].concat(),
    ));
    (requests, run)
}

/// `aisim sweep run PLAN --out OUT EXTRA...`.
fn sweep_run(plan: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", "run", s(plan), "--out", s(out)];
    args.extend_from_slice(extra);
    aisim(&args)
}

/// A one-axis plan over a copy of the fixture trace (`seed` twice).
fn plan_of(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let trace = trace_in(dir, &format!("{name}.jsonl"));
    let grid = dir.join(format!("{name}.toml"));
    std::fs::write(
        &grid,
        format!(
            "base_args = [\"{}\", \"--workers\", \"2\"]\n[axes]\nseed = [1, 2]\n{extra}",
            s(&trace)
        ),
    )
    .unwrap();
    let plan = dir.join(format!("{name}.plan.jsonl"));
    ok(aisim(&["sweep", "plan", s(&grid), "--out", s(&plan)]));
    plan
}

#[test]
fn a_sweep_refuses_a_trace_changed_under_its_plan_and_merge_refuses_mixed_reports() {
    let dir = temp_dir("safety-inputs");
    let plan = plan_of(&dir, "g", "");
    let out = dir.join("out");
    ok(sweep_run(&plan, &out, &["--shard", "0/2", "--quiet"]));
    let trace = dir.join("g.jsonl");
    let mut text = std::fs::read_to_string(&trace).unwrap();
    text.push_str("{\"timestamp\": 9000, \"input_length\": 10, \"output_length\": 2}\n");
    std::fs::write(&trace, text).unwrap();
    let o = sweep_run(&plan, &out, &["--shard", "1/2", "--quiet"]);
    refused_with(&o, &[s(&trace), "changed since plan", "(run 1 of"]);
    // Restored, shard 1 runs; with the full report where shard 0 had none,
    // neither its own merge nor `sweep merge` mixes them.
    std::fs::copy(fixture("traces/mooncake_small.jsonl"), &trace).unwrap();
    let o = sweep_run(&plan, &out, &["--shard", "1/2", "--quiet", "--full-report"]);
    refused_with(&o, &["mix runs with the full report", "and without"]);
    assert!(out.join("1.json").is_file() && !out.join("results.jsonl").exists());
    let o = aisim(&["sweep", "merge", s(&out), "--out", "-"]);
    refused_with(&o, &["mix runs with the full report", "and without"]);
}

#[test]
fn only_a_dead_processs_temporaries_are_cleaned_and_a_killed_run_restarts() {
    let dir = temp_dir("safety-temps");
    let plan = plan_of(&dir, "g", "");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // A live writer's temporary (this test's own pid), a half-written
    // result of a killed process here (no pid reaches 4194305), and one of
    // a process on another machine sharing the folder.
    let host = host();
    let live = out.join(format!(".0.json.tmp-{host}~{}", std::process::id()));
    std::fs::write(&live, "{\"half\":").unwrap();
    let dead = out.join(format!(".1.json.tmp-{host}~4194305"));
    std::fs::write(&dead, "{\"half\":").unwrap();
    let elsewhere = out.join(".1.json.tmp-another-host~4194305");
    std::fs::write(&elsewhere, "{\"half\":").unwrap();
    ok(sweep_run(&plan, &out, &["--quiet", "--threads", "100000"]));
    assert!(live.exists(), "a live writer's file is kept");
    assert!(elsewhere.exists(), "another host's file is kept");
    assert!(!dead.exists(), "a dead writer's file is removed");
    let merged = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(merged.lines().count(), 2);
    std::fs::remove_file(&live).unwrap();
}

#[test]
fn a_fifo_in_a_results_folder_is_refused_by_name_not_waited_on() {
    let dir = temp_dir("safety-fifo");
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let fifo = results.join("0.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let o = aisim(&["sweep", "merge", s(&results), "--out", "-"]);
    refused_with(&o, &[s(&fifo), "not a regular file"]);
}

#[test]
fn a_grid_refuses_non_finite_numbers_and_values_given_twice() {
    let dir = temp_dir("safety-grid");
    let grid = dir.join("nan.toml");
    std::fs::write(
        &grid,
        "base_args = [\"--synthetic\", \"--requests\", \"5\"]\n[axes]\n\"discipline.timeout_s\" = [nan, 5]\n",
    )
    .unwrap();
    let o = aisim(&["sweep", "plan", s(&grid), "--out", "-"]);
    refused_with(
        &o,
        &["`axes.discipline.timeout_s[0] = NaN`: not a finite number"],
    );
    std::fs::write(
        &grid,
        "base_args = [\"--synthetic\", \"--requests\", \"5\"]\n[axes]\n\"admission.speedup\" = [1, 1.0]\n",
    )
    .unwrap();
    let o = aisim(&["sweep", "plan", s(&grid), "--out", "-"]);
    refused_with(&o, &["axis `admission.speedup`: 1.0 is given twice"]);
}

#[test]
fn nothing_to_compare_is_an_error_and_impossible_measurements_are_refused() {
    let dir = temp_dir("safety-degenerate");
    let (_, run) = imported(&dir);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
    v["measured"] = serde_json::json!({});
    v["name"] = "empty".into();
    v.as_object_mut().unwrap().remove("requests");
    let empty = dir.join("empty.json");
    std::fs::write(&empty, v.to_string()).unwrap();
    let o = aisim(&["validate", s(&empty)]);
    refused_with(&o, &["nothing to compare"]);
    let fitted = dir.join("fitted.json");
    let o = aisim(&["calibrate", s(&empty), "--out", s(&fitted)]);
    refused_with(&o, &["nothing to compare"]);
    assert!(!fitted.exists());
    // In a set, the run is left out and named.
    let o = ok(aisim(&["validate", s(&run), s(&empty)]));
    assert!(
        stdout(&o).contains("left out, nothing to compare: empty"),
        "{}",
        stdout(&o)
    );
    // A p50 above the p99, and 20 tokens in no time.
    v["measured"] = serde_json::json!({"ttft_ms": {"p50": 90.0, "p99": 50.0}});
    std::fs::write(&empty, v.to_string()).unwrap();
    refused_with(
        &aisim(&["validate", s(&empty)]),
        &["measured.ttft_ms.p50", "is above p99"],
    );
    let zero = dir.join("zero.jsonl");
    std::fs::write(
        &zero,
        REQUESTS.replace("\"end_s\": 10.5", "\"end_s\": 10.05"),
    )
    .unwrap();
    let o = aisim(&[
        "measured",
        "import",
        s(&zero),
        "--out",
        s(&dir.join("z.json")),
    ]);
    refused_with(
        &o,
        &["zero.jsonl:1: field `end_s`", "19 tokens came after it"],
    );
}

#[test]
fn user_text_reaches_a_terminal_escaped_and_a_spreadsheet_as_text() {
    let dir = temp_dir("safety-text");
    let evil = dir.join("t\u{1b}]0;pwned\u{7}.jsonl");
    std::fs::copy(fixture("traces/mooncake_small.jsonl"), &evil).unwrap();
    let o = ok(aisim(&["replay", evil.to_str().unwrap()]));
    assert!(!stdout(&o).contains('\u{1b}') && stdout(&o).contains("\\x1b]0;pwned\\x07"));
    let o = aisim(&["replay", dir.join("no\u{1b}[31m.jsonl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !stderr(&o).contains('\u{1b}') && stderr(&o).contains("\\x1b[31m"),
        "{}",
        stderr(&o)
    );
    // A session id that a spreadsheet would run as a formula.
    let trace = temp_file(
        "formula.jsonl",
        "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 4, \"session_id\": \"=HYPERLINK(\\\"http://x\\\")\"}\n",
    );
    let csv = dir.join("r.csv");
    ok(aisim(&["replay", s(&trace), "--per-request", s(&csv)]));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("'=HYPERLINK"), "{text}");
    assert!(
        !text.contains(",=HYPERLINK") && !text.contains(",\"=HYPERLINK"),
        "{text}"
    );
}

#[test]
fn values_with_a_leading_hyphen_reach_the_flags_own_check() {
    let dir = temp_dir("safety-hyphen");
    let plan = plan_of(&dir, "g", "");
    let o = sweep_run(&plan, &dir.join("o"), &["--shard", "-1/2"]);
    refused_with(&o, &["-1/2"]);
    assert!(
        !stderr(&o).contains("unexpected argument"),
        "{}",
        stderr(&o)
    );
    let o = aisim(&["replay", "--drain", "-inf"]);
    refused_with(&o, &["--drain"]);
    assert!(
        !stderr(&o).contains("unexpected argument"),
        "{}",
        stderr(&o)
    );
    // `-` is stdout, which a results folder cannot be.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_aisim"))
        .current_dir(&dir)
        .args(["sweep", "run", s(&plan), "--out", "-"])
        .output()
        .unwrap();
    refused_with(&o, &["--out -: sweep run writes a results folder"]);
    assert!(!dir.join("-").exists());
}

#[test]
fn what_sweep_plan_writes_sweep_run_reads() {
    let dir = temp_dir("safety-plan-size");
    let grid = dir.join("big.toml");
    let write = |runs: u32| {
        std::fs::write(
            &grid,
            format!("base_args = [\"--synthetic\", \"--requests\", \"5\"]\n[axes]\nseed = \"1..{runs}\"\n"),
        )
        .unwrap()
    };
    // 100,000 runs would be a plan file of about 108 MiB: refused by `plan`.
    write(100_000);
    let plan = dir.join("plan.jsonl");
    let o = aisim(&["sweep", "plan", s(&grid), "--out", s(&plan)]);
    refused_with(&o, &["the plan of 100000 runs would be", "over the 64 MiB"]);
    assert!(!plan.exists());
    // 50,000 (about 54 MiB) is planned, and `run` reads it.
    write(50_000);
    ok(aisim(&["sweep", "plan", s(&grid), "--out", s(&plan)]));
    let out = dir.join("out");
    ok(sweep_run(&plan, &out, &["--shard", "0/50000", "--quiet"]));
    assert!(out.join("00000.json").is_file());
}

#[test]
fn replacing_an_output_keeps_what_a_plain_write_kept() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = temp_dir("safety-replace");
    // Two outputs on one device are no clash; the device stays a device.
    ok(aisim(&[
        "replay",
        "--out",
        "/dev/null",
        "--per-request",
        "/dev/null",
    ]));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    // The old file's permissions are kept.
    let private = dir.join("private.json");
    std::fs::write(&private, "old").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(aisim(&["replay", "--out", s(&private)]));
    assert_eq!(std::fs::metadata(&private).unwrap().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&private)
        .unwrap()
        .contains("\"outcomes\""));
    // A read-only file is refused, as a plain create refused it.
    let ro = dir.join("ro.json");
    std::fs::write(&ro, "keep").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    refused_with(&aisim(&["replay", "--out", s(&ro)]), &["read-only"]);
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep");
    // A file with another hard link is written in place: both names see it.
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    std::fs::write(&a, "old").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    ok(aisim(&["replay", "--out", s(&a)]));
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap()
    );
    assert!(!dir.read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".tmp-")));
}

#[test]
fn a_plans_and_a_validations_other_inputs_are_inputs_too() {
    let dir = temp_dir("safety-more-inputs");
    // A grid's base spec file, and the trace its runs read.
    let trace = trace_in(&dir, "t.jsonl");
    let base = dir.join("base.json");
    std::fs::write(
        &base,
        stdout(&ok(aisim(&["replay", s(&trace), "--print-spec"]))),
    )
    .unwrap();
    let grid = dir.join("g.json");
    std::fs::write(&grid, r#"{"base": "base.json", "axes": {"seed": [1, 2]}}"#).unwrap();
    let base_text = std::fs::read_to_string(&base).unwrap();
    let o = aisim(&["sweep", "plan", s(&grid), "--out", s(&trace)]);
    refused_with(&o, &["--out", "is also a run's input"]);
    let o = aisim(&["sweep", "plan", s(&grid), "--out", s(&base)]);
    refused_with(&o, &["--out", "is also the grid's base"]);
    assert_eq!(std::fs::read_to_string(&base).unwrap(), base_text);
    // validate's --timing file.
    let (_, run) = imported(&dir);
    let fitted = dir.join("fitted.json");
    std::fs::write(&fitted, r#"{"version": 1, "coefficients": {}}"#).unwrap();
    let timing = format!("fitted:{}", s(&fitted));
    let o = aisim(&[
        "validate",
        s(&run),
        "--timing",
        &timing,
        "--out",
        s(&fitted),
    ]);
    refused_with(&o, &["--out", "is also --timing"]);
}

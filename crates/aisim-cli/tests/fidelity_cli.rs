//! `aisim measured import`, `validate` and `calibrate` through the binary.

mod common;

use std::path::Path;

use common::*;

/// Imports the common per-request file in `dir` as `NAME.json` with
/// `extra` flags: the run's path and what the command printed.
fn import_as(dir: &Path, name: &str, extra: &[&str]) -> (std::path::PathBuf, std::process::Output) {
    let req = dir.join("requests.jsonl");
    std::fs::write(&req, REQUESTS).unwrap();
    let run = dir.join(format!("{name}.json"));
    let args = [
        "measured",
        "import",
        req.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ];
    let o = aisim(&[&args[..], extra].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (run, o)
}

fn import(dir: &Path) -> String {
    let (run, _) = import_as(dir, "run", &["--profile", "h100/llama-3.1-8b"]);
    assert!(dir.join("run.trace.jsonl").is_file());
    run.to_str().unwrap().to_string()
}

#[test]
fn import_validate_calibrate_round_trip() {
    let dir = temp_dir("fidelity-round-trip");
    let run = import(&dir);
    let text = std::fs::read_to_string(&run).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // TTFT of request a: 50 ms; output tokens 143 over 10.0 .. 12.8 s.
    assert_eq!(v["measured"]["completed"], 6);
    let tok_s = v["measured"]["output_tok_s"].as_f64().unwrap();
    assert!((tok_s - 143.0 / 2.8).abs() < 1e-9, "{tok_s}");
    assert_eq!(v["spec"]["workload"]["path"], "run.trace.jsonl");
    // The per-request file beside it is the generic shape, in arrival
    // order: imported again, it gives the same measurement and trace.
    assert_eq!(v["requests"], "run.requests.jsonl");
    let again = dir.join("again.json");
    let o = aisim(&[
        "measured",
        "import",
        dir.join("run.requests.jsonl").to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(w["measured"], v["measured"]);
    let trace = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(trace("again.trace.jsonl"), trace("run.trace.jsonl"));
    let o = aisim(&["validate", &run, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let metrics = j["runs"][0]["metrics"].as_array().unwrap();
    assert!(metrics
        .iter()
        .any(|m| m["metric"] == "ttft_ms" && m["stat"] == "p90"));
    assert!(j["runs"][0]["mape_pct"]["overall"].as_f64().unwrap() > 0.0);
    assert!(j["mape_pct"]["ttft_ms"].is_number());
    // Calibrate, twice: the same coefficients; then validate with them.
    let fitted = dir.join("fitted.json");
    let f = fitted.to_str().unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        let o = aisim(&["calibrate", &run, "--out", f, "--max-evaluations", "60"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stderr(&o), "", "no progress off a terminal");
        assert!(stdout(&o).contains("calibrated MAPE"), "{}", stdout(&o));
        seen.push(std::fs::read_to_string(&fitted).unwrap());
    }
    assert_eq!(seen[0], seen[1]);
    let timing = format!("fitted:{f}");
    let o = aisim(&["validate", &run, "--timing", &timing, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let before = j["mape_pct"]["overall"].as_f64().unwrap();
    assert!(after["mape_pct"]["overall"].as_f64().unwrap() <= before);
    // The same fitted file drives a replay.
    let trace = dir.join("run.trace.jsonl");
    let replay_on = |profile: &str| {
        let args = ["replay", trace.to_str().unwrap(), "--timing", &timing];
        aisim(&[&args[..], &["--profile", profile, "--format", "json"]].concat())
    };
    let o = replay_on("h100/llama-3.1-8b");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("were fitted on"), "{}", stderr(&o));
    // The file records what it was fitted on; another profile is warned of
    // (`a_fitted_timing_used_with_another_profile_warns` tests the warning).
    let file: serde_json::Value = serde_json::from_str(&seen[0]).unwrap();
    assert_eq!(file["profiles"], serde_json::json!(["h100/llama-3.1-8b"]));
    let o = replay_on("a100/llama-3.1-8b");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("were fitted on h100/llama-3.1-8b, and are used here with a100/llama-3.1-8b"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A fitted file used with a profile it was not fitted on: the replay warns
/// on stderr, in the report's JSON (`warnings`) and in its table; with the
/// profile it was fitted on (written another way) it does not, and a spec
/// printed with `--print-spec` keeps what the file was fitted on.
#[test]
fn a_fitted_timing_used_with_another_profile_warns() {
    let fitted = temp_file(
        "fitted-h100.json",
        r#"{"version": 1, "coefficients": {"compute": 1.2}, "profiles": ["h100/llama-3.1-8b"]}"#,
    );
    let timing = format!("fitted:{}", fitted.display());
    let replay = |profile: &str, format: &str| {
        aisim(&[
            "replay",
            "--synthetic",
            "--requests",
            "20",
            "--timing",
            &timing,
            "--profile",
            profile,
            "--format",
            format,
        ])
    };
    let warning = "the physics coefficients were fitted on h100/llama-3.1-8b, and are used here with a100/llama-3.1-8b: they describe other hardware or another model";
    let o = replay("a100/llama-3.1-8b", "json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(warning), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([warning]));
    assert_eq!(
        v["spec"]["timing"]["fitted_on"],
        serde_json::json!(["h100/llama-3.1-8b"])
    );
    let o = replay("a100/llama-3.1-8b", "table");
    assert!(
        stdout(&o).contains(&format!("warning          {warning}")),
        "{}",
        stdout(&o)
    );
    for same in ["h100/llama-3.1-8b", "H100/llama-3.1-8b/tp1"] {
        let o = replay(same, "json");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stderr(&o).contains("were fitted on"), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert!(v.get("warnings").is_none(), "{same}: {}", v["warnings"]);
    }
    // The spec carries the fit's profiles: run from a file, it warns too.
    let o = aisim(&[
        "replay",
        "--synthetic",
        "--requests",
        "20",
        "--timing",
        &timing,
        "--profile",
        "a100/llama-3.1-8b",
        "--print-spec",
    ]);
    let spec = temp_file("fitted-spec.json", &stdout(&o));
    let o = aisim(&[
        "replay",
        "--spec",
        spec.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(warning), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([warning]));
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

#[test]
fn bad_measured_runs_and_flags_exit_2_naming_the_field() {
    let dir = temp_dir("fidelity-bad");
    let run = import(&dir);
    let text = std::fs::read_to_string(&run).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let write = |name: &str, v: &serde_json::Value| {
        let p = dir.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let mut no_spec = v.clone();
    no_spec.as_object_mut().unwrap().remove("spec");
    fails(
        &["validate", &write("nospec.json", &no_spec)],
        &["nospec.json", "`spec`", "missing"],
    );
    let mut unknown = v.clone();
    unknown["measured"]["goodput"] = 1.into();
    fails(
        &["validate", &write("unknown.json", &unknown)],
        &["`measured.goodput`", "unknown field"],
    );
    let mut negative = v.clone();
    negative["measured"]["ttft_ms"]["p90"] = (-5.0).into();
    fails(
        &["validate", &write("negative.json", &negative)],
        &["`measured.ttft_ms.p90`", "-5"],
    );
    v["measured"]["completed"] = 9.into();
    fails(
        &["validate", &write("count.json", &v)],
        &["measured.completed", "9 requests measured", "holds 6"],
    );
    fails(
        &["calibrate", &run, "--out", "-", "--fit", "speed"],
        &["--fit speed", "compute"],
    );
    fails(
        &["validate", &run, "--timing", "physics", "--profile", "a100"],
        &["a100"],
    );
    fails(
        &[
            "validate",
            &run,
            "--timing",
            "polynomial",
            "--profile",
            "h100/llama-3.1-8b",
        ],
        &["--profile", "no effect"],
    );
    fails(
        &["replay", "--timing", "physics"],
        &["--timing physics", "--profile"],
    );
    fails(
        &["replay", "--timing", "layers:/nonexistent-dir,32"],
        &["nonexistent-dir"],
    );
    let bad_fit = dir.join("fit.json");
    std::fs::write(&bad_fit, r#"{"version": 1, "coefficients": {"kv": -2}}"#).unwrap();
    let t = format!("fitted:{}", bad_fit.display());
    fails(
        &["validate", &run, "--timing", &t],
        &["fit.json", "coefficients", "kv = -2"],
    );
    let req = dir.join("bad.jsonl");
    std::fs::write(&req, "{\"request_id\": 1, \"send_s\": 2, \"first_token_s\": 1, \"end_s\": 3, \"input_tokens\": 5, \"output_tokens\": 2}\n").unwrap();
    let out = dir.join("x.json");
    fails(
        &[
            "measured",
            "import",
            req.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &["bad.jsonl:1", "first_token_s", "before the send time"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn optimize_verifies_by_engine_replay_under_fitted_coefficients() {
    let dir = temp_dir("fidelity-optimize");
    let base = [
        "optimize",
        "--cdf",
        "lmsys",
        "--lam",
        "20",
        "--gpu-short",
        "h100/llama-3.1-8b",
        "--gpu-long",
        "h100/llama-3.1-8b",
        "--verify",
        "engine",
        "--verify-top",
        "1",
        "--n-sim-req",
        "2000",
        "--format",
        "json",
    ];
    let p99 = |timing: &[&str]| -> f64 {
        let mut args = base.to_vec();
        args.extend_from_slice(timing);
        let o = aisim(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(j["engine"][0]["source"], "engine");
        j["engine"][0]["p99_ttft_short_ms"].as_f64().unwrap()
    };
    let zero_shot = p99(&["--timing", "physics"]);
    // Every pass twice as slow: the replayed P99 TTFT grows.
    let fitted = dir.join("slow.json");
    std::fs::write(
        &fitted,
        r#"{"version": 1, "coefficients": {"compute": 2, "weights": 2, "kv": 2}}"#,
    )
    .unwrap();
    let slow = p99(&["--timing", &format!("fitted:{}", fitted.display())]);
    assert!(slow > zero_shot, "{slow} vs {zero_shot}");
    fails(
        &[
            "optimize", "--cdf", "lmsys", "--lam", "20", "--timing", "physics",
        ],
        &["--timing", "--verify engine"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Commands that write files say what they wrote (on stderr).
#[test]
fn import_and_plan_say_what_they_wrote() {
    let dir = temp_dir("fidelity-said");
    let (run, o) = import_as(&dir, "said", &[]);
    assert!(
        stderr(&o).contains(&format!(
            "wrote the measured run `said` (6 requests) to {}, its trace {} and per-request file {} beside it",
            run.display(),
            dir.join("said.trace.jsonl").display(),
            dir.join("said.requests.jsonl").display()
        )),
        "{}",
        stderr(&o)
    );
    // The table names the run as a run (`run run` read as a stutter).
    let o = aisim(&["validate", run.to_str().unwrap(), "--timing", "fixed:20,5"]);
    assert!(
        stdout(&o).starts_with("measured run `said`\n"),
        "{}",
        stdout(&o)
    );
    let plan = dir.join("plan.jsonl");
    let grid = fixture("sweep/ci-grid.toml");
    let o = aisim(&["sweep", "plan", &grid, "--out", plan.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("planned 8 runs of "),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(&format!("into {}", plan.display())),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The ttft_ms mean of a replay's JSON.
fn ttft_mean(o: &std::process::Output) -> f64 {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    v["latency"]["ttft_ms"]["mean"].as_f64().unwrap()
}

#[test]
fn replays_of_a_streaming_http_server_add_its_time_outside_the_engine() {
    let base = [
        "replay",
        "--synthetic",
        "--requests",
        "50",
        "--format",
        "json",
    ];
    let engine = ttft_mean(&aisim(&base));
    let http = ttft_mean(&aisim(
        &[&base[..], &["--frontend", "http-streaming"]].concat(),
    ));
    assert!((http - engine - 25.0).abs() < 1e-9, "{engine} {http}");
    let set = aisim(
        &[
            &base[..],
            &["--frontend", "http-streaming", "--frontend-ms", "4.5"],
        ]
        .concat(),
    );
    assert!((ttft_mean(&set) - engine - 4.5).abs() < 1e-9);
    let spec: serde_json::Value = serde_json::from_str(&stdout(&set)).unwrap();
    assert_eq!(
        spec["spec"]["frontend"],
        serde_json::json!({"served": "http_streaming", "request_ms": 4.5})
    );
    fails(
        &[&base[..], &["--frontend-ms", "-1"]].concat(),
        &["frontend.request_ms", "-1"],
    );
}

#[test]
fn calibrate_reports_held_out_runs_and_leave_one_out_folds() {
    let dir = temp_dir("fidelity-holdout");
    let run = import(&dir);
    let (other, _) = import_as(&dir, "other", &["--profile", "h100/llama-3.1-8b"]);
    let other = other.to_str().unwrap();
    let fitted = dir.join("fitted.json");
    let f = fitted.to_str().unwrap();
    let o = aisim(&[
        "calibrate",
        &run,
        "--holdout",
        other,
        "--out",
        f,
        "--max-evaluations",
        "40",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("held out (not fitted to)") && table.contains("other"),
        "{table}"
    );
    assert!(table.contains("held because"), "{table}");
    let o = aisim(&[
        "calibrate",
        &run,
        other,
        "--cross-validate",
        "--out",
        f,
        "--max-evaluations",
        "40",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let folds = v["cross_validation"].as_array().unwrap();
    assert_eq!(folds.len(), 2);
    assert_eq!(folds[0]["held_out"], "run");
    assert_eq!(folds[0]["fit"]["runs"], serde_json::json!(["other"]));
    assert!(folds[1]["calibrated"]["mape_pct"]["overall"].is_number());
    fails(
        &["calibrate", &run, "--cross-validate", "--out", f],
        &["--cross-validate needs two runs or more"],
    );
    fails(
        &["calibrate", &run, "--holdout", "nope.json", "--out", f],
        &["nope.json"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// On a terminal (a pty, through util-linux `script`), `calibrate` shows its
/// replays of the runs and each stage on stderr. Skipped (with a note) where
/// there is no `script`.
#[test]
fn calibrate_shows_its_replays_on_a_terminal() {
    let script = Path::new("/usr/bin/script");
    if !script.exists() {
        eprintln!(
            "skipped: no {} to give calibrate a terminal",
            script.display()
        );
        return;
    }
    let dir = temp_dir("fidelity-terminal");
    let run = import(&dir);
    let fitted = dir.join("fitted.json");
    let command = format!(
        "'{}' calibrate '{run}' --out '{}' --max-evaluations 30 > /dev/null",
        env!("CARGO_BIN_EXE_aisim"),
        fitted.display()
    );
    let o = std::process::Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let terminal = String::from_utf8_lossy(&o.stdout);
    for said in [
        "calibrate: zero-shot: mean absolute error",
        "/30 replays of the runs at most",
        "calibrate: Nelder-Mead: score",
        "calibrate: calibrated: mean absolute error",
    ] {
        assert!(terminal.contains(said), "{said}: {terminal}");
    }
    assert!(fitted.is_file());
    std::fs::remove_dir_all(&dir).ok();
}

/// The first word said twice in a row in `text`, one space apart (case
/// aside; a table's columns, two spaces apart, are not a sentence).
fn doubled_word(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split(' ').collect();
    words
        .windows(2)
        .find(|w| {
            w[0].len() > 1
                && w[0].chars().all(char::is_alphabetic)
                && w[0].eq_ignore_ascii_case(w[1])
        })
        .map(|w| w[0].to_string())
}

/// A run named `run` (the name people give one) is never "the run run": in
/// what import, validate and calibrate say, and in their errors.
#[test]
fn a_run_named_run_reads_without_a_doubled_word() {
    assert_eq!(doubled_word("the measured run run (6"), Some("run".into()));
    assert_eq!(doubled_word("the measured run `run` (6"), None);
    let dir = temp_dir("fidelity-run-run");
    let run = import(&dir);
    let (_, imported) = import_as(&dir, "run", &["--profile", "h100/llama-3.1-8b"]);
    let fitted = dir.join("fitted.json");
    let said = [
        stderr(&imported),
        stdout(&aisim(&["validate", &run])),
        stdout(&aisim(&[
            "calibrate",
            &run,
            "--out",
            fitted.to_str().unwrap(),
            "--max-evaluations",
            "20",
        ])),
    ];
    assert!(
        said[0].contains("the measured run `run` (6 requests)"),
        "{}",
        said[0]
    );
    for text in &said {
        assert!(!text.is_empty());
        assert_eq!(doubled_word(text), None, "{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

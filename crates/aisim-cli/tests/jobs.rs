//! One call per job: for every subcommand that computes something, the
//! library call of `aisim_lab::jobs`, given its request as JSON, returns
//! what the binary prints with `--format json` (apart from `host`), or
//! writes the same file. This is the seam the other front ends use.

mod common;

use std::path::Path;

use aisim_lab::fidelity::calibrate::CalibrationProgress;
use aisim_lab::jobs::{self, from_json, JobError};
use common::*;
use serde_json::json;

/// The binary's stdout for `args`, which must succeed.
fn cli(args: &[&str]) -> String {
    let o = aisim(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// `report` (the library's, as the CLI writes JSON) equals `printed` but for `host`.
fn same<T: serde::Serialize>(report: &T, printed: &str) {
    let ours = aisim_report::to_json(report);
    assert_eq!(without_host(&ours), without_host(printed));
}

/// A request read from `value` as a front end would read it.
fn request<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    from_json("the request", &value.to_string()).unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SYNTHETIC: [&str; 9] = [
    "--synthetic",
    "--requests",
    "200",
    "--rate",
    "40",
    "--input-tokens",
    "512",
    "--output-tokens",
    "64",
];

/// The spec `aisim replay ... --print-spec` writes for `args`.
fn printed_spec(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    all.push("--print-spec");
    serde_json::from_str(&cli(&all)).unwrap()
}

#[test]
fn replay_and_seeds_from_the_printed_spec() {
    let args = [&SYNTHETIC[..], &["--workers", "2", "--slo-ttft-ms", "500"]].concat();
    let spec = printed_spec(&args);
    let report = jobs::replay::replay(&request(spec.clone())).unwrap();
    let printed = cli(&[&["replay"], &args[..], &["--format", "json"]].concat());
    same(&report, &printed);

    let seeds: jobs::replay::SeedsRequest =
        request(json!({"version": 1, "spec": spec, "seeds": 3}));
    let report = jobs::replay::replay_seeds(&seeds).unwrap();
    let printed = cli(&[
        &["replay"],
        &args[..],
        &["--seeds", "3", "--format", "json"],
    ]
    .concat());
    same(&report, &printed);
    assert!(report.seeds.is_some());
}

#[test]
fn compare_reads_two_reports() {
    let dir = temp_dir("jobs-compare");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    cli(&[
        &["replay"],
        &SYNTHETIC[..],
        &["--out", path(&a), "--format", "json"],
    ]
    .concat());
    cli(&[
        &["replay"],
        &SYNTHETIC[..],
        &["--workers", "2", "--out", path(&b)],
    ]
    .concat());
    let r = aisim_lab::compare::compare_files(&request(json!({"a": a, "b": b}))).unwrap();
    same(
        &r.comparison,
        &cli(&["compare", path(&a), path(&b), "--format", "json"]),
    );
}

#[test]
fn sweep_plan_run_merge_and_saturate() {
    let dir = temp_dir("jobs-sweep");
    let spec = printed_spec(&SYNTHETIC);
    let grid = dir.join("grid.json");
    let text = json!({"base": spec, "axes": {"topology.workers": [1, 2], "seed": "1..2"}});
    std::fs::write(&grid, text.to_string()).unwrap();
    // plan: the file the binary writes.
    let plan_file = dir.join("plan.jsonl");
    cli(&["sweep", "plan", path(&grid), "--out", path(&plan_file)]);
    let plan = jobs::sweep::sweep_plan(&request(json!({"grid": grid})), None)
        .unwrap()
        .plan;
    assert_eq!(
        plan.to_jsonl(),
        std::fs::read_to_string(&plan_file).unwrap()
    );
    // run: the same results folder.
    let (by_cli, by_lib) = (dir.join("cli"), dir.join("lib"));
    cli(&[
        "sweep",
        "run",
        path(&plan_file),
        "--out",
        path(&by_cli),
        "--quiet",
    ]);
    let summary = jobs::sweep::sweep_run(&request(json!({
        "version": 1, "plan": plan_file, "out": by_lib, "threads": 2
    })))
    .unwrap();
    assert_eq!((summary.ran, summary.skipped), (4, 0));
    let merged_name = aisim_lab::sweep::MERGED_NAME;
    assert_eq!(
        std::fs::read_to_string(by_lib.join(merged_name)).unwrap(),
        std::fs::read_to_string(by_cli.join(merged_name)).unwrap()
    );
    // merge: the merged table.
    let merged =
        jobs::sweep::sweep_merge(&request(json!({"dirs": [by_lib], "best": true}))).unwrap();
    assert_eq!(
        aisim_lab::sweep::to_jsonl(&merged.results),
        cli(&["sweep", "merge", path(&by_cli), "--out", "-"])
    );
    assert!(merged.best.is_some());
    // saturate: the search's report (it sets the rate itself).
    let workload = [&SYNTHETIC[..3], &SYNTHETIC[5..], &["--slo-ttft-ms", "300"]].concat();
    let args = [
        &workload[..],
        &["--rate-range", "5..400", "--tolerance", "0.05"],
    ]
    .concat();
    let printed = cli(&[&["sweep", "saturate"], &args[..], &["--format", "json"]].concat());
    let report = jobs::sweep::sweep_saturate(&request(json!({
        "spec": printed_spec(&workload),
        "rate_range": "5..400",
        "tolerance": 0.05,
    })))
    .unwrap();
    same(&report, &printed);
}

#[test]
fn measured_import_validate_and_calibrate() {
    let dir = temp_dir("jobs-fidelity");
    let requests = dir.join("requests.jsonl");
    std::fs::write(&requests, REQUESTS).unwrap();
    let run = dir.join("run.json");
    cli(&[
        "measured",
        "import",
        path(&requests),
        "--out",
        path(&run),
        "--profile",
        "h100/llama-3.1-8b",
    ]);
    let imported = jobs::fidelity::measured_import(&request(json!({
        "input": requests, "out": run, "profile": "h100/llama-3.1-8b"
    })))
    .unwrap();
    assert_eq!(
        format!("{}\n", imported.run.to_json()),
        std::fs::read_to_string(&run).unwrap()
    );
    assert_eq!(
        imported.trace,
        std::fs::read_to_string(&imported.trace_path).unwrap()
    );

    let report = jobs::fidelity::validate(&request(json!({"runs": [run]}))).unwrap();
    same(&report, &cli(&["validate", path(&run), "--format", "json"]));

    let fitted = dir.join("fitted.json");
    let printed = cli(&[
        "calibrate",
        path(&run),
        "--out",
        path(&fitted),
        "--max-evaluations",
        "30",
        "--format",
        "json",
    ]);
    let c =
        jobs::fidelity::calibrate(&request(json!({"runs": [run], "max_evaluations": 30}))).unwrap();
    same(&c.report, &printed);
    assert_eq!(
        aisim_report::to_json(&c.fitted),
        std::fs::read_to_string(&fitted).unwrap()
    );
    // The stages a terminal is told of, in order, and every replay of the
    // search, counted up to the fit's evaluations out of its budget; the
    // same fit.
    let (mut stages, mut replays) = (Vec::new(), Vec::new());
    let observed = jobs::fidelity::calibrate_observed(
        &request(json!({"runs": [run], "max_evaluations": 30})),
        &mut |p| match p {
            CalibrationProgress::Stage(line) => stages.push(line),
            CalibrationProgress::Replays { done, budget } => replays.push((done, budget)),
        },
    )
    .unwrap();
    same(&observed.report, &printed);
    let evaluations = observed.report.fit.evaluations;
    assert!(evaluations > 1);
    assert_eq!(
        replays,
        (1..=evaluations).map(|k| (k, 30)).collect::<Vec<_>>()
    );
    assert!(
        stages
            .first()
            .unwrap()
            .starts_with("zero-shot: mean absolute error"),
        "{stages:?}"
    );
    assert!(
        stages
            .last()
            .unwrap()
            .starts_with("calibrated: mean absolute error"),
        "{stages:?}"
    );
    assert!(
        stages.iter().any(|l| l.starts_with("Nelder-Mead: score")),
        "{stages:?}"
    );
    assert!(
        stages
            .iter()
            .any(|l| l.starts_with("Levenberg-Marquardt: score")),
        "{stages:?}"
    );
}

#[test]
fn a_load_generators_file_imports_the_same_from_a_request() {
    let dir = temp_dir("jobs-formats");
    for (from, flag, input, extra) in [
        ("guidellm", "guidellm", "measured/guidellm", Some(1)),
        ("vllm_bench", "vllm-bench", "measured/vllm_bench.json", None),
        ("aiperf", "aiperf", "measured/aiperf", None),
        (
            "sglang_bench",
            "sglang-bench",
            "measured/sglang_bench.jsonl",
            Some(1),
        ),
        ("blis", "blis", "measured/blis", None),
    ] {
        let run = dir.join(format!("{from}.json"));
        let input = fixture(input);
        let n = extra.map(|n: usize| n.to_string());
        let mut args = vec![
            "measured",
            "import",
            "--from",
            flag,
            &input,
            "--out",
            path(&run),
            "--profile",
            "h100/llama-3.1-8b",
        ];
        if let Some(n) = &n {
            args.extend(["--benchmark", n.as_str()]);
        }
        cli(&args);
        let mut req = json!({
            "input": input, "from": from, "out": run, "profile": "h100/llama-3.1-8b"
        });
        if let Some(n) = extra {
            req["benchmark"] = n.into();
        }
        let imported = jobs::fidelity::measured_import(&request(req)).unwrap();
        assert_eq!(
            format!("{}\n", imported.run.to_json()),
            std::fs::read_to_string(&run).unwrap(),
            "{from}"
        );
        assert_eq!(
            imported.trace,
            std::fs::read_to_string(&imported.trace_path).unwrap(),
            "{from}"
        );
    }
}

#[test]
fn every_fleet_command() {
    let o = jobs::fleet::optimize(&request(json!({
        "plan": {"lam": 50}, "verify_top": 1, "n_sim_req": 2000
    })))
    .unwrap();
    let args = [
        "optimize",
        "--lam",
        "50",
        "--verify-top",
        "1",
        "--n-sim-req",
        "2000",
    ];
    same(&o, &cli(&[&args[..], &["--format", "json"]].concat()));

    let p = jobs::fleet::pareto(&request(json!({"plan": {"cdf": "lmsys", "lam": 100}}))).unwrap();
    same(
        &p,
        &cli(&[
            "pareto", "--cdf", "lmsys", "--lam", "100", "--format", "json",
        ]),
    );

    let d = jobs::fleet::disagg(&request(json!({"lam": 100}))).unwrap();
    same(&d, &cli(&["disagg", "--lam", "100", "--format", "json"]));

    let des = json!({"n_s": 3, "n_l": 6, "run": {"n_req": 3000, "seeds": 2}});
    let s = jobs::fleet::simulate(&request(json!({"plan": {"lam": 50}, "des": des}))).unwrap();
    let des_args = [
        "--n-s", "3", "--n-l", "6", "--n-req", "3000", "--seeds", "2",
    ];
    same(
        &s,
        &cli(&[
            &["simulate", "--lam", "50"],
            &des_args[..],
            &["--format", "json"],
        ]
        .concat()),
    );

    let c =
        jobs::fleet::compare_routers(&request(json!({"plan": {"lam": 50}, "des": des}))).unwrap();
    same(
        &c,
        &cli(&[
            &["compare-routers", "--lam", "50"],
            &des_args[..],
            &["--format", "json"],
        ]
        .concat()),
    );

    let w = jobs::fleet::whatif(&request(json!({
        "lam_range": [50, 100], "gpu_compare": ["h100", "a10g"]
    })))
    .unwrap();
    same(
        &w,
        &cli(&[
            "whatif",
            "--lam-range",
            "50,100",
            "--gpu-compare",
            "h100",
            "a10g",
            "--format",
            "json",
        ]),
    );

    let fleet = fixture("fleet.json");
    let f = jobs::fleet::simulate_fleet(&request(json!({
        "file": fleet, "lam": 100, "run": {"n_req": 3000}
    })))
    .unwrap();
    same(
        &f,
        &cli(&[
            "simulate-fleet",
            &fleet,
            "--lam",
            "100",
            "--n-req",
            "3000",
            "--format",
            "json",
        ]),
    );

    // An empty request is the command with no flags: the same defaults.
    let t = jobs::fleet::tok_per_watt(&request(json!({}))).unwrap();
    same(&t, &cli(&["tok-per-watt", "--format", "json"]));
    let g = jobs::fleet::grid_flex(&request(json!({"version": 1}))).unwrap();
    same(&g, &cli(&["grid-flex", "--format", "json"]));
}

#[test]
fn profiles_and_cache_lab() {
    let l = jobs::catalog::profiles(&request(json!({})));
    same(&l, &cli(&["profiles", "--format", "json"]));
    let c = jobs::catalog::cache_lab(&request(json!({"capacity": 3, "requests": 100}))).unwrap();
    same(
        &c,
        &cli(&[
            "cache-lab",
            "-C",
            "3",
            "--requests",
            "100",
            "--format",
            "json",
        ]),
    );
}

#[test]
fn requests_refuse_unknown_fields_and_other_versions_naming_them() {
    // What the command line requires, a request requires too.
    let e = from_json::<jobs::fleet::SimulateRequest>("the request", r#"{"des": {"n_s": 3}}"#)
        .unwrap_err();
    assert!(e.to_string().contains("missing field `n_l`"), "{e}");
    let e = from_json::<jobs::sweep::SweepRunRequest>("the request", r#"{"plan": "p.jsonl"}"#)
        .unwrap_err();
    assert!(e.to_string().contains("missing field `out`"), "{e}");
    let e =
        from_json::<jobs::fleet::GridFlexRequest>("the request", r#"{"n_gpu": 4}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `n_gpu`"), "{e}");
    let e = from_json::<jobs::catalog::CacheLabRequest>("the request", r#"{"version": 2}"#)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("request version 2 is not supported; this aisim reads version 1"),
        "{e}"
    );
    let e = from_json::<jobs::fleet::PlanRequest>("the request", r#"{"slo": "fast"}"#).unwrap_err();
    assert!(e.to_string().contains("line 1 column"), "{e}");
}

#[test]
fn a_jobs_errors_are_the_clis_and_say_whose_fault_they_are() {
    // The same message the binary prints, and an input error (exit 2).
    let r: jobs::fleet::GridFlexRequest = request(json!({"seed": 7}));
    let e: JobError = jobs::fleet::grid_flex(&r).unwrap_err();
    assert!(!e.is_internal());
    let o = aisim(&["grid-flex", "--seed", "7"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), format!("error: {e}\n"));
    // A library error keeps its causes and its kind.
    let r: jobs::fleet::TokPerWattRequest = request(json!({"gpus": ["nope"]}));
    let e = jobs::fleet::tok_per_watt(&r).unwrap_err();
    assert!(!e.is_internal());
    let o = aisim(&["tok-per-watt", "--gpus", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("error: {e}")),
        "{}",
        stderr(&o)
    );
}

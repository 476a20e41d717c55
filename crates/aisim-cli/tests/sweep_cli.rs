//! `aisim sweep plan / run / merge` as a user (or a scheduler) runs them:
//! plans stable and checked, shards that make up the plan, restarts that
//! redo nothing, merges byte-identical to one process.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::SystemTime;

use common::{aisim, command, fixture, stderr, stdout, temp_dir};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// Asserts `o` failed as bad input (exit 2), its message holding `text`.
fn refused(o: &Output, text: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(text), "{}", stderr(o));
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
}

/// `fixtures/sweep/ci-grid.toml` planned into `dir/plan.jsonl`.
fn ci_plan(dir: &Path) -> PathBuf {
    let plan = dir.join("plan.jsonl");
    ok(aisim(&[
        "sweep",
        "plan",
        &fixture("sweep/ci-grid.toml"),
        "--out",
        s(&plan),
    ]));
    plan
}

fn run(plan: &Path, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", "run", s(plan), "--out", s(dir)];
    args.extend_from_slice(extra);
    aisim(&args)
}

/// The ids whose result is in `dir`.
fn ids_in(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json")
                .filter(|_| !name.starts_with('.'))
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    ids
}

/// Each result file's modification time and bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, (SystemTime, Vec<u8>)> {
    ids_in(dir)
        .into_iter()
        .map(|id| {
            let p = dir.join(format!("{id}.json"));
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            (id, (t, std::fs::read(&p).unwrap()))
        })
        .collect()
}

/// The ids a `sweep run` says it ran, from its per-run lines.
fn ran(o: &Output) -> Vec<String> {
    let mut ids: Vec<String> = stderr(o)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("run ")?
                .split(" done")
                .next()
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    ids
}

/// Each line of a plan file.
fn plan_lines(plan: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(plan)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The whole plan in one process: its `results.jsonl`.
fn reference(plan: &Path, dir: &Path) -> Vec<u8> {
    let out = dir.join("whole");
    ok(run(plan, &out, &["--threads", "2"]));
    std::fs::read(out.join("results.jsonl")).unwrap()
}

#[test]
fn a_plan_is_the_cross_product_in_a_stable_order_with_stable_ids() {
    let dir = temp_dir("sweep-plan");
    let plan = ci_plan(&dir);
    let text = std::fs::read_to_string(&plan).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    let digest = lines[0]["plan"].as_str().unwrap().to_string();
    let mut expected = Vec::new();
    for workers in [1, 2] {
        for router in ["round_robin", "least_loaded"] {
            for seed in [1, 2] {
                expected.push((workers, router.to_string(), seed));
            }
        }
    }
    for (k, (line, (workers, router, seed))) in lines.iter().zip(&expected).enumerate() {
        assert_eq!(line["id"], k.to_string());
        assert_eq!(line["index"], k);
        assert_eq!(line["plan"], digest.as_str());
        let axes: Vec<&String> = line["axes"].as_object().unwrap().keys().collect();
        // The axes in the grid's order (the JSON object as written).
        let raw = text.lines().nth(k).unwrap();
        let at = |key: &str| raw.find(&format!("\"{key}\":")).unwrap();
        assert!(at("topology.workers") < at("router.policy") && at("router.policy") < at("seed"));
        assert_eq!(axes.len(), 3);
        assert_eq!(line["spec"]["topology"]["workers"], *workers);
        assert_eq!(line["spec"]["router"]["policy"], router.as_str());
        assert_eq!(line["spec"]["seed"], *seed);
        // The base_args reached the spec.
        assert_eq!(line["spec"]["workload"]["requests"], 200);
        assert_eq!(line["spec"]["sla"]["ttft_ms"], 500.0);
    }
    // Planned again, and from the same grid in JSON: the same bytes.
    let again = dir.join("again.jsonl");
    ok(aisim(&[
        "sweep",
        "plan",
        &fixture("sweep/ci-grid.toml"),
        "--out",
        s(&again),
    ]));
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());
    let json_grid = dir.join("grid.json");
    std::fs::write(
        &json_grid,
        r#"{"base_args": ["--synthetic", "--requests", "200", "--rate", "40", "--input-tokens", "512", "--output-tokens", "64", "--slo-ttft-ms", "500"],
            "axes": {"topology.workers": [1, 2], "router.policy": ["round_robin", "least_loaded"], "seed": "1..2"}}"#,
    )
    .unwrap();
    let from_json = ok(aisim(&["sweep", "plan", s(&json_grid), "--out", "-"]));
    assert_eq!(stdout(&from_json), text);
}

#[test]
fn a_bad_axis_fails_at_plan_time_naming_the_axis_and_value() {
    let dir = temp_dir("sweep-plan-errors");
    let cases = [
        (
            r#""topology.wrkers" = [2]"#,
            "axis `topology.wrkers` = 2",
            "unknown field `wrkers`",
        ),
        (
            r#""topology.workers" = [2, 0]"#,
            "axis `topology.workers` = 0",
            "at least 1",
        ),
        (
            r#""admission.speedup" = [1.0, -2.0]"#,
            "axis `admission.speedup` = -2.0",
            "above 0",
        ),
        (
            r#""router.policy" = ["kv", "fastest"]"#,
            "axis `router.policy` = \"fastest\"",
            "unknown variant `fastest`",
        ),
        (
            r#""workload.path" = ["x.jsonl"]"#,
            "axis `workload.path` = \"x.jsonl\"",
            "unknown field `path`",
        ),
        (r#"seed = "1..x""#, "axis `seed`", "`x` is not a number"),
    ];
    for (i, (axis, named, why)) in cases.iter().enumerate() {
        let grid = dir.join(format!("bad{i}.toml"));
        std::fs::write(
            &grid,
            format!("base_args = [\"--synthetic\", \"--requests\", \"10\"]\n[axes]\n{axis}\n"),
        )
        .unwrap();
        let o = aisim(&["sweep", "plan", s(&grid), "--out", s(&dir.join("p.jsonl"))]);
        assert_eq!(o.status.code(), Some(2), "{axis}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(named) && e.contains(why) && e.contains(&format!("bad{i}.toml")),
            "{axis}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    // A trace that does not exist is found at plan time too.
    let grid = dir.join("trace.json");
    std::fs::write(&grid, r#"{"base": {"version": 1, "workload": {"kind": "trace", "path": "none.jsonl"}}, "axes": {"seed": [1]}}"#).unwrap();
    let o = aisim(&["sweep", "plan", s(&grid), "--out", "-"]);
    refused(&o, "none.jsonl");
    // base_args are aisim replay's flags: an unknown one, or one about a
    // run's outputs, is refused naming it.
    for (args, named) in [
        (r#"["--wrkers", "2"]"#, "--wrkers"),
        (
            r#"["--out", "x.json"]"#,
            "--out has no effect in a grid's base_args",
        ),
    ] {
        let grid = dir.join("args.json");
        std::fs::write(
            &grid,
            format!(r#"{{"base_args": {args}, "axes": {{"seed": [1]}}}}"#),
        )
        .unwrap();
        let o = aisim(&["sweep", "plan", s(&grid), "--out", "-"]);
        refused(&o, "base_args");
        refused(&o, named);
    }
}

#[test]
fn relative_paths_in_a_grid_resolve_against_its_folder() {
    // The fixture grid names ../traces/mooncake_small.jsonl; planned from
    // another folder, the plan holds the absolute path and runs anywhere.
    let dir = temp_dir("sweep-paths");
    let plan = dir.join("plan.jsonl");
    ok(command()
        .current_dir(&dir)
        .args([
            "sweep",
            "plan",
            &fixture("sweep/trace-grid.json"),
            "--out",
            s(&plan),
        ])
        .output()
        .unwrap());
    let first = &plan_lines(&plan)[0];
    let path = first["spec"]["workload"]["path"].as_str().unwrap();
    assert!(
        Path::new(path).is_absolute() && path.ends_with("traces/mooncake_small.jsonl"),
        "{path}"
    );
    // 3 × 2 × 2 runs less the 2 excluded (one worker under kv).
    assert_eq!(first["runs"], 10);
    ok(run(&plan, &dir.join("out"), &["--quiet"]));
    assert!(dir.join("out/results.jsonl").exists());
}

#[test]
fn shards_make_up_the_plan_and_merge_in_any_order_to_one_process_bytes() {
    let dir = temp_dir("sweep-shards");
    let plan = ci_plan(&dir);
    let whole = reference(&plan, &dir);
    let all: Vec<String> = (0..8).map(|k| k.to_string()).collect();
    for n in 1..=7u64 {
        let dirs: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("n{n}-shard{i}"))).collect();
        let mut seen = Vec::new();
        for (i, d) in dirs.iter().enumerate() {
            ok(run(
                &plan,
                d,
                &["--shard", &format!("{i}/{n}"), "--threads", "1"],
            ));
            let ids = ids_in(d);
            for id in &ids {
                assert_eq!(
                    id.parse::<u64>().unwrap() % n,
                    i as u64,
                    "run {id} in shard {i}/{n}"
                );
            }
            seen.extend(ids);
        }
        seen.sort();
        assert_eq!(seen, all, "the shards of {n} are the plan, each run once");
        // Merged in the shards' order and reversed: the same bytes as one process.
        for order in [dirs.clone(), dirs.iter().rev().cloned().collect()] {
            let merged = dir.join(format!("merged-{n}.jsonl"));
            let mut args = vec!["sweep", "merge"];
            args.extend(order.iter().map(|d| s(d)));
            args.extend(["--out", s(&merged)]);
            ok(aisim(&args));
            assert_eq!(std::fs::read(&merged).unwrap(), whole, "{n} shards");
        }
    }
}

#[test]
fn the_results_do_not_depend_on_the_threads_and_hold_no_host_data() {
    let dir = temp_dir("sweep-threads");
    let plan = ci_plan(&dir);
    for t in ["1", "2"] {
        ok(run(
            &plan,
            &dir.join(format!("t{t}")),
            &["--threads", t, "--full-report"],
        ));
    }
    let (a, b) = (snapshot(&dir.join("t1")), snapshot(&dir.join("t2")));
    assert_eq!(a.len(), 8);
    for (id, (_, bytes)) in &a {
        assert_eq!(&b[id].1, bytes, "run {id}");
    }
    let merged = std::fs::read(dir.join("t1/results.jsonl")).unwrap();
    assert_eq!(merged, std::fs::read(dir.join("t2/results.jsonl")).unwrap());
    let first: serde_json::Value = serde_json::from_slice(&a["0"].1).unwrap();
    assert!(first["report"].is_object() && first["report"].get("host").is_none());
    assert_eq!(first["report"]["outcomes"], first["outcomes"]);
    assert!(!String::from_utf8_lossy(&merged).contains("wall_s"));
}

#[test]
fn a_rerun_finishes_an_interrupted_sweep_without_redoing_runs() {
    let dir = temp_dir("sweep-restart");
    let plan = ci_plan(&dir);
    let whole = reference(&plan, &dir);
    let out = dir.join("out");
    // Half the plan done, as a shard would leave it; one of those results
    // lost, and a half-written temporary file left by a killed run.
    ok(run(&plan, &out, &["--shard", "0/2"]));
    std::fs::remove_file(out.join("4.json")).unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    // (Written on this host by a process that is gone: no pid reaches 4194305.)
    let leftover = out.join(format!(".3.json.tmp-{}~4194305", host.trim()));
    std::fs::write(&leftover, "{\"id\": \"3\", \"ind").unwrap();
    assert!(!out.join("results.jsonl").exists());
    let before = snapshot(&out);
    assert_eq!(before.keys().collect::<Vec<_>>(), ["0", "2", "6"]);
    let o = ok(run(&plan, &out, &["--threads", "2"]));
    assert_eq!(ran(&o), ["1", "3", "4", "5", "7"], "{}", stderr(&o));
    assert!(
        stderr(&o).contains("3 done before, 5 to run"),
        "{}",
        stderr(&o)
    );
    let after = snapshot(&out);
    for (id, was) in &before {
        assert_eq!(&after[id], was, "run {id} was not redone");
    }
    assert!(!leftover.exists());
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), whole);
    // Once complete, a rerun does nothing.
    let o = ok(run(&plan, &out, &[]));
    assert!(ran(&o).is_empty() && stderr(&o).contains("8 done before, 0 to run"));
}

#[test]
fn a_killed_sweep_leaves_only_whole_results_and_a_rerun_completes_it() {
    let dir = temp_dir("sweep-kill");
    let grid = dir.join("slow.toml");
    std::fs::write(
        &grid,
        "base_args = [\"--synthetic\", \"--requests\", \"4000\", \"--rate\", \"200\"]\n[axes]\nseed = \"1..5\"\n",
    )
    .unwrap();
    let plan = dir.join("plan.jsonl");
    ok(aisim(&["sweep", "plan", s(&grid), "--out", s(&plan)]));
    let whole = reference(&plan, &dir);
    let out = dir.join("out");
    let mut child = command()
        .args([
            "sweep",
            "run",
            s(&plan),
            "--out",
            s(&out),
            "--threads",
            "1",
            "--quiet",
        ])
        .spawn()
        .unwrap();
    // Kill it once its first result is written (or when it has ended).
    loop {
        if out.exists() && !ids_in(&out).is_empty() || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    child.wait().unwrap();
    let before = snapshot(&out);
    assert!(!before.is_empty());
    for (id, (_, bytes)) in &before {
        let r: serde_json::Value =
            serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(r["id"], id.as_str());
    }
    let o = ok(run(&plan, &out, &["--threads", "2"]));
    let redone: Vec<String> = ran(&o)
        .into_iter()
        .filter(|id| before.contains_key(id))
        .collect();
    assert!(redone.is_empty(), "redone: {redone:?}");
    assert_eq!(before.len() + ran(&o).len(), 5);
    let after = snapshot(&out);
    for (id, was) in &before {
        assert_eq!(&after[id], was, "run {id} was not redone");
    }
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), whole);
}

#[test]
fn a_merge_lists_the_missing_and_duplicated_ids() {
    let dir = temp_dir("sweep-merge-errors");
    let plan = ci_plan(&dir);
    let (a, b) = (dir.join("a"), dir.join("b"));
    ok(run(&plan, &a, &["--shard", "0/2"]));
    ok(run(&plan, &b, &["--shard", "1/4"]));
    std::fs::copy(a.join("2.json"), b.join("2.json")).unwrap();
    let o = aisim(&[
        "sweep",
        "merge",
        s(&a),
        s(&b),
        "--out",
        s(&dir.join("m.jsonl")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("2 of 8 runs missing: 3, 7"), "{e}");
    assert!(
        e.contains(&format!(
            "1 runs present more than once: 2 ({}, {})",
            s(&a.join("2.json")),
            s(&b.join("2.json"))
        )),
        "{e}"
    );
    assert!(!dir.join("m.jsonl").exists());
    // Results of two plans, and a file that is not a result.
    let other = dir.join("other.jsonl");
    let grid = dir.join("one.toml");
    std::fs::write(
        &grid,
        "base_args = [\"--synthetic\", \"--requests\", \"5\"]\n[axes]\nseed = [7]\n",
    )
    .unwrap();
    ok(aisim(&["sweep", "plan", s(&grid), "--out", s(&other)]));
    let c = dir.join("c");
    ok(run(&other, &c, &[]));
    let o = aisim(&["sweep", "merge", s(&a), s(&c), "--out", "-"]);
    refused(&o, "come from 2 plans");
    std::fs::write(c.join("notes.json"), "{}").unwrap();
    let o = aisim(&["sweep", "merge", s(&c), "--out", "-"]);
    refused(&o, "notes.json: not a result of `aisim sweep run`");
    // A run into a folder holding another plan's results is refused.
    let o = run(&plan, &c, &[]);
    refused(&o, "give each plan a folder of its own");
}

#[test]
fn an_edited_plan_is_refused() {
    let dir = temp_dir("sweep-edited");
    let plan = ci_plan(&dir);
    let text = std::fs::read_to_string(&plan).unwrap();
    let edited = dir.join("edited.jsonl");
    std::fs::write(
        &edited,
        text.replacen("\"requests\":200", "\"requests\":201", 1),
    )
    .unwrap();
    let o = run(&edited, &dir.join("out"), &[]);
    refused(&o, "the plan file was edited");
    let dropped: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&edited, dropped).unwrap();
    let o = run(&edited, &dir.join("out"), &[]);
    refused(&o, "edited.jsonl: line 1:");
}

#[test]
fn scheduler_variables_pick_the_shard() {
    let dir = temp_dir("sweep-env");
    let plan = ci_plan(&dir);
    let with_env = |out: &str, vars: &[(&str, &str)], extra: &[&str]| {
        let mut c = command();
        c.args(["sweep", "run", s(&plan), "--out", s(&dir.join(out))])
            .args(extra);
        for v in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_MIN",
            "JOB_COMPLETION_INDEX",
        ] {
            c.env_remove(v);
        }
        c.envs(vars.iter().copied());
        c.output().unwrap()
    };
    // Slurm array 1-3: task 2 is shard 1 of 3.
    ok(with_env(
        "slurm",
        &[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ],
        &[],
    ));
    assert_eq!(ids_in(&dir.join("slurm")), ["1", "4", "7"]);
    // --shard wins over the environment.
    ok(with_env(
        "flag",
        &[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ],
        &["--shard", "2/4"],
    ));
    assert_eq!(ids_in(&dir.join("flag")), ["2", "6"]);
    // A Kubernetes Indexed Job: the index, and the count from --shards.
    ok(with_env(
        "k8s",
        &[("JOB_COMPLETION_INDEX", "3")],
        &["--shards", "5"],
    ));
    assert_eq!(ids_in(&dir.join("k8s")), ["3"]);
    for (vars, extra, named) in [
        (
            &[("JOB_COMPLETION_INDEX", "3")][..],
            &[][..],
            "--shards: missing",
        ),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "one"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            &[],
            "SLURM_ARRAY_TASK_ID=one",
        ),
        (
            &[("SLURM_ARRAY_TASK_ID", "1")],
            &[],
            "SLURM_ARRAY_TASK_COUNT: not set",
        ),
        (
            &[("JOB_COMPLETION_INDEX", "5")],
            &["--shards", "5"],
            "JOB_COMPLETION_INDEX=5 (--shards 5)",
        ),
        (
            &[],
            &["--shards", "2"],
            "--shards 2: has no effect without JOB_COMPLETION_INDEX",
        ),
        (&[], &["--shard", "4/4"], "--shard 4/4: shard 4 of 4"),
        (&[], &["--threads", "0"], "--threads 0"),
    ] {
        refused(&with_env("bad", vars, extra), named);
    }
    // No variable and no flag: the whole plan.
    ok(with_env("all", &[], &[]));
    assert_eq!(ids_in(&dir.join("all")).len(), 8);
}

#[test]
fn merge_writes_csv_html_and_the_cheapest_run_meeting_the_slos() {
    let dir = temp_dir("sweep-best");
    let plan = ci_plan(&dir);
    let out = dir.join("out");
    ok(run(&plan, &out, &[]));
    let (csv, html) = (dir.join("r.csv"), dir.join("r.html"));
    let o = ok(aisim(&[
        "sweep",
        "merge",
        s(&out),
        "--out",
        s(&dir.join("m.jsonl")),
        "--csv",
        s(&csv),
        "--html",
        s(&html),
        "--best",
        "--slo-ttft-ms",
        "100",
    ]));
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(
        csv.starts_with("id,topology.workers,router.policy,seed,ttft_ms_mean,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 9);
    // The cheapest by GPU-hours with TTFT p99 ≤ 100 ms: one worker holds
    // 40 req/s only at ~112-124 ms, so the best has two workers.
    let best = stdout(&o);
    assert!(best.contains("4 of 8 runs meet them"), "{best}");
    let row = |key: &str| {
        best.lines()
            .find(|l| l.starts_with(key))
            .map(|l| l[key.len()..].trim().to_string())
            .unwrap()
    };
    assert_eq!(row("topology.workers"), "2");
    let results: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("m.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let meeting: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r["metrics"]["ttft_ms"]["p99"].as_f64().unwrap() <= 100.0)
        .collect();
    let cheapest = meeting
        .iter()
        .min_by(|a, b| {
            a["gpu_hours"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["gpu_hours"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(row("id"), cheapest["id"].as_str().unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("TTFT p99 against topology.workers")
            && page.contains("lowest meeting the SLOs")
    );
    assert_eq!(page.matches("<td>yes</td>").count(), 4);
    // No run meets 1 ms: said, exit 0.
    let o = ok(aisim(&[
        "sweep",
        "merge",
        s(&out),
        "--out",
        s(&dir.join("m.jsonl")),
        "--best",
        "--slo-ttft-ms",
        "1",
    ]));
    assert!(
        stdout(&o).starts_with("no run of the 8 runs meets the SLOs (ttft p99 ≤ 1 ms"),
        "{}",
        stdout(&o)
    );
    // Flags that would share stdout, or have no effect, are refused.
    for (args, named) in [
        (
            &["--out", "-", "--best"][..],
            "--out - and --best would all write stdout",
        ),
        (
            &["--out", "m.jsonl", "--slo-tpot-ms", "5"],
            "--slo-*-ms has no effect without --best or --html",
        ),
        (
            &["--out", "m.jsonl", "--best", "--slo-e2e-ms", "-1"],
            "--slo-e2e-ms -1: must be a finite number above 0",
        ),
    ] {
        let mut all = vec!["sweep", "merge", s(&out)];
        all.extend_from_slice(args);
        refused(
            &command().current_dir(&dir).args(&all).output().unwrap(),
            named,
        );
    }
}

/// Each run's result holds the figures `aisim replay` gives for its spec
/// alone: sharing the trace between runs changes nothing.
fn results_match_lone_replays(trace: &Path, name: &str) {
    let dir = temp_dir(name);
    let grid = dir.join("grid.json");
    std::fs::write(
        &grid,
        format!(
            r#"{{"base_args": ["{}"], "axes": {{"topology.workers": [2, 4], "router.policy": ["round_robin", "kv"]}}}}"#,
            s(trace)
        ),
    )
    .unwrap();
    let plan = dir.join("plan.jsonl");
    ok(aisim(&["sweep", "plan", s(&grid), "--out", s(&plan)]));
    ok(run(
        &plan,
        &dir.join("out"),
        &["--threads", "2", "--full-report"],
    ));
    for line in std::fs::read_to_string(&plan).unwrap().lines() {
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        let spec = dir.join(format!("{}.spec.json", line["id"].as_str().unwrap()));
        std::fs::write(&spec, line["spec"].to_string()).unwrap();
        let lone = ok(aisim(&["replay", "--spec", s(&spec), "--format", "json"]));
        let mut lone: serde_json::Value = serde_json::from_str(&stdout(&lone)).unwrap();
        lone.as_object_mut().unwrap().remove("host");
        let result: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("out/{}.json", line["id"].as_str().unwrap()))).unwrap(),
        )
        .unwrap();
        assert_eq!(result["report"], lone, "run {}", line["id"]);
        assert_eq!(
            result["metrics"]["ttft_ms"]["p99"],
            lone["latency"]["ttft_ms"]["p99"]
        );
        assert_eq!(result["outcomes"], lone["outcomes"]);
    }
}

#[test]
fn results_match_lone_replays_of_a_fixture_trace() {
    results_match_lone_replays(
        Path::new(&fixture("traces/mooncake_small.jsonl")),
        "sweep-lone",
    );
}

#[test]
#[ignore = "needs ../shared"]
fn results_match_lone_replays_of_the_shared_mooncake_trace() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    assert!(trace.exists(), "missing {}", trace.display());
    results_match_lone_replays(&trace, "sweep-lone-shared");
}

/// A one-run plan of a small synthetic replay in `dir`, with `extra_axes`
/// (TOML lines under `[axes]`) and `base_args` before them.
fn small_plan(dir: &Path, name: &str, base_args: &str, extra_axes: &str) -> PathBuf {
    let grid = dir.join(format!("{name}.toml"));
    std::fs::write(
        &grid,
        format!(
            "base_args = [\"--synthetic\", \"--requests\", \"5\"{base_args}]\n[axes]\nseed = [7]\n{extra_axes}"
        ),
    )
    .unwrap();
    let plan = dir.join(format!("{name}.jsonl"));
    ok(aisim(&["sweep", "plan", s(&grid), "--out", s(&plan)]));
    plan
}

#[test]
fn a_result_claiming_a_huge_plan_is_refused_naming_its_file_before_any_table() {
    let dir = temp_dir("sweep-huge-runs");
    let plan = small_plan(&dir, "one", "", "");
    let out = dir.join("out");
    ok(run(&plan, &out, &["--quiet"]));
    let text = std::fs::read_to_string(out.join("0.json")).unwrap();
    let stray = dir.join("stray");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(
        stray.join("0.json"),
        text.replacen("\"runs\":1,", "\"runs\":1000000000000,", 1),
    )
    .unwrap();
    let o = aisim(&["sweep", "merge", s(&stray), "--out", "-"]);
    refused(
        &o,
        &format!(
            "{}: `runs` 1000000000000: more than a plan's 100000 runs",
            s(&stray.join("0.json"))
        ),
    );
}

#[test]
fn a_results_folder_failing_once_it_exists_is_exit_1_and_one_that_cannot_be_created_exit_2() {
    let dir = temp_dir("sweep-output-failures");
    let plan = small_plan(&dir, "one", "", "");
    // A dead process's leftover temporary file that cannot be removed (a
    // non-empty folder; no pid reaches 4194305).
    let out = dir.join("out");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let leftover = out.join(format!(".0.json.tmp-{}~4194305", host.trim()));
    std::fs::create_dir_all(leftover.join("x")).unwrap();
    let o = run(&plan, &out, &["--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("cannot remove {}", s(&leftover))),
        "{}",
        stderr(&o)
    );
    // A result that cannot be written (its name is a folder).
    let out = dir.join("out2");
    std::fs::create_dir_all(out.join("0.json").join("x")).unwrap();
    let o = run(&plan, &out, &["--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    // `--out` naming a file: the user's flag, as for any output file.
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let o = run(&plan, &file.join("sub"), &["--quiet"]);
    refused(&o, "cannot create");
}

#[test]
fn a_rerun_with_another_full_report_option_redoes_the_results_it_would_change() {
    let dir = temp_dir("sweep-full-report-rerun");
    let plan = ci_plan(&dir);
    let out = dir.join("out");
    ok(run(&plan, &out, &["--shard", "0/2"]));
    let has_report = |id: &str| {
        let text = std::fs::read_to_string(out.join(format!("{id}.json"))).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["report"].is_object()
    };
    // Asking for the report reruns the shard's results without it, and runs the rest.
    let o = ok(run(&plan, &out, &["--full-report"]));
    assert_eq!(ran(&o).len(), 8, "{}", stderr(&o));
    let merged = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(merged.lines().count(), 8);
    assert!(
        merged.lines().all(|l| l.contains("\"report\":{")),
        "{merged}"
    );
    // The same options again: nothing to do.
    let o = ok(run(&plan, &out, &["--full-report"]));
    assert!(ran(&o).is_empty(), "{}", stderr(&o));
    // Without it, the results go back to the headline figures only.
    ok(run(&plan, &out, &[]));
    assert!((0..8).all(|k| !has_report(&k.to_string())));
    let merged = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(!merged.contains("\"report\""));
}

#[test]
fn every_path_a_base_args_flag_carries_is_read_from_the_grids_folder() {
    // The grid and its fitted file in a subfolder; planned from its parent.
    let dir = temp_dir("sweep-flag-paths");
    let sub = dir.join("grids");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        sub.join("slow.json"),
        r#"{"version": 1, "coefficients": {"compute": 2, "weights": 2, "kv": 2}}"#,
    )
    .unwrap();
    let grid = sub.join("grid.toml");
    std::fs::write(
        &grid,
        r#"base_args = ["--synthetic", "--requests", "5", "--profile", "h100/llama-3.1-8b", "--timing", "fitted:slow.json", "--prefill-workers", "1", "--decode-workers", "1", "--prefill-timing", "fitted:slow.json", "--decode-timing", "fitted:slow.json"]
[axes]
seed = [1]
"#,
    )
    .unwrap();
    let plan = dir.join("plan.jsonl");
    ok(command()
        .current_dir(&dir)
        .args(["sweep", "plan", "grids/grid.toml", "--out", s(&plan)])
        .output()
        .unwrap());
    let line = &plan_lines(&plan)[0];
    let spec = &line["spec"];
    for timing in [
        &spec["timing"],
        &spec["topology"]["prefill"]["timing"],
        &spec["topology"]["decode"]["timing"],
    ] {
        assert_eq!(timing["coefficients"]["compute"], 2.0, "{spec}");
    }
    // A missing one is named with the grid's folder, not the current one.
    std::fs::remove_file(sub.join("slow.json")).unwrap();
    let o = command()
        .current_dir(&dir)
        .args(["sweep", "plan", "grids/grid.toml", "--out", s(&plan)])
        .output()
        .unwrap();
    refused(&o, "grids/slow.json");
}

#[test]
fn a_base_keeps_only_what_was_set_so_each_run_takes_its_own_profiles_facts() {
    let dir = temp_dir("sweep-profile-base");
    let (h100, a100) = ("h100/llama-3.1-8b", "a100/llama-3.1-8b/tp2");
    let plan = small_plan(
        &dir,
        "profiles",
        &format!(", \"--profile\", \"{h100}\""),
        &format!("\"timing.profile\" = [\"{h100}\", \"{a100}\"]\n"),
    );
    for v in plan_lines(&plan) {
        assert!(v["spec"]["engine"]["kv_budget_tokens"].is_null(), "{v}");
    }
    let out = dir.join("out");
    ok(run(&plan, &out, &["--quiet", "--full-report"]));
    // Each run's KV capacity and GPUs are its own profile's, as a lone replay's.
    for (id, profile) in [("0", h100), ("1", a100)] {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{id}.json"))).unwrap())
                .unwrap();
        let lone = aisim(&[
            "replay",
            "--synthetic",
            "--requests",
            "5",
            "--profile",
            profile,
            "--format",
            "json",
        ]);
        let lone: serde_json::Value = serde_json::from_str(&stdout(&ok(lone))).unwrap();
        for key in ["kv_capacity_tokens", "gpus_per_worker"] {
            assert_eq!(
                r["report"]["pools"][0][key], lone["pools"][0][key],
                "{profile}: {key}"
            );
        }
    }
    // Disaggregated pools with their own profiles: an engine axis reaches
    // both pools, whose engines are not copied into the base.
    let plan = small_plan(
        &dir,
        "disagg",
        &format!(", \"--prefill-workers\", \"1\", \"--decode-workers\", \"1\", \"--prefill-profile\", \"{h100}\", \"--decode-profile\", \"{a100}\""),
        "\"engine.max_num_batched_tokens\" = [2048, 8192]\n",
    );
    for v in plan_lines(&plan) {
        for pool in ["prefill", "decode"] {
            assert!(v["spec"]["topology"][pool]["engine"].is_null(), "{v}");
        }
    }
}

#[test]
fn a_closed_stderr_loses_the_log_lines_not_the_runs() {
    // `aisim sweep run ... 2>&1 | head -2`: the reader is gone after two
    // lines; every later log line fails to write, and the sweep goes on.
    let dir = temp_dir("sweep-closed-stderr");
    let plan = ci_plan(&dir);
    let out = dir.join("out");
    let mut child = command()
        .args(["sweep", "run", s(&plan), "--out", s(&out), "--threads", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take()); // the reader closes before the first line
    let status = child.wait().unwrap();
    assert!(status.success(), "sweep run with a closed stderr: {status}");
    assert_eq!(ids_in(&out).len(), plan_lines(&plan).len());
    assert_eq!(
        std::fs::read(out.join("results.jsonl")).unwrap(),
        reference(&plan, &dir)
    );
}

//! The shipped Slurm scripts (deploy/slurm/) run against stand-ins for
//! `sbatch` and `aisim` that record their arguments: what submit.sh asks
//! Slurm for, what each job runs, and that bad input is refused (exit 2,
//! naming the value) before anything is submitted. The same scripts run on a
//! real one-node Slurm in CI (.ci/slurm/roundtrip).

mod common;
#[path = "common/sweep_share.rs"]
mod sweep_share;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DEPLOY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/slurm");

/// A script of deploy/slurm by the path submit.sh names it (`..` resolved).
fn deploy(script: &str) -> PathBuf {
    std::fs::canonicalize(format!("{DEPLOY}/{script}")).unwrap()
}

/// A folder with an executable `name` that appends its arguments, one a line,
/// then a blank line, to `calls`, and prints `out` (one line per call, in turn).
fn recorder(dir: &Path, name: &str, out: &[&str]) -> PathBuf {
    let calls = dir.join(format!("{name}.calls"));
    let replies = out
        .iter()
        .map(|o| format!("'{o}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!(
        "#!/usr/bin/env bash\n\
         n=$(grep -c '^$' '{calls}' 2>/dev/null || true)\n\
         printf '%s\\n' \"$@\" >> '{calls}'\n\
         echo >> '{calls}'\n\
         replies=({replies})\n\
         [ -z \"${{replies[$n]:-}}\" ] || echo \"${{replies[$n]}}\"\n",
        calls = calls.display()
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    calls
}

/// The argument lists the recorder at `calls` was called with.
fn calls(calls: &Path) -> Vec<Vec<String>> {
    match std::fs::read_to_string(calls) {
        Ok(text) => text
            .split_terminator("\n\n")
            .map(|c| c.lines().map(str::to_string).collect())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A scratch folder holding a plan of `runs` lines and a bin/ for stand-ins.
fn scratch(name: &str, runs: usize) -> (PathBuf, PathBuf) {
    let dir = std::fs::canonicalize(common::temp_dir(name)).unwrap();
    let plan = dir.join("plan.jsonl");
    let lines: String = (0..runs)
        .map(|k| format!("{{\"id\":\"r{k}\"}}\n"))
        .collect();
    std::fs::write(&plan, lines).unwrap();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    (dir, plan)
}

fn run(dir: &Path, script: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let mut cmd = Command::new("bash");
    cmd.arg(format!("{DEPLOY}/{script}"))
        .args(args)
        .env("PATH", path)
        .current_dir(dir);
    for var in [
        "AISIM",
        "CPUS_PER_TASK",
        "SLURM_LOGS",
        "SLURM_CPUS_PER_TASK",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied()).output().unwrap()
}

#[test]
fn submit_queues_the_array_then_a_merge_that_waits_for_all_of_it() {
    let (dir, plan) = scratch("submit", 10);
    let sbatch = recorder(&dir.join("bin"), "sbatch", &["41;cluster", "42"]);
    let out = run(
        &dir,
        "submit.sh",
        &["plan.jsonl", "out", "4"],
        &[("CPUS_PER_TASK", "3")],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(common::stdout(&out), "sweep_job=41\nmerge_job=42\n");

    let dir_abs = dir.join("out");
    let logs = dir_abs.join("slurm-logs");
    assert!(
        logs.is_dir(),
        "the log folder exists before Slurm writes to it"
    );
    let s = |p: &Path| p.display().to_string();
    assert_eq!(
        calls(&sbatch),
        [
            vec![
                "--parsable".to_string(),
                "--array=0-3".into(),
                "--cpus-per-task=3".into(),
                format!("--output={}/sweep-%A_%a.out", s(&logs)),
                s(&deploy("sweep.sbatch")),
                s(&plan),
                s(&dir_abs),
            ],
            vec![
                "--parsable".to_string(),
                "--dependency=afterok:41".into(),
                "--kill-on-invalid-dep=yes".into(),
                format!("--output={}/merge-%j.out", s(&logs)),
                s(&deploy("merge.sbatch")),
                s(&dir_abs),
                s(&dir_abs.join("results.jsonl")),
            ],
        ]
    );
}

/// Arguments and environment submit.sh must refuse, and what its error says.
type Refusal<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn submit_refuses_bad_input_before_submitting_anything() {
    let (dir, _) = scratch("submit-bad", 3);
    let sbatch = recorder(&dir.join("bin"), "sbatch", &["1", "2"]);
    // (arguments, environment, what the error says)
    let cases: &[Refusal] = &[
        (
            &["plan.jsonl", "out", "0"],
            &[],
            "SHARDS '0': not a whole number in 1 ..= 999999999",
        ),
        (&["plan.jsonl", "out", "-1"], &[], "SHARDS '-1'"),
        (&["plan.jsonl", "out", "2.5"], &[], "SHARDS '2.5'"),
        (&["plan.jsonl", "out", ""], &[], "SHARDS ''"),
        (
            &["plan.jsonl", "out", "99999999999999999999"],
            &[],
            "SHARDS '99999999999999999999'",
        ),
        (
            &["plan.jsonl", "out", "4"],
            &[],
            "SHARDS 4: more than the 3 runs in",
        ),
        (
            &["plan.jsonl", "out", "2"],
            &[("CPUS_PER_TASK", "0")],
            "CPUS_PER_TASK '0'",
        ),
        (
            &["plan.jsonl", "out", "2"],
            &[("CPUS_PER_TASK", "two")],
            "CPUS_PER_TASK 'two'",
        ),
        (
            &["missing.jsonl", "out", "2"],
            &[],
            "PLAN missing.jsonl: not a readable file",
        ),
        (&["plan.jsonl", "out"], &[], "usage:"),
        (
            &["plan.jsonl", "out", "2", "r.jsonl", "extra"],
            &[],
            "usage:",
        ),
    ];
    for (args, env, message) in cases {
        let out = run(&dir, "submit.sh", args, env);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?} {env:?}: {}",
            common::stderr(&out)
        );
        assert!(
            common::stderr(&out).contains(message),
            "{args:?}: {}",
            common::stderr(&out)
        );
        assert!(common::stdout(&out).is_empty());
        assert!(
            !dir.join("out").exists(),
            "{args:?}: nothing is created for a refused submission"
        );
    }
    assert!(calls(&sbatch).is_empty(), "nothing was submitted");
}

#[test]
fn the_array_task_runs_its_shard_with_one_thread_per_cpu() {
    let (dir, _) = scratch("sweep-task", 2);
    let aisim = recorder(&dir.join("bin"), "fake-aisim", &[]);
    let fake = dir.join("bin/fake-aisim").display().to_string();
    let succeeds = |script: &str, args: &[&str], env: &[(&str, &str)]| {
        let out = run(&dir, script, args, env);
        assert!(out.status.success(), "{script}: {}", common::stderr(&out));
    };
    succeeds(
        "sweep.sbatch",
        &["/p.jsonl", "/d"],
        &[("AISIM", &fake), ("SLURM_CPUS_PER_TASK", "3")],
    );
    // Without --cpus-per-task Slurm gives a task one CPU.
    succeeds("sweep.sbatch", &["/p.jsonl", "/d"], &[("AISIM", &fake)]);
    succeeds("merge.sbatch", &["/d", "/r.jsonl"], &[("AISIM", &fake)]);
    let run_args = |t: &str| {
        ["sweep", "run", "/p.jsonl", "--out", "/d", "--threads", t]
            .map(String::from)
            .to_vec()
    };
    assert_eq!(
        calls(&aisim),
        [
            run_args("3"),
            run_args("1"),
            ["sweep", "merge", "/d", "--out", "/r.jsonl"]
                .map(String::from)
                .to_vec()
        ]
    );
    for (script, args) in [
        ("sweep.sbatch", &["/p.jsonl"][..]),
        ("merge.sbatch", &["/d", "/r", "x"][..]),
    ] {
        let out = run(&dir, script, args, &[("AISIM", &fake)]);
        assert_eq!(out.status.code(), Some(2), "{script} {args:?}");
        assert!(
            common::stderr(&out).contains("usage:"),
            "{}",
            common::stderr(&out)
        );
    }
    assert_eq!(calls(&aisim).len(), 3, "a usage error runs nothing");
}

/// sweep.sbatch with the real aisim under the variables Slurm sets for an
/// array `--array=5-8`: each task runs its own share of the plan (the task
/// id counted from SLURM_ARRAY_TASK_MIN), and the tasks together run it all.
#[test]
fn array_tasks_numbered_from_any_min_run_the_plan_once() {
    let dir = std::fs::canonicalize(common::temp_dir("sweep-array")).unwrap();
    let plan = dir.join("plan.jsonl");
    let (min, count) = (5, 4);
    let mut shards = sweep_share::Shards::new(sweep_share::ci_plan(&plan), count);
    let out_dir = dir.join("out");
    for task in min..min + count {
        let out = run(
            &dir,
            "sweep.sbatch",
            &[plan.to_str().unwrap(), out_dir.to_str().unwrap()],
            &[
                ("AISIM", env!("CARGO_BIN_EXE_aisim")),
                ("SLURM_ARRAY_TASK_ID", &task.to_string()),
                ("SLURM_ARRAY_TASK_COUNT", &count.to_string()),
                ("SLURM_ARRAY_TASK_MIN", &min.to_string()),
                ("SLURM_CPUS_PER_TASK", "1"),
            ],
        );
        shards.ran(task - min, &format!("task {task}"), &out, &out_dir);
    }
    shards.ran_all();
}

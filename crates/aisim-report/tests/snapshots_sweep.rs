//! Snapshots of a merged sweep's outputs (`aisim sweep merge`): the CSV,
//! the `--best` table and the HTML page's skeleton, over a small grid of
//! the demo trace run in this process (regenerate with `cargo xtask golden`).

use std::path::{Path, PathBuf};

use aisim_lab::sweep::{
    best, merge, read_results, to_csv, Base, Grid, Pending, Plan, RunOptions, RunResult, Shard, Slo,
};

/// The demo on the a100 profile (which has a price) over 1 and 2 workers
/// and two routers, planned, run and merged.
fn merged(name: &str) -> Vec<RunResult> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-report-sweep-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let grid = Grid::parse(
        &dir.join("grid.json"),
        r#"{"base": {"version": 1, "workload": {"kind": "demo"}, "timing": {"kind": "iteration", "profile": "a100"}},
            "axes": {"topology.workers": [1, 2], "router.policy": ["round_robin", "least_loaded"]}}"#,
    )
    .unwrap();
    let Base::Spec(base) = &grid.base else {
        panic!("an inline base")
    };
    let plan = Plan::expand(&grid, base).unwrap();
    let out: PathBuf = dir.join("out");
    let options = RunOptions {
        threads: 2,
        full_report: false,
    };
    Pending::find(&plan, Path::new("plan.jsonl"), &out, Shard::WHOLE, false)
        .unwrap()
        .run(options, &|_| {})
        .unwrap();
    let dirs = [out];
    merge(&dirs, read_results(&dirs).unwrap()).unwrap()
}

#[test]
fn sweep_csv() {
    insta::assert_snapshot!(to_csv(&merged("csv")));
}

#[test]
fn sweep_best_table() {
    let results = merged("best");
    let slo = Slo {
        ttft_ms: Some(2000.0),
        ..Slo::default()
    };
    let (pick, basis) = best(&results, &slo);
    insta::assert_snapshot!(aisim_report::sweep::render_best(
        &results, pick, basis, &slo
    ));
}

#[test]
fn sweep_html_skeleton() {
    let results = merged("html");
    let slo = Slo {
        ttft_ms: Some(2000.0),
        ..Slo::default()
    };
    let page = aisim_report::html::render_sweep_html(&results, Some(&slo));
    // The page's structure: headings, chart titles, the series (lines, and
    // dots at a categorical axis's named ticks) and the table's header.
    let skeleton: Vec<&str> = page
        .lines()
        .filter(|l| {
            l.starts_with("<h")
                || l.starts_with("<figcaption")
                || l.starts_with("<tr><th")
                || l.starts_with("<p")
                || l.starts_with("<g class")
        })
        .collect();
    insta::assert_snapshot!(skeleton.join("\n"));
    assert!(!page.contains("<script") && !page.contains("http"));
}

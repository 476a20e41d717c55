//! Sweep benchmark (release): `cargo bench -p aisim-replay --bench sweep`.
//!
//! 1,000 replays of the shared Mooncake synthetic trace (3,993 requests), a
//! grid over 10 worker counts (4 to 13), 20 batch budgets
//! (`engine.max_num_batched_tokens` 2,048 to 21,504) and 5 routers
//! (round_robin, random, least_loaded, kv, lpwl), through what `aisim
//! sweep run` does (`Pending::run`: plan read, one result file per run,
//! `results.jsonl` merged at the end) on 2 threads, then on 1 thread
//! against the same 1,000 replays run one by one in this process (the trace
//! read once, no files), the two interleaved in ten shards: the sweep's
//! overhead. Wall and CPU time (the
//! process's user + system, all threads) of each, since other work may
//! share the machine. Targets (issue 12): the 2-thread sweep under 60 s
//! on 2 cores, its overhead under 5 %.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use aisim_lab::sweep::{Base, Grid, Pending, Plan, RunOptions, Shard};
use aisim_replay::policy::SpecComposition;
use aisim_replay::workload::load_trace;
use aisim_replay::Replayer;

/// User + system CPU seconds of this process so far (all its threads).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th of the whole line, in clock ticks (100 a second).
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    if f.len() < 13 {
        return f64::NAN;
    }
    (f[11] + f[12]) / 100.0
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t0, c0) = (Instant::now(), cpu_s());
    let out = f();
    (out, t0.elapsed().as_secs_f64(), cpu_s() - c0)
}

fn main() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    assert!(
        trace.exists(),
        "the sweep benchmark replays {}, which is missing",
        trace.display()
    );
    let trace = trace.canonicalize().unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-bench-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let budgets: Vec<String> = (0..20).map(|i| (2048 + 1024 * i).to_string()).collect();
    let text = format!(
        r#"{{"base": {{"version": 1, "workload": {{"kind": "trace", "path": "{}"}}}},
            "axes": {{"topology.workers": "4..13",
                      "engine.max_num_batched_tokens": [{}],
                      "router.policy": ["round_robin", "random", "least_loaded", "kv", "lpwl"]}}}}"#,
        trace.display(),
        budgets.join(", ")
    );
    let grid_path = dir.join("grid.json");
    std::fs::write(&grid_path, &text).unwrap();
    let grid = Grid::read(&grid_path).unwrap();
    let Base::Spec(base) = &grid.base else {
        unreachable!("an inline base")
    };
    let (plan, wall, cpu) = timed(|| Plan::expand(&grid, base).unwrap());
    println!(
        "sweep: plan of {} runs in {wall:.2} s wall, {cpu:.2} s CPU (grid {})",
        plan.lines.len(),
        grid_path.display()
    );
    std::fs::write(dir.join("plan.jsonl"), plan.to_jsonl()).unwrap();
    let sweep = |threads: usize| {
        let out = dir.join(format!("out-{threads}"));
        let _ = std::fs::remove_dir_all(&out);
        let ((), wall, cpu) = timed(|| {
            let summary = Pending::find(&plan, &dir.join("plan.jsonl"), &out, Shard::WHOLE, false)
                .unwrap()
                .run(
                    RunOptions {
                        threads,
                        full_report: false,
                    },
                    &|_| {},
                )
                .unwrap();
            assert_eq!(summary.ran, 1000);
            assert!(summary.merged.is_some());
        });
        println!(
            "sweep: sweep run of 1,000 replays on {threads} thread(s): {wall:.2} s wall, {cpu:.2} s CPU"
        );
        (wall, cpu)
    };
    let (wall2, _) = sweep(2);
    // The overhead on 1 thread, against the same replays one by one (the
    // trace read once, no files), interleaved shard by shard in A B B A
    // order, so the machine's drift over the minutes this takes (other
    // tenants, clocks) falls on both sides alike.
    let shared = Arc::new(load_trace(&plan.lines[0].spec.workload).unwrap().unwrap());
    let out = dir.join("out-1");
    let _ = std::fs::remove_dir_all(&out);
    const SHARDS: u64 = 10;
    let (mut sweep_t, mut base_t) = ((0.0, 0.0), (0.0, 0.0));
    for index in 0..SHARDS {
        let shard = Shard {
            index,
            count: SHARDS,
        };
        let run_sweep = || {
            let ((), wall, cpu) = timed(|| {
                let summary = Pending::find(&plan, &dir.join("plan.jsonl"), &out, shard, false)
                    .unwrap()
                    .run(
                        RunOptions {
                            threads: 1,
                            full_report: false,
                        },
                        &|_| {},
                    )
                    .unwrap();
                assert_eq!(summary.ran, 100);
                assert_eq!(summary.merged.is_some(), index + 1 == SHARDS);
            });
            (wall, cpu)
        };
        let run_one_by_one = || {
            let ((), wall, cpu) = timed(|| {
                for (k, line) in plan.lines.iter().enumerate() {
                    if !shard.holds(k as u64) {
                        continue;
                    }
                    let out = Replayer::new(line.spec.clone(), SpecComposition)
                        .unwrap()
                        .with_trace(shared.clone())
                        .run()
                        .unwrap();
                    std::hint::black_box(out.report.outcomes.completed);
                }
            });
            (wall, cpu)
        };
        let (a, b) = if index % 2 == 0 {
            let a = run_sweep();
            (a, run_one_by_one())
        } else {
            let b = run_one_by_one();
            (run_sweep(), b)
        };
        sweep_t = (sweep_t.0 + a.0, sweep_t.1 + a.1);
        base_t = (base_t.0 + b.0, base_t.1 + b.1);
    }
    let ((wall1, cpu1), (base_wall, base_cpu)) = (sweep_t, base_t);
    println!(
        "sweep: sweep run of 1,000 replays on 1 thread, in {SHARDS} shards: {wall1:.2} s wall, {cpu1:.2} s CPU"
    );
    println!(
        "sweep: the same 1,000 replays one by one, interleaved with those shards: {base_wall:.2} s wall, {base_cpu:.2} s CPU"
    );
    println!(
        "sweep: overhead of sweep run (1 thread) over one by one: {:+.2} % wall, {:+.2} % CPU; 2 threads: {wall2:.2} s (target < 60 s), speedup {:.2}x over 1 thread",
        (wall1 / base_wall - 1.0) * 100.0,
        (cpu1 / base_cpu - 1.0) * 100.0,
        wall1 / wall2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! The whole `aisim replay` process on the shared Mooncake trace, 8 workers
//! (start, read, replay, report, write, exit), as a user runs it:
//! `cargo bench -p aisim-cli --bench process`.
//!
//! Runs it 30 times and prints the best, the 10th percentile and the median
//! wall time: on a shared VM single runs vary by tens of percent, and the
//! low percentiles say what the program costs when the machine is not busy
//! with something else.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    if !trace.exists() {
        println!("process: skipped, {} not found", trace.display());
        return;
    }
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-process-bench-{}.json", std::process::id()));
    let mut times: Vec<f64> = (0..30)
        .map(|_| {
            let t0 = Instant::now();
            let status = Command::new(env!("CARGO_BIN_EXE_aisim"))
                .arg("replay")
                .arg(&trace)
                .args(["--workers", "8", "--out"])
                .arg(&out)
                .stdout(Stdio::null())
                .status()
                .expect("aisim runs");
            assert!(status.success());
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let _ = std::fs::remove_file(&out);
    times.sort_by(f64::total_cmp);
    println!(
        "process (aisim replay, Mooncake trace, 8 workers, 30 runs): best {:.1} ms, p10 {:.1} ms, median {:.1} ms",
        times[0],
        times[times.len() / 10],
        times[times.len() / 2]
    );
}

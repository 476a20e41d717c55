//! The whole `aisim replay` process (start, read, replay, report, write,
//! exit), as a user runs it:
//! `cargo bench -p aisim-cli --bench process [-- synthetic|conversation|ten_million]`.
//!
//! - `synthetic`: the shared Mooncake synthetic trace (3,993 requests), 8
//!   workers, `--format json`, 30 runs;
//! - `conversation`: the shared Mooncake conversation trace (12,031
//!   requests), 8 workers, `--format json`, 15 runs;
//! - `ten_million`: `--synthetic --requests 10000000 --rate 3000 --workers
//!   128`, once, with the process's peak resident memory (`AISIM_BENCH_REQUESTS`
//!   scales it down: about 6 to 11 s a million requests on this project's
//!   2-core VM).
//!
//! A trace run prints the best, the 10th percentile and the median wall
//! time: on a shared VM single runs vary by tens of percent, and the low
//! percentiles say what the program costs when the machine is not busy with
//! something else. With `AISIM_REFERENCE` naming the reference driver
//! (`../shared/peers/README.md` says how to build it), each trace run
//! alternates with the reference's on the same trace and workers (5 pairs,
//! or `AISIM_BENCH_PAIRS`), and the median of the pairs' ratios is printed
//! too. The traces are in `../shared` beside the repository: without them
//! those cases say so and are skipped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    if wanted("synthetic") {
        trace_case("synthetic", "mooncake_synthetic_trace.jsonl", 30);
    }
    if wanted("conversation") {
        trace_case("conversation", "mooncake_conversation_trace.jsonl", 15);
    }
    if wanted("ten_million") {
        ten_million();
    }
}

fn trace_path(file: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(file);
    path.exists().then_some(path)
}

fn scratch_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-process-bench-{name}-{}", std::process::id()))
}

/// Runs `cmd` to its end, its output thrown away: wall ms.
fn timed(mut cmd: Command) -> f64 {
    let t0 = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .status()
        .expect("the command starts");
    assert!(status.success(), "the command failed: {status}");
    t0.elapsed().as_secs_f64() * 1e3
}

/// Waits for `child`, reading its peak resident memory (Linux's VmHWM) as it
/// runs (every 2 ms: for a long run only); panics when it fails.
fn wait_watching_peak(mut child: Child) -> Option<f64> {
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Some(status) = child.try_wait().expect("the command runs") {
            assert!(status.success(), "the command failed: {status}");
            return peak;
        }
        let hwm = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            })
            .map(|kb| kb / 1024.0);
        peak = hwm.or(peak);
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// `aisim replay TRACE --workers 8 --format json`, `runs` times; against
/// the reference when `AISIM_REFERENCE` names it.
fn trace_case(name: &str, file: &str, runs: usize) {
    let Some(trace) = trace_path(file) else {
        println!("{name}: skipped, ../shared/traces/{file} not found");
        return;
    };
    let aisim = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_aisim"));
        c.arg("replay")
            .arg(&trace)
            .args(["--workers", "8", "--format", "json"]);
        c
    };
    let times = sorted((0..runs).map(|_| timed(aisim())).collect());
    println!(
        "{name} (aisim replay {file} --workers 8 --format json, {runs} runs, whole process): \
         best {:.1} ms, p10 {:.1} ms, median {:.1} ms",
        times[0],
        times[runs / 10],
        times[runs / 2]
    );
    let Ok(reference) = std::env::var("AISIM_REFERENCE") else {
        return;
    };
    let pairs: usize = std::env::var("AISIM_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let out = scratch_file(name);
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..pairs {
        let a = timed(aisim());
        let mut r = Command::new(&reference);
        r.arg(&trace)
            .args(["--workers", "8", "--out"])
            .arg(&out)
            .stderr(Stdio::null()); // its summary line
        let b = timed(r);
        ours.push(a);
        theirs.push(b);
        ratios.push(b / a);
    }
    let _ = std::fs::remove_file(&out);
    let median = |v: Vec<f64>| sorted(v)[pairs / 2];
    println!(
        "{name} against the reference ({pairs} pairs alternated, medians): aisim {:.1} ms, \
         reference {:.1} ms, reference / aisim {:.1}x",
        median(ours),
        median(theirs),
        median(ratios)
    );
}

/// The 10-million-request synthetic run, once, with its peak memory.
fn ten_million() {
    let requests: u64 = std::env::var("AISIM_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let mut c = Command::new(env!("CARGO_BIN_EXE_aisim"));
    c.args(["replay", "--synthetic", "--requests"])
        .arg(requests.to_string())
        .args(["--rate", "3000", "--workers", "128", "--format", "json"]);
    let t0 = Instant::now();
    let child = c.stdout(Stdio::null()).spawn().expect("aisim starts");
    let peak = wait_watching_peak(child);
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let peak = peak.map_or("unknown".to_string(), |p| format!("{p:.0} MiB"));
    println!(
        "ten_million (aisim replay --synthetic --requests {requests} --rate 3000 --workers 128, \
         whole process, once): {:.1} s, peak resident {peak}",
        ms / 1e3
    );
}

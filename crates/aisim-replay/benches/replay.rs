//! Replay benchmarks (release, single thread):
//! `cargo bench -p aisim-replay --bench replay [-- mooncake|million]`.
//!
//! - `mooncake`: the shared Mooncake synthetic trace (3,993 requests) with the
//!   default engine on 8 workers, in process, best of several runs;
//! - `million`: 1,000,000 synthetic requests (1,024 in / 128 out, Poisson at
//!   1,000 req/s) on 64 workers, with the process's peak resident memory.

use std::path::Path;
use std::time::Instant;

use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, TopologySpec, WorkloadSpec};
use aisim_replay::trace::read_trace;
use aisim_replay::{ReplaySpec, Replayer};

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn mooncake() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    if !path.exists() {
        println!("mooncake: skipped, {} not found", path.display());
        return;
    }
    let spec = ReplaySpec {
        workload: WorkloadSpec::Trace {
            path: path.clone(),
            format: None,
            trace_block_size: None,
        },
        topology: TopologySpec::Aggregated { workers: 8 },
        ..ReplaySpec::default()
    };
    let replayer = Replayer::new(spec, SpecComposition).unwrap();
    // Runs and reads interleaved, so that a slow spell of the machine hits both.
    let (mut runs, mut reads) = (Vec::new(), Vec::new());
    for _ in 0..21 {
        let t0 = Instant::now();
        let out = replayer.run().unwrap();
        runs.push(t0.elapsed().as_secs_f64() * 1e3);
        assert_eq!(out.report.outcomes.completed, 3993);
        let t0 = Instant::now();
        let trace = read_trace(&path, None, None).unwrap();
        reads.push(t0.elapsed().as_secs_f64() * 1e3);
        assert_eq!(trace.records.len(), 3993);
    }
    let best_median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    let (run_best, run_median) = best_median(&mut runs);
    let (read_best, read_median) = best_median(&mut reads);
    println!(
        "mooncake (3,993 requests, 8 workers): read + replay + report best {run_best:.1} ms, median {run_median:.1} ms; \
         of which reading the trace best {read_best:.1} ms, median {read_median:.1} ms"
    );
}

fn million() {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 1_000_000,
            input: LengthSpec::Fixed { tokens: 1024 },
            output: LengthSpec::Fixed { tokens: 128 },
            arrival: ArrivalSpec::Poisson { rate: 1000.0 },
            prefix_groups: 0,
            prefix_tokens: 0,
            turns: 1,
            think_ms: 0.0,
            trace_block_size: 512,
            total_cdf: None,
        }),
        topology: TopologySpec::Aggregated { workers: 64 },
        ..ReplaySpec::default()
    };
    let t0 = Instant::now();
    let out = Replayer::new(spec, SpecComposition).unwrap().run().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(out.report.outcomes.completed, 1_000_000);
    println!(
        "million (1,000,000 requests, 64 workers): {wall:.2} s, {:.0} requests/s, peak RSS {:.0} MiB, mean TTFT {:.1} ms",
        1e6 / wall,
        peak_rss_mib(),
        out.report.latency.ttft_ms.mean.unwrap()
    );
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |name: &str| which.is_empty() || which.iter().any(|w| w == name);
    if want("mooncake") {
        mooncake();
    }
    if want("million") {
        million();
    }
}

//! Replay benchmarks (release, single thread):
//! `cargo bench -p aisim-replay --bench replay [-- mooncake|mooncake_sglang|disagg|million|ten_million|turns|routers]`.
//!
//! - `mooncake`: the shared Mooncake synthetic trace (3,993 requests) with the
//!   default engine on 8 workers, in process, best of several runs;
//! - `mooncake_sglang`: the same trace on SGLang at its default one-token
//!   pages, 1,048,576 of them a rank (what `aisim replay TRACE --workers 8
//!   --backend sglang --block-size 1 --num-gpu-blocks 1048576` runs);
//! - `disagg`: the same trace disaggregated 4 + 4 against aggregated 8;
//! - `million`: 1,000,000 synthetic requests (1,024 in / 128 out, Poisson at
//!   1,000 req/s) on 64 workers, with the process's peak resident memory;
//! - `ten_million`: the same with 10,000,000 requests, past the exact limit
//!   (its percentiles come from the sketch); run it alone for its peak RSS;
//! - `turns`: one synthetic session of 100,000 turns (what
//!   `aisim replay --synthetic --requests 1 --turns 100000` runs);
//! - `routers`: the shared Mooncake trace on 8 workers under each placement
//!   policy (round robin, kv, lpwl, sticky), on vLLM and on SGLang (each at
//!   its default page size), runs interleaved, best and median, and each
//!   one's best against round robin's on the same backend (the issue's
//!   bound: at most 2x).

use std::path::Path;
use std::time::Instant;

use aisim_core::Backend;
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{
    ArrivalSpec, KvTransferSpec, PoolSpec, RouterKind, SyntheticSpec, TopologySpec, WorkloadSpec,
};
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

/// The shared Mooncake trace, if it is there.
fn mooncake_path() -> Option<std::path::PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    if path.exists() {
        Some(path)
    } else {
        println!("mooncake: skipped, {} not found", path.display());
        None
    }
}

/// The Mooncake trace on `topology`, default engine and timing.
fn mooncake_spec(path: &Path, topology: TopologySpec) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Trace {
            path: path.to_path_buf(),
            format: None,
            trace_block_size: None,
        },
        topology,
        ..ReplaySpec::default()
    }
}

fn best_median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

/// The shared trace on 8 workers with the engine `configure` sets.
fn mooncake(name: &str, configure: impl Fn(&mut aisim_core::EngineConfig)) {
    let Some(path) = mooncake_path() else {
        return;
    };
    let mut spec = mooncake_spec(&path, TopologySpec::Aggregated { workers: 8 });
    configure(&mut spec.engine);
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
    let (run_best, run_median) = best_median(&mut runs);
    let (read_best, read_median) = best_median(&mut reads);
    println!(
        "{name} (3,993 requests, 8 workers): read + replay + report best {run_best:.1} ms, median {run_median:.1} ms; \
         of which reading the trace best {read_best:.1} ms, median {read_median:.1} ms"
    );
}

fn routers() {
    let Some(path) = mooncake_path() else {
        return;
    };
    let policies = [
        RouterKind::RoundRobin,
        RouterKind::Kv,
        RouterKind::Lpwl,
        RouterKind::Sticky,
    ];
    // Each backend at its default page size: vLLM's 64-token blocks, and
    // SGLang's one-token pages (where the kv router's events are page runs).
    for backend in [Backend::Vllm, Backend::Sglang] {
        let replayers: Vec<_> = policies
            .iter()
            .map(|&p| {
                let mut spec = mooncake_spec(&path, TopologySpec::Aggregated { workers: 8 });
                spec.engine.backend = backend;
                spec.router.policy = p;
                Replayer::new(spec, SpecComposition).unwrap()
            })
            .collect();
        let mut times = vec![Vec::new(); policies.len()];
        // Interleaved, so that a slow spell of the machine hits every policy.
        for _ in 0..11 {
            for (r, t) in replayers.iter().zip(&mut times) {
                let t0 = Instant::now();
                let out = r.run().unwrap();
                t.push(t0.elapsed().as_secs_f64() * 1e3);
                assert_eq!(out.report.outcomes.completed, 3993);
            }
        }
        let figures: Vec<(f64, f64)> = times.iter_mut().map(|t| best_median(t)).collect();
        for (p, (best, median)) in policies.iter().zip(&figures) {
            println!(
                "routers (3,993 requests, 8 workers, {}): {:<11} best {best:.1} ms, median {median:.1} ms, {:.2}x round robin's best",
                format!("{backend:?}").to_lowercase(),
                p.name(),
                best / figures[0].0
            );
        }
    }
}

/// Disaggregated 4 + 4 against aggregated 8 on the Mooncake trace, runs
/// interleaved (Llama-3.1-8B-sized KV, 131,072 bytes a token, over the
/// default 50 GB/s link).
fn disagg() {
    let Some(path) = mooncake_path() else {
        return;
    };
    let agg = Replayer::new(
        mooncake_spec(&path, TopologySpec::Aggregated { workers: 8 }),
        SpecComposition,
    )
    .unwrap();
    let disagg = Replayer::new(
        mooncake_spec(
            &path,
            TopologySpec::Disaggregated {
                prefill: PoolSpec::new(4),
                decode: PoolSpec::new(4),
                kv_transfer: KvTransferSpec {
                    bytes_per_token: Some(131_072),
                    ..KvTransferSpec::default()
                },
            },
        ),
        SpecComposition,
    )
    .unwrap();
    let (mut aggs, mut disaggs) = (Vec::new(), Vec::new());
    for _ in 0..21 {
        for (replayer, times) in [(&agg, &mut aggs), (&disagg, &mut disaggs)] {
            let t0 = Instant::now();
            let out = replayer.run().unwrap();
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            assert_eq!(out.report.outcomes.completed, 3993);
        }
    }
    let (agg_best, agg_median) = best_median(&mut aggs);
    let (dis_best, dis_median) = best_median(&mut disaggs);
    println!(
        "disagg (3,993 requests): 4 + 4 best {dis_best:.1} ms, median {dis_median:.1} ms; \
         aggregated 8 best {agg_best:.1} ms, median {agg_median:.1} ms; ratio of medians {:.2}",
        dis_median / agg_median
    );
}

/// `requests` synthetic requests (1,024 in / 128 out, Poisson at 1,000 req/s)
/// on 64 workers, timed, with the peak RSS so far.
fn synthetic_run(name: &str, requests: u64) {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec::fixed(
            requests,
            1024,
            128,
            ArrivalSpec::Poisson { rate: 1000.0 },
        )),
        topology: TopologySpec::Aggregated { workers: 64 },
        ..ReplaySpec::default()
    };
    let t0 = Instant::now();
    let out = Replayer::new(spec, SpecComposition).unwrap().run().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let r = &out.report;
    assert_eq!(r.outcomes.completed, requests);
    let sketched = if r.discipline.sketched.is_empty() {
        "all percentiles exact".to_string()
    } else {
        format!("{} distributions sketched", r.discipline.sketched.len())
    };
    println!(
        "{name} ({requests} requests, 64 workers): {wall:.2} s, {:.0} requests/s, peak RSS {:.0} MiB, \
         mean TTFT {:.1} ms, p99 TTFT {:.1} ms, {sketched}",
        requests as f64 / wall,
        peak_rss_mib(),
        r.latency.ttft_ms.mean.unwrap(),
        r.latency.ttft_ms.p99.unwrap(),
    );
}

fn turns() {
    let turns = 100_000;
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            turns,
            ..SyntheticSpec::fixed(1, 1024, 128, ArrivalSpec::Poisson { rate: 10.0 })
        }),
        ..ReplaySpec::default()
    };
    let t0 = Instant::now();
    let out = Replayer::new(spec, SpecComposition).unwrap().run().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let o = &out.report.outcomes;
    assert_eq!(o.offered, turns as u64);
    println!(
        "turns (one session of {turns} turns): {wall:.2} s, {} completed, {} rejected (past the KV cache)",
        o.completed, o.rejected
    );
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |name: &str| which.is_empty() || which.iter().any(|w| w == name);
    if want("mooncake") {
        mooncake("mooncake", |_| {});
    }
    if want("mooncake_sglang") {
        mooncake("mooncake_sglang", |engine| {
            engine.backend = aisim_core::Backend::Sglang;
            engine.block_size = Some(1);
            engine.num_gpu_blocks = Some(1 << 20);
        });
    }
    if want("disagg") {
        disagg();
    }
    if want("million") {
        synthetic_run("million", 1_000_000);
    }
    if want("turns") {
        turns();
    }
    if want("routers") {
        routers();
    }
    // Not in the default set: two minutes, and best run alone for its RSS.
    if which.iter().any(|w| w == "ten_million") {
        synthetic_run("ten_million", 10_000_000);
    }
}

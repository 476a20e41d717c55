//! Tests on the real Mooncake trace in `../shared/traces` (not in a fresh clone:
//! run with `-- --ignored`; they fail loudly when the file is absent).

mod common;

use std::path::PathBuf;

use aisim_replay::spec::{TopologySpec, WorkloadSpec};
use aisim_replay::ReplaySpec;
use common::*;

fn mooncake() -> PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    assert!(
        p.exists(),
        "missing {}: these tests need the shared Mooncake trace next to the project",
        p.display()
    );
    p
}

fn default_replay(workers: u32) -> aisim_replay::ReplayOutput {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Trace {
            path: mooncake(),
            format: None,
            trace_block_size: None,
        },
        topology: TopologySpec::Aggregated { workers },
        ..ReplaySpec::default()
    };
    run(spec)
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_conservation() {
    let out = default_replay(8);
    let o = out.report.outcomes;
    assert_eq!((o.offered, o.completed), (3993, 3993));
    assert!(out.records.iter().all(|r| r.tokens == r.output_length));
    let requested: u64 = out.records.iter().map(|r| r.output_length as u64).sum();
    let emitted: u64 = out.records.iter().map(|r| r.tokens as u64).sum();
    assert_eq!(requested, emitted);
    let pool = &out.report.pools[0];
    assert!(pool.kv_peak_blocks <= pool.kv_capacity_blocks);
    assert!(out
        .report
        .workers
        .iter()
        .all(|w| w.kv_peak_blocks <= pool.kv_capacity_blocks));
}

#[test]
#[ignore = "needs ../shared/traces"]
fn mooncake_default_replay_figures_are_pinned() {
    // aisim's own figures for `aisim replay TRACE --workers 8` (see docs/replay.md
    // for the comparison with the reference implementation).
    let r = default_replay(8).report;
    let close = |a: Option<f64>, b: f64, what: &str| {
        let a = a.unwrap();
        assert!((a - b).abs() <= 0.01, "{what}: {a} vs pinned {b}");
    };
    close(r.latency.ttft_ms.mean, 301.52, "mean TTFT");
    close(r.latency.ttft_ms.p90, 790.51, "p90 TTFT");
    close(r.latency.ttft_ms.p99, 1451.60, "p99 TTFT");
    close(r.latency.e2e_ms.mean, 1296.67, "mean E2E");
    close(r.latency.tpot_ms.mean, 7.30, "mean TPOT");
    assert!(
        (r.cache.prefix_reuse_ratio - 0.112).abs() < 0.0005,
        "{}",
        r.cache.prefix_reuse_ratio
    );
}

//! The custom policy and timing model replay the project's fixtures.

use std::path::PathBuf;

use aisim_replay::spec::{TopologySpec, WorkloadSpec};
use aisim_replay::{ReplaySpec, Replayer};
use custom_router::{Custom, LengthSplit, LinearTiming};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

fn spec(trace: &str, workers: u32) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Trace {
            path: fixture(trace),
            format: None,
            trace_block_size: None,
        },
        topology: TopologySpec::Aggregated { workers },
        ..ReplaySpec::default()
    }
}

const CUSTOM: Custom = Custom {
    split: LengthSplit { long_tokens: 4096 },
    timing: LinearTiming {
        prefill_ms_per_token: 0.1,
        decode_ms: 5.0,
    },
};

#[test]
fn the_linear_model_times_a_lone_request_exactly() {
    // mooncake_small.jsonl: the first request (1,200 prompt tokens, 12
    // output tokens) runs alone: a 120 ms prefill pass gives its first
    // token, 11 decode passes of 5 ms the rest; the next request comes
    // 250 ms after it.
    let out = Replayer::new(spec("traces/mooncake_small.jsonl", 2), CUSTOM)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap();
    let first = out.records.iter().find(|r| r.id == 0).unwrap();
    let ms = |ns: u64| ns as f64 * 1e-6;
    assert!((ms(first.first_token_ns - first.planned_ns) - 120.0).abs() < 1e-6);
    assert!((ms(first.terminal_ns - first.planned_ns) - 175.0).abs() < 1e-6);
    let p = &out.report.policies;
    assert_eq!(
        (p.placement.as_str(), p.timing.as_str()),
        ("length_split", "linear")
    );
}

#[test]
fn long_prompts_go_to_worker_0_and_short_ones_elsewhere() {
    let out = Replayer::new(spec("demo_sessions.jsonl", 4), CUSTOM)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap();
    let o = &out.report.outcomes;
    assert!(o.offered > 0);
    assert_eq!(o.completed, o.offered, "{o:?}");
    let (long, short): (Vec<_>, Vec<_>) = out.records.iter().partition(|r| r.input_length >= 4096);
    assert!(!long.is_empty() && !short.is_empty());
    assert!(long.iter().all(|r| r.worker == 0));
    assert!(short.iter().all(|r| r.worker != 0));
    // The short requests spread over workers 1..3.
    let mut used: Vec<u32> = short.iter().map(|r| r.worker).collect();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used, vec![1, 2, 3]);
}

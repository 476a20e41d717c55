//! Helpers shared by the replay integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use aisim_core::timing::TimingSpec;
use aisim_replay::collector::RequestRecord;
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, TopologySpec, WorkloadSpec};
use aisim_replay::{ReplayOutput, ReplaySpec, Replayer};

/// A file under the workspace's `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

/// The shared Mooncake trace in `../shared/traces` (not in a fresh clone:
/// tests that read it are ignored, and fail loudly when it is absent).
pub fn mooncake() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/mooncake_synthetic_trace.jsonl");
    assert!(
        p.exists(),
        "missing {}: these tests need the shared Mooncake trace next to the project",
        p.display()
    );
    p
}

/// Writes `text` to a temporary file named `name` and returns its path.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    // A folder per content: the same name and text give the same path (runs
    // compared for determinism name their trace in the report), other text
    // another path; written whole, then renamed into place, so a test never
    // reads another's half-written file.
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (name, text).hash(&mut h);
    let dir = std::env::temp_dir().join(format!(
        "aisim-replay-tests-{}/{:016x}",
        std::process::id(),
        h.finish()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let partial = dir.join(format!("{name}.{:?}.partial", std::thread::current().id()));
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, &p).unwrap();
    p
}

/// A spec replaying `path` on `workers` workers with fixed timing.
pub fn trace_spec(path: PathBuf, workers: u32, prefill_ms: f64, decode_ms: f64) -> ReplaySpec {
    ReplaySpec {
        workload: WorkloadSpec::Trace {
            path,
            format: None,
            trace_block_size: None,
        },
        topology: TopologySpec::Aggregated { workers },
        timing: TimingSpec::Fixed {
            prefill_ms,
            decode_ms,
        },
        ..ReplaySpec::default()
    }
}

/// A synthetic workload of single-turn 10-token prompts with 1-token outputs.
pub fn small_synthetic(requests: u64, arrival: ArrivalSpec) -> SyntheticSpec {
    SyntheticSpec {
        requests,
        input: LengthSpec::Fixed { tokens: 10 },
        output: LengthSpec::Fixed { tokens: 1 },
        arrival,
        prefix_groups: 0,
        prefix_tokens: 0,
        turns: 1,
        think_ms: 0.0,
        trace_block_size: 512,
        total_cdf: None,
    }
}

pub fn run(spec: ReplaySpec) -> ReplayOutput {
    Replayer::new(spec, SpecComposition)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap()
}

/// The report as JSON without its `host` section.
pub fn json_without_host(out: &ReplayOutput) -> String {
    let mut v = serde_json::to_value(&out.report).unwrap();
    v.as_object_mut().unwrap().remove("host");
    serde_json::to_string(&v).unwrap()
}

pub fn record(out: &ReplayOutput, id: u64) -> &RequestRecord {
    out.records.iter().find(|r| r.id == id).unwrap()
}

pub const MS: u64 = 1_000_000;

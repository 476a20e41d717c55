//! Helpers shared by the replay integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use aisim_core::timing::TimingSpec;
use aisim_core::SimDuration;
use aisim_replay::collector::RequestRecord;
use aisim_replay::policy::{
    PlacementPolicy, ReplayComposition, RoundRobin, ScalingDecision, ScalingPolicy,
    ScalingSnapshot, SpecComposition,
};
use aisim_replay::report::ScalingReport;
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
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
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

/// Every offered request ended one way or another, or is still in flight.
pub fn assert_counts_add_up(out: &ReplayOutput, what: &str) {
    assert_outcomes_add_up(&out.report.outcomes, what);
}

/// Offered = completed + timed out + rejected + incomplete.
pub fn assert_outcomes_add_up(o: &aisim_replay::report::Outcomes, what: &str) {
    assert_eq!(
        o.completed + o.timed_out + o.rejected + o.incomplete,
        o.offered,
        "{what}: {o:?}"
    );
}

/// ∫ workers dt over one pool's entries of the timeline (`pool`: its name),
/// from 0 to the end.
pub fn timeline_seconds(s: &ScalingReport, pool: &str) -> f64 {
    let t: Vec<_> = s.timeline.iter().filter(|c| c.pool == pool).collect();
    t.iter()
        .enumerate()
        .map(|(i, c)| {
            let next = t.get(i + 1).map_or(s.end_s, |n| n.t_s);
            c.workers as f64 * (next - c.t_s)
        })
        .sum()
}

/// Two workers a pool, then one from the tick at 1 s on (scripted).
pub struct DrainOne;

impl ScalingPolicy for DrainOne {
    fn name(&self) -> &str {
        "drain_one"
    }
    fn first_tick(&self) -> Option<SimDuration> {
        Some(SimDuration(1_000_000_000))
    }
    fn tick(&mut self, s: &ScalingSnapshot) -> ScalingDecision {
        assert!(s.workers + s.starting <= 2);
        assert!(
            ["workers", "prefill", "decode"].contains(&s.pool),
            "{}",
            s.pool
        );
        ScalingDecision {
            target_workers: 1,
            next_tick: None,
        }
    }
}

/// `spec` replayed with `Scripted`, every record kept.
pub fn run_scripted(spec: ReplaySpec) -> ReplayOutput {
    Replayer::new(spec, Scripted)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap()
}

/// Round robin placement, `DrainOne` scaling in every pool.
pub struct Scripted;

impl ReplayComposition for Scripted {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(RoundRobin::default())
    }
    fn scaling(&self, _spec: &ReplaySpec) -> Box<dyn ScalingPolicy> {
        Box::new(DrainOne)
    }
}

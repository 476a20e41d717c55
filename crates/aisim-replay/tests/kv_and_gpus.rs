//! What a worker holds and costs: its KV capacity is a memory budget in tokens
//! whatever the block size, and its GPU count includes the profile's tensor
//! parallelism (engine.md, "KV capacity" and "Workers and GPUs").

mod common;

use aisim_core::profile::resolve_profile;
use aisim_core::timing::TimingSpec;
use aisim_core::Backend;
use aisim_replay::spec::{TopologySpec, WorkloadSpec};
use aisim_replay::{ReplayError, ReplaySpec};
use common::*;

fn demo(backend: Backend, block_size: Option<u32>) -> ReplaySpec {
    let mut spec = ReplaySpec::default();
    spec.engine.backend = backend;
    spec.engine.block_size = block_size;
    spec
}

/// Every backend holds the same KV by default (1,048,576 tokens a worker),
/// so comparing backends compares their schedulers, not their memory.
#[test]
fn the_block_size_keeps_the_token_capacity_in_the_report() {
    let tokens = 1_048_576;
    for (backend, sizes) in [
        (Backend::Vllm, [None, Some(16), Some(128)]),
        (Backend::Sglang, [None, Some(1), Some(64)]),
        (Backend::Trtllm, [None, Some(16), Some(64)]),
    ] {
        for bs in sizes {
            let out = run(demo(backend, bs));
            let pool = &out.report.pools[0];
            let b = bs.unwrap_or(backend.default_block_size()) as u64;
            assert_eq!(pool.kv_capacity_tokens, tokens, "{backend:?} {bs:?}");
            assert_eq!(pool.kv_block_size as u64, b);
            assert_eq!(pool.kv_capacity_blocks, tokens / b);
            assert_eq!(pool.kv_peak_tokens, pool.kv_peak_blocks * b);
            assert!(pool.kv_peak_blocks > 0 && pool.kv_peak_blocks <= pool.kv_capacity_blocks);
            for w in &out.report.workers {
                assert_eq!(w.kv_peak_tokens, w.kv_peak_blocks * b);
            }
        }
    }
}

#[test]
fn num_gpu_blocks_is_still_honoured_at_any_block_size() {
    let mut spec = demo(Backend::Vllm, Some(16));
    spec.engine.num_gpu_blocks = Some(1000);
    let pool = &run(spec).report.pools[0];
    assert_eq!(pool.kv_capacity_blocks, 1000);
    assert_eq!(pool.kv_capacity_tokens, 16_000);
}

fn with_profile(key: &str, workers: u32) -> ReplaySpec {
    ReplaySpec {
        topology: TopologySpec::Aggregated { workers },
        timing: TimingSpec::Iteration {
            profile: key.to_string(),
        },
        ..ReplaySpec::default()
    }
}

#[test]
fn a_profiles_tensor_parallelism_reaches_gpu_counts_and_gpu_hours() {
    let key = "h200/llama-3.1-70b/tp2";
    for (dp, per_worker) in [(1, 2), (2, 4)] {
        let mut spec = with_profile(key, 2);
        spec.engine.dp_size = dp;
        let r = run(spec).report;
        let pool = &r.pools[0];
        assert_eq!(r.spec.engine.tp_size, 2);
        assert_eq!(pool.gpus_per_worker, per_worker);
        assert_eq!(pool.gpus, 2 * per_worker as u64);
        let hours = (2 * per_worker) as f64 * r.duration_s / 3600.0;
        assert_eq!(pool.gpu_hours, hours);
        assert!(pool.gpu_hours > 0.0);
    }
    // Giving the profile's tp again is fine; another one is an error.
    let mut same = with_profile(key, 1);
    same.engine.tp_size = 2;
    assert_eq!(run(same).report.pools[0].gpus_per_worker, 2);
    let mut other = with_profile(key, 1);
    other.engine.tp_size = 4;
    let e = other.apply_profile().unwrap_err();
    assert!(matches!(&e, ReplayError::Spec { field, .. } if field == "engine.tp_size"));
    assert!(e.to_string().contains("tp 2"), "{e}");
}

#[test]
fn a_profiles_kv_capacity_reaches_spec_files_in_tokens() {
    let key = "h100/llama-3.1-8b";
    let p = resolve_profile(key).unwrap();
    let tokens = p.total_kv_blks() * p.blk_size() as u64;
    for bs in [None, Some(16), Some(32)] {
        let mut spec = with_profile(key, 1);
        spec.engine.block_size = bs;
        // What `--print-spec` writes and `--spec` reads back runs the same.
        let back: ReplaySpec = serde_json::from_str(&spec.to_json()).unwrap();
        let pool = &run(back).report.pools[0];
        let b = bs.unwrap_or(64) as u64;
        assert_eq!(pool.kv_capacity_blocks, tokens / b, "{bs:?}");
        assert_eq!(pool.kv_capacity_tokens, tokens / b * b);
    }
}

#[test]
fn a_profile_without_room_for_kv_is_an_error_naming_it() {
    let mut spec = with_profile("b60/llama-3.1-70b", 1);
    let e = spec.apply_profile().unwrap_err();
    assert!(matches!(&e, ReplayError::Spec { field, .. } if field == "timing.profile"));
    assert!(e.to_string().contains("no GPU memory for KV"), "{e}");
    // An explicit block count is the user's word for the memory.
    let mut spec = with_profile("b60/llama-3.1-70b", 1);
    spec.engine.num_gpu_blocks = Some(100);
    spec.apply_profile().unwrap();
    assert_eq!(spec.engine.kv_budget_tokens, None);
}

/// A trace in 16-token trace blocks: four prefix groups of 0 to 6 shared blocks,
/// each prompt ending in 1 to 20 blocks of its own (so no prompt is wholly
/// cached), outputs of 1 to 60 tokens, arrivals 0 to 40 ms apart.
fn whole_16_token_prefixes() -> std::path::PathBuf {
    let mut x: u64 = 0x5eed;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let (mut t, mut rows) = (0u64, String::new());
    for i in 0..120u64 {
        let group = next(4);
        let shared = next(7);
        let own = 1 + next(20);
        let mut ids: Vec<u64> = (0..shared).map(|b| group * 100 + b).collect();
        ids.extend((0..own).map(|b| 1_000_000 + i * 100 + b));
        let input = ids.len() * 16;
        let output = 1 + next(60);
        rows += &format!(
            "{{\"timestamp\": {t}, \"input_length\": {input}, \"output_length\": {output}, \"hash_ids\": {ids:?}}}\n"
        );
        t += next(40);
    }
    temp_file("whole16.jsonl", &rows)
}

#[test]
fn sglang_page_1_and_page_16_agree_when_prefixes_are_whole_16_token_blocks() {
    let run_at = |page: u32| {
        let mut spec = ReplaySpec {
            workload: WorkloadSpec::Trace {
                path: whole_16_token_prefixes(),
                format: None,
                trace_block_size: Some(16),
            },
            topology: TopologySpec::Aggregated { workers: 2 },
            ..ReplaySpec::default()
        };
        spec.engine.backend = Backend::Sglang;
        spec.engine.block_size = Some(page);
        spec.engine.kv_budget_tokens = Some(1 << 20);
        run(spec)
    };
    let (one, sixteen) = (run_at(1), run_at(16));
    assert_eq!(one.report.pools[0].kv_capacity_tokens, 1 << 20);
    assert_eq!(sixteen.report.pools[0].kv_capacity_tokens, 1 << 20);
    let records = |o: &aisim_replay::ReplayOutput| serde_json::to_string(&o.records).unwrap();
    assert_eq!(records(&one), records(&sixteen));
    let latency =
        |o: &aisim_replay::ReplayOutput| serde_json::to_string(&o.report.latency).unwrap();
    assert_eq!(latency(&one), latency(&sixteen));
    assert_eq!(one.report.outcomes.completed, 120);
    // The prefixes really were shared.
    assert!(one.records.iter().filter(|r| r.reused_first > 0).count() > 20);
}

/// A profile that knows its model caps the context at the model's maximum
/// (llama-3.1-8b: 131,072 tokens) unless `max_model_len` is given: a longer
/// request is rejected and counted, as under `--max-model-len`. A manual
/// profile knows no model and caps nothing.
#[test]
fn a_profiles_model_caps_the_context_unless_max_model_len_is_given() {
    let rows = [
        (0, 1000, 10),
        (100, 131_000, 72),
        (200, 131_000, 73),
        (300, 190_000, 10),
    ];
    let text: String = rows
        .iter()
        .map(|(t, i, o)| {
            format!("{{\"timestamp\": {t}, \"input_length\": {i}, \"output_length\": {o}}}\n")
        })
        .collect();
    let trace = temp_file("long-contexts.jsonl", &text);
    let spec = |key: &str, max_model_len: Option<u32>| {
        let mut s = with_profile(key, 1);
        s.workload = WorkloadSpec::Trace {
            path: trace.clone(),
            format: None,
            trace_block_size: None,
        };
        s.engine.max_model_len = max_model_len;
        s
    };
    let r = run(spec("h100/llama-3.1-8b", None)).report;
    assert_eq!(r.spec.engine.max_model_len, Some(131_072));
    // 131,000 + 72 fits exactly; 131,000 + 73 and 190,010 do not.
    assert_eq!((r.outcomes.completed, r.outcomes.rejected), (2, 2));
    assert_eq!(r.rejections["longer_than_max_model_len"], 2);
    // Given, it wins.
    let r = run(spec("h100/llama-3.1-8b", Some(200_000))).report;
    assert_eq!(r.spec.engine.max_model_len, Some(200_000));
    assert_eq!(r.outcomes.rejected, 0);
    // A manual profile has no model, so no maximum context.
    let r = run(spec("h100", None)).report;
    assert_eq!(r.spec.engine.max_model_len, None);
    assert_eq!(r.outcomes.rejected, 0);
}

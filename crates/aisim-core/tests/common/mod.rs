//! Helpers for driving an engine pass by pass in tests.

#![allow(dead_code)]

use std::sync::Arc;

use aisim_core::timing::{FixedTiming, TimingModel};
use aisim_core::{
    Backend, CapacityPolicy, Engine, EngineConfig, EngineEvent, PassOutcome, PreemptionMode,
    SchedulePolicy, SimTime,
};
use rand_core::RngCore;
use rand_pcg::Pcg64;

pub fn pick<T: Copy>(rng: &mut Pcg64, xs: &[T]) -> T {
    xs[(rng.next_u64() % xs.len() as u64) as usize]
}

pub fn below(rng: &mut Pcg64, n: u64) -> u64 {
    rng.next_u64() % n
}

/// A configuration drawn from small and large pools, budgets and seat counts,
/// every backend, preemption mode and capacity policy.
pub fn random_config(rng: &mut Pcg64) -> EngineConfig {
    EngineConfig {
        backend: pick(rng, &[Backend::Vllm, Backend::Sglang, Backend::Trtllm]),
        block_size: Some(pick(rng, &[1, 16, 32, 64])),
        num_gpu_blocks: Some(pick(rng, &[40, 120, 400, 5000])),
        max_num_seqs: pick(rng, &[1, 4, 64]),
        max_num_batched_tokens: pick(rng, &[256, 2048, 8192]),
        enable_prefix_caching: below(rng, 4) != 0,
        enable_chunked_prefill: below(rng, 4) != 0,
        preemption: pick(rng, &[PreemptionMode::Lifo, PreemptionMode::Fifo]),
        dp_size: pick(rng, &[1, 2]),
        schedule_policy: pick(rng, &[SchedulePolicy::Fcfs, SchedulePolicy::Lpm]),
        max_prefill_tokens: pick(rng, &[512, 16384]),
        chunked_prefill_size: pick(rng, &[256, 8192]),
        capacity_policy: pick(
            rng,
            &[
                CapacityPolicy::GuaranteedNoEvict,
                CapacityPolicy::MaxUtilization,
            ],
        ),
        ..Default::default()
    }
}

/// The events of one pass, with its start and end.
#[derive(Debug, Clone)]
pub struct Pass {
    pub start: SimTime,
    pub end: SimTime,
    pub events: Vec<EngineEvent>,
}

pub fn fixed(prefill_ms: f64, decode_ms: f64) -> Arc<dyn TimingModel> {
    Arc::new(FixedTiming::new(prefill_ms, decode_ms).unwrap())
}

pub fn engine(cfg: EngineConfig) -> Engine {
    Engine::new(cfg, fixed(10.0, 5.0)).unwrap()
}

/// Runs one pass; `None` when the engine had nothing to do.
pub fn step(e: &mut Engine, now: &mut SimTime) -> Option<Pass> {
    let d = e.start_pass(*now).unwrap()?;
    let start = *now;
    *now = now.after(d);
    let mut out = PassOutcome::default();
    e.finish_pass(&mut out);
    for r in 0..e.dp_size() {
        e.pool(r).check_invariants().unwrap();
        assert!(e.pool(r).in_use_blocks() <= e.pool(r).capacity());
    }
    Some(Pass {
        start,
        end: *now,
        events: out.events,
    })
}

/// Runs until the engine is idle.
pub fn drain(e: &mut Engine, now: &mut SimTime) -> Vec<Pass> {
    let mut passes = Vec::new();
    while let Some(p) = step(e, now) {
        passes.push(p);
        assert!(passes.len() < 1_000_000, "engine does not make progress");
    }
    assert!(!e.has_work(), "engine idle with work left");
    passes
}

pub fn tokens_of(passes: &[Pass], id: u64) -> usize {
    passes
        .iter()
        .flat_map(|p| &p.events)
        .filter(|e| matches!(e, EngineEvent::Token { id: i, .. } if i.0 == id))
        .count()
}

pub fn preempted(passes: &[Pass]) -> Vec<u64> {
    passes
        .iter()
        .flat_map(|p| &p.events)
        .filter_map(|e| match e {
            EngineEvent::Preempted { id } => Some(id.0),
            _ => None,
        })
        .collect()
}

pub fn completed(passes: &[Pass]) -> Vec<u64> {
    passes
        .iter()
        .flat_map(|p| &p.events)
        .filter_map(|e| match e {
            EngineEvent::Completed { id } => Some(id.0),
            _ => None,
        })
        .collect()
}

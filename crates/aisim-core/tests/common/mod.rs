//! Helpers for driving an engine pass by pass in tests.

#![allow(dead_code)]

use std::sync::Arc;

use aisim_core::timing::{FixedTiming, TimingModel};
use aisim_core::{Engine, EngineConfig, EngineEvent, PassOutcome, SimTime};

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

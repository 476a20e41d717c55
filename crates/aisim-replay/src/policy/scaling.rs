//! `ScalingPolicy`: how many workers, decided at ticks on a settled snapshot.

use aisim_core::{SimDuration, SimTime};

/// What a scaling policy sees at a tick.
#[derive(Debug, Clone, Default)]
pub struct ScalingSnapshot {
    /// Tick time.
    pub now: SimTime,
    /// Workers accepting requests.
    pub workers: u32,
    /// Running requests per worker.
    pub running: Vec<u32>,
    /// Waiting requests per worker.
    pub waiting: Vec<u32>,
}

/// A policy's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalingDecision {
    /// Workers wanted.
    pub target_workers: u32,
    /// When to be asked again (`None`: never).
    pub next_tick: Option<SimDuration>,
}

/// Decides worker counts over time.
pub trait ScalingPolicy {
    /// Name for reports.
    fn name(&self) -> &str;
    /// First tick after the start, if any.
    fn first_tick(&self) -> Option<SimDuration>;
    /// Decision at a tick.
    fn tick(&mut self, snapshot: &ScalingSnapshot) -> ScalingDecision;
}

/// A fixed fleet: never ticks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoScaling;

impl ScalingPolicy for NoScaling {
    fn name(&self) -> &str {
        "none"
    }
    fn first_tick(&self) -> Option<SimDuration> {
        None
    }
    fn tick(&mut self, snapshot: &ScalingSnapshot) -> ScalingDecision {
        ScalingDecision {
            target_workers: snapshot.workers,
            next_tick: None,
        }
    }
}

//! `ScalingPolicy`: how many workers, decided at ticks on a settled snapshot.

use aisim_core::{SimDuration, SimTime};

use crate::spec::{LatencyTarget, PoolPlan};

/// What a scaling policy sees at a tick.
#[derive(Debug, Clone, Default)]
pub struct ScalingSnapshot {
    /// Tick time.
    pub now: SimTime,
    /// The pool (`workers` aggregated; `prefill` or `decode`).
    pub pool: &'static str,
    /// Workers accepting requests.
    pub workers: u32,
    /// Running requests per worker.
    pub running: Vec<u32>,
    /// Waiting requests per worker.
    pub waiting: Vec<u32>,
    /// Workers started but not yet accepting (their startup delay runs).
    pub starting: u32,
    /// Workers draining (no new request; they stop once empty).
    pub draining: u32,
    /// p90 TTFT of the requests whose first token came since the last tick,
    /// ms (`None`: none did).
    pub recent_ttft_p90_ms: Option<f64>,
    /// p90 TPOT of the requests completed since the last tick, ms (`None`:
    /// none with two tokens or more did).
    pub recent_tpot_p90_ms: Option<f64>,
}

/// A policy's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalingDecision {
    /// Workers wanted, accepting or starting (the runtime keeps it within
    /// 1 and the pool's slots).
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

/// The load-based planner of one pool: at each tick, one worker more when
/// its recent p90 latency (TTFT, or TPOT for a decode pool) or the waiting
/// requests per accepting worker exceed their targets; one fewer when
/// nothing waits and the recent p90 latency (if any request gave one) is at
/// most half its target, for `COOL_TICKS` ticks in a row; always within
/// `min..=max`.
#[derive(Debug, Clone)]
pub struct LoadPlanner {
    min: u32,
    max: u32,
    tick: SimDuration,
    target: LatencyTarget,
    queue_depth: f64,
    cool: u32,
}

/// Ticks in a row the load must stay low before a worker is removed.
pub const COOL_TICKS: u32 = 2;

impl LoadPlanner {
    /// A planner between `min` and `max` workers ticking every `tick`, with
    /// targets on the recent p90 TTFT (ms) and the queue depth per worker.
    pub fn new(min: u32, max: u32, tick: SimDuration, ttft_ms: f64, queue_depth: f64) -> Self {
        LoadPlanner {
            min,
            max,
            tick,
            target: LatencyTarget::Ttft(ttft_ms),
            queue_depth,
            cool: 0,
        }
    }

    /// The planner a spec's pool plan describes.
    pub fn for_plan(plan: &PoolPlan) -> Self {
        LoadPlanner {
            min: plan.min_workers,
            max: plan.max_workers,
            tick: crate::workload::ms_to_duration(plan.tick_s * 1e3),
            target: plan.target,
            queue_depth: plan.queue_depth,
            cool: 0,
        }
    }
}

impl ScalingPolicy for LoadPlanner {
    fn name(&self) -> &str {
        "load"
    }
    fn first_tick(&self) -> Option<SimDuration> {
        Some(self.tick)
    }
    fn tick(&mut self, s: &ScalingSnapshot) -> ScalingDecision {
        let n = s.workers + s.starting;
        let waiting: u64 = s.waiting.iter().map(|&w| u64::from(w)).sum();
        let depth = waiting as f64 / f64::from(s.workers.max(1));
        let (recent, target) = match self.target {
            LatencyTarget::Ttft(ms) => (s.recent_ttft_p90_ms, ms),
            LatencyTarget::Tpot(ms) => (s.recent_tpot_p90_ms, ms),
        };
        let hot = depth > self.queue_depth || recent.is_some_and(|t| t > target);
        let cold = waiting == 0 && recent.is_none_or(|t| t <= target / 2.0);
        let target = if hot {
            self.cool = 0;
            n + 1
        } else if cold {
            self.cool += 1;
            if self.cool >= COOL_TICKS {
                self.cool = 0;
                n.saturating_sub(1)
            } else {
                n
            }
        } else {
            self.cool = 0;
            n
        };
        ScalingDecision {
            target_workers: target.clamp(self.min, self.max),
            next_tick: Some(self.tick),
        }
    }
}

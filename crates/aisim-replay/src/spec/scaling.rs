//! The scaling part of a spec: the policy, the load planner's parameters
//! and the shape of each scaled pool's plan: its bounds, its latency target
//! and the spec fields that set them. Resolving the plans (`ScalingSpec::plans`)
//! reads the whole spec's topology and SLA, so that lives in `spec.rs`.

use serde::{Deserialize, Serialize};

/// Built-in scaling policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ScalingKind {
    /// A fixed number of workers.
    #[default]
    None,
    /// The load-based planner (`load`): adds a worker to a pool when its
    /// latency signal (recent p90 TTFT; a decode pool's recent p90 TPOT) or
    /// its queue depth per worker exceeds its target, removes one when the
    /// load stays low, within the pool's bounds.
    Load,
}

impl ScalingKind {
    /// The policy's name (as the spec and the CLI spell it).
    pub fn name(self) -> &'static str {
        match self {
            ScalingKind::None => "none",
            ScalingKind::Load => "load",
        }
    }
}

/// Scaling policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ScalingSpec {
    /// Which policy.
    pub policy: ScalingKind,
    /// The load-based planner's parameters (with `policy: load` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadPlannerSpec>,
}

/// The load-based planner's parameters. Each pool's worker count in the
/// topology is its count at the start; it must lie within its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadPlannerSpec {
    /// Fewest workers of a pool (accepting or starting), at least 1; every
    /// pool's unless it has its own (`prefill`, `decode`).
    pub min_workers: u32,
    /// Most workers of a pool (accepting or starting); `None`: the pool's
    /// count at the start. Every pool's unless it has its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_workers: Option<u32>,
    /// Time between ticks, s (the first tick is one interval after the start).
    pub tick_s: f64,
    /// Time from a scale-up decision until the new worker accepts requests, s.
    pub startup_s: f64,
    /// Target for the p90 TTFT of the requests whose first token came since
    /// the last tick, ms (`None`: `sla.ttft_ms`, or 1,000 without it). The
    /// aggregated pool's and the prefill pool's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// Disaggregated: target for the p90 TPOT of the requests completed
    /// since the last tick, ms (`None`: `sla.tpot_ms`, or 100 without it).
    /// The decode pool's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// Target for the waiting requests per accepting worker at a tick.
    pub queue_depth: f64,
    /// Disaggregated: the prefill pool's own bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill: Option<PoolBoundsSpec>,
    /// Disaggregated: the decode pool's own bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode: Option<PoolBoundsSpec>,
}

impl Default for LoadPlannerSpec {
    fn default() -> Self {
        LoadPlannerSpec {
            min_workers: 1,
            max_workers: None,
            tick_s: 10.0,
            startup_s: 30.0,
            ttft_ms: None,
            tpot_ms: None,
            queue_depth: 4.0,
            prefill: None,
            decode: None,
        }
    }
}

/// One disaggregated pool's own planner bounds; each absent one is the
/// planner's (`min_workers`, `max_workers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct PoolBoundsSpec {
    /// Fewest workers of the pool (accepting or starting), at least 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_workers: Option<u32>,
    /// Most workers of the pool (accepting or starting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_workers: Option<u32>,
}

/// The TPOT target of a decode pool without `tpot_ms` or `sla.tpot_ms`, ms:
/// 10 tokens a second, about reading speed, which serving SLOs sit under.
pub const DEFAULT_TPOT_TARGET_MS: f64 = 100.0;
/// The TTFT target without `ttft_ms` or `sla.ttft_ms`, ms.
pub const DEFAULT_TTFT_TARGET_MS: f64 = 1000.0;

/// The latency a pool's planner watches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LatencyTarget {
    /// Recent p90 TTFT at most this, ms (aggregated and prefill pools).
    Ttft(f64),
    /// Recent p90 TPOT at most this, ms (decode pool).
    Tpot(f64),
}

impl LatencyTarget {
    /// The target, ms.
    pub fn ms(self) -> f64 {
        match self {
            LatencyTarget::Ttft(ms) | LatencyTarget::Tpot(ms) => ms,
        }
    }

    /// The metric's name (`TTFT`, `TPOT`).
    pub fn metric(self) -> &'static str {
        match self {
            LatencyTarget::Ttft(_) => "TTFT",
            LatencyTarget::Tpot(_) => "TPOT",
        }
    }

    /// The spec field that sets it, for errors.
    pub(super) fn field(self) -> &'static str {
        match self {
            LatencyTarget::Ttft(_) => "scaling.load.ttft_ms",
            LatencyTarget::Tpot(_) => "scaling.load.tpot_ms",
        }
    }
}

/// One scaled pool's planner, the defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolPlan {
    /// The pool as the report names it (`workers`, `prefill`, `decode`).
    pub pool: &'static str,
    /// Workers at the start (the topology's count).
    pub start: u32,
    /// Fewest workers.
    pub min_workers: u32,
    /// Most workers.
    pub max_workers: u32,
    /// The spec fields that set the bounds (the pool's own when given).
    pub min_field: &'static str,
    /// See `min_field`.
    pub max_field: &'static str,
    /// Time between ticks, s.
    pub tick_s: f64,
    /// Startup delay, s.
    pub startup_s: f64,
    /// The latency it watches.
    pub target: LatencyTarget,
    /// Waiting requests per accepting worker it tolerates.
    pub queue_depth: f64,
}

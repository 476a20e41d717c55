//! The scaling part of a spec: the policy, the load planner's parameters
//! and, resolved from them, each scaled pool's plan (`ScalingSpec::plans`):
//! its bounds, its latency target and the spec fields that set them.

use serde::{Deserialize, Serialize};

use super::{check_non_negative, check_positive, ReplaySpec, TopologySpec};
use crate::error::ReplayError;

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

    fn field(self) -> &'static str {
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

impl ScalingSpec {
    /// Each scaled pool's planner, when the policy is `load` (empty
    /// otherwise): the aggregated pool, or the prefill then the decode pool.
    pub fn plans(&self, spec: &ReplaySpec) -> Vec<PoolPlan> {
        if self.policy != ScalingKind::Load {
            return Vec::new();
        }
        let p = self.load.unwrap_or_default();
        let ttft = LatencyTarget::Ttft(
            p.ttft_ms
                .or(spec.sla.ttft_ms)
                .unwrap_or(DEFAULT_TTFT_TARGET_MS),
        );
        let plan =
            |pool, start, bounds: Option<PoolBoundsSpec>, fields: [&'static str; 2], target| {
                let own = bounds.unwrap_or_default();
                let (min_field, max_field) = (
                    if own.min_workers.is_some() {
                        fields[0]
                    } else {
                        "scaling.load.min_workers"
                    },
                    if own.max_workers.is_some() {
                        fields[1]
                    } else {
                        "scaling.load.max_workers"
                    },
                );
                PoolPlan {
                    pool,
                    start,
                    min_workers: own.min_workers.unwrap_or(p.min_workers),
                    max_workers: own.max_workers.or(p.max_workers).unwrap_or(start),
                    min_field,
                    max_field,
                    tick_s: p.tick_s,
                    startup_s: p.startup_s,
                    target,
                    queue_depth: p.queue_depth,
                }
            };
        match &spec.topology {
            TopologySpec::Aggregated { workers } => {
                vec![plan("workers", *workers, None, ["", ""], ttft)]
            }
            TopologySpec::Disaggregated {
                prefill, decode, ..
            } => {
                let tpot = LatencyTarget::Tpot(
                    p.tpot_ms
                        .or(spec.sla.tpot_ms)
                        .unwrap_or(DEFAULT_TPOT_TARGET_MS),
                );
                vec![
                    plan(
                        "prefill",
                        prefill.workers,
                        p.prefill,
                        [
                            "scaling.load.prefill.min_workers",
                            "scaling.load.prefill.max_workers",
                        ],
                        ttft,
                    ),
                    plan(
                        "decode",
                        decode.workers,
                        p.decode,
                        [
                            "scaling.load.decode.min_workers",
                            "scaling.load.decode.max_workers",
                        ],
                        tpot,
                    ),
                ]
            }
        }
    }

    pub(super) fn validate(&self, spec: &ReplaySpec) -> Result<(), ReplayError> {
        if self.policy == ScalingKind::None {
            if self.load.is_some() {
                return Err(ReplayError::spec(
                    "scaling.load",
                    "has no effect with scaling policy none: set policy to load",
                ));
            }
            return Ok(());
        }
        let p = self.load.unwrap_or_default();
        if let TopologySpec::Aggregated { .. } = spec.topology {
            let disagg_only = [
                ("scaling.load.tpot_ms", p.tpot_ms.is_some()),
                ("scaling.load.prefill", p.prefill.is_some()),
                ("scaling.load.decode", p.decode.is_some()),
            ];
            if let Some((field, _)) = disagg_only.iter().find(|(_, given)| *given) {
                return Err(ReplayError::spec(
                    *field,
                    "has no effect on an aggregated topology: it sets a disaggregated pool's planner",
                ));
            }
        }
        for plan in self.plans(spec) {
            check_bounds(
                &plan,
                matches!(spec.topology, TopologySpec::Aggregated { .. }),
            )?;
            check_positive(plan.target.field(), plan.target.ms())?;
        }
        check_positive("scaling.load.tick_s", p.tick_s)?;
        check_non_negative("scaling.load.startup_s", p.startup_s)?;
        check_positive("scaling.load.queue_depth", p.queue_depth)?;
        Ok(())
    }
}

/// A pool's bounds against each other and its count at the start; each
/// refusal names its own field, so the message leads with the flag that set it.
fn check_bounds(plan: &PoolPlan, aggregated: bool) -> Result<(), ReplayError> {
    let (n, min, max) = (plan.start, plan.min_workers, plan.max_workers);
    if min == 0 {
        return Err(ReplayError::spec(plan.min_field, "0: at least 1 worker"));
    }
    let starts = if aggregated {
        "the topology starts with".to_string()
    } else {
        format!("the {} pool starts with", plan.pool)
    };
    // The start lies within the bounds, so they are in order too: `n < min`
    // first, as `max` defaults to the start.
    if n < min {
        return Err(ReplayError::spec(
            plan.min_field,
            format!("{min} is above the {n} workers {starts}"),
        ));
    }
    if n > max {
        return Err(ReplayError::spec(
            plan.max_field,
            format!("{max} is below the {n} workers {starts}"),
        ));
    }
    // The scaler's and the workers' slot tables are sized from `max`.
    super::check_worker_cap(plan.max_field, max)
}

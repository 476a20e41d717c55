//! `ReplaySpec`: everything a run depends on, in one serializable, versioned,
//! validated value. The CLI builds one from flags, prints it with `--print-spec`
//! and runs one from a file with `--spec`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use aisim_core::profile::resolve_profile;
use aisim_core::timing::TimingSpec;
use aisim_core::EngineConfig;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ReplayError;
use crate::frontend::FrontendSpec;
use crate::trace::{float, TraceFormat};
use crate::workload::clock::{checked_ms, CLOCK_RANGE};
use crate::SCHEMA_VERSION;

mod scaling;
pub use scaling::{
    LatencyTarget, LoadPlannerSpec, PoolBoundsSpec, PoolPlan, ScalingKind, ScalingSpec,
};
use scaling::{DEFAULT_TPOT_TARGET_MS, DEFAULT_TTFT_TARGET_MS};

/// A complete, reproducible description of a replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// Schema version; must equal [`SCHEMA_VERSION`].
    pub version: u32,
    /// Seed of every random choice (router, synthetic workload).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Where requests come from.
    pub workload: WorkloadSpec,
    /// How requests are admitted into the system.
    #[serde(default)]
    pub admission: AdmissionSpec,
    /// When a session's next turn is dispatched.
    #[serde(default)]
    pub dispatch: DispatchMode,
    /// Workers and their arrangement.
    #[serde(default)]
    pub topology: TopologySpec,
    /// Engine limits of every worker.
    #[serde(default)]
    pub engine: EngineConfig,
    /// Pass timing.
    #[serde(default)]
    pub timing: TimingSpec,
    /// Placement policy.
    #[serde(default)]
    pub router: RouterSpec,
    /// Scaling policy.
    #[serde(default)]
    pub scaling: ScalingSpec,
    /// What is measured and when the run stops.
    #[serde(default)]
    pub discipline: DisciplineSpec,
    /// Service-level thresholds for goodput.
    #[serde(default)]
    pub sla: SlaSpec,
    /// Where requests reach the engine from, and the time they spend
    /// outside it (absent: the engine in process, none).
    #[serde(default, skip_serializing_if = "FrontendSpec::is_in_process")]
    pub frontend: FrontendSpec,
}

fn default_seed() -> u64 {
    42
}

impl Default for ReplaySpec {
    fn default() -> Self {
        ReplaySpec {
            version: SCHEMA_VERSION,
            seed: default_seed(),
            workload: WorkloadSpec::Demo,
            admission: AdmissionSpec::default(),
            dispatch: DispatchMode::default(),
            topology: TopologySpec::default(),
            engine: EngineConfig::default(),
            timing: TimingSpec::default(),
            router: RouterSpec::default(),
            scaling: ScalingSpec::default(),
            discipline: DisciplineSpec::default(),
            sla: SlaSpec::default(),
            frontend: FrontendSpec::default(),
        }
    }
}

/// Where requests come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadSpec {
    /// The built-in multi-turn demo trace (`fixtures/demo_sessions.jsonl`).
    Demo,
    /// A trace file.
    Trace {
        /// Path of the file.
        path: PathBuf,
        /// Format; detected from the extension and first line when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<TraceFormat>,
        /// Tokens per trace block; the format's default when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_block_size: Option<u32>,
    },
    /// Requests generated on the fly.
    Synthetic(SyntheticSpec),
}

/// A generated workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSpec {
    /// Sessions (first turns) to generate.
    pub requests: u64,
    /// Prompt length of a first turn (later turns add this much new input).
    pub input: LengthSpec,
    /// Output length.
    pub output: LengthSpec,
    /// Arrival process of first turns.
    pub arrival: ArrivalSpec,
    /// Number of shared-prefix groups (0: no sharing).
    #[serde(default)]
    pub prefix_groups: u32,
    /// Tokens of the shared prefix of each group.
    #[serde(default)]
    pub prefix_tokens: u32,
    /// Turns per session (1: single-turn).
    #[serde(default = "one")]
    pub turns: u32,
    /// Think time between turns, milliseconds.
    #[serde(default)]
    pub think_ms: f64,
    /// Tokens per hash id in the generated prefix identity.
    #[serde(default = "default_block")]
    pub trace_block_size: u32,
    /// Draw each first turn's total length from this CDF instead (split 80 %
    /// input, 20 % output, as fleet planning does); `input` and `output` are
    /// then ignored for first turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cdf: Option<TotalLengthCdf>,
}

impl Default for SyntheticSpec {
    /// 1,000 single-turn requests of 1,024 prompt and 128 output tokens,
    /// Poisson at 10 per second, no shared prefixes.
    fn default() -> Self {
        SyntheticSpec {
            requests: 1000,
            input: LengthSpec::Fixed { tokens: 1024 },
            output: LengthSpec::Fixed { tokens: 128 },
            arrival: ArrivalSpec::Poisson { rate: 10.0 },
            prefix_groups: 0,
            prefix_tokens: 0,
            turns: one(),
            think_ms: 0.0,
            trace_block_size: default_block(),
            total_cdf: None,
        }
    }
}

/// A CDF of total tokens per request: points `(t, F)` from (0, 0), lengths
/// uniform within an interval, clamped to `min_tokens ..= max_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TotalLengthCdf {
    /// Points, strictly increasing in `t`, non-decreasing `F`, the last 1.
    pub points: Vec<(u64, f64)>,
    /// Smallest total drawn.
    pub min_tokens: u64,
    /// Largest total drawn.
    pub max_tokens: u64,
    /// A trace's `(input, output)` pairs: when given, each first turn is one
    /// of them drawn uniformly (the points and the 80/20 split unused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<Vec<(u32, u32)>>,
}

fn one() -> u32 {
    1
}
fn default_block() -> u32 {
    512
}

/// A length distribution (tokens, at least 1 after rounding; outputs may be 0
/// only with `fixed`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum LengthSpec {
    /// Always `tokens`.
    Fixed {
        /// Tokens.
        tokens: u32,
    },
    /// Uniform over the integers `min..=max`.
    Uniform {
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// Normal, rounded, at least 1.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
    },
}

/// An arrival process.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "process", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalSpec {
    /// Evenly spaced at `rate` per second.
    Constant {
        /// Requests per second.
        rate: f64,
    },
    /// Exponential gaps at `rate` per second.
    Poisson {
        /// Requests per second.
        rate: f64,
    },
    /// Gamma gaps with shape `burstiness` (1 = Poisson, below 1 burstier; the gap
    /// coefficient of variation is `1/sqrt(burstiness)`), mean `1/rate`.
    Gamma {
        /// Requests per second.
        rate: f64,
        /// Gamma shape.
        burstiness: f64,
    },
}

impl ArrivalSpec {
    /// Requests per second, whatever the process.
    pub fn rate(&self) -> f64 {
        let (ArrivalSpec::Constant { rate }
        | ArrivalSpec::Poisson { rate }
        | ArrivalSpec::Gamma { rate, .. }) = self;
        *rate
    }

    /// The rate, to set it and keep the process.
    pub fn rate_mut(&mut self) -> &mut f64 {
        let (ArrivalSpec::Constant { rate }
        | ArrivalSpec::Poisson { rate }
        | ArrivalSpec::Gamma { rate, .. }) = self;
        rate
    }
}

/// Trace mode (default) or concurrency mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdmissionSpec {
    /// Trace timestamps and think times are divided by this.
    pub speedup: f64,
    /// Concurrency mode: keep this many requests (sessions) in flight, ignoring
    /// trace spacing; arrivals are stamped at admission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
}

impl Default for AdmissionSpec {
    fn default() -> Self {
        AdmissionSpec {
            speedup: 1.0,
            concurrency: None,
        }
    }
}

/// When a session's next turn is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum DispatchMode {
    /// At `max(previous turn done, its trace timestamp)`.
    Tracets,
    /// At previous turn done + the row's think time (falling back to the trace gap).
    #[default]
    Thinktime,
    /// At previous turn done + this many milliseconds.
    Fixed(f64),
}

impl fmt::Display for DispatchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchMode::Tracets => f.write_str("tracets"),
            DispatchMode::Thinktime => f.write_str("thinktime"),
            DispatchMode::Fixed(ms) => write!(f, "fixed:{ms}"),
        }
    }
}

impl FromStr for DispatchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tracets" => Ok(DispatchMode::Tracets),
            "thinktime" => Ok(DispatchMode::Thinktime),
            _ => match s.strip_prefix("fixed:").map(str::parse::<f64>) {
                Some(Ok(ms)) if ms.is_finite() && ms >= 0.0 => Ok(DispatchMode::Fixed(ms)),
                _ => Err(format!(
                    "`{s}` is not a dispatch mode: use tracets, thinktime or fixed:MS (MS ≥ 0)"
                )),
            },
        }
    }
}

impl Serialize for DispatchMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DispatchMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Workers and their arrangement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologySpec {
    /// N identical workers.
    Aggregated {
        /// Worker count.
        workers: u32,
    },
    /// A prefill pool and a decode pool: a request's prompt is computed on a
    /// prefill worker, its KV sent to a decode worker, which decodes it.
    Disaggregated {
        /// The prefill pool.
        prefill: PoolSpec,
        /// The decode pool.
        decode: PoolSpec,
        /// How the prompt's KV moves between them.
        #[serde(default)]
        kv_transfer: KvTransferSpec,
    },
}

/// One pool of a disaggregated topology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    /// Worker count.
    pub workers: u32,
    /// The pool's engine; the spec's `engine` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<Box<EngineConfig>>,
    /// The pool's pass timing (its GPUs); the spec's `timing` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Box<TimingSpec>>,
}

impl PoolSpec {
    /// `workers` workers on the spec's engine and timing.
    pub fn new(workers: u32) -> PoolSpec {
        PoolSpec {
            workers,
            engine: None,
            timing: None,
        }
    }
}

/// One pool as a spec describes it (`ReplaySpec::pools`).
#[derive(Debug, Clone, Copy)]
pub struct PoolRef<'a> {
    /// Its spec field (`topology`, `topology.prefill`, `topology.decode`).
    pub field: &'static str,
    /// Workers.
    pub workers: u32,
    /// Its engine.
    pub engine: &'a EngineConfig,
    /// Whether the engine is the pool's own (else the spec's `engine`).
    pub own_engine: bool,
    /// Its pass timing.
    pub timing: &'a TimingSpec,
    /// Whether the timing is the pool's own (else the spec's `timing`).
    pub own_timing: bool,
}

impl PoolRef<'_> {
    /// The spec field of its timing (`timing`, or the pool's own).
    pub fn timing_field(&self) -> String {
        if self.own_timing {
            format!("{}.timing", self.field)
        } else {
            "timing".to_string()
        }
    }

    /// The spec field of one of its engine's settings (`setting` as
    /// `EngineConfig::validate` names it).
    pub fn engine_field(&self, setting: &str) -> String {
        if self.own_engine {
            format!("{}.engine.{setting}", self.field)
        } else {
            format!("engine.{setting}")
        }
    }
}

/// What a KV transfer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum KvTransferMode {
    /// The whole prompt.
    #[default]
    FullPrompt,
    /// Only the prompt tokens the decode worker does not hold in its prefix
    /// cache when the transfer starts.
    DestinationMissing,
}

impl fmt::Display for KvTransferMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KvTransferMode::FullPrompt => "full_prompt",
            KvTransferMode::DestinationMissing => "destination_missing",
        })
    }
}

/// The prefill-to-decode KV link: `transfer_s = tokens × bytes_per_token /
/// (gb_s × 1e9) + latency_ms / 1e3`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KvTransferSpec {
    /// Bandwidth of one transfer, gigabytes (1e9 bytes) per second. The
    /// default, 50, is one 400 Gb/s NIC.
    pub gb_s: f64,
    /// Fixed cost of a transfer, ms.
    pub latency_ms: f64,
    /// KV bytes of one token (all layers, whole model); from the timing's
    /// GPU profile when absent (`ReplaySpec::apply_profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_token: Option<u64>,
    /// What is sent.
    pub mode: KvTransferMode,
}

impl Default for KvTransferSpec {
    fn default() -> Self {
        KvTransferSpec {
            gb_s: 50.0,
            latency_ms: 0.0,
            bytes_per_token: None,
            mode: KvTransferMode::FullPrompt,
        }
    }
}

impl Default for TopologySpec {
    fn default() -> Self {
        TopologySpec::Aggregated { workers: 1 }
    }
}

/// Built-in placement policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RouterKind {
    /// Workers (and DP ranks) in turn.
    #[default]
    RoundRobin,
    /// Uniformly at random (seeded).
    Random,
    /// Fewest running + waiting; ties to the lowest id.
    LeastLoaded,
    /// Cache-aware: the router's own index of each rank's blocks, fed by KV
    /// events; lowest `prefill_load_scale × blocks to prefill + active blocks`.
    Kv,
    /// Least prefill work left: pending prefill tokens + this prompt's
    /// uncached tokens; ties to fewer requests, then round robin.
    Lpwl,
    /// A session's later turns where its first went (first turn by `inner`).
    Sticky,
}

impl RouterKind {
    /// The policy's name in specs, reports and `--router`.
    pub fn name(self) -> &'static str {
        match self {
            RouterKind::RoundRobin => "round_robin",
            RouterKind::Random => "random",
            RouterKind::LeastLoaded => "least_loaded",
            RouterKind::Kv => "kv",
            RouterKind::Lpwl => "lpwl",
            RouterKind::Sticky => "sticky",
        }
    }
}

fn default_prefill_load_scale() -> f64 {
    1.0
}

/// Placement policy and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterSpec {
    /// Which policy.
    pub policy: RouterKind,
    /// `kv`: 0 takes the lowest cost; above 0, samples workers with
    /// probability ∝ exp(−(c − c_min) / ((c_max − c_min) × T)).
    pub temperature: f64,
    /// `kv`: weight of the blocks still to prefill against the blocks active
    /// on the worker.
    pub prefill_load_scale: f64,
    /// `sticky`: the policy that places a session's first turn (and every
    /// request without a session); round robin when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inner: Option<RouterKind>,
    /// A queue in front of the policy, for when every worker is busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<RouterQueueSpec>,
}

impl Default for RouterSpec {
    fn default() -> Self {
        RouterSpec {
            policy: RouterKind::default(),
            temperature: 0.0,
            prefill_load_scale: default_prefill_load_scale(),
            inner: None,
            queue: None,
        }
    }
}

impl RouterSpec {
    /// The policy that actually places first turns: `inner` under sticky,
    /// else `policy`.
    pub fn placing(&self) -> RouterKind {
        match self.policy {
            RouterKind::Sticky => self.inner.unwrap_or_default(),
            other => other,
        }
    }

    /// Whether a placement depends on the seed.
    pub fn is_random(&self) -> bool {
        match self.placing() {
            RouterKind::Random => true,
            RouterKind::Kv => self.temperature > 0.0,
            _ => false,
        }
    }

    /// Range and consistency checks: every parameter given is one the
    /// policy reads.
    pub fn validate(&self) -> Result<(), ReplayError> {
        let (t, s) = (self.temperature, self.prefill_load_scale);
        check_non_negative("router.temperature", t)?;
        check_non_negative("router.prefill_load_scale", s)?;
        match (self.policy, self.inner) {
            (RouterKind::Sticky, Some(RouterKind::Sticky)) => {
                return Err(ReplayError::spec(
                    "router.inner",
                    "sticky cannot place its own first turns: give round_robin, random, least_loaded, kv or lpwl",
                ))
            }
            (RouterKind::Sticky, _) | (_, None) => {}
            (p, Some(_)) => {
                return Err(ReplayError::spec(
                    "router.inner",
                    format!("only the sticky policy has an inner policy, not {}", p.name()),
                ))
            }
        }
        if self.placing() != RouterKind::Kv {
            let unread = [
                ("router.temperature", t != 0.0),
                (
                    "router.prefill_load_scale",
                    s != default_prefill_load_scale(),
                ),
            ];
            if let Some((field, _)) = unread.iter().find(|(_, set)| *set) {
                return Err(ReplayError::spec(
                    *field,
                    format!(
                        "only the kv policy reads it, and {} places the requests",
                        self.placing().name()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The router's queue: a request arriving while every worker (of the pool
/// requests arrive at: the prefill pool when disaggregated) holds at least
/// `threshold` requests, running and waiting, waits in the router, and the
/// queue releases its requests in arrival order as workers drop below it;
/// one arriving to a full queue is rejected (`router_queue_full`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterQueueSpec {
    /// Requests on a worker (running + waiting, all ranks) from which it
    /// counts as busy; at least 1.
    pub threshold: u32,
    /// Requests the queue holds; 0 rejects every request that would wait.
    pub capacity: u32,
}

/// The declared measurement discipline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DisciplineSpec {
    /// The first this many offered requests are simulated but not measured.
    pub warmup_requests: u64,
    /// Requests planned before this many seconds are simulated but not measured.
    pub warmup_s: f64,
    /// A request not finished this long after its planned arrival times out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// After the last planned arrival, in-flight work may finish for this long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_s: Option<f64>,
    /// The run stops at this simulated time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sim_time_s: Option<f64>,
}

/// Goodput thresholds (a completed request counts when it meets every one given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SlaSpec {
    /// TTFT limit, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// TPOT limit, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// E2E limit, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
}

impl SlaSpec {
    /// Whether any limit is given.
    pub fn is_set(&self) -> bool {
        self.ttft_ms.is_some() || self.tpot_ms.is_some() || self.e2e_ms.is_some()
    }
}

pub(crate) fn check_positive(field: &str, v: f64) -> Result<(), ReplayError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ReplayError::spec(
            field,
            format!("{v} must be a finite number above 0"),
        ))
    }
}

pub(crate) fn check_non_negative(field: &str, v: f64) -> Result<(), ReplayError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(ReplayError::spec(
            field,
            format!("{v} must be a finite number, 0 or more"),
        ))
    }
}

/// A spec time (ms, written as `shown`) that must fit aisim's clock once
/// divided by `speedup`.
fn check_clock(field: &str, ms: f64, speedup: f64, shown: String) -> Result<(), ReplayError> {
    if checked_ms(ms / speedup).is_some() {
        return Ok(());
    }
    let at = if speedup == 1.0 {
        String::new()
    } else {
        format!(" at admission.speedup {}", float(speedup))
    };
    Err(ReplayError::spec(
        field,
        format!("{shown}{at} is beyond aisim's clock ({CLOCK_RANGE})"),
    ))
}

fn check_length(field: &str, l: &LengthSpec, allow_zero: bool) -> Result<(), ReplayError> {
    match *l {
        LengthSpec::Fixed { tokens } if tokens == 0 && !allow_zero => {
            Err(ReplayError::spec(field, "0 tokens: at least 1 is needed"))
        }
        LengthSpec::Uniform { min, max } if min > max || (min == 0 && !allow_zero) => Err(
            ReplayError::spec(field, format!("uniform {min}..={max}: need 1 ≤ min ≤ max")),
        ),
        LengthSpec::Normal { mean, std }
            if !(mean.is_finite() && std.is_finite() && std >= 0.0 && mean > 0.0) =>
        {
            Err(ReplayError::spec(
                field,
                format!("normal mean {mean} std {std}: need mean > 0 and std ≥ 0"),
            ))
        }
        _ => Ok(()),
    }
}

impl SyntheticSpec {
    /// `requests` single-turn requests of fixed lengths arriving as
    /// `arrival` says, nothing shared: the plainest workload (set the other
    /// fields with struct update syntax).
    pub fn fixed(
        requests: u64,
        input_tokens: u32,
        output_tokens: u32,
        arrival: ArrivalSpec,
    ) -> SyntheticSpec {
        SyntheticSpec {
            requests,
            input: LengthSpec::Fixed {
                tokens: input_tokens,
            },
            output: LengthSpec::Fixed {
                tokens: output_tokens,
            },
            arrival,
            prefix_groups: 0,
            prefix_tokens: 0,
            turns: 1,
            think_ms: 0.0,
            trace_block_size: default_block(),
            total_cdf: None,
        }
    }
}

/// Most workers a topology may have: idle workers cost only a slot each
/// (engines are built on a worker's first request), so the bound is on the
/// slot table (64 MiB).
pub const MAX_WORKERS: u32 = 1 << 24;

/// Most attention-DP ranks per worker: an engine builds all of its ranks at
/// once (each with its own scheduler and KV pool), and real deployments stay
/// far below.
pub const MAX_DP_SIZE: u32 = 1024;

/// A count of workers that sizes slot tables (a topology's, a planner's
/// `max_workers`) within [`MAX_WORKERS`], naming `field`.
pub(crate) fn check_worker_cap(field: &str, workers: u32) -> Result<(), ReplayError> {
    if workers > MAX_WORKERS {
        return Err(ReplayError::spec(
            field,
            format!(
                "{workers} workers: at most {MAX_WORKERS} (an idle worker costs a 4-byte slot, {} MiB at this count)",
                (workers as u64 * 4) >> 20
            ),
        ));
    }
    Ok(())
}

/// A pool's worker count and engine.
fn check_pool(pool: &PoolRef<'_>) -> Result<(), ReplayError> {
    let (workers, engine) = (pool.workers, pool.engine);
    let field = format!("{}.workers", pool.field);
    if workers == 0 {
        return Err(ReplayError::spec(field, "0 workers: at least 1 is needed"));
    }
    check_worker_cap(&field, workers)?;
    if engine.dp_size > MAX_DP_SIZE {
        return Err(ReplayError::spec(
            pool.engine_field("dp_size"),
            format!(
                "{} attention-DP ranks per worker: at most {MAX_DP_SIZE} (a worker runs one scheduler and KV pool per rank; no serving instance comes near)",
                engine.dp_size
            ),
        ));
    }
    match engine.validate() {
        Err(aisim_core::CoreError::InvalidConfig {
            field,
            value,
            reason,
        }) if pool.own_engine => Err(ReplayError::spec(
            pool.engine_field(field),
            format!("{value}: {reason}"),
        )),
        other => Ok(other?),
    }
}

/// A pool's GPU profile, from its timing.
struct PoolProfile {
    /// The spec field of the pool's timing.
    timing_field: String,
    key: String,
    profile: Arc<dyn aisim_core::profile::GpuProfile>,
}

/// The profiles one `apply_profile` resolves, each key once (a hardware or
/// model file is read once, not once per pool that names it).
#[derive(Default)]
struct Profiles(Vec<(String, Arc<dyn aisim_core::profile::GpuProfile>)>);

impl Profiles {
    fn get(&mut self, key: &str) -> Result<Arc<dyn aisim_core::profile::GpuProfile>, ReplayError> {
        if let Some((_, p)) = self.0.iter().find(|(k, _)| k == key) {
            return Ok(p.clone());
        }
        let p = resolve_profile(key)?;
        self.0.push((key.to_string(), p.clone()));
        Ok(p)
    }
}

/// A timing's own values (fixed times, physics coefficients).
fn check_timing(t: &TimingSpec) -> Result<(), ReplayError> {
    if let TimingSpec::Fixed {
        prefill_ms,
        decode_ms,
    } = *t
    {
        aisim_core::timing::FixedTiming::new(prefill_ms, decode_ms)?;
    }
    if let TimingSpec::Physics { coefficients, .. } = t {
        coefficients.validate("timing.coefficients")?;
    }
    Ok(())
}

/// An error about a `timing.*` field, moved to the pool's own timing.
fn in_pool_timing(e: ReplayError, pool: &PoolRef<'_>) -> ReplayError {
    match e {
        ReplayError::Core(aisim_core::CoreError::InvalidConfig {
            field,
            value,
            reason,
        }) => ReplayError::spec(
            format!("{}.{field}", pool.field),
            format!("{value}: {reason}"),
        ),
        other => other,
    }
}

/// A GPU profile's engine facts written into one engine configuration (see
/// `ReplaySpec::apply_profile`).
fn apply_profile_to(
    e: &mut EngineConfig,
    engine_field: &str,
    profile_field: &str,
    profile: &str,
    p: &dyn aisim_core::profile::GpuProfile,
) -> Result<(), ReplayError> {
    let tp = p.gpus();
    if e.tp_size != 1 && e.tp_size != tp {
        return Err(ReplayError::spec(
            format!("{engine_field}.tp_size"),
            format!(
                "{} conflicts with profile {profile}, which is tp {tp}: leave tp_size out or set it to {tp}",
                e.tp_size
            ),
        ));
    }
    e.tp_size = tp;
    if e.kv_budget_tokens.is_none() && e.num_gpu_blocks.is_none() {
        let tokens = p.total_kv_blks().saturating_mul(p.blk_size() as u64);
        if tokens == 0 {
            return Err(ReplayError::spec(
                profile_field,
                format!(
                    "{profile}: the weights leave no GPU memory for KV; use more tensor parallelism (/tpN), a smaller dtype (/fp8) or a larger GPU"
                ),
            ));
        }
        e.kv_budget_tokens = Some(tokens);
    }
    // The model's context caps what the engine serves, as a server started
    // with the model's own configuration does.
    if e.max_model_len.is_none() {
        e.max_model_len = p.max_context();
    }
    Ok(())
}

impl ReplaySpec {
    /// Reads a spec from a JSON file (unknown fields are errors).
    pub fn from_file(path: &Path) -> Result<ReplaySpec, ReplayError> {
        let spec = ReplaySpec::read_unchecked(path)?;
        spec.validate()?;
        Ok(spec)
    }

    /// [`ReplaySpec::from_file`] without [`ReplaySpec::validate`]: for a
    /// sweep's base, which need not be valid until its axes are set (a
    /// `router.temperature` for an axis `router.policy = ["kv"]`).
    pub fn read_unchecked(path: &Path) -> Result<ReplaySpec, ReplayError> {
        let text =
            aisim_core::text_file::read_text_file(path).map_err(aisim_core::CoreError::from)?;
        let mut spec: ReplaySpec =
            serde_json::from_str(&text).map_err(|e| ReplayError::SpecFile {
                path: path.into(),
                reason: aisim_core::text_file::json_error_text(&e),
            })?;
        // A relative path in a spec file means relative to that file.
        spec.resolve_paths(path.parent().unwrap_or(Path::new("")));
        Ok(spec)
    }

    /// Joins every relative path the spec holds (the trace, a timing table)
    /// onto `base`; absolute ones stay as they are.
    pub fn resolve_paths(&mut self, base: &Path) {
        let mut timings = vec![&mut self.timing];
        if let TopologySpec::Disaggregated {
            prefill, decode, ..
        } = &mut self.topology
        {
            timings.extend(prefill.timing.as_deref_mut());
            timings.extend(decode.timing.as_deref_mut());
        }
        let trace = match &mut self.workload {
            WorkloadSpec::Trace { path, .. } => Some(path),
            WorkloadSpec::Demo | WorkloadSpec::Synthetic(_) => None,
        };
        let timing_paths = timings.into_iter().map(|t| match t {
            TimingSpec::Table { path } => Some(path),
            TimingSpec::Layers { dir, .. } => Some(dir),
            _ => None,
        });
        for path in std::iter::once(trace).chain(timing_paths).flatten() {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
    }

    /// The files a run of this spec reads, by the spec field that names
    /// them: the trace (`workload.path`) and timing tables (`timing.path`,
    /// `topology.prefill.timing.path`, `topology.decode.timing.path`). No
    /// output may be one of them (docs/errors.md, "Output files").
    pub fn input_files(&self) -> Vec<(&'static str, &Path)> {
        let mut files = Vec::new();
        if let WorkloadSpec::Trace { path, .. } = &self.workload {
            files.push(("workload.path", path.as_path()));
        }
        let mut timings = vec![("timing.path", &self.timing)];
        if let TopologySpec::Disaggregated {
            prefill, decode, ..
        } = &self.topology
        {
            timings.extend(
                prefill
                    .timing
                    .as_deref()
                    .map(|t| ("topology.prefill.timing.path", t)),
            );
            timings.extend(
                decode
                    .timing
                    .as_deref()
                    .map(|t| ("topology.decode.timing.path", t)),
            );
        }
        for (field, timing) in timings {
            if let TimingSpec::Table { path } = timing {
                files.push((field, path.as_path()));
            }
        }
        files
    }

    /// The spec as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("specs serialize")
    }

    /// Worker count (both pools when disaggregated).
    pub fn workers(&self) -> u32 {
        match &self.topology {
            TopologySpec::Aggregated { workers } => *workers,
            TopologySpec::Disaggregated {
                prefill, decode, ..
            } => prefill.workers.saturating_add(decode.workers),
        }
    }

    /// Every pool: its spec field, worker count and engine.
    pub fn pools(&self) -> Vec<PoolRef<'_>> {
        match &self.topology {
            TopologySpec::Aggregated { workers } => vec![PoolRef {
                field: "topology",
                workers: *workers,
                engine: &self.engine,
                own_engine: false,
                timing: &self.timing,
                own_timing: false,
            }],
            TopologySpec::Disaggregated {
                prefill, decode, ..
            } => [("topology.prefill", prefill), ("topology.decode", decode)]
                .into_iter()
                .map(|(field, p)| PoolRef {
                    field,
                    workers: p.workers,
                    engine: p.engine.as_deref().unwrap_or(&self.engine),
                    own_engine: p.engine.is_some(),
                    timing: p.timing.as_deref().unwrap_or(&self.timing),
                    own_timing: p.timing.is_some(),
                })
                .collect(),
        }
    }

    /// Fills in the engine facts the timing's GPU profile fixes, when the
    /// timing comes from one: its tensor parallelism (`engine.tp_size`, which
    /// must be 1, taken as unset, or the profile's), its KV memory
    /// (`engine.kv_budget_tokens`, unless given) and, when it knows the
    /// model, the model's maximum context (`engine.max_model_len`, unless
    /// given). A disaggregated pool with
    /// a timing of its own gets an engine of its own (the spec's `engine` as
    /// it was given) with its own profile's facts; the KV bytes of a token
    /// come from the pools' model (`pool_profiles`). Idempotent; a no-op for
    /// other timing models. The physics model's profile counts as well.
    /// `Replayer::new` calls it.
    pub fn apply_profile(&mut self) -> Result<(), ReplayError> {
        let mut profiles = Profiles::default();
        let given = self.engine.clone();
        let global = match self.timing.profile_key() {
            Some(key) => Some((key.to_string(), profiles.get(key)?)),
            None => None,
        };
        if let Some((key, p)) = &global {
            apply_profile_to(&mut self.engine, "engine", "timing.profile", key, &**p)?;
        }
        let TopologySpec::Disaggregated {
            prefill, decode, ..
        } = &mut self.topology
        else {
            return Ok(());
        };
        for (field, pool) in [("topology.prefill", prefill), ("topology.decode", decode)] {
            let own = match pool.timing.as_deref() {
                Some(t) => t.profile_key().map(|k| (k.to_string(), true)),
                None => global.as_ref().map(|(k, _)| (k.clone(), false)),
            };
            let Some((key, own_timing)) = own else {
                continue;
            };
            if own_timing && pool.engine.is_none() {
                pool.engine = Some(Box::new(given.clone()));
            }
            if let Some(e) = pool.engine.as_deref_mut() {
                let p = profiles.get(&key)?;
                let profile_field = if own_timing {
                    format!("{field}.timing.profile")
                } else {
                    "timing.profile".to_string()
                };
                apply_profile_to(e, &format!("{field}.engine"), &profile_field, &key, &*p)?;
            }
        }
        let bytes = self.pool_model_kv_bytes(&mut profiles)?;
        if let TopologySpec::Disaggregated { kv_transfer, .. } = &mut self.topology {
            if kv_transfer.bytes_per_token.is_none() {
                kv_transfer.bytes_per_token = bytes;
            }
        }
        Ok(())
    }

    /// Each disaggregated pool's GPU profile (its timing's, when that comes
    /// from one).
    fn pool_profiles(&self, profiles: &mut Profiles) -> Result<Vec<PoolProfile>, ReplayError> {
        let mut out = Vec::new();
        for pool in self.pools() {
            if let Some(key) = pool.timing.profile_key() {
                out.push(PoolProfile {
                    timing_field: pool.timing_field(),
                    key: key.to_string(),
                    profile: profiles.get(key)?,
                });
            }
        }
        Ok(out)
    }

    /// The KV bytes of a token of the model both pools serve (the prefill
    /// pool's profile first: it computes what is sent), if a profile names
    /// one. Two profiles of different models are refused: the decode pool
    /// continues the prompt the prefill pool computed.
    fn pool_model_kv_bytes(&self, profiles: &mut Profiles) -> Result<Option<u64>, ReplayError> {
        let profiles = self.pool_profiles(profiles)?;
        if let [p, d] = profiles.as_slice() {
            if let (Some(pm), Some(dm)) = (p.profile.model_name(), d.profile.model_name()) {
                let (pf, pk, dk) = (&p.timing_field, &p.key, &d.key);
                if pm != dm {
                    return Err(ReplayError::spec(
                        format!("{}.profile", d.timing_field),
                        format!(
                            "{dk} serves {dm}, but the prefill pool's profile {pk} (`{pf}.profile`) serves {pm}: both pools serve one model (the decode pool continues the prompt the prefill pool computed); give both profiles of the same model"
                        ),
                    ));
                }
            }
        }
        Ok(profiles.iter().find_map(|p| {
            p.profile
                .kv_bytes_per_token()
                .filter(|b| b.is_finite() && *b >= 1.0)
                .map(|b| b.round() as u64)
        }))
    }

    /// What only a disaggregated topology needs: single-rank vLLM-core
    /// engines in both pools (the handoff is modelled on vLLM's scheduler:
    /// the prefill worker holds the prompt's blocks, the decode worker admits
    /// the request with its KV present) and a complete KV link.
    fn check_disaggregated(&self, t: &KvTransferSpec) -> Result<(), ReplayError> {
        for pool in self.pools() {
            let engine = pool.engine;
            if engine.dp_size != 1 {
                return Err(ReplayError::spec(
                    pool.engine_field("dp_size"),
                    format!(
                        "{} in {}: a disaggregated pool's workers have one attention-DP rank each (replay.md: a request's handoff between DP ranks is not modelled, and approximating it would be wrong); use more workers instead",
                        engine.dp_size, pool.field
                    ),
                ));
            }
            if engine.backend == aisim_core::Backend::Sglang {
                return Err(ReplayError::spec(
                    pool.engine_field("backend"),
                    format!("sglang in {}: the disaggregated runtime runs the vLLM and TensorRT-LLM schedulers (use vllm or trtllm)", pool.field),
                ));
            }
        }
        check_positive("topology.kv_transfer.gb_s", t.gb_s)?;
        check_non_negative("topology.kv_transfer.latency_ms", t.latency_ms)?;
        check_clock(
            "topology.kv_transfer.latency_ms",
            t.latency_ms,
            1.0,
            format!("{} ms", float(t.latency_ms)),
        )?;
        match t.bytes_per_token {
            None => Err(ReplayError::spec(
                "topology.kv_transfer.bytes_per_token",
                match self.timing.profile_key() {
                    Some(p) => format!("missing, and the timing's profile {p} names no model to take it from: a KV transfer's time needs the KV bytes of a token (give it, or a profile of the form GPU/MODEL/tpN)"),
                    None => "missing: a KV transfer's time needs the KV bytes of a token (give it, or a GPU profile of the form GPU/MODEL/tpN as the timing, whose model gives it)".to_string(),
                },
            )),
            Some(0) => Err(ReplayError::spec(
                "topology.kv_transfer.bytes_per_token",
                "0: a token's KV has at least 1 byte",
            )),
            Some(_) => Ok(()),
        }
    }

    /// Checks every field before anything runs.
    pub fn validate(&self) -> Result<(), ReplayError> {
        if self.version != SCHEMA_VERSION {
            return Err(ReplayError::spec(
                "version",
                format!(
                    "{} is not supported; this aisim reads version {SCHEMA_VERSION}",
                    self.version
                ),
            ));
        }
        for pool in self.pools() {
            check_pool(&pool)?;
        }
        self.scaling.validate(self)?;
        if let TopologySpec::Disaggregated { kv_transfer, .. } = &self.topology {
            self.check_disaggregated(kv_transfer)?;
        }
        if let Some(q) = self.router.queue {
            if q.threshold == 0 {
                return Err(ReplayError::spec(
                    "router.queue.threshold",
                    "0: a worker is busy from 1 request on at the least",
                ));
            }
        }
        self.router.validate()?;
        self.frontend.validate()?;
        if let Some(t) = self.discipline.timeout_s {
            let fe = self.frontend.ms();
            if fe > 0.0 && t * 1e3 <= fe {
                return Err(ReplayError::spec(
                    "discipline.timeout_s",
                    format!("{t} s is within the front end's {fe} ms outside the engine: no request could reach its client in time"),
                ));
            }
        }
        check_positive("admission.speedup", self.admission.speedup)?;
        if self.admission.concurrency == Some(0) {
            return Err(ReplayError::spec(
                "admission.concurrency",
                "0: at least 1 request must be in flight",
            ));
        }
        check_timing(&self.timing)?;
        for pool in self.pools().iter().filter(|p| p.own_timing) {
            check_timing(pool.timing).map_err(|e| in_pool_timing(e, pool))?;
        }
        let d = &self.discipline;
        check_non_negative("discipline.warmup_s", d.warmup_s)?;
        for (f, v) in [
            ("discipline.timeout_s", d.timeout_s),
            ("discipline.max_sim_time_s", d.max_sim_time_s),
        ] {
            if let Some(v) = v {
                check_positive(f, v)?;
            }
        }
        if let Some(v) = d.drain_s {
            check_non_negative("discipline.drain_s", v)?;
        }
        for (f, v) in [
            ("sla.ttft_ms", self.sla.ttft_ms),
            ("sla.tpot_ms", self.sla.tpot_ms),
            ("sla.e2e_ms", self.sla.e2e_ms),
        ] {
            if let Some(v) = v {
                check_positive(f, v)?;
            }
        }
        match &self.workload {
            WorkloadSpec::Trace {
                trace_block_size: Some(0),
                ..
            } => {
                return Err(ReplayError::spec(
                    "workload.trace_block_size",
                    "0: at least 1 token per trace block",
                ))
            }
            WorkloadSpec::Synthetic(s) => {
                if s.requests == 0 {
                    return Err(ReplayError::spec(
                        "workload.requests",
                        "0: at least 1 request",
                    ));
                }
                check_length("workload.input", &s.input, false)?;
                check_length("workload.output", &s.output, true)?;
                match s.arrival {
                    ArrivalSpec::Constant { rate } | ArrivalSpec::Poisson { rate } => {
                        check_positive("workload.arrival.rate", rate)?
                    }
                    ArrivalSpec::Gamma { rate, burstiness } => {
                        check_positive("workload.arrival.rate", rate)?;
                        check_positive("workload.arrival.burstiness", burstiness)?;
                    }
                }
                if s.turns == 0 {
                    return Err(ReplayError::spec(
                        "workload.turns",
                        "0: at least 1 turn per session",
                    ));
                }
                if s.trace_block_size == 0 {
                    return Err(ReplayError::spec(
                        "workload.trace_block_size",
                        "0: at least 1",
                    ));
                }
                check_non_negative("workload.think_ms", s.think_ms)?;
                if let Some(c) = &s.total_cdf {
                    let sorted = c
                        .points
                        .windows(2)
                        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
                    let last_one = c.points.last().is_some_and(|p| (p.1 - 1.0).abs() < 1e-9);
                    if !sorted || !last_one || c.points.iter().any(|p| !(0.0..=1.0).contains(&p.1))
                    {
                        return Err(ReplayError::spec(
                            "workload.total_cdf.points",
                            "lengths must increase, F must not decrease and end at 1",
                        ));
                    }
                    if c.min_tokens < 1 || c.min_tokens > c.max_tokens {
                        return Err(ReplayError::spec(
                            "workload.total_cdf",
                            "need 1 ≤ min_tokens ≤ max_tokens",
                        ));
                    }
                    if let Some(pairs) = &c.pairs {
                        if pairs.is_empty() || pairs.iter().any(|p| p.0 == 0 || p.1 == 0) {
                            return Err(ReplayError::spec(
                                "workload.total_cdf.pairs",
                                "need at least one pair, each of at least 1 input and 1 output token",
                            ));
                        }
                    }
                }
                if s.prefix_groups > 0 && s.prefix_tokens == 0 {
                    return Err(ReplayError::spec(
                        "workload.prefix_tokens",
                        "prefix groups need prefix_tokens ≥ 1",
                    ));
                }
            }
            _ => {}
        }
        // Times the run converts to the clock: checked once, never clamped.
        let d = &self.discipline;
        for (f, s) in [
            ("discipline.warmup_s", Some(d.warmup_s)),
            ("discipline.timeout_s", d.timeout_s),
            ("discipline.max_sim_time_s", d.max_sim_time_s),
            ("discipline.drain_s", d.drain_s),
        ] {
            if let Some(s) = s {
                check_clock(f, s * 1e3, 1.0, format!("{} s", float(s)))?;
            }
        }
        if let DispatchMode::Fixed(ms) = self.dispatch {
            check_clock(
                "dispatch",
                ms,
                self.admission.speedup,
                format!("fixed:{}", float(ms)),
            )?;
        }
        if let WorkloadSpec::Synthetic(s) = &self.workload {
            // A session's think times, one after the other.
            let turns = s.turns.saturating_sub(1) as f64;
            check_clock(
                "workload.think_ms",
                s.think_ms * turns,
                self.admission.speedup,
                format!("{} ms over {turns} later turns", float(s.think_ms)),
            )?;
        }
        Ok(())
    }
}

// The scaling plans read the topology and SLA of the whole spec, which holds
// the scaling spec: they live here, above both, not in `scaling.rs`.
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

    fn validate(&self, spec: &ReplaySpec) -> Result<(), ReplayError> {
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
    check_worker_cap(plan.max_field, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_unknown_fields() {
        let spec = ReplaySpec {
            dispatch: DispatchMode::Fixed(250.0),
            ..Default::default()
        };
        let back: ReplaySpec = serde_json::from_str(&spec.to_json()).unwrap();
        assert_eq!(back, spec);
        let mut v: serde_json::Value = serde_json::from_str(&spec.to_json()).unwrap();
        v["engine"]["max_num_seqz"] = 3.into();
        let e = serde_json::from_value::<ReplaySpec>(v)
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_num_seqz"), "{e}");
    }

    #[test]
    fn validation_names_the_field() {
        let spec = ReplaySpec {
            topology: TopologySpec::Aggregated { workers: 0 },
            ..Default::default()
        };
        assert!(spec
            .validate()
            .unwrap_err()
            .to_string()
            .contains("topology.workers"));
        let spec = ReplaySpec {
            version: 9,
            ..Default::default()
        };
        assert!(spec.validate().unwrap_err().to_string().contains("version"));
        assert!("fixed:-3".parse::<DispatchMode>().is_err());
        assert_eq!(
            "fixed:12.5".parse::<DispatchMode>(),
            Ok(DispatchMode::Fixed(12.5))
        );
    }

    fn with_paths(trace: &str, table: &str) -> ReplaySpec {
        ReplaySpec {
            workload: WorkloadSpec::Trace {
                path: trace.into(),
                format: None,
                trace_block_size: None,
            },
            timing: TimingSpec::Table { path: table.into() },
            ..Default::default()
        }
    }

    #[test]
    fn a_spec_files_relative_paths_are_relative_to_it() {
        let scratch = aisim_core::scratch::ScratchDir::new("spec-paths");
        let dir = scratch.path();
        let file = dir.join("run.json");
        std::fs::write(
            &file,
            with_paths("t/trace.jsonl", "/abs/table.json").to_json(),
        )
        .unwrap();
        let spec = ReplaySpec::from_file(&file).unwrap();
        assert_eq!(
            spec,
            with_paths(
                dir.join("t/trace.jsonl").to_str().unwrap(),
                "/abs/table.json"
            )
        );
    }

    proptest::proptest! {
        #[test]
        fn resolving_joins_relative_paths_and_keeps_absolute_ones(
            rel in "[a-z]{1,8}(/[a-z]{1,8}){0,3}",
            abs in "(/[a-z]{1,8}){1,4}",
            base in "(/[a-z]{1,8}){0,3}",
        ) {
            let mut spec = with_paths(&rel, &abs);
            spec.resolve_paths(Path::new(&base));
            let joined = Path::new(&base).join(&rel);
            proptest::prop_assert_eq!(spec, with_paths(joined.to_str().unwrap(), &abs));
        }
    }
}

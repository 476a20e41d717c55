//! `ReplayReport`: every metric, derived once from the collector's records at
//! the end of the run.

use std::collections::BTreeMap;

use aisim_core::EngineStats;
use serde::{Deserialize, Serialize};

use crate::gaps::GapCounts;
use crate::spec::{KvTransferMode, ReplaySpec};
use crate::tally::Tally;
use crate::timeseries::{TimeSeries, WorkerSeries};
use crate::trace::TraceNotes;
use crate::SCHEMA_VERSION;
use aisim_core::sketch::RELATIVE_ACCURACY;
use aisim_core::summary::{Summary, ESTIMATOR};

/// The result of a replay. Everything but `host` is identical between runs of
/// the same spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Report schema version.
    pub schema_version: u32,
    /// The spec that produced it.
    pub spec: ReplaySpec,
    /// The `name()` of the policies that ran (an injected policy's own name,
    /// not the spec's choice).
    pub policies: PolicyNames,
    /// Where the requests came from.
    pub workload: WorkloadInfo,
    /// What the run was given that makes its figures doubtful, in words (a
    /// fitted timing used with a profile it was not fitted on); absent when
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The declared measurement discipline.
    pub discipline: DisciplineReport,
    /// Outcome counts over the measured cohort.
    pub outcomes: Outcomes,
    /// Prompt and output lengths of the offered cohort, tokens.
    pub lengths: CohortLengths,
    /// Latency of the cohort's completed requests.
    pub latency: Latency,
    /// TTFT and E2E over the whole offered cohort, unfinished requests counting
    /// as infinitely slow.
    pub latency_offered: OfferedLatency,
    /// Rates.
    pub throughput: Throughput,
    /// The SLA thresholds behind goodput, and how much of the cohort meets each.
    pub sla: SlaReport,
    /// Prefix cache and preemption.
    pub cache: CacheReport,
    /// Requests in flight (dispatched, not yet ended).
    pub concurrency: Concurrency,
    /// Multi-turn dispatch, when the workload has sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionReport>,
    /// Rejections by reason.
    pub rejections: BTreeMap<String, u64>,
    /// Simulated time from the first planned arrival to the end of the run, s.
    pub duration_s: f64,
    /// Per pool: workers, worker-seconds, GPU-hours, KV occupancy.
    pub pools: Vec<PoolReport>,
    /// KV transfers between the pools, when disaggregated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_transfer: Option<TransferReport>,
    /// The router queue (`spec.router.queue`), when there is one: requests
    /// that waited in it (`queued`) and the most at once (`peak`); those
    /// refused for a full queue are `rejections.router_queue_full`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router_queue: Option<RouterQueueTotals>,
    /// The scaling policy's run, when it ticks: its timeline and the
    /// workers each pool paid for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<ScalingReport>,
    /// Per worker (pool by pool).
    pub workers: Vec<WorkerReport>,
    /// The run in fixed bins of simulated time (`timeseries.rs`).
    pub time_series: TimeSeries,
    /// With `--seeds N`: every figure's mean and 95 % interval over the seeds
    /// (the rest of the report is the first seed's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<crate::seeds_summary::SeedsReport>,
    /// How long the simulation took on this machine (differs between runs).
    pub host: HostReport,
}

/// The policies that ran, by their `name()`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyNames {
    /// Placement policy.
    pub placement: String,
    /// Scaling policy.
    pub scaling: String,
    /// Timing model of the engines (`TimingModel::name`; disaggregated, the
    /// prefill pool's).
    pub timing: String,
    /// Disaggregated: the decode pool's timing model, when it runs one of
    /// its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_timing: Option<String>,
}

/// Where the requests came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// Trace name or `synthetic`.
    pub source: String,
    /// Rows skipped on purpose while reading (BurstGPT failed requests).
    pub skipped_rows: u64,
    /// Rows replayed but not quite as written (orphan turns, `hash_ids` of
    /// the wrong length).
    #[serde(flatten)]
    pub notes: TraceNotes,
}

/// The discipline, stated with the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisciplineReport {
    /// Which requests are measured.
    pub cohort: String,
    /// Requests in the cohort.
    pub cohort_requests: u64,
    /// Warm-up requests (simulated, not measured).
    pub warmup_requests: u64,
    /// Timeout after planned arrival, s.
    pub timeout_s: Option<f64>,
    /// Drain after the last planned arrival, s (`null`: until everything finishes).
    pub drain_s: Option<f64>,
    /// Hard stop, s.
    pub max_sim_time_s: Option<f64>,
    /// Session dispatch mode.
    pub dispatch: String,
    /// Whether arrivals wait for completions: `open` (at planned times,
    /// whatever the service), `closed` (concurrency mode: a request arrives
    /// when one in flight ends) or `open_with_closed_sessions` (first turns
    /// open; a later turn waits for its session's previous turn to end).
    #[serde(rename = "loop")]
    pub arrival_loop: ArrivalLoop,
    /// Percentile estimator.
    pub percentile_estimator: String,
    /// Values a distribution keeps exactly (for ITL: distinct gaps); past it
    /// its percentiles come from a log-linear sketch.
    pub exact_values_limit: u64,
    /// Relative accuracy of a sketched percentile: within this fraction of
    /// the exact nearest-rank value (count, min, max, mean and std stay exact).
    pub sketch_relative_accuracy: f64,
    /// The distributions that went past the limit (empty: every percentile
    /// is exact).
    pub sketched: Vec<String>,
}

/// Whether arrivals depend on completions (see `DisciplineReport::arrival_loop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalLoop {
    /// Every request at its planned time.
    Open,
    /// A fixed number in flight: a request arrives when one ends.
    Closed,
    /// First turns at their planned time; later turns after the previous one.
    OpenWithClosedSessions,
}

impl ArrivalLoop {
    /// A sentence for a report.
    pub fn describe(self) -> &'static str {
        match self {
            ArrivalLoop::Open => "open: requests arrive at their planned times, whatever the service",
            ArrivalLoop::Closed => "closed: a request arrives when one in flight ends",
            ArrivalLoop::OpenWithClosedSessions => "open for first turns; a later turn waits for its session's previous turn (closed within a session)",
        }
    }
}

/// Token lengths of every offered cohort request, whatever its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CohortLengths {
    /// Prompt tokens.
    pub input_tokens: Summary,
    /// Output tokens asked for (`output_length`).
    pub output_tokens: Summary,
}

/// The goodput thresholds and their attainment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaReport {
    /// TTFT threshold, ms (`null`: none given).
    pub ttft_ms: Option<f64>,
    /// TPOT threshold, ms.
    pub tpot_ms: Option<f64>,
    /// E2E threshold, ms.
    pub e2e_ms: Option<f64>,
    /// Fraction of the offered cohort meeting each threshold.
    pub attainment: SlaAttainment,
}

/// Fractions of the offered cohort (0 to 1) that completed within each
/// threshold; a request that did not complete misses every one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaAttainment {
    /// Within the TTFT threshold (`null` when none was given).
    pub ttft: Option<f64>,
    /// Within the TPOT threshold.
    pub tpot: Option<f64>,
    /// Within the E2E threshold.
    pub e2e: Option<f64>,
    /// Within every threshold given: goodput requests / offered; `null`
    /// when no threshold was given (nothing to be within).
    pub all: Option<f64>,
}

/// Outcome counts: completed + timed_out + rejected + incomplete = offered;
/// `not_offered` lies outside the cohort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Outcomes {
    /// Requests offered in the cohort.
    pub offered: u64,
    /// Finished every token.
    pub completed: u64,
    /// Hit the timeout.
    pub timed_out: u64,
    /// Could never be served.
    pub rejected: u64,
    /// Dispatched, still in flight when the run ended.
    pub incomplete: u64,
    /// Never offered: the workload's requests whose dispatch would have come
    /// after the run ended (planned after `max_sim_time` or the drain
    /// deadline, later turns of sessions cut off, requests never admitted in
    /// concurrency mode). Not part of `offered` nor of any latency.
    pub not_offered: u64,
}

/// Latency distributions, milliseconds (output speed in tokens/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// First token − planned arrival.
    pub ttft_ms: Summary,
    /// First token − dispatch.
    pub ttft_from_dispatch_ms: Summary,
    /// (last − first token) / (tokens − 1), requests with ≥ 2 tokens.
    pub tpot_ms: Summary,
    /// Every gap between consecutive tokens, pooled.
    pub itl_ms: Summary,
    /// Terminal − planned arrival.
    pub e2e_ms: Summary,
    /// Terminal − dispatch.
    pub e2e_from_dispatch_ms: Summary,
    /// (tokens − 1) / (last − first token), per request.
    pub output_speed_tok_s: Summary,
    /// Dispatch − planned arrival.
    pub dispatch_delay_ms: Summary,
}

/// The offered-cohort view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferedLatency {
    /// TTFT with unfinished requests at infinity.
    pub ttft_ms: Summary,
    /// E2E with unfinished requests at infinity.
    pub e2e_ms: Summary,
}

/// Rates: what was offered over the span of the arrivals, what was done
/// over the run (`duration_s`, drain included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// The arrival rate of the cohort, requests per second: arrivals after
    /// the first over `arrival_span_s` (`(offered − 1) / span`, so arrivals
    /// evenly spaced at λ give λ). `null` with fewer than two arrivals or
    /// all at one instant: no span to divide by.
    pub offered_rps: Option<f64>,
    /// From the cohort's first planned arrival to its last, s (0 with one
    /// arrival or none).
    #[serde(default)]
    pub arrival_span_s: f64,
    /// Completed requests per second of the run (`duration_s`).
    pub request_rps: f64,
    /// Prompt tokens of completed requests per second of the run.
    pub input_tok_s: f64,
    /// Output tokens per second of the run.
    pub output_tok_s: f64,
    /// Both.
    pub total_tok_s: f64,
    /// Completed requests meeting every SLO threshold, per second of the
    /// run; `null` when no threshold was given (no goodput to measure).
    pub goodput_rps: Option<f64>,
    /// Completed requests meeting every SLO threshold; `null` when no
    /// threshold was given.
    pub goodput_requests: Option<u64>,
}

impl Throughput {
    /// The cohort's arrival rate from its `arrivals` planned between
    /// `first_ns` and `last_ns`: `(arrivals − 1) / span`, `None` when no
    /// span separates them (fewer than two, or all at one instant).
    pub fn offered_rate(arrivals: u64, first_ns: u64, last_ns: u64) -> Option<f64> {
        let span_ns = last_ns.saturating_sub(first_ns);
        (arrivals >= 2 && span_ns > 0).then(|| (arrivals - 1) as f64 / (span_ns as f64 * 1e-9))
    }
}

/// Prefix cache reuse and preemption, over every request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheReport {
    /// Reused prompt tokens / prompt tokens, at first admission.
    pub prefix_reuse_ratio: f64,
    /// The same over every admission (recomputes after preemption included).
    pub prefix_reuse_ratio_overall: f64,
    /// Prompt tokens at first admission.
    pub prompt_tokens: u64,
    /// Of which reused.
    pub reused_tokens: u64,
    /// Preemptions (vLLM) or retractions (SGLang).
    pub preemptions: u64,
    /// The placement policy's cache guesses beside the engines' reuse; only
    /// when the policy makes them (`kv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_expected: Option<RouterExpectedReuse>,
}

/// Over the requests the placement policy guessed for (every request, as
/// the rest of the cache report counts): expected against achieved reuse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterExpectedReuse {
    /// Requests with a guess.
    pub requests: u64,
    /// Prompt tokens the policy expected the chosen rank to have cached.
    pub expected_tokens: u64,
    /// Prompt tokens the engines reused at first admission, same requests.
    pub reused_tokens: u64,
    /// `reused_tokens / expected_tokens` (0 when nothing was expected).
    pub achieved_ratio: f64,
    /// Requests that reused fewer tokens than expected (evicted meanwhile,
    /// or a prefix still being computed when they were admitted).
    pub fell_short: u64,
}

/// Requests in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    /// Time-averaged over the duration.
    pub mean: f64,
    /// Largest.
    pub peak: u64,
}

/// Multi-turn dispatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionReport {
    /// Dispatch mode.
    pub dispatch: String,
    /// Sessions with more than one turn.
    pub sessions: u64,
    /// Later turns dispatched.
    pub later_turns: u64,
    /// Later turns whose row had no think time (fell back to the trace gap).
    pub think_time_fallbacks: u64,
    /// Realized gap: dispatch of a turn − end of the previous one.
    pub realized_gap_ms: Summary,
    /// The gap between the same turns on the trace clock.
    pub trace_gap_ms: Summary,
}

/// One pool of workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolReport {
    /// Pool name.
    pub pool: String,
    /// Workers.
    pub workers: u32,
    /// Workers that received at least one request (the others stayed idle
    /// and empty; `workers` lists only these).
    pub workers_used: u32,
    /// GPUs per worker (`dp_size × tp_size`).
    pub gpus_per_worker: u32,
    /// GPUs of the pool (`workers × gpus_per_worker`).
    pub gpus: u64,
    /// Workers × duration, s.
    pub worker_seconds: f64,
    /// GPUs × duration, hours.
    pub gpu_hours: f64,
    /// Passes its workers ran.
    pub passes: u64,
    /// Tokens per KV block.
    pub kv_block_size: u32,
    /// KV blocks per worker (all its ranks).
    pub kv_capacity_blocks: u64,
    /// KV capacity per worker in tokens (`kv_capacity_blocks × kv_block_size`).
    pub kv_capacity_tokens: u64,
    /// Highest KV blocks in use on any worker.
    pub kv_peak_blocks: u64,
    /// The same in tokens (blocks × block size: held, not necessarily filled).
    pub kv_peak_tokens: u64,
    /// Mean KV occupancy over workers and time.
    pub kv_mean_occupancy: f64,
}

/// What a scaling policy did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingReport {
    /// Ticks the policy was asked at.
    pub ticks: u64,
    /// The end of the run on the simulation clock, s: the timeline is
    /// counted from t = 0 to here.
    pub end_s: f64,
    /// The workers of each pool at the start and after each change, in time
    /// order.
    pub timeline: Vec<ScalingChange>,
    /// Per scaled pool, what its timeline adds up to.
    pub pools: Vec<ScaledPool>,
}

/// One point of the scaling timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingChange {
    /// When, s on the simulation clock.
    pub t_s: f64,
    /// The pool.
    pub pool: String,
    /// Workers counting from then on: starting up, accepting or draining.
    pub workers: u32,
}

/// One scaled pool's totals over its timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaledPool {
    /// The pool.
    pub pool: String,
    /// Fewest workers at any time.
    pub min_workers: u32,
    /// Most workers at any time.
    pub max_workers: u32,
    /// Changes of its worker count.
    pub changes: u64,
    /// ∫ workers dt from 0 to `end_s`, s.
    pub worker_seconds: f64,
    /// `worker_seconds × gpus_per_worker / 3600`, hours.
    pub gpu_hours: f64,
}

/// KV transfers from prefill to decode workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferReport {
    /// What is sent: `full_prompt` or `destination_missing`.
    pub mode: KvTransferMode,
    /// Transfers (one per request that reached its decode worker).
    pub transfers: u64,
    /// Prompt tokens sent.
    pub transferred_tokens: u64,
    /// Bytes sent, gigabytes (1e9).
    pub transferred_gb: f64,
    /// Mean transfer time (bytes over bandwidth plus latency), ms.
    pub mean_ms: f64,
}

/// One worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerReport {
    /// Worker index (within its pool).
    pub worker: u32,
    /// Its pool, when the topology has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// Passes run.
    pub passes: u64,
    /// Requests completed.
    pub completed: u64,
    /// Preemptions.
    pub preemptions: u64,
    /// Highest KV blocks in use.
    pub kv_peak_blocks: u64,
    /// The same in tokens (blocks × block size).
    pub kv_peak_tokens: u64,
    /// Mean KV occupancy over the duration.
    pub kv_mean_occupancy: f64,
}

/// Machine-dependent figures, ignored by comparisons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostReport {
    /// Wall time of the simulation, s.
    pub wall_s: f64,
    /// Requests simulated per wall-clock second.
    pub simulated_requests_per_s: f64,
}

/// What the runtime knows at the end besides the records.
#[derive(Debug, Clone, Default)]
pub struct RunTotals {
    /// Simulated end, ns.
    pub end_ns: u64,
    /// Requests never dispatched (their dispatch lay after the end).
    pub not_offered: u64,
    /// Rows skipped while reading.
    pub skipped_rows: u64,
    /// What reading the trace counted without refusing it.
    pub notes: TraceNotes,
    /// Later turns that fell back to the trace gap.
    pub think_time_fallbacks: u64,
    /// KV transfers, when disaggregated.
    pub transfer: Option<TransferTotals>,
    /// The router queue, when there is one.
    pub router_queue: Option<RouterQueueTotals>,
    /// Per pool: its workers and what each did (one pool when aggregated;
    /// prefill then decode when disaggregated).
    pub pools: Vec<PoolTotals>,
    /// Values each distribution kept exactly.
    pub exact_limit: usize,
    /// Source name.
    pub source: String,
    /// The policies that ran.
    pub policies: PolicyNames,
}

/// What the router queue held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RouterQueueTotals {
    /// Requests that waited in it.
    pub queued: u64,
    /// Most requests in it at once.
    pub peak: u64,
}

/// KV transfers of a disaggregated run.
#[derive(Debug, Clone, Copy)]
pub struct TransferTotals {
    /// Transfer mode.
    pub mode: KvTransferMode,
    /// Transfers started.
    pub transfers: u64,
    /// Prompt tokens sent.
    pub tokens: u64,
    /// Bytes sent.
    pub bytes: f64,
    /// Sum of the transfer times, ns.
    pub busy_ns: f64,
}

/// End-of-run figures of one pool.
#[derive(Debug, Clone, Default)]
pub struct PoolTotals {
    /// Pool name (`workers`, `prefill`, `decode`).
    pub name: &'static str,
    /// Whether its engines compute prompts, so its prefix cache saves
    /// compute (the report's `cache` section counts these pools only; a
    /// decode pool's cache hits only shorten transfers).
    pub computes_prompts: bool,
    /// Workers in the pool.
    pub worker_count: u32,
    /// KV blocks of one worker (all ranks).
    pub kv_capacity_per_worker: u64,
    /// Tokens per KV block.
    pub kv_block_size: u32,
    /// GPUs per worker.
    pub gpus_per_worker: u32,
    /// Per worker that received a request, by index: counters, passes, KV
    /// capacity (blocks, all ranks), peak, and busy block-nanoseconds.
    pub workers: Vec<WorkerTotals>,
    /// With a scaling policy: the pool's workers over time.
    pub scaling: Option<PoolScaling>,
}

/// A scaled pool's workers over time.
#[derive(Debug, Clone, Default)]
pub struct PoolScaling {
    /// (time ns, workers) at the start and after each change.
    pub timeline: Vec<(u64, u32)>,
    /// ∫ workers dt, worker-ns.
    pub worker_ns: u128,
    /// Ticks.
    pub ticks: u64,
}

/// End-of-run figures of one worker.
#[derive(Debug, Clone, Default)]
pub struct WorkerTotals {
    /// Worker index.
    pub worker: u32,
    /// Engine counters.
    pub stats: EngineStats,
    /// Passes.
    pub passes: u64,
    /// KV blocks (all ranks).
    pub kv_capacity: u64,
    /// Peak KV blocks in use.
    pub kv_peak: u64,
    /// ∫ blocks in use dt, block-ns.
    pub kv_block_ns: f64,
    /// KV occupancy and tokens over time.
    pub series: WorkerSeries,
}

impl PoolReport {
    /// A pool's section and its workers' rows over `duration_ns`.
    fn derive(p: &PoolTotals, duration_ns: u64) -> (PoolReport, Vec<WorkerReport>) {
        let block_size = p.kv_block_size as u64;
        let duration_s = duration_ns as f64 * 1e-9;
        let workers: Vec<WorkerReport> = p
            .workers
            .iter()
            .map(|w| WorkerReport {
                worker: w.worker,
                pool: None,
                passes: w.passes,
                completed: w.stats.completed,
                preemptions: w.stats.preemptions,
                kv_peak_blocks: w.kv_peak,
                kv_peak_tokens: w.kv_peak * block_size,
                kv_mean_occupancy: w.kv_block_ns
                    / (w.kv_capacity.max(1) as f64 * duration_ns as f64),
            })
            .collect();
        let n_workers = p.worker_count;
        let gpus = n_workers as u64 * p.gpus_per_worker as u64;
        let kv_capacity_blocks = p.kv_capacity_per_worker;
        let kv_peak_blocks = p.workers.iter().map(|w| w.kv_peak).max().unwrap_or(0);
        // Scaled: the workers the timeline counts, from 0 to the end.
        let worker_seconds = match &p.scaling {
            Some(s) => s.worker_ns as f64 * 1e-9,
            None => n_workers as f64 * duration_s,
        };
        let pool = PoolReport {
            pool: p.name.into(),
            workers: n_workers,
            workers_used: workers.len() as u32,
            gpus_per_worker: p.gpus_per_worker,
            gpus,
            worker_seconds,
            gpu_hours: worker_seconds * p.gpus_per_worker as f64 / 3600.0,
            passes: p.workers.iter().map(|w| w.passes).sum(),
            kv_block_size: p.kv_block_size,
            kv_capacity_blocks,
            kv_capacity_tokens: kv_capacity_blocks * block_size,
            kv_peak_blocks,
            kv_peak_tokens: kv_peak_blocks * block_size,
            kv_mean_occupancy: workers.iter().map(|w| w.kv_mean_occupancy).sum::<f64>()
                / n_workers.max(1) as f64,
        };
        (pool, workers)
    }
}

/// `a / b`, 0 when `b` is 0 (an empty cohort's share).
pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl ReplayReport {
    /// Derives the report from the run's totals.
    pub fn derive(
        spec: &ReplaySpec,
        mut tally: Tally,
        itl: GapCounts,
        totals: &RunTotals,
        wall_s: f64,
    ) -> ReplayReport {
        // The gaps' last sort and summary go on beside everything else here.
        let itl = itl.summary_aside();
        let outcomes = Outcomes {
            offered: tally.completed + tally.timed_out + tally.rejected + tally.incomplete,
            completed: tally.completed,
            timed_out: tally.timed_out,
            rejected: tally.rejected,
            incomplete: tally.incomplete,
            not_offered: totals.not_offered,
        };
        let mut sketched: Vec<String> = tally
            .distributions()
            .into_iter()
            .filter(|(_, d)| d.is_sketched())
            .map(|(name, _)| name.to_string())
            .collect();

        let start_ns = tally.first_planned_ns.unwrap_or(0);
        let duration_ns = totals.end_ns.saturating_sub(start_ns).max(1);
        let duration_s = duration_ns as f64 * 1e-9;
        let concurrency = Concurrency {
            mean: tally.in_flight.busy_ns() / duration_ns as f64,
            peak: tally.in_flight.peak(),
        };
        let sessions = tally.any_session.then(|| SessionReport {
            dispatch: spec.dispatch.to_string(),
            sessions: tally.sessions,
            later_turns: tally.later_turns,
            think_time_fallbacks: totals.think_time_fallbacks,
            realized_gap_ms: tally.realized_gap_ms.summary(),
            trace_gap_ms: tally.trace_gap_ms.summary(),
        });
        let (input_tokens, output_tokens) = (tally.input_tokens, tally.output_tokens);
        let sla_set = spec.sla.is_set();
        let (first_arrival_ns, last_arrival_ns) = tally.cohort_arrivals_ns.unwrap_or((0, 0));
        let throughput = Throughput {
            offered_rps: Throughput::offered_rate(
                outcomes.offered,
                first_arrival_ns,
                last_arrival_ns,
            ),
            arrival_span_s: (last_arrival_ns - first_arrival_ns) as f64 * 1e-9,
            request_rps: outcomes.completed as f64 / duration_s,
            input_tok_s: input_tokens as f64 / duration_s,
            output_tok_s: output_tokens as f64 / duration_s,
            total_tok_s: (input_tokens + output_tokens) as f64 / duration_s,
            goodput_rps: sla_set.then(|| tally.goodput as f64 / duration_s),
            goodput_requests: sla_set.then_some(tally.goodput),
        };
        let l = tally.latency;
        let (ttft_ms, ttft_from_dispatch_ms, tpot_ms) = (
            l.ttft.summary(),
            l.ttft_from_dispatch.summary(),
            l.tpot.summary(),
        );
        let (e2e_ms, e2e_from_dispatch_ms) = (l.e2e.summary(), l.e2e_from_dispatch.summary());
        let (output_speed_tok_s, dispatch_delay_ms) =
            (l.output_speed.summary(), l.dispatch_delay.summary());
        let latency_offered = OfferedLatency {
            ttft_ms: tally.offered_ttft.summary(),
            e2e_ms: tally.offered_e2e.summary(),
        };

        let lengths = CohortLengths {
            input_tokens: tally.input_lengths.summary(),
            output_tokens: tally.output_lengths.summary(),
        };
        let attained = |limit: Option<f64>, met: u64| limit.map(|_| ratio(met, outcomes.offered));
        let sla = SlaReport {
            ttft_ms: spec.sla.ttft_ms,
            tpot_ms: spec.sla.tpot_ms,
            e2e_ms: spec.sla.e2e_ms,
            attainment: SlaAttainment {
                ttft: attained(spec.sla.ttft_ms, tally.sla_met.ttft),
                tpot: attained(spec.sla.tpot_ms, tally.sla_met.tpot),
                e2e: attained(spec.sla.e2e_ms, tally.sla_met.e2e),
                all: sla_set.then(|| ratio(tally.goodput, outcomes.offered)),
            },
        };
        let arrival_loop = if spec.admission.concurrency.is_some() {
            ArrivalLoop::Closed
        } else if tally.later_turns > 0 {
            ArrivalLoop::OpenWithClosedSessions
        } else {
            ArrivalLoop::Open
        };

        // Prefix reuse where it saves compute: the pools that compute prompts.
        let mut stats = EngineStats::default();
        let mut preemptions = 0;
        for p in &totals.pools {
            for w in &p.workers {
                preemptions += w.stats.preemptions;
                if p.computes_prompts {
                    stats += w.stats;
                }
            }
        }
        let cache = CacheReport {
            prefix_reuse_ratio: ratio(stats.reused_tokens_first, stats.prompt_tokens_first),
            prefix_reuse_ratio_overall: ratio(stats.reused_tokens_all, stats.prompt_tokens_all),
            prompt_tokens: stats.prompt_tokens_first,
            reused_tokens: stats.reused_tokens_first,
            preemptions,
            router_expected: {
                let e = tally.expected_reuse;
                (e.requests > 0).then(|| RouterExpectedReuse {
                    requests: e.requests,
                    expected_tokens: e.expected_tokens,
                    reused_tokens: e.reused_tokens,
                    achieved_ratio: ratio(e.reused_tokens, e.expected_tokens),
                    fell_short: e.fell_short,
                })
            },
        };

        let named = totals.pools.len() > 1;
        let mut workers = Vec::new();
        let mut pools = Vec::new();
        for p in &totals.pools {
            let (pool, pool_workers) = PoolReport::derive(p, duration_ns);
            workers.extend(pool_workers.into_iter().map(|w| WorkerReport {
                pool: named.then(|| p.name.to_string()),
                ..w
            }));
            pools.push(pool);
        }
        let scaling = ScalingReport::derive(totals);
        let kv_transfer = totals.transfer.map(|t| TransferReport {
            mode: t.mode,
            transfers: t.transfers,
            transferred_tokens: t.tokens,
            transferred_gb: t.bytes * 1e-9,
            mean_ms: t.busy_ns / t.transfers.max(1) as f64 * 1e-6,
        });
        let warmup = spec.discipline.warmup_requests;
        // Over time, the workers of the pool that emits the output tokens:
        // the only one when aggregated, the decode pool when disaggregated.
        let (series, capacity, count) = match totals.pools.last() {
            Some(p) => (
                p.workers
                    .iter()
                    .map(|w| (w.worker, w.series.clone()))
                    .collect(),
                p.kv_capacity_per_worker,
                p.worker_count,
            ),
            None => (Vec::new(), 0, 0),
        };
        let time_series = TimeSeries::derive(
            std::mem::take(&mut tally.series),
            series,
            totals.end_ns,
            capacity,
            count,
        );
        let (itl_ms, itl_sketched) = itl.wait();
        if itl_sketched {
            sketched.push("latency.itl_ms".into());
        }
        sketched.sort_unstable();
        let latency = Latency {
            ttft_ms,
            ttft_from_dispatch_ms,
            tpot_ms,
            itl_ms,
            e2e_ms,
            e2e_from_dispatch_ms,
            output_speed_tok_s,
            dispatch_delay_ms,
        };
        ReplayReport {
            schema_version: SCHEMA_VERSION,
            spec: spec.clone(),
            policies: totals.policies.clone(),
            workload: WorkloadInfo { source: totals.source.clone(), skipped_rows: totals.skipped_rows, notes: totals.notes },
            warnings: spec_warnings(spec),
            discipline: DisciplineReport {
                cohort: format!(
                    "requests planned at or after {} s of trace time, excluding the first {} offered",
                    spec.discipline.warmup_s, warmup
                ),
                cohort_requests: outcomes.offered,
                warmup_requests: tally.warmup,
                timeout_s: spec.discipline.timeout_s,
                drain_s: spec.discipline.drain_s,
                max_sim_time_s: spec.discipline.max_sim_time_s,
                dispatch: spec.dispatch.to_string(),
                arrival_loop,
                percentile_estimator: ESTIMATOR.to_string(),
                exact_values_limit: totals.exact_limit as u64,
                sketch_relative_accuracy: RELATIVE_ACCURACY,
                sketched,
            },
            outcomes,
            lengths,
            latency,
            latency_offered,
            throughput,
            sla,
            cache,
            concurrency,
            sessions,
            rejections: tally
                .rejections
                .into_iter()
                .map(|(kind, n)| (kind.to_string(), n))
                .collect(),
            duration_s,
            pools,
            kv_transfer,
            router_queue: totals.router_queue,
            scaling,
            workers,
            time_series,
            seeds: None,
            host: HostReport { wall_s, simulated_requests_per_s: tally.dispatched as f64 / wall_s.max(1e-9) },
        }
    }
}

/// The warnings a spec gives of itself: each pool's fitted timing used
/// with a profile it was not fitted on (named by its spec field when the
/// pool has a timing of its own), once each.
pub fn spec_warnings(spec: &ReplaySpec) -> Vec<String> {
    let mut warnings: Vec<String> = Vec::new();
    for pool in spec.pools() {
        if let Some(w) = pool.timing.fit_warning() {
            let w = if pool.own_timing {
                format!("{}: {w}", pool.timing_field())
            } else {
                w
            };
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    warnings
}

impl ScalingReport {
    /// The timelines of the scaled pools, if any is.
    fn derive(totals: &RunTotals) -> Option<ScalingReport> {
        let mut timeline = Vec::new();
        let mut pools = Vec::new();
        let mut ticks = 0;
        for p in &totals.pools {
            let Some(s) = &p.scaling else { continue };
            ticks = ticks.max(s.ticks);
            timeline.extend(s.timeline.iter().map(|&(t, workers)| {
                (
                    t,
                    ScalingChange {
                        t_s: t as f64 * 1e-9,
                        pool: p.name.to_string(),
                        workers,
                    },
                )
            }));
            let worker_seconds = s.worker_ns as f64 * 1e-9;
            let counts = s.timeline.iter().map(|&(_, n)| n);
            pools.push(ScaledPool {
                pool: p.name.to_string(),
                min_workers: counts.clone().min().unwrap_or(0),
                max_workers: counts.max().unwrap_or(0),
                changes: s.timeline.len().saturating_sub(1) as u64,
                worker_seconds,
                gpu_hours: worker_seconds * p.gpus_per_worker as f64 / 3600.0,
            });
        }
        if pools.is_empty() {
            return None;
        }
        timeline.sort_by_key(|(t, _)| *t);
        Some(ScalingReport {
            ticks,
            end_s: totals.end_ns as f64 * 1e-9,
            timeline: timeline.into_iter().map(|(_, c)| c).collect(),
            pools,
        })
    }
}

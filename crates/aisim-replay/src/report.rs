//! `ReplayReport`: every metric, derived once from the collector's records at
//! the end of the run.

use std::collections::BTreeMap;

use aisim_core::EngineStats;
use serde::Serialize;

use crate::collector::{Outcome, RequestRecord, SortedGaps};
use crate::metrics::{Summary, ESTIMATOR};
use crate::spec::ReplaySpec;
use crate::trace::TraceNotes;
use crate::SCHEMA_VERSION;

/// The result of a replay. Everything but `host` is identical between runs of
/// the same spec.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// Report schema version.
    pub schema_version: u32,
    /// The spec that produced it.
    pub spec: ReplaySpec,
    /// Where the requests came from.
    pub workload: WorkloadInfo,
    /// The declared measurement discipline.
    pub discipline: DisciplineReport,
    /// Outcome counts over the measured cohort.
    pub outcomes: Outcomes,
    /// Latency of the cohort's completed requests.
    pub latency: Latency,
    /// TTFT and E2E over the whole offered cohort, unfinished requests counting
    /// as infinitely slow.
    pub latency_offered: OfferedLatency,
    /// Rates.
    pub throughput: Throughput,
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
    /// Per worker.
    pub workers: Vec<WorkerReport>,
    /// How long the simulation took on this machine (differs between runs).
    pub host: HostReport,
}

/// Where the requests came from.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
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
    /// Percentile estimator.
    pub percentile_estimator: &'static str,
}

/// Outcome counts: completed + timed_out + rejected + incomplete = offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Outcomes {
    /// Requests offered in the cohort.
    pub offered: u64,
    /// Finished every token.
    pub completed: u64,
    /// Hit the timeout.
    pub timed_out: u64,
    /// Could never be served.
    pub rejected: u64,
    /// In flight or never dispatched when the run ended.
    pub incomplete: u64,
}

/// Latency distributions, milliseconds (output speed in tokens/s).
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct OfferedLatency {
    /// TTFT with unfinished requests at infinity.
    pub ttft_ms: Summary,
    /// E2E with unfinished requests at infinity.
    pub e2e_ms: Summary,
}

/// Rates over the simulated duration.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    /// Offered requests per second.
    pub offered_rps: f64,
    /// Completed requests per second.
    pub request_rps: f64,
    /// Prompt tokens of completed requests per second.
    pub input_tok_s: f64,
    /// Output tokens per second.
    pub output_tok_s: f64,
    /// Both.
    pub total_tok_s: f64,
    /// Completed requests meeting every SLA threshold, per second.
    pub goodput_rps: f64,
    /// Completed requests meeting every SLA threshold.
    pub goodput_requests: u64,
}

/// Prefix cache reuse and preemption, over every request.
#[derive(Debug, Clone, Serialize)]
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
}

/// Requests in flight.
#[derive(Debug, Clone, Serialize)]
pub struct Concurrency {
    /// Time-averaged over the duration.
    pub mean: f64,
    /// Largest.
    pub peak: u64,
}

/// Multi-turn dispatch.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct PoolReport {
    /// Pool name.
    pub pool: String,
    /// Workers.
    pub workers: u32,
    /// GPUs per worker (`dp_size × tp_size`).
    pub gpus_per_worker: u32,
    /// GPUs of the pool (`workers × gpus_per_worker`).
    pub gpus: u64,
    /// Workers × duration, s.
    pub worker_seconds: f64,
    /// GPUs × duration, hours.
    pub gpu_hours: f64,
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

/// One worker.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerReport {
    /// Worker index.
    pub worker: u32,
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
#[derive(Debug, Clone, Serialize)]
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
    /// Offered requests never dispatched (sessions cut off by the end).
    pub never_dispatched: u64,
    /// Rows skipped while reading.
    pub skipped_rows: u64,
    /// What reading the trace counted without refusing it.
    pub notes: TraceNotes,
    /// Later turns that fell back to the trace gap.
    pub think_time_fallbacks: u64,
    /// Per worker: counters, passes, KV capacity (blocks, all ranks), peak, and
    /// busy block-nanoseconds.
    pub workers: Vec<WorkerTotals>,
    /// GPUs per worker.
    pub gpus_per_worker: u32,
    /// Source name.
    pub source: String,
}

/// End-of-run figures of one worker.
#[derive(Debug, Clone, Default)]
pub struct WorkerTotals {
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
}

fn ms(ns: u64) -> f64 {
    ns as f64 * 1e-6
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl ReplayReport {
    /// Derives the report.
    pub fn derive(
        spec: &ReplaySpec,
        records: &[RequestRecord],
        itl: SortedGaps,
        totals: &RunTotals,
        wall_s: f64,
    ) -> ReplayReport {
        let cohort: Vec<&RequestRecord> = records.iter().filter(|r| r.in_cohort).collect();
        let mut outcomes = Outcomes {
            offered: cohort.len() as u64 + totals.never_dispatched,
            ..Default::default()
        };
        outcomes.incomplete = totals.never_dispatched;
        let mut rejections = BTreeMap::new();
        for r in &cohort {
            match r.outcome {
                Outcome::Completed => outcomes.completed += 1,
                Outcome::TimedOut => outcomes.timed_out += 1,
                Outcome::Rejected => {
                    outcomes.rejected += 1;
                    *rejections
                        .entry(r.reject_reason.clone().unwrap_or_default())
                        .or_insert(0) += 1;
                }
                Outcome::Incomplete => outcomes.incomplete += 1,
            }
        }
        let done: Vec<&&RequestRecord> = cohort
            .iter()
            .filter(|r| r.outcome == Outcome::Completed)
            .collect();
        let collect = |f: &dyn Fn(&RequestRecord) -> Option<f64>| -> Summary {
            let mut v: Vec<f64> = done.iter().filter_map(|r| f(r)).collect();
            Summary::of(&mut v)
        };
        let with_tokens = |r: &RequestRecord| r.tokens > 0;
        let multi = |r: &RequestRecord| r.tokens >= 2 && r.last_token_ns > r.first_token_ns;
        let latency = Latency {
            ttft_ms: collect(&|r| with_tokens(r).then(|| ms(r.first_token_ns - r.planned_ns))),
            ttft_from_dispatch_ms: collect(&|r| {
                with_tokens(r).then(|| ms(r.first_token_ns - r.dispatch_ns))
            }),
            tpot_ms: collect(&|r| {
                (r.tokens >= 2)
                    .then(|| ms(r.last_token_ns - r.first_token_ns) / (r.tokens - 1) as f64)
            }),
            itl_ms: Summary::of_sorted_runs(itl.runs().map(|(g, c)| (ms(g), c))),
            e2e_ms: collect(&|r| Some(ms(r.terminal_ns - r.planned_ns))),
            e2e_from_dispatch_ms: collect(&|r| Some(ms(r.terminal_ns - r.dispatch_ns))),
            output_speed_tok_s: collect(&|r| {
                multi(r).then(|| {
                    (r.tokens - 1) as f64 / ((r.last_token_ns - r.first_token_ns) as f64 * 1e-9)
                })
            }),
            dispatch_delay_ms: collect(&|r| Some(ms(r.dispatch_ns - r.planned_ns))),
        };
        let offered = |f: &dyn Fn(&RequestRecord) -> Option<f64>,
                       applies: &dyn Fn(&RequestRecord) -> bool| {
            let mut v: Vec<f64> = cohort
                .iter()
                .filter(|r| applies(r))
                .map(|r| {
                    if r.outcome == Outcome::Completed {
                        f(r).unwrap_or(f64::INFINITY)
                    } else {
                        f64::INFINITY
                    }
                })
                .collect();
            v.extend(std::iter::repeat_n(
                f64::INFINITY,
                totals.never_dispatched as usize,
            ));
            Summary::of(&mut v)
        };
        let latency_offered = OfferedLatency {
            ttft_ms: offered(
                &|r| with_tokens(r).then(|| ms(r.first_token_ns - r.planned_ns)),
                &|r| r.output_length > 0,
            ),
            e2e_ms: offered(&|r| Some(ms(r.terminal_ns - r.planned_ns)), &|_| true),
        };

        let start_ns = records.iter().map(|r| r.planned_ns).min().unwrap_or(0);
        let duration_ns = totals.end_ns.saturating_sub(start_ns).max(1);
        let duration_s = duration_ns as f64 * 1e-9;
        let sla = &spec.sla;
        let meets = |r: &RequestRecord| {
            let ttft = ms(r.first_token_ns.min(r.terminal_ns) - r.planned_ns);
            let e2e = ms(r.terminal_ns - r.planned_ns);
            let tpot = if r.tokens >= 2 {
                ms(r.last_token_ns - r.first_token_ns) / (r.tokens - 1) as f64
            } else {
                0.0
            };
            sla.ttft_ms.is_none_or(|t| ttft <= t)
                && sla.tpot_ms.is_none_or(|t| tpot <= t)
                && sla.e2e_ms.is_none_or(|t| e2e <= t)
        };
        let goodput_requests = done.iter().filter(|r| meets(r)).count() as u64;
        let input_tokens: u64 = done.iter().map(|r| r.input_length as u64).sum();
        let output_tokens: u64 = done.iter().map(|r| r.tokens as u64).sum();
        let throughput = Throughput {
            offered_rps: outcomes.offered as f64 / duration_s,
            request_rps: outcomes.completed as f64 / duration_s,
            input_tok_s: input_tokens as f64 / duration_s,
            output_tok_s: output_tokens as f64 / duration_s,
            total_tok_s: (input_tokens + output_tokens) as f64 / duration_s,
            goodput_rps: goodput_requests as f64 / duration_s,
            goodput_requests,
        };

        let mut stats = EngineStats::default();
        for w in &totals.workers {
            stats += w.stats;
        }
        let cache = CacheReport {
            prefix_reuse_ratio: ratio(stats.reused_tokens_first, stats.prompt_tokens_first),
            prefix_reuse_ratio_overall: ratio(stats.reused_tokens_all, stats.prompt_tokens_all),
            prompt_tokens: stats.prompt_tokens_first,
            reused_tokens: stats.reused_tokens_first,
            preemptions: stats.preemptions,
        };

        // Concurrency from dispatch/terminal edges (requests still in flight end at the run's end).
        let mut edges: Vec<(u64, i64)> = Vec::with_capacity(records.len() * 2);
        let mut busy_ns = 0f64;
        for r in records
            .iter()
            .filter(|r| RequestRecord::at(r.dispatch_ns).is_some())
        {
            let end = RequestRecord::at(r.terminal_ns).unwrap_or(totals.end_ns);
            edges.push((r.dispatch_ns, 1));
            edges.push((end, -1));
            busy_ns += end.saturating_sub(r.dispatch_ns) as f64;
        }
        edges.sort_unstable_by_key(|&(t, d)| (t, d));
        let (mut cur, mut peak) = (0i64, 0i64);
        for (_, d) in edges {
            cur += d;
            peak = peak.max(cur);
        }
        let concurrency = Concurrency {
            mean: busy_ns / duration_ns as f64,
            peak: peak as u64,
        };

        let sessions = session_report(spec, records, totals);
        let block_size = spec.engine.effective_block_size() as u64;
        let workers: Vec<WorkerReport> = totals
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| WorkerReport {
                worker: i as u32,
                passes: w.passes,
                completed: w.stats.completed,
                preemptions: w.stats.preemptions,
                kv_peak_blocks: w.kv_peak,
                kv_peak_tokens: w.kv_peak * block_size,
                kv_mean_occupancy: w.kv_block_ns
                    / (w.kv_capacity.max(1) as f64 * duration_ns as f64),
            })
            .collect();
        let n_workers = totals.workers.len() as u32;
        let gpus = n_workers as u64 * totals.gpus_per_worker as u64;
        let kv_capacity_blocks = totals.workers.first().map_or(0, |w| w.kv_capacity);
        let kv_peak_blocks = totals.workers.iter().map(|w| w.kv_peak).max().unwrap_or(0);
        let pools = vec![PoolReport {
            pool: "workers".into(),
            workers: n_workers,
            gpus_per_worker: totals.gpus_per_worker,
            gpus,
            worker_seconds: n_workers as f64 * duration_s,
            gpu_hours: gpus as f64 * duration_s / 3600.0,
            kv_block_size: spec.engine.effective_block_size(),
            kv_capacity_blocks,
            kv_capacity_tokens: kv_capacity_blocks * block_size,
            kv_peak_blocks,
            kv_peak_tokens: kv_peak_blocks * block_size,
            kv_mean_occupancy: workers.iter().map(|w| w.kv_mean_occupancy).sum::<f64>()
                / n_workers.max(1) as f64,
        }];
        let warmup = spec.discipline.warmup_requests;
        ReplayReport {
            schema_version: SCHEMA_VERSION,
            spec: spec.clone(),
            workload: WorkloadInfo { source: totals.source.clone(), skipped_rows: totals.skipped_rows, notes: totals.notes },
            discipline: DisciplineReport {
                cohort: format!(
                    "requests planned at or after {} s of trace time, excluding the first {} offered",
                    spec.discipline.warmup_s, warmup
                ),
                cohort_requests: outcomes.offered,
                warmup_requests: records.len() as u64 - cohort.len() as u64,
                timeout_s: spec.discipline.timeout_s,
                drain_s: spec.discipline.drain_s,
                max_sim_time_s: spec.discipline.max_sim_time_s,
                dispatch: spec.dispatch.to_string(),
                percentile_estimator: ESTIMATOR,
            },
            outcomes,
            latency,
            latency_offered,
            throughput,
            cache,
            concurrency,
            sessions,
            rejections,
            duration_s,
            pools,
            workers,
            host: HostReport { wall_s, simulated_requests_per_s: records.len() as f64 / wall_s.max(1e-9) },
        }
    }
}

fn session_report(
    spec: &ReplaySpec,
    records: &[RequestRecord],
    totals: &RunTotals,
) -> Option<SessionReport> {
    let mut by_session: BTreeMap<u64, Vec<&RequestRecord>> = BTreeMap::new();
    for r in records {
        if let Some(s) = r.session {
            by_session.entry(s).or_default().push(r);
        }
    }
    if by_session.is_empty() {
        return None;
    }
    let mut realized = Vec::new();
    let mut trace = Vec::new();
    for turns in by_session.values_mut() {
        turns.sort_by_key(|r| r.turn);
        for pair in turns.windows(2) {
            let (prev, next) = (pair[0], pair[1]);
            if let (Some(end), Some(d)) = (
                RequestRecord::at(prev.terminal_ns),
                RequestRecord::at(next.dispatch_ns),
            ) {
                realized.push(ms(d.saturating_sub(end)));
            }
            if let Some(g) = RequestRecord::at(next.trace_gap_ns) {
                trace.push(ms(g));
            }
        }
    }
    Some(SessionReport {
        dispatch: spec.dispatch.to_string(),
        sessions: by_session.values().filter(|t| t.len() > 1).count() as u64,
        later_turns: records.iter().filter(|r| r.turn > 0).count() as u64,
        think_time_fallbacks: totals.think_time_fallbacks,
        realized_gap_ms: Summary::of(&mut realized),
        trace_gap_ms: Summary::of(&mut trace),
    })
}

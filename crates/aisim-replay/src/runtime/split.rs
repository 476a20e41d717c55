//! A split run: the workers divided between two threads ("parts"). Each
//! part runs the ordinary loop over every arrival but serves only its own
//! workers (worker w is part w mod 2's), and records its collector calls
//! (`call_log.rs`); this thread makes them on the run's collector in the order
//! one loop over every worker would. The report and the records are
//! byte-identical to the single loop's (a test compares them); only the
//! engines' work, most of a replay's, is shared between two cores.
//!
//! It applies only when no worker can affect another between arrivals and
//! the placement is a function of the arrival sequence alone
//! (`SplitParts::applies`): then each part makes, for its workers, exactly
//! the engine calls the single loop makes, at the same steps. The parts
//! share the timing model (`TimingModel` is `Sync`): a model must be a pure
//! function of its inputs, as the built-in ones are.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use aisim_core::cancel::SetOnDrop;
use aisim_core::SimTime;

use super::driver::{hand_over, run_collector, StepChecks};
use super::{AggTopology, ReplayObserver, Runtime, Silent};
use crate::call_log::{key_time, Batch, Call, CallLog, Message};
use crate::collector::{Collected, CollectorOptions, TraceCollector};
use crate::error::ReplayError;
use crate::policy::PlacementPolicy;
use crate::report::{PoolTotals, RunTotals};
use crate::spec::ReplaySpec;
use crate::workload::Workload;

/// Parts of a split run.
const PARTS: u32 = 2;
/// Batches a part may have queued for the merge (each up to a few thousand
/// calls): bounds memory whatever the run's size.
const QUEUED_BATCHES: usize = 4;

/// Builds one part's topology and workload from its placement.
pub(crate) type BuildPart<'a> = dyn Fn(Box<dyn PlacementPolicy>) -> Result<(AggTopology, Box<dyn Workload>), ReplayError>
    + Sync
    + 'a;

/// What a split run needs to build its parts.
pub(crate) struct SplitParts<'a> {
    pub spec: &'a ReplaySpec,
    /// One placement per part, each in the state the run starts from.
    pub placements: Vec<Box<dyn PlacementPolicy + Send>>,
    /// Builds a part's topology (over every worker, engines built as they
    /// are used) and workload (every request), given its placement.
    pub build: &'a BuildPart<'a>,
}

impl SplitParts<'_> {
    /// Whether a run of `spec` can be split, given a placement that gave a
    /// copy per part and a workload without sessions: aggregated workers
    /// without a scaling policy (`scaling_ticks` false), at least two; no
    /// concurrency cap or router queue (as fast-forward asks); no timeout,
    /// drain or stop time (nothing outside the workers happens between
    /// arrivals, and every request completes); and two cores that a pool of
    /// runs (a sweep's, the seeds') does not keep busy already.
    pub fn applies(spec: &ReplaySpec, workers: u32, scaling_ticks: bool) -> bool {
        let d = &spec.discipline;
        workers >= PARTS
            && !scaling_ticks
            && spec.admission.concurrency.is_none()
            && spec.router.queue.is_none()
            && d.timeout_s.is_none()
            && d.drain_s.is_none()
            && d.max_sim_time_s.is_none()
            && aisim_core::thread_pool::second_core_free()
    }
}

/// One part's side of the channels.
struct PartEnds {
    part: u32,
    to_merge: mpsc::SyncSender<Message>,
    spent: Receiver<Batch>,
    end: Receiver<SimTime>,
}

/// The merge's side of one part's channels.
struct Stream {
    from_part: Receiver<Message>,
    spent: Sender<Batch>,
    end: Sender<SimTime>,
    batch: Batch,
    /// The next segment of `batch` to make.
    next: usize,
    /// The part's end, once it sent it.
    done: Option<SimTime>,
    /// The part stopped without its end (its thread says why).
    gone: bool,
}

impl Stream {
    /// The key of the next segment, receiving a batch if need be; `None`
    /// once the part is done (or gone: its thread says why).
    fn head(&mut self) -> Option<u128> {
        while self.next >= self.batch.segments.len() {
            if self.done.is_some() {
                return None;
            }
            match self.from_part.recv() {
                Ok(Message::Batch(b)) => {
                    let spent = std::mem::replace(&mut self.batch, b);
                    let _ = self.spent.send(spent); // the part may have ended
                    self.next = 0;
                }
                Ok(Message::Done(end)) => self.done = Some(end),
                Err(_) => {
                    self.gone = true;
                    return None;
                }
            }
        }
        Some(self.batch.segments[self.next].0)
    }

    /// Makes the next segment's calls on `collector`.
    fn make_next(&mut self, collector: &mut TraceCollector) -> u64 {
        let b = &self.batch;
        let mut remaining = None;
        for call in b.calls_of(self.next) {
            if let Call::Dispatched(d) = call {
                remaining = Some(d.1);
            }
            make(b, call, collector);
        }
        self.next += 1;
        remaining.unwrap_or(u64::MAX)
    }
}

/// Makes `call`, of `batch`, on `collector`.
fn make(batch: &Batch, call: &Call, collector: &mut TraceCollector) {
    match call {
        Call::Dispatched(d) => collector.dispatched(d.0),
        &Call::Placed { id, worker, rank } => collector.placed(id, worker, rank),
        Call::Rejected { id, at, reason } => collector.rejected(*id, *at, reason),
        &Call::Admitted {
            id,
            at,
            reused,
            readmission,
        } => collector.admitted(id, at, reused, readmission),
        &Call::Preempted(id) => collector.preempted(id),
        Call::Tokens { ids, start, ends } => collector.tokens_of_passes(
            &batch.ids[ids.start as usize..ids.end as usize],
            *start,
            &batch.ends[ends.start as usize..ends.end as usize],
        ),
        &Call::Terminal { id, at, outcome } => {
            collector.terminal(id, at, outcome);
        }
    }
}

/// Runs `parts` on two threads and makes their calls on a collector set up
/// by `options`; the same results as `Runtime::run` over every worker.
pub(crate) fn run_split(
    parts: SplitParts<'_>,
    options: CollectorOptions,
    stream_records: bool,
    observer: &mut dyn ReplayObserver,
) -> Result<(Collected, RunTotals), ReplayError> {
    let spec = parts.spec;
    let caller_cancel = aisim_core::cancel::current();
    // Stops the parts when the caller cancels or the merge fails.
    let stop = Arc::new(AtomicBool::new(false));
    let mut collector = run_collector(spec, options);
    std::thread::scope(|scope| {
        // Set on the way out however it goes (a panic here included), so
        // that no part simulates on for nothing.
        let _stop_parts = SetOnDrop(&stop);
        let mut streams = Vec::new();
        let mut handles = Vec::new();
        for (part, placement) in (0..PARTS).zip(parts.placements) {
            let (to_merge, from_part) = mpsc::sync_channel(QUEUED_BATCHES);
            let (spent_tx, spent) = mpsc::channel();
            let (end_tx, end) = mpsc::channel();
            streams.push(Stream {
                from_part,
                spent: spent_tx,
                end: end_tx,
                batch: Batch::default(),
                next: 0,
                done: None,
                gone: false,
            });
            let ends = PartEnds {
                part,
                to_merge,
                spent,
                end,
            };
            let (build, flag) = (parts.build, Some(stop.clone()));
            let handle = std::thread::Builder::new()
                .name(format!("aisim-part{part}"))
                .spawn_scoped(scope, move || {
                    aisim_core::cancel::with_flag(flag, || run_part(spec, build, placement, ends))
                })
                .map_err(|e| ReplayError::Internal {
                    reason: format!("could not start a replay thread: {e}"),
                });
            match handle {
                Ok(h) => handles.push(h),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        let merged = merge(
            &mut streams,
            &mut collector,
            stream_records,
            observer,
            &caller_cancel,
        );
        if merged.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Unblock parts waiting to send or for the end, then hear them out.
        let ends: Option<Vec<SimTime>> = streams.iter().map(|s| s.done).collect();
        let end = ends.map(|e| e.into_iter().max().unwrap_or(SimTime::ZERO));
        for s in streams {
            if let (Some(end), Ok(())) = (end, &merged) {
                let _ = s.end.send(end);
            }
            drop(s);
        }
        let mut parts_totals = Vec::new();
        let mut failure = merged.err();
        for h in handles {
            let part = h.join().unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(ReplayError::Internal {
                    reason: format!("a replay thread panicked: {what}"),
                })
            });
            match part {
                Ok(t) => parts_totals.push(t),
                // A part's own error says more than the stop it caused.
                Err(e) => {
                    if failure
                        .as_ref()
                        .is_none_or(|f| matches!(f, ReplayError::Cancelled))
                    {
                        failure = Some(e);
                    }
                }
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        let end = end.ok_or_else(|| ReplayError::Internal {
            reason: "a replay thread ended without its results".into(),
        })?;
        observer.finished();
        let totals = join_totals(parts_totals, end, collector.exact_limit());
        let collected = hand_over(collector, stream_records, observer, end)?;
        Ok((collected, totals))
    })
}

/// Makes every part's calls on `collector`, segment by segment in key
/// order, with the loop's checks after each step (a step's segments share
/// its time).
fn merge(
    streams: &mut [Stream],
    collector: &mut TraceCollector,
    stream_records: bool,
    observer: &mut dyn ReplayObserver,
    cancel: &Option<Arc<AtomicBool>>,
) -> Result<(), ReplayError> {
    if aisim_core::cancel::is_set(cancel) {
        return Err(ReplayError::Cancelled);
    }
    let mut checks = StepChecks::new(stream_records);
    let mut step = None;
    let mut remaining = u64::MAX;
    loop {
        let mut first: Option<(u128, usize)> = None;
        for (i, s) in streams.iter_mut().enumerate() {
            if let Some(k) = s.head() {
                if first.is_none_or(|(f, _)| k < f) {
                    first = Some((k, i));
                }
            }
        }
        if streams.iter().any(|s| s.gone) {
            // A part failed: stop; its error is the run's.
            return Err(ReplayError::Cancelled);
        }
        let Some((key, i)) = first else { break };
        let t = key_time(key);
        if step.is_some_and(|s| s != t) {
            checks.after_step(collector, observer, || remaining)?;
            if aisim_core::cancel::is_set(cancel) {
                return Err(ReplayError::Cancelled);
            }
        }
        step = Some(t);
        let r = streams[i].make_next(collector);
        if r != u64::MAX {
            remaining = r;
        }
    }
    if step.is_some() {
        checks.after_step(collector, observer, || remaining)?;
    }
    Ok(())
}

/// One part: the loop over every arrival, serving its own workers.
fn run_part(
    spec: &ReplaySpec,
    build: &BuildPart<'_>,
    placement: Box<dyn PlacementPolicy + Send>,
    ends: PartEnds,
) -> Result<RunTotals, ReplayError> {
    let (topo, workload) = build(placement)?;
    let log = CallLog::new(ends.part, PARTS, ends.to_merge, ends.spent, ends.end);
    let mut runtime = Runtime::new(spec, topo, workload, CollectorOptions::default());
    runtime.record_calls(log);
    runtime.set_fast_forward(true);
    if !runtime.fast_forward() {
        return Err(ReplayError::Internal {
            reason: "a split run's part cannot run ahead".into(),
        });
    }
    Ok(runtime.run(&mut Silent)?.1)
}

/// The run's totals from its parts': each worker's figures from the part
/// that served it.
fn join_totals(parts: Vec<RunTotals>, end: SimTime, exact_limit: usize) -> RunTotals {
    let mut parts = parts.into_iter();
    let mut totals = parts.next().expect("two parts");
    for other in parts {
        for (pool, more) in totals.pools.iter_mut().zip(other.pools) {
            join_pool(pool, more);
        }
    }
    totals.end_ns = end.0;
    totals.exact_limit = exact_limit;
    totals
}

fn join_pool(pool: &mut PoolTotals, more: PoolTotals) {
    pool.workers.extend(more.workers);
    pool.workers.sort_unstable_by_key(|w| w.worker);
}

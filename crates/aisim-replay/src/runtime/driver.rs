//! The runtime seam: what every topology shares. `Front` owns admission
//! (trace and concurrency modes), sessions and their dispatch modes,
//! timeouts, the drain deadline and the collector; a `Topology` owns its
//! workers and what a pass completion means. `Runtime` runs the loop, in the
//! six steps of `replay.md`:
//! 1. take the next meaningful time (next first-turn arrival or next event);
//! 2. advance `now`;
//! 3. apply every event due at `now` in phase order (the topology's: pass
//!    completions, then transfer completions; then turns becoming due,
//!    scaling ticks, timeouts);
//! 4. dispatch the requests now due to the topology's placement;
//! 5. start a pass on every idle worker that has work;
//! 6. push the new completion events.
//!
//! It ends when nothing is left, or at the drain deadline / `max_sim_time`.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use aisim_core::{RejectReason, Request, SimDuration, SimTime};

use super::slots::Slots;
use super::ReplayObserver;
use crate::call_log as calls;
use crate::collector::{Collected, CollectorOptions, Dispatch, Outcome, TraceCollector};
use crate::error::ReplayError;
use crate::event::{EventHeap, EventKind};
use crate::report::{PoolTotals, RouterQueueTotals, RunTotals, TransferTotals};
use crate::spec::{DispatchMode, ReplaySpec, RouterQueueSpec};
use crate::workload::{ms_to_duration, Offer, Workload};

/// How often (in dispatched requests) the observer hears about progress.
const PROGRESS_EVERY: u64 = 4096;
/// Records handed to the observer at a time when streaming them: bounds what
/// `--per-request` holds (about 170 bytes a record) at any request count.
const RECORD_BATCH: usize = 4096;

/// A serving topology: its workers, how it places and queues a dispatched
/// request, and what its own events (pass and transfer completions) mean.
pub(crate) trait Topology {
    /// The earliest of the topology's own pending events.
    fn next_event(&self) -> Option<SimTime>;
    /// Applies every own event due at `front.now`, in phase order.
    fn apply_due(&mut self, front: &mut Front<'_>) -> Result<(), ReplayError>;
    /// Places a dispatched request and queues it on its worker; the inner
    /// error says why it can never be served. The request is owned unless
    /// its session still needs it (a topology that keeps it moves it then).
    fn submit(
        &mut self,
        front: &mut Front<'_>,
        req: Cow<'_, Request>,
    ) -> Result<Result<(), RejectReason>, ReplayError>;
    /// Removes a request that timed out, wherever it is.
    fn abort(&mut self, front: &mut Front<'_>, id: u64);
    /// Starts a pass on every idle worker that has work (step 5) and
    /// schedules their completions (step 6). `horizon` is the earliest time
    /// anything outside the topology can happen, when workers may run ahead
    /// to it (`None` with fast-forward off: nothing runs ahead).
    fn start_passes(
        &mut self,
        front: &mut Front<'_>,
        horizon: Option<Option<SimTime>>,
    ) -> Result<(), ReplayError>;
    /// Whether every worker requests arrive at holds at least `threshold`
    /// requests (the router queue then keeps new ones).
    fn saturated(&self, threshold: u32) -> bool;
    /// End-of-run figures of every pool, KV sampled at `end`.
    fn pools(&mut self, end: SimTime) -> Vec<PoolTotals>;
    /// KV transfers between pools, if the topology makes any.
    fn transfers(&self) -> Option<TransferTotals> {
        None
    }
    /// When the first scaling tick is due, if the topology has a scaling
    /// policy that ticks.
    fn first_tick(&self) -> Option<SimDuration> {
        None
    }
    /// A scaling tick at `front.now`; returns when the next one is due.
    fn scaling_tick(&mut self, _front: &mut Front<'_>) -> Option<SimTime> {
        None
    }
    /// Worker `worker`, started by a scaling decision, is ready.
    fn worker_ready(&mut self, _front: &mut Front<'_>, _worker: u32) {}
    /// Whether any worker holds a request (asked with a scaling policy only).
    fn holds_any(&self) -> bool {
        false
    }
}

/// Admission, sessions, timeouts, drain and the collector: the state every
/// topology drives through the same loop.
pub(crate) struct Front<'a> {
    pub spec: &'a ReplaySpec,
    workload: Box<dyn Workload>,
    /// Events outside the topology: turns due, scaling ticks, timeouts.
    heap: EventHeap,
    pub collector: TraceCollector,
    /// Offers of dispatched requests whose session may continue (only when
    /// the workload has sessions).
    in_flight: HashMap<u64, Offer>,
    keep_offers: bool,
    /// Later turns waiting for their dispatch time, with the end of the turn
    /// before (slots are reused).
    pending_turns: Slots<(Offer, SimTime)>,
    /// The router queue (`router.queue`): ids in arrival order, and their
    /// offers (a request that times out while queued leaves its offer).
    queue: VecDeque<u64>,
    queued_offers: HashMap<u64, Offer>,
    queue_totals: RouterQueueTotals,
    active_sessions: u64,
    think_fallbacks: u64,
    pub now: SimTime,
    /// The latest time anything happened (fast-forwarded passes run ahead of `now`).
    pub latest: SimTime,
    stop_at: Option<SimTime>,
    last_root_planned: SimTime,
    timeout: Option<SimDuration>,
    warmup_s: SimTime,
}

impl<'a> Front<'a> {
    fn new(
        spec: &'a ReplaySpec,
        workload: Box<dyn Workload>,
        options: CollectorOptions,
    ) -> Front<'a> {
        let d = &spec.discipline;
        Front {
            spec,
            heap: EventHeap::default(),
            collector: run_collector(spec, options),
            keep_offers: workload.may_have_sessions(),
            in_flight: HashMap::new(),
            pending_turns: Slots::default(),
            queue: VecDeque::new(),
            queued_offers: HashMap::new(),
            queue_totals: RouterQueueTotals::default(),
            active_sessions: 0,
            think_fallbacks: 0,
            now: SimTime::ZERO,
            latest: SimTime::ZERO,
            stop_at: d.max_sim_time_s.map(|s| SimTime(ms_to_duration(s * 1e3).0)),
            last_root_planned: SimTime::ZERO,
            // The client's timeout, on the engine's clock: what the engine
            // finishes later than this reaches the client after it gave up.
            timeout: d
                .timeout_s
                .map(|s| SimDuration(ms_to_duration(s * 1e3).0.saturating_sub(spec.frontend.ns()))),
            warmup_s: SimTime(ms_to_duration(d.warmup_s * 1e3).0),
            workload,
        }
    }

    /// Whether workers can be let run passes back to back between global
    /// events: only when they cannot affect one another between arrivals. No
    /// session can release a turn and no concurrency slot can free up (either
    /// would dispatch a request mid-way, which must see every worker's state
    /// at that instant).
    fn allows_fast_forward(&self) -> bool {
        self.concurrency().is_none()
            && !self.workload.may_have_sessions()
            && self.spec.router.queue.is_none()
    }

    /// The earliest time anything outside a topology can happen: the next
    /// first-turn arrival, the next non-topology event, or the stop time.
    fn horizon(&self) -> Option<SimTime> {
        [
            self.workload.peek_root(),
            self.heap.peek_time(),
            self.stop_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn concurrency(&self) -> Option<u64> {
        self.spec.admission.concurrency.map(u64::from)
    }

    /// The next time something outside the topology is due, if anything is.
    fn next_time(&self) -> Option<SimTime> {
        let arrival = match self.concurrency() {
            Some(k) => (self.active_sessions < k && self.workload.peek_root().is_some())
                .then_some(self.now),
            None => self.workload.peek_root(),
        };
        [arrival, self.heap.peek_time()].into_iter().flatten().min()
    }

    /// Schedules a non-topology event (a worker becoming ready).
    pub fn schedule(&mut self, at: SimTime, kind: EventKind) {
        self.heap.push(at, kind);
    }

    /// Whether anything is still to happen outside the workers: a request
    /// to come, a turn waiting, the router queue.
    fn work_outside(&self) -> bool {
        self.workload.peek_root().is_some()
            || self.pending_turns.len() > 0
            || !self.queue.is_empty()
    }

    /// Request `id` ended with `outcome` at `at`; false when it had ended
    /// already. Releases its session's next turn or slot.
    #[inline]
    pub fn end(&mut self, id: u64, at: SimTime, outcome: Outcome) -> bool {
        let ended = self.collector.terminal(id, at, outcome);
        if ended {
            self.on_terminal(id);
        }
        ended
    }

    /// A request ended: release its session's next turn, or its session's slot.
    pub fn on_terminal(&mut self, id: u64) {
        let next = match self.in_flight.remove(&id) {
            Some(prev) => self.workload.next_turn(prev),
            None => None,
        };
        let Some(mut next) = next else {
            self.active_sessions = self.active_sessions.saturating_sub(1);
            return;
        };
        let now = self.now;
        let think = match next.think {
            Some(t) => t,
            None => {
                if self.spec.dispatch == DispatchMode::Thinktime {
                    self.think_fallbacks += 1;
                }
                next.trace_gap.unwrap_or(SimDuration::ZERO)
            }
        };
        let (at, planned) = match self.spec.dispatch {
            DispatchMode::Thinktime => (now.after(think), now.after(think)),
            DispatchMode::Fixed(ms) => {
                let t = now.after(ms_to_duration(ms / self.spec.admission.speedup));
                (t, t)
            }
            DispatchMode::Tracets => match next.trace_at {
                Some(ts) => (ts.max(now), ts),
                None => (now.after(think), now.after(think)),
            },
        };
        next.request.arrival = planned;
        let slot = self.pending_turns.park((next, now));
        self.heap.push(at, EventKind::TurnDue { slot });
    }

    fn apply<T: Topology>(&mut self, topo: &mut T, kind: EventKind) -> Result<(), ReplayError> {
        match kind {
            EventKind::TurnDue { slot } => {
                let (offer, previous_end) = self.pending_turns.take(slot);
                self.dispatch(topo, offer, Some(previous_end))?;
            }
            EventKind::WorkerReady { worker } => topo.worker_ready(self, worker),
            EventKind::ScalingTick => {
                if let Some(next) = topo.scaling_tick(self) {
                    self.heap.push(next, EventKind::ScalingTick);
                }
            }
            EventKind::Timeout { request } => {
                if let Some(offer) = self.queued_offers.remove(&request) {
                    // Timed out in the router queue: its id stays queued
                    // and is skipped on release.
                    if self.keep_offers {
                        self.in_flight.insert(request, offer);
                    }
                    self.end(request, self.now, Outcome::TimedOut);
                } else if self.collector.in_flight(request) {
                    topo.abort(self, request);
                    self.end(request, self.now, Outcome::TimedOut);
                }
            }
            EventKind::PassComplete { .. } | EventKind::TransferComplete { .. } => {
                return Err(ReplayError::Internal {
                    reason: format!("{kind:?} reached the shared heap"),
                })
            }
        }
        Ok(())
    }

    fn dispatch_due_roots<T: Topology>(&mut self, topo: &mut T) -> Result<(), ReplayError> {
        loop {
            let due = match self.concurrency() {
                Some(k) => self.active_sessions < k && self.workload.peek_root().is_some(),
                None => self.workload.peek_root().is_some_and(|t| t <= self.now),
            };
            if !due {
                break;
            }
            let mut offer = self.workload.next_root().expect("peeked");
            if self.concurrency().is_some() {
                offer.request.arrival = self.now; // stamped at admission
            }
            self.active_sessions += 1;
            self.last_root_planned = self.last_root_planned.max(offer.request.arrival);
            self.dispatch(topo, offer, None)?;
        }
        if self.workload.peek_root().is_none() {
            if let Some(drain) = self.spec.discipline.drain_s {
                let deadline = self.last_root_planned.after(ms_to_duration(drain * 1e3));
                self.stop_at = Some(self.stop_at.map_or(deadline, |s| s.min(deadline)));
            }
        }
        Ok(())
    }

    /// Dispatches one request; `previous_end` is, for a later turn, when the
    /// turn before ended.
    fn dispatch<T: Topology>(
        &mut self,
        topo: &mut T,
        offer: Offer,
        previous_end: Option<SimTime>,
    ) -> Result<(), ReplayError> {
        let now = self.now;
        let req = &offer.request;
        let id = req.id.0;
        let d = &self.spec.discipline;
        let dispatched = self.collector.dispatched_count();
        if let Some(log) = self.collector.log() {
            log.begin(calls::key(now, calls::DISPATCH, dispatched));
            log.note_remaining(self.workload.remaining());
        }
        let in_cohort = req.arrival >= self.warmup_s && dispatched >= d.warmup_requests;
        self.collector.dispatched(Dispatch {
            id,
            session: req.session.map(|s| s.0),
            turn: offer.turn,
            planned: req.arrival,
            dispatch: now,
            trace_gap: offer.trace_gap,
            input_length: req.input_length,
            output_length: req.output_length,
            in_cohort,
            previous_end,
        });
        if let Some(q) = self.spec.router.queue {
            if !self.queue.is_empty() || topo.saturated(q.threshold) {
                return self.enqueue(offer, q);
            }
        }
        self.place(topo, offer, false)
    }

    /// Puts a dispatched request in the router queue, or rejects it when the
    /// queue is full.
    fn enqueue(&mut self, offer: Offer, q: RouterQueueSpec) -> Result<(), ReplayError> {
        let id = offer.request.id.0;
        if self.queue.len() as u64 >= u64::from(q.capacity) {
            if self.keep_offers {
                self.in_flight.insert(id, offer);
            }
            let len = self.queue.len();
            self.collector.refused(id, self.now, crate::tally::ROUTER_QUEUE_FULL, || {
                format!(
                    "every worker held {} or more requests and the router queue was full ({len} of {})",
                    q.threshold, q.capacity
                )
            });
            self.on_terminal(id);
            return Ok(());
        }
        self.arm_timeout(id, offer.request.arrival);
        self.queue.push_back(id);
        self.queued_offers.insert(id, offer);
        self.queue_totals.queued += 1;
        self.queue_totals.peak = self.queue_totals.peak.max(self.queue.len() as u64);
        Ok(())
    }

    /// Schedules request `id`'s timeout, if the run has one: its arrival
    /// plus the timeout, and never before now.
    fn arm_timeout(&mut self, id: u64, arrival: SimTime) {
        if let Some(t) = self.timeout {
            let deadline = arrival.after(t).max(self.now);
            self.heap.push(deadline, EventKind::Timeout { request: id });
        }
    }

    /// Places queued requests, in order, while a worker is below the
    /// threshold.
    fn release_queued<T: Topology>(&mut self, topo: &mut T) -> Result<(), ReplayError> {
        let Some(q) = self.spec.router.queue else {
            return Ok(());
        };
        while let Some(&id) = self.queue.front() {
            let Some(offer) = self.queued_offers.remove(&id) else {
                self.queue.pop_front(); // timed out while queued
                continue;
            };
            if topo.saturated(q.threshold) {
                self.queued_offers.insert(id, offer);
                break;
            }
            self.queue.pop_front();
            self.place(topo, offer, true)?;
        }
        Ok(())
    }

    /// Hands a dispatched request to the topology; `queued` when it waited
    /// in the router queue (its timeout is set already).
    fn place<T: Topology>(
        &mut self,
        topo: &mut T,
        offer: Offer,
        queued: bool,
    ) -> Result<(), ReplayError> {
        let now = self.now;
        let (id, arrival) = (offer.request.id.0, offer.request.arrival);
        let added = if self.keep_offers {
            let added = topo.submit(self, Cow::Borrowed(&offer.request))?;
            self.in_flight.insert(id, offer);
            added
        } else {
            topo.submit(self, Cow::Owned(offer.request))?
        };
        if added.is_ok() && !queued {
            self.arm_timeout(id, arrival);
        }
        if let Err(reason) = added {
            self.collector.rejected(id, now, &reason);
            self.on_terminal(id);
        }
        Ok(())
    }
}

/// The collector of a run of `spec`, set up by `options`.
pub(crate) fn run_collector(spec: &ReplaySpec, options: CollectorOptions) -> TraceCollector {
    let d = &spec.discipline;
    TraceCollector::new(CollectorOptions {
        // Without a timeout, drain or stop time every dispatched request that
        // is not rejected completes, so token gaps can be pooled at once.
        every_request_completes: d.timeout_s.is_none()
            && d.drain_s.is_none()
            && d.max_sim_time_s.is_none(),
        sla: spec.sla.clone(),
        frontend_ns: spec.frontend.ns(),
        ..options
    })
}

/// The loop over one topology.
pub(crate) struct Runtime<'a, T: Topology> {
    front: Front<'a>,
    topo: T,
    /// Whether workers may run several passes in a row without going through
    /// the heap (see `Topology::start_passes`).
    fast_forward: bool,
    /// Hand ended requests' records to the observer as the run goes
    /// (`ReplayObserver::records`) instead of keeping them all.
    stream_records: bool,
}

impl<'a, T: Topology> Runtime<'a, T> {
    /// A runtime over `topo`, with the collector set up by `options`.
    pub fn new(
        spec: &'a ReplaySpec,
        topo: T,
        workload: Box<dyn Workload>,
        options: CollectorOptions,
    ) -> Runtime<'a, T> {
        Runtime {
            front: Front::new(spec, workload, options),
            topo,
            fast_forward: false,
            stream_records: false,
        }
    }

    /// Records the collector's calls in `log` instead of making them (a part
    /// of a split run, see `split.rs`).
    pub fn record_calls(&mut self, log: crate::call_log::CallLog) {
        self.front.collector = TraceCollector::recording(log);
    }

    /// Hands records to the observer as requests end.
    pub fn set_stream_records(&mut self, on: bool) {
        self.stream_records = on;
    }

    /// Lets workers run passes back to back between global events, when the
    /// workload allows it (`Front::allows_fast_forward`). Results are
    /// identical either way; only the order in which independent workers'
    /// passes are processed changes.
    pub fn set_fast_forward(&mut self, on: bool) {
        // With a scaling policy, a draining worker must stop when its last
        // pass ends: passes go through the heap.
        self.fast_forward =
            on && self.front.allows_fast_forward() && self.topo.first_tick().is_none();
    }

    pub fn run(
        mut self,
        observer: &mut dyn ReplayObserver,
    ) -> Result<(Collected, RunTotals), ReplayError> {
        let mut checks = StepChecks::new(self.stream_records);
        // A caller's cancel flag (aisim_core::cancel), checked between passes.
        let cancel = aisim_core::cancel::current();
        let front = &mut self.front;
        let topo = &mut self.topo;
        let scaling = topo.first_tick();
        if let Some(first) = scaling {
            front
                .heap
                .push(SimTime::ZERO.after(first), EventKind::ScalingTick);
            front.collector.track_recent_latency();
        }
        while let Some(t) = next_time(front, topo) {
            if aisim_core::cancel::is_set(&cancel) {
                return Err(ReplayError::Cancelled);
            }
            // With a scaling policy, ticks would go on forever: the run ends
            // when no request is left anywhere.
            if scaling.is_some() && !front.work_outside() && !topo.holds_any() {
                break;
            }
            if front.stop_at.is_some_and(|s| t > s) {
                front.now = front.stop_at.expect("checked");
                break;
            }
            front.now = t;
            topo.apply_due(front)?;
            while let Some(ev) = front.heap.pop_due(front.now) {
                front.apply(topo, ev.kind)?;
            }
            front.release_queued(topo)?;
            front.dispatch_due_roots(topo)?;
            let horizon = self.fast_forward.then(|| front.horizon());
            topo.start_passes(front, horizon)?;
            let workload = &front.workload;
            checks.after_step(&mut front.collector, observer, || workload.remaining())?;
        }
        observer.finished();
        let mut front = self.front;
        if let Some(e) = front.workload.take_failure() {
            return Err(e);
        }
        let mut end = front.now.max(front.latest);
        if let Some(log) = front.collector.log() {
            // A part of a split run: the run ends when its last part does.
            end = log.agree_end(end).ok_or(ReplayError::Cancelled)?;
        }
        let not_offered = front.workload.remaining() + front.pending_turns.len() as u64;
        let totals = RunTotals {
            end_ns: end.0,
            not_offered,
            skipped_rows: front.workload.skipped_rows(),
            notes: front.workload.notes(),
            think_time_fallbacks: front.think_fallbacks,
            pools: self.topo.pools(end),
            transfer: self.topo.transfers(),
            router_queue: front.spec.router.queue.map(|_| front.queue_totals),
            exact_limit: front.collector.exact_limit(),
            source: String::new(),
            policies: Default::default(),
        };
        let collected = hand_over(front.collector, self.stream_records, observer, end)?;
        Ok((collected, totals))
    }

    /// Whether workers run ahead between global events (see `set_fast_forward`).
    pub fn fast_forward(&self) -> bool {
        self.fast_forward
    }
}

/// The collector's results at the run's `end`; with `stream`, the records
/// still held go to the observer (the ended ones, then those in flight).
pub(crate) fn hand_over(
    mut collector: TraceCollector,
    stream: bool,
    observer: &mut dyn ReplayObserver,
    end: SimTime,
) -> Result<Collected, ReplayError> {
    if !stream {
        return Ok(collector.finish(end.0));
    }
    observer
        .records(&collector.take_ended())
        .map_err(ReplayError::Output)?;
    let mut collected = collector.finish(end.0);
    observer
        .records(&std::mem::take(&mut collected.records))
        .map_err(ReplayError::Output)?;
    Ok(collected)
}

/// The checks the loop makes after each step: streams ended records once a
/// batch of them is held, and reports progress now and then.
pub(crate) struct StepChecks {
    stream_records: bool,
    last_progress: u64,
}

impl StepChecks {
    pub fn new(stream_records: bool) -> StepChecks {
        StepChecks {
            stream_records,
            last_progress: 0,
        }
    }

    /// After a step: `remaining` requests are still to be offered.
    pub fn after_step(
        &mut self,
        collector: &mut TraceCollector,
        observer: &mut dyn ReplayObserver,
        remaining: impl FnOnce() -> u64,
    ) -> Result<(), ReplayError> {
        if self.stream_records && collector.ended_held() >= RECORD_BATCH {
            observer
                .records(&collector.take_ended())
                .map_err(ReplayError::Output)?;
        }
        let n = collector.dispatched_count();
        if n >= self.last_progress + PROGRESS_EVERY {
            self.last_progress = n;
            observer.progress(n, remaining());
        }
        Ok(())
    }
}

/// Step 1: the next time anything is due, in the front or the topology.
fn next_time<T: Topology>(front: &Front<'_>, topo: &T) -> Option<SimTime> {
    [front.next_time(), topo.next_event()]
        .into_iter()
        .flatten()
        .min()
}

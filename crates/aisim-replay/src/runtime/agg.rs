//! The aggregated runtime: N identical workers, each one engine.
//!
//! The loop, in the six steps of `replay.md`:
//! 1. take the next meaningful time (next first-turn arrival or next event);
//! 2. advance `now`;
//! 3. apply every event due at `now` in phase order (pass completions, turns
//!    becoming due, scaling ticks, timeouts);
//! 4. dispatch the requests now due to the placement policy;
//! 5. start a pass on every idle worker that has work;
//! 6. push the new completion events.
//!
//! It ends when nothing is left, or at the drain deadline / `max_sim_time`.

use std::collections::HashMap;

use aisim_core::{DecodeSink, EngineEvent, PassOutcome, RequestId, SimDuration, SimTime};

use super::workers::{KvSampler, Workers};
use super::ReplayObserver;
use crate::collector::{Collected, CollectorOptions, Dispatch, Outcome, TraceCollector};
use crate::error::ReplayError;
use crate::event::{EventHeap, EventKind};
use crate::policy::PlacementPolicy;
use crate::report::RunTotals;
use crate::spec::{DispatchMode, ReplaySpec};
use crate::workload::{ms_to_duration, Offer, Workload};

/// How often (in dispatched requests) the observer hears about progress.
const PROGRESS_EVERY: u64 = 4096;
/// Records handed to the observer at a time when streaming them: bounds what
/// `--per-request` holds (about 170 bytes a record) at any request count.
const RECORD_BATCH: usize = 4096;

/// Takes a worker's decode-pass run (`Engine::run_decode_passes`) into the
/// collector exactly as `AggRuntime::finish_pass` would, pass by pass.
struct DecodeRun<'a> {
    collector: &'a mut TraceCollector,
    kv: &'a mut KvSampler,
    completed: &'a mut Vec<u64>,
    latest: SimTime,
    /// Tokens of the pass under way (for the time series).
    tokens: u64,
}

impl DecodeSink for DecodeRun<'_> {
    fn token(&mut self, id: RequestId, at: SimTime) {
        self.tokens += 1;
        self.collector.token(id.0, at);
    }
    fn completed(&mut self, id: RequestId, at: SimTime) {
        if self.collector.terminal(id.0, at, Outcome::Completed) {
            self.completed.push(id.0);
        }
    }
    fn pass(&mut self, start: SimTime, end: SimTime, kv_during: u32, kv_after: u32) {
        // The samples `start_passes` and `finish_pass` take, in their order.
        self.kv.sample(start, kv_during as u64);
        self.latest = self.latest.max(end);
        self.kv
            .sample_emitted(end, kv_after as u64, std::mem::take(&mut self.tokens));
    }
    fn quiet(&mut self, ids: &[RequestId], start: SimTime, ends: &[SimTime], kv: u32) {
        // The collector's state does not depend on how its token calls
        // interleave across requests, nor the KV samples on the tokens.
        if let Some(&last) = ends.last() {
            self.kv
                .sample_passes(start, ends, kv as u64, ids.len() as u64);
            self.latest = self.latest.max(last);
        }
        for id in ids {
            self.collector.tokens(id.0, ends);
        }
    }
}

/// The aggregated event loop and its state.
pub(crate) struct AggRuntime<'a> {
    spec: &'a ReplaySpec,
    workers: Workers,
    workload: Box<dyn Workload>,
    placement: Box<dyn PlacementPolicy>,
    /// Pass completions (the first phase at any time).
    passes: EventHeap,
    /// Every other event: turns due, scaling ticks, timeouts.
    heap: EventHeap,
    /// Whether a worker may run several passes in a row without going through
    /// the heap (see `fast_forward_horizon`).
    fast_forward: bool,
    /// Hand ended requests' records to the observer as the run goes
    /// (`ReplayObserver::records`) instead of keeping them all.
    stream_records: bool,
    collector: TraceCollector,
    out: PassOutcome,
    /// Requests completed by the current decode-pass run.
    decode_completed: Vec<u64>,
    dirty: Vec<u32>,
    /// The previous `dirty` list, kept for its capacity.
    dirty_spare: Vec<u32>,
    /// Offers of dispatched requests whose session may continue (only when
    /// the workload has sessions).
    in_flight: HashMap<u64, Offer>,
    keep_offers: bool,
    /// Later turns waiting for their dispatch time, with the end of the turn
    /// before (slots are reused).
    pending_turns: Vec<Option<(Offer, SimTime)>>,
    free_turn_slots: Vec<u32>,
    active_sessions: u64,
    think_fallbacks: u64,
    now: SimTime,
    /// The latest time anything happened (fast-forwarded passes run ahead of `now`).
    latest: SimTime,
    stop_at: Option<SimTime>,
    last_root_planned: SimTime,
    timeout: Option<SimDuration>,
    warmup_s: SimTime,
}

impl<'a> AggRuntime<'a> {
    /// A runtime over `workers`, with the collector set up by `options`.
    pub fn new(
        spec: &'a ReplaySpec,
        workers: Workers,
        workload: Box<dyn Workload>,
        placement: Box<dyn PlacementPolicy>,
        options: CollectorOptions,
    ) -> AggRuntime<'a> {
        let d = &spec.discipline;
        AggRuntime {
            spec,
            workers,
            placement,
            passes: EventHeap::default(),
            heap: EventHeap::default(),
            fast_forward: false,
            stream_records: false,
            // Without a timeout, drain or stop time every dispatched request that
            // is not rejected completes, so token gaps can be pooled at once.
            collector: TraceCollector::new(CollectorOptions {
                every_request_completes: d.timeout_s.is_none()
                    && d.drain_s.is_none()
                    && d.max_sim_time_s.is_none(),
                sla: spec.sla.clone(),
                ..options
            }),
            out: PassOutcome::default(),
            decode_completed: Vec::new(),
            dirty: Vec::new(),
            dirty_spare: Vec::new(),
            keep_offers: workload.may_have_sessions(),
            in_flight: HashMap::new(),
            pending_turns: Vec::new(),
            free_turn_slots: Vec::new(),
            active_sessions: 0,
            think_fallbacks: 0,
            now: SimTime::ZERO,
            latest: SimTime::ZERO,
            stop_at: d.max_sim_time_s.map(|s| SimTime(ms_to_duration(s * 1e3).0)),
            last_root_planned: SimTime::ZERO,
            timeout: d.timeout_s.map(|s| ms_to_duration(s * 1e3)),
            warmup_s: SimTime(ms_to_duration(d.warmup_s * 1e3).0),
            workload,
        }
    }

    /// Lets workers run passes back to back between global events. Only
    /// possible when workers cannot affect one another between arrivals: no
    /// session can release a turn and no concurrency slot can free up (either
    /// would dispatch a request mid-way, which must see every worker's state at
    /// that instant). Results are identical either way; only the order in
    /// which independent workers' passes are processed changes.
    pub fn set_stream_records(&mut self, on: bool) {
        self.stream_records = on;
    }

    pub fn set_fast_forward(&mut self, on: bool) {
        self.fast_forward =
            on && self.concurrency().is_none() && !self.workload.may_have_sessions();
    }

    /// The earliest time anything outside a worker can happen: the next
    /// first-turn arrival, the next non-pass event, or the stop time.
    fn fast_forward_horizon(&self) -> Option<SimTime> {
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

    /// The next time something is due, if anything is.
    fn next_time(&self) -> Option<SimTime> {
        let arrival = match self.concurrency() {
            Some(k) => (self.active_sessions < k && self.workload.peek_root().is_some())
                .then_some(self.now),
            None => self.workload.peek_root(),
        };
        [arrival, self.passes.peek_time(), self.heap.peek_time()]
            .into_iter()
            .flatten()
            .min()
    }

    pub fn run(
        mut self,
        observer: &mut dyn ReplayObserver,
    ) -> Result<(Collected, RunTotals), ReplayError> {
        let mut last_progress = 0;
        while let Some(t) = self.next_time() {
            if self.stop_at.is_some_and(|s| t > s) {
                self.now = self.stop_at.expect("checked");
                break;
            }
            self.now = t;
            while let Some(ev) = self.passes.pop_due(self.now) {
                self.apply(ev.kind)?;
            }
            while let Some(ev) = self.heap.pop_due(self.now) {
                self.apply(ev.kind)?;
            }
            self.dispatch_due_roots()?;
            self.start_passes()?;
            if self.stream_records && self.collector.ended_held() >= RECORD_BATCH {
                observer
                    .records(&self.collector.take_ended())
                    .map_err(ReplayError::Output)?;
            }
            let n = self.collector.dispatched_count();
            if n >= last_progress + PROGRESS_EVERY {
                last_progress = n;
                observer.progress(n, self.workload.remaining());
            }
        }
        observer.finished();
        if let Some(e) = self.workload.take_failure() {
            return Err(e);
        }
        let end = self.now.max(self.latest);
        let not_offered =
            self.workload.remaining() + self.pending_turns.iter().flatten().count() as u64;
        let workers = self.workers.totals(end);
        let totals = RunTotals {
            end_ns: end.0,
            not_offered,
            skipped_rows: self.workload.skipped_rows(),
            notes: self.workload.notes(),
            think_time_fallbacks: self.think_fallbacks,
            workers,
            worker_count: self.workers.count(),
            kv_capacity_per_worker: self.workers.kv_capacity(),
            exact_limit: self.collector.exact_limit(),
            gpus_per_worker: self.spec.engine.dp_size * self.spec.engine.tp_size,
            source: String::new(),
        };
        if !self.stream_records {
            return Ok((self.collector.finish(end.0), totals));
        }
        observer
            .records(&self.collector.take_ended())
            .map_err(ReplayError::Output)?;
        let mut collected = self.collector.finish(end.0);
        observer
            .records(&std::mem::take(&mut collected.records))
            .map_err(ReplayError::Output)?;
        Ok((collected, totals))
    }

    fn apply(&mut self, kind: EventKind) -> Result<(), ReplayError> {
        match kind {
            EventKind::PassComplete { worker } => self.finish_pass(worker),
            EventKind::TurnDue { slot } => {
                let (offer, previous_end) = self.pending_turns[slot as usize]
                    .take()
                    .expect("turn slot is filled");
                self.free_turn_slots.push(slot);
                self.dispatch(offer, Some(previous_end))?;
            }
            EventKind::ScalingTick => {}
            EventKind::Timeout { request } => {
                if let Some(worker) = self.collector.worker_of(request) {
                    self.workers
                        .get_mut(worker)
                        .engine
                        .abort(aisim_core::RequestId(request));
                    self.mark_dirty(worker);
                    self.collector
                        .terminal(request, self.now, Outcome::TimedOut);
                    self.on_terminal(request);
                }
            }
        }
        Ok(())
    }

    fn finish_pass(&mut self, w: u32) {
        let now = self.now;
        self.latest = self.latest.max(now);
        let worker = self.workers.get_mut(w);
        worker.engine.finish_pass(&mut self.out);
        worker.busy = false;
        let pass_start = worker.pass_start;
        let mut out = std::mem::take(&mut self.out);
        let mut tokens = 0;
        for ev in out.events.drain(..) {
            match ev {
                EngineEvent::Token { id, .. } => {
                    tokens += 1;
                    self.collector.token(id.0, now);
                }
                EngineEvent::Admitted {
                    id,
                    reused_tokens,
                    readmission,
                } => self
                    .collector
                    .admitted(id.0, pass_start, reused_tokens, readmission),
                EngineEvent::Preempted { id } => self.collector.preempted(id.0),
                EngineEvent::Completed { id } => {
                    if self.collector.terminal(id.0, now, Outcome::Completed) {
                        self.on_terminal(id.0);
                    }
                }
            }
        }
        out.clear();
        self.out = out;
        self.workers.get_mut(w).sample_kv_emitted(now, tokens);
        self.mark_dirty(w);
    }

    fn mark_dirty(&mut self, w: u32) {
        let worker = self.workers.get_mut(w);
        if !worker.dirty {
            worker.dirty = true;
            self.dirty.push(w);
        }
    }

    fn dispatch_due_roots(&mut self) -> Result<(), ReplayError> {
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
            self.dispatch(offer, None)?;
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
    fn dispatch(&mut self, offer: Offer, previous_end: Option<SimTime>) -> Result<(), ReplayError> {
        let now = self.now;
        let req = &offer.request;
        let id = req.id.0;
        let d = &self.spec.discipline;
        let in_cohort =
            req.arrival >= self.warmup_s && self.collector.dispatched_count() >= d.warmup_requests;
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
        let placement = self.placement.place(req, &self.workers.view());
        self.collector.placed(id, placement.worker, placement.rank);
        let worker = self.workers.materialise(placement.worker)?;
        let added = worker.engine.add_request(req, placement.rank as usize);
        if added.is_ok() {
            if let Some(t) = self.timeout {
                let deadline = offer.request.arrival.after(t).max(now);
                self.heap.push(deadline, EventKind::Timeout { request: id });
            }
            self.mark_dirty(placement.worker);
        }
        if self.keep_offers {
            self.in_flight.insert(id, offer);
        }
        if let Err(reason) = added {
            self.collector.rejected(id, now, &reason);
            self.on_terminal(id);
        }
        Ok(())
    }

    /// A request ended: release its session's next turn, or its session's slot.
    fn on_terminal(&mut self, id: u64) {
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
        let slot = match self.free_turn_slots.pop() {
            Some(s) => {
                self.pending_turns[s as usize] = Some((next, now));
                s
            }
            None => {
                self.pending_turns.push(Some((next, now)));
                self.pending_turns.len() as u32 - 1
            }
        };
        self.heap.push(at, EventKind::TurnDue { slot });
    }

    fn start_passes(&mut self) -> Result<(), ReplayError> {
        let now = self.now;
        let horizon = if self.fast_forward {
            self.fast_forward_horizon()
        } else {
            Some(SimTime::ZERO)
        };
        let spare = std::mem::take(&mut self.dirty_spare);
        let mut dirty = std::mem::replace(&mut self.dirty, spare);
        for &w in &dirty {
            let mut at = now;
            loop {
                let worker = self.workers.get_mut(w);
                worker.dirty = false;
                if worker.busy || !worker.engine.has_work() {
                    break;
                }
                if self.fast_forward {
                    at = self.run_decode_passes(w, at, horizon)?;
                    let worker = self.workers.get_mut(w);
                    if !worker.engine.has_work() {
                        break;
                    }
                }
                let worker = self.workers.get_mut(w);
                let Some(d) = worker.engine.start_pass(at)? else {
                    return Err(Self::stalled(w, at));
                };
                worker.busy = true;
                worker.pass_start = at;
                worker.sample_kv(at);
                let end = at.after(d);
                if horizon.is_none_or(|h| end < h) {
                    // Nothing outside this worker happens before `end`: finish
                    // the pass now and go on with the next one.
                    self.now = end;
                    self.finish_pass(w);
                    at = end;
                } else {
                    self.passes.push(end, EventKind::PassComplete { worker: w });
                    break;
                }
            }
        }
        self.now = now;
        // Workers finished by fast-forward marked themselves dirty again; they
        // are either busy now or idle without work.
        for &w in &self.dirty {
            self.workers.get_mut(w).dirty = false;
        }
        self.dirty.clear();
        dirty.clear();
        self.dirty_spare = dirty;
        Ok(())
    }

    /// Runs worker `w`'s pure decode passes from `at` that end before the
    /// horizon, straight into the collector; returns when the last one ended.
    fn run_decode_passes(
        &mut self,
        w: u32,
        at: SimTime,
        horizon: Option<SimTime>,
    ) -> Result<SimTime, ReplayError> {
        let worker = self.workers.get_mut(w);
        let mut run = DecodeRun {
            collector: &mut self.collector,
            kv: &mut worker.kv,
            completed: &mut self.decode_completed,
            latest: self.latest,
            tokens: 0,
        };
        let end = worker.engine.run_decode_passes(at, horizon, &mut run)?;
        self.latest = run.latest;
        // No sessions while fast-forwarding, so the order in which ended
        // requests release their slots cannot matter.
        let mut completed = std::mem::take(&mut self.decode_completed);
        for id in completed.drain(..) {
            self.on_terminal(id);
        }
        self.decode_completed = completed;
        Ok(end)
    }

    fn stalled(w: u32, at: SimTime) -> ReplayError {
        ReplayError::Internal {
            reason: format!(
                "worker {w} has queued requests but could schedule none at t = {} s",
                at.as_secs_f64()
            ),
        }
    }
}

//! `Pool`: one pool of workers driven pass by pass, shared by the
//! topologies. It starts passes (running a worker's pure decode passes back
//! to back when nothing outside can intervene), applies pass completions
//! into the collector, and feeds the placement policy KV events when it asks.

use aisim_core::{
    DecodeSink, EngineConfig, EngineEvent, PassOutcome, RejectReason, Request, RequestId, SimTime,
};

use super::driver::Front;
use super::workers::{KvSampler, Workers};
use crate::call_log as calls;
use crate::collector::{Outcome, TraceCollector};
use crate::error::ReplayError;
use crate::event::{EventHeap, EventKind};
use crate::policy::{deliver_kv_events, place_checked, Placement, PlacementPolicy};
use crate::report::PoolTotals;

/// What a pool's engines do with a request, and so what their events mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The whole request: its tokens and completion are the request's.
    Whole,
    /// Its prompt, as a hidden one-token job whose blocks stay held: the
    /// token is not the request's; the completion hands it off.
    Prefill,
    /// Its decode, with the prompt's KV present: the admission is not the
    /// request's first (prefill's was).
    Decode,
}

/// How a request enters an engine (see `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// As it is.
    Whole,
    /// As the hidden one-token prefill job that holds its blocks.
    PrefillJob,
    /// With its prompt's KV transferred in.
    Transferred,
}

/// Takes a worker's decode-pass run (`Engine::run_decode_passes`) into the
/// collector exactly as `Pool::finish_pass` would, pass by pass.
struct DecodeRun<'a> {
    collector: &'a mut TraceCollector,
    kv: &'a mut KvSampler,
    completed: &'a mut Vec<u64>,
    latest: SimTime,
    /// Requests that emitted a token at `pass_end` in the pass under way,
    /// not yet given to the collector (their tokens go in together, before
    /// any request ends, so that the collector sees the pass's gaps whole).
    pass_ids: &'a mut Vec<RequestId>,
    /// The start of the pass under way (the previous one's end).
    pass_start: SimTime,
    pass_end: SimTime,
    /// Tokens of the pass under way (for the time series).
    tokens: u64,
}

impl DecodeRun<'_> {
    /// Gives the pass's tokens so far to the collector.
    fn flush(&mut self) {
        if !self.pass_ids.is_empty() {
            self.collector
                .tokens_of_passes(self.pass_ids, self.pass_start, &[self.pass_end]);
            self.pass_ids.clear();
        }
    }
}

impl DecodeSink for DecodeRun<'_> {
    fn token(&mut self, id: RequestId, at: SimTime) {
        self.tokens += 1;
        self.pass_ids.push(id);
        self.pass_end = at;
    }
    fn completed(&mut self, id: RequestId, at: SimTime) {
        self.flush();
        if self.collector.terminal(id.0, at, Outcome::Completed) {
            self.completed.push(id.0);
        }
    }
    fn pass(&mut self, start: SimTime, end: SimTime, kv_during: u32, kv_after: u32) {
        self.flush();
        self.pass_start = end;
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
            self.pass_start = last;
        }
        self.collector.tokens_of_passes(ids, start, ends);
    }
}

/// One pool and its pass completions.
pub(crate) struct Pool {
    name: &'static str,
    role: Role,
    gpus_per_worker: u32,
    kv_block_size: u32,
    /// Added to a worker's index in its events, so pools share an order.
    event_base: u32,
    pub workers: Workers,
    /// Pass completions (the first phase at any time).
    pub passes: EventHeap,
    out: PassOutcome,
    /// Whether the placement policy gets the engines' KV events.
    kv_events: bool,
    /// Requests completed by the current decode-pass run.
    decode_completed: Vec<u64>,
    /// The current decode pass's requests with a token (see `DecodeRun`).
    pass_ids: Vec<RequestId>,
    dirty: Vec<u32>,
    /// The previous `dirty` list, kept for its capacity.
    dirty_spare: Vec<u32>,
    /// Prefill role: (worker, request) whose job ended, in order, for the
    /// topology to hand off.
    pub prefilled: Vec<(u32, u64)>,
    /// Per worker, KV transfers under way from or to it (disaggregated
    /// pools; grown on first use).
    transfers: Vec<u32>,
    /// In a part of a split run: the call-log segment under way, which
    /// orders the workers it wakes (see `call_log.rs`).
    pub segment: u128,
}

impl Pool {
    /// A pool named `name` (as the report shows it) of `workers` running
    /// `engine`.
    pub fn new(
        name: &'static str,
        role: Role,
        event_base: u32,
        workers: Workers,
        engine: &EngineConfig,
    ) -> Pool {
        Pool {
            name,
            role,
            gpus_per_worker: engine.dp_size * engine.tp_size,
            kv_block_size: engine.effective_block_size(),
            event_base,
            workers,
            passes: EventHeap::default(),
            out: PassOutcome::default(),
            kv_events: false,
            decode_completed: Vec::new(),
            pass_ids: Vec::new(),
            dirty: Vec::new(),
            dirty_spare: Vec::new(),
            prefilled: Vec::new(),
            transfers: Vec::new(),
            segment: 0,
        }
    }

    /// A KV transfer from or to worker `w` started.
    pub fn transfer_started(&mut self, w: u32) {
        let w = w as usize;
        if self.transfers.len() <= w {
            self.transfers.resize(w + 1, 0);
        }
        self.transfers[w] += 1;
    }

    /// A KV transfer from or to worker `w` ended.
    pub fn transfer_ended(&mut self, w: u32) {
        self.transfers[w as usize] -= 1;
    }

    fn transfers_of(&self, w: u32) -> u32 {
        self.transfers.get(w as usize).copied().unwrap_or(0)
    }

    /// Requests worker `w` holds, running and waiting, a transfer under way
    /// from or to it counting as one.
    pub fn held(&self, w: u32) -> u32 {
        self.workers.holding(w).0 + self.transfers_of(w)
    }

    /// Whether worker `w` holds no request, runs no pass and has no
    /// transfer under way: a draining worker then stops.
    pub fn idle(&self, w: u32) -> bool {
        self.workers.holding(w) == (0, false) && self.transfers_of(w) == 0
    }

    /// Engines capture KV events for the placement policy (`on`), or not.
    pub fn capture_kv_events(&mut self, on: bool) {
        self.kv_events = on;
        self.workers.capture_kv_events(on);
    }

    /// The earliest pass completion.
    pub fn next_event(&self) -> Option<SimTime> {
        self.passes.peek_time()
    }

    /// Whether every worker holds at least `threshold` requests.
    pub fn saturated(&self, threshold: u32) -> bool {
        self.workers.all_hold(threshold)
    }

    /// The worker of one of this pool's pass events.
    pub fn local(&self, event_worker: u32) -> u32 {
        event_worker - self.event_base
    }

    /// Worker `w`'s index in events (see `local`).
    pub fn event_index(&self, w: u32) -> u32 {
        self.event_base + w
    }

    /// What the pool's engines do.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Where `placement` puts `req`, checked against the pool (out of it is
    /// `ReplayError::Placement`, the policy's bug).
    pub fn place(
        &self,
        placement: &mut dyn PlacementPolicy,
        req: &Request,
    ) -> Result<Placement, ReplayError> {
        place_checked(placement, req, &self.workers.view(), self.name)
    }

    /// Where `placement` puts a request as it arrives, recorded as its worker
    /// (with the prompt tokens the policy expected cached there, if it guessed).
    pub fn place_arrival(
        &self,
        front: &mut Front<'_>,
        placement: &mut dyn PlacementPolicy,
        req: &Request,
    ) -> Result<Placement, ReplayError> {
        let at = self.place(placement, req)?;
        front.collector.placed(req.id.0, at.worker, at.rank);
        if let Some(tokens) = at.expected_cached_tokens {
            front.collector.expected_cached(req.id.0, tokens);
        }
        Ok(at)
    }

    /// Queues `req` on the placed worker as `entry` says; the inner error
    /// says why it can never be served there.
    pub fn add(
        &mut self,
        at: Placement,
        req: &Request,
        entry: Entry,
    ) -> Result<Result<(), RejectReason>, ReplayError> {
        let worker = self.workers.materialise(at.worker)?;
        let rank = at.rank as usize;
        let added = match entry {
            Entry::Whole => worker.engine.add_request(req, rank),
            Entry::PrefillJob => worker.engine.add_prefill_job(req, rank)?,
            Entry::Transferred => worker.engine.add_transferred(req, rank)?,
        };
        if added.is_ok() {
            self.mark_dirty(at.worker);
        }
        Ok(added)
    }

    /// Removes request `id` from worker `w` wherever it is (a timeout).
    pub fn abort(&mut self, w: u32, id: u64) {
        if let Some(worker) = self.workers.get_used_mut(w) {
            if worker.engine.abort(RequestId(id)) {
                self.mark_dirty(w);
            }
        }
    }

    /// Frees the blocks worker `w` held for `id`'s transfer.
    pub fn release_held(&mut self, w: u32, id: u64, now: SimTime) {
        let worker = self.workers.get_mut(w);
        if worker.engine.release_held(RequestId(id)) {
            worker.sample_kv(now);
            self.mark_dirty(w);
        }
    }

    /// Applies worker `w`'s pass, which ends at `front.now`.
    pub fn finish_pass(
        &mut self,
        front: &mut Front<'_>,
        w: u32,
        placement: &mut dyn PlacementPolicy,
    ) {
        let now = front.now;
        front.latest = front.latest.max(now);
        let worker = self.workers.get_mut(w);
        worker.engine.finish_pass(&mut self.out);
        worker.busy = false;
        let pass_start = worker.pass_start;
        let mut out = std::mem::take(&mut self.out);
        // Output tokens the pass emitted (a prefill job's hidden one is not),
        // handed to the collector together up to the next other event (see
        // `DecodeRun`).
        let mut tokens = 0;
        let mut ids = std::mem::take(&mut self.pass_ids);
        let flush = |ids: &mut Vec<RequestId>, front: &mut Front<'_>| {
            if !ids.is_empty() {
                front.collector.tokens_of_passes(ids, pass_start, &[now]);
                ids.clear();
            }
        };
        for ev in out.events.drain(..) {
            if !matches!(ev, EngineEvent::Token { .. }) {
                flush(&mut ids, front);
            }
            match ev {
                EngineEvent::Token { id, .. } => {
                    if self.role != Role::Prefill {
                        tokens += 1;
                        ids.push(id);
                    }
                }
                EngineEvent::Admitted {
                    id,
                    reused_tokens,
                    readmission,
                } => {
                    if self.role != Role::Decode {
                        front
                            .collector
                            .admitted(id.0, pass_start, reused_tokens, readmission);
                    }
                }
                EngineEvent::Preempted { id } => front.collector.preempted(id.0),
                EngineEvent::Completed { id } => match self.role {
                    Role::Prefill => self.prefilled.push((w, id.0)),
                    Role::Whole | Role::Decode => {
                        front.end(id.0, now, Outcome::Completed);
                    }
                },
            }
        }
        flush(&mut ids, front);
        self.pass_ids = ids;
        if self.kv_events {
            deliver_kv_events(placement, w, &out);
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
            worker.woke = self.segment;
            self.dirty.push(w);
        }
    }

    /// Starts a pass on every idle worker with work. With a `horizon`
    /// (fast-forward on), a worker whose pass ends before it finishes that
    /// pass at once and goes on, pure decode passes in one go.
    pub fn start_passes(
        &mut self,
        front: &mut Front<'_>,
        horizon: Option<Option<SimTime>>,
        placement: &mut dyn PlacementPolicy,
    ) -> Result<(), ReplayError> {
        if self.dirty.is_empty() {
            return Ok(());
        }
        let now = front.now;
        let fast_forward = horizon.is_some();
        let horizon = horizon.unwrap_or(Some(SimTime::ZERO));
        let spare = std::mem::take(&mut self.dirty_spare);
        let mut dirty = std::mem::replace(&mut self.dirty, spare);
        for &w in &dirty {
            if let Some(log) = front.collector.log() {
                let woke = self.workers.get_mut(w).woke;
                log.begin(calls::key(now, calls::START, calls::woken_order(woke)));
            }
            let mut at = now;
            loop {
                let worker = self.workers.get_mut(w);
                worker.dirty = false;
                if worker.busy || !worker.engine.has_work() {
                    break;
                }
                if fast_forward {
                    at = self.run_decode_passes(front, w, at, horizon, placement)?;
                    let worker = self.workers.get_mut(w);
                    if !worker.engine.has_work() {
                        break;
                    }
                }
                let worker = self.workers.get_mut(w);
                let Some(d) = worker.engine.start_pass(at)? else {
                    return Err(Self::stalled(self.name, w, at));
                };
                let end = worker.engine.pass_end(at, d)?;
                worker.busy = true;
                worker.pass_start = at;
                worker.sample_kv(at);
                if horizon.is_none_or(|h| end < h) {
                    // Nothing outside this worker happens before `end`: finish
                    // the pass now and go on with the next one.
                    front.now = end;
                    self.finish_pass(front, w, placement);
                    at = end;
                } else {
                    self.passes.push(
                        end,
                        EventKind::PassComplete {
                            worker: self.event_base + w,
                        },
                    );
                    break;
                }
            }
        }
        front.now = now;
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
        front: &mut Front<'_>,
        w: u32,
        at: SimTime,
        horizon: Option<SimTime>,
        placement: &mut dyn PlacementPolicy,
    ) -> Result<SimTime, ReplayError> {
        let worker = self.workers.get_mut(w);
        let mut run = DecodeRun {
            collector: &mut front.collector,
            kv: &mut worker.kv,
            completed: &mut self.decode_completed,
            latest: front.latest,
            pass_ids: &mut self.pass_ids,
            pass_start: at,
            pass_end: at,
            tokens: 0,
        };
        let end = worker.engine.run_decode_passes(at, horizon, &mut run)?;
        run.flush(); // a pass always ends with `pass`: nothing left, but be sure
        front.latest = run.latest;
        if self.kv_events && end != at {
            // Decode passes evict too; the policy hears of it as they end.
            worker.engine.drain_kv_events(&mut self.out);
            deliver_kv_events(placement, w, &self.out);
            self.out.clear();
        }
        // No sessions while fast-forwarding, so the order in which ended
        // requests release their slots cannot matter.
        let mut completed = std::mem::take(&mut self.decode_completed);
        for id in completed.drain(..) {
            front.on_terminal(id);
        }
        self.decode_completed = completed;
        Ok(end)
    }

    #[cold]
    fn stalled(pool: &str, w: u32, at: SimTime) -> ReplayError {
        ReplayError::Internal {
            reason: format!(
                "{pool} worker {w} has queued requests but could schedule none at t = {} s",
                at.as_secs_f64()
            ),
        }
    }

    /// End-of-run figures, KV sampled at `end`.
    pub fn totals(&mut self, end: SimTime) -> PoolTotals {
        PoolTotals {
            name: self.name,
            computes_prompts: self.role != Role::Decode,
            worker_count: self.workers.count(),
            kv_capacity_per_worker: self.workers.kv_capacity(),
            kv_block_size: self.kv_block_size,
            gpus_per_worker: self.gpus_per_worker,
            workers: self.workers.totals(end),
            scaling: None,
        }
    }
}

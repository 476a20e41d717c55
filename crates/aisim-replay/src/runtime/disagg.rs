//! The disaggregated topology: a prefill pool and a decode pool. A request
//! is placed on a prefill worker, which computes its prompt as a hidden
//! one-token job; when the job completes, the request is placed on a decode
//! worker and its KV sent there (`transfer_s = tokens × bytes_per_token /
//! (gb_s × 1e9) + latency`), the prefill worker holding its blocks until the
//! transfer ends; the decode worker then admits it with its prompt's KV
//! present and decodes all its output. A request without output ends with
//! its prefill.

use std::borrow::Cow;
use std::collections::HashMap;

use aisim_core::hashing::IntHashBuilder;
use aisim_core::{EngineConfig, RejectReason, Request, SimDuration, SimTime};

use super::driver::{Front, Topology};
use super::pool::{Entry, Pool, Role};
use super::scaler::{Recent, Scaler};
use super::slots::Slots;
use super::workers::Workers;
use crate::collector::Outcome;
use crate::error::ReplayError;
use crate::event::{EventHeap, EventKind};
use crate::policy::{Placement, PlacementPolicy, WorkerView};
use crate::report::{PoolTotals, TransferTotals};
use crate::spec::{KvTransferMode, KvTransferSpec};

/// The prefill-to-decode link.
#[derive(Debug, Clone, Copy)]
struct Link {
    /// KV bytes of a token over the bandwidth in bytes per nanosecond.
    ns_per_token: f64,
    bytes_per_token: f64,
    latency: SimDuration,
    mode: KvTransferMode,
}

impl Link {
    fn new(spec: &KvTransferSpec) -> Link {
        let bytes_per_token = spec.bytes_per_token.unwrap_or(0) as f64;
        Link {
            // GB/s is bytes per nanosecond.
            ns_per_token: bytes_per_token / spec.gb_s,
            bytes_per_token,
            latency: SimDuration((spec.latency_ms * 1e6).round() as u64),
            mode: spec.mode,
        }
    }

    /// How long sending `tokens` tokens' KV takes.
    fn time(&self, tokens: u32) -> SimDuration {
        let send = (tokens as f64 * self.ns_per_token).round();
        SimDuration((send as u64).saturating_add(self.latency.0))
    }
}

/// A transfer under way.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    id: u64,
    prefill_worker: u32,
    to: Placement,
}

/// The disaggregated topology's state.
pub(crate) struct DisaggTopology {
    prefill: Pool,
    decode: Pool,
    prefill_placement: Box<dyn PlacementPolicy>,
    decode_placement: Box<dyn PlacementPolicy>,
    link: Link,
    /// Transfer completions.
    transfers: EventHeap,
    /// Transfers under way.
    under_way: Slots<Transfer>,
    /// Requests between dispatch and the end of their transfer: the decode
    /// worker needs the request itself.
    waiting_handoff: HashMap<u64, Request, IntHashBuilder>,
    totals: TransferTotals,
    /// Each pool's scaling state, when its policy ticks.
    prefill_scaler: Option<Scaler>,
    decode_scaler: Option<Scaler>,
    recent: Recent,
    /// With a scaling policy: prefill workers whose pass ended at this
    /// instant, to stop (when draining and idle) once their hand-offs began.
    prefill_finished: Vec<u32>,
}

/// One pool's workers, engine and placement policy.
pub(crate) type PoolParts<'e> = (Workers, &'e EngineConfig, Box<dyn PlacementPolicy>);

impl DisaggTopology {
    /// The two pools and the link between them.
    pub fn new(
        (mut prefill, prefill_engine, prefill_placement): PoolParts<'_>,
        (decode, decode_engine, decode_placement): PoolParts<'_>,
        link: &KvTransferSpec,
    ) -> DisaggTopology {
        let decode_base = prefill.count();
        // Over time the report draws the decode pool (it emits the tokens).
        prefill.without_series();
        let mut prefill = Pool::new("prefill", Role::Prefill, 0, prefill, prefill_engine);
        prefill.capture_kv_events(prefill_placement.wants_kv_events());
        let mut decode = Pool::new("decode", Role::Decode, decode_base, decode, decode_engine);
        decode.capture_kv_events(decode_placement.wants_kv_events());
        DisaggTopology {
            prefill,
            decode,
            prefill_placement,
            decode_placement,
            link: Link::new(link),
            transfers: EventHeap::default(),
            under_way: Slots::default(),
            waiting_handoff: HashMap::default(),
            totals: TransferTotals {
                mode: link.mode,
                transfers: 0,
                tokens: 0,
                bytes: 0.0,
                busy_ns: 0.0,
            },
            prefill_scaler: None,
            decode_scaler: None,
            recent: Recent::default(),
            prefill_finished: Vec::new(),
        }
    }

    /// Scales each pool given a scaler (with the count of its workers that
    /// accept from the start).
    pub fn with_scalers(
        mut self,
        prefill: Option<(Scaler, u32)>,
        decode: Option<(Scaler, u32)>,
    ) -> DisaggTopology {
        if let Some((s, initial)) = prefill {
            self.prefill.workers.limit_accepting(initial);
            self.prefill_scaler = Some(s);
        }
        if let Some((s, initial)) = decode {
            self.decode.workers.limit_accepting(initial);
            self.decode_scaler = Some(s);
        }
        self
    }

    /// Prefill worker `w` stops if it drains and holds nothing.
    fn stop_prefill_if_empty(&mut self, now: SimTime, w: u32) {
        if let Some(s) = &mut self.prefill_scaler {
            s.stop_if_empty(now, &mut self.prefill, w);
        }
    }

    /// Decode worker `w` stops if it drains and holds nothing.
    fn stop_decode_if_empty(&mut self, now: SimTime, w: u32) {
        if let Some(s) = &mut self.decode_scaler {
            s.stop_if_empty(now, &mut self.decode, w);
        }
    }

    /// Request `id`'s prefill job ended on prefill worker `w`: place it on a
    /// decode worker and send its KV there (or end it, without output).
    fn hand_off(&mut self, front: &mut Front<'_>, w: u32, id: u64) -> Result<(), ReplayError> {
        let now = front.now;
        let Some(req) = self.waiting_handoff.get(&id) else {
            return Ok(()); // timed out meanwhile (its blocks went with it)
        };
        if req.output_length == 0 {
            self.waiting_handoff.remove(&id);
            front.end(id, now, Outcome::Completed);
            return Ok(());
        }
        let to = self.decode.place(&mut *self.decode_placement, req)?;
        let tokens = match self.link.mode {
            KvTransferMode::FullPrompt => req.input_length,
            KvTransferMode::DestinationMissing => {
                let view = self.decode.workers.view();
                req.input_length - view.cached_prefix_tokens(to.worker, to.rank, req)
            }
        };
        let time = self.link.time(tokens);
        front.collector.handed_off(id, to.worker, tokens);
        self.totals.transfers += 1;
        self.totals.tokens += tokens as u64;
        self.totals.bytes += tokens as f64 * self.link.bytes_per_token;
        self.totals.busy_ns += time.0 as f64;
        let transfer = Transfer {
            id,
            prefill_worker: w,
            to,
        };
        self.prefill.transfer_started(w);
        self.decode.transfer_started(to.worker);
        let slot = self.under_way.park(transfer);
        let end = now.checked_after(time).ok_or_else(|| ReplayError::Spec {
            field: "topology.kv_transfer".into(),
            reason: format!(
                "a KV transfer of {} s at {} s would end past the clock's limit of 2^63 ns (292 years)",
                time.as_secs_f64(),
                now.as_secs_f64()
            ),
        })?;
        self.transfers
            .push(end, EventKind::TransferComplete { transfer: slot });
        Ok(())
    }

    /// A transfer ended: the prefill worker frees the blocks, the decode
    /// worker admits the request.
    fn transferred(&mut self, front: &mut Front<'_>, slot: u32) -> Result<(), ReplayError> {
        let t = self.under_way.take(slot);
        let now = front.now;
        self.prefill.release_held(t.prefill_worker, t.id, now);
        self.prefill.transfer_ended(t.prefill_worker);
        self.decode.transfer_ended(t.to.worker);
        self.stop_prefill_if_empty(now, t.prefill_worker);
        let Some(req) = self.waiting_handoff.remove(&t.id) else {
            // Timed out during the transfer.
            self.stop_decode_if_empty(now, t.to.worker);
            return Ok(());
        };
        if let Err(reason) = self.decode.add(t.to, &req, Entry::Transferred)? {
            front.collector.rejected(t.id, now, &reason);
            front.on_terminal(t.id);
            self.stop_decode_if_empty(now, t.to.worker);
        }
        Ok(())
    }
}

impl Topology for DisaggTopology {
    fn next_event(&self) -> Option<SimTime> {
        [
            self.prefill.next_event(),
            self.decode.next_event(),
            self.transfers.peek_time(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn apply_due(&mut self, front: &mut Front<'_>) -> Result<(), ReplayError> {
        let now = front.now;
        // Pass completions of both pools, in event order (prefill workers'
        // ids come first).
        loop {
            let due = |pool: &Pool| {
                pool.passes
                    .peek()
                    .filter(|e| e.at <= now)
                    .map(|e| (e.at, e.kind))
            };
            let pool = match (due(&self.prefill), due(&self.decode)) {
                (None, None) => break,
                (Some(p), Some(d)) if d < p => &mut self.decode,
                (Some(_), _) => &mut self.prefill,
                (None, Some(_)) => &mut self.decode,
            };
            let ev = pool.passes.pop_due(now).expect("peeked");
            let EventKind::PassComplete { worker } = ev.kind else {
                unreachable!("the pass heaps hold pass completions only")
            };
            let w = pool.local(worker);
            if pool.role() == Role::Prefill {
                self.prefill
                    .finish_pass(front, w, &mut *self.prefill_placement);
                if self.prefill_scaler.is_some() {
                    self.prefill_finished.push(w);
                }
            } else {
                self.decode
                    .finish_pass(front, w, &mut *self.decode_placement);
                self.stop_decode_if_empty(now, w);
            }
        }
        // Then the transfers the prefill completions start, then those ending.
        let mut prefilled = std::mem::take(&mut self.prefill.prefilled);
        for &(w, id) in &prefilled {
            self.hand_off(front, w, id)?;
        }
        prefilled.clear();
        self.prefill.prefilled = prefilled;
        let mut finished = std::mem::take(&mut self.prefill_finished);
        for &w in &finished {
            self.stop_prefill_if_empty(now, w);
        }
        finished.clear();
        self.prefill_finished = finished;
        while let Some(ev) = self.transfers.pop_due(now) {
            let EventKind::TransferComplete { transfer } = ev.kind else {
                unreachable!("the transfer heap holds transfer completions only")
            };
            self.transferred(front, transfer)?;
        }
        Ok(())
    }

    fn submit(
        &mut self,
        front: &mut Front<'_>,
        req: Cow<'_, Request>,
    ) -> Result<Result<(), RejectReason>, ReplayError> {
        let at = self
            .prefill
            .place_arrival(front, &mut *self.prefill_placement, &req)?;
        let entry = if req.output_length == 0 {
            Entry::Whole
        } else {
            Entry::PrefillJob
        };
        let added = self.prefill.add(at, &req, entry)?;
        if added.is_ok() {
            // Moved when the session does not keep it.
            self.waiting_handoff.insert(req.id.0, req.into_owned());
        }
        Ok(added)
    }

    fn abort(&mut self, front: &mut Front<'_>, id: u64) {
        let now = front.now;
        if let Some(w) = front.collector.worker_of(id) {
            self.prefill.abort(w, id);
            self.stop_prefill_if_empty(now, w);
        }
        if let Some(w) = front.collector.decode_worker_of(id) {
            self.decode.abort(w, id);
            self.stop_decode_if_empty(now, w);
        }
        self.waiting_handoff.remove(&id);
    }

    fn start_passes(
        &mut self,
        front: &mut Front<'_>,
        horizon: Option<Option<SimTime>>,
    ) -> Result<(), ReplayError> {
        // A prefill completion places a request by the decode workers' state
        // then: prefill workers never run ahead, and decode workers only up
        // to the next prefill completion or transfer end.
        self.prefill
            .start_passes(front, None, &mut *self.prefill_placement)?;
        let horizon = horizon.map(|h| {
            [h, self.prefill.next_event(), self.transfers.peek_time()]
                .into_iter()
                .flatten()
                .min()
        });
        self.decode
            .start_passes(front, horizon, &mut *self.decode_placement)
    }

    fn saturated(&self, threshold: u32) -> bool {
        self.prefill.saturated(threshold)
    }

    fn pools(&mut self, end: SimTime) -> Vec<PoolTotals> {
        let mut prefill = self.prefill.totals(end);
        prefill.scaling = self.prefill_scaler.as_mut().map(|s| s.finish(end));
        let mut decode = self.decode.totals(end);
        decode.scaling = self.decode_scaler.as_mut().map(|s| s.finish(end));
        vec![prefill, decode]
    }

    fn transfers(&self) -> Option<TransferTotals> {
        Some(self.totals)
    }

    fn first_tick(&self) -> Option<SimDuration> {
        [&self.prefill_scaler, &self.decode_scaler]
            .into_iter()
            .flatten()
            .filter_map(Scaler::first_tick)
            .min()
    }

    fn scaling_tick(&mut self, front: &mut Front<'_>) -> Option<SimTime> {
        self.recent.read(&mut front.collector);
        let mut next = None;
        for (s, pool) in [
            (&mut self.prefill_scaler, &mut self.prefill),
            (&mut self.decode_scaler, &mut self.decode),
        ] {
            if let Some(s) = s {
                s.tick_if_due(front, pool, &self.recent);
                next = [next, s.next_tick()].into_iter().flatten().min();
            }
        }
        next
    }

    fn worker_ready(&mut self, front: &mut Front<'_>, worker: u32) {
        // Ready events carry the worker's event index (decode workers' come
        // after the prefill workers').
        let (pool, scaler) = if worker >= self.prefill.workers.count() {
            (&mut self.decode, &mut self.decode_scaler)
        } else {
            (&mut self.prefill, &mut self.prefill_scaler)
        };
        if let Some(s) = scaler {
            let w = pool.local(worker);
            s.ready(front.now, pool, w);
        }
    }

    fn holds_any(&self) -> bool {
        !self.waiting_handoff.is_empty()
            || self
                .prefill_scaler
                .as_ref()
                .is_some_and(|s| s.holds_any(&self.prefill))
            || self
                .decode_scaler
                .as_ref()
                .is_some_and(|s| s.holds_any(&self.decode))
    }
}

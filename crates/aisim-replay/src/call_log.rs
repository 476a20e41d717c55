//! The collector calls one part of a split run makes (see
//! `runtime/split.rs`), recorded in segments keyed by where the loop makes
//! them, so that the run's collector can be given them in the order one
//! loop over every worker makes them.
//!
//! A segment's key orders it as the single loop would: by time, then by
//! phase (pass completions by worker, then dispatches by arrival, then the
//! passes started on each worker woken at that time, in the order the
//! workers were woken), so merging two parts' segments by key gives the
//! single loop's order exactly.

use std::ops::Range;
use std::sync::mpsc::{Receiver, SyncSender};

use aisim_core::{RejectReason, RequestId, SimTime};

use crate::record::{Dispatch, Outcome};

/// Phase of a pass completion applied (its worker orders it).
pub(crate) const FINISH: u128 = 1;
/// Phase of a dispatch (its arrival index orders it).
pub(crate) const DISPATCH: u128 = 2;
/// Phase of the passes started on a woken worker (the key of what woke it
/// orders it).
pub(crate) const START: u128 = 3;

/// Calls a batch holds before it goes to the merge.
const BATCH_CALLS: usize = 2048;
/// Token ids (or pass ends) a batch holds before it goes: with the calls,
/// about 100 KiB a batch.
const BATCH_IDS: usize = 4096;

/// A segment key: `at`, then `phase`, then `order` (below 2^62).
#[inline]
pub(crate) fn key(at: SimTime, phase: u128, order: u64) -> u128 {
    (u128::from(at.0) << 64) | (phase << 62) | u128::from(order)
}

/// The order within the start phase of a worker woken by the segment `woke`
/// (a pass completion or a dispatch at the same time): after every worker
/// woken by an earlier one.
#[inline]
pub(crate) fn woken_order(woke: u128) -> u64 {
    let phase = (woke >> 62) as u64 & 3;
    let order = woke as u64 & ((1 << 62) - 1);
    (phase << 60) | order
}

/// The time of a segment key.
#[inline]
pub(crate) fn key_time(key: u128) -> u64 {
    (key >> 64) as u64
}

/// One collector call.
#[derive(Debug, Clone)]
pub(crate) enum Call {
    /// `dispatched`, with the requests the part's workload still had to
    /// offer (boxed: most calls are much smaller).
    Dispatched(Box<(Dispatch, u64)>),
    Placed {
        id: u64,
        worker: u32,
        rank: u32,
    },
    Rejected {
        id: u64,
        at: SimTime,
        reason: RejectReason,
    },
    Admitted {
        id: u64,
        at: SimTime,
        reused: u32,
        readmission: bool,
    },
    Preempted(u64),
    /// `tokens_of_passes` of the batch's `ids` and `ends` in these ranges.
    Tokens {
        ids: Range<u32>,
        start: SimTime,
        ends: Range<u32>,
    },
    Terminal {
        id: u64,
        at: SimTime,
        outcome: Outcome,
    },
}

/// Recorded segments: each key with the index of its first call (a segment
/// runs to the next one's first call or the end). A segment may continue in
/// the next batch under the same key.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub segments: Vec<(u128, u32)>,
    pub calls: Vec<Call>,
    pub ids: Vec<RequestId>,
    pub ends: Vec<SimTime>,
}

impl Batch {
    fn clear(&mut self) {
        self.segments.clear();
        self.calls.clear();
        self.ids.clear();
        self.ends.clear();
    }

    fn is_full(&self) -> bool {
        self.calls.len() >= BATCH_CALLS
            || self.ids.len() >= BATCH_IDS
            || self.ends.len() >= BATCH_IDS
    }

    /// The calls of segment `s`.
    pub fn calls_of(&self, s: usize) -> &[Call] {
        let from = self.segments[s].1 as usize;
        let to = self
            .segments
            .get(s + 1)
            .map_or(self.calls.len(), |n| n.1 as usize);
        &self.calls[from..to]
    }
}

/// What a part sends to the merge.
pub(crate) enum Message {
    Batch(Batch),
    /// The part's loop ended at this time; it waits for the run's end.
    Done(SimTime),
}

/// The recording side, inside a part's collector.
#[derive(Debug)]
pub(crate) struct CallLog {
    part: u32,
    parts: u32,
    /// The key of the segment under way, and whether it is in the batch yet.
    key: u128,
    open: bool,
    /// The segment under way dispatches a request to another part's worker.
    foreign: bool,
    /// A dispatch waiting to learn its worker.
    pending: Option<Dispatch>,
    /// Requests dispatched (every part dispatches every request).
    dispatched: u64,
    /// The workload's requests still to offer, after the last dispatch.
    remaining: u64,
    batch: Batch,
    to_merge: SyncSender<Message>,
    /// Batches the merge has replayed, to reuse.
    spent: Receiver<Batch>,
    end: Receiver<SimTime>,
    /// The merge is gone (it failed or stopped): record nothing more.
    closed: bool,
}

impl CallLog {
    /// The log of part `part` of `parts`.
    pub fn new(
        part: u32,
        parts: u32,
        to_merge: SyncSender<Message>,
        spent: Receiver<Batch>,
        end: Receiver<SimTime>,
    ) -> CallLog {
        CallLog {
            part,
            parts,
            key: 0,
            open: false,
            foreign: false,
            pending: None,
            dispatched: 0,
            remaining: 0,
            batch: Batch::default(),
            to_merge,
            spent,
            end,
            closed: false,
        }
    }

    /// Whether worker `w` is this part's.
    #[inline]
    pub fn owns(&self, w: u32) -> bool {
        w % self.parts == self.part
    }

    /// The segment under way's key.
    #[inline]
    pub fn key(&self) -> u128 {
        self.key
    }

    /// Starts the segment `key`.
    #[inline]
    pub fn begin(&mut self, key: u128) {
        self.key = key;
        self.open = false;
        self.foreign = false;
    }

    #[inline]
    fn open_segment(&mut self) {
        if self.batch.is_full() {
            self.send();
        }
        if !self.open {
            let at = self.batch.calls.len() as u32;
            self.batch.segments.push((self.key, at));
            self.open = true;
        }
    }

    #[inline]
    fn push(&mut self, call: Call) {
        if self.foreign || self.closed {
            return;
        }
        self.open_segment();
        self.batch.calls.push(call);
    }

    fn send(&mut self) {
        let mut fresh = self.spent.try_recv().unwrap_or_default();
        fresh.clear();
        let full = std::mem::replace(&mut self.batch, fresh);
        self.open = false;
        if self.to_merge.send(Message::Batch(full)).is_err() {
            self.closed = true;
        }
    }

    /// Requests dispatched so far (by every part).
    pub fn dispatched_count(&self) -> u64 {
        self.dispatched
    }

    /// The part's workload has `remaining` requests still to offer.
    pub fn note_remaining(&mut self, remaining: u64) {
        self.remaining = remaining;
    }

    pub fn dispatched(&mut self, d: Dispatch) {
        self.dispatched += 1;
        self.pending = Some(d);
    }

    pub fn placed(&mut self, id: u64, worker: u32, rank: u32) {
        if !self.owns(worker) {
            self.pending = None;
            self.foreign = true;
            return;
        }
        if let Some(d) = self.pending.take() {
            self.push(Call::Dispatched(Box::new((d, self.remaining))));
        }
        self.push(Call::Placed { id, worker, rank });
    }

    pub fn rejected(&mut self, id: u64, at: SimTime, reason: &RejectReason) {
        self.push(Call::Rejected {
            id,
            at,
            reason: reason.clone(),
        });
    }

    pub fn admitted(&mut self, id: u64, at: SimTime, reused: u32, readmission: bool) {
        self.push(Call::Admitted {
            id,
            at,
            reused,
            readmission,
        });
    }

    pub fn preempted(&mut self, id: u64) {
        self.push(Call::Preempted(id));
    }

    pub fn tokens_of_passes(&mut self, ids: &[RequestId], start: SimTime, ends: &[SimTime]) {
        if self.foreign || self.closed || ids.is_empty() {
            return;
        }
        self.open_segment();
        let b = &mut self.batch;
        let (i, e) = (b.ids.len() as u32, b.ends.len() as u32);
        b.ids.extend_from_slice(ids);
        b.ends.extend_from_slice(ends);
        let call = Call::Tokens {
            ids: i..b.ids.len() as u32,
            start,
            ends: e..b.ends.len() as u32,
        };
        b.calls.push(call);
    }

    pub fn terminal(&mut self, id: u64, at: SimTime, outcome: Outcome) {
        self.push(Call::Terminal { id, at, outcome });
    }

    /// Sends what is left and this part's end; returns the run's end (the
    /// latest of every part's), or `None` when the merge is gone.
    pub fn agree_end(&mut self, end: SimTime) -> Option<SimTime> {
        if !self.batch.calls.is_empty() {
            self.send();
        }
        if self.closed || self.to_merge.send(Message::Done(end)).is_err() {
            return None;
        }
        self.end.recv().ok()
    }
}

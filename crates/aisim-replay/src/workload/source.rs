//! What every workload is: the `Workload` trait and the `Offer` it hands
//! out. Each workload implements it and `mod.rs` builds them, so it lives
//! below both.

use aisim_core::{Request, SimDuration, SimTime};

use crate::error::ReplayError;
use crate::per_request::TraceRows;
use crate::trace::TraceNotes;

/// One request as the workload offers it.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The request; `arrival` is its planned arrival for first turns.
    pub request: Request,
    /// Turn index within its session (0 for the first).
    pub turn: u32,
    /// For later turns: their time on the (normalized, sped-up) trace clock.
    pub trace_at: Option<SimTime>,
    /// Think time before this turn, from the row (sped up).
    pub think: Option<SimDuration>,
    /// For later turns: the gap to the previous turn on the trace clock, the
    /// fallback think time.
    pub trace_gap: Option<SimDuration>,
}

/// A source of requests.
pub trait Workload {
    /// Planned arrival of the next first turn.
    fn peek_root(&self) -> Option<SimTime>;
    /// The next first turn, in planned-arrival order.
    fn next_root(&mut self) -> Option<Offer>;
    /// The turn after `prev` in its session, if any. Takes the ended turn
    /// whole, so a next turn can reuse what it carries (its block ids) instead
    /// of copying it: a session's cost stays linear in its turns.
    fn next_turn(&mut self, prev: Offer) -> Option<Offer>;
    /// Whether a turn may follow another (the workload has sessions).
    fn may_have_sessions(&self) -> bool;
    /// Requests (of every turn) not yet handed out; they count as offered.
    fn remaining(&self) -> u64;
    /// Rows skipped on purpose while reading (BurstGPT failed requests).
    fn skipped_rows(&self) -> u64 {
        0
    }
    /// Why the workload stopped early, if it did (a time beyond the clock);
    /// the run then fails with it.
    fn take_failure(&mut self) -> Option<ReplayError> {
        None
    }
    /// What reading the trace counted without refusing it.
    fn notes(&self) -> TraceNotes {
        TraceNotes::default()
    }
    /// The trace row of each request, by id, for per-request records
    /// (`None`: the requests come from no file).
    fn trace_rows(&self) -> Option<TraceRows> {
        None
    }
}

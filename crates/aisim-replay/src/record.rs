//! What happened to one request (`RequestRecord`, and how it ended:
//! `Outcome`) and the trace row it came from. The collector fills these in,
//! the tally and the per-request writer read them: the types live below all
//! three, so none of them imports another back.

use std::sync::Arc;

use aisim_core::SimTime;
use serde::{Deserialize, Serialize};

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Emitted every token.
    Completed,
    /// Not finished within the timeout after its planned arrival.
    TimedOut,
    /// Can never be served (too long for the model or the KV cache, refused).
    Rejected,
    /// Still in flight when the run ended.
    #[default]
    Incomplete,
}

pub(crate) const UNSET: u64 = u64::MAX;

/// `worker` and `rank` of a request never placed on a worker (refused by a
/// full router queue, or timed out in it).
pub const UNPLACED: u32 = u32::MAX;

/// What happened to one request. Times are virtual nanoseconds.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Request id.
    pub id: u64,
    /// Session id, for multi-turn requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
    /// Turn within the session.
    pub turn: u32,
    /// When the workload offered it.
    pub planned_ns: u64,
    /// For later turns: the gap to the previous turn on the trace clock.
    #[serde(serialize_with = "opt_ns")]
    pub trace_gap_ns: u64,
    /// When it was sent to the router.
    #[serde(serialize_with = "opt_ns")]
    pub dispatch_ns: u64,
    /// First time an engine scheduled it.
    #[serde(serialize_with = "opt_ns")]
    pub first_admit_ns: u64,
    /// First output token.
    #[serde(serialize_with = "opt_ns")]
    pub first_token_ns: u64,
    /// Last output token.
    #[serde(serialize_with = "opt_ns")]
    pub last_token_ns: u64,
    /// Completion, timeout or rejection.
    #[serde(serialize_with = "opt_ns")]
    pub terminal_ns: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// Prompt tokens.
    pub input_length: u32,
    /// Output tokens requested.
    pub output_length: u32,
    /// Output tokens emitted.
    pub tokens: u32,
    /// Prompt tokens reused from the prefix cache at first admission.
    pub reused_first: u32,
    /// Prompt tokens reused over every admission.
    pub reused_total: u64,
    /// Prompt tokens the placement policy expected the chosen rank to serve
    /// from its cache (only policies that guess, such as `kv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_cached_tokens: Option<u32>,
    /// Times preempted.
    pub preemptions: u32,
    /// Worker it ran on ([`UNPLACED`], `null` in JSON: never placed).
    #[serde(serialize_with = "opt_u32")]
    pub worker: u32,
    /// DP rank it ran on ([`UNPLACED`]: never placed).
    #[serde(serialize_with = "opt_u32")]
    pub rank: u32,
    /// Disaggregated: the decode worker it was handed to (`worker` is then
    /// its prefill worker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_worker: Option<u32>,
    /// Disaggregated: prompt tokens whose KV was sent to the decode worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_transfer_tokens: Option<u32>,
    /// Whether it is in the measured cohort (not warm-up).
    pub in_cohort: bool,
    /// Why it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reject_reason: Option<String>,
    /// Why it was rejected, as the report counts it.
    #[serde(skip)]
    pub reject_kind: Option<&'static str>,
    /// The trace row it came from, set on a record that is kept (boxed: a
    /// record in flight stays small).
    #[serde(skip)]
    pub trace: Option<Box<TraceRow>>,
}

fn opt_ns<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    if *v == UNSET {
        s.serialize_none()
    } else {
        s.serialize_u64(*v)
    }
}

fn opt_u32<S: serde::Serializer>(v: &u32, s: S) -> Result<S::Ok, S::Error> {
    if *v == UNPLACED {
        s.serialize_none()
    } else {
        s.serialize_u32(*v)
    }
}

impl RequestRecord {
    pub(crate) fn new(id: u64) -> RequestRecord {
        RequestRecord {
            id,
            session: None,
            turn: 0,
            planned_ns: UNSET,
            trace_gap_ns: UNSET,
            dispatch_ns: UNSET,
            first_admit_ns: UNSET,
            first_token_ns: UNSET,
            last_token_ns: UNSET,
            terminal_ns: UNSET,
            outcome: Outcome::Incomplete,
            input_length: 0,
            output_length: 0,
            tokens: 0,
            reused_first: 0,
            reused_total: 0,
            expected_cached_tokens: None,
            preemptions: 0,
            worker: UNPLACED,
            rank: UNPLACED,
            decode_worker: None,
            kv_transfer_tokens: None,
            in_cohort: false,
            reject_reason: None,
            reject_kind: None,
            trace: None,
        }
    }

    /// The worker it was placed on, `None` when it never was.
    pub fn worker(&self) -> Option<u32> {
        (self.worker != UNPLACED).then_some(self.worker)
    }

    /// Its DP rank within the worker, `None` when it was never placed.
    pub fn rank(&self) -> Option<u32> {
        (self.rank != UNPLACED).then_some(self.rank)
    }

    /// A time field, `None` when it never happened.
    pub fn at(v: u64) -> Option<u64> {
        (v != UNSET).then_some(v)
    }

    /// Time per output token after the first, ms: (last − first token) /
    /// (tokens − 1), with at least 2 tokens (the report's TPOT).
    pub fn tpot_ms(&self) -> Option<f64> {
        (self.tokens >= 2).then(|| {
            aisim_core::summary::ms(self.last_token_ns - self.first_token_ns)
                / (self.tokens - 1) as f64
        })
    }

    /// Whether the request has ended (any outcome but incomplete).
    pub fn is_terminal(&self) -> bool {
        self.terminal_ns != UNSET
    }
}

/// Where a request came from in its trace, with the ids as the trace wrote
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceRow {
    /// 1-based line in the trace file.
    pub line: u64,
    /// Bailian `chat_id`.
    pub chat_id: Option<i64>,
    /// `session_id` (JSONL) or `Session ID` (BurstGPT), as text.
    pub session_id: Option<Arc<str>>,
}

/// The trace rows of a workload, by aisim request id (a trace's request id
/// is its row's index in file order).
#[derive(Debug, Clone, Default)]
pub struct TraceRows(pub Vec<TraceRow>);

impl TraceRows {
    /// The row of request `id`, if it came from a trace row.
    pub fn get(&self, id: u64) -> Option<&TraceRow> {
        usize::try_from(id).ok().and_then(|i| self.0.get(i))
    }
}

/// What is known of a request when it is dispatched.
#[derive(Debug, Clone, Copy)]
pub struct Dispatch {
    /// Request id.
    pub id: u64,
    /// Session, if multi-turn.
    pub session: Option<u64>,
    /// Turn index.
    pub turn: u32,
    /// Planned arrival.
    pub planned: SimTime,
    /// Actual dispatch.
    pub dispatch: SimTime,
    /// Gap to the previous turn on the trace clock.
    pub trace_gap: Option<aisim_core::SimDuration>,
    /// Prompt tokens.
    pub input_length: u32,
    /// Output tokens.
    pub output_length: u32,
    /// Measured (not warm-up).
    pub in_cohort: bool,
    /// For a later turn: when the previous turn ended.
    pub previous_end: Option<SimTime>,
}

//! One measured request (`TimedRequest`: its send, first-token and end
//! times) and what is done with a list of them, shared by the importer and
//! the per-request calibration data: their trace order, their generic
//! per-request file, and a replay's cohort as such requests.

use serde_json::json;

use aisim_replay::collector::{Outcome, RequestRecord};

/// One request as measured (seconds on any one clock).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimedRequest {
    /// Line of the file it came from.
    pub line: usize,
    /// Request id.
    pub id: String,
    /// When it was sent (arrived at the server).
    pub send_s: f64,
    /// When its first output token came.
    pub first_token_s: f64,
    /// When its last output token came.
    pub end_s: f64,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Output tokens.
    pub output_tokens: u32,
    /// Prompt block hashes, when known.
    pub hash_ids: Option<Vec<u64>>,
    /// Why it did not complete (failed, cancelled, cut off), when it did
    /// not: it is offered in the trace but in no latency, and its times are
    /// what was seen before it ended (the send time when nothing came).
    pub failed: Option<String>,
    /// Every gap between consecutive output tokens (s), when every token's
    /// time is known (`output_tokens − 1` of them).
    pub itl_s: Option<Vec<f64>>,
    /// The conversation it is a turn of, when it is one.
    pub session: Option<Turn>,
}

/// A request's place in a multi-turn conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Turn {
    /// The conversation's id.
    pub session_id: String,
    /// Its turn, 0-based.
    pub turn_index: u32,
}

impl TimedRequest {
    /// Whether it completed (it counts in the latencies).
    pub fn completed(&self) -> bool {
        self.failed.is_none()
    }
}

/// `requests` in the order an import's trace holds them: by send time,
/// ties by line (`import::trace_text`).
pub fn trace_order(requests: &[TimedRequest]) -> Vec<&TimedRequest> {
    let mut order: Vec<&TimedRequest> = requests.iter().collect();
    order.sort_by(|a, b| a.send_s.total_cmp(&b.send_s).then(a.line.cmp(&b.line)));
    order
}

/// A replay's completed cohort as measured requests (send = planned
/// arrival, end = completion), e.g. to make a measured run of a replay.
pub fn timed_requests(records: &[RequestRecord]) -> Vec<TimedRequest> {
    records
        .iter()
        .filter(|r| r.in_cohort && r.outcome == Outcome::Completed)
        .enumerate()
        .filter_map(|(i, r)| {
            let s = |ns: u64| ns as f64 / 1e9;
            Some(TimedRequest {
                line: i + 1,
                id: r.id.to_string(),
                send_s: s(r.planned_ns),
                first_token_s: s(RequestRecord::at(r.first_token_ns)?),
                end_s: s(RequestRecord::at(r.terminal_ns)?),
                input_tokens: r.input_length,
                output_tokens: r.output_length,
                ..TimedRequest::default()
            })
        })
        .collect()
}

/// `requests` as a generic per-request JSONL file, in trace order, with the
/// prompt hashes when known: imported again, it gives the same measurement
/// and the same trace.
pub fn requests_text(requests: &[TimedRequest]) -> String {
    let mut out = String::new();
    for r in trace_order(requests) {
        let mut row = json!({
            "request_id": r.id,
            "send_s": r.send_s,
            "first_token_s": r.first_token_s,
            "end_s": r.end_s,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
        });
        if let Some(h) = &r.hash_ids {
            row["hash_ids"] = json!(h);
        }
        if let Some(e) = &r.failed {
            row["error"] = json!(e);
        }
        if let Some(g) = &r.itl_s {
            row["itl_s"] = json!(g);
        }
        if let Some(t) = &r.session {
            row["session_id"] = json!(t.session_id);
            row["turn_index"] = json!(t.turn_index);
        }
        out.push_str(&row.to_string());
        out.push('\n');
    }
    out
}

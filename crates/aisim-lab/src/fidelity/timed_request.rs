//! One measured request (`TimedRequest`: its send, first-token and end
//! times) and what is done with a list of them, shared by the importer and
//! the per-request calibration data: their trace order, their generic
//! per-request file, and a replay's cohort as such requests.

use serde_json::json;

use aisim_replay::collector::{Outcome, RequestRecord};

/// One request as measured (seconds on any one clock).
#[derive(Debug, Clone, PartialEq)]
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
                hash_ids: None,
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
        out.push_str(&row.to_string());
        out.push('\n');
    }
    out
}

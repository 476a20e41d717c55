//! Per-request records as a user reads them (`--per-request FILE`): each
//! request's times in milliseconds, its latencies already computed, and the
//! trace row it came from, so the file joins back to the trace. Written as
//! JSON lines, or as CSV; the schema is in docs/report.md.

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::record::{Outcome, RequestRecord};
pub use crate::record::{TraceRow, TraceRows};
use aisim_core::summary::ms;

/// One request, as `--per-request` writes it. Every key is always present:
/// what did not happen, or what the trace does not say, is `null` (an empty
/// cell in CSV).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    /// aisim's request id (a trace's row index in file order, from 0).
    pub id: u64,
    /// 1-based trace line (`null` for a generated workload).
    pub line: Option<u64>,
    /// The trace's `chat_id` (Bailian).
    pub chat_id: Option<i64>,
    /// The trace's request id (`null`: none of the supported formats has one).
    pub request_id: Option<String>,
    /// The trace's session id, as text.
    pub session_id: Option<String>,
    /// aisim's session number, for multi-turn requests.
    pub session: Option<u64>,
    /// Turn within the session (0 for the first).
    pub turn: u32,
    /// Whether it is measured (not warm-up).
    pub in_cohort: bool,
    /// How it ended: `completed`, `timed_out`, `rejected`, `incomplete`.
    pub outcome: Outcome,
    /// Why it was rejected, as the report's `rejections` key
    /// (`router_queue_full`, `larger_than_kv_cache`, ...).
    pub reject_kind: Option<String>,
    /// Why it was rejected, in words with its numbers.
    pub reject_reason: Option<String>,
    /// Planned arrival, ms of simulated time.
    pub planned_ms: f64,
    /// Sent to the router, ms.
    pub dispatch_ms: Option<f64>,
    /// First scheduled by an engine, ms.
    pub first_admit_ms: Option<f64>,
    /// First output token, ms.
    pub first_token_ms: Option<f64>,
    /// Last output token, ms.
    pub last_token_ms: Option<f64>,
    /// Completion, timeout or rejection, ms (`null`: still in flight at the end).
    pub terminal_ms: Option<f64>,
    /// First token − planned arrival, ms (the report's TTFT).
    pub ttft_ms: Option<f64>,
    /// (last − first token) / (tokens − 1), ms, with at least 2 tokens.
    pub tpot_ms: Option<f64>,
    /// Terminal − planned arrival, ms, for a completed request.
    pub e2e_ms: Option<f64>,
    /// First admission − dispatch: waiting in the engine's queue, ms.
    pub queue_ms: Option<f64>,
    /// Prompt tokens.
    pub input_length: u32,
    /// Output tokens asked for.
    pub output_length: u32,
    /// Output tokens emitted.
    pub tokens: u32,
    /// Worker it was placed on (`null`: never placed, e.g. refused or timed
    /// out in the router queue).
    pub worker: Option<u32>,
    /// Attention-DP rank within the worker (`null`: never placed).
    pub rank: Option<u32>,
    /// Disaggregated: the decode worker it was handed to (`worker` is then
    /// its prefill worker); `null` when aggregated or never handed off.
    pub decode_worker: Option<u32>,
    /// Disaggregated: prompt tokens whose KV was sent to the decode worker.
    pub kv_transfer_tokens: Option<u32>,
    /// Prompt tokens reused from the prefix cache at first admission.
    pub reused_tokens: u32,
    /// Prompt tokens reused over every admission (readmissions included).
    pub reused_tokens_all: u64,
    /// Prompt tokens the placement policy expected the chosen rank to serve
    /// from its cache (`null`: the policy made no guess; only `kv` does).
    pub expected_cached_tokens: Option<u32>,
    /// Times preempted (vLLM) or retracted (SGLang).
    pub preemptions: u32,
}

impl RequestRow {
    /// The row of a record.
    pub fn of(r: &RequestRecord) -> RequestRow {
        let at = |ns: u64| RequestRecord::at(ns).map(ms);
        let since = |ns: u64, from: u64| RequestRecord::at(ns).map(|t| ms(t - from));
        let trace = r.trace.as_deref();
        RequestRow {
            id: r.id,
            line: trace.map(|t| t.line),
            chat_id: trace.and_then(|t| t.chat_id),
            request_id: None,
            session_id: trace.and_then(|t| t.session_id.as_deref().map(String::from)),
            session: r.session,
            turn: r.turn,
            in_cohort: r.in_cohort,
            outcome: r.outcome,
            reject_kind: r.reject_kind.map(String::from),
            reject_reason: r.reject_reason.clone(),
            planned_ms: ms(r.planned_ns),
            dispatch_ms: at(r.dispatch_ns),
            first_admit_ms: at(r.first_admit_ns),
            first_token_ms: at(r.first_token_ns),
            last_token_ms: at(r.last_token_ns),
            terminal_ms: at(r.terminal_ns),
            ttft_ms: since(r.first_token_ns, r.planned_ns),
            tpot_ms: r.tpot_ms(),
            e2e_ms: (r.outcome == Outcome::Completed)
                .then(|| since(r.terminal_ns, r.planned_ns))
                .flatten(),
            queue_ms: RequestRecord::at(r.dispatch_ns).and_then(|d| since(r.first_admit_ns, d)),
            input_length: r.input_length,
            output_length: r.output_length,
            tokens: r.tokens,
            worker: r.worker(),
            rank: r.rank(),
            decode_worker: r.decode_worker,
            kv_transfer_tokens: r.kv_transfer_tokens,
            reused_tokens: r.reused_first,
            reused_tokens_all: r.reused_total,
            expected_cached_tokens: r.expected_cached_tokens,
            preemptions: r.preemptions,
        }
    }
}

/// How records are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// One JSON object per line.
    Jsonl,
    /// A header line, then one row per request.
    Csv,
}

impl RowFormat {
    /// CSV for a file name ending in `.csv` (any case), JSON lines otherwise.
    pub fn for_file_name(name: &str) -> RowFormat {
        if name.to_ascii_lowercase().ends_with(".csv") {
            RowFormat::Csv
        } else {
            RowFormat::Jsonl
        }
    }
}

impl RequestRow {
    /// The row with its text cells safe in a spreadsheet (a `session_id` of
    /// `=HYPERLINK(...)` is no formula there).
    fn csv_safe(mut self) -> RequestRow {
        for cell in [
            &mut self.request_id,
            &mut self.session_id,
            &mut self.reject_kind,
            &mut self.reject_reason,
        ]
        .into_iter()
        .flatten()
        {
            if let std::borrow::Cow::Owned(safe) = aisim_core::safe_text::csv_safe(cell) {
                *cell = safe;
            }
        }
        self
    }
}

/// Writes records in one format, a batch at a time.
pub enum RowWriter<W: Write> {
    /// JSON lines.
    Jsonl(W),
    /// CSV (the header comes with the first row; boxed, as the writer
    /// carries its buffer state).
    Csv(Box<csv::Writer<W>>),
}

fn csv_io(e: csv::Error) -> std::io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => std::io::Error::other(format!("{other:?}")),
    }
}

impl<W: Write> RowWriter<W> {
    /// A writer of `format` into `out`.
    pub fn new(format: RowFormat, out: W) -> RowWriter<W> {
        match format {
            RowFormat::Jsonl => RowWriter::Jsonl(out),
            RowFormat::Csv => RowWriter::Csv(Box::new(csv::Writer::from_writer(out))),
        }
    }

    /// Writes the records of a batch.
    pub fn write(&mut self, batch: &[RequestRecord]) -> std::io::Result<()> {
        for r in batch {
            let row = RequestRow::of(r);
            match self {
                RowWriter::Jsonl(w) => {
                    serde_json::to_writer(&mut *w, &row)?;
                    w.write_all(b"\n")?;
                }
                RowWriter::Csv(w) => w.serialize(row.csv_safe()).map_err(csv_io)?,
            }
        }
        match self {
            // The CSV writer buffers on its own: hand each batch on.
            RowWriter::Csv(w) => w.flush(),
            RowWriter::Jsonl(_) => Ok(()),
        }
    }

    /// The output, everything written to it.
    pub fn into_inner(self) -> std::io::Result<W> {
        match self {
            RowWriter::Jsonl(w) => Ok(w),
            RowWriter::Csv(w) => w.into_inner().map_err(|e| e.into_error()),
        }
    }
}

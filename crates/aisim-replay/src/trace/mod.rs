//! Trace readers. Every reader streams its file line by line and reports the
//! file, line and field of any bad row; rows skipped on purpose are counted.

mod bad_row;
mod chat_links;
pub mod csv;
mod detect;
mod format;
mod halves;
pub mod json_rows;
mod lines;
mod mooncake_row;
mod record;
mod summary;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub(crate) use aisim_core::number::float;
pub use bad_row::row_error;
pub use detect::detect_format;
pub use format::TraceFormat;
pub use lines::Lines;
pub(crate) use record::SessionInterner;
pub use record::TraceRecord;
pub use summary::{Spread, TraceSummary};

use crate::error::ReplayError;

/// A whole trace, read.
#[derive(Debug, Clone)]
pub struct TraceData {
    /// Where it came from.
    pub path: PathBuf,
    /// Its format.
    pub format: TraceFormat,
    /// Tokens per trace block.
    pub trace_block_size: u32,
    /// Rows, in file order.
    pub records: Vec<TraceRecord>,
    /// Rows skipped on purpose (BurstGPT failed requests).
    pub skipped_failed: u64,
    /// What reading noticed without refusing the trace.
    pub notes: TraceNotes,
    /// The trace's own session ids, as written, by `TraceRecord::session`.
    pub session_names: Vec<Arc<str>>,
}

/// Rows a trace holds that aisim replays, but not quite as written; counted
/// so a report shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceNotes {
    /// Rows whose `parent_chat_id` is not in the trace: replayed as first turns.
    pub orphan_turns: u64,
    /// Rows with fewer `hash_ids` than `ceil(input_length / trace_block_size)`
    /// (rows without any are not counted: they carry no prefix information).
    pub hash_ids_short: u64,
    /// Rows with more `hash_ids` than `ceil(input_length / trace_block_size)`.
    pub hash_ids_long: u64,
}

impl TraceNotes {
    fn count_hash_ids(&mut self, records: &[TraceRecord], trace_block_size: u32) {
        for r in records.iter().filter(|r| !r.hash_ids.is_empty()) {
            let want = (r.input_length as u64).div_ceil(trace_block_size.max(1) as u64);
            let have = r.hash_ids.len() as u64;
            self.hash_ids_short += u64::from(have < want);
            self.hash_ids_long += u64::from(have > want);
        }
    }
}

/// Reads a trace file; `format` overrides detection, `trace_block_size` the
/// format's default.
pub fn read_trace(
    path: &Path,
    format: Option<TraceFormat>,
    trace_block_size: Option<u32>,
) -> Result<TraceData, ReplayError> {
    let io = |source| ReplayError::Io {
        path: path.to_path_buf(),
        source,
    };
    let format = match format {
        Some(f) => f,
        None => {
            let mut lines = lines::Lines::new(BufReader::new(File::open(path).map_err(io)?), path);
            let mut first = String::new();
            while let Some((_, text)) = lines.next_line()? {
                if !text.trim().is_empty() {
                    first.push_str(text);
                    break;
                }
            }
            detect_format(path, &first)?
        }
    };
    if format == TraceFormat::Mooncake {
        let mut sessions = SessionInterner::default();
        let records = halves::read_mooncake(path, &mut sessions)?;
        return trace_data(path, format, trace_block_size, (records, 0), sessions);
    }
    let reader = BufReader::new(File::open(path).map_err(io)?);
    read_trace_from(reader, path, format, trace_block_size)
}

/// Reads a trace from any buffered reader; `path` names it in errors.
pub fn read_trace_from<R: BufRead>(
    reader: R,
    path: &Path,
    format: TraceFormat,
    trace_block_size: Option<u32>,
) -> Result<TraceData, ReplayError> {
    let mut sessions = SessionInterner::default();
    let s = &mut sessions;
    let rows = match format {
        TraceFormat::Mooncake => json_rows::read(reader, path, json_rows::Shape::Mooncake, s)?,
        TraceFormat::Bailian => json_rows::read(reader, path, json_rows::Shape::Bailian, s)?,
        TraceFormat::Azure => csv::read(reader, path, csv::Shape::Azure, s)?,
        TraceFormat::Burstgpt => csv::read(reader, path, csv::Shape::BurstGpt, s)?,
    };
    trace_data(path, format, trace_block_size, rows, sessions)
}

/// The trace of the rows read (records, and rows skipped on purpose).
fn trace_data(
    path: &Path,
    format: TraceFormat,
    trace_block_size: Option<u32>,
    (records, skipped_failed): (Vec<TraceRecord>, u64),
    sessions: SessionInterner,
) -> Result<TraceData, ReplayError> {
    if records.is_empty() {
        return Err(ReplayError::TraceFile {
            path: path.to_path_buf(),
            reason: "no requests in the trace".into(),
        });
    }
    let trace_block_size = trace_block_size.unwrap_or(format.default_block_size());
    let mut notes = TraceNotes {
        orphan_turns: chat_links::check(&records, path)?,
        ..TraceNotes::default()
    };
    notes.count_hash_ids(&records, trace_block_size);
    Ok(TraceData {
        path: path.to_path_buf(),
        format,
        trace_block_size,
        records,
        skipped_failed,
        notes,
        session_names: sessions.into_names(),
    })
}

/// Writes requests as Mooncake JSONL (what `aisim gen-trace` produces).
pub fn write_mooncake_row(
    out: &mut impl std::io::Write,
    timestamp_ms: f64,
    input_length: u32,
    output_length: u32,
    hash_ids: &[u64],
    session: Option<u64>,
    delay_ms: Option<f64>,
) -> std::io::Result<()> {
    write!(out, "{{\"timestamp\": {}, \"input_length\": {input_length}, \"output_length\": {output_length}, \"hash_ids\": [", fmt_ms(timestamp_ms))?;
    for (i, h) in hash_ids.iter().enumerate() {
        if i > 0 {
            out.write_all(b", ")?;
        }
        write!(out, "{h}")?;
    }
    out.write_all(b"]")?;
    if let Some(s) = session {
        write!(out, ", \"session_id\": {s}")?;
    }
    if let Some(d) = delay_ms {
        write!(out, ", \"delay_ms\": {}", fmt_ms(d))?;
    }
    out.write_all(b"}\n")
}

/// Milliseconds with at most microsecond precision, integers without a fraction.
fn fmt_ms(v: f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

//! The built-in demo: a small multi-turn trace the project generated itself
//! (`fixtures/demo_sessions.jsonl`, written by `aisim gen-trace`), embedded so the
//! demo runs from any directory.

use std::io::Cursor;
use std::path::Path;

use crate::error::ReplayError;
use crate::trace::{read_trace_from, TraceData, TraceFormat};

/// How the demo trace is named in reports.
pub const DEMO_TRACE_NAME: &str = "fixtures/demo_sessions.jsonl";

const DEMO: &str = include_str!("../../../../fixtures/demo_sessions.jsonl");

/// The demo trace, parsed.
pub fn demo_trace() -> Result<TraceData, ReplayError> {
    read_trace_from(
        Cursor::new(DEMO),
        Path::new(DEMO_TRACE_NAME),
        TraceFormat::Mooncake,
        None,
    )
}

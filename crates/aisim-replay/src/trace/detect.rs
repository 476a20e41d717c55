//! Format detection from the extension and the first line.

use std::path::Path;

use super::format::TraceFormat;
use crate::error::ReplayError;

/// Picks the format of `path` from its extension and `first_line`.
pub fn detect_format(path: &Path, first_line: &str) -> Result<TraceFormat, ReplayError> {
    let line = first_line.trim();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let json = line.starts_with('{') || matches!(ext.as_str(), "jsonl" | "json");
    if json {
        return Ok(if line.contains("\"chat_id\"") {
            TraceFormat::Bailian
        } else {
            TraceFormat::Mooncake
        });
    }
    let header = line.to_ascii_lowercase();
    if header.contains("contexttokens") {
        return Ok(TraceFormat::Azure);
    }
    if header.contains("request tokens") {
        return Ok(TraceFormat::Burstgpt);
    }
    Err(ReplayError::TraceFile {
        path: path.to_path_buf(),
        reason: "cannot tell the trace format from the extension and first line; pass --trace-format mooncake|bailian|azure|burstgpt".into(),
    })
}

//! How a reader reports a bad row: `row_error` names the file, line and
//! field, `shown` quotes a value in the message. Every reader, the line
//! splitter and the timestamp parser use them, and `mod.rs` calls the
//! readers, so they live below all of them.

use std::path::Path;

use crate::error::ReplayError;

/// A value as quoted in a message: at most 40 characters of it.
pub(crate) fn shown(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// The error for a bad row: the file, its line and field, and why.
pub fn row_error(path: &Path, line: usize, field: &str, reason: impl Into<String>) -> ReplayError {
    ReplayError::Trace {
        path: path.to_path_buf(),
        line,
        field: field.to_string(),
        reason: reason.into(),
    }
}

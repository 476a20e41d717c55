//! How a reader reports a bad row: `row_error` names the file, line and
//! field, and `shown` (aisim-core's) quotes a value in the message. Every
//! reader and the line splitter use them, and `mod.rs` calls the
//! readers, so they live below all of them.

use std::path::Path;

pub(crate) use aisim_core::number::shown;

use crate::error::ReplayError;

/// The error for a bad row: the file, its line and field, and why.
pub fn row_error(path: &Path, line: usize, field: &str, reason: impl Into<String>) -> ReplayError {
    ReplayError::Trace {
        path: path.to_path_buf(),
        line,
        field: field.to_string(),
        reason: reason.into(),
    }
}

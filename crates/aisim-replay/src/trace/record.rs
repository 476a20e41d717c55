//! What a reader makes of a row: its `TraceRecord`, with the row's session
//! id interned by `SessionInterner`. Every reader fills these in and
//! `mod.rs` gathers them, so they live below both: no reader imports the
//! module that calls it.

use std::collections::HashMap;
use std::sync::Arc;

/// One request row of a trace, as read (timestamps not yet normalized).
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRecord {
    /// 1-based line in the file.
    pub line: usize,
    /// Arrival, milliseconds on the trace's own clock.
    pub timestamp_ms: f64,
    /// Prompt tokens.
    pub input_length: u32,
    /// Output tokens.
    pub output_length: u32,
    /// Trace block ids of the prompt.
    pub hash_ids: Vec<u64>,
    /// Session (interned from `session_id` / `Session ID`).
    pub session: Option<u64>,
    /// Bailian chat id.
    pub chat_id: Option<i64>,
    /// Bailian parent chat id (`-1` or absent for a root).
    pub parent_chat_id: Option<i64>,
    /// Think time before this turn, from the row, milliseconds.
    pub think_ms: Option<f64>,
}

/// Interns session ids (strings or numbers) to dense integers, by first appearance.
#[derive(Debug, Default)]
pub(crate) struct SessionInterner(HashMap<String, u64>);

impl SessionInterner {
    pub fn intern(&mut self, key: &str) -> u64 {
        let next = self.0.len() as u64;
        *self.0.entry(key.to_string()).or_insert(next)
    }

    /// The ids as written, by interned number.
    pub fn into_names(self) -> Vec<Arc<str>> {
        let mut names: Vec<Arc<str>> = vec![Arc::from(""); self.0.len()];
        for (name, i) in self.0 {
            names[i as usize] = Arc::from(name);
        }
        names
    }
}

//! The request the fleet DES serves. The router reads it to pick a pool and
//! `mod.rs` generates and runs it, so it lives below both.

use crate::workload::Category;

/// One request offered to the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetRequest {
    /// Arrival, s.
    pub arrival_s: f64,
    /// Prompt tokens.
    pub l_in: u32,
    /// Output tokens.
    pub l_out: u32,
    /// Category.
    pub category: Category,
    /// Model id (for the `model` router).
    pub model: Option<String>,
}

//! # aisim-fleet: fleet planning
//!
//! Sizes GPU pools for a workload's length distribution with queueing theory
//! (Erlang-C, Kimura's M/G/c tail), checks the best candidates by simulation,
//! and explores thresholds, disaggregation and power. Profiles come from
//! [`aisim_core::profile`].
//!
//! ```
//! use aisim_fleet::erlang::{erlang_c, p99_wait};
//! assert!((erlang_c(10, 8.0) - 0.409180).abs() < 1e-6);
//! assert!((p99_wait(10, 8.0, 1.0, 1.0) - 1.855785).abs() < 1e-6);
//! ```

#![warn(missing_docs)]

pub mod calibrate;
pub mod cdf;
pub mod des;
pub mod disagg;
pub mod engine_verify;
pub mod erlang;
mod error;
pub mod fleet_file;
pub mod mgc;
pub mod optimize;
pub mod pareto;
pub mod plan;
pub mod power;
pub mod reports;
pub mod sizing;
pub mod workload;

pub use error::FleetError;

/// Version of the fleet report schema.
pub const SCHEMA_VERSION: u32 = 1;

/// Nearest-rank index of the 99th percentile among `n` sorted values.
pub(crate) fn p99_index(n: usize) -> usize {
    ((0.99 * n as f64).ceil() as usize).clamp(1, n) - 1
}

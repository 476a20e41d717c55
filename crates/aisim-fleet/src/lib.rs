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

pub mod batch;
pub mod calibrate;
pub mod cdf;
pub mod des;
pub mod disagg;
pub mod disagg_batch;
pub mod engine_verify;
pub mod erlang;
mod error;
pub mod fleet_file;
pub mod mgc;
pub mod optimize;
pub mod pareto;
pub mod plan;
pub mod pool_model;
pub mod power;
pub mod reports;
pub mod sizing;
pub mod validate;
pub mod workload;

pub use error::FleetError;

/// Version of the fleet report schema.
pub const SCHEMA_VERSION: u32 = 1;

/// The `p`-th percentile of `v` (sorted in place) by the replay's nearest-rank
/// estimator; 0 for no values.
pub(crate) fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[aisim_core::summary::rank_index(p, v.len() as u64) as usize]
}

//! Requests drawn from a CDF: total length, the 80/20 split, a category; and
//! arrival processes.

pub use aisim_replay::workload::random::{exponential, gamma, uniform01};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use crate::cdf::Cdf;

/// What a request is, for routers that care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Prose (60 %).
    Prose,
    /// Code (25 %): unsafe to compress.
    Code,
    /// Retrieval-augmented (15 %).
    Rag,
}

pub use aisim_replay::workload::synthetic::{sample_cdf_total, split_total as split_lengths};

/// A total length from `cdf`, clamped to `lo_clamp ..= pool_max` as calibration does.
pub fn sample_total(cdf: &Cdf, lo_clamp: u64, pool_max: u64, rng: &mut Pcg64) -> u64 {
    sample_cdf_total(&cdf.points, lo_clamp, pool_max, rng)
}

/// A category: prose 0.60, code 0.25, rag 0.15.
pub fn sample_category(rng: &mut Pcg64) -> Category {
    let u = uniform01(rng);
    if u < 0.60 {
        Category::Prose
    } else if u < 0.85 {
        Category::Code
    } else {
        Category::Rag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_80_20_with_floors() {
        assert_eq!(split_lengths(1000), (800, 200));
        assert_eq!(split_lengths(1), (1, 1));
        assert_eq!(split_lengths(4), (3, 1));
    }
}

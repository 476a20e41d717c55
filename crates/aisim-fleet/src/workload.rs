//! Requests drawn from a CDF: total length, the 80/20 split, a category; and
//! arrival processes.

pub use aisim_replay::workload::random::{exponential, gamma, uniform01};
use rand_core::RngCore;
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

/// `l_in = max(1, floor(0.8 × total))`, `l_out = max(1, total − l_in)`.
pub fn split_lengths(total: u64) -> (u32, u32) {
    let l_in = ((0.8 * total as f64).floor() as u64).max(1);
    let l_out = total.saturating_sub(l_in).max(1);
    (
        l_in.min(u32::MAX as u64) as u32,
        l_out.min(u32::MAX as u64) as u32,
    )
}

/// A total length: an interval with probability `F_i − F_(i−1)`, then uniform over
/// its integers (clamped to `lo_clamp ..= pool_max` as calibration does).
pub fn sample_total(cdf: &Cdf, lo_clamp: u64, pool_max: u64, rng: &mut Pcg64) -> u64 {
    let u = uniform01(rng);
    let mut prev_t = 0u64;
    for &(t, f) in &cdf.points {
        if u <= f || t == cdf.max_len() {
            let lo = lo_clamp.max(prev_t + 1);
            let hi = pool_max.min(t);
            if lo > hi {
                return pool_max;
            }
            return lo + rng.next_u64() % (hi - lo + 1);
        }
        prev_t = t;
    }
    pool_max
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

//! The statistics a measured run holds, computed as measurement tools do
//! (numpy's default linear-interpolation percentiles), so an import reproduces
//! a published summary.

use serde::{Deserialize, Serialize};

/// Mean and percentiles of one metric; any may be absent.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    /// 90th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    /// 99th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
}

/// Names of the statistics, in the order [`Stats::values`] gives them.
pub const STAT_NAMES: [&str; 4] = ["mean", "p50", "p90", "p99"];

impl Stats {
    /// The statistics in the order of [`STAT_NAMES`].
    pub fn values(&self) -> [Option<f64>; 4] {
        [self.mean, self.p50, self.p90, self.p99]
    }

    /// The statistics of `values` (none when empty; non-finite values are the
    /// caller's to exclude).
    pub fn of(values: &[f64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Stats {
            mean: Some(sorted.iter().sum::<f64>() / sorted.len() as f64),
            p50: Some(percentile(&sorted, 50.0)),
            p90: Some(percentile(&sorted, 90.0)),
            p99: Some(percentile(&sorted, 99.0)),
        }
    }
}

/// Percentile `p` of ascending `sorted` (not empty), interpolated linearly
/// between the closest ranks (numpy's default).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    sorted[lo] + (rank - lo as f64) * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn linear_percentiles() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.mean, Some(2.5));
        assert_eq!(s.p50, Some(2.5));
        assert_eq!(s.p90, Some(3.7));
        assert_eq!(Stats::of(&[]).mean, None);
    }

    proptest! {
        #[test]
        fn percentiles_are_ordered_and_bounded(v in proptest::collection::vec(0.0f64..1e6, 1..50)) {
            let s = Stats::of(&v);
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(0.0, f64::max);
            let [_, p50, p90, p99] = s.values().map(Option::unwrap);
            prop_assert!(lo <= p50 && p50 <= p90 && p90 <= p99 && p99 <= hi);
        }
    }
}

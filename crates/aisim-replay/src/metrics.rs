//! Distribution summaries with the declared percentile estimator: nearest rank,
//! `rank = ceil(p/100 × n)`.

use serde::Serialize;

/// The percentile estimator, as stated in every report.
pub const ESTIMATOR: &str = "nearest rank: rank = ceil(p/100 * n) over the sorted values";

const PS: [f64; 6] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9];

/// Mean, extremes, percentiles and standard deviation of one metric. A field is
/// `null` when there are no values, or (offered view) when it lands on a request
/// that did not complete.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Summary {
    /// Values summarized.
    pub count: u64,
    /// Mean.
    pub mean: Option<f64>,
    /// Smallest.
    pub min: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 75th percentile.
    pub p75: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// 99.9th percentile.
    pub p999: Option<f64>,
    /// Population standard deviation.
    pub std: Option<f64>,
}

/// Nearest-rank index (0-based) of percentile `p` among `n` values.
pub fn rank_index(p: f64, n: u64) -> u64 {
    ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n) - 1
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl Summary {
    /// Summary of `values` (sorted in place). Infinite values stand for requests
    /// that never finished: percentiles landing on them, the mean, the maximum and
    /// the deviation become `null`.
    pub fn of(values: &mut [f64]) -> Summary {
        // Unstable is enough: values equal under `total_cmp` are identical.
        values.sort_unstable_by(f64::total_cmp);
        let weighted: Vec<(f64, u64)> = values.iter().map(|&v| (v, 1)).collect();
        Summary::of_sorted_counts(&weighted)
    }

    /// Summary of distinct values with counts, sorted by value.
    pub fn of_sorted_counts(values: &[(f64, u64)]) -> Summary {
        Summary::of_sorted_runs(values.iter().copied())
    }

    /// Summary of (value, count) runs by increasing value, read a few times
    /// over (hence `Clone`) instead of collected.
    pub fn of_sorted_runs(runs: impl Iterator<Item = (f64, u64)> + Clone) -> Summary {
        // Pass 1: count, sum and minimum.
        let (mut n, mut sum, mut min) = (0u64, 0.0f64, f64::NAN);
        for (v, c) in runs.clone() {
            if n == 0 {
                min = v;
            }
            n += c;
            sum += v * c as f64;
        }
        if n == 0 {
            return Summary::default();
        }
        let mean = sum / n as f64;
        // Pass 2: deviation, and the values at the percentile ranks (which
        // increase with the percentile) and at the last rank (the maximum).
        let mut ranks = [0u64; PS.len() + 1];
        for (r, &q) in ranks.iter_mut().zip(PS.iter()) {
            *r = rank_index(q, n);
        }
        ranks[PS.len()] = n - 1;
        let mut at = [f64::NAN; PS.len() + 1];
        let (mut next, mut seen, mut var_sum) = (0, 0u64, 0.0f64);
        for (v, c) in runs {
            var_sum += (v - mean).powi(2) * c as f64;
            seen += c;
            while next < ranks.len() && ranks[next] < seen {
                at[next] = v;
                next += 1;
            }
        }
        let var = var_sum / n as f64;
        Summary {
            count: n,
            mean: finite(mean),
            min: finite(min),
            max: finite(at[PS.len()]),
            p50: finite(at[0]),
            p75: finite(at[1]),
            p90: finite(at[2]),
            p95: finite(at[3]),
            p99: finite(at[4]),
            p999: finite(at[5]),
            std: finite(var.sqrt()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&mut v);
        assert_eq!(
            (s.p50, s.p90, s.p99, s.p999),
            (Some(50.0), Some(90.0), Some(99.0), Some(100.0))
        );
        assert_eq!(s.mean, Some(50.5));
        let mut one = [7.0];
        assert_eq!(Summary::of(&mut one).p50, Some(7.0));
        assert_eq!(Summary::of(&mut []).count, 0);
    }

    #[test]
    fn unfinished_requests_read_as_null() {
        let mut v: Vec<f64> = (1..=98).map(f64::from).collect();
        v.extend([f64::INFINITY, f64::INFINITY]);
        let s = Summary::of(&mut v);
        assert_eq!(s.p95, Some(95.0));
        assert_eq!(s.p99, None);
        assert_eq!(s.mean, None);
        assert_eq!(s.min, Some(1.0));
    }
}

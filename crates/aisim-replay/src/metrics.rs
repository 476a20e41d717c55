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
        values.sort_by(f64::total_cmp);
        let weighted: Vec<(f64, u64)> = values.iter().map(|&v| (v, 1)).collect();
        Summary::of_sorted_counts(&weighted)
    }

    /// Summary of distinct values with counts, sorted by value.
    pub fn of_sorted_counts(values: &[(f64, u64)]) -> Summary {
        let n: u64 = values.iter().map(|v| v.1).sum();
        if n == 0 {
            return Summary::default();
        }
        let at_rank = |idx: u64| -> f64 {
            let mut seen = 0;
            for &(v, c) in values {
                seen += c;
                if idx < seen {
                    return v;
                }
            }
            values[values.len() - 1].0
        };
        let sum: f64 = values.iter().map(|&(v, c)| v * c as f64).sum();
        let mean = sum / n as f64;
        let var = values
            .iter()
            .map(|&(v, c)| (v - mean).powi(2) * c as f64)
            .sum::<f64>()
            / n as f64;
        let p = |q: f64| finite(at_rank(rank_index(q, n)));
        Summary {
            count: n,
            mean: finite(mean),
            min: finite(values[0].0),
            max: finite(values[values.len() - 1].0),
            p50: p(PS[0]),
            p75: p(PS[1]),
            p90: p(PS[2]),
            p95: p(PS[3]),
            p99: p(PS[4]),
            p999: p(PS[5]),
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

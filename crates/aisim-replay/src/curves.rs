//! Cumulative distributions of the report's latency metrics, for charts:
//! at most `CDF_POINTS` points each, read from the same exact-then-sketched
//! values the percentiles come from (`distribution.rs`), so they cost no
//! memory of their own and agree with the report's percentiles.

use serde::{Deserialize, Serialize};

use aisim_core::sketch::LogSketch;
use aisim_core::summary::rank_index_permille;

/// Most points of a curve: the value at every per-mille rank.
pub const CDF_POINTS: u64 = 1000;

/// An empirical CDF: `(value, fraction of the values at or below it)`, by
/// increasing value, the last fraction 1 (finite values only).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Cdf {
    /// Values the curve is of.
    pub count: u64,
    /// The points.
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// The curve of `sorted` values: each distinct value at the fraction of
    /// the values up to it when there are at most `CDF_POINTS`, else the
    /// nearest-rank value at each per mille.
    pub fn of_sorted(sorted: &[f64]) -> Cdf {
        let n = sorted.len() as u64;
        let points = if n <= CDF_POINTS {
            let mut points: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
            for (i, &v) in sorted.iter().enumerate() {
                let p = (i + 1) as f64 / n as f64;
                match points.last_mut() {
                    Some(last) if last.0 == v => last.1 = p,
                    _ => points.push((v, p)),
                }
            }
            points
        } else {
            per_mille(|rank| sorted.get(rank as usize).copied(), n)
        };
        Cdf::finite(n, points)
    }

    /// The curve of a sketch, at each per mille.
    pub fn of_sketch(s: &LogSketch) -> Cdf {
        Cdf::finite(s.count(), per_mille(|rank| s.at_rank(rank), s.count()))
    }

    fn finite(count: u64, points: Vec<(f64, f64)>) -> Cdf {
        Cdf {
            count,
            points: points.into_iter().filter(|p| p.0.is_finite()).collect(),
        }
    }
}

fn per_mille(at: impl Fn(u64) -> Option<f64>, n: u64) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    for k in 1..=CDF_POINTS {
        let Some(v) = at(rank_index_permille(k, n)) else {
            continue;
        };
        let p = k as f64 / CDF_POINTS as f64;
        match points.last_mut() {
            Some(last) if last.0 == v => last.1 = p,
            _ => points.push((v, p)),
        }
    }
    points
}

/// The curves the HTML report draws, of the cohort's completed requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReportCdfs {
    /// TTFT (first token − planned arrival), ms.
    pub ttft_ms: Cdf,
    /// TPOT, ms.
    pub tpot_ms: Cdf,
    /// E2E (terminal − planned arrival), ms.
    pub e2e_ms: Cdf,
    /// Realized inter-turn gap (dispatch − end of the previous turn), ms.
    pub realized_gap_ms: Cdf,
    /// The same gap on the trace clock, ms.
    pub trace_gap_ms: Cdf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_values_give_a_step_per_distinct_value() {
        let c = Cdf::of_sorted(&[1.0, 2.0, 2.0, 5.0]);
        assert_eq!(c.points, vec![(1.0, 0.25), (2.0, 0.75), (5.0, 1.0)]);
        assert_eq!(Cdf::of_sorted(&[]).points, vec![]);
    }
}

//! The mean and 95 % Student-t interval of a statistic over seeds.

use serde::{Deserialize, Serialize};

/// Mean and 95 % interval of a statistic over seeds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Interval {
    /// Mean.
    pub mean: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Interval {
    /// The interval cut to the statistic's range (a compliance is in [0, 1],
    /// a latency is at least 0): a t-interval over few seeds can overshoot it.
    pub fn within(self, lo: f64, hi: f64) -> Interval {
        Interval {
            mean: self.mean,
            lo: self.lo.clamp(lo, hi),
            hi: self.hi.clamp(lo, hi),
        }
    }
}

/// Student-t 97.5 % quantiles for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The standard normal 97.5 % quantile.
const Z975: f64 = 1.959_963_984_540_054;

/// The Student-t 97.5 % quantile for `df` degrees of freedom (at least 1):
/// the table to 30, then the Cornish-Fisher expansion in `1/df` (Abramowitz
/// and Stegun 26.7.5), within 1e-4 of the exact value there and tending to
/// the normal quantile.
pub fn t975(df: u64) -> f64 {
    match T975.get(df.max(1) as usize - 1) {
        Some(&t) => t,
        None => cornish_fisher(df),
    }
}

/// The t quantile from the normal one, to fourth order in `1/df`.
fn cornish_fisher(df: u64) -> f64 {
    let z = Z975;
    let v = df as f64;
    let (z2, z3) = (z * z, z * z * z);
    let (z5, z7, z9) = (z3 * z2, z3 * z2 * z2, z3 * z3 * z3);
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
}

/// Mean and 95 % t-interval of `xs`: `mean ± t975(n − 1) × s / √n`, `s` the
/// sample standard deviation (n − 1 in the denominator). One value is a
/// point: nothing measures its spread.
pub fn interval(xs: &[f64]) -> Interval {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return Interval {
            mean,
            lo: mean,
            hi: mean,
        };
    }
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let h = t975(n as u64 - 1) * sd / (n as f64).sqrt();
    Interval {
        mean,
        lo: mean - h,
        hi: mean + h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn quantiles_past_the_table_match_the_exact_values() {
        // Exact 97.5 % quantiles (R's qt(0.975, df)).
        for (df, exact) in [
            (31, 2.039_513),
            (40, 2.021_075),
            (60, 2.000_298),
            (120, 1.979_930),
            (1000, 1.962_339),
        ] {
            assert!((t975(df) - exact).abs() < 1e-4, "df {df}: {}", t975(df));
        }
        // The expansion meets the table where it ends.
        assert!((cornish_fisher(30) - T975[29]).abs() < 5e-4);
        assert!((t975(u64::MAX) - Z975).abs() < 1e-12);
    }

    #[test]
    fn one_value_is_a_point_and_identical_values_have_no_width() {
        assert_eq!(
            interval(&[3.5]),
            Interval {
                mean: 3.5,
                lo: 3.5,
                hi: 3.5
            }
        );
        assert_eq!(
            interval(&[2.0; 7]),
            Interval {
                mean: 2.0,
                lo: 2.0,
                hi: 2.0
            }
        );
        let iv = interval(&[1.0, 3.0]);
        assert_eq!((iv.mean, iv.lo, iv.hi), (2.0, 2.0 - 12.706, 2.0 + 12.706));
    }

    proptest! {
        /// The interval is symmetric about the mean, contains it, and
        /// narrows as the t quantile falls with more values.
        #[test]
        fn the_interval_contains_the_mean(xs in proptest::collection::vec(-1e6f64..1e6, 1..80)) {
            let iv = interval(&xs);
            prop_assert!(iv.lo <= iv.mean && iv.mean <= iv.hi, "{iv:?}");
            let tol = 1e-9 * (1.0 + iv.mean.abs() + (iv.hi - iv.lo));
            prop_assert!(((iv.hi - iv.mean) - (iv.mean - iv.lo)).abs() <= tol);
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(iv.mean >= lo - tol && iv.mean <= hi + tol);
        }

        #[test]
        fn t_quantiles_fall_with_the_degrees_of_freedom(df in 1u64..100_000) {
            prop_assert!(t975(df + 1) < t975(df), "df {}: {} then {}", df, t975(df), t975(df + 1));
            prop_assert!(t975(df) > Z975);
        }
    }
}

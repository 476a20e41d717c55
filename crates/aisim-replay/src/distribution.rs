//! `Distribution`: the values of one metric, kept exactly up to
//! `EXACT_LIMIT` values and folded into a `LogSketch` beyond, so a run of any
//! size summarizes in bounded memory.

use crate::curves::Cdf;
use aisim_core::sketch::LogSketch;
use aisim_core::summary::Summary;

/// Values a distribution keeps exactly (8 MiB of `f64`); past it, percentiles
/// come from the sketch, within `sketch::RELATIVE_ACCURACY`.
pub const EXACT_LIMIT: usize = 1 << 20;

/// One metric's values.
#[derive(Debug, Clone)]
pub struct Distribution {
    exact: Vec<f64>,
    sketch: Option<LogSketch>,
    limit: usize,
}

impl Default for Distribution {
    fn default() -> Distribution {
        Distribution::with_limit(EXACT_LIMIT)
    }
}

impl Distribution {
    /// Exact up to `limit` values (the default is `EXACT_LIMIT`).
    pub fn with_limit(limit: usize) -> Distribution {
        Distribution {
            exact: Vec::new(),
            sketch: None,
            limit,
        }
    }

    /// Adds a value (`+inf` for a request that never finished).
    #[inline]
    pub fn add(&mut self, v: f64) {
        if let Some(s) = &mut self.sketch {
            s.add(v);
        } else if self.exact.len() < self.limit {
            self.exact.push(v);
        } else {
            let mut s = LogSketch::default();
            for &x in &self.exact {
                s.add(x);
            }
            s.add(v);
            self.exact = Vec::new();
            self.sketch = Some(s);
        }
    }

    /// Whether it went past its limit and percentiles are approximate.
    pub fn is_sketched(&self) -> bool {
        self.sketch.is_some()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.exact.capacity() * std::mem::size_of::<f64>()
            + self.sketch.as_ref().map_or(0, LogSketch::heap_bytes)
    }

    /// Its CDF (`curves.rs`); sorts the exact values in place.
    pub fn cdf(&mut self) -> Cdf {
        match &self.sketch {
            Some(s) => Cdf::of_sketch(s),
            None => {
                self.exact.sort_unstable_by(f64::total_cmp);
                Cdf::of_sorted(&self.exact)
            }
        }
    }

    /// The summary: exact nearest rank, or read from the sketch.
    pub fn summary(mut self) -> Summary {
        match &self.sketch {
            Some(s) => Summary::of_sketch(s),
            None => Summary::of(&mut self.exact),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_up_to_the_limit_then_sketched_in_bounded_memory() {
        let mut d = Distribution::with_limit(1000);
        for i in 0..1000 {
            d.add(1.0 + i as f64);
        }
        assert!(!d.is_sketched());
        let exact = d.clone().summary();
        assert_eq!((exact.p50, exact.p999), (Some(500.0), Some(999.0)));
        d.add(1001.0);
        assert!(d.is_sketched());
        let held = d.heap_bytes();
        for i in 0..100_000 {
            d.add(1.0 + (i % 1001) as f64);
        }
        assert_eq!(d.heap_bytes(), held, "memory does not grow with the count");
        let s = d.summary();
        assert_eq!(s.count, 101_001);
        let p50 = s.p50.unwrap();
        assert!((p50 - 501.0).abs() <= 501.0 * aisim_core::sketch::RELATIVE_ACCURACY);
        assert_eq!((s.min, s.max), (Some(1.0), Some(1001.0)));
    }

    #[test]
    fn many_values_give_the_report_percentiles_at_their_per_mille() {
        for limit in [usize::MAX, 100] {
            let mut d = Distribution::with_limit(limit);
            for i in 0..10_007u64 {
                d.add(((i * 7919) % 10_007) as f64 + 0.5);
            }
            let c = d.cdf();
            let s: Summary = d.summary();
            assert!(c.points.len() as u64 <= crate::curves::CDF_POINTS);
            let at = |p: f64| c.points.iter().find(|q| q.1 >= p - 1e-12).unwrap().0;
            assert_eq!(Some(at(0.5)), s.p50);
            assert_eq!(Some(at(0.99)), s.p99);
            assert_eq!(Some(at(0.999)), s.p999);
            assert_eq!(c.points.last().unwrap().1, 1.0);
            assert!(c
                .points
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        }
    }
}

//! `LogSketch`: a mergeable log-linear histogram of non-negative values with a
//! stated relative accuracy, for distributions too large to keep exactly.
//!
//! A positive normal `f64` is `2^e × 1.m`; its bucket is `e` and the top
//! `SUB_BUCKET_BITS` bits of `m`, which is simply the top bits of its IEEE
//! representation (monotone in the value for non-negative floats). A bucket
//! spans `[lo, lo × (1 + 2^-7))` at most, so its midpoint is within
//! `RELATIVE_ACCURACY` (2^-8) of every value in it. Count, minimum and maximum
//! are exact; mean and deviation are exact up to floating-point rounding
//! (Welford's method). Memory is one counter per bucket between the smallest
//! and largest value seen: about 128 counters per factor of two.

/// Mantissa bits that pick the bucket within a power of two.
const SUB_BUCKET_BITS: u32 = 7;
const SHIFT: u32 = 52 - SUB_BUCKET_BITS;

/// Largest relative error of a quantile read from the sketch: the value
/// returned for a rank is within this fraction of the exact value at that rank.
pub const RELATIVE_ACCURACY: f64 = 1.0 / (1u64 << (SUB_BUCKET_BITS + 1)) as f64;

/// The histogram. Values below the smallest normal float (in practice: zero)
/// are counted apart and read back as 0; infinite values (requests that never
/// finished) are counted apart and sort above every finite one.
#[derive(Debug, Clone, Default)]
pub struct LogSketch {
    /// Bucket index of `counts[0]`.
    first: u32,
    counts: Vec<u64>,
    zeros: u64,
    finite: u64,
    infinite: u64,
    min: f64,
    max: f64,
    mean: f64,
    m2: f64,
}

fn bucket(v: f64) -> u32 {
    (v.to_bits() >> SHIFT) as u32
}

/// The midpoint of bucket `i`.
fn midpoint(i: u32) -> f64 {
    let lo = f64::from_bits((i as u64) << SHIFT);
    let hi = f64::from_bits((i as u64 + 1) << SHIFT);
    lo + (hi - lo) / 2.0
}

impl LogSketch {
    /// Adds one value.
    #[inline]
    pub fn add(&mut self, v: f64) {
        self.add_n(v, 1);
    }

    /// Adds `count` copies of `v` (non-negative or `+inf`; NaN and negative
    /// values, which no metric produces, count as zero).
    pub fn add_n(&mut self, v: f64, count: u64) {
        if count == 0 {
            return;
        }
        if v == f64::INFINITY {
            self.infinite += count;
            return;
        }
        let v = if v >= 0.0 { v } else { 0.0 };
        self.moments(v, count);
        if v < f64::MIN_POSITIVE {
            self.zeros += count;
            return;
        }
        self.count_bucket(bucket(v), count);
    }

    /// Adds `count` to bucket `i`'s counter (moments untouched).
    fn count_bucket(&mut self, i: u32, count: u64) {
        if self.counts.is_empty() {
            self.first = i;
        } else if i < self.first {
            let grow = (self.first - i) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = i;
        }
        let at = (i - self.first) as usize;
        if at >= self.counts.len() {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] += count;
    }

    fn moments(&mut self, v: f64, count: u64) {
        if self.finite == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        // Welford, weighted: stable where a sum of squares would cancel.
        let n = self.finite + count;
        let delta = v - self.mean;
        self.mean += delta * count as f64 / n as f64;
        self.m2 += delta * (v - self.mean) * count as f64;
        self.finite = n;
    }

    /// Adds every value of `other` (the result is what adding them one by one
    /// would give, up to rounding of the mean and deviation).
    pub fn merge(&mut self, other: &LogSketch) {
        if other.finite > 0 {
            let n = self.finite + other.finite;
            let delta = other.mean - self.mean;
            let (a, b) = (self.finite as f64, other.finite as f64);
            let m2 = self.m2 + other.m2 + delta * delta * a * b / n as f64;
            let mean = self.mean + delta * b / n as f64;
            let (min, max) = if self.finite == 0 {
                (other.min, other.max)
            } else {
                (self.min.min(other.min), self.max.max(other.max))
            };
            (self.finite, self.mean, self.m2, self.min, self.max) = (n, mean, m2, min, max);
        }
        self.zeros += other.zeros;
        self.infinite += other.infinite;
        for (k, &c) in other.counts.iter().enumerate() {
            if c > 0 {
                self.count_bucket(other.first + k as u32, c);
            }
        }
    }

    /// Values added, infinite ones included.
    pub fn count(&self) -> u64 {
        self.finite + self.infinite
    }

    /// Infinite values added.
    pub fn infinite(&self) -> u64 {
        self.infinite
    }

    /// Smallest and largest finite value, exact.
    pub fn min_max(&self) -> Option<(f64, f64)> {
        (self.finite > 0).then_some((self.min, self.max))
    }

    /// Mean of the finite values.
    pub fn mean(&self) -> Option<f64> {
        (self.finite > 0).then_some(self.mean)
    }

    /// Population standard deviation of the finite values.
    pub fn std(&self) -> Option<f64> {
        (self.finite > 0).then(|| (self.m2 / self.finite as f64).max(0.0).sqrt())
    }

    /// The value at 0-based `rank` in sorted order, within `RELATIVE_ACCURACY`
    /// of the exact one (clamped to the exact extremes); `+inf` when the rank
    /// falls on an infinite value, `None` past the end.
    pub fn at_rank(&self, rank: u64) -> Option<f64> {
        if rank >= self.count() {
            return None;
        }
        if rank >= self.finite {
            return Some(f64::INFINITY);
        }
        if rank < self.zeros {
            return Some(0.0);
        }
        let mut seen = self.zeros;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += c;
            if rank < seen {
                let v = midpoint(self.first + k as u32);
                return Some(v.clamp(self.min, self.max));
            }
        }
        unreachable!("the bucket counts add up to the finite count")
    }

    /// Heap bytes held (the counters).
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact_at(sorted: &[f64], rank: usize) -> f64 {
        sorted[rank]
    }

    proptest! {
        #[test]
        fn every_rank_is_within_the_stated_accuracy(
            mut values in prop::collection::vec(
                prop_oneof![Just(0.0), 1e-6f64..1e9, 0.5f64..2.0], 1..400),
        ) {
            let mut s = LogSketch::default();
            for &v in &values {
                s.add(v);
            }
            values.sort_by(f64::total_cmp);
            prop_assert_eq!(s.count(), values.len() as u64);
            for rank in 0..values.len() {
                let exact = exact_at(&values, rank);
                let got = s.at_rank(rank as u64).unwrap();
                prop_assert!((got - exact).abs() <= RELATIVE_ACCURACY * exact,
                    "rank {}: {} against exact {}", rank, got, exact);
            }
            prop_assert_eq!(s.at_rank(values.len() as u64), None);
            let (min, max) = s.min_max().unwrap();
            prop_assert_eq!((min, max), (values[0], values[values.len() - 1]));
        }

        #[test]
        fn merging_two_sketches_is_sketching_both_halves(
            a in prop::collection::vec(1e-3f64..1e6, 0..200),
            b in prop::collection::vec(1e-3f64..1e6, 0..200),
        ) {
            let (mut sa, mut sb, mut all) =
                (LogSketch::default(), LogSketch::default(), LogSketch::default());
            for &v in &a { sa.add(v); all.add(v); }
            for &v in &b { sb.add(v); all.add(v); }
            sa.merge(&sb);
            prop_assert_eq!(sa.count(), all.count());
            for rank in 0..all.count() {
                prop_assert_eq!(sa.at_rank(rank), all.at_rank(rank));
            }
            prop_assert_eq!(sa.min_max(), all.min_max());
            if let (Some(m1), Some(m2)) = (sa.mean(), all.mean()) {
                prop_assert!((m1 - m2).abs() <= 1e-9 * m2.abs().max(1.0));
            }
        }
    }

    #[test]
    fn infinite_values_sort_last_and_zeros_first() {
        let mut s = LogSketch::default();
        s.add_n(f64::INFINITY, 2);
        s.add(3.0);
        s.add(0.0);
        assert_eq!(s.count(), 4);
        assert_eq!(s.at_rank(0), Some(0.0));
        assert_eq!(s.at_rank(1), Some(3.0)); // clamped to the exact maximum
        assert_eq!(s.at_rank(2), Some(f64::INFINITY));
        assert_eq!(s.at_rank(4), None);
        assert_eq!(s.mean(), Some(1.5));
        assert_eq!(s.std(), Some(1.5));
    }

    #[test]
    fn memory_is_bounded_by_the_range_not_the_count() {
        let mut s = LogSketch::default();
        for i in 0..200_000u64 {
            s.add(1.0 + (i % 1000) as f64); // 1 ..= 1000: ten powers of two
        }
        assert_eq!(s.count(), 200_000);
        // 128 counters per power of two, allocation slack at most doubling.
        assert!(
            s.heap_bytes() <= 2 * 11 * 128 * 8,
            "{} bytes",
            s.heap_bytes()
        );
    }
}

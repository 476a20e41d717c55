//! `LaneRanges`: the lane numbers one rank holds under one key of the kv
//! router's index, as disjoint ranges. A radix cache holds a span's pages
//! from its first on, so in a replay it is one range, kept inline; any
//! other sequence of events (a caller's own) is kept exactly, on the heap.

/// Disjoint, non-adjacent ranges of lanes, `[lo, hi)` each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LaneRanges {
    /// One range, `(lo, hi)` (empty when `lo == hi`).
    One((u32, u32)),
    /// Two or more, sorted.
    Many(Vec<(u32, u32)>),
}

impl LaneRanges {
    fn as_slice(&self) -> &[(u32, u32)] {
        match self {
            LaneRanges::One((lo, hi)) if lo == hi => &[],
            LaneRanges::One(r) => std::slice::from_ref(r),
            LaneRanges::Many(v) => v,
        }
    }

    /// Whether no lane is held.
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Holds `[lo, hi)` too; the lanes newly held.
    pub fn add(&mut self, lo: u32, hi: u32) -> u32 {
        if lo >= hi {
            return 0;
        }
        if let LaneRanges::One((a, b)) = *self {
            if a == b || (lo <= b && a <= hi) {
                let (a, b, was) = if a == b { (lo, hi, 0) } else { (a, b, b - a) };
                let (na, nb) = (a.min(lo), b.max(hi));
                *self = LaneRanges::One((na, nb));
                return nb - na - was;
            }
        }
        let mut v = self.as_slice().to_vec();
        let was = total(&v);
        v.push((lo, hi));
        v.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(v.len());
        for (a, b) in v {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let added = total(&merged) - was;
        *self = LaneRanges::from_vec(merged);
        added
    }

    /// Holds `[lo, hi)` no more; the lanes no longer held.
    pub fn remove(&mut self, lo: u32, hi: u32) -> u32 {
        if lo >= hi {
            return 0;
        }
        if let LaneRanges::One((a, b)) = *self {
            let (cut_lo, cut_hi) = (lo.max(a), hi.min(b));
            if cut_lo >= cut_hi {
                return 0;
            }
            // A cut at either end leaves one range (a span loses its tail).
            if cut_lo == a || cut_hi == b {
                *self = if cut_lo == a {
                    LaneRanges::One((cut_hi, b))
                } else {
                    LaneRanges::One((a, cut_lo))
                };
                return cut_hi - cut_lo;
            }
        }
        let v = self.as_slice();
        let was = total(v);
        let mut left = Vec::with_capacity(v.len() + 1);
        for &(a, b) in v {
            if a < lo.min(b) {
                left.push((a, lo.min(b)));
            }
            if hi.max(a) < b {
                left.push((hi.max(a), b));
            }
        }
        let removed = was - total(&left);
        *self = LaneRanges::from_vec(left);
        removed
    }

    /// Lanes held in one run from `lane` on (0 when `lane` is not held).
    pub fn run_from(&self, lane: u32) -> u32 {
        self.as_slice()
            .iter()
            .find(|&&(a, b)| a <= lane && lane < b)
            .map_or(0, |&(_, b)| b - lane)
    }

    fn from_vec(v: Vec<(u32, u32)>) -> LaneRanges {
        match v[..] {
            [] => LaneRanges::One((0, 0)),
            [r] => LaneRanges::One(r),
            _ => LaneRanges::Many(v),
        }
    }
}

fn total(v: &[(u32, u32)]) -> u32 {
    v.iter().map(|&(a, b)| b - a).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Whatever ranges are added and removed, it holds exactly their
        /// lanes, counts each change right, and `run_from` reads the run.
        #[test]
        fn it_holds_exactly_the_lanes_added_and_not_removed(
            ops in prop::collection::vec((any::<bool>(), 0u32..40, 0u32..12), 1..40),
        ) {
            let mut ranges = LaneRanges::One((0, 0));
            let mut model = BTreeSet::new();
            for (add, lo, len) in ops {
                let lanes = lo..lo + len;
                let changed = lanes.clone().filter(|l| model.contains(l) != add).count() as u32;
                let got = if add { ranges.add(lo, lo + len) } else { ranges.remove(lo, lo + len) };
                prop_assert_eq!(got, changed);
                for l in lanes {
                    if add { model.insert(l); } else { model.remove(&l); }
                }
                prop_assert_eq!(ranges.is_empty(), model.is_empty());
                for l in 0..60 {
                    let run = (l..).take_while(|x| model.contains(x)).count() as u32;
                    prop_assert_eq!(ranges.run_from(l), run, "lane {}", l);
                }
            }
        }
    }

    #[test]
    fn a_span_stored_in_pieces_and_cut_from_its_end_stays_inline() {
        let mut r = LaneRanges::One((0, 0));
        assert_eq!((r.add(3, 10), r.add(10, 20)), (7, 10));
        assert_eq!(r.remove(15, 20), 5);
        assert_eq!(r, LaneRanges::One((3, 15)));
        assert_eq!(r.remove(3, 15), 12);
        assert!(r.is_empty());
    }
}

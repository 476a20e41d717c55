//! `GapTable`: a count per distinct inter-token gap under 4.3 s, in an
//! open-addressed table. A replay's half million gaps hold some tens of
//! thousands of values, so counting them as they come costs a probe of a
//! table that stays in cache per gap, where sorting them cost two radix
//! passes over every gap and a merge per chunk; only the distinct values
//! are sorted, when the runs are read.

use aisim_core::prefetch::prefetch;

/// A slot holding no gap: no count reaches `u32::MAX` (a buffer folds after
/// 2^20 gaps), so no gap's slot is all ones.
const EMPTY: u64 = u64::MAX;
/// Slots of a new table (32 KiB): it doubles as it fills.
const FIRST_SLOTS: usize = 1 << 12;

/// Distinct gaps (nanoseconds, under 2^32) and their counts, each slot
/// packed `gap << 32 | count`, at most three quarters full: a replay's
/// gaps are mostly repeats, found in a probe or two at that load, and a
/// table half the size is half the fresh pages (a run's 46,000 distinct
/// gaps fill 65,536 slots, not 131,072).
#[derive(Debug)]
pub(crate) struct GapTable {
    slots: Vec<u64>,
    /// log2 of the slot count.
    bits: u32,
    len: usize,
}

impl Default for GapTable {
    fn default() -> GapTable {
        GapTable::with_bits(FIRST_SLOTS.trailing_zeros())
    }
}

impl GapTable {
    fn with_bits(bits: u32) -> GapTable {
        GapTable {
            slots: vec![EMPTY; 1 << bits],
            bits,
            len: 0,
        }
    }

    /// The slot a gap's probe starts at: the high bits of a multiplicative
    /// hash (gaps of a replay crowd a narrow band; their low bits alone
    /// would cluster).
    #[inline]
    fn home(&self, gap: u32) -> usize {
        (gap.wrapping_mul(0x9e37_79b1) as u64 >> (32 - self.bits)) as usize
    }

    /// `add(gap, count)` for the (gap, count) of each entry, in order. A
    /// run with many distinct gaps has a table larger than the core's
    /// cache, and each probe a miss: the slots of the entries sixteen
    /// ahead are loaded while one is counted.
    #[inline]
    pub fn add_all<T: Copy>(&mut self, entries: &[T], gap_count: impl Fn(T) -> (u32, u32)) {
        const AHEAD: usize = 16;
        for (k, &e) in entries.iter().enumerate() {
            if let Some(&ahead) = entries.get(k + AHEAD) {
                if let Some(slot) = self.slots.get(self.home(gap_count(ahead).0)) {
                    prefetch(slot);
                }
            }
            let (gap, count) = gap_count(e);
            self.add(gap, count);
        }
    }

    /// Counts `count` more gaps of `gap` (a buffer's total stays below
    /// 2^32).
    #[inline]
    pub fn add(&mut self, gap: u32, count: u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(gap);
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                self.slots[i] = u64::from(gap) << 32 | u64::from(count);
                self.len += 1;
                if 4 * self.len > 3 * self.slots.len() {
                    self.grow();
                }
                return;
            }
            if (slot >> 32) as u32 == gap {
                self.slots[i] = slot + u64::from(count);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::replace(self, GapTable::with_bits(self.bits + 1));
        let mask = self.slots.len() - 1;
        for slot in old.slots.into_iter().filter(|&s| s != EMPTY) {
            let mut i = self.home((slot >> 32) as u32);
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
        self.len = old.len;
    }

    /// The counted gaps as runs sorted by gap, packed `gap << 32 | count`,
    /// into `out` (cleared first), sorted with `buffers`.
    pub fn sorted_runs(&self, out: &mut Vec<u64>, buffers: &mut SortBuffers) {
        out.clear();
        // Exactly: a doubling past the count would hold twice the memory.
        out.reserve_exact(self.len);
        out.extend(self.slots.iter().copied().filter(|&s| s != EMPTY));
        radix_sort_by_gap(out, buffers);
    }

    /// Forgets every gap; the table keeps its size.
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill(EMPTY);
            self.len = 0;
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 8
    }
}

/// The radix sort's second buffer and count table, kept from sort to sort
/// (a run reads its table at every fold: neither is allocated and faulted
/// in afresh each time).
#[derive(Debug, Default)]
pub(crate) struct SortBuffers {
    scratch: Vec<u64>,
    counts: Vec<u32>,
}

impl SortBuffers {
    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.scratch.capacity() * 8 + self.counts.capacity() * 4
    }
}

/// Sorts packed runs by their gaps (distinct), an LSD radix sort over the
/// bits on which the gaps differ, in as few passes of at most 16-bit
/// digits as cover them (a replay's span about 28 bits: two passes).
fn radix_sort_by_gap(v: &mut Vec<u64>, buffers: &mut SortBuffers) {
    let SortBuffers { scratch, counts } = buffers;
    let gap = |x: u64| (x >> 32) as u32;
    let (mut or, mut and) = (0u32, u32::MAX);
    for &x in v.iter() {
        or |= gap(x);
        and &= gap(x);
    }
    let varying = or ^ and;
    if varying == 0 {
        return;
    }
    let span = u32::BITS - varying.leading_zeros();
    let bits = span.div_ceil(span.div_ceil(16));
    let mask = (1u32 << bits) - 1;
    counts.resize(counts.len().max(1 << bits), 0);
    let counts = &mut counts[..1 << bits];
    scratch.clear();
    scratch.reserve_exact(v.len());
    scratch.resize(v.len(), 0);
    for shift in (0..span).step_by(bits as usize) {
        if (varying >> shift) & mask == 0 {
            continue;
        }
        counts.fill(0);
        for &x in v.iter() {
            counts[((gap(x) >> shift) & mask) as usize] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &x in v.iter() {
            let d = ((gap(x) >> shift) & mask) as usize;
            scratch[counts[d] as usize] = x;
            counts[d] += 1;
        }
        std::mem::swap(v, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_gap_and_reads_them_sorted_through_growth() {
        let mut t = GapTable::default();
        let mut plain = std::collections::BTreeMap::<u32, u64>::new();
        let mut x = 5u64;
        // A replay's narrow band, the edges of the range, and repeats.
        for i in 0..200_000u32 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let gap = match i % 50 {
                0 => 0,
                1 => u32::MAX,
                _ => 5_740_000 + (x >> 40) as u32 % 60_000,
            };
            let count = 1 + (x >> 20) as u32 % 3;
            t.add(gap, count);
            *plain.entry(gap).or_default() += u64::from(count);
        }
        assert_eq!(t.len, plain.len());
        assert!(
            4 * t.len <= 3 * t.slots.len(),
            "at most three quarters full"
        );
        let (mut runs, mut buffers) = (Vec::new(), SortBuffers::default());
        t.sorted_runs(&mut runs, &mut buffers);
        let want: Vec<u64> = plain
            .into_iter()
            .map(|(g, c)| u64::from(g) << 32 | c)
            .collect();
        assert_eq!(runs, want);
        // Cleared, it keeps its size and counts afresh.
        let slots = t.slots.len();
        t.clear();
        for (gap, count) in [(7, 2), (7, 1), (9, 1), (7, 1)] {
            t.add(gap, count);
        }
        t.sorted_runs(&mut runs, &mut buffers);
        assert_eq!(runs, vec![7 << 32 | 4, 9 << 32 | 1]);
        assert_eq!(t.slots.len(), slots);
    }
}

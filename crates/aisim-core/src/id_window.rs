//! `IdWindow`: the records of requests in flight, keyed by request id (the
//! replay's collector keeps its records in one).
//!
//! Ids are dense and handed out roughly in dispatch order, so the requests in
//! flight lie in a window of ids that slides forward. The window keeps one
//! 4-byte slot per id between the lowest and highest id present (an index
//! into a slab of records, reused as requests end) and trims itself at both
//! ends (the front in batches): memory follows the requests in flight, not
//! the requests seen, and a lookup is two indexings, not a hash.

const EMPTY: u32 = u32::MAX;

/// Slots below the first possibly filled one that are dropped at once (and
/// only when they are half the table), so the trimming costs O(1) per
/// removal, amortized.
const COMPACT_AT: usize = 64;

/// Values by id, for the ids present.
#[derive(Debug)]
pub struct IdWindow<T> {
    /// Id of `slots[0]`.
    base: u64,
    /// Per id from `base`: its entry in `slab`, or `EMPTY`.
    slots: Vec<u32>,
    /// No slot below this one is filled.
    start: usize,
    slab: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for IdWindow<T> {
    fn default() -> IdWindow<T> {
        IdWindow {
            base: 0,
            slots: Vec::new(),
            start: 0,
            slab: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> IdWindow<T> {
    /// Inserts (or replaces) the value of `id`.
    pub fn insert(&mut self, id: u64, value: T) {
        if let Some(v) = self.get_mut(id) {
            *v = value;
            return;
        }
        if self.slots.is_empty() {
            (self.base, self.start) = (id, 0);
        } else if id < self.base {
            // Grow down by at least the table's size: amortized O(1) even
            // when ids come in decreasing order.
            let grow = ((self.base - id) as usize).max(self.slots.len());
            let grow = grow.min(self.base as usize);
            self.slots.splice(0..0, std::iter::repeat_n(EMPTY, grow));
            self.base -= grow as u64;
            self.start += grow;
        }
        let at = (id - self.base) as usize;
        if at >= self.slots.len() {
            self.slots.resize(at + 1, EMPTY);
        }
        let entry = match self.free.pop() {
            Some(e) => {
                self.slab[e as usize] = Some(value);
                e
            }
            None => {
                self.slab.push(Some(value));
                self.slab.len() as u32 - 1
            }
        };
        self.slots[at] = entry;
        self.start = self.start.min(at);
    }

    #[inline]
    fn entry(&self, id: u64) -> Option<u32> {
        let at = usize::try_from(id.checked_sub(self.base)?).ok()?;
        self.slots.get(at).copied().filter(|&e| e != EMPTY)
    }

    /// The value of `id`.
    pub fn get(&self, id: u64) -> Option<&T> {
        self.slab[self.entry(id)? as usize].as_ref()
    }

    /// The value of `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let e = self.entry(id)?;
        self.slab[e as usize].as_mut()
    }

    /// Removes and returns the value of `id`.
    pub fn remove(&mut self, id: u64) -> Option<T> {
        let e = self.entry(id)?;
        self.slots[(id - self.base) as usize] = EMPTY;
        self.free.push(e);
        while self.slots.last() == Some(&EMPTY) {
            self.slots.pop();
        }
        self.start = self.start.min(self.slots.len());
        while self.start < self.slots.len() && self.slots[self.start] == EMPTY {
            self.start += 1;
        }
        if self.start >= COMPACT_AT && self.start * 2 >= self.slots.len() {
            self.slots.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
        self.slab[e as usize].take()
    }

    /// Values present.
    pub fn len(&self) -> usize {
        self.slab.len() - self.free.len()
    }

    /// Whether no value is present.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
            + self.slab.capacity() * std::mem::size_of::<Option<T>>()
            + self.free.capacity() * 4
    }

    /// Ids between the lowest and highest present (what the slots cost).
    #[cfg(test)]
    fn span(&self) -> usize {
        self.slots.len() - self.start
    }

    /// Removes every value, in id order.
    pub fn drain_in_order(&mut self) -> Vec<(u64, T)> {
        let base = self.base;
        let slots = std::mem::take(&mut self.slots);
        let mut slab = std::mem::take(&mut self.slab);
        self.free.clear();
        self.start = 0;
        slots
            .into_iter()
            .enumerate()
            .filter(|&(_, e)| e != EMPTY)
            .filter_map(|(k, e)| slab[e as usize].take().map(|v| (base + k as u64, v)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #[test]
        fn behaves_as_a_map(ops in prop::collection::vec((0u64..300, any::<bool>()), 0..600)) {
            let mut w = IdWindow::default();
            let mut m = BTreeMap::new();
            for (i, (id, insert)) in ops.into_iter().enumerate() {
                if insert {
                    w.insert(id, i);
                    m.insert(id, i);
                } else {
                    prop_assert_eq!(w.remove(id), m.remove(&id));
                }
                prop_assert_eq!(w.len(), m.len());
                let lo = m.keys().next().copied().unwrap_or(0);
                let hi = m.keys().last().copied().map_or(0, |h| h + 1);
                prop_assert_eq!(w.span() as u64, hi - lo, "trimmed to the ids present");
                for id in 0..300 {
                    prop_assert_eq!(w.get(id), m.get(&id));
                }
            }
            let drained: Vec<(u64, usize)> = w.drain_in_order();
            prop_assert_eq!(drained, m.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_sliding_window_holds_only_what_is_in_flight() {
        let mut w = IdWindow::default();
        for id in 0..100_000u64 {
            w.insert(id, id);
            if id >= 10 {
                assert_eq!(w.remove(id - 10), Some(id - 10));
            }
        }
        assert_eq!((w.len(), w.span()), (10, 10));
        assert!(w.slots.len() <= 2 * COMPACT_AT + 10, "{}", w.slots.len());
        assert!(w.slab.len() <= 11);
    }
}

//! `BlockIndex`: hash → block, an open-addressing table tuned for the replay's
//! hottest path (registering every block a prompt fills).
//!
//! - Entries are cleaned lazily: evicting a block only forgets the hash on the
//!   block, and an entry counts only while its block still holds that hash
//!   (callers check with the pool's block table). Nothing is removed on
//!   eviction, which would cost a cache miss per evicted block.
//! - When stale entries fill the table, it is rebuilt from the pool's blocks
//!   (a sequential read), sized to four times the live entries, so memory
//!   follows what is cached, not what was ever cached.
//! - Batches of inserts touch their slots ahead of use, so the cache misses
//!   of a long prompt overlap instead of queueing.
//!
//! Each key appears at most once; there are no tombstones. Iteration order
//! never matters, so nothing here can leak into results.

use crate::block_hash::mix64;
use crate::kv::BlockId;

/// The empty key. Block hashes are never 0.
const EMPTY: u64 = 0;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: u64,
    block: BlockId,
}

/// Hash → block, with lazily cleaned entries.
#[derive(Debug)]
pub(crate) struct BlockIndex {
    slots: Vec<Slot>,
    mask: usize,
    used: usize,
}

/// What an insert found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Insert {
    /// The key is now mapped to the block.
    Done,
    /// The key maps to this block, which may still hold it: the caller decides.
    Exists(BlockId),
}

impl BlockIndex {
    /// An index for a pool of `capacity` blocks: sized for all of them at once
    /// (bounded), because growing step by step costs a fresh, page-faulting
    /// allocation at every step.
    pub fn for_capacity(capacity: usize) -> BlockIndex {
        BlockIndex::with_slots((capacity * 4).min(1 << 18))
    }

    fn with_slots(n: usize) -> BlockIndex {
        let n = n.next_power_of_two().max(64);
        BlockIndex {
            slots: vec![Slot::default(); n],
            mask: n - 1,
            used: 0,
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        mix64(key) as usize & self.mask
    }

    /// Starts loading the slot of `key` into cache without waiting for it.
    #[inline]
    pub fn touch(&self, key: u64) {
        let slot: *const Slot = &self.slots[self.home(key)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint to the cache: it never faults, reads
        // nothing into the program and writes nothing; the pointer is in bounds.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// The block the key maps to, stale or not.
    #[inline]
    pub fn get(&self, key: u64) -> Option<BlockId> {
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s.key == key {
                return Some(s.block);
            }
            if s.key == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Maps `key` to `block` unless the key is present (then says to what).
    #[inline]
    pub fn insert(&mut self, key: u64, block: BlockId) -> Insert {
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s.key == key {
                return Insert::Exists(s.block);
            }
            if s.key == EMPTY {
                self.slots[i] = Slot { key, block };
                self.used += 1;
                return Insert::Done;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Maps an existing `key` to another block (its entry was stale).
    #[inline]
    pub fn replace(&mut self, key: u64, block: BlockId) {
        let mut i = self.home(key);
        while self.slots[i].key != key {
            i = (i + 1) & self.mask;
        }
        self.slots[i].block = block;
    }

    /// Whether the table should be rebuilt before the next insert.
    #[inline]
    pub fn is_crowded(&self) -> bool {
        self.used * 4 >= self.slots.len() * 3
    }

    /// Rebuilds from the `count` live `(hash, block)` pairs, sized to four
    /// times them (reusing the allocation when the size stays: page faults on a
    /// fresh table would cost more than clearing the old one).
    pub fn rebuild(&mut self, count: usize, live: impl Iterator<Item = (u64, BlockId)>) {
        let n = (count * 4).next_power_of_two().max(64);
        if n == self.slots.len() {
            self.slots.fill(Slot::default());
            self.used = 0;
        } else {
            *self = BlockIndex::with_slots(n);
        }
        for (k, b) in live {
            self.insert(k, b);
        }
    }

    /// Entries, stale ones included.
    pub fn len(&self) -> usize {
        self.used
    }

    /// Every entry, for invariant checks.
    pub fn entries(&self) -> impl Iterator<Item = (u64, BlockId)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.key != EMPTY)
            .map(|s| (s.key, s.block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_find_and_rebuild() {
        let mut ix = BlockIndex::for_capacity(256);
        for k in 1..=800u64 {
            assert_eq!(ix.insert(k * 7919, k as u32), Insert::Done);
        }
        assert_eq!(ix.insert(7919, 99), Insert::Exists(1));
        ix.replace(7919, 99);
        assert_eq!(ix.get(7919), Some(99));
        assert_eq!(ix.get(5), None);
        assert!(ix.is_crowded());
        ix.rebuild(10, (1..=10u64).map(|k| (k * 7919, k as u32)));
        assert_eq!(
            (ix.len(), ix.get(7919 * 3), ix.get(7919 * 11)),
            (10, Some(3), None)
        );
        assert!(!ix.is_crowded());
    }
}

//! `BlockIndex`: hash → block, an open-addressing table tuned for the replay's
//! hottest path (registering every block a prompt fills).
//!
//! - A slot is 8 bytes: a 32-bit tag from the key's hash and the block. The
//!   full hash lives on the block, so callers confirm a candidate with the
//!   pool's block table (`holds`); tags only spare them most of those reads.
//!   Half the size of a (key, block) slot means half the cache lines and half
//!   the page faults of a fresh table.
//! - Entries are cleaned lazily: evicting a block only forgets the hash on the
//!   block, and an entry counts only while its block still holds that hash.
//!   Nothing is removed on eviction, which would cost a cache miss per evicted
//!   block.
//! - When stale entries fill the table, it is rebuilt from the pool's blocks
//!   (a sequential read), in place unless the live entries need a bigger
//!   table (four slots each).
//! - Batches of inserts touch their slots ahead of use, so the cache misses
//!   of a long prompt overlap instead of queueing.
//!
//! A key has at most one live entry (inserting finds it first), but stale
//! entries with its tag may sit anywhere in its probe chain. There are no
//! tombstones. Iteration order never matters, so nothing here can leak into
//! results.

use crate::block_hash::mix64;
use crate::kv::BlockId;

/// `(tag << 32) | block`.
type Slot = u64;

/// The empty slot: block `u32::MAX`, which no pool has. Not 0, so a fresh
/// table is written out rather than handed over as zeroed pages: a zeroed
/// page read before it is written faults twice (zero page, then copy).
const EMPTY: Slot = u64::MAX;

/// Hash → block, with lazily cleaned entries.
#[derive(Debug)]
pub(crate) struct BlockIndex {
    slots: Vec<Slot>,
    mask: usize,
    used: usize,
}

/// Where a key probes from, and the tag its entries carry.
#[inline]
fn place(key: u64) -> (usize, u32) {
    let m = mix64(key);
    (m as usize, (m >> 32) as u32)
}

#[inline]
fn pack(tag: u32, block: BlockId) -> Slot {
    debug_assert!(block != u32::MAX);
    ((tag as u64) << 32) | block as u64
}

#[inline]
fn unpack(slot: Slot) -> (u32, BlockId) {
    ((slot >> 32) as u32, slot as u32)
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
            slots: vec![EMPTY; n],
            mask: n - 1,
            used: 0,
        }
    }

    /// Starts loading the slot of `key` into cache without waiting for it.
    #[inline]
    pub fn touch(&self, key: u64) {
        let slot: *const Slot = &self.slots[place(key).0 & self.mask];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint to the cache: it never faults, reads
        // nothing into the program and writes nothing; the pointer is in bounds.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Walks `key`'s probe run: the block of the first entry with its tag
    /// that `holds` it, else the empty slot that ends the run.
    #[inline]
    fn probe(&self, key: u64, holds: impl Fn(BlockId) -> bool) -> Result<BlockId, usize> {
        let (home, tag) = place(key);
        let mut i = home & self.mask;
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return Err(i);
            }
            let (t, b) = unpack(s);
            if t == tag && holds(b) {
                return Ok(b);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The block holding `key`, if any: the first entry with its tag whose
    /// block `holds` it.
    #[inline]
    pub fn get(&self, key: u64, holds: impl Fn(BlockId) -> bool) -> Option<BlockId> {
        self.probe(key, holds).ok()
    }

    /// Maps `key` to `block` unless a block already `holds` it; then returns
    /// that block and changes nothing.
    #[inline]
    pub fn insert(
        &mut self,
        key: u64,
        block: BlockId,
        holds: impl Fn(BlockId) -> bool,
    ) -> Option<BlockId> {
        match self.probe(key, holds) {
            Ok(holder) => Some(holder),
            Err(empty) => {
                self.slots[empty] = pack(place(key).1, block);
                self.used += 1;
                None
            }
        }
    }

    /// Whether the table should be rebuilt before the next insert.
    #[inline]
    pub fn is_crowded(&self) -> bool {
        self.used * 4 >= self.slots.len() * 3
    }

    /// Rebuilds from the `count` live `(hash, block)` pairs (distinct hashes),
    /// in the same table unless four times them would not fit: it never
    /// shrinks, because page faults on a fresh table cost more than clearing
    /// the old one.
    pub fn rebuild(&mut self, count: usize, live: impl Iterator<Item = (u64, BlockId)>) {
        let n = (count * 4).next_power_of_two().max(self.slots.len());
        if n == self.slots.len() {
            self.slots.fill(EMPTY);
            self.used = 0;
        } else {
            *self = BlockIndex::with_slots(n);
        }
        for (k, b) in live {
            // Live hashes are distinct: nothing to confirm.
            self.insert(k, b, |_| false);
        }
    }

    /// Entries, stale ones included.
    pub fn len(&self) -> usize {
        self.used
    }

    /// Slots in the table.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_find_and_rebuild() {
        // Block b holds key `keys[b]`; a key with no block is held by nobody.
        let mut keys: Vec<u64> = (0..800u64).map(|k| k * 7919 + 1).collect();
        let mut ix = BlockIndex::for_capacity(256);
        for (b, &k) in keys.iter().enumerate() {
            let held = |x: BlockId| keys[x as usize] == k;
            assert_eq!(ix.insert(k, b as BlockId, held), None);
        }
        let k0 = keys[0];
        assert_eq!(ix.insert(k0, 999, |x| keys[x as usize] == k0), Some(0));
        assert_eq!(ix.get(keys[5], |x| keys[x as usize] == keys[5]), Some(5));
        assert_eq!(ix.get(2, |_| false), None);
        // Block 3 forgets its key: the entry is stale and no longer found.
        let k3 = keys[3];
        keys[3] = 0;
        assert_eq!(ix.get(k3, |x| keys[x as usize] == k3), None);
        assert!(ix.is_crowded());
        ix.rebuild(10, (0..10u32).map(|b| (keys[b as usize], b)));
        assert_eq!(ix.len(), 10);
        assert_eq!(ix.get(keys[7], |x| keys[x as usize] == keys[7]), Some(7));
        assert_eq!(ix.get(keys[11], |x| keys[x as usize] == keys[11]), None);
        assert!(!ix.is_crowded());
    }

    #[test]
    fn slots_pack_tag_and_block() {
        for (tag, block) in [(0, 0), (u32::MAX, u32::MAX - 1), (7, 12345)] {
            let s = pack(tag, block);
            assert_ne!(s, EMPTY, "never the empty slot");
            assert_eq!(unpack(s), (tag, block));
        }
    }
}

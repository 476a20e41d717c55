//! `BlockIndex`: block hash → block, filed by group (see `block_hash`): one
//! entry per group, holding the block of each of its eight lanes. A long
//! prompt's blocks fill groups eight at a time, so registering it costs one
//! probe per group, and the blocks of a group sit on one cache line.
//!
//! - Keys are the groups themselves (already well mixed), probed linearly;
//!   lanes live in a parallel array, so a probe walks 8-byte keys only.
//! - Entries are cleaned lazily: evicting a block only forgets the hash on the
//!   block, and a lane counts only while its block still holds that hash
//!   (callers confirm with the pool's block table: `holds`). Nothing is
//!   removed on eviction, which would cost a cache miss per evicted block.
//! - A group has one entry for good (until a rebuild), so the entries of
//!   groups whose blocks all left fill the table; then it is rebuilt from the
//!   pool's blocks (a sequential read), in place unless the live groups need
//!   a bigger table.
//! - Inserts can touch their entries ahead of use, so the cache misses of a
//!   long prompt overlap instead of queueing.
//!
//! Iteration order never matters, so nothing here can leak into results.

use crate::block_hash::{BlockHash, LANES};
use crate::kv::BlockId;
use crate::prefetch::prefetch;

/// The key of an empty entry: no group has its lane bits set. Not 0, so
/// that a new table is written out (see `with_entries`).
const EMPTY: u64 = u64::MAX;
/// Blocks ahead of the one filed whose entries a rebuild touches.
const REBUILD_AHEAD: usize = 8;
/// A lane without a block: no pool has block `u32::MAX`.
const NO_BLOCK: BlockId = u32::MAX;

/// The blocks of one group's lanes; half a cache line, aligned to it.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(crate) struct Lanes([BlockId; LANES]);

impl Lanes {
    /// Files `block` in lane `lane` unless the block filed there still
    /// `holds` the lane's hash; then returns that block and changes nothing.
    #[inline]
    pub fn file(
        &mut self,
        lane: usize,
        block: BlockId,
        holds: impl Fn(BlockId) -> bool,
    ) -> Option<BlockId> {
        debug_assert!(block != NO_BLOCK);
        let filed = &mut self.0[lane];
        if *filed != NO_BLOCK && holds(*filed) {
            return Some(*filed);
        }
        *filed = block;
        None
    }
}

const NO_LANES: Lanes = Lanes([NO_BLOCK; LANES]);

/// The group of the last lookup and its entry (`BlockIndex::get_from`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor {
    group: u64,
    entry: Option<usize>,
}

impl Default for Cursor {
    fn default() -> Self {
        // No group is EMPTY: the first lookup probes.
        Cursor {
            group: EMPTY,
            entry: None,
        }
    }
}

/// Hash → block, with lazily cleaned entries.
#[derive(Debug)]
pub(crate) struct BlockIndex {
    keys: Vec<u64>,
    lanes: Vec<Lanes>,
    mask: usize,
    /// Entries taken (groups with or without live blocks).
    used: usize,
}

impl BlockIndex {
    /// An index for a pool of `capacity` blocks: room for them all in groups
    /// of eight at a quarter load (bounded), because growing step by step
    /// costs a fresh, page-faulting allocation at every step.
    pub fn for_capacity(capacity: usize) -> BlockIndex {
        BlockIndex::with_entries((capacity / 2).min(1 << 16))
    }

    fn with_entries(n: usize) -> BlockIndex {
        let n = n.next_power_of_two().max(64);
        BlockIndex {
            // Written out, not zeroed pages: a zeroed page read before it is
            // written faults twice (the shared zero page, then a page of its
            // own, whose remapping flushes the TLBs of the other cores running
            // the process), and probes read keys before claiming.
            keys: vec![EMPTY; n],
            lanes: vec![NO_LANES; n],
            mask: n - 1,
            used: 0,
        }
    }

    #[inline]
    fn home(&self, group: u64) -> usize {
        (group >> 3) as usize & self.mask
    }

    /// Starts loading the entry of `hash` into cache without waiting for it.
    #[inline]
    pub fn touch(&self, hash: BlockHash) {
        let i = self.home(hash.group());
        prefetch(&self.keys[i]);
        prefetch(&self.lanes[i]);
    }

    /// Walks `group`'s probe run: its entry, else the empty slot that ends
    /// the run (where `claim` can put it).
    #[inline]
    pub fn entry(&self, group: u64) -> Result<usize, usize> {
        let mut i = self.home(group);
        loop {
            let k = self.keys[i];
            if k == group {
                return Ok(i);
            }
            if k == EMPTY {
                return Err(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Makes the empty `slot` that `entry(group)` returned the entry of
    /// `group`, with no blocks yet.
    #[inline]
    pub fn claim(&mut self, slot: usize, group: u64) -> usize {
        debug_assert!(self.keys[slot] == EMPTY && group != EMPTY);
        self.keys[slot] = group;
        self.lanes[slot] = NO_LANES;
        self.used += 1;
        slot
    }

    /// The entry of `group`, claimed if it has none (the caller rebuilds
    /// crowded tables first).
    #[inline]
    fn entry_or_claim(&mut self, group: u64) -> usize {
        match self.entry(group) {
            Ok(e) => e,
            Err(slot) => self.claim(slot, group),
        }
    }

    /// The block filed under `hash`, if it `holds` it.
    #[inline]
    pub fn get(&self, hash: BlockHash, holds: impl Fn(BlockId) -> bool) -> Option<BlockId> {
        self.get_from(&mut Cursor::default(), hash, holds)
    }

    /// `get`, probing only when `hash` is not in the group `cursor` last
    /// found: the hashes of a prompt looked up in a row share an entry per
    /// group, so they cost a probe per group instead of one per block.
    /// Entries stay put until a rebuild, which only registering makes (the
    /// pool's `entry_for`): a cursor must not outlive a registration.
    #[inline]
    pub fn get_from(
        &self,
        cursor: &mut Cursor,
        hash: BlockHash,
        holds: impl Fn(BlockId) -> bool,
    ) -> Option<BlockId> {
        let group = hash.group();
        if cursor.group != group {
            *cursor = Cursor {
                group,
                entry: self.entry(group).ok(),
            };
        }
        let b = self.lanes[cursor.entry?].0[hash.lane()];
        (b != NO_BLOCK && holds(b)).then_some(b)
    }

    /// The lanes of `entry`, to file a group's blocks in a row.
    #[inline]
    pub fn lanes_mut(&mut self, entry: usize) -> &mut Lanes {
        &mut self.lanes[entry]
    }

    /// `Lanes::file` under `hash`, creating its group's entry if need be (the
    /// caller rebuilds crowded tables first).
    #[cfg(test)]
    pub fn insert(
        &mut self,
        hash: BlockHash,
        block: BlockId,
        holds: impl Fn(BlockId) -> bool,
    ) -> Option<BlockId> {
        let e = self.entry_or_claim(hash.group());
        self.lanes[e].file(hash.lane(), block, holds)
    }

    /// Whether the table should be rebuilt before another entry is claimed.
    #[inline]
    pub fn is_crowded(&self) -> bool {
        self.used * 4 >= self.keys.len() * 3
    }

    /// Rebuilds from the live blocks: block `b` (below `blocks`) holds
    /// `hash_of(b)` when it is live (distinct hashes). In the same table
    /// while their groups fill at most half of it: it never shrinks,
    /// because page faults on a fresh table cost more than clearing the old
    /// one.
    pub fn rebuild(&mut self, blocks: usize, hash_of: impl Fn(usize) -> Option<BlockHash>) {
        self.keys.fill(EMPTY);
        self.used = 0;
        // The entry of the last group filed: a group's blocks allocated
        // together sit side by side in the pool.
        let mut last = (EMPTY, 0);
        for b in 0..blocks {
            // The entries of the blocks a few ahead are touched, so that
            // their cache misses overlap (the table is read at random).
            if let Some(next) = hash_of(b + REBUILD_AHEAD) {
                self.touch(next);
            }
            let Some(h) = hash_of(b) else {
                continue;
            };
            let group = h.group();
            if last.0 != group {
                last = (group, self.entry_or_claim(group));
            }
            // Live hashes are distinct: nothing to confirm.
            self.lanes[last.1].0[h.lane()] = b as BlockId;
            if self.used * 2 > self.keys.len() {
                *self = BlockIndex::with_entries(self.keys.len() * 2);
                return self.rebuild(blocks, hash_of);
            }
        }
    }

    /// Entries, stale ones included.
    pub fn len(&self) -> usize {
        self.used
    }

    /// Entries the table has room for.
    pub fn slots(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct hashes, several per group: `n` blocks, lanes filled in order.
    fn hashes(n: u64) -> Vec<BlockHash> {
        (0..n)
            .map(|b| BlockHash((crate::block_hash::mix64(b / 3 + 1) & !7) | (b % 3)))
            .collect()
    }

    #[test]
    fn inserts_find_and_rebuild() {
        // Block b holds `keys[b]`; a hash with no block is held by nobody.
        let mut keys = hashes(800);
        let mut ix = BlockIndex::for_capacity(2048);
        for (b, &k) in keys.iter().enumerate() {
            let held = |x: BlockId| keys[x as usize] == k;
            assert_eq!(ix.insert(k, b as BlockId, held), None);
        }
        assert_eq!(ix.len(), 267, "800 blocks in groups of three");
        let k0 = keys[0];
        assert_eq!(ix.insert(k0, 999, |x| keys[x as usize] == k0), Some(0));
        assert_eq!(ix.get(keys[5], |x| keys[x as usize] == keys[5]), Some(5));
        assert_eq!(ix.get(BlockHash(16), |_| false), None);
        // Block 3 forgets its hash: its lane is stale and no longer found, and
        // a new block takes the lane over.
        let k3 = keys[3];
        keys[3] = BlockHash(0);
        assert_eq!(ix.get(k3, |x| keys[x as usize] == k3), None);
        assert_eq!(ix.insert(k3, 801, |x| keys[x as usize] == k3), None);
        keys.push(BlockHash(0));
        keys.push(k3);
        assert_eq!(ix.get(k3, |x| keys[x as usize] == k3), Some(801));
        ix.rebuild(10, |b| (b < 10 && b != 3).then(|| keys[b]));
        assert_eq!(ix.len(), 4, "ten blocks in groups of three");
        assert_eq!(ix.get(keys[7], |x| keys[x as usize] == keys[7]), Some(7));
        assert_eq!(ix.get(keys[11], |x| keys[x as usize] == keys[11]), None);
        assert!(!ix.is_crowded());
    }

    #[test]
    fn no_hash_has_the_empty_key_for_its_group() {
        // The sentinel must never be a group, whatever the hash (edge
        // values, and a spread of mixed ones).
        let edges = [0, 1, 7, 8, u64::MAX, u64::MAX - 7, u64::MAX - 8, 1 << 63];
        let mixed = (0..100_000u64).map(crate::block_hash::mix64);
        for x in edges.into_iter().chain(mixed) {
            assert_ne!(BlockHash(x).group(), EMPTY, "hash {x:#x}");
        }
    }

    #[test]
    fn rebuild_grows_until_the_live_groups_fill_at_most_half() {
        let keys = hashes(3 * 300);
        let mut ix = BlockIndex::for_capacity(8);
        assert_eq!(ix.slots(), 64);
        ix.rebuild(keys.len(), |b| keys.get(b).copied());
        assert_eq!(ix.len(), 300);
        assert_eq!(ix.slots(), 1024);
        for (b, &k) in keys.iter().enumerate() {
            assert_eq!(ix.get(k, |x| keys[x as usize] == k), Some(b as BlockId));
        }
    }
}

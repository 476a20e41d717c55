//! The kv router's own view of what every rank caches: the (block hash,
//! rank) pairs the engines announced with `KvEvent::Stored` and have not yet
//! withdrawn with `KvEvent::Removed`. As in the pools, the blocks of one hash
//! group (those ending inside one trace block) share an entry, a bit per
//! lane: an event or a prefix query costs one lookup per group, not per
//! block. It holds at most what the engines' pools hold.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use aisim_core::hashing::IntHashBuilder;
use aisim_core::kv::KvEvent;
use aisim_core::BlockHash;

/// One hash group on one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    group: u64,
    /// `worker << 32 | rank`.
    slot: u64,
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // One word for the integer hasher: the slot spread over every bit.
        state.write_u64(self.group ^ self.slot.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
}

fn slot(worker: u32, rank: u32) -> u64 {
    (u64::from(worker) << 32) | u64::from(rank)
}

/// Which block hashes each (worker, rank) holds, as its KV events said.
#[derive(Debug, Default)]
pub struct RouterIndex {
    /// Per (group, rank): a bit per lane held (never 0: an emptied entry goes).
    held: HashMap<Key, u8, IntHashBuilder>,
    /// Blocks held, over every rank.
    blocks: usize,
}

fn key(h: BlockHash, slot: u64) -> (Key, u8) {
    (
        Key {
            group: h.group(),
            slot,
        },
        1 << h.lane(),
    )
}

impl RouterIndex {
    /// Applies one rank's events, in order. A run of events of one kind on
    /// one group (a prompt's blocks are stored group by group) costs one
    /// lookup: bits of one entry under one kind of change commute.
    pub fn apply(&mut self, worker: u32, rank: u32, events: &[KvEvent]) {
        let slot = slot(worker, rank);
        // (stored, entry, lanes) not yet applied.
        let mut run: Option<(bool, Key, u8)> = None;
        for ev in events {
            let (stored, h) = match *ev {
                KvEvent::Stored(h) => (true, h),
                KvEvent::Removed(h) => (false, h),
            };
            let (k, bit) = key(h, slot);
            match &mut run {
                Some((s, rk, lanes)) if *s == stored && *rk == k => *lanes |= bit,
                _ => {
                    if let Some(r) = run.replace((stored, k, bit)) {
                        self.change(r);
                    }
                }
            }
        }
        if let Some(r) = run {
            self.change(r);
        }
    }

    /// Sets (`stored`) or clears the lanes of one entry.
    fn change(&mut self, (stored, k, bits): (bool, Key, u8)) {
        if stored {
            let lanes = self.held.entry(k).or_insert(0);
            self.blocks += (bits & !*lanes).count_ones() as usize;
            *lanes |= bits;
        } else if let Some(lanes) = self.held.get_mut(&k) {
            self.blocks -= (bits & *lanes).count_ones() as usize;
            *lanes &= !bits;
            if *lanes == 0 {
                self.held.remove(&k);
            }
        }
    }

    /// Leading blocks of `hashes` the rank holds.
    pub fn overlap(&self, worker: u32, rank: u32, hashes: &[BlockHash]) -> u32 {
        let slot = slot(worker, rank);
        // The entry of the group last looked up: a prompt's blocks come
        // group by group.
        let mut current: Option<(u64, u8)> = None;
        let mut n = 0;
        for &h in hashes {
            let lanes = match current {
                Some((g, lanes)) if g == h.group() => lanes,
                _ => {
                    let (k, _) = key(h, slot);
                    let lanes = self.held.get(&k).copied().unwrap_or(0);
                    current = Some((h.group(), lanes));
                    lanes
                }
            };
            if lanes & (1 << h.lane()) == 0 {
                break;
            }
            n += 1;
        }
        n
    }

    /// (block, rank) pairs held.
    pub fn len(&self) -> usize {
        self.blocks
    }

    /// Whether no rank holds anything.
    pub fn is_empty(&self) -> bool {
        self.blocks == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aisim_core::block_hash::prompt_block_hashes;
    use proptest::prelude::*;

    fn chain(ids: &[u64]) -> Vec<BlockHash> {
        prompt_block_hashes(ids, 16, ids.len() as u32 * 16, 16)
    }

    #[test]
    fn overlap_is_the_leading_run_a_rank_holds() {
        let hashes = chain(&[1, 2, 3, 4]);
        let mut index = RouterIndex::default();
        let stored: Vec<KvEvent> = hashes[..3].iter().map(|&h| KvEvent::Stored(h)).collect();
        index.apply(2, 1, &stored);
        assert_eq!(index.overlap(2, 1, &hashes), 3);
        assert_eq!(
            index.overlap(2, 0, &hashes),
            0,
            "another rank holds nothing"
        );
        assert_eq!(
            index.overlap(1, 1, &hashes),
            0,
            "another worker holds nothing"
        );
        index.apply(2, 1, &[KvEvent::Removed(hashes[1])]);
        assert_eq!(index.overlap(2, 1, &hashes), 1, "a gap ends the prefix");
        assert_eq!(index.len(), 2);
    }

    proptest! {
        /// Whatever the events, the index holds exactly the blocks stored
        /// and not removed since, per rank, lanes of one group included
        /// (128-token trace blocks of 16-token engine blocks: 8 lanes each).
        #[test]
        fn the_index_follows_the_events(
            batches in prop::collection::vec(
                (0u32..3, 0u32..2, prop::collection::vec((0usize..24, any::<bool>()), 0..12)),
                0..30,
            ),
        ) {
            let blocks = prompt_block_hashes(&[1, 2, 3], 128, 384, 16);
            let mut index = RouterIndex::default();
            let mut model = std::collections::BTreeSet::new();
            // One `apply` per batch, as a pass's events of one rank come.
            for (w, r, ops) in &batches {
                let events: Vec<KvEvent> = ops
                    .iter()
                    .map(|&(b, store)| if store { KvEvent::Stored(blocks[b]) } else { KvEvent::Removed(blocks[b]) })
                    .collect();
                index.apply(*w, *r, &events);
                for &(b, store) in ops {
                    if store { model.insert((*w, *r, b)); } else { model.remove(&(*w, *r, b)); }
                }
            }
            prop_assert_eq!(index.len(), model.len());
            for w in 0..3 {
                for r in 0..2 {
                    let want = (0..24).take_while(|b| model.contains(&(w, r, *b))).count() as u32;
                    prop_assert_eq!(index.overlap(w, r, &blocks), want);
                }
            }
        }
    }
}

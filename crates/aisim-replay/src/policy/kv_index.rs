//! The kv router's own view of what every rank caches: the set of (block
//! hash, rank) pairs the engines announced with `KvEvent::Stored` and have
//! not yet withdrawn with `KvEvent::Removed`. It holds at most what the
//! engines' pools hold, and answers a prefix query in one lookup per block
//! matched (plus one).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use aisim_core::hashing::IntHashBuilder;
use aisim_core::kv::KvEvent;
use aisim_core::BlockHash;

/// One block held by one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    hash: u64,
    /// `worker << 32 | rank`.
    slot: u64,
}

impl Hash for Held {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // One word for the integer hasher: the slot spread over every bit,
        // so ranks do not collide with the hash's low (lane) bits.
        state.write_u64(self.hash ^ self.slot.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
}

fn slot(worker: u32, rank: u32) -> u64 {
    (u64::from(worker) << 32) | u64::from(rank)
}

/// Which block hashes each (worker, rank) holds, as its KV events said.
#[derive(Debug, Default)]
pub struct RouterIndex {
    held: HashSet<Held, IntHashBuilder>,
}

impl RouterIndex {
    /// Applies one rank's events, in order.
    pub fn apply(&mut self, worker: u32, rank: u32, events: &[KvEvent]) {
        let slot = slot(worker, rank);
        for ev in events {
            match *ev {
                KvEvent::Stored(h) => {
                    self.held.insert(Held {
                        hash: h.value(),
                        slot,
                    });
                }
                KvEvent::Removed(h) => {
                    self.held.remove(&Held {
                        hash: h.value(),
                        slot,
                    });
                }
            }
        }
    }

    /// Leading blocks of `hashes` the rank holds.
    pub fn overlap(&self, worker: u32, rank: u32, hashes: &[BlockHash]) -> u32 {
        let slot = slot(worker, rank);
        hashes
            .iter()
            .take_while(|h| {
                self.held.contains(&Held {
                    hash: h.value(),
                    slot,
                })
            })
            .count() as u32
    }

    /// (block, rank) pairs held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether no rank holds anything.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
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
        /// and not removed since, per rank.
        #[test]
        fn the_index_follows_the_events(
            ops in prop::collection::vec((0u32..3, 0u32..2, 0u64..6, any::<bool>()), 0..80),
        ) {
            let mut index = RouterIndex::default();
            let mut model = std::collections::BTreeSet::new();
            for &(w, r, id, store) in &ops {
                let h = chain(&[id])[0];
                let ev = if store { KvEvent::Stored(h) } else { KvEvent::Removed(h) };
                index.apply(w, r, &[ev]);
                if store { model.insert((w, r, id)); } else { model.remove(&(w, r, id)); }
            }
            prop_assert_eq!(index.len(), model.len());
            for w in 0..3 {
                for r in 0..2 {
                    for id in 0..6 {
                        let held = index.overlap(w, r, &chain(&[id])) == 1;
                        prop_assert_eq!(held, model.contains(&(w, r, id)));
                    }
                }
            }
        }
    }
}

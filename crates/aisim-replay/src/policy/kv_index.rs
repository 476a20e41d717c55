//! The kv router's own view of what every rank caches: the pages the
//! engines announced with `KvEvent::Stored` and have not yet withdrawn with
//! `KvEvent::Removed`, filed as the pools file them, so an event or a prefix
//! query costs what the pool stores, not its page count:
//!
//! - blocks (vLLM's and TensorRT-LLM's block pool) per hash group, a bit per
//!   lane: the blocks ending inside one trace block share an entry;
//! - span runs (SGLang's radix cache) per span key, the range of its lanes
//!   held: one entry per trace block whatever the page size, so at
//!   one-token pages a prompt costs one lookup per trace block, not per
//!   token.
//!
//! It holds at most what the engines' pools hold.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use aisim_core::hashing::IntHashBuilder;
use aisim_core::kv::{KvEvent, PageRun};
use aisim_core::{BlockHash, Request};

use super::lane_ranges::LaneRanges;

/// One key (a hash group, or a span's key) on one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    key: u64,
    /// `worker << 32 | rank`.
    slot: u64,
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // One word for the integer hasher: the slot spread over every bit.
        state.write_u64(self.key ^ self.slot.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
}

fn slot(worker: u32, rank: u32) -> u64 {
    (u64::from(worker) << 32) | u64::from(rank)
}

/// Which pages each (worker, rank) holds, as its KV events said.
#[derive(Debug, Default)]
pub struct RouterIndex {
    /// Per (group, rank): a bit per lane held (never 0: an emptied entry goes).
    blocks: HashMap<Key, u8, IntHashBuilder>,
    /// Per (span key, rank): the lanes held (never empty).
    spans: HashMap<Key, LaneRanges, IntHashBuilder>,
    /// Pages held, over every rank.
    pages: usize,
}

/// A prompt's leading pages as a `RouterIndex` looks them up: its runs, one
/// per trace block, and (for an index holding blocks) each page's hash.
/// Reused from placement to placement, so a query allocates nothing.
#[derive(Debug, Default)]
pub struct PromptPages {
    runs: Vec<PageRun>,
    hashes: Vec<BlockHash>,
}

impl PromptPages {
    /// The first `pages` pages of `req`'s prompt, in pages of `block_size`
    /// tokens, as `index` looks them up in its present state: the runs
    /// (O(trace blocks)) when it holds span runs, the hashes (O(pages)) when
    /// it holds blocks (whose events come one a block).
    pub fn fill(&mut self, req: &Request, block_size: u32, pages: u32, index: &RouterIndex) {
        self.runs.clear();
        self.hashes.clear();
        let mut left = if index.spans.is_empty() { 0 } else { pages };
        for run in req.page_runs(block_size) {
            if left == 0 {
                break;
            }
            let run = run.head(left);
            left -= run.len();
            self.runs.push(run);
        }
        if !index.blocks.is_empty() {
            self.hashes
                .extend(req.block_hash_iter(block_size).take(pages as usize));
        }
    }
}

impl RouterIndex {
    /// Applies one rank's events, in order. A run of block events of one
    /// kind on one group (a prompt's blocks are stored group by group) costs
    /// one lookup: bits of one entry under one kind of change commute. A
    /// span run costs one lookup whatever its length.
    pub fn apply(&mut self, worker: u32, rank: u32, events: &[KvEvent]) {
        let slot = slot(worker, rank);
        // (stored, entry, lanes) of blocks not yet applied.
        let mut batch: Option<(bool, Key, u8)> = None;
        for ev in events {
            let (stored, run) = match *ev {
                KvEvent::Stored(r) => (true, r),
                KvEvent::Removed(r) => (false, r),
            };
            let k = Key {
                key: run.key(),
                slot,
            };
            if !run.is_block() {
                if let Some(b) = batch.take() {
                    self.change_blocks(b);
                }
                self.change_span(stored, k, run);
                continue;
            }
            let bits = run_bits(run);
            match &mut batch {
                Some((s, bk, lanes)) if *s == stored && *bk == k => *lanes |= bits,
                _ => {
                    if let Some(b) = batch.replace((stored, k, bits)) {
                        self.change_blocks(b);
                    }
                }
            }
        }
        if let Some(b) = batch {
            self.change_blocks(b);
        }
    }

    /// Sets (`stored`) or clears the lanes of one block entry.
    fn change_blocks(&mut self, (stored, k, bits): (bool, Key, u8)) {
        if stored {
            let lanes = self.blocks.entry(k).or_insert(0);
            self.pages += (bits & !*lanes).count_ones() as usize;
            *lanes |= bits;
        } else if let Some(lanes) = self.blocks.get_mut(&k) {
            self.pages -= (bits & *lanes).count_ones() as usize;
            *lanes &= !bits;
            if *lanes == 0 {
                self.blocks.remove(&k);
            }
        }
    }

    /// Adds (`stored`) or removes a span run's lanes.
    fn change_span(&mut self, stored: bool, k: Key, run: PageRun) {
        let (lo, hi) = (run.first(), run.first().saturating_add(run.len()));
        if stored {
            match self.spans.entry(k) {
                Entry::Occupied(mut e) => self.pages += e.get_mut().add(lo, hi) as usize,
                Entry::Vacant(e) if lo < hi => {
                    e.insert(LaneRanges::One((lo, hi)));
                    self.pages += (hi - lo) as usize;
                }
                Entry::Vacant(_) => {}
            }
        } else if let Some(held) = self.spans.get_mut(&k) {
            self.pages -= held.remove(lo, hi) as usize;
            if held.is_empty() {
                self.spans.remove(&k);
            }
        }
    }

    /// Leading pages of `prompt` (filled from this index as it is) the rank
    /// holds.
    pub fn overlap(&self, worker: u32, rank: u32, prompt: &PromptPages) -> u32 {
        let slot = slot(worker, rank);
        if self.spans.is_empty() {
            // Blocks only (or nothing): page by page, as the events came.
            return self.leading_blocks(slot, &prompt.hashes);
        }
        let mut n = 0;
        for run in &prompt.runs {
            let k = Key {
                key: run.key(),
                slot,
            };
            let mut held = self
                .spans
                .get(&k)
                .map_or(0, |r| r.run_from(run.first()).min(run.len()));
            if held < run.len() && !self.blocks.is_empty() {
                let (from, to) = ((n + held) as usize, (n + run.len()) as usize);
                held += self.leading_blocks(slot, prompt.hashes.get(from..to).unwrap_or(&[]));
            }
            n += held;
            if held < run.len() {
                break;
            }
        }
        n
    }

    /// Leading blocks of `hashes` the rank holds as blocks.
    fn leading_blocks(&self, slot: u64, hashes: &[BlockHash]) -> u32 {
        // The entry of the group last looked up: a prompt's blocks come
        // group by group.
        let mut current: Option<(u64, u8)> = None;
        let mut n = 0;
        for &h in hashes {
            let lanes = match current {
                Some((g, lanes)) if g == h.group() => lanes,
                _ => {
                    let k = Key {
                        key: h.group(),
                        slot,
                    };
                    let lanes = self.blocks.get(&k).copied().unwrap_or(0);
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

    /// (page, rank) pairs held.
    pub fn len(&self) -> usize {
        self.pages
    }

    /// Whether no rank holds anything.
    pub fn is_empty(&self) -> bool {
        self.pages == 0
    }
}

/// A block run's lanes as bits of its group's entry: a block is one page of
/// lane below 8 (`PageRun::from(BlockHash)`), its pieces one page or none.
#[inline]
fn run_bits(run: PageRun) -> u8 {
    debug_assert!(run.len() <= 1 && (run.is_empty() || run.first() < 8));
    u8::from(!run.is_empty()).wrapping_shl(run.first())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aisim_core::SimTime;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// A prompt of `ids.len()` trace blocks of `t` tokens.
    fn prompt(ids: &[u64], t: u32) -> Request {
        Request::new(0, SimTime::ZERO, ids.len() as u32 * t, 1).with_hash_ids(ids.to_vec(), t)
    }

    fn pages_of(index: &RouterIndex, req: &Request, bs: u32) -> PromptPages {
        let mut p = PromptPages::default();
        p.fill(req, bs, u32::MAX, index);
        p
    }

    fn stored(hashes: &[BlockHash]) -> Vec<KvEvent> {
        hashes.iter().map(|&h| KvEvent::Stored(h.into())).collect()
    }

    #[test]
    fn overlap_is_the_leading_run_a_rank_holds() {
        let req = prompt(&[1, 2, 3, 4], 16);
        let hashes = req.block_hashes(16);
        let mut index = RouterIndex::default();
        index.apply(2, 1, &stored(&hashes[..3]));
        let pages = pages_of(&index, &req, 16);
        assert!(pages.runs.is_empty(), "no runs for an index of blocks");
        assert_eq!(index.overlap(2, 1, &pages), 3);
        assert_eq!(index.overlap(2, 0, &pages), 0, "another rank holds nothing");
        assert_eq!(
            index.overlap(1, 1, &pages),
            0,
            "another worker holds nothing"
        );
        index.apply(2, 1, &[KvEvent::Removed(hashes[1].into())]);
        assert_eq!(index.overlap(2, 1, &pages), 1, "a gap ends the prefix");
        assert_eq!(index.len(), 2);
    }

    /// At one-token pages a 512-token trace block is one span entry: a
    /// prompt of 4 of them stored as runs is 4 entries, not 2,048 pages.
    #[test]
    fn span_runs_are_one_entry_per_trace_block() {
        let req = prompt(&[5, 6, 7, 8], 512);
        let mut index = RouterIndex::default();
        let events: Vec<KvEvent> = req.page_runs(1).map(KvEvent::Stored).collect();
        assert_eq!(events.len(), 4);
        index.apply(0, 0, &events);
        assert_eq!(
            (index.spans.len(), index.blocks.len(), index.len()),
            (4, 0, 2048)
        );
        let pages = pages_of(&index, &req, 1);
        assert!(pages.hashes.is_empty(), "no page hashes for a span index");
        assert_eq!(index.overlap(0, 0, &pages), 2048);
        // Evicted from the end of the third block: the match stops there.
        let third = req.page_runs(1).nth(2).unwrap();
        index.apply(0, 0, &[KvEvent::Removed(third.skip(100))]);
        assert_eq!(index.overlap(0, 0, &pages), 1024 + 100);
    }

    /// Pages told as blocks and pages told as runs add up (an index fed by
    /// pools of both kinds): the walk takes each trace block's run, then its
    /// blocks.
    #[test]
    fn runs_and_blocks_of_one_prompt_add_up() {
        let req = prompt(&[5, 6, 7], 16);
        let runs: Vec<PageRun> = req.page_runs(4).collect();
        let mut index = RouterIndex::default();
        index.apply(
            0,
            0,
            &[KvEvent::Stored(runs[0]), KvEvent::Stored(runs[1].head(1))],
        );
        index.apply(
            0,
            0,
            &KvEvent::Stored(runs[1].skip(1))
                .per_page()
                .collect::<Vec<_>>(),
        );
        index.apply(0, 0, &[KvEvent::Stored(runs[2].head(3))]);
        assert_eq!(index.len(), 11);
        assert_eq!(index.overlap(0, 0, &pages_of(&index, &req, 4)), 11);
        index.apply(
            0,
            0,
            &KvEvent::Removed(runs[1].skip(2).head(1))
                .per_page()
                .collect::<Vec<_>>(),
        );
        assert_eq!(index.overlap(0, 0, &pages_of(&index, &req, 4)), 6);
    }

    proptest! {
        /// Whatever the block events, the index holds exactly the blocks
        /// stored and not removed since, per rank, lanes of one group
        /// included (128-token trace blocks of 16-token engine blocks: 8
        /// lanes each).
        #[test]
        fn the_index_follows_the_events(
            batches in prop::collection::vec(
                (0u32..3, 0u32..2, prop::collection::vec((0usize..24, any::<bool>()), 0..12)),
                0..30,
            ),
        ) {
            let req = prompt(&[1, 2, 3], 128);
            let blocks = req.block_hashes(16);
            let mut index = RouterIndex::default();
            let mut model = BTreeSet::new();
            // One `apply` per batch, as a pass's events of one rank come.
            for (w, r, ops) in &batches {
                let events: Vec<KvEvent> = ops
                    .iter()
                    .map(|&(b, store)| if store { KvEvent::Stored(blocks[b].into()) } else { KvEvent::Removed(blocks[b].into()) })
                    .collect();
                index.apply(*w, *r, &events);
                for &(b, store) in ops {
                    if store { model.insert((*w, *r, b)); } else { model.remove(&(*w, *r, b)); }
                }
            }
            prop_assert_eq!(index.len(), model.len());
            let pages = pages_of(&index, &req, 16);
            for w in 0..3 {
                for r in 0..2 {
                    let want = (0..24).take_while(|b| model.contains(&(w, r, *b))).count() as u32;
                    prop_assert_eq!(index.overlap(w, r, &pages), want);
                }
            }
        }

        /// The index fed span runs equals the one fed the same events page
        /// by page (the per-page reference): same pages held, same overlap
        /// for every prompt, whatever pieces of spans come and go (prompts
        /// sharing a stem, 4-token pages of 16-token trace blocks, and the
        /// pieces need not be contiguous).
        #[test]
        fn span_events_index_as_their_pages_do(
            tails in prop::collection::vec(prop::collection::vec(0u64..3, 0..4), 1..4),
            ops in prop::collection::vec(
                (0usize..4, 0usize..8, 0u32..4, 1u32..5, any::<bool>(), 0u32..2),
                0..40,
            ),
        ) {
            let prompts: Vec<Request> = tails
                .iter()
                .map(|t| prompt(&[[9, 8].as_slice(), t].concat(), 16))
                .collect();
            let mut spans = RouterIndex::default();
            let mut pages = RouterIndex::default();
            let mut model = BTreeSet::new();
            for (p, k, skip, len, store, rank) in ops {
                let req = &prompts[p % prompts.len()];
                let Some(run) = req.page_runs(4).nth(k % (req.hash_ids.len())) else { continue };
                let piece = run.skip(skip).head(len);
                let ev = if store { KvEvent::Stored(piece) } else { KvEvent::Removed(piece) };
                spans.apply(0, rank, &[ev]);
                pages.apply(0, rank, &ev.per_page().collect::<Vec<_>>());
                for h in piece.hashes() {
                    if store { model.insert((rank, h)); } else { model.remove(&(rank, h)); }
                }
            }
            prop_assert_eq!(spans.len(), model.len());
            prop_assert_eq!(pages.len(), model.len());
            for req in &prompts {
                let hashes = req.block_hashes(4);
                for rank in 0..2 {
                    let want = hashes.iter().take_while(|h| model.contains(&(rank, **h))).count() as u32;
                    prop_assert_eq!(spans.overlap(0, rank, &pages_of(&spans, req, 4)), want);
                    prop_assert_eq!(pages.overlap(0, rank, &pages_of(&pages, req, 4)), want);
                }
            }
        }
    }
}

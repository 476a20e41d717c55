//! `KvBlockPool`: fixed-capacity blocks that are in use (ref-counted), cached
//! (complete, unreferenced, findable by hash) or free. Cached blocks are evicted
//! least-recently-used first when a free block is needed (vLLM's free block queue).
//!
//! All operations are O(1) (amortized) except prefix lookup, which is O(blocks
//! looked up). The hash index is cleaned lazily (see `index.rs`): an entry
//! counts only while its block still holds that hash.
//!
//! The LRU order is a queue of block ids, cleaned lazily too: a cached block
//! records the position of its entry, and an entry whose block has moved on
//! (taken again as a prefix hit) is skipped when it reaches the front. A
//! linked list would make every eviction wait for the previous one's cache
//! miss (the next block is known only once the head's metadata is read); the
//! queue knows the next victims in advance, so their misses overlap.

use crate::block_hash::{private_block_hash, BlockHash};
use crate::kv::event::EventLog;
use crate::kv::index::{BlockIndex, Cursor};
use crate::kv::{BlockId, KvEvent};
use crate::prefetch::prefetch;

/// Stale LRU entries tolerated beyond the cached blocks' count before the
/// queue is compacted.
const LRU_SLACK: usize = 1024;
/// LRU entries ahead of an eviction whose metadata is prefetched.
const EVICT_AHEAD: usize = 8;

const NO_HASH: u64 = 0;
/// `BlockMeta::state` of a block that is not cached, with its reference
/// count in the low bits (0: free).
const HELD: u64 = 1 << 63;
/// The state of a block just taken: held once.
const TAKEN: u64 = HELD + 1;
/// Pool capacities are below this (the largest block id is a lane's
/// "no block" in the index, see `index.rs`).
const MAX_CAPACITY: u32 = u32::MAX - 1;

/// 16 bytes: a block is either referenced (and needs a reference count) or
/// cached (and needs its place in the LRU queue), never both, so they share
/// a word.
#[derive(Debug, Clone, Copy)]
struct BlockMeta {
    hash: u64,
    /// Cached: the position of its LRU queue entry (below `HELD`; positions
    /// only grow, so a stale entry's never comes back). Otherwise `HELD` plus
    /// the reference count (`HELD` alone: free).
    state: u64,
}

impl BlockMeta {
    const FREE: BlockMeta = BlockMeta {
        hash: NO_HASH,
        state: HELD,
    };

    #[inline]
    fn is_cached(&self) -> bool {
        self.state < HELD
    }

    #[inline]
    fn ref_count(&self) -> u32 {
        if self.is_cached() {
            0
        } else {
            (self.state - HELD) as u32
        }
    }
}

/// The result of a prefix lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrefixMatch {
    /// Leading blocks found by hash.
    pub blocks: u32,
    /// How many of them are cached (unreferenced): taking them uses up evictable
    /// capacity, which admission must account for.
    pub evictable: u32,
}

/// Block metadata reserved up front (1 MiB): the default pools (16,384
/// blocks for vLLM and TensorRT-LLM) never move their table.
const RESERVED_BLOCKS: u32 = 1 << 16;

/// The most entries the LRU queue of a pool of `capacity` blocks holds:
/// twice the pool, plus slack.
fn lru_limit_for(capacity: u32) -> usize {
    2 * capacity as usize + 4 * LRU_SLACK
}

/// A pool of `capacity` KV blocks with a prefix cache.
#[derive(Debug)]
pub struct KvBlockPool {
    capacity: u32,
    /// Blocks ever handed out (ids `0..blocks.len()`); the rest are free and
    /// untouched, so a large pool costs memory only as far as it is used.
    blocks: Vec<BlockMeta>,
    /// Freed blocks without a hash, taken before untouched ones.
    free: Vec<BlockId>,
    /// From `lru_head` on: cached blocks, least recently used first, and
    /// stale entries (see the module's notes). Before `lru_head`: entries
    /// already taken. Both are dropped when the queue fills (see
    /// `make_lru_room`).
    lru: Vec<BlockId>,
    lru_head: usize,
    /// The position of `lru[0]`.
    lru_base: u64,
    cached: u32,
    in_use: u32,
    index: BlockIndex,
    /// Blocks holding a hash (the index's live entries).
    hashed: u32,
    events: EventLog,
    /// Private hashes being registered, kept for the capacity.
    private_hashes: Vec<BlockHash>,
}

impl KvBlockPool {
    /// A pool of `capacity` free blocks.
    ///
    /// # Panics
    /// When `capacity` leaves no room for the two reserved block ids (above
    /// four billion blocks).
    pub fn new(capacity: u32) -> KvBlockPool {
        KvBlockPool::for_one_of(capacity, 1)
    }

    /// A pool of `capacity` blocks, one of `ranks` in an attention-DP worker:
    /// the prefix index written out up front is split between the ranks
    /// (it grows as a rank's cache fills), so a worker of 1,024 ranks costs
    /// what one rank does until its ranks are used.
    pub fn for_one_of(capacity: u32, ranks: u32) -> KvBlockPool {
        assert!(
            capacity < MAX_CAPACITY,
            "KV pool of {capacity} blocks is too large"
        );
        KvBlockPool {
            capacity,
            // Reserved, not touched: pages cost only once blocks are handed
            // out. Up to a default-sized pool pushing never moves the table;
            // a larger one grows as it is used, so a huge `--num-gpu-blocks`
            // (2^31 blocks: 32 GiB of address space) costs what it holds.
            blocks: Vec::with_capacity(capacity.min(RESERVED_BLOCKS) as usize),
            free: Vec::new(),
            // The whole queue a pool up to the reserve's size can hold, in
            // one allocation: growing it by doubling would copy it, and page
            // fault it, again at every step. Untouched, it costs nothing; a
            // rank of a DP worker reserves for its share.
            lru: Vec::with_capacity(lru_limit_for(capacity.min(RESERVED_BLOCKS) / ranks.max(1))),
            lru_head: 0,
            lru_base: 0,
            cached: 0,
            in_use: 0,
            index: BlockIndex::for_capacity(capacity as usize / ranks.max(1) as usize),
            hashed: 0,
            events: EventLog::default(),
            private_hashes: Vec::new(),
        }
    }

    /// Total blocks.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    /// Blocks referenced by at least one request.
    pub fn in_use_blocks(&self) -> u32 {
        self.in_use
    }
    /// Unreferenced blocks still findable by hash.
    pub fn cached_blocks(&self) -> u32 {
        self.cached
    }
    /// Blocks holding nothing.
    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32 + self.untouched()
    }
    /// Blocks an allocation can get: free plus evictable cached ones.
    pub fn available_blocks(&self) -> u32 {
        self.free_blocks() + self.cached
    }

    fn untouched(&self) -> u32 {
        self.capacity - self.blocks.len() as u32
    }

    /// Start (or stop) recording KV events. Off by default: nobody pays for events
    /// nobody reads.
    pub fn capture_events(&mut self, on: bool) {
        self.events.capture(on);
    }

    /// Moves the events recorded since the last call into `out`.
    pub fn drain_events(&mut self, out: &mut Vec<KvEvent>) {
        self.events.drain(out);
    }

    /// The block holding `hash`, if any (ignoring stale index entries).
    #[inline]
    fn find(&self, hash: BlockHash) -> Option<BlockId> {
        self.index
            .get(hash, |b| self.blocks[b as usize].hash == hash.0)
    }

    /// `find` for hashes looked up in a row (see `BlockIndex::get_from`).
    #[inline]
    fn find_from(&self, cursor: &mut Cursor, hash: BlockHash) -> Option<BlockId> {
        self.index
            .get_from(cursor, hash, |b| self.blocks[b as usize].hash == hash.0)
    }

    /// Whether a block with this hash is findable (in use or cached).
    pub fn contains(&self, hash: BlockHash) -> bool {
        self.find(hash).is_some()
    }

    /// The longest run of leading hashes present in the pool, looking at no more
    /// than `max_blocks`. Read-only.
    pub fn longest_prefix(
        &self,
        hashes: impl Iterator<Item = BlockHash>,
        max_blocks: u32,
    ) -> PrefixMatch {
        let mut m = PrefixMatch::default();
        let mut cursor = Cursor::default();
        for h in hashes.take(max_blocks as usize) {
            match self.find_from(&mut cursor, h) {
                Some(b) => {
                    m.blocks += 1;
                    if self.blocks[b as usize].is_cached() {
                        m.evictable += 1;
                    }
                }
                None => break,
            }
        }
        m
    }

    /// Takes a reference on the block holding `hash`, if any (a prefix hit).
    pub fn acquire_cached(&mut self, hash: BlockHash) -> Option<BlockId> {
        self.acquire_cached_from(&mut Cursor::default(), hash)
    }

    /// `acquire_cached` for hashes taken in a row (see `find_from`):
    /// taking references leaves the index as it is.
    pub(crate) fn acquire_cached_from(
        &mut self,
        cursor: &mut Cursor,
        hash: BlockHash,
    ) -> Option<BlockId> {
        let b = self.find_from(cursor, hash)?;
        if self.blocks[b as usize].is_cached() {
            // Its queue entry goes stale; eviction skips it.
            self.cached -= 1;
            self.take(b);
        } else {
            self.blocks[b as usize].state += 1;
        }
        Some(b)
    }

    /// A fresh block with one reference: a freed one, else an untouched one,
    /// else the least recently used cached one (whose hash is forgotten).
    /// `None` when the pool is exhausted.
    pub fn allocate(&mut self) -> Option<BlockId> {
        self.take_fresh()
    }

    /// Appends `n` fresh blocks to `out`, as `n` calls of `allocate` would;
    /// false (appending nothing) when fewer are available.
    pub fn allocate_into(&mut self, n: u32, out: &mut Vec<BlockId>) -> bool {
        if n > self.available_blocks() {
            return false;
        }
        out.reserve(n as usize);
        let mut left = n as usize;
        // Freed blocks first, the last freed first (as `allocate` pops them).
        let k = left.min(self.free.len());
        for b in self.free.drain(self.free.len() - k..).rev() {
            self.blocks[b as usize].state = TAKEN;
            out.push(b);
        }
        left -= k;
        // Then untouched ones, in order.
        let k = left.min(self.untouched() as usize);
        let first = self.blocks.len() as BlockId;
        self.blocks.extend(std::iter::repeat_n(
            BlockMeta {
                hash: NO_HASH,
                state: TAKEN,
            },
            k,
        ));
        out.extend(first..first + k as BlockId);
        left -= k;
        self.in_use += n - left as u32;
        // Then the least recently used cached ones.
        self.evict_into(left, out);
        true
    }

    /// Appends the `n` least recently used cached blocks to `out`, as `n`
    /// calls of `evict` would. The caller has checked that `n` are cached.
    fn evict_into(&mut self, n: usize, out: &mut Vec<BlockId>) {
        self.evict_each(n, |b| out.push(b));
    }

    /// Takes the `n` least recently used cached blocks, handing each to
    /// `got`: their hashes forgotten, each in use with one reference, the
    /// counts changed once. At least `n` must be cached. One loop for one
    /// block and for many: the queue's next entries are known, so their
    /// metadata is prefetched.
    #[inline(always)]
    fn evict_each(&mut self, n: usize, mut got: impl FnMut(BlockId)) {
        let mut events = self.events.on();
        let (lru, metas) = (&self.lru, &mut self.blocks);
        let mut head = self.lru_head;
        let mut left = n;
        while left > 0 {
            // A taken or stale entry no longer names its block's position.
            let b = lru[head];
            let pos = self.lru_base + head as u64;
            head += 1;
            if let Some(&ahead) = lru.get(head + EVICT_AHEAD) {
                if let Some(m) = metas.get(ahead as usize) {
                    prefetch(m);
                }
            }
            let m = &mut metas[b as usize];
            if m.state != pos {
                continue;
            }
            // The index entry goes stale; `find` ignores it.
            let h = std::mem::replace(&mut m.hash, NO_HASH);
            m.state = TAKEN;
            if let Some(ev) = events.as_mut() {
                ev.push(KvEvent::Removed(BlockHash(h).into()));
            }
            got(b);
            left -= 1;
        }
        self.lru_head = head;
        let n = n as u32;
        self.cached -= n;
        self.hashed -= n;
        self.in_use += n;
    }

    #[inline(always)]
    fn take_fresh(&mut self) -> Option<BlockId> {
        let b = match self.free.pop() {
            Some(b) => b,
            None if self.untouched() > 0 => {
                self.blocks.push(BlockMeta::FREE);
                self.blocks.len() as u32 - 1
            }
            None => return self.evict(),
        };
        self.take(b);
        Some(b)
    }

    /// The least recently used cached block, its hash forgotten, in use
    /// with one reference; `None` when nothing is cached.
    #[inline(always)]
    fn evict(&mut self) -> Option<BlockId> {
        if self.cached == 0 {
            return None;
        }
        let mut got = None;
        self.evict_each(1, |b| got = Some(b));
        got
    }

    /// Puts an unreferenced block in use with one reference.
    #[inline]
    fn take(&mut self, b: BlockId) {
        self.blocks[b as usize].state = TAKEN;
        self.in_use += 1;
    }

    /// Marks an in-use block as complete with content `hash`, making it findable.
    /// When another block already holds that content, this one stays anonymous
    /// (it is freed, not cached, on release).
    pub fn register(&mut self, block: BlockId, hash: BlockHash) {
        self.register_all(&[block], &[hash]);
    }

    /// `register(blocks[i], hashes[i])` for each block in order (the two
    /// have the same length). The blocks of one group (consecutive blocks
    /// of a prompt, usually) share one lookup and are filed in a row, with
    /// the pool's fields borrowed once; the entry of the group two ahead is
    /// touched at each group's start, so that its cache miss overlaps with
    /// this group's work.
    #[inline]
    pub fn register_all(&mut self, blocks: &[BlockId], hashes: &[BlockHash]) {
        /// Blocks ahead whose group's entry is touched: about two groups.
        const AHEAD: usize = 2 * crate::block_hash::LANES;
        assert_eq!(blocks.len(), hashes.len(), "a hash for each block");
        let n = blocks.len();
        for h in hashes.iter().step_by(crate::block_hash::LANES).take(2) {
            self.index.touch(*h);
        }
        let mut filed = 0;
        let mut i = 0;
        while i < n {
            let group = hashes[i].group();
            if let Some(&ahead) = hashes.get(i + AHEAD) {
                self.index.touch(ahead);
            }
            // The group's entry is found (or claimed) only if one of its
            // blocks needs filing: a block already holding a hash does not.
            while i < n
                && hashes[i].group() == group
                && self.blocks[blocks[i] as usize].hash != NO_HASH
            {
                i += 1;
            }
            if i == n || hashes[i].group() != group {
                continue;
            }
            let entry = self.entry_for(group);
            let (metas, lanes) = (&mut self.blocks, self.index.lanes_mut(entry));
            while i < n && hashes[i].group() == group {
                let (block, h) = (blocks[i], hashes[i]);
                i += 1;
                if metas[block as usize].hash != NO_HASH {
                    continue;
                }
                if let Some(_holder) =
                    lanes.file(h.lane(), block, |b| metas[b as usize].hash == h.0)
                {
                    continue; // cached elsewhere: this copy stays anonymous
                }
                metas[block as usize].hash = h.0;
                filed += 1;
                if let Some(ev) = self.events.on() {
                    ev.push(KvEvent::Stored(h.into()));
                }
            }
        }
        self.hashed += filed;
    }

    /// `register_all` of `blocks` named `private_block_hash(salt, first + i)`.
    pub(crate) fn register_private(&mut self, blocks: &[BlockId], salt: u64, first: u32) {
        let mut hashes = std::mem::take(&mut self.private_hashes);
        hashes.clear();
        let end = first + blocks.len() as u32;
        hashes.extend((first..end).map(|j| private_block_hash(salt, j)));
        self.register_all(blocks, &hashes);
        self.private_hashes = hashes;
    }

    /// The index entry of `group`, claimed if it has none, after a rebuild
    /// when the table is crowded.
    fn entry_for(&mut self, group: u64) -> usize {
        match self.index.entry(group) {
            Ok(e) => e,
            Err(_) if self.index.is_crowded() => {
                let metas = &self.blocks;
                self.index.rebuild(metas.len(), |b| {
                    metas
                        .get(b)
                        .filter(|m| m.hash != NO_HASH)
                        .map(|m| BlockHash(m.hash))
                });
                let slot = self
                    .index
                    .entry(group)
                    .expect_err("a group without an entry has no live block to rebuild it from");
                self.index.claim(slot, group)
            }
            Err(slot) => self.index.claim(slot, group),
        }
    }

    /// Drops one reference. An unreferenced block with a hash becomes cached (the
    /// most recently used); one without becomes free.
    #[inline]
    pub fn release(&mut self, block: BlockId) {
        self.release_each_from_last(std::slice::from_ref(&block));
    }

    /// `release` of each of `blocks`, last first (so that a prefix's tail
    /// is evicted before its head), the in-use count changed once.
    pub fn release_each_from_last(&mut self, blocks: &[BlockId]) {
        let mut unheld = 0;
        for &b in blocks.iter().rev() {
            let meta = &mut self.blocks[b as usize];
            debug_assert!(meta.ref_count() > 0, "release of an unreferenced block");
            meta.state -= 1;
            if meta.state > HELD {
                continue;
            }
            unheld += 1;
            if meta.hash == NO_HASH {
                self.free.push(b);
            } else {
                self.lru_push_back(b);
                self.cached += 1;
            }
        }
        self.in_use -= unheld;
    }

    /// Checks the accounting: every block is in exactly one state and the counts add
    /// up to the capacity. Returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        // Live queue entries: one per cached block (positions are unique).
        let mut seen_cached = 0u32;
        let queued = &self.lru[self.lru_head..];
        for (pos, &b) in (self.lru_base + self.lru_head as u64..).zip(queued) {
            let m = &self.blocks[b as usize];
            if m.state == pos {
                if m.hash == NO_HASH {
                    return Err(format!("cached block {b} holds no hash"));
                }
                seen_cached += 1;
            }
        }
        let cached = self.blocks.iter().filter(|m| m.is_cached()).count() as u32;
        if cached != seen_cached {
            return Err(format!(
                "{cached} blocks are cached, {seen_cached} have a live LRU entry"
            ));
        }
        // See `make_lru_room`.
        if self.lru.len() > self.lru_limit() {
            return Err("LRU queue was not compacted".into());
        }
        let in_use = self.blocks.iter().filter(|m| m.ref_count() > 0).count() as u32;
        let free_ok = self.free.iter().all(|&b| {
            let m = &self.blocks[b as usize];
            m.ref_count() == 0 && m.hash == NO_HASH
        });
        if !free_ok {
            return Err("a block on the free list is referenced or holds a hash".into());
        }
        if seen_cached != self.cached || in_use != self.in_use {
            return Err(format!(
                "counts disagree: cached {} (walked {seen_cached}), in use {} (counted {in_use})",
                self.cached, self.in_use
            ));
        }
        if self.in_use + self.cached + self.free_blocks() != self.capacity() {
            return Err(format!(
                "in use {} + cached {} + free {} != capacity {}",
                self.in_use,
                self.cached,
                self.free_blocks(),
                self.capacity()
            ));
        }
        let hashed = self.blocks.iter().filter(|m| m.hash != NO_HASH).count();
        let found = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(b, m)| {
                m.hash != NO_HASH && self.find(BlockHash(m.hash)) == Some(*b as BlockId)
            })
            .count();
        if hashed != found || hashed != self.hashed as usize {
            return Err(format!(
                "{hashed} blocks hold a hash, the index finds {found}, the count says {}",
                self.hashed
            ));
        }
        if self.index.len() * 4 > self.index.slots() * 3 + 4 {
            return Err("hash index was not rebuilt".into());
        }
        Ok(())
    }

    /// Caches `b` as the most recently used.
    #[inline]
    fn lru_push_back(&mut self, b: BlockId) {
        if self.lru.len() == self.lru.capacity() {
            self.make_lru_room();
        }
        self.blocks[b as usize].state = self.lru_base + self.lru.len() as u64;
        self.lru.push(b);
    }

    /// The most entries the queue holds: twice the pool, plus slack.
    fn lru_limit(&self) -> usize {
        lru_limit_for(self.capacity)
    }

    /// When the queue is full: drops its taken entries when they are half
    /// of it (positions stay), else its stale ones when they outnumber the
    /// cached blocks (plus `LRU_SLACK`) or the queue is at its limit, else
    /// lets it grow (doubling, up to the limit: only a pool larger than
    /// the reserve does not start with all of it). Each way frees half the queue or doubles it (the
    /// last time, up to the limit), so a push costs O(1) amortized. At the
    /// limit, the live entries (one per cached block) are at most half of
    /// it.
    #[cold]
    fn make_lru_room(&mut self) {
        let (len, limit) = (self.lru.len(), self.lru_limit());
        if 2 * self.lru_head >= len && self.lru_head > 0 {
            self.lru.drain(..self.lru_head);
            self.lru_base += self.lru_head as u64;
            self.lru_head = 0;
        } else if len - self.lru_head >= 2 * self.cached as usize + LRU_SLACK || len >= limit {
            self.compact_lru();
        } else {
            let grown = (2 * len).clamp(len + 1, limit);
            self.lru.reserve_exact(grown - len);
        }
    }

    /// Drops the taken and stale entries; the live ones keep their order
    /// and get new positions (after every old one, so no stale entry can
    /// match them).
    #[cold]
    fn compact_lru(&mut self) {
        let blocks = &mut self.blocks;
        let mut pos = self.lru_base;
        let base = self.lru_base + self.lru.len() as u64;
        let head = self.lru_head;
        let mut next = base;
        let mut i = 0;
        self.lru.retain(|&b| {
            let m = &mut blocks[b as usize];
            // Positions are unique: the entry is live when its block's state
            // names it (a taken entry's block has moved on).
            let live = i >= head && m.state == pos;
            i += 1;
            pos += 1;
            if live {
                m.state = next;
                next += 1;
            }
            live
        });
        self.lru_base = base;
        self.lru_head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(x: u64) -> BlockHash {
        BlockHash((x + 1) << 3)
    }

    /// Serve one request for a one-block prefix: hit or compute, then finish.
    fn serve(pool: &mut KvBlockPool, prefix: u64) -> bool {
        let hit = pool.longest_prefix(std::iter::once(h(prefix)), 1).blocks == 1;
        let b = if hit {
            pool.acquire_cached(h(prefix)).unwrap()
        } else {
            let b = pool.allocate().unwrap();
            pool.register(b, h(prefix));
            b
        };
        pool.release(b);
        pool.check_invariants().unwrap();
        hit
    }

    #[test]
    fn lru_on_a_cyclic_pattern() {
        for (capacity, sessions) in [(4u32, 4u64), (8, 4), (4, 5), (3, 7), (1, 1), (1, 2)] {
            let mut pool = KvBlockPool::new(capacity);
            let n = 40u64;
            let hits = (0..n).filter(|i| serve(&mut pool, i % sessions)).count() as u64;
            let expected = if capacity as u64 >= sessions {
                n - sessions
            } else {
                0
            };
            assert_eq!(hits, expected, "C={capacity} s={sessions}");
        }
    }

    #[test]
    fn hits_leave_stale_lru_entries_that_are_compacted_and_skipped() {
        let mut pool = KvBlockPool::new(4);
        let mut got = Vec::new();
        assert!(pool.allocate_into(4, &mut got));
        pool.register_all(&got, &(0..got.len() as u64).map(h).collect::<Vec<_>>());
        for &b in &got {
            pool.release(b);
        }
        // Block 1 hit and released again and again: each time its old entry
        // goes stale, until pushes compact the queue.
        for round in 0..5_000 {
            let b = pool.acquire_cached(h(1)).unwrap();
            assert_eq!(b, got[1]);
            pool.release(b);
            if round % 97 == 0 {
                pool.check_invariants().unwrap();
            }
            assert!(pool.lru.len() <= pool.lru_limit(), "round {round}");
        }
        pool.check_invariants().unwrap();
        // Least recently used first: 0, 2, 3, then the block hit last.
        let order: Vec<BlockId> = (0..4).map(|_| pool.allocate().unwrap()).collect();
        assert_eq!(order, [got[0], got[2], got[3], got[1]]);
        assert!(pool.allocate().is_none());
        pool.check_invariants().unwrap();
    }

    #[test]
    fn a_full_pool_evicting_steadily_drops_taken_lru_entries() {
        // Every allocation evicts the oldest content, every release caches
        // new content: the queue's taken entries are dropped as it goes.
        let mut pool = KvBlockPool::new(3000);
        let mut got = Vec::new();
        for round in 0..20_000u64 {
            got.clear();
            assert!(pool.allocate_into(2, &mut got));
            pool.register_all(&got, &[h(2 * round), h(2 * round + 1)]);
            for &b in &got {
                pool.release(b);
            }
            if round % 1000 == 999 {
                pool.check_invariants().unwrap();
                assert!(pool.lru.capacity() <= pool.lru_limit(), "round {round}");
            }
        }
        // The last 1,500 rounds' contents are cached, the earlier ones gone.
        assert!(pool.contains(h(2 * 19_999 + 1)) && pool.contains(h(2 * 18_500)));
        assert!(!pool.contains(h(2 * 18_499)));
        assert_eq!(pool.cached_blocks(), 3000);
    }

    #[test]
    fn a_rank_of_a_wide_dp_worker_writes_out_a_small_index_that_grows_as_used() {
        // 1,024 ranks of 131,072 blocks: one rank's index written out up front
        // would be 65,536 entries (2.6 MB), 2.6 GB for the worker.
        let one = KvBlockPool::new(131_072);
        let mut wide = KvBlockPool::for_one_of(131_072, 1024);
        assert_eq!(one.index.slots(), 1 << 16);
        assert_eq!(wide.index.slots(), 64);
        // Used, it grows and finds every block it registered.
        let mut got = Vec::new();
        assert!(wide.allocate_into(5_000, &mut got));
        wide.register_all(&got, &(0..got.len() as u64).map(h).collect::<Vec<_>>());
        for (i, &b) in got.iter().enumerate() {
            wide.release(b);
            assert!(wide.contains(h(i as u64)), "block {i}");
        }
        assert!(wide.index.slots() > 64);
        wide.check_invariants().unwrap();
    }

    #[test]
    fn a_huge_pool_costs_what_it_holds() {
        // 2^31 blocks would be 32 GiB of metadata reserved: only what is
        // handed out is held (the table grows past the reserve as it is used).
        let mut pool = KvBlockPool::new(1 << 31);
        assert!(pool.blocks.capacity() <= RESERVED_BLOCKS as usize);
        let mut got = Vec::new();
        assert!(pool.allocate_into(RESERVED_BLOCKS + 10, &mut got));
        assert_eq!(got.len() as u32, RESERVED_BLOCKS + 10);
        assert!(pool.blocks.capacity() <= 4 * (RESERVED_BLOCKS as usize + 10));
        assert_eq!(pool.free_blocks(), (1 << 31) - RESERVED_BLOCKS - 10);
        for b in got {
            pool.release(b);
        }
        pool.check_invariants().unwrap();
    }

    #[test]
    fn eviction_forgets_hash_and_publishes_events() {
        let mut pool = KvBlockPool::new(2);
        pool.capture_events(true);
        let a = pool.allocate().unwrap();
        pool.register(a, h(1));
        pool.release(a);
        let b = pool.allocate().unwrap(); // free block, no eviction
        let c = pool.allocate().unwrap(); // evicts h(1)
        assert_eq!(c, a);
        assert!(!pool.contains(h(1)));
        assert!(pool.allocate().is_none());
        let mut ev = Vec::new();
        pool.drain_events(&mut ev);
        assert_eq!(
            ev,
            vec![KvEvent::Stored(h(1).into()), KvEvent::Removed(h(1).into())]
        );
        pool.release(b);
        pool.release(c);
        pool.check_invariants().unwrap();
        assert_eq!(pool.free_blocks(), 2);
    }

    #[test]
    fn shared_blocks_are_ref_counted_and_duplicates_stay_anonymous() {
        let mut pool = KvBlockPool::new(3);
        let a = pool.allocate().unwrap();
        pool.register(a, h(5));
        assert_eq!(pool.acquire_cached(h(5)), Some(a));
        let dup = pool.allocate().unwrap();
        pool.register(dup, h(5)); // same content computed twice: stays anonymous
        pool.release(a);
        assert_eq!(pool.in_use_blocks(), 2);
        pool.release(a);
        pool.release(dup);
        assert_eq!((pool.cached_blocks(), pool.free_blocks()), (1, 2));
        let m = pool.longest_prefix([h(5), h(6)].into_iter(), 8);
        assert_eq!(
            m,
            PrefixMatch {
                blocks: 1,
                evictable: 1
            }
        );
        pool.check_invariants().unwrap();
    }
}

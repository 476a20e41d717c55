//! `PageStore`: the KV operations a scheduler core makes on its pool, for
//! either kind of pool. The block pool tracks every block; the radix cache
//! tracks spans, so SGLang's one-token pages cost what its trace blocks do.

use crate::block_hash::{private_block_hash, BlockHash, Span};
use crate::kv::index::Cursor;
use crate::kv::{BlockId, KvBlockPool, KvCache, KvEvent, PrefixMatch, RadixCache, RadixHold};
use crate::request::Request;

/// A pool a scheduler core allocates from, caches into and matches against.
/// `Pages` names a request's pages (worked out once, at enqueue); `Hold` is
/// what the request holds.
pub(crate) trait PageStore: KvCache {
    type Pages: std::fmt::Debug + Default + Send;
    type Hold: std::fmt::Debug + Default + Send;

    /// Names `req`'s pages into `pages` (cleared first); without prefix
    /// caching its prompt shares nothing.
    fn identify(pages: &mut Self::Pages, req: &Request, block_size: u32, prefix_caching: bool);
    /// Prepares an empty hold for a request of at most `max_pages`.
    fn reset(hold: &mut Self::Hold, max_pages: u64);
    /// Pages held.
    fn held(hold: &Self::Hold) -> u32;
    /// Leading pages held that are in the prefix cache.
    fn registered(hold: &Self::Hold) -> u32;
    /// The longest cached run of leading pages, at most `max`. Read-only.
    fn longest_prefix_of(&self, pages: &Self::Pages, max: u32) -> PrefixMatch;
    /// The longest cached run of `req`'s leading prompt pages, at most
    /// `max`, for a request not yet enqueued (its pages not yet named).
    /// Read-only.
    fn prompt_prefix(&self, req: &Request, block_size: u32, max: u32) -> PrefixMatch;
    /// Takes the first `n` cached pages into an empty hold (a prefix hit).
    fn take_prefix(&mut self, hold: &mut Self::Hold, pages: &Self::Pages, n: u32);
    /// Adds `n` fresh pages to the hold; false (taking nothing) when fewer
    /// are available.
    fn allocate(&mut self, hold: &mut Self::Hold, n: u32) -> bool;
    /// Files the held pages from `registered` up to `upto` in the cache.
    fn register(&mut self, hold: &mut Self::Hold, pages: &Self::Pages, upto: u32);
    /// Gives back every page held (cached ones stay cached).
    fn release(&mut self, hold: &mut Self::Hold);
}

/// The block pool's names for a request's blocks: its prompt's chained
/// hashes, then hashes private to it.
#[derive(Debug, Default)]
pub(crate) struct BlockPages {
    prompt: Vec<BlockHash>,
    salt: u64,
}

impl BlockPages {
    #[inline]
    fn hash_of(&self, j: u32) -> BlockHash {
        match self.prompt.get(j as usize) {
            Some(&h) => h,
            None => private_block_hash(self.salt, j),
        }
    }
}

/// The blocks a request holds, and how many lead it into the cache.
#[derive(Debug, Default)]
pub(crate) struct BlockHold {
    pub blocks: Vec<BlockId>,
    pub hashed: u32,
}

impl PageStore for KvBlockPool {
    type Pages = BlockPages;
    type Hold = BlockHold;

    fn identify(pages: &mut BlockPages, req: &Request, block_size: u32, prefix_caching: bool) {
        pages.salt = req.id.0;
        pages.prompt.clear();
        if prefix_caching {
            // Into the slot's own vector: a reused slot keeps its capacity.
            req.extend_block_hashes(&mut pages.prompt, block_size);
        }
    }

    fn reset(hold: &mut BlockHold, max_pages: u64) {
        hold.blocks.clear();
        hold.hashed = 0;
        // One allocation for the whole block table instead of repeated doubling.
        hold.blocks.reserve(max_pages.min(1 << 20) as usize);
    }

    #[inline]
    fn held(hold: &BlockHold) -> u32 {
        hold.blocks.len() as u32
    }

    #[inline]
    fn registered(hold: &BlockHold) -> u32 {
        hold.hashed
    }

    fn longest_prefix_of(&self, pages: &BlockPages, max: u32) -> PrefixMatch {
        self.longest_prefix((0..).map(|j| pages.hash_of(j)), max)
    }

    fn prompt_prefix(&self, req: &Request, block_size: u32, max: u32) -> PrefixMatch {
        // Hashed as the lookup goes: no allocation, nothing past the first miss.
        self.longest_prefix(req.block_hash_iter(block_size), max)
    }

    fn take_prefix(&mut self, hold: &mut BlockHold, pages: &BlockPages, n: u32) {
        debug_assert!(hold.blocks.is_empty());
        let mut cursor = Cursor::default();
        for j in 0..n {
            let b = self
                .acquire_cached_from(&mut cursor, pages.hash_of(j))
                .expect("prefix block vanished between lookup and admission");
            hold.blocks.push(b);
        }
        hold.hashed = n;
    }

    #[inline]
    fn allocate(&mut self, hold: &mut BlockHold, n: u32) -> bool {
        if n == 1 {
            // A decode step's block: no reservation, no count check.
            return match self.allocate() {
                Some(b) => {
                    hold.blocks.push(b);
                    true
                }
                None => false,
            };
        }
        self.allocate_into(n, &mut hold.blocks)
    }

    #[inline]
    fn register(&mut self, hold: &mut BlockHold, pages: &BlockPages, upto: u32) {
        let (from, upto) = (hold.hashed as usize, upto as usize);
        // The prompt's hashes as they are, then the request's private ones.
        let named = pages.prompt.len().clamp(from, upto);
        let (prompt, private) = hold.blocks[from..upto].split_at(named - from);
        if !prompt.is_empty() {
            self.register_all(prompt, &pages.prompt[from..named]);
        }
        if !private.is_empty() {
            self.register_private(private, pages.salt, named as u32);
        }
        hold.hashed = upto as u32;
    }

    #[inline]
    fn release(&mut self, hold: &mut BlockHold) {
        self.release_each_from_last(&hold.blocks);
        hold.blocks.clear();
        hold.hashed = 0;
    }
}

/// The radix cache's names for a request's pages: its prompt's spans, then
/// one open-ended span private to it.
#[derive(Debug, Default)]
pub(crate) struct SpanPages(pub(crate) Vec<Span>);

impl PageStore for RadixCache {
    type Pages = SpanPages;
    type Hold = RadixHold;

    fn identify(pages: &mut SpanPages, req: &Request, block_size: u32, prefix_caching: bool) {
        pages.0.clear();
        pages.0.extend(req.span_iter(block_size, prefix_caching));
    }

    fn reset(hold: &mut RadixHold, _: u64) {
        *hold = RadixHold::default();
    }

    #[inline]
    fn held(hold: &RadixHold) -> u32 {
        hold.pages()
    }

    #[inline]
    fn registered(hold: &RadixHold) -> u32 {
        hold.tree
    }

    fn longest_prefix_of(&self, pages: &SpanPages, max: u32) -> PrefixMatch {
        self.longest_prefix(pages.0.iter().copied(), max)
    }

    fn prompt_prefix(&self, req: &Request, block_size: u32, max: u32) -> PrefixMatch {
        // Named as the walk goes: no allocation, nothing past the first miss.
        self.longest_prefix(req.span_iter(block_size, true), max)
    }

    fn take_prefix(&mut self, hold: &mut RadixHold, pages: &SpanPages, n: u32) {
        self.lock_prefix(hold, &pages.0, n);
    }

    #[inline]
    fn allocate(&mut self, hold: &mut RadixHold, n: u32) -> bool {
        RadixCache::allocate(self, hold, n)
    }

    fn register(&mut self, hold: &mut RadixHold, pages: &SpanPages, upto: u32) {
        self.insert(hold, &pages.0, upto);
    }

    fn release(&mut self, hold: &mut RadixHold) {
        RadixCache::release(self, hold);
    }
}

/// `KvCache` by the pool's own methods of those names.
macro_rules! kv_cache_by {
    ($pool:ty, $in_use:ident, $cached:ident, $free:ident) => {
        impl KvCache for $pool {
            fn capacity(&self) -> u32 {
                <$pool>::capacity(self)
            }
            fn in_use_blocks(&self) -> u32 {
                <$pool>::$in_use(self)
            }
            fn cached_blocks(&self) -> u32 {
                <$pool>::$cached(self)
            }
            fn free_blocks(&self) -> u32 {
                <$pool>::$free(self)
            }
            fn check_invariants(&self) -> Result<(), String> {
                <$pool>::check_invariants(self)
            }
            fn capture_events(&mut self, on: bool) {
                <$pool>::capture_events(self, on)
            }
            fn drain_events(&mut self, out: &mut Vec<KvEvent>) {
                <$pool>::drain_events(self, out)
            }
        }
    };
}

kv_cache_by!(KvBlockPool, in_use_blocks, cached_blocks, free_blocks);
kv_cache_by!(RadixCache, in_use_pages, cached_pages, free_pages);

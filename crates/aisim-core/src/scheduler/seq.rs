//! Per-request scheduler state and the KV operations every core shares.

use crate::kv::{PageStore, PrefixMatch};
use crate::outcome::{DecodeSink, EngineStats, RejectReason};
use crate::request::{Request, RequestId};
use crate::time::SimTime;

/// When the blocks a request fills while decoding enter the prefix cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeCaching {
    /// Never (prefix caching off).
    Off,
    /// As each block fills (vLLM caches every full block).
    AsBlocksFill,
    /// When the request finishes: SGLang's radix cache inserts a request's
    /// tokens at the end of a prefill (`cache_unfinished_req`) and when it
    /// finishes (`cache_finished_req`), not per decode step, so a retracted
    /// request's decoded tokens are freed, not cached.
    AtCompletion,
}

impl DecodeCaching {
    /// Caching as the backend does it, or `Off` without prefix caching.
    pub fn new(prefix_caching: bool, when: DecodeCaching) -> DecodeCaching {
        if prefix_caching {
            when
        } else {
            DecodeCaching::Off
        }
    }
}

/// A pass in which every running request feeds exactly one token and nothing
/// else happens: no waiting request, no prefill, no preemption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeBatch {
    pub requests: u32,
    pub context_tokens: u64,
    /// Passes from this one on in which the requests only emit tokens: no
    /// block is allocated, filled or registered and nobody finishes (see
    /// `Seq::quiet_passes`).
    pub quiet: u32,
}

impl DecodeBatch {
    /// No request yet.
    pub const EMPTY: DecodeBatch = DecodeBatch {
        requests: 0,
        context_tokens: 0,
        quiet: u32::MAX,
    };

    /// The batch, unless it is empty or `pool` lacks the `new_blocks` its
    /// tokens need (then the core would preempt or retract).
    #[inline]
    pub fn within<K: PageStore>(self, new_blocks: u64, pool: &K) -> Option<DecodeBatch> {
        (self.requests > 0 && new_blocks <= pool.available_blocks() as u64).then_some(self)
    }

    /// Adds a decoding request; returns the blocks it needs for its token.
    #[inline]
    pub fn add<K: PageStore>(
        &mut self,
        seq: &Seq<K>,
        block_size: u32,
        caching: DecodeCaching,
    ) -> u64 {
        self.requests += 1;
        self.context_tokens += seq.total() as u64;
        let as_filled = caching == DecodeCaching::AsBlocksFill;
        self.quiet = self.quiet.min(seq.quiet_passes(block_size, as_filled));
        seq.blocks_short(seq.total(), block_size) as u64
    }
}

/// Limits every core checks at enqueue time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Admissibility {
    pub block_size: u32,
    pub num_gpu_blocks: u32,
    pub max_model_len: Option<u32>,
    /// Without chunked prefill, the most prompt tokens a pass can take.
    pub whole_prompt_budget: Option<u32>,
    /// SGLang: prompt + output must stay below the pool's tokens.
    pub below_pool: bool,
}

impl Admissibility {
    /// Why `req` could never be served here, if it could not.
    pub fn check(&self, req: &Request) -> Result<(), RejectReason> {
        self.check_lengths(req.input_length, req.output_length)
    }

    /// Why a request of these lengths could never be served here.
    pub fn check_lengths(&self, input_length: u32, output_length: u32) -> Result<(), RejectReason> {
        if input_length == 0 {
            return Err(RejectReason::EmptyPrompt);
        }
        let total = input_length as u64 + output_length as u64;
        if let Some(max) = self.max_model_len {
            if total > max as u64 {
                return Err(RejectReason::LongerThanMaxModelLen {
                    tokens: total,
                    max_model_len: max,
                });
            }
        }
        let blocks = total.div_ceil(self.block_size as u64);
        if blocks > self.num_gpu_blocks as u64 {
            return Err(RejectReason::LargerThanKvCache {
                tokens: total,
                blocks,
                block_size: self.block_size,
                capacity: self.num_gpu_blocks,
            });
        }
        let capacity_tokens = self.num_gpu_blocks as u64 * self.block_size as u64;
        if self.below_pool && total >= capacity_tokens {
            return Err(RejectReason::FillsSglangPool {
                tokens: total,
                capacity_tokens,
            });
        }
        if let Some(budget) = self.whole_prompt_budget {
            if input_length > budget {
                return Err(RejectReason::PromptOverBatchBudget {
                    input_length,
                    budget,
                });
            }
        }
        Ok(())
    }
}

/// A request inside a core whose pool is a `K`.
#[derive(Debug)]
pub(crate) struct Seq<K: PageStore> {
    pub id: RequestId,
    pub input: u32,
    pub output: u32,
    pub generated: u32,
    /// Tokens whose KV exists (or is being computed this pass, once `finish` runs).
    pub computed: u32,
    /// Tokens scheduled in the current pass.
    pub scheduled: u32,
    /// What names its pages.
    pub pages: K::Pages,
    /// The pages it holds.
    pub hold: K::Hold,
    pub admitted_before: bool,
    pub finished: bool,
    /// Its blocks stay held when it completes (a disaggregated prefill job).
    pub keeps_blocks: bool,
    /// Its prompt's KV is transferred in at admission (a disaggregated
    /// decode request); cleared when its blocks are released.
    pub transferred: bool,
}

impl<K: PageStore> Default for Seq<K> {
    fn default() -> Self {
        Seq {
            id: RequestId::default(),
            input: 0,
            output: 0,
            generated: 0,
            computed: 0,
            scheduled: 0,
            pages: K::Pages::default(),
            hold: K::Hold::default(),
            admitted_before: false,
            finished: false,
            keeps_blocks: false,
            transferred: false,
        }
    }
}

impl<K: PageStore> Seq<K> {
    /// Tokens the request's KV must hold before it emits its next token.
    #[inline]
    pub fn total(&self) -> u32 {
        self.input + self.generated
    }

    /// Whether this pass it only feeds its last generated token.
    #[inline]
    pub fn is_decoding(&self) -> bool {
        (self.generated > 0 || self.transferred) && self.computed + 1 == self.total()
    }

    /// Pages (blocks) held.
    #[inline]
    pub fn held(&self) -> u32 {
        K::held(&self.hold)
    }

    /// For a decoding request: how many passes from now on it only emits a
    /// token. Pass `i` computes token `computed + i`, which must stay inside
    /// its last block without filling it (no allocation, no registration),
    /// and leaves `generated + i` tokens, which must stay short of the
    /// output. Unregistered full blocks would be registered at once (when
    /// blocks are cached as they fill): 0.
    #[inline]
    pub fn quiet_passes(&self, block_size: u32, caches_as_filled: bool) -> u32 {
        let held = self.held();
        if caches_as_filled && K::registered(&self.hold) + 1 < held {
            return 0;
        }
        let room = (held * block_size).saturating_sub(self.computed + 1);
        let left = self.output.saturating_sub(self.generated + 1);
        room.min(left)
    }

    /// Longest cached prefix, leaving at least one token to compute.
    pub fn prefix_match(&self, pool: &K, block_size: u32) -> PrefixMatch {
        let max_blocks = (self.total() - 1) / block_size;
        pool.longest_prefix_of(&self.pages, max_blocks)
    }

    /// Takes references on the first `blocks` cached blocks (a prefix hit).
    pub fn take_prefix(&mut self, pool: &mut K, blocks: u32, block_size: u32) {
        pool.take_prefix(&mut self.hold, &self.pages, blocks);
        self.computed = blocks * block_size;
    }

    /// Blocks still to allocate for the KV to hold `tokens`.
    #[inline]
    pub fn blocks_short(&self, tokens: u32, block_size: u32) -> u32 {
        tokens.div_ceil(block_size).saturating_sub(self.held())
    }

    /// Allocates blocks up to `tokens`; false (allocating nothing) when the pool
    /// cannot supply them.
    #[inline]
    pub fn grow(&mut self, pool: &mut K, tokens: u32, block_size: u32) -> bool {
        let need = self.blocks_short(tokens, block_size);
        if need == 0 {
            return true;
        }
        pool.allocate(&mut self.hold, need)
    }

    /// Registers the complete blocks among the first `tokens` in the prefix cache.
    #[inline]
    pub fn register_full(&mut self, pool: &mut K, tokens: u32, block_size: u32) {
        let full = (tokens / block_size).min(self.held());
        if K::registered(&self.hold) >= full {
            return;
        }
        pool.register(&mut self.hold, &self.pages, full);
    }

    /// Releases every block (complete ones stay cached) and forgets the computed
    /// tokens: vLLM's recompute preemption, SGLang's retraction, or completion.
    pub fn release_all(&mut self, pool: &mut K) {
        pool.release(&mut self.hold);
        self.computed = 0;
        self.scheduled = 0;
        self.transferred = false;
    }

    /// Its KV caught up with its tokens: it emits its next output token, if
    /// it has any. Returns whether one was emitted and whether it was the first.
    #[inline]
    pub fn emit_token(&mut self) -> Option<bool> {
        (self.output > 0).then(|| {
            self.generated += 1;
            self.generated == 1
        })
    }

    /// Whether it has emitted every output token.
    #[inline]
    pub fn emitted_all(&self) -> bool {
        self.generated >= self.output
    }

    /// Marks it finished (its last token is out), frees its KV (cached as
    /// `caching` says: its computed tokens, the last output token having none)
    /// and counts it.
    pub fn complete(
        &mut self,
        pool: &mut K,
        stats: &mut EngineStats,
        caching: DecodeCaching,
        block_size: u32,
    ) {
        if caching == DecodeCaching::AtCompletion {
            self.register_full(pool, self.computed, block_size);
        }
        self.finished = true;
        self.release_all(pool);
        stats.completed += 1;
    }

    /// Tokens of the prompt (and, after preemption, of the output) still to
    /// compute (a transferred prompt's, only its last).
    pub fn remaining_prefill(&self) -> u32 {
        if self.is_decoding() {
            0
        } else if self.transferred {
            1
        } else {
            self.total() - self.computed
        }
    }

    /// Marks a held job finished and counts it, keeping its blocks until
    /// `release_all`.
    pub fn complete_holding(&mut self, stats: &mut EngineStats) {
        self.finished = true;
        stats.completed += 1;
    }
}

/// Slab of request states with slot reuse (their vectors keep their capacity).
#[derive(Debug)]
pub(crate) struct SeqTable<K: PageStore> {
    seqs: Vec<Seq<K>>,
    free: Vec<u32>,
}

impl<K: PageStore> Default for SeqTable<K> {
    fn default() -> Self {
        SeqTable {
            seqs: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<K: PageStore> SeqTable<K> {
    pub fn insert(&mut self, req: &Request, block_size: u32, prefix_caching: bool) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.seqs.push(Seq::default());
                self.seqs.len() as u32 - 1
            }
        };
        let s = &mut self.seqs[slot as usize];
        s.id = req.id;
        s.input = req.input_length;
        s.output = req.output_length;
        s.generated = 0;
        s.computed = 0;
        s.scheduled = 0;
        s.admitted_before = false;
        s.finished = false;
        s.keeps_blocks = false;
        s.transferred = false;
        let max_blocks =
            (req.input_length as u64 + req.output_length as u64).div_ceil(block_size as u64);
        K::reset(&mut s.hold, max_blocks);
        K::identify(&mut s.pages, req, block_size, prefix_caching);
        slot
    }

    pub fn remove(&mut self, slot: u32) {
        self.free.push(slot);
    }

    #[inline]
    pub fn get(&self, slot: u32) -> &Seq<K> {
        &self.seqs[slot as usize]
    }

    /// Takes finished requests out of `running` and frees their slots (not
    /// those of held jobs), in running order.
    pub fn drop_finished(&mut self, running: &mut Vec<u32>) {
        running.retain(|&s| {
            let seq = self.get(s);
            if seq.finished {
                if !seq.keeps_blocks {
                    self.remove(s);
                }
                false
            } else {
                true
            }
        });
    }

    /// The pure decode pass `running` would make next, if every one of them is
    /// decoding and `pool` has the blocks their tokens need.
    pub fn decode_batch(
        &self,
        running: &[u32],
        pool: &K,
        block_size: u32,
        caching: DecodeCaching,
    ) -> Option<DecodeBatch> {
        let mut batch = DecodeBatch::EMPTY;
        let mut short = 0;
        for &slot in running {
            let seq = self.get(slot);
            if !seq.is_decoding() {
                return None;
            }
            short += batch.add(seq, block_size, caching);
        }
        batch.within(short, pool)
    }

    /// A pure decode pass of `running` (all decoding, with the blocks their
    /// tokens need), from `start` to `end`, reported to `sink`: the same
    /// allocations, registrations, tokens, completions and KV levels, in the
    /// same order, as a core's `schedule` and `finish` would make. Returns
    /// the next pass's batch if it is a pure decode pass too.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_pass(
        &mut self,
        running: &mut Vec<u32>,
        pool: &mut K,
        stats: &mut EngineStats,
        block_size: u32,
        caching: DecodeCaching,
        (start, end): (SimTime, SimTime),
        sink: &mut dyn DecodeSink,
    ) -> Option<DecodeBatch> {
        let bs = block_size;
        for &slot in running.iter() {
            let seq = self.get_mut(slot);
            // `grow` and `register_full` without their divisions: one more token
            // needs a block only past the last one, and fills a block only at
            // its end.
            let target = seq.computed + 1;
            let held = seq.held();
            if target > held * bs {
                let ok = pool.allocate(&mut seq.hold, 1);
                assert!(ok, "steady_decode checked the blocks");
            }
            let held = seq.held();
            if caching == DecodeCaching::AsBlocksFill
                && (target == held * bs || K::registered(&seq.hold) + 1 < held)
            {
                seq.register_full(pool, target, bs);
            }
        }
        let kv_during = pool.in_use_blocks();
        let mut any_finished = false;
        let mut next = DecodeBatch::EMPTY;
        let mut new_blocks = 0u64;
        for &slot in running.iter() {
            let seq = self.get_mut(slot);
            seq.computed += 1;
            seq.emit_token();
            sink.token(seq.id, end);
            if seq.emitted_all() {
                seq.complete(pool, stats, caching, bs);
                any_finished = true;
                sink.completed(seq.id, end);
            } else {
                new_blocks += next.add(seq, bs, caching);
            }
        }
        if any_finished {
            self.drop_finished(running);
        }
        sink.pass(start, end, kv_during, pool.in_use_blocks());
        next.within(new_blocks, pool)
    }

    /// Quiet passes (see `DecodeBatch::quiet`) for every request of `running`:
    /// each emits `passes` tokens. Their ids go into `ids`, in running order.
    pub fn advance_quiet(&mut self, running: &[u32], passes: u32, ids: &mut Vec<RequestId>) {
        ids.clear();
        for &slot in running {
            let seq = self.get_mut(slot);
            seq.computed += passes;
            seq.generated += passes;
            ids.push(seq.id);
        }
    }

    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> &mut Seq<K> {
        &mut self.seqs[slot as usize]
    }
}

/// Books an admission in the counters.
pub(crate) fn count_admission<K: PageStore>(
    stats: &mut EngineStats,
    seq: &Seq<K>,
    reused_tokens: u32,
) {
    let tokens = seq.total() as u64;
    stats.admissions += 1;
    stats.prompt_tokens_all += tokens;
    stats.reused_tokens_all += reused_tokens as u64;
    if !seq.admitted_before {
        stats.prompt_tokens_first += tokens;
        stats.reused_tokens_first += reused_tokens as u64;
    }
}

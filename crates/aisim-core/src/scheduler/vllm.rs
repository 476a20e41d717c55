//! The vLLM v1 scheduler core (also TensorRT-LLM's, with a capacity policy).
//!
//! Per pass: a token budget of `max_num_batched_tokens`; running requests first,
//! in running order, each taking what it needs (1 token decoding, the rest of its
//! prompt capped by the budget while prefilling); blocks that cannot be found are
//! freed by preempting a running request (recompute); then, only if nothing was
//! preempted, waiting requests are admitted FIFO. Waiting requests never preempt.

use std::collections::VecDeque;

use super::seq::{count_admission, Admissibility, DecodeBatch, DecodeCaching, SeqTable};
use super::{Handoff, RankPlan, SchedulerCore};
use crate::config::{CapacityPolicy, EngineConfig, PreemptionMode};
use crate::kv::{KvBlockPool, KvCache, PageStore};
use crate::outcome::{DecodeSink, EngineEvent, EngineStats, RankLoad, RejectReason};
use crate::request::{Request, RequestId};
use crate::time::SimTime;
use crate::timing::PrefillChunk;

/// vLLM-style core.
#[derive(Debug)]
pub(crate) struct VllmCore {
    block_size: u32,
    max_num_seqs: u32,
    max_num_batched_tokens: u32,
    chunked_prefill: bool,
    prefix_caching: bool,
    /// When decoded blocks enter the prefix cache.
    decode_caching: DecodeCaching,
    preemption: PreemptionMode,
    /// `Some` for TensorRT-LLM semantics.
    capacity: Option<CapacityPolicy>,
    admissibility: Admissibility,
    pool: KvBlockPool,
    seqs: SeqTable<KvBlockPool>,
    waiting: VecDeque<u32>,
    running: Vec<u32>,
    scheduled: Vec<u32>,
    /// Completed prefill jobs holding their blocks (few: one per transfer
    /// under way).
    held: Vec<u32>,
    events: Vec<EngineEvent>,
    stats: EngineStats,
}

impl VllmCore {
    pub fn new(cfg: &EngineConfig, capacity: Option<CapacityPolicy>) -> VllmCore {
        let block_size = cfg.effective_block_size();
        VllmCore {
            block_size,
            max_num_seqs: cfg.max_num_seqs,
            max_num_batched_tokens: cfg.max_num_batched_tokens,
            chunked_prefill: cfg.enable_chunked_prefill,
            prefix_caching: cfg.enable_prefix_caching,
            decode_caching: DecodeCaching::new(
                cfg.enable_prefix_caching,
                DecodeCaching::AsBlocksFill,
            ),
            preemption: cfg.preemption,
            capacity,
            admissibility: Admissibility {
                block_size,
                num_gpu_blocks: cfg.gpu_blocks(),
                max_model_len: cfg.max_model_len,
                whole_prompt_budget: (!cfg.enable_chunked_prefill)
                    .then_some(cfg.max_num_batched_tokens),
                below_pool: false,
            },
            pool: KvBlockPool::for_one_of(cfg.gpu_blocks(), cfg.dp_size),
            seqs: SeqTable::default(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            scheduled: Vec::new(),
            held: Vec::new(),
            events: Vec::new(),
            stats: EngineStats::default(),
        }
    }

    fn never_evicts(&self) -> bool {
        self.capacity == Some(CapacityPolicy::GuaranteedNoEvict)
    }

    /// Step 1: running requests, preempting when blocks run out. Returns the budget
    /// left and whether anything was preempted.
    fn schedule_running(&mut self, mut budget: u32) -> (u32, bool) {
        let bs = self.block_size;
        let mut preempted = false;
        let mut i = 0;
        while i < self.running.len() && budget > 0 {
            let slot = self.running[i];
            let seq = self.seqs.get(slot);
            let need = seq.total() - seq.computed;
            // A recompute longer than the budget is chunked even without chunked
            // prefill: otherwise it could never run again.
            let n = need.min(budget);
            let target = seq.computed + n;
            loop {
                let seq = self.seqs.get_mut(slot);
                if seq.grow(&mut self.pool, target, bs) {
                    if self.prefix_caching {
                        seq.register_full(&mut self.pool, target, bs);
                    }
                    seq.scheduled = n;
                    budget -= n;
                    self.scheduled.push(slot);
                    i += 1;
                    break;
                }
                // vLLM v1 preempts the most recently admitted request (lifo) or,
                // by policy, the oldest; the victim recomputes from scratch.
                let pos = match self.preemption {
                    PreemptionMode::Lifo => self.running.len() - 1,
                    PreemptionMode::Fifo => 0,
                };
                let victim = self.running.remove(pos);
                budget += self.unschedule(victim);
                self.preempt(victim);
                preempted = true;
                if victim == slot {
                    break;
                }
                if pos < i {
                    i -= 1;
                }
            }
        }
        (budget, preempted)
    }

    /// Takes a request scheduled earlier in this pass back out; returns its tokens.
    fn unschedule(&mut self, slot: u32) -> u32 {
        let seq = self.seqs.get_mut(slot);
        let n = seq.scheduled;
        if n > 0 {
            seq.scheduled = 0;
            self.scheduled.retain(|&s| s != slot);
        }
        n
    }

    fn preempt(&mut self, slot: u32) {
        let seq = self.seqs.get_mut(slot);
        seq.release_all(&mut self.pool);
        self.events.push(EngineEvent::Preempted { id: seq.id });
        self.stats.preemptions += 1;
        self.waiting.push_front(slot);
    }

    /// Blocks the running requests may still claim (TensorRT-LLM's reservation).
    fn reserved_future_blocks(&self) -> u64 {
        self.running
            .iter()
            .map(|&s| {
                let q = self.seqs.get(s);
                q.blocks_short(q.input + q.output, self.block_size) as u64
            })
            .sum()
    }

    /// Step 2: FIFO admission while seats, budget and blocks last.
    fn admit_waiting(&mut self, mut budget: u32) {
        let bs = self.block_size;
        let never_evicts = self.never_evicts();
        let mut reserved = if never_evicts {
            self.reserved_future_blocks()
        } else {
            0
        };
        while let Some(&slot) = self.waiting.front() {
            if self.running.len() as u32 >= self.max_num_seqs || budget == 0 {
                break;
            }
            let seq = self.seqs.get(slot);
            let hit = if self.prefix_caching {
                seq.prefix_match(&self.pool, bs)
            } else {
                Default::default()
            };
            let cached_tokens = hit.blocks * bs;
            // Tokens whose KV is there at admission, and tokens to compute.
            let (present, n) = if seq.transferred {
                // Transferred in, but for the prompt's last token, which the
                // first decode pass computes (vLLM's KV connector does so).
                (seq.total() - 1, 1)
            } else {
                let need = seq.total() - cached_tokens;
                let n = if self.chunked_prefill || need > self.max_num_batched_tokens {
                    need.min(budget)
                } else if need <= budget {
                    need
                } else {
                    break; // waits until a pass can hold the whole prompt
                };
                (cached_tokens, n)
            };
            let available = self.pool.available_blocks() as u64;
            let new_blocks = (present + n).div_ceil(bs) - hit.blocks;
            let claim = if never_evicts {
                // Whole prompt plus maximum output, reserved at once.
                (seq.input + seq.output).div_ceil(bs) - hit.blocks
            } else {
                new_blocks
            } as u64;
            if claim + hit.evictable as u64 + reserved > available {
                break; // stops admission for this pass
            }
            self.waiting.pop_front();
            let seq = self.seqs.get_mut(slot);
            seq.take_prefix(&mut self.pool, hit.blocks, bs);
            seq.computed = present;
            let target = present + n;
            let grown = seq.grow(&mut self.pool, target, bs);
            debug_assert!(grown);
            if self.prefix_caching {
                seq.register_full(&mut self.pool, target, bs);
            }
            seq.scheduled = n;
            if never_evicts {
                reserved += claim - new_blocks as u64;
            }
            count_admission(&mut self.stats, seq, cached_tokens);
            self.events.push(EngineEvent::Admitted {
                id: seq.id,
                reused_tokens: cached_tokens,
                readmission: seq.admitted_before,
            });
            seq.admitted_before = true;
            budget -= n;
            self.running.push(slot);
            self.scheduled.push(slot);
        }
    }
}

impl SchedulerCore for VllmCore {
    fn enqueue(&mut self, req: &Request) -> Result<(), RejectReason> {
        self.admissibility.check(req)?;
        let slot = self.seqs.insert(req, self.block_size, self.prefix_caching);
        self.waiting.push_back(slot);
        Ok(())
    }

    fn enqueue_handoff(&mut self, req: &Request, how: Handoff) -> Result<(), RejectReason> {
        let slot = match how {
            Handoff::PrefillJob => {
                // The job: the prompt and one hidden token.
                self.admissibility.check_lengths(req.input_length, 1)?;
                let slot = self.seqs.insert(req, self.block_size, self.prefix_caching);
                let seq = self.seqs.get_mut(slot);
                seq.output = 1;
                seq.keeps_blocks = true;
                slot
            }
            Handoff::Transferred => {
                self.admissibility.check(req)?;
                let slot = self.seqs.insert(req, self.block_size, self.prefix_caching);
                self.seqs.get_mut(slot).transferred = true;
                slot
            }
        };
        self.waiting.push_back(slot);
        Ok(())
    }

    fn requests(&self) -> u32 {
        (self.running.len() + self.waiting.len()) as u32
    }

    fn release_held(&mut self, id: RequestId) -> bool {
        let Some(pos) = self.held.iter().position(|&s| self.seqs.get(s).id == id) else {
            return false;
        };
        let slot = self.held.swap_remove(pos);
        self.seqs.get_mut(slot).release_all(&mut self.pool);
        self.seqs.remove(slot);
        true
    }

    fn has_work(&self) -> bool {
        !self.running.is_empty() || !self.waiting.is_empty()
    }

    fn schedule(&mut self, plan: &mut RankPlan) {
        self.scheduled.clear();
        let (budget, preempted) = self.schedule_running(self.max_num_batched_tokens);
        if !preempted {
            self.admit_waiting(budget);
        }
        for &slot in &self.scheduled {
            let seq = self.seqs.get(slot);
            if seq.scheduled == 1 && seq.is_decoding() {
                plan.decode_requests += 1;
                plan.decode_context_tokens += seq.total() as u64;
            } else {
                plan.prefill.push(PrefillChunk {
                    context_before: seq.computed,
                    tokens: seq.scheduled,
                });
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
        let mut any_finished = false;
        for &slot in &self.scheduled {
            let seq = self.seqs.get_mut(slot);
            seq.computed += seq.scheduled;
            seq.scheduled = 0;
            if seq.computed < seq.total() {
                continue; // a prefill chunk: nothing visible yet
            }
            if let Some(first) = seq.emit_token() {
                out.push(EngineEvent::Token { id: seq.id, first });
            }
            if seq.emitted_all() {
                if seq.keeps_blocks {
                    seq.complete_holding(&mut self.stats);
                    self.held.push(slot);
                } else {
                    seq.complete(
                        &mut self.pool,
                        &mut self.stats,
                        self.decode_caching,
                        self.block_size,
                    );
                }
                any_finished = true;
                out.push(EngineEvent::Completed { id: seq.id });
            }
        }
        self.scheduled.clear();
        if any_finished {
            self.seqs.drop_finished(&mut self.running);
        }
    }

    fn load(&self) -> RankLoad {
        let pending: u64 = self
            .running
            .iter()
            .chain(self.waiting.iter())
            .map(|&s| self.seqs.get(s).remaining_prefill() as u64)
            .sum();
        RankLoad {
            running: self.running.len() as u32,
            waiting: self.waiting.len() as u32,
            active_kv_blocks: self.pool.in_use_blocks(),
            pending_prefill_tokens: pending,
        }
    }

    fn pool(&self) -> &dyn KvCache {
        &self.pool
    }

    fn pool_mut(&mut self) -> &mut dyn KvCache {
        &mut self.pool
    }

    fn stats(&self) -> EngineStats {
        self.stats
    }

    fn cached_prefix_tokens(&self, req: &Request) -> u32 {
        cached_prefix(&self.pool, req, self.block_size, self.prefix_caching)
    }

    /// A pure decode pass happens when nothing waits, every running request is
    /// decoding, the budget covers one token each and the pool has the blocks
    /// the crossing of a block boundary needs (else `schedule` would preempt).
    fn steady_decode(&self) -> Option<DecodeBatch> {
        if !self.waiting.is_empty()
            || self.running.is_empty()
            || self.running.len() > self.max_num_batched_tokens as usize
        {
            return None;
        }
        self.seqs.decode_batch(
            &self.running,
            &self.pool,
            self.block_size,
            self.decode_caching,
        )
    }

    /// `schedule_running` + `finish` for a pure decode pass: the same block
    /// allocations and registrations in the same order, the same tokens and
    /// completions, without the plan and event lists. Returns the next pass's
    /// batch as `steady_decode` would (the pass cannot make anything wait or
    /// stop decoding, so only blocks can run short).
    fn run_decode_pass(
        &mut self,
        start: SimTime,
        end: SimTime,
        sink: &mut dyn DecodeSink,
    ) -> Option<DecodeBatch> {
        self.seqs.decode_pass(
            &mut self.running,
            &mut self.pool,
            &mut self.stats,
            self.block_size,
            self.decode_caching,
            (start, end),
            sink,
        )
    }

    fn advance_quiet(&mut self, passes: u32, ids: &mut Vec<RequestId>) {
        self.seqs.advance_quiet(&self.running, passes, ids);
    }

    fn abort(&mut self, id: RequestId) -> bool {
        if self.release_held(id) {
            return true;
        }
        if let Some(pos) = self.waiting.iter().position(|&s| self.seqs.get(s).id == id) {
            let slot = self.waiting.remove(pos).expect("position is valid");
            self.seqs.get_mut(slot).release_all(&mut self.pool);
            self.seqs.remove(slot);
            return true;
        }
        if let Some(pos) = self.running.iter().position(|&s| self.seqs.get(s).id == id) {
            let slot = self.running.remove(pos);
            self.unschedule(slot);
            self.seqs.get_mut(slot).release_all(&mut self.pool);
            self.seqs.remove(slot);
            return true;
        }
        false
    }
}

/// Prompt tokens of `req` a pool would serve from cache right now.
pub(crate) fn cached_prefix<K: PageStore>(
    pool: &K,
    req: &Request,
    block_size: u32,
    prefix_caching: bool,
) -> u32 {
    if !prefix_caching || req.input_length == 0 {
        return 0;
    }
    let mut pages = K::Pages::default();
    K::identify(&mut pages, req, block_size, true);
    let max_blocks = (req.input_length - 1) / block_size;
    pool.longest_prefix_of(&pages, max_blocks).blocks * block_size
}

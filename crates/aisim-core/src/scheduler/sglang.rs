//! The SGLang scheduler core.
//!
//! Each pass is a prefill ("extend") pass or a decode pass, never both. A prefill
//! batch is formed whenever waiting requests can be admitted (ordered `fcfs` or
//! `lpm`), within `max_prefill_tokens`, `max_num_seqs` and a KV reservation of
//! `new_token_ratio × remaining output` for every running and new request; a
//! prompt longer than the chunk budget is chunked across passes. Otherwise all
//! running requests decode; when one more token each does not fit, requests are
//! retracted, fewest generated tokens first, and `new_token_ratio` is raised.

use std::collections::VecDeque;

use super::seq::{count_admission, Admissibility, DecodeBatch, DecodeCaching, Seq, SeqTable};
use super::vllm::cached_prefix;
use super::{RankPlan, SchedulerCore};
use crate::config::{EngineConfig, SchedulePolicy};
use crate::kv::{KvCache, RadixCache};
use crate::outcome::{DecodeSink, EngineEvent, EngineStats, RankLoad, RejectReason};
use crate::request::{Request, RequestId};
use crate::time::SimTime;
use crate::timing::PrefillChunk;

/// SGLang falls back from `lpm` to `fcfs` past this many waiting requests.
const LPM_MAX_WAITING: usize = 128;
/// Decode steps SGLang assumes every running request still takes after a retraction.
const RETRACT_DECODE_STEPS: f64 = 20.0;
/// `new_token_ratio` decays to this fraction of its start ...
const MIN_RATIO_FRACTION: f64 = 0.14;
/// ... over this many decode passes.
const RATIO_DECAY_PASSES: f64 = 600.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PassKind {
    Prefill,
    Decode,
}

/// SGLang-style core.
#[derive(Debug)]
pub(crate) struct SglangCore {
    block_size: u32,
    max_num_seqs: u32,
    max_prefill_tokens: u32,
    chunked_prefill_size: u32,
    prefix_caching: bool,
    /// When decoded blocks enter the prefix cache.
    decode_caching: DecodeCaching,
    policy: SchedulePolicy,
    admissibility: Admissibility,
    pool: RadixCache,
    seqs: SeqTable<RadixCache>,
    waiting: VecDeque<u32>,
    /// Decoding requests.
    running: Vec<u32>,
    /// The request whose prompt is being computed chunk by chunk.
    chunked: Option<u32>,
    batch: Vec<u32>,
    kind: PassKind,
    candidates: Vec<(u32, u32, usize)>,
    events: Vec<EngineEvent>,
    stats: EngineStats,
    new_token_ratio: f64,
    min_ratio: f64,
    ratio_decay: f64,
}

impl SglangCore {
    pub fn new(cfg: &EngineConfig) -> SglangCore {
        let block_size = cfg.effective_block_size();
        let init_ratio = (0.7 * cfg.schedule_conservativeness).min(1.0);
        let min_ratio = init_ratio * MIN_RATIO_FRACTION;
        SglangCore {
            block_size,
            max_num_seqs: cfg.max_num_seqs,
            max_prefill_tokens: cfg.max_prefill_tokens,
            chunked_prefill_size: if cfg.enable_chunked_prefill {
                cfg.chunked_prefill_size
            } else {
                u32::MAX
            },
            prefix_caching: cfg.enable_prefix_caching,
            decode_caching: DecodeCaching::new(
                cfg.enable_prefix_caching,
                DecodeCaching::AtCompletion,
            ),
            policy: cfg.schedule_policy,
            admissibility: Admissibility {
                block_size,
                num_gpu_blocks: cfg.gpu_blocks(),
                max_model_len: cfg.max_model_len,
                whole_prompt_budget: (!cfg.enable_chunked_prefill)
                    .then_some(cfg.max_prefill_tokens),
                below_pool: true,
            },
            pool: RadixCache::new(cfg.gpu_blocks()),
            seqs: SeqTable::default(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            chunked: None,
            batch: Vec::new(),
            kind: PassKind::Decode,
            candidates: Vec::new(),
            events: Vec::new(),
            stats: EngineStats::default(),
            new_token_ratio: init_ratio,
            min_ratio,
            ratio_decay: (init_ratio - min_ratio) / RATIO_DECAY_PASSES,
        }
    }

    /// What SGLang's `PrefillAdder` holds back for a running request's future
    /// tokens: its remaining output, clipped, times `new_token_ratio`.
    fn running_reservation(&self, slot: u32) -> f64 {
        clipped_remaining_output(self.seqs.get(slot)) as f64 * self.new_token_ratio
    }

    /// Tries to form a prefill batch; leaves `batch` empty when nothing fits.
    /// SGLang's `get_new_batch_prefill` with `PrefillAdder.add_chunked_req` and
    /// `add_one_req` (`python/sglang/srt/managers/schedule_policy.py`): the
    /// budgets are signed, a request is refused when its need reaches (not only
    /// passes) what is left, and a batch stops at the first refusal.
    fn schedule_prefill(&mut self) {
        let bs = self.block_size;
        let page = |tokens: u32| tokens.div_ceil(bs) as i64 * bs as i64;
        let mut rem_input = self.max_prefill_tokens as i64;
        let mut rem_chunk = self.chunked_prefill_size as i64;
        let reserved: f64 = self
            .running
            .iter()
            .map(|&s| self.running_reservation(s))
            .sum();
        let mut rem_total = (self.pool.available_pages() as u64 * bs as u64) as f64 - reserved;
        let mut seats = (self.max_num_seqs as usize).saturating_sub(self.running.len());

        if let Some(slot) = self.chunked {
            // `add_chunked_req`: the next chunk within the chunk and total budgets;
            // the last chunk also reserves the output.
            let seq = self.seqs.get_mut(slot);
            let left = seq.total() - seq.computed;
            let room = rem_chunk.min(rem_total.floor() as i64).max(0);
            let n = (left as i64).min(room) as u32;
            let target = seq.computed + n;
            if n == 0 || !seq.grow(&mut self.pool, target, bs) {
                return; // no room for its next chunk: nothing else starts either
            }
            if self.prefix_caching {
                seq.register_full(&mut self.pool, target, bs);
            }
            seq.scheduled = n;
            self.batch.push(slot);
            let last = n == left;
            rem_total -= (page(n) + if last { admission_output(seq) } else { 0 }) as f64;
            rem_input -= page(n);
            rem_chunk -= page(n);
            seats = seats.saturating_sub(1);
            if !last {
                return; // still chunking: nothing else joins this batch
            }
        }

        // Candidate order: queue position, or longest cached prefix first (lpm).
        // Only lpm needs every waiting request's match up front; the loop below
        // matches each candidate it reaches anyway.
        self.candidates.clear();
        let lpm = self.prefix_caching
            && self.policy == SchedulePolicy::Lpm
            && self.waiting.len() <= LPM_MAX_WAITING;
        for (pos, &slot) in self.waiting.iter().enumerate() {
            let blocks = if lpm {
                self.seqs.get(slot).prefix_match(&self.pool, bs).blocks
            } else {
                0
            };
            self.candidates.push((slot, blocks, pos));
        }
        if lpm {
            self.candidates
                .sort_by_key(|&(_, blocks, pos)| (std::cmp::Reverse(blocks), pos));
        }

        let mut taken = 0usize;
        for ci in 0..self.candidates.len() {
            // `budget_state`: out of seats, tokens, prompt or chunk budget.
            if seats == 0 || rem_total <= 0.0 || rem_input <= 0 || rem_chunk <= 0 {
                break;
            }
            let slot = self.candidates[ci].0;
            // Re-match: an earlier admission in this batch may have cached blocks.
            let hit = if self.prefix_caching {
                self.seqs.get(slot).prefix_match(&self.pool, bs)
            } else {
                Default::default()
            };
            let seq = self.seqs.get(slot);
            let cached_tokens = hit.blocks * bs;
            let new_tokens = seq.total() - cached_tokens;
            // `add_one_req`: the whole extension plus the clipped remaining
            // output must stay under what is left, before and after locking the
            // prefix (which takes its evictable pages out of what is left).
            let total_tokens = (new_tokens + clipped_remaining_output(seq)) as f64;
            let locked = (hit.evictable as u64 * bs as u64) as f64;
            if total_tokens >= rem_total - locked {
                break;
            }
            let input_tokens = page(new_tokens);
            if input_tokens >= rem_input && !self.batch.is_empty() {
                break;
            }
            // Whole when it fits the chunk budget, else the chunk budget's whole pages.
            let n = if input_tokens <= rem_chunk {
                new_tokens
            } else {
                let trunc = rem_chunk / bs as i64 * bs as i64;
                if trunc <= 0 {
                    break;
                }
                trunc as u32
            };
            let output = if n == new_tokens {
                admission_output(seq)
            } else {
                0
            };
            let seq = self.seqs.get_mut(slot);
            seq.take_prefix(&mut self.pool, hit.blocks, bs);
            let target = cached_tokens + n;
            if !seq.grow(&mut self.pool, target, bs) {
                // Rounding of pages against the token reservation: give the prefix back.
                seq.release_all(&mut self.pool);
                break;
            }
            if self.prefix_caching {
                seq.register_full(&mut self.pool, target, bs);
            }
            seq.scheduled = n;
            count_admission(&mut self.stats, seq, cached_tokens);
            self.events.push(EngineEvent::Admitted {
                id: seq.id,
                reused_tokens: cached_tokens,
                readmission: seq.admitted_before,
            });
            seq.admitted_before = true;
            self.batch.push(slot);
            taken += 1;
            rem_total -= locked + (page(n) + output) as f64;
            rem_input -= page(n);
            rem_chunk -= page(n);
            seats -= 1;
            if n < new_tokens {
                self.chunked = Some(slot);
                break;
            }
        }
        if taken > 0 {
            // Remove the admitted requests from the queue, keeping the others' order.
            let batch = &self.batch;
            self.waiting.retain(|s| !batch.contains(s));
        }
    }

    /// Decode pass over every running request, retracting when a token each
    /// does not fit. SGLang's `ScheduleBatch.retract_decode`
    /// (`python/sglang/srt/managers/schedule_batch.py`): the victim is the
    /// request with the fewest output tokens, then the longest prompt, then
    /// the latest in the running batch. SGLang never retracts the last one;
    /// aisim does only when a chunk in progress holds the blocks it needs
    /// (SGLang would fail there), so that one can finish. Victims go to the back of the waiting queue, in retraction order
    /// (`Scheduler._add_request_to_queue`, `scheduler.py`).
    fn schedule_decode(&mut self) {
        let bs = self.block_size;
        let mut short: u64 = self
            .running
            .iter()
            .map(|&s| self.seqs.get(s).blocks_short(self.seqs.get(s).total(), bs) as u64)
            .sum();
        let mut retracted = false;
        while short > self.pool.available_pages() as u64 && !self.running.is_empty() {
            let pos = retraction_victim(&self.running, &self.seqs);
            let victim = self.running.remove(pos);
            let seq = self.seqs.get_mut(victim);
            short -= seq.blocks_short(seq.total(), bs) as u64;
            // What its last prefill cached stays in the radix cache; its
            // decoded tokens since were never inserted and are freed.
            seq.release_all(&mut self.pool);
            self.events.push(EngineEvent::Preempted { id: seq.id });
            self.stats.preemptions += 1;
            self.waiting.push_back(victim);
            retracted = true;
        }
        if retracted {
            let decoded: u64 = self
                .running
                .iter()
                .map(|&s| self.seqs.get(s).generated as u64)
                .sum();
            let max_new: u64 = self
                .running
                .iter()
                .map(|&s| self.seqs.get(s).output as u64)
                .sum();
            let n = self.running.len() as f64;
            self.new_token_ratio =
                ((decoded as f64 + RETRACT_DECODE_STEPS * n) / (max_new as f64 + 1.0)).min(1.0);
        } else {
            self.decay_ratio();
        }
        for &slot in &self.running {
            // Decoded tokens enter the radix cache when the request finishes.
            let seq = self.seqs.get_mut(slot);
            let target = seq.total();
            let ok = seq.grow(&mut self.pool, target, bs);
            debug_assert!(ok, "retraction left room for one token each");
            seq.scheduled = 1;
            self.batch.push(slot);
        }
    }

    /// A decode pass without retraction lowers `new_token_ratio` a step.
    fn decay_ratio(&mut self) {
        self.new_token_ratio = (self.new_token_ratio - self.ratio_decay).max(self.min_ratio);
    }

    fn complete(&mut self, slot: u32, out: &mut Vec<EngineEvent>) {
        let seq = self.seqs.get_mut(slot);
        seq.complete(
            &mut self.pool,
            &mut self.stats,
            self.decode_caching,
            self.block_size,
        );
        out.push(EngineEvent::Completed { id: seq.id });
    }
}

/// SGLang's `CLIP_MAX_NEW_TOKENS` (`schedule_policy.py`): admission never
/// plans for more future tokens of one request than this.
const CLIP_MAX_NEW_TOKENS: u32 = 4096;

/// A request's output still to come, clipped at `CLIP_MAX_NEW_TOKENS`.
fn clipped_remaining_output(s: &Seq<RadixCache>) -> u32 {
    (s.output - s.generated.min(s.output)).min(CLIP_MAX_NEW_TOKENS)
}

/// What an admission whose prompt completes this pass charges for its output:
/// `min(max_new_tokens, CLIP_MAX_NEW_TOKENS)` (`PrefillAdder._update_prefill_budget`'s
/// argument in `add_one_req` and `add_chunked_req`), whatever it already generated.
fn admission_output(s: &Seq<RadixCache>) -> i64 {
    s.output.min(CLIP_MAX_NEW_TOKENS) as i64
}

/// Index in `running` of the request `retract_decode` retracts first: fewest
/// generated tokens, then longest prompt, then latest in the running batch
/// (SGLang's stable sort by `(len(output_ids), -len(origin_input_ids))`,
/// reversed, popped from the end).
fn retraction_victim(running: &[u32], seqs: &SeqTable<RadixCache>) -> usize {
    let mut best = 0;
    for (pos, &s) in running.iter().enumerate() {
        let (q, b) = (seqs.get(s), seqs.get(running[best]));
        if (q.generated, std::cmp::Reverse(q.input)) <= (b.generated, std::cmp::Reverse(b.input)) {
            best = pos;
        }
    }
    best
}

impl SchedulerCore for SglangCore {
    fn enqueue(&mut self, req: &Request) -> Result<(), RejectReason> {
        self.admissibility.check(req)?;
        let slot = self.seqs.insert(req, self.block_size, self.prefix_caching);
        self.waiting.push_back(slot);
        Ok(())
    }

    fn has_work(&self) -> bool {
        !self.running.is_empty() || !self.waiting.is_empty() || self.chunked.is_some()
    }

    fn schedule(&mut self, plan: &mut RankPlan) {
        self.batch.clear();
        if self.chunked.is_some() || !self.waiting.is_empty() {
            self.schedule_prefill();
        }
        if !self.batch.is_empty() {
            self.kind = PassKind::Prefill;
            for &slot in &self.batch {
                let s = self.seqs.get(slot);
                plan.prefill.push(PrefillChunk {
                    context_before: s.computed,
                    tokens: s.scheduled,
                });
            }
            return;
        }
        if self.running.is_empty() {
            return;
        }
        self.kind = PassKind::Decode;
        self.schedule_decode();
        for &slot in &self.batch {
            plan.decode_requests += 1;
            plan.decode_context_tokens += self.seqs.get(slot).total() as u64;
        }
    }

    fn finish(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
        let batch = std::mem::take(&mut self.batch);
        let mut any_finished = false;
        for &slot in &batch {
            let seq = self.seqs.get_mut(slot);
            seq.computed += seq.scheduled;
            seq.scheduled = 0;
            if seq.computed < seq.total() {
                continue; // chunk of a long prompt
            }
            if self.kind == PassKind::Prefill && self.chunked == Some(slot) {
                self.chunked = None;
            }
            if let Some(first) = seq.emit_token() {
                out.push(EngineEvent::Token { id: seq.id, first });
            }
            if seq.emitted_all() {
                self.complete(slot, out);
                any_finished = true;
            } else if self.kind == PassKind::Prefill {
                self.running.push(slot);
            }
        }
        if any_finished {
            // Finished requests left `running` (or never joined it), and
            // their slots are freed in batch order.
            let seqs = &mut self.seqs;
            self.running.retain(|&s| !seqs.get(s).finished);
            for &slot in &batch {
                if seqs.get(slot).finished {
                    seqs.remove(slot);
                }
            }
        }
        self.batch = batch;
        self.batch.clear();
    }

    fn requests(&self) -> u32 {
        (self.running.len() + self.chunked.is_some() as usize + self.waiting.len()) as u32
    }

    fn load(&self) -> RankLoad {
        let pending: u64 = self
            .waiting
            .iter()
            .chain(self.chunked.iter())
            .map(|&s| self.seqs.get(s).remaining_prefill() as u64)
            .sum();
        RankLoad {
            running: self.running.len() as u32 + self.chunked.is_some() as u32,
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

    /// A pure decode pass happens when nothing waits or is being chunked
    /// and the pool has the blocks one more token each needs (else
    /// `schedule_decode` would retract). Running requests always decode.
    fn steady_decode(&self) -> Option<DecodeBatch> {
        if !self.waiting.is_empty() || self.chunked.is_some() || self.running.is_empty() {
            return None;
        }
        self.seqs.decode_batch(
            &self.running,
            &self.pool,
            self.block_size,
            self.decode_caching,
        )
    }

    /// `schedule_decode` without a retraction, then `finish`: the ratio step,
    /// then the pass every core makes the same way.
    fn run_decode_pass(
        &mut self,
        start: SimTime,
        end: SimTime,
        sink: &mut dyn DecodeSink,
    ) -> Option<DecodeBatch> {
        self.decay_ratio();
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
        for _ in 0..passes {
            self.decay_ratio(); // step by step: the same rounding as pass by pass
        }
        self.seqs.advance_quiet(&self.running, passes, ids);
    }

    fn abort(&mut self, id: RequestId) -> bool {
        let slot = if let Some(pos) = self.waiting.iter().position(|&s| self.seqs.get(s).id == id) {
            self.waiting.remove(pos)
        } else if let Some(pos) = self.running.iter().position(|&s| self.seqs.get(s).id == id) {
            Some(self.running.remove(pos))
        } else if self.chunked.is_some_and(|s| self.seqs.get(s).id == id) {
            self.chunked.take()
        } else {
            None
        };
        let Some(slot) = slot else { return false };
        self.batch.retain(|&s| s != slot);
        self.seqs.get_mut(slot).release_all(&mut self.pool);
        self.seqs.remove(slot);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Backend;

    struct Ignore;

    impl DecodeSink for Ignore {
        fn token(&mut self, _: RequestId, _: SimTime) {}
        fn completed(&mut self, _: RequestId, _: SimTime) {}
        fn pass(&mut self, _: SimTime, _: SimTime, _: u32, _: u32) {}
    }

    /// Three requests admitted and decoding, nothing waiting (one-token
    /// pages, the default: every decode pass allocates).
    fn decoding_core() -> SglangCore {
        let cfg = EngineConfig {
            backend: Backend::Sglang,
            num_gpu_blocks: Some(6_400),
            ..Default::default()
        };
        let mut core = SglangCore::new(&cfg);
        for id in 0..3 {
            core.enqueue(&Request::new(id, SimTime::ZERO, 100, 500))
                .unwrap();
        }
        while !core.waiting.is_empty() || core.chunked.is_some() {
            core.schedule(&mut RankPlan::default());
            core.finish(&mut Vec::new());
        }
        core
    }

    #[test]
    fn the_decode_fast_path_steps_the_token_ratio_like_decode_passes() {
        const PASSES: u32 = 300;
        let mut slow = decoding_core();
        let start = slow.new_token_ratio;
        for _ in 0..PASSES {
            slow.schedule(&mut RankPlan::default());
            slow.finish(&mut Vec::new());
        }
        let mut fast = decoding_core();
        let (mut done, mut ids) = (0, Vec::new());
        while done < PASSES {
            let batch = fast.steady_decode().expect("a pure decode pass");
            if batch.quiet > 0 {
                let n = batch.quiet.min(PASSES - done);
                fast.advance_quiet(n, &mut ids);
                done += n;
            } else {
                fast.run_decode_pass(SimTime::ZERO, SimTime::ZERO, &mut Ignore);
                done += 1;
            }
        }
        // 300 steps down from 0.7, still above the floor: a missed step shows.
        assert!(slow.new_token_ratio < start && slow.new_token_ratio > slow.min_ratio);
        assert_eq!(
            slow.new_token_ratio.to_bits(),
            fast.new_token_ratio.to_bits()
        );
        let state = |c: &SglangCore| -> Vec<(u32, u32, u32)> {
            c.running
                .iter()
                .map(|&s| {
                    let q = c.seqs.get(s);
                    (q.computed, q.generated, q.held())
                })
                .collect()
        };
        assert_eq!(state(&slow), state(&fast));
        assert_eq!(state(&fast)[0].1, 1 + PASSES);
    }

    /// One-token pages, no prefix cache: plain token arithmetic.
    fn page1_core(tokens: u32, prompt_budget: u32) -> SglangCore {
        SglangCore::new(&EngineConfig {
            backend: Backend::Sglang,
            block_size: Some(1),
            num_gpu_blocks: Some(tokens),
            enable_prefix_caching: false,
            max_prefill_tokens: prompt_budget,
            chunked_prefill_size: prompt_budget,
            ..Default::default()
        })
    }

    /// One-token pages with the radix cache on, default budgets.
    fn page1_cached_core(tokens: u32) -> SglangCore {
        SglangCore::new(&EngineConfig {
            backend: Backend::Sglang,
            block_size: Some(1),
            num_gpu_blocks: Some(tokens),
            ..Default::default()
        })
    }

    /// Puts a decoding request into `running`: `generated` tokens out, the KV
    /// of all but the last one held.
    fn place_running(core: &mut SglangCore, id: u64, input: u32, output: u32, generated: u32) {
        let slot = core
            .seqs
            .insert(&Request::new(id, SimTime::ZERO, input, output), 1, false);
        let seq = core.seqs.get_mut(slot);
        seq.generated = generated;
        seq.computed = input + generated - 1;
        assert!(seq.grow(&mut core.pool, seq.computed, 1));
        seq.admitted_before = true;
        core.running.push(slot);
    }

    fn prefill_ids(core: &mut SglangCore) -> Vec<u64> {
        let mut plan = RankPlan::default();
        core.schedule(&mut plan);
        if core.kind != PassKind::Prefill {
            return Vec::new();
        }
        core.batch.iter().map(|&s| core.seqs.get(s).id.0).collect()
    }

    /// `PrefillAdder.add_one_req` (`python/sglang/srt/managers/schedule_policy.py`):
    /// a new request needs `extend_input_len + min(max_new_tokens - len(output_ids),
    /// CLIP_MAX_NEW_TOKENS)` strictly below `rem_total_tokens`, which is the free
    /// and evictable KV less `min(remaining, CLIP_MAX_NEW_TOKENS) × new_token_ratio`
    /// for each running request (`PrefillAdder.__init__`). The new request's
    /// output is not scaled by the ratio.
    #[test]
    fn a_new_request_reserves_its_whole_clipped_output() {
        for (input, admitted) in [(12_036, true), (12_037, false)] {
            let mut core = page1_core(20_000, 20_000);
            // Holds 1,000 tokens; reserves 0.7 × min(9,999, 4,096) = 2,867.2.
            place_running(&mut core, 0, 1_000, 10_000, 1);
            assert_eq!(core.new_token_ratio, 0.7);
            // Left: 19,000 - 2,867.2 = 16,132.8; the new request needs
            // input + min(5,000, 4,096), not input + 0.7 × 5,000.
            core.enqueue(&Request::new(1, SimTime::ZERO, input, 5_000))
                .unwrap();
            let want: Vec<u64> = if admitted { vec![1] } else { vec![] };
            assert_eq!(prefill_ids(&mut core), want, "input {input}");
        }
    }

    /// `ScheduleBatch.retract_decode` (`python/sglang/srt/managers/schedule_batch.py`)
    /// sorts by `(len(output_ids), -len(origin_input_ids))`, reversed (stable), and
    /// pops from the end; `Scheduler.update_running_batch` (`scheduler.py`) hands
    /// each victim to `_add_request_to_queue`, which appends it to the waiting queue.
    #[test]
    fn retraction_takes_the_latest_of_the_fewest_outputs_and_longest_prompts_to_the_back() {
        // 34 + 34 + 24 + 34 = 126 tokens held in a 126-token pool: the next
        // decode needs 4 more. Request 3 has the most output; 0 and 1 tie on
        // output and prompt, 2 has a shorter prompt: 1, the latest, goes.
        let mut core = page1_core(126, 1_000);
        place_running(&mut core, 0, 30, 50, 5);
        place_running(&mut core, 1, 30, 50, 5);
        place_running(&mut core, 2, 20, 50, 5);
        place_running(&mut core, 3, 29, 50, 6);
        // Waiting before the retraction, and no room for it.
        core.enqueue(&Request::new(9, SimTime::ZERO, 60, 10))
            .unwrap();
        assert_eq!(prefill_ids(&mut core), Vec::<u64>::new());
        assert_eq!(core.kind, PassKind::Decode);
        let ids = |slots: &[u32], c: &SglangCore| -> Vec<u64> {
            slots.iter().map(|&s| c.seqs.get(s).id.0).collect()
        };
        assert_eq!(ids(&core.running, &core), vec![0, 2, 3]);
        let waiting: Vec<u32> = core.waiting.iter().copied().collect();
        assert_eq!(
            ids(&waiting, &core),
            vec![9, 1],
            "the victim goes to the back"
        );
        assert_eq!(core.stats.preemptions, 1);
        core.pool.check_invariants().unwrap();
    }

    /// SGLang's `max_req_len` is `max_total_num_tokens - 1`: a request that
    /// would fill the pool could never pass `add_one_req`'s strict test, so it
    /// is rejected at enqueue instead of waiting forever.
    #[test]
    fn a_request_that_would_fill_the_pool_is_rejected() {
        let mut core = page1_core(100, 1_000);
        assert_eq!(
            core.enqueue(&Request::new(0, SimTime::ZERO, 60, 40)),
            Err(RejectReason::FillsSglangPool {
                tokens: 100,
                capacity_tokens: 100
            })
        );
        assert_eq!(
            core.enqueue(&Request::new(1, SimTime::ZERO, 60, 39)),
            Ok(())
        );
        assert_eq!(prefill_ids(&mut core), vec![1]);
    }

    /// `RadixCache.cache_finished_req` (`python/sglang/srt/mem_cache/radix_cache.py`)
    /// inserts `(origin_input_ids + output_ids)[:-1]`: the prompt and every
    /// output token but the last, which was sampled and never fed.
    #[test]
    fn a_finished_request_caches_its_prompt_and_all_but_its_last_output_token() {
        let mut core = page1_cached_core(1_000);
        let req = Request::new(0, SimTime::ZERO, 32, 5).with_hash_ids(vec![7, 8], 16);
        core.enqueue(&req).unwrap();
        let mut passes = 0;
        while core.has_work() {
            core.schedule(&mut RankPlan::default());
            core.finish(&mut Vec::new());
            passes += 1;
            if passes == 3 {
                // Decoding: only the prompt is in the cache's index so far.
                assert_eq!(core.pool.in_use_blocks(), 34);
            }
        }
        assert_eq!(core.stats.completed, 1);
        assert_eq!(core.pool.in_use_blocks(), 0);
        assert_eq!(core.pool.cached_blocks(), 32 + 4);
        core.pool.check_invariants().unwrap();
    }

    /// `RadixCache.cache_unfinished_req` (`python/sglang/srt/mem_cache/radix_cache.py`)
    /// inserts a prefilled request's tokens; those the tree already holds are
    /// freed from the request (`kv_indices[len(prefix_indices):new_prefix_len]`)
    /// and it re-matches, locking the tree's copy. A fully cached prompt
    /// recomputes its last token (the match leaves one), which is such a copy.
    #[test]
    fn a_recomputed_token_the_cache_holds_is_shared_not_kept_twice() {
        let mut core = page1_cached_core(1_000);
        let prompt = |id| Request::new(id, SimTime::ZERO, 32, 5).with_hash_ids(vec![7, 8], 16);
        core.enqueue(&prompt(0)).unwrap();
        while core.has_work() {
            core.schedule(&mut RankPlan::default());
            core.finish(&mut Vec::new());
        }
        // Its prompt and 4 of its output tokens are cached.
        assert_eq!(core.pool.cached_blocks(), 36);
        core.enqueue(&prompt(1)).unwrap();
        core.schedule(&mut RankPlan::default());
        let mut out = Vec::new();
        core.finish(&mut out);
        assert!(out.contains(&EngineEvent::Admitted {
            id: RequestId(1),
            reused_tokens: 31,
            readmission: false,
        }));
        // It holds the 32 cached prompt tokens (its own copy of the 32nd was
        // freed); the other 4 cached tokens stay cached; nothing else is held.
        assert_eq!(core.pool.in_use_blocks(), 32);
        assert_eq!(core.pool.cached_blocks(), 4);
        assert_eq!(core.pool.free_blocks(), 1_000 - 36);
        core.pool.check_invariants().unwrap();
    }

    /// `ScheduleBatch.release_req` (`schedule_batch.py`) frees a retracted
    /// request's KV past its cached prefix without inserting it: what its
    /// prefill inserted (`cache_unfinished_req`) stays, its decoded tokens go.
    #[test]
    fn a_retracted_request_keeps_its_prefilled_tokens_cached_and_frees_its_decoded_ones() {
        let mut core = page1_cached_core(100);
        for id in 0..2u64 {
            let req = Request::new(id, SimTime::ZERO, 32, 30)
                .with_hash_ids(vec![10 * id + 1, 10 * id + 2], 16);
            core.enqueue(&req).unwrap();
        }
        // One prefill pass each (32 + 30 < 100, then < 68 with the ratio at 0),
        // then both decode until the pool is full.
        let mut preempted = Vec::new();
        while preempted.is_empty() {
            core.new_token_ratio = 0.0;
            core.schedule(&mut RankPlan::default());
            let mut out = Vec::new();
            core.finish(&mut out);
            preempted.extend(out.iter().filter_map(|e| match e {
                EngineEvent::Preempted { id } => Some(*id),
                _ => None,
            }));
            assert!(
                core.stats.completed == 0,
                "the pool fills before either finishes"
            );
        }
        // After 18 decode passes both hold 32 + 18 tokens (100) with 19 out:
        // the later one is retracted. Its 32 prompt tokens stay cached, its 18
        // decoded ones are free again; the other decodes on (32 + 19 held).
        assert_eq!(preempted, vec![RequestId(1)]);
        assert_eq!(core.pool.cached_blocks(), 32);
        assert_eq!(core.pool.in_use_blocks(), 32 + 19);
        assert_eq!(core.pool.free_blocks(), 100 - 32 - 51);
        let seq = core.seqs.get(core.waiting[0]);
        assert_eq!((seq.id, seq.generated), (RequestId(1), 19));
        assert_eq!(seq.prefix_match(&core.pool, 1).blocks, 32);
        core.pool.check_invariants().unwrap();
    }

    proptest::proptest! {
        /// The victim is the last element of SGLang's order: a stable sort by
        /// `(generated, -input)`, descending.
        #[test]
        fn the_victim_is_the_end_of_sglangs_retraction_order(
            reqs in proptest::collection::vec((1u32..6, 0u32..4), 1..12)
        ) {
            let mut seqs = SeqTable::<RadixCache>::default();
            let running: Vec<u32> = reqs
                .iter()
                .enumerate()
                .map(|(i, &(input, generated))| {
                    let slot = seqs.insert(&Request::new(i as u64, SimTime::ZERO, input, 9), 1, false);
                    seqs.get_mut(slot).generated = generated;
                    slot
                })
                .collect();
            let mut order: Vec<usize> = (0..running.len()).collect();
            // Python's `sort(key, reverse=True)` keeps equal keys in their order.
            order.sort_by(|&a, &b| {
                let key = |i: usize| (reqs[i].1, -(reqs[i].0 as i64));
                key(b).cmp(&key(a))
            });
            proptest::prop_assert_eq!(retraction_victim(&running, &seqs), *order.last().unwrap());
        }
    }
}

//! What engines and their scheduler cores report: events, decode sinks, loads,
//! counters and rejections. Both `engine` and `scheduler` depend on it, neither
//! on the other's types.

use serde::{Deserialize, Serialize};

use crate::request::RequestId;
use crate::time::SimTime;

/// Something that became visible at the end of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineEvent {
    /// The request was scheduled for the first time, or again after preemption,
    /// at the start of the pass.
    Admitted {
        /// The request.
        id: RequestId,
        /// Prompt tokens served from the prefix cache.
        reused_tokens: u32,
        /// Whether it had been admitted before (and preempted).
        readmission: bool,
    },
    /// The request was preempted (vLLM, TensorRT-LLM) or retracted (SGLang) at
    /// the start of the pass; it will be recomputed.
    Preempted {
        /// The request.
        id: RequestId,
    },
    /// One output token.
    Token {
        /// The request.
        id: RequestId,
        /// Whether it is the request's first.
        first: bool,
    },
    /// The request emitted its last token (or finished its prompt, with output 0)
    /// and released its KV.
    Completed {
        /// The request.
        id: RequestId,
    },
}

/// Receives what a run of decode passes does (`Engine::run_decode_passes`):
/// for each pass its tokens and completions, then the pass itself.
pub trait DecodeSink {
    /// One output token (never a request's first: first tokens end a prefill).
    fn token(&mut self, id: RequestId, at: SimTime);
    /// The request emitted its last token and released its KV.
    fn completed(&mut self, id: RequestId, at: SimTime);
    /// The pass ran from `start` to `end`; the rank held `kv_during` blocks
    /// during it and `kv_after` once its completions released theirs.
    fn pass(&mut self, start: SimTime, end: SimTime, kv_during: u32, kv_after: u32);
    /// `ends.len()` passes in a row in which each of `ids` emitted one token
    /// and nothing else happened: pass `k` ran from `ends[k - 1]` (`start`
    /// for the first) to `ends[k]`, holding `kv` blocks throughout. The same
    /// as, pass by pass, a `token` for each id and then the `pass`; a sink
    /// that can take them in bulk says so by overriding this.
    fn quiet(&mut self, ids: &[RequestId], start: SimTime, ends: &[SimTime], kv: u32) {
        let mut from = start;
        for &end in ends {
            for &id in ids {
                self.token(id, end);
            }
            self.pass(from, end, kv, kv);
            from = end;
        }
    }
}

/// Why a request can never be served by an engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum RejectReason {
    /// The prompt has no tokens.
    #[error("the prompt is empty: at least one prompt token is needed")]
    EmptyPrompt,
    /// Longer than `max_model_len`.
    #[error("prompt + output = {tokens} tokens exceeds max_model_len {max_model_len}")]
    LongerThanMaxModelLen {
        /// Prompt plus output tokens.
        tokens: u64,
        /// The limit.
        max_model_len: u32,
    },
    /// Needs more KV blocks than the whole pool has.
    #[error(
        "prompt + output = {tokens} tokens needs {blocks} KV blocks of {block_size} tokens but the pool has only {capacity} ({} tokens)",
        *capacity as u64 * *block_size as u64
    )]
    LargerThanKvCache {
        /// Prompt plus output tokens.
        tokens: u64,
        /// Blocks needed.
        blocks: u64,
        /// Tokens per block.
        block_size: u32,
        /// Pool capacity, blocks.
        capacity: u32,
    },
    /// SGLang serves a request only when prompt + output stays below the
    /// pool (its `max_req_len` is `max_total_num_tokens - 1`); one that would
    /// fill it could never pass admission.
    #[error("prompt + output = {tokens} tokens must stay below the SGLang pool's {capacity_tokens} tokens")]
    FillsSglangPool {
        /// Prompt plus output tokens.
        tokens: u64,
        /// Pool capacity, tokens.
        capacity_tokens: u64,
    },
    /// Without chunked prefill, a prompt longer than the pass budget never fits.
    #[error("without chunked prefill a prompt of {input_length} tokens can never fit the {budget}-token pass budget")]
    PromptOverBatchBudget {
        /// Prompt tokens.
        input_length: u32,
        /// The budget.
        budget: u32,
    },
}

/// Load of one rank, as routers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RankLoad {
    /// Requests running (admitted, holding KV).
    pub running: u32,
    /// Requests queued.
    pub waiting: u32,
    /// KV blocks in use.
    pub active_kv_blocks: u32,
    /// Prompt tokens still to compute (waiting and partly prefilled requests).
    pub pending_prefill_tokens: u64,
}

impl std::ops::AddAssign for RankLoad {
    fn add_assign(&mut self, o: RankLoad) {
        self.running += o.running;
        self.waiting += o.waiting;
        self.active_kv_blocks += o.active_kv_blocks;
        self.pending_prefill_tokens += o.pending_prefill_tokens;
    }
}

/// Counters of an engine (summed over its ranks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EngineStats {
    /// Preemptions (vLLM) or retractions (SGLang).
    pub preemptions: u64,
    /// Admissions, counting readmissions.
    pub admissions: u64,
    /// Completed requests.
    pub completed: u64,
    /// Prompt tokens at first admission.
    pub prompt_tokens_first: u64,
    /// Of which served from the prefix cache.
    pub reused_tokens_first: u64,
    /// Prompt tokens over every admission (recomputes included).
    pub prompt_tokens_all: u64,
    /// Of which served from the prefix cache.
    pub reused_tokens_all: u64,
}

impl std::ops::AddAssign for EngineStats {
    fn add_assign(&mut self, o: EngineStats) {
        self.preemptions += o.preemptions;
        self.admissions += o.admissions;
        self.completed += o.completed;
        self.prompt_tokens_first += o.prompt_tokens_first;
        self.reused_tokens_first += o.reused_tokens_first;
        self.prompt_tokens_all += o.prompt_tokens_all;
        self.reused_tokens_all += o.reused_tokens_all;
    }
}

//! Engine configuration: the serving limits of one worker.

use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// Which serving engine's scheduling semantics to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// vLLM v1: token budget, running first, chunked prefill, recompute preemption.
    #[default]
    Vllm,
    /// SGLang: prefill-only or decode-only passes, radix cache, retraction.
    Sglang,
    /// TensorRT-LLM: the vLLM core with a capacity policy.
    Trtllm,
}

/// Which running request vLLM preempts when blocks run out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PreemptionMode {
    /// The most recently admitted (vLLM's default).
    #[default]
    Lifo,
    /// The oldest.
    Fifo,
}

/// SGLang's order for admitting waiting requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SchedulePolicy {
    /// First come, first served.
    #[default]
    Fcfs,
    /// Longest cached prefix first (fcfs when more than 128 wait).
    Lpm,
}

/// TensorRT-LLM's capacity scheduler policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CapacityPolicy {
    /// Admit only when the whole prompt plus maximum output can be reserved: never preempts.
    #[default]
    GuaranteedNoEvict,
    /// Admit like vLLM; may pause (preempt) requests.
    MaxUtilization,
}

/// Limits of one engine (one worker; with `dp_size > 1`, of each of its ranks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Scheduler semantics.
    pub backend: Backend,
    /// Tokens per KV block (page). `None` takes the backend's default.
    pub block_size: Option<u32>,
    /// KV blocks per rank.
    pub num_gpu_blocks: u32,
    /// Most requests running at once per rank.
    pub max_num_seqs: u32,
    /// Token budget of one pass (vLLM, TensorRT-LLM).
    pub max_num_batched_tokens: u32,
    /// Reuse cached prefixes.
    pub enable_prefix_caching: bool,
    /// Split long prompts across passes.
    pub enable_chunked_prefill: bool,
    /// Requests longer than this (prompt + output) are rejected, not truncated.
    pub max_model_len: Option<u32>,
    /// vLLM / TensorRT-LLM `max_utilization` victim choice.
    pub preemption: PreemptionMode,
    /// Attention data-parallel ranks per worker.
    pub dp_size: u32,
    /// Tensor-parallel GPUs per rank (for GPU counts and cost only).
    pub tp_size: u32,
    /// SGLang admission order.
    pub schedule_policy: SchedulePolicy,
    /// SGLang: most new prompt tokens in one prefill pass.
    pub max_prefill_tokens: u32,
    /// SGLang: a prompt longer than this is chunked across passes.
    pub chunked_prefill_size: u32,
    /// SGLang: scales the initial `new_token_ratio` (0.7 × this).
    pub schedule_conservativeness: f64,
    /// TensorRT-LLM capacity policy.
    pub capacity_policy: CapacityPolicy,
    /// Every pass duration is divided by this.
    pub speedup_ratio: f64,
    /// Decode time is divided by this as well.
    pub decode_speedup_ratio: f64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            backend: Backend::Vllm,
            block_size: None,
            num_gpu_blocks: 16_384,
            max_num_seqs: 256,
            max_num_batched_tokens: 8_192,
            enable_prefix_caching: true,
            enable_chunked_prefill: true,
            max_model_len: None,
            preemption: PreemptionMode::Lifo,
            dp_size: 1,
            tp_size: 1,
            schedule_policy: SchedulePolicy::Fcfs,
            max_prefill_tokens: 16_384,
            chunked_prefill_size: 8_192,
            schedule_conservativeness: 1.0,
            capacity_policy: CapacityPolicy::GuaranteedNoEvict,
            speedup_ratio: 1.0,
            decode_speedup_ratio: 1.0,
        }
    }
}

/// The most KV blocks a rank can have (block ids are 32-bit, with two values
/// reserved; 2^31 leaves a margin no GPU comes near).
pub const MAX_GPU_BLOCKS: u32 = 1 << 31;

impl EngineConfig {
    /// The block (page) size in effect: the configured one or the backend default
    /// (vLLM 64, TensorRT-LLM 32, SGLang 16; see docs/engine.md for why SGLang's
    /// page is 16 rather than 1).
    pub fn effective_block_size(&self) -> u32 {
        self.block_size.unwrap_or(match self.backend {
            Backend::Vllm => 64,
            Backend::Trtllm => 32,
            Backend::Sglang => 16,
        })
    }

    /// KV capacity of one rank, in tokens.
    pub fn kv_capacity_tokens(&self) -> u64 {
        self.num_gpu_blocks as u64 * self.effective_block_size() as u64
    }

    /// Checks every limit; the error names the field and what would be right.
    pub fn validate(&self) -> Result<(), CoreError> {
        let positive = |field: &'static str, v: u32| {
            if v == 0 {
                Err(CoreError::config(field, v, "must be at least 1"))
            } else {
                Ok(())
            }
        };
        positive("block_size", self.effective_block_size())?;
        positive("num_gpu_blocks", self.num_gpu_blocks)?;
        if self.num_gpu_blocks > MAX_GPU_BLOCKS {
            return Err(CoreError::config(
                "num_gpu_blocks",
                self.num_gpu_blocks,
                "must be at most 2^31 (KV blocks are numbered with 32 bits)",
            ));
        }
        positive("max_num_seqs", self.max_num_seqs)?;
        positive("max_num_batched_tokens", self.max_num_batched_tokens)?;
        positive("dp_size", self.dp_size)?;
        positive("tp_size", self.tp_size)?;
        positive("max_prefill_tokens", self.max_prefill_tokens)?;
        positive("chunked_prefill_size", self.chunked_prefill_size)?;
        if let Some(m) = self.max_model_len {
            positive("max_model_len", m)?;
        }
        for (field, v) in [
            ("speedup_ratio", self.speedup_ratio),
            ("decode_speedup_ratio", self.decode_speedup_ratio),
            ("schedule_conservativeness", self.schedule_conservativeness),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(CoreError::config(
                    field,
                    v,
                    "must be a finite number above 0",
                ));
            }
        }
        Ok(())
    }
}

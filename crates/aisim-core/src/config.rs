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

impl Backend {
    /// The backend's default block (page) size: vLLM 64, TensorRT-LLM 32,
    /// SGLang 1 (SGLang's own `page_size`; its radix cache costs what a
    /// request's trace blocks do, whatever the page, see docs/engine.md).
    pub fn default_block_size(self) -> u32 {
        match self {
            Backend::Vllm => 64,
            Backend::Trtllm => 32,
            Backend::Sglang => 1,
        }
    }

    /// The KV memory of one rank by default, in tokens: `DEFAULT_KV_BUDGET_TOKENS`
    /// whatever the backend, so that comparing backends compares their
    /// schedulers, not their memory (a GPU profile, when the timing comes
    /// from one, sets its own).
    pub fn default_kv_budget_tokens(self) -> u64 {
        DEFAULT_KV_BUDGET_TOKENS
    }
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
    /// KV blocks per rank, overriding the budget (vLLM's
    /// `num_gpu_blocks_override`). `None`: `kv_budget_tokens / block_size`.
    pub num_gpu_blocks: Option<u32>,
    /// KV memory of one rank, in tokens: what the GPU memory left for KV holds,
    /// whatever the block size. `None`: the backend's default
    /// (`Backend::default_kv_budget_tokens`; a GPU profile's capacity when the
    /// timing comes from one).
    pub kv_budget_tokens: Option<u64>,
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
            num_gpu_blocks: None,
            kv_budget_tokens: None,
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

/// KV blocks per rank at vLLM's default block size (64 tokens) when neither
/// `num_gpu_blocks` nor `kv_budget_tokens` is given.
pub const DEFAULT_GPU_BLOCKS: u32 = 16_384;

/// The KV memory of one rank, in tokens, when neither `num_gpu_blocks`,
/// `kv_budget_tokens` nor a GPU profile sets it: 1,048,576 (`DEFAULT_GPU_BLOCKS`
/// blocks of 64 tokens) on every backend, cut into 16,384 blocks of 64
/// (vLLM), 32,768 of 32 (TensorRT-LLM) or 1,048,576 one-token pages (SGLang).
pub const DEFAULT_KV_BUDGET_TOKENS: u64 = DEFAULT_GPU_BLOCKS as u64 * 64;

/// The most attention-DP ranks, and the most tensor-parallel GPUs per rank:
/// far above any serving instance, low enough that `dp × tp` GPUs, and one
/// scheduler per rank, stay small.
pub const MAX_PARALLEL: u32 = 1024;

/// The most KV blocks a rank can have: 2^26, 64 Mi one-token pages, far above
/// any GPU's KV (a B200 holds a few million tokens of an 8B model). A full
/// pool's bookkeeping (block metadata, prefix index, the requests' block
/// tables: about 40 bytes a block) then stays near 2.5 GiB, so no flag value
/// can make one run exhaust memory.
pub const MAX_GPU_BLOCKS: u32 = 1 << 26;

impl EngineConfig {
    /// The block (page) size in effect: the configured one or the backend default
    /// (vLLM 64, TensorRT-LLM 32, SGLang 1).
    pub fn effective_block_size(&self) -> u32 {
        self.block_size.unwrap_or(self.backend.default_block_size())
    }

    /// The KV memory of one rank in tokens: the configured budget or the
    /// backend's default.
    pub fn kv_budget(&self) -> u64 {
        self.kv_budget_tokens
            .unwrap_or(self.backend.default_kv_budget_tokens())
    }

    /// KV blocks of one rank: `num_gpu_blocks` when given, else as many blocks
    /// of the block size in effect as the budget holds (rounded down, so a
    /// block size that does not divide it loses under one block). Saturates at
    /// `u32::MAX`, which `validate` rejects.
    pub fn gpu_blocks(&self) -> u32 {
        self.num_gpu_blocks.unwrap_or_else(|| {
            let blocks = self.kv_budget() / self.effective_block_size().max(1) as u64;
            u32::try_from(blocks).unwrap_or(u32::MAX)
        })
    }

    /// KV capacity of one rank, in tokens (`gpu_blocks × block size`).
    pub fn kv_capacity_tokens(&self) -> u64 {
        self.gpu_blocks() as u64 * self.effective_block_size() as u64
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
        self.validate_gpu_blocks()?;
        positive("max_num_seqs", self.max_num_seqs)?;
        positive("max_num_batched_tokens", self.max_num_batched_tokens)?;
        for (field, v) in [("dp_size", self.dp_size), ("tp_size", self.tp_size)] {
            positive(field, v)?;
            if v > MAX_PARALLEL {
                return Err(CoreError::config(
                    field,
                    v,
                    format!("must be at most {MAX_PARALLEL} (one serving instance; each DP rank has its own scheduler and KV pool)"),
                ));
            }
        }
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

    /// The pool has 1 to `MAX_GPU_BLOCKS` blocks; the error names the field that set them.
    fn validate_gpu_blocks(&self) -> Result<(), CoreError> {
        let blocks = self.gpu_blocks();
        let too_many = "must be at most 2^26 = 67108864 blocks a rank (a full pool's bookkeeping is about 40 bytes a block: 2.5 GiB at that count)";
        match self.num_gpu_blocks {
            Some(0) => Err(CoreError::config("num_gpu_blocks", 0, "must be at least 1")),
            Some(n) if n > MAX_GPU_BLOCKS => Err(CoreError::config("num_gpu_blocks", n, too_many)),
            Some(_) => Ok(()),
            None if blocks == 0 => Err(CoreError::config(
                "kv_budget_tokens",
                self.kv_budget(),
                format!(
                    "holds no KV block of {} tokens: give at least one block's worth",
                    self.effective_block_size()
                ),
            )),
            None if blocks > MAX_GPU_BLOCKS => Err(CoreError::config(
                "kv_budget_tokens",
                self.kv_budget(),
                format!(
                    "makes more than 2^26 = 67108864 blocks of {} tokens a rank (a full pool's bookkeeping is about 40 bytes a block): use a larger block size",
                    self.effective_block_size()
                ),
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn config(backend: Backend, block_size: Option<u32>) -> EngineConfig {
        EngineConfig {
            backend,
            block_size,
            ..EngineConfig::default()
        }
    }

    #[test]
    fn every_backend_has_the_same_default_capacity_whatever_the_block_size() {
        for backend in [Backend::Vllm, Backend::Trtllm, Backend::Sglang] {
            assert_eq!(config(backend, None).kv_capacity_tokens(), 1_048_576);
            for bs in [1, 16, 32, 64, 128] {
                let c = config(backend, Some(bs));
                assert_eq!(c.kv_capacity_tokens(), 1_048_576, "{backend:?} block {bs}");
                assert_eq!(c.gpu_blocks() as u64, 1_048_576 / bs as u64);
            }
        }
        // Cut by each backend's default block (page) size.
        assert_eq!(config(Backend::Vllm, None).gpu_blocks(), DEFAULT_GPU_BLOCKS);
        assert_eq!(config(Backend::Trtllm, None).gpu_blocks(), 32_768);
        assert_eq!(config(Backend::Sglang, None).effective_block_size(), 1);
        assert_eq!(config(Backend::Sglang, None).gpu_blocks(), 1_048_576);
        assert_eq!(
            config(Backend::Sglang, Some(64)).gpu_blocks(),
            DEFAULT_GPU_BLOCKS
        );
    }

    #[test]
    fn num_gpu_blocks_overrides_the_budget() {
        let c = EngineConfig {
            block_size: Some(16),
            num_gpu_blocks: Some(1000),
            kv_budget_tokens: Some(1 << 20),
            ..EngineConfig::default()
        };
        assert_eq!(c.gpu_blocks(), 1000);
        assert_eq!(c.kv_capacity_tokens(), 16_000);
    }

    #[test]
    fn parallelism_is_bounded() {
        for dp_tp in [(0, 1), (1, 0), (1025, 1), (1, u32::MAX)] {
            let c = EngineConfig {
                dp_size: dp_tp.0,
                tp_size: dp_tp.1,
                ..EngineConfig::default()
            };
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("dp_size") || e.contains("tp_size"), "{e}");
        }
        let c = EngineConfig {
            dp_size: 1024,
            tp_size: 1024,
            ..EngineConfig::default()
        };
        assert!(c.validate().is_ok());
    }

    #[test]
    fn a_budget_without_a_whole_block_or_with_too_many_is_an_error() {
        let small = EngineConfig {
            kv_budget_tokens: Some(63),
            ..EngineConfig::default()
        };
        let e = small.validate().unwrap_err().to_string();
        assert!(
            e.contains("kv_budget_tokens") && e.contains("63") && e.contains("64 tokens"),
            "{e}"
        );
        let huge = EngineConfig {
            block_size: Some(1),
            kv_budget_tokens: Some(u64::MAX),
            ..EngineConfig::default()
        };
        let e = huge.validate().unwrap_err().to_string();
        assert!(e.contains("kv_budget_tokens") && e.contains("2^26"), "{e}");
        let zero = EngineConfig {
            num_gpu_blocks: Some(0),
            ..EngineConfig::default()
        };
        assert!(zero
            .validate()
            .unwrap_err()
            .to_string()
            .contains("num_gpu_blocks"));
    }

    proptest! {
        /// Any block size loses less than one block of the budget, and none when
        /// it divides it.
        #[test]
        fn capacity_is_the_budget_rounded_down_to_blocks(
            budget in 1u64..=u64::from(MAX_GPU_BLOCKS),
            bs in 1u32..4096,
        ) {
            let c = EngineConfig {
                block_size: Some(bs),
                kv_budget_tokens: Some(budget),
                ..EngineConfig::default()
            };
            prop_assume!(c.validate().is_ok());
            let cap = c.kv_capacity_tokens();
            prop_assert!(cap <= budget && budget < cap + bs as u64);
            prop_assert_eq!(cap == budget, budget % bs as u64 == 0);
        }
    }
}

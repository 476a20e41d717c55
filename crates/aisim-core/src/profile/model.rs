//! Model architectures (`data/models.json` or a HuggingFace `config.json`) and
//! what the profiles derive from their shape: KV bytes per token, parameters,
//! prefill FLOPs. One formula each, for every attention kind (engine.md).

use serde::{Deserialize, Serialize};

/// Mixture-of-experts part of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoeSpec {
    /// Routed experts per MoE layer.
    pub experts: u32,
    /// Routed experts active per token.
    pub top_k: u32,
    /// FFN width of one expert (routed or shared).
    pub expert_intermediate: u64,
    /// Always-active shared experts per MoE layer, each `expert_intermediate` wide.
    pub shared_experts: u32,
    /// Leading layers with a dense FFN of `intermediate` instead of experts
    /// (DeepSeek's `first_k_dense_replace`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dense_layers: u64,
}

/// Multi-head latent attention (DeepSeek-V2/V3): keys and values are rebuilt
/// from one compressed latent per token and layer, shared by every head, and
/// only that latent (plus the decoupled RoPE key) is cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MlaSpec {
    /// Width of the KV latent (`kv_lora_rank`).
    pub kv_lora_rank: u64,
    /// Width of the decoupled RoPE key, cached with the latent (`qk_rope_head_dim`).
    pub qk_rope_head_dim: u64,
    /// Width of the query latent (`q_lora_rank`); `None`: queries are projected directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_lora_rank: Option<u64>,
    /// Per-head query/key width without RoPE (`qk_nope_head_dim`).
    pub qk_nope_head_dim: u64,
    /// Per-head value width (`v_head_dim`).
    pub v_head_dim: u64,
}

/// A model architecture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Key (`llama-3.1-70b`).
    pub name: String,
    /// Display name.
    pub display: String,
    /// Transformer layers.
    pub layers: u64,
    /// Attention (query) heads.
    pub heads: u64,
    /// KV heads (GQA); ignored with MLA, whose latent all heads share.
    pub kv_heads: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Width of one attention head, when the model sets it apart from
    /// `hidden / heads` (Qwen3: 128 whatever the hidden size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_dim: Option<u64>,
    /// Dense FFN width (for MoE models: of their `dense_layers`).
    pub intermediate: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Longest context.
    pub max_position: u64,
    /// Experts, for MoE models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<MoeSpec>,
    /// Latent attention, for MLA models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mla: Option<MlaSpec>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl ModelSpec {
    /// Width of one attention head: `head_dim` when given, else `hidden / heads`.
    pub fn head_dim(&self) -> u64 {
        self.head_dim.unwrap_or(self.hidden / self.heads.max(1))
    }

    /// KV entries one token caches per layer, and how many of them: `kv_heads`
    /// heads of a key and a value (`2 × head_dim` each), or with MLA one latent
    /// of `kv_lora_rank + qk_rope_head_dim`.
    fn kv_entries(&self) -> (u64, u64) {
        match &self.mla {
            Some(m) => (1, m.kv_lora_rank + m.qk_rope_head_dim),
            None => (self.kv_heads, 2 * self.head_dim()),
        }
    }

    /// KV bytes per token of one copy of the model:
    /// `layers × kv_heads × 2 × head_dim × dtype_bytes`, or with MLA
    /// `layers × (kv_lora_rank + qk_rope_head_dim) × dtype_bytes`.
    pub fn kv_bytes_per_token(&self, dtype_bytes: f64) -> f64 {
        let (heads, width) = self.kv_entries();
        (self.layers * heads * width) as f64 * dtype_bytes
    }

    /// KV bytes per token on each GPU of a `tp`-way tensor-parallel group:
    /// KV heads are split across the GPUs, but a GPU holds at least one, so
    /// with `tp > kv_heads` heads are replicated, and the MLA latent (one
    /// "head") is on every GPU in full, as vLLM and SGLang store them.
    pub fn kv_bytes_per_token_per_gpu(&self, dtype_bytes: f64, tp: u32) -> f64 {
        let (heads, width) = self.kv_entries();
        let per_gpu = heads.div_ceil(tp.max(1) as u64).max(1);
        (self.layers * per_gpu * width) as f64 * dtype_bytes
    }

    /// Attention weights of one layer: Q, K, V and O projections
    /// (`2·hidden·heads·head_dim + 2·hidden·kv_heads·head_dim`), or MLA's
    /// down- and up-projections of the query and KV latents and O.
    fn attention_params_per_layer(&self) -> u64 {
        let (h, n) = (self.hidden, self.heads);
        match &self.mla {
            None => 2 * h * n * self.head_dim() + 2 * h * self.kv_heads * self.head_dim(),
            Some(m) => {
                let q_width = n * (m.qk_nope_head_dim + m.qk_rope_head_dim);
                let q = match m.q_lora_rank {
                    Some(r) => h * r + r * q_width,
                    None => h * q_width,
                };
                let kv = h * (m.kv_lora_rank + m.qk_rope_head_dim)
                    + m.kv_lora_rank * n * (m.qk_nope_head_dim + m.v_head_dim);
                q + kv + n * m.v_head_dim * h
            }
        }
    }

    /// Query-key plus value width per head, for the attention FLOPs
    /// (`2 × head_dim`; MLA: `qk_nope + qk_rope + v_head_dim`).
    fn attention_score_width(&self) -> u64 {
        match &self.mla {
            None => 2 * self.head_dim(),
            Some(m) => m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim,
        }
    }

    fn attention_and_embedding_params(&self) -> u64 {
        self.vocab * self.hidden + self.layers * self.attention_params_per_layer()
    }

    /// FFN weights with `experts` routed experts per MoE layer counted.
    fn ffn_params(&self, experts: u64) -> u64 {
        let h = self.hidden;
        match &self.moe {
            None => self.layers * 3 * h * self.intermediate,
            Some(m) => {
                let dense = m.dense_layers.min(self.layers);
                let per_expert = 3 * h * m.expert_intermediate;
                dense * 3 * h * self.intermediate
                    + (self.layers - dense) * (experts + m.shared_experts as u64) * per_expert
            }
        }
    }

    /// Every parameter (all experts), embeddings counted once (engine.md).
    pub fn params(&self) -> u64 {
        let experts = self.moe.as_ref().map_or(0, |m| m.experts as u64);
        self.attention_and_embedding_params() + self.ffn_params(experts)
    }

    /// Parameters a token touches (`top_k` experts).
    pub fn active_params(&self) -> u64 {
        let experts = self.moe.as_ref().map_or(0, |m| m.top_k as u64);
        self.attention_and_embedding_params() + self.ffn_params(experts)
    }

    /// Prefill FLOPs of a chunk of `c` tokens with `q` already in context, over
    /// the whole model: 2 per weight a token touches (attention projections and
    /// active FFN) plus the attention scores and values,
    /// `2·heads·score_width·c·(c/2 + q)` per layer.
    pub fn prefill_flops(&self, c: u32, q: u32) -> f64 {
        let (c, q) = (c as f64, q as f64);
        let layers = self.layers as f64;
        let active_ffn = self.ffn_params(self.moe.as_ref().map_or(0, |m| m.top_k as u64));
        let weights = self.layers * self.attention_params_per_layer() + active_ffn;
        let attn =
            2.0 * self.heads as f64 * self.attention_score_width() as f64 * c * (c / 2.0 + q);
        2.0 * c * weights as f64 + attn * layers
    }
}

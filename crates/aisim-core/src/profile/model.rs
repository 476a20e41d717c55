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

/// The product, saturating: shapes come from user files, and an absurd one
/// must give absurd numbers, not an overflow.
fn mul(factors: &[u64]) -> u64 {
    factors.iter().fold(1u64, |p, &f| p.saturating_mul(f))
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
            Some(m) => (1, m.kv_lora_rank.saturating_add(m.qk_rope_head_dim)),
            None => (self.kv_heads, mul(&[2, self.head_dim()])),
        }
    }

    /// KV bytes per token of one copy of the model:
    /// `layers × kv_heads × 2 × head_dim × dtype_bytes`, or with MLA
    /// `layers × (kv_lora_rank + qk_rope_head_dim) × dtype_bytes`.
    pub fn kv_bytes_per_token(&self, dtype_bytes: f64) -> f64 {
        let (heads, width) = self.kv_entries();
        mul(&[self.layers, heads, width]) as f64 * dtype_bytes
    }

    /// KV bytes per token on each GPU of a `tp`-way tensor-parallel group:
    /// KV heads are split across the GPUs, but a GPU holds at least one, so
    /// with `tp > kv_heads` heads are replicated, and the MLA latent (one
    /// "head") is on every GPU in full, as vLLM and SGLang store them.
    pub fn kv_bytes_per_token_per_gpu(&self, dtype_bytes: f64, tp: u32) -> f64 {
        let (heads, width) = self.kv_entries();
        let per_gpu = heads.div_ceil(tp.max(1) as u64).max(1);
        mul(&[self.layers, per_gpu, width]) as f64 * dtype_bytes
    }

    /// Attention weights of one layer: Q, K, V and O projections
    /// (`2·hidden·heads·head_dim + 2·hidden·kv_heads·head_dim`), or MLA's
    /// down- and up-projections of the query and KV latents and O.
    fn attention_params_per_layer(&self) -> u64 {
        let (h, n) = (self.hidden, self.heads);
        match &self.mla {
            None => mul(&[2, h, n.saturating_add(self.kv_heads), self.head_dim()]),
            Some(m) => {
                let qk = m.qk_nope_head_dim.saturating_add(m.qk_rope_head_dim);
                let q_width = mul(&[n, qk]);
                let q = match m.q_lora_rank {
                    Some(r) => mul(&[h, r]).saturating_add(mul(&[r, q_width])),
                    None => mul(&[h, q_width]),
                };
                let kv_down = mul(&[h, m.kv_lora_rank.saturating_add(m.qk_rope_head_dim)]);
                let kv_up = mul(&[
                    m.kv_lora_rank,
                    n,
                    m.qk_nope_head_dim.saturating_add(m.v_head_dim),
                ]);
                let o = mul(&[n, m.v_head_dim, h]);
                q.saturating_add(kv_down)
                    .saturating_add(kv_up)
                    .saturating_add(o)
            }
        }
    }

    /// Query-key plus value width per head, for the attention FLOPs
    /// (`2 × head_dim`; MLA: `qk_nope + qk_rope + v_head_dim`).
    fn attention_score_width(&self) -> u64 {
        match &self.mla {
            None => mul(&[2, self.head_dim()]),
            Some(m) => m
                .qk_nope_head_dim
                .saturating_add(m.qk_rope_head_dim)
                .saturating_add(m.v_head_dim),
        }
    }

    fn attention_and_embedding_params(&self) -> u64 {
        mul(&[self.vocab, self.hidden])
            .saturating_add(mul(&[self.layers, self.attention_params_per_layer()]))
    }

    /// FFN weights with `experts` routed experts per MoE layer counted.
    fn ffn_params(&self, experts: u64) -> u64 {
        let h = self.hidden;
        match &self.moe {
            None => mul(&[self.layers, 3, h, self.intermediate]),
            Some(m) => {
                let dense = m.dense_layers.min(self.layers);
                let per_layer = mul(&[
                    experts + m.shared_experts as u64,
                    3,
                    h,
                    m.expert_intermediate,
                ]);
                mul(&[dense, 3, h, self.intermediate])
                    .saturating_add(mul(&[self.layers - dense, per_layer]))
            }
        }
    }

    /// Every parameter (all experts), embeddings counted once (engine.md).
    pub fn params(&self) -> u64 {
        let experts = self.moe.as_ref().map_or(0, |m| m.experts as u64);
        self.attention_and_embedding_params()
            .saturating_add(self.ffn_params(experts))
    }

    /// Parameters a token touches (`top_k` experts).
    pub fn active_params(&self) -> u64 {
        let experts = self.moe.as_ref().map_or(0, |m| m.top_k as u64);
        self.attention_and_embedding_params()
            .saturating_add(self.ffn_params(experts))
    }

    /// Prefill FLOPs of a chunk of `c` tokens with `q` already in context, over
    /// the whole model: 2 per weight a token touches (attention projections and
    /// active FFN) plus the attention scores and values,
    /// `2·heads·score_width·c·(c/2 + q)` per layer.
    pub fn prefill_flops(&self, c: u32, q: u32) -> f64 {
        let (c, q) = (c as f64, q as f64);
        let layers = self.layers as f64;
        let active_ffn = self.ffn_params(self.moe.as_ref().map_or(0, |m| m.top_k as u64));
        let weights =
            mul(&[self.layers, self.attention_params_per_layer()]).saturating_add(active_ffn);
        let attn =
            2.0 * self.heads as f64 * self.attention_score_width() as f64 * c * (c / 2.0 + q);
        2.0 * c * weights as f64 + attn * layers
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn any_moe() -> impl Strategy<Value = Option<MoeSpec>> {
        let parts = (
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u32>(),
            any::<u64>(),
        );
        proptest::option::of(
            parts.prop_map(|(experts, top_k, width, shared, dense)| MoeSpec {
                experts,
                top_k,
                expert_intermediate: width,
                shared_experts: shared,
                dense_layers: dense,
            }),
        )
    }

    fn any_mla() -> impl Strategy<Value = Option<MlaSpec>> {
        let parts = (
            any::<u64>(),
            any::<u64>(),
            any::<Option<u64>>(),
            any::<u64>(),
            any::<u64>(),
        );
        proptest::option::of(parts.prop_map(|(kv, rope, q, nope, v)| MlaSpec {
            kv_lora_rank: kv,
            qk_rope_head_dim: rope,
            q_lora_rank: q,
            qk_nope_head_dim: nope,
            v_head_dim: v,
        }))
    }

    proptest! {
        /// Shapes come from user files: however large, the derived numbers
        /// saturate instead of overflowing, and none is NaN.
        #[test]
        fn any_shape_gives_numbers_not_a_panic(
            dims in proptest::array::uniform7(any::<u64>()),
            head_dim in any::<Option<u64>>(),
            moe in any_moe(),
            mla in any_mla(),
            tp in 1u32..2048,
        ) {
            let [layers, heads, kv_heads, hidden, intermediate, vocab, max_position] = dims;
            let m = ModelSpec {
                name: "x".into(),
                display: "x".into(),
                layers,
                heads,
                kv_heads,
                hidden,
                head_dim,
                intermediate,
                vocab,
                max_position,
                moe,
                mla,
            };
            let top_k_fits = m.moe.as_ref().is_none_or(|e| e.top_k <= e.experts);
            prop_assert!(!top_k_fits || m.active_params() <= m.params());
            prop_assert!(!m.kv_bytes_per_token(2.0).is_nan());
            prop_assert!(m.kv_bytes_per_token_per_gpu(2.0, tp) <= m.kv_bytes_per_token(2.0));
            prop_assert!(!m.prefill_flops(512, 1024).is_nan());
        }
    }
}

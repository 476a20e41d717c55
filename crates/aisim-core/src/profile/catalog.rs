//! The built-in catalogs: hardware, model architectures and hand-calibrated
//! profiles, embedded from `data/` (facts from public references).

use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// One GPU type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareSpec {
    /// Display name (`H100-SXM`).
    pub name: String,
    /// Keys it is named by (`h100`, `h100_sxm`).
    pub aliases: Vec<String>,
    /// HBM bandwidth, bytes/s.
    pub mem_bw_bytes_per_s: f64,
    /// HBM capacity, bytes.
    pub mem_capacity_bytes: u64,
    /// Dense fp16 peak, TFLOP/s.
    pub fp16_tflops: f64,
    /// Dense fp8 peak, TFLOP/s (0: no fp8).
    pub fp8_tflops: f64,
    /// NVLink bandwidth, GB/s.
    pub nvlink_gb_per_s: f64,
    /// Inter-node bandwidth, GB/s.
    pub inter_node_gb_per_s: f64,
    /// PCIe bandwidth, GB/s.
    pub pcie_gb_per_s: f64,
    /// Thermal design power, W.
    pub tdp_w: f64,
    /// Dollars per GPU-hour.
    pub cost_per_gpu_hr: f64,
}

/// Mixture-of-experts part of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoeSpec {
    /// Routed experts per layer.
    pub experts: u32,
    /// Experts active per token.
    pub top_k: u32,
    /// FFN width of one expert.
    pub expert_intermediate: u64,
    /// Always-active shared experts.
    pub shared_experts: u32,
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
    /// Attention heads.
    pub heads: u64,
    /// KV heads (GQA).
    pub kv_heads: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Dense FFN width (for MoE: the shared expert's).
    pub intermediate: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Longest context.
    pub max_position: u64,
    /// Experts, for MoE models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<MoeSpec>,
}

/// A hand-calibrated serving unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManualProfileSpec {
    /// Display name.
    pub name: String,
    /// Key.
    pub key: String,
    /// W, seconds.
    #[serde(rename = "W_s")]
    pub w_s: f64,
    /// H, seconds.
    #[serde(rename = "H_s")]
    pub h_s: f64,
    /// Calibration context.
    pub calibration_ctx: u32,
    /// Prefill chunk.
    pub chunk: u32,
    /// Tokens per KV block.
    pub blk_size: u32,
    /// KV blocks.
    pub total_kv_blks: u64,
    /// Slot cap at the calibration context.
    pub max_slots: u32,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Measured power.
    pub power: ManualPower,
}

/// Measured power constants of a manual profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManualPower {
    /// Idle watts.
    pub idle_w: f64,
    /// Nominal watts.
    pub nominal_w: f64,
    /// Logistic steepness.
    pub logistic_k: f64,
    /// Logistic midpoint.
    pub logistic_x0: f64,
}

#[derive(Deserialize)]
struct HardwareFile {
    hardware: Vec<HardwareSpec>,
}
#[derive(Deserialize)]
struct ModelFile {
    models: Vec<ModelSpec>,
}
#[derive(Deserialize)]
struct ManualFile {
    manual_profiles: Vec<ManualProfileSpec>,
}

/// Every built-in GPU type.
pub fn hardware_catalog() -> &'static [HardwareSpec] {
    static CELL: OnceLock<Vec<HardwareSpec>> = OnceLock::new();
    CELL.get_or_init(|| {
        serde_json::from_str::<HardwareFile>(include_str!("../../data/hardware.json"))
            .expect("embedded hardware catalog is valid")
            .hardware
    })
}

/// Every built-in model architecture.
pub fn model_catalog() -> &'static [ModelSpec] {
    static CELL: OnceLock<Vec<ModelSpec>> = OnceLock::new();
    CELL.get_or_init(|| {
        serde_json::from_str::<ModelFile>(include_str!("../../data/models.json"))
            .expect("embedded model catalog is valid")
            .models
    })
}

/// Every built-in hand-calibrated profile.
pub fn manual_profile_catalog() -> &'static [ManualProfileSpec] {
    static CELL: OnceLock<Vec<ManualProfileSpec>> = OnceLock::new();
    CELL.get_or_init(|| {
        serde_json::from_str::<ManualFile>(include_str!("../../data/manual_profiles.json"))
            .expect("embedded profile catalog is valid")
            .manual_profiles
    })
}

impl HardwareSpec {
    /// Finds a GPU type by name or alias, ignoring case.
    pub fn find(key: &str) -> Option<&'static HardwareSpec> {
        hardware_catalog().iter().find(|h| {
            h.name.eq_ignore_ascii_case(key)
                || h.aliases.iter().any(|a| a.eq_ignore_ascii_case(key))
        })
    }
}

/// The fields of a HuggingFace `config.json` that the profile needs.
#[derive(Deserialize)]
struct HfConfig {
    num_hidden_layers: u64,
    num_attention_heads: u64,
    num_key_value_heads: Option<u64>,
    hidden_size: u64,
    intermediate_size: Option<u64>,
    vocab_size: u64,
    max_position_embeddings: Option<u64>,
    // MoE under the names used by Mixtral, Qwen-MoE and DeepSeek.
    num_local_experts: Option<u32>,
    num_experts: Option<u32>,
    n_routed_experts: Option<u32>,
    num_experts_per_tok: Option<u32>,
    moe_intermediate_size: Option<u64>,
    n_shared_experts: Option<u32>,
}

impl ModelSpec {
    /// Finds a model by name, ignoring case.
    pub fn find(key: &str) -> Option<&'static ModelSpec> {
        model_catalog()
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(key))
    }

    /// Reads a HuggingFace `config.json`.
    pub fn from_hf_config(path: &Path) -> Result<ModelSpec, CoreError> {
        let text = std::fs::read_to_string(path).map_err(|source| CoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let c: HfConfig = serde_json::from_str(&text).map_err(|e| CoreError::BadFile {
            path: path.to_path_buf(),
            field: format!("line {} column {}", e.line(), e.column()),
            reason: e.to_string(),
        })?;
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return Err(CoreError::BadFile {
                path: path.to_path_buf(),
                field: "num_attention_heads".into(),
                reason: format!(
                    "{} does not divide hidden_size {}",
                    c.num_attention_heads, c.hidden_size
                ),
            });
        }
        let experts = c.num_local_experts.or(c.num_experts).or(c.n_routed_experts);
        let moe = match (experts, c.num_experts_per_tok) {
            (Some(e), Some(k)) if e > 0 => Some(MoeSpec {
                experts: e,
                top_k: k,
                expert_intermediate: c.moe_intermediate_size.or(c.intermediate_size).unwrap_or(0),
                shared_experts: c.n_shared_experts.unwrap_or(0),
            }),
            _ => None,
        };
        let name = path.display().to_string();
        Ok(ModelSpec {
            display: name.clone(),
            name,
            layers: c.num_hidden_layers,
            heads: c.num_attention_heads,
            kv_heads: c.num_key_value_heads.unwrap_or(c.num_attention_heads),
            hidden: c.hidden_size,
            intermediate: c.intermediate_size.unwrap_or(0),
            vocab: c.vocab_size,
            max_position: c.max_position_embeddings.unwrap_or(0),
            moe,
        })
    }

    /// `hidden / heads`.
    pub fn head_dim(&self) -> u64 {
        self.hidden / self.heads.max(1)
    }

    /// `2 × layers × kv_heads × head_dim × dtype_bytes` (whole model, unsharded).
    pub fn kv_bytes_per_token(&self, dtype_bytes: f64) -> f64 {
        2.0 * (self.layers * self.kv_heads * self.head_dim()) as f64 * dtype_bytes
    }

    fn attention_and_embedding_params(&self) -> u64 {
        let h = self.hidden;
        self.vocab * h + self.layers * (2 * h * h + 2 * h * self.kv_heads * self.head_dim())
    }

    fn ffn_params(&self, experts: u64) -> u64 {
        let h = self.hidden;
        match &self.moe {
            None => self.layers * 3 * h * self.intermediate,
            Some(m) => {
                self.layers
                    * (experts * 3 * h * m.expert_intermediate
                        + m.shared_experts as u64 * 3 * h * self.intermediate)
            }
        }
    }

    /// Every parameter (all experts).
    pub fn params(&self) -> u64 {
        let experts = self.moe.as_ref().map_or(0, |m| m.experts as u64);
        self.attention_and_embedding_params() + self.ffn_params(experts)
    }

    /// Parameters a token touches (`top_k` experts).
    pub fn active_params(&self) -> u64 {
        let experts = self.moe.as_ref().map_or(0, |m| m.top_k as u64);
        self.attention_and_embedding_params() + self.ffn_params(experts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_70b_check_values() {
        let m = ModelSpec::find("llama-3.1-70b").unwrap();
        assert_eq!(m.kv_bytes_per_token(2.0), 327_680.0);
        assert_eq!(m.params(), 69_501_714_432);
        assert_eq!(m.active_params(), m.params());
    }

    #[test]
    fn moe_active_parameters_use_top_k() {
        let m = ModelSpec::find("mixtral-8x7b").unwrap();
        assert!(m.active_params() < m.params());
        let per_expert = 32 * 3 * 4096 * 14336u64;
        assert_eq!(m.params() - m.active_params(), 6 * per_expert);
    }

    #[test]
    fn catalogs_parse_and_find_by_alias() {
        assert_eq!(hardware_catalog().len(), 8);
        assert_eq!(HardwareSpec::find("H100").unwrap().name, "H100-SXM");
        assert_eq!(manual_profile_catalog().len(), 3);
        assert!(ModelSpec::find("nope").is_none());
    }
}

//! Reading a model architecture from a HuggingFace `config.json`.

use std::path::Path;

use serde::Deserialize;

use super::model::{MlaSpec, ModelSpec, MoeSpec};
use crate::error::CoreError;

/// The fields of a HuggingFace `config.json` that the profile needs.
#[derive(Deserialize)]
struct HfConfig {
    num_hidden_layers: u64,
    num_attention_heads: u64,
    num_key_value_heads: Option<u64>,
    hidden_size: u64,
    head_dim: Option<u64>,
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
    first_k_dense_replace: Option<u64>,
    // Llama 4: a shared expert beside the routed ones in every MoE layer,
    // and MoE layers every `interleave_moe_layer_step` layers.
    model_type: Option<String>,
    interleave_moe_layer_step: Option<u64>,
    // Multi-head latent attention (DeepSeek-V2/V3).
    kv_lora_rank: Option<u64>,
    q_lora_rank: Option<u64>,
    qk_rope_head_dim: Option<u64>,
    qk_nope_head_dim: Option<u64>,
    v_head_dim: Option<u64>,
}

impl ModelSpec {
    /// Reads a HuggingFace `config.json`. `head_dim` is taken when present
    /// (else `hidden_size / num_attention_heads`, which must divide), and a
    /// `kv_lora_rank` makes the attention MLA.
    pub fn from_hf_config(path: &Path) -> Result<ModelSpec, CoreError> {
        let text = crate::text_file::read_text_file(path)?;
        let json_error = |e: serde_json::Error| CoreError::BadFile {
            path: path.to_path_buf(),
            field: format!("line {} column {}", e.line(), e.column()),
            reason: crate::text_file::json_message(&e),
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(json_error)?;
        // A multimodal model (Llama 4, Gemma 3) nests its language model in
        // `text_config`: that is the model that serves the tokens.
        let (nest, c): (&str, HfConfig) = match value.get("text_config") {
            Some(t) if t.is_object() && value.get("num_hidden_layers").is_none() => (
                "text_config.",
                serde_json::from_value(t.clone()).map_err(|e| CoreError::BadFile {
                    path: path.to_path_buf(),
                    field: "text_config".into(),
                    reason: e.to_string(),
                })?,
            ),
            _ => ("", serde_json::from_str(&text).map_err(json_error)?),
        };
        let bad = |field: &str, reason: String| CoreError::BadFile {
            path: path.to_path_buf(),
            field: format!("{nest}{field}"),
            reason,
        };
        for (field, v) in [
            ("num_hidden_layers", Some(c.num_hidden_layers)),
            ("num_attention_heads", Some(c.num_attention_heads)),
            ("num_key_value_heads", c.num_key_value_heads),
            ("hidden_size", Some(c.hidden_size)),
            ("head_dim", c.head_dim),
            ("kv_lora_rank", c.kv_lora_rank),
        ] {
            if v == Some(0) {
                return Err(bad(field, "0: must be at least 1".into()));
            }
        }
        if c.head_dim.is_none() && !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return Err(bad(
                "num_attention_heads",
                format!(
                    "{} does not divide hidden_size {} (and there is no head_dim)",
                    c.num_attention_heads, c.hidden_size
                ),
            ));
        }
        let mla = match c.kv_lora_rank {
            None => None,
            Some(kv_lora_rank) => {
                let need = |field: &str, v: Option<u64>| {
                    v.ok_or_else(|| bad(field, "missing: MLA (kv_lora_rank) needs it".into()))
                };
                Some(MlaSpec {
                    kv_lora_rank,
                    qk_rope_head_dim: need("qk_rope_head_dim", c.qk_rope_head_dim)?,
                    q_lora_rank: c.q_lora_rank,
                    qk_nope_head_dim: need("qk_nope_head_dim", c.qk_nope_head_dim)?,
                    v_head_dim: need("v_head_dim", c.v_head_dim)?,
                })
            }
        };
        let llama4 = c.model_type.as_deref() == Some("llama4_text");
        if let Some(step) = c.interleave_moe_layer_step.filter(|&s| s != 1) {
            return Err(bad(
                "interleave_moe_layer_step",
                format!("{step}: MoE layers between dense ones (Llama 4 Maverick) are not modelled; only every layer MoE (1)"),
            ));
        }
        let experts = c.num_local_experts.or(c.num_experts).or(c.n_routed_experts);
        if let (Some(e), Some(k)) = (experts, c.num_experts_per_tok) {
            if e > 0 && k > e {
                return Err(bad(
                    "num_experts_per_tok",
                    format!("{k} is more than the {e} experts"),
                ));
            }
        }
        let moe = match (experts, c.num_experts_per_tok) {
            (Some(e), Some(k)) if e > 0 => Some(MoeSpec {
                experts: e,
                top_k: k,
                expert_intermediate: c.moe_intermediate_size.or(c.intermediate_size).unwrap_or(0),
                // Llama 4 has one shared expert and does not say so.
                shared_experts: c.n_shared_experts.unwrap_or(u32::from(llama4)),
                dense_layers: c.first_k_dense_replace.unwrap_or(0),
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
            head_dim: c.head_dim,
            intermediate: c.intermediate_size.unwrap_or(0),
            vocab: c.vocab_size,
            max_position: c.max_position_embeddings.unwrap_or(0),
            moe,
            mla,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, json: &str) -> Result<ModelSpec, CoreError> {
        let scratch = crate::scratch::ScratchDir::new(&format!("hf-{name}"));
        let dir = scratch.path();
        let path = dir.join("config.json");
        std::fs::write(&path, json).unwrap();

        ModelSpec::from_hf_config(&path)
    }

    /// The published configs (the fields aisim reads) give what the catalog has.
    #[test]
    fn head_dim_and_mla_from_config_json_match_the_catalog() {
        let qwen = read(
            "qwen",
            r#"{"num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4,
                "hidden_size": 4096, "head_dim": 128, "intermediate_size": 12288,
                "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8,
                "vocab_size": 151936, "max_position_embeddings": 40960}"#,
        )
        .unwrap();
        let builtin = ModelSpec::find("qwen3-235b-a22b").unwrap();
        assert_eq!(qwen.head_dim(), 128);
        assert_eq!(
            qwen.kv_bytes_per_token(2.0),
            builtin.kv_bytes_per_token(2.0)
        );
        assert_eq!(qwen.prefill_flops(512, 0), builtin.prefill_flops(512, 0));
        assert_eq!(qwen.params(), builtin.params());

        let deepseek = r#"{"num_hidden_layers": 61, "num_attention_heads": 128,
            "num_key_value_heads": 128, "hidden_size": 7168, "intermediate_size": 18432,
            "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
            "num_experts_per_tok": 8, "first_k_dense_replace": 3, "kv_lora_rank": 512,
            "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
            "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840}"#;
        let ds = read("deepseek", deepseek).unwrap();
        let builtin = ModelSpec::find("deepseek-v3").unwrap();
        assert_eq!(ds.kv_bytes_per_token(2.0), 70_272.0);
        assert_eq!(ds.params(), builtin.params());
        assert_eq!(ds.active_params(), builtin.active_params());
        assert_eq!(ds.prefill_flops(512, 64), builtin.prefill_flops(512, 64));
    }

    /// A multimodal config (Llama-4-Scout's shape) is read through its
    /// `text_config`; its errors name the nested field.
    #[test]
    fn a_nested_text_config_is_the_model() {
        let scout = r#"{"architectures": ["Llama4ForConditionalGeneration"],
            "vision_config": {"hidden_size": 1408, "num_hidden_layers": 34},
            "text_config": {"model_type": "llama4_text", "interleave_moe_layer_step": 1,
                "num_hidden_layers": 48, "num_attention_heads": 40,
                "num_key_value_heads": 8, "hidden_size": 5120, "head_dim": 128,
                "intermediate_size": 8192, "num_local_experts": 16, "num_experts_per_tok": 1,
                "vocab_size": 202048, "max_position_embeddings": 10485760}}"#;
        let m = read("scout", scout).unwrap();
        assert_eq!(m.head_dim(), 128);
        // 48 layers of 8 KV heads of 128, K and V, 2 bytes.
        assert_eq!(m.kv_bytes_per_token(2.0), (48 * 8 * 128 * 2 * 2) as f64);
        // About 109 B parameters, 17 B active (one routed and one shared expert).
        let (all, active) = (m.params() as f64 / 1e9, m.active_params() as f64 / 1e9);
        assert!((100.0..115.0).contains(&all), "{all}");
        assert!((15.0..19.0).contains(&active), "{active}");
        // Maverick's dense layers between MoE ones are refused by name.
        let maverick = scout.replace(
            "\"interleave_moe_layer_step\": 1",
            "\"interleave_moe_layer_step\": 2",
        );
        assert_rejected(
            "maverick",
            &maverick,
            &["text_config.interleave_moe_layer_step"],
        );
        let bad = scout.replace("\"num_attention_heads\": 40", "\"num_attention_heads\": 0");
        assert_rejected("scout-bad", &bad, &["text_config.num_attention_heads"]);
    }

    /// The error for `json` names the file and each of `words`.
    fn assert_rejected(name: &str, json: &str, words: &[&str]) {
        let e = read(name, json).unwrap_err().to_string();
        assert!(e.contains("config.json"), "{e}");
        for w in words {
            assert!(e.contains(w), "{e} lacks {w}");
        }
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let no_div = r#"{"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 8,
            "vocab_size": 10}"#;
        assert_rejected("nodiv", no_div, &["num_attention_heads", "head_dim"]);
        // With head_dim given, heads need not divide the hidden size.
        let with_head_dim = r#"{"num_hidden_layers": 2, "num_attention_heads": 3,
            "hidden_size": 8, "head_dim": 4, "vocab_size": 10}"#;
        let ok = read("hd", with_head_dim).unwrap();
        assert_eq!(ok.kv_bytes_per_token(1.0), (2 * 3 * 2 * 4) as f64);
        let mla = r#"{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 8,
            "vocab_size": 10, "kv_lora_rank": 4, "qk_rope_head_dim": 2, "v_head_dim": 2}"#;
        assert_rejected("mla", mla, &["qk_nope_head_dim"]);
        let no_layers = r#"{"num_hidden_layers": 0, "num_attention_heads": 4, "hidden_size": 8,
            "vocab_size": 10}"#;
        assert_rejected("zero", no_layers, &["num_hidden_layers"]);
        let no_kv = r#"{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 8,
            "num_key_value_heads": 0, "vocab_size": 10}"#;
        assert_rejected("nokv", no_kv, &["num_key_value_heads", "at least 1"]);
        let top_k = r#"{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 8,
            "vocab_size": 10, "num_experts": 4, "num_experts_per_tok": 8}"#;
        assert_rejected("topk", top_k, &["num_experts_per_tok", "8"]);
    }
}

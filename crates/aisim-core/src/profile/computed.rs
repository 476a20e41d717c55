//! Profiles computed from a hardware spec, a model architecture and a serving
//! configuration (a memory-bandwidth model with a compute roofline for prefill).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::catalog::HardwareSpec;
use super::gpu_profile::GpuProfile;
use super::model::ModelSpec;
use super::power::PowerModel;
use super::unknown::unknown_computed;
use crate::error::CoreError;

/// How the model is served on the hardware.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServingConfig {
    /// Tensor-parallel GPUs per unit.
    pub tp: u32,
    /// Bytes per weight and KV element (2 fp16/bf16, 1 fp8, 0.5 int4).
    pub dtype_bytes: f64,
    /// Prompt tokens per prefill iteration.
    pub chunk: u32,
    /// Tokens per KV block.
    pub blk_size: u32,
    /// Slot cap (0: none).
    pub max_slots: u32,
    /// Context at which H is computed (the calibration context).
    pub mean_ctx_tokens: u32,
    /// Fraction of HBM the server may use.
    pub gpu_memory_utilization: f64,
}

impl Default for ServingConfig {
    fn default() -> Self {
        ServingConfig {
            tp: 1,
            dtype_bytes: 2.0,
            chunk: 512,
            blk_size: 16,
            max_slots: 0,
            mean_ctx_tokens: 2048,
            gpu_memory_utilization: 0.90,
        }
    }
}

/// The share of the published memory bandwidth that tuned kernels sustain:
/// the computed profiles' weight and KV streams (after aisimulate-core) and
/// the physics model's memory terms both read at this rate.
pub const ATTAINABLE_BANDWIDTH_FRACTION: f64 = 0.8;

/// NCCL buffers reserved per GPU at each tensor-parallel degree.
fn nccl_bytes(tp: u32) -> f64 {
    match tp {
        0 | 1 => 0.0,
        2 => 358_612_992.0,
        _ => 411_041_792.0,
    }
}

/// A serving unit derived from first principles.
#[derive(Debug, Clone)]
pub struct ComputedProfile {
    key: String,
    hardware: HardwareSpec,
    model: ModelSpec,
    serving: ServingConfig,
    w_s: f64,
    h_s: f64,
    total_kv_blks: u64,
    peak_flops: f64,
}

impl ComputedProfile {
    /// Derives W, H, KV capacity and the roofline.
    pub fn new(
        key: String,
        hardware: HardwareSpec,
        model: ModelSpec,
        serving: ServingConfig,
    ) -> Result<ComputedProfile, CoreError> {
        if serving.tp == 0
            || serving.blk_size == 0
            || serving.chunk == 0
            || serving.mean_ctx_tokens == 0
        {
            return Err(CoreError::config(
                "profile serving config",
                format!("{serving:?}"),
                "tp, blk_size, chunk and mean_ctx_tokens must be at least 1",
            ));
        }
        if model.heads == 0 || model.layers == 0 {
            return Err(CoreError::config(
                "profile model",
                &model.name,
                "needs at least one layer and one head",
            ));
        }
        let tp = serving.tp as f64;
        let eff_bw = ATTAINABLE_BANDWIDTH_FRACTION * hardware.mem_bw_bytes_per_s;
        // W streams the weights a token touches (active experts for MoE: a documented
        // simplification); memory must hold every weight.
        let active_bytes_per_gpu = model.active_params() as f64 * serving.dtype_bytes / tp;
        let weight_bytes_per_gpu = model.params() as f64 * serving.dtype_bytes / tp;
        let w_s = active_bytes_per_gpu / eff_bw + 3e-6 * model.layers as f64;
        // KV is sharded across the tensor-parallel ranks: each GPU holds its
        // share of every token's KV heads (at least one head; MLA's latent whole).
        let kv_bytes_per_gpu = model.kv_bytes_per_token_per_gpu(serving.dtype_bytes, serving.tp);
        let h_s = serving.mean_ctx_tokens as f64 * kv_bytes_per_gpu / eff_bw;
        let usable = (hardware.mem_capacity_bytes as f64 * serving.gpu_memory_utilization).floor();
        let free_for_kv = (usable - weight_bytes_per_gpu - nccl_bytes(serving.tp)).max(0.0);
        let total_kv_blks =
            (free_for_kv / (kv_bytes_per_gpu * serving.blk_size as f64)).floor() as u64;
        let peak_tflops = if serving.dtype_bytes <= 1.0 && hardware.fp8_tflops > 0.0 {
            hardware.fp8_tflops
        } else {
            hardware.fp16_tflops
        };
        Ok(ComputedProfile {
            key,
            hardware,
            model,
            serving,
            w_s,
            h_s,
            total_kv_blks,
            peak_flops: peak_tflops * 1e12,
        })
    }

    /// Parses `HARDWARE/MODEL[/tpN][/fp8|int4|fp16]`; `HARDWARE` may be a
    /// path to a hardware JSON file, `MODEL` one to a HuggingFace `config.json`.
    pub fn from_key(key: &str) -> Result<ComputedProfile, CoreError> {
        // A hardware file is a path ending in `.json` (it may hold slashes)
        // where no catalog name starts the key.
        let first = key.split('/').next().unwrap_or_default();
        let (hardware_file, rest) = match key.find(".json/") {
            Some(i) if HardwareSpec::find(first).is_none() => (Some(&key[..i + 5]), &key[i + 6..]),
            _ => (None, key),
        };
        let mut parts: Vec<&str> = std::iter::once("")
            .filter(|_| hardware_file.is_some())
            .chain(rest.split('/'))
            .collect();
        // A manual profile (`h100`) names a GPU but no model: the models
        // that need this one (physics, fitted, layers) need the model too.
        if parts.len() < 2 {
            let manual = super::catalog::manual_profile_catalog()
                .iter()
                .any(|p| p.key.eq_ignore_ascii_case(key));
            if !manual {
                return Err(unknown_computed(key));
            }
            return Err(CoreError::ProfileWithoutModel {
                name: key.to_string(),
                hint: format!(
                    "it is a manual profile (a GPU's constants); this needs a computed profile, HARDWARE/MODEL[/tpN] (e.g. {key}/llama-3.1-8b): the physics and fitted timings are worked out from the model's architecture; `aisim profiles` lists them"
                ),
            });
        }
        let mut serving = ServingConfig::default();
        while parts.len() > 2 {
            let last = parts[parts.len() - 1].to_ascii_lowercase();
            if let Some(n) = last.strip_prefix("tp") {
                serving.tp = n.parse().ok().filter(|&t| t > 0).ok_or_else(|| {
                    CoreError::config(
                        "profile tp",
                        &last,
                        "tensor parallelism is written tpN with N at least 1, e.g. tp8",
                    )
                })?;
            } else if last == "fp8" {
                serving.dtype_bytes = 1.0;
            } else if last == "int4" {
                serving.dtype_bytes = 0.5;
            } else if last == "fp16" || last == "bf16" {
                serving.dtype_bytes = 2.0;
            } else {
                break;
            }
            parts.pop();
        }
        let hardware = match hardware_file {
            Some(path) => HardwareSpec::from_file(Path::new(path))?,
            None => HardwareSpec::find(parts[0])
                .ok_or_else(|| unknown_computed(key))?
                .clone(),
        };
        let model_key = parts[1..].join("/");
        let model = if model_key.ends_with(".json") {
            ModelSpec::from_hf_config(Path::new(&model_key))?
        } else {
            ModelSpec::find(&model_key)
                .ok_or_else(|| unknown_computed(key))?
                .clone()
        };
        ComputedProfile::new(key.to_string(), hardware, model, serving)
    }

    /// The model architecture.
    pub fn model(&self) -> &ModelSpec {
        &self.model
    }
    /// The hardware.
    pub fn hardware(&self) -> &HardwareSpec {
        &self.hardware
    }
    /// The serving configuration.
    pub fn serving(&self) -> &ServingConfig {
        &self.serving
    }

    /// Prefill FLOPs of a chunk of `c` tokens with `q` already in context, per
    /// GPU (the model's, split evenly over the tensor-parallel group).
    pub fn prefill_flops(&self, c: u32, q: u32) -> f64 {
        self.model.prefill_flops(c, q) / self.serving.tp as f64
    }
}

impl GpuProfile for ComputedProfile {
    fn key(&self) -> &str {
        &self.key
    }
    fn display_name(&self) -> String {
        let dtype = match self.serving.dtype_bytes {
            d if d <= 0.5 => "int4",
            d if d <= 1.0 => "fp8",
            _ => "fp16",
        };
        format!(
            "{} on {} ×{} {}",
            self.model.display, self.hardware.name, self.serving.tp, dtype
        )
    }
    fn w_s(&self) -> f64 {
        self.w_s
    }
    fn h_s(&self) -> f64 {
        self.h_s
    }
    fn calibration_ctx(&self) -> u32 {
        self.serving.mean_ctx_tokens
    }
    fn chunk(&self) -> u32 {
        self.serving.chunk
    }
    fn blk_size(&self) -> u32 {
        self.serving.blk_size
    }
    fn total_kv_blks(&self) -> u64 {
        self.total_kv_blks
    }
    fn max_slots(&self) -> u32 {
        self.serving.max_slots
    }
    fn cost_per_hr(&self) -> f64 {
        self.hardware.cost_per_gpu_hr * self.serving.tp as f64
    }
    fn gpus(&self) -> u32 {
        self.serving.tp
    }
    fn power(&self) -> PowerModel {
        PowerModel::Tdp {
            tdp_w: self.hardware.tdp_w,
            gpus: self.serving.tp,
            blocks_per_seq: (self.serving.mean_ctx_tokens as f64 / self.serving.blk_size as f64)
                .ceil(),
            total_kv_blks: self.total_kv_blks as f64,
            w_s: self.w_s,
            h_s: self.h_s,
        }
    }
    fn model_name(&self) -> Option<&str> {
        Some(&self.model.name)
    }
    fn max_context(&self) -> Option<u32> {
        // A context past u32 tokens is no limit a request can reach.
        (self.model.max_position > 0)
            .then(|| u32::try_from(self.model.max_position).unwrap_or(u32::MAX))
    }
    fn kv_bytes_per_token(&self) -> Option<f64> {
        let per_gpu = self
            .model
            .kv_bytes_per_token_per_gpu(self.serving.dtype_bytes, self.serving.tp);
        Some(per_gpu * self.serving.tp as f64)
    }
    fn prefill_roofline_s(&self, c: u32, q: u32) -> Option<f64> {
        Some(self.prefill_flops(c, q) / self.peak_flops)
    }
    fn has_roofline(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_70b_on_h100_tp8() {
        let p = ComputedProfile::from_key("h100/llama-3.1-70b/tp8").unwrap();
        let params = 69_501_714_432f64;
        let eff_bw = 0.8 * 3.35e12;
        assert!((p.w_s() - (params * 2.0 / 8.0 / eff_bw + 3e-6 * 80.0)).abs() < 1e-12);
        assert!((p.h_s() - 2048.0 * 327_680.0 / eff_bw / 8.0).abs() < 1e-15);
        let free = (85_899_345_920f64 * 0.9).floor() - params * 2.0 / 8.0 - 411_041_792.0;
        assert_eq!(
            p.total_kv_blks(),
            (free / (327_680.0 / 8.0 * 16.0)).floor() as u64
        );
        assert_eq!(p.cost_per_hr(), 4.02 * 8.0);
        assert_eq!(p.calibration_ctx(), 2048);
        assert_eq!(p.max_slots(), 0);
        // fp8 uses the fp8 peak and halves the KV bytes.
        let f = ComputedProfile::from_key("h100/llama-3.1-70b/tp8/fp8").unwrap();
        assert_eq!(f.kv_bytes_per_token(), Some(163_840.0));
        assert!(
            (f.prefill_roofline_s(512, 0).unwrap() * 2.0 - p.prefill_roofline_s(512, 0).unwrap())
                .abs()
                < 1e-12
        );
    }

    #[test]
    fn weights_larger_than_memory_leave_no_kv() {
        let p = ComputedProfile::from_key("b60/llama-3.1-70b").unwrap();
        assert_eq!(p.total_kv_blks(), 0);
        assert_eq!(p.n_slots(4096), 0);
    }

    #[test]
    fn bad_tp_is_an_error() {
        assert!(ComputedProfile::from_key("h100/llama-3.1-8b/tp0").is_err());
    }

    #[test]
    fn hf_config_file() {
        let scratch = crate::scratch::ScratchDir::new("hf");
        let dir = scratch.path();
        let path = dir.join("config.json");
        std::fs::write(
            &path,
            r#"{"num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
                "hidden_size": 8192, "intermediate_size": 28672, "vocab_size": 128256,
                "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}"#,
        )
        .unwrap();
        let key = format!("h100/{}/tp8", path.display());
        let from_file = ComputedProfile::from_key(&key).unwrap();
        let builtin = ComputedProfile::from_key("h100/llama-3.1-70b/tp8").unwrap();
        assert_eq!(from_file.model().params(), builtin.model().params());
        assert_eq!(from_file.total_kv_blks(), builtin.total_kv_blks());
        std::fs::write(&path, "{\"num_hidden_layers\": 1}").unwrap();
        let e = ComputedProfile::from_key(&key).unwrap_err().to_string();
        assert!(e.contains("config.json"), "{e}");
    }
}

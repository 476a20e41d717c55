//! A serializable summary of every built-in hardware type, model and profile with
//! its derived numbers (what `aisim profiles` lists).

use serde::Serialize;

use super::catalog::{hardware_catalog, manual_profile_catalog, model_catalog};
use super::{ComputedProfile, GpuProfile, ManualProfile};

/// Contexts at which slot counts are listed.
pub const SLOT_CONTEXTS: [u32; 3] = [2048, 8192, 32768];

/// Derived numbers of one profile.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileSummary {
    /// Key it is named by.
    pub key: String,
    /// Display name.
    pub name: String,
    /// `manual` or `computed`.
    pub kind: &'static str,
    /// GPUs in the unit.
    pub gpus: u32,
    /// W, milliseconds.
    pub w_ms: f64,
    /// H, milliseconds.
    pub h_ms: f64,
    /// Calibration context.
    pub calibration_ctx: u32,
    /// Prefill chunk.
    pub chunk: u32,
    /// Tokens per KV block.
    pub blk_size: u32,
    /// KV blocks.
    pub total_kv_blks: u64,
    /// Slot cap (0: none).
    pub max_slots: u32,
    /// `n_slots` at each of [`SLOT_CONTEXTS`].
    pub slots: Vec<(u32, u64)>,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Watts at batch 1.
    pub power_b1_w: f64,
    /// Watts at the slot count of the calibration context.
    pub power_max_w: f64,
    /// KV bytes per token, when the model is known.
    pub kv_bytes_per_token: Option<f64>,
}

impl ProfileSummary {
    /// Summarizes any profile.
    pub fn of(p: &dyn GpuProfile, kind: &'static str) -> ProfileSummary {
        let full = p.n_slots(p.calibration_ctx()).max(1) as f64;
        ProfileSummary {
            key: p.key().to_string(),
            name: p.display_name(),
            kind,
            gpus: p.gpus(),
            w_ms: p.w_s() * 1e3,
            h_ms: p.h_s() * 1e3,
            calibration_ctx: p.calibration_ctx(),
            chunk: p.chunk(),
            blk_size: p.blk_size(),
            total_kv_blks: p.total_kv_blks(),
            max_slots: p.max_slots(),
            slots: SLOT_CONTEXTS.iter().map(|&c| (c, p.n_slots(c))).collect(),
            cost_per_hr: p.cost_per_hr(),
            power_b1_w: p.power().watts(1.0),
            power_max_w: p.power().watts(full),
            kv_bytes_per_token: p.kv_bytes_per_token(),
        }
    }
}

/// One hardware type as listed.
#[derive(Debug, Clone, Serialize)]
pub struct HardwareSummary {
    /// Key.
    pub key: String,
    /// Display name.
    pub name: String,
    /// HBM GiB.
    pub mem_gib: f64,
    /// HBM TB/s.
    pub mem_bw_tb_s: f64,
    /// fp16 TFLOP/s.
    pub fp16_tflops: f64,
    /// fp8 TFLOP/s.
    pub fp8_tflops: f64,
    /// Watts.
    pub tdp_w: f64,
    /// Dollars per GPU-hour.
    pub cost_per_gpu_hr: f64,
}

/// One model as listed.
#[derive(Debug, Clone, Serialize)]
pub struct ModelSummary {
    /// Key.
    pub key: String,
    /// Display name.
    pub name: String,
    /// Parameters.
    pub params: u64,
    /// Active parameters per token.
    pub active_params: u64,
    /// KV bytes per token at 2-byte precision.
    pub kv_bytes_per_token: f64,
    /// Longest context.
    pub max_position: u64,
}

/// Everything `aisim profiles` lists.
#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    /// Schema version of this listing.
    pub schema_version: u32,
    /// GPU types.
    pub hardware: Vec<HardwareSummary>,
    /// Model architectures.
    pub models: Vec<ModelSummary>,
    /// Manual profiles, then computed examples (each model on H100 and H200 at the
    /// smallest tensor-parallel degree that leaves room for KV).
    pub profiles: Vec<ProfileSummary>,
}

/// Builds the listing.
pub fn catalog_summary() -> Catalog {
    let hardware = hardware_catalog()
        .iter()
        .map(|h| HardwareSummary {
            key: h.aliases.first().cloned().unwrap_or_else(|| h.name.clone()),
            name: h.name.clone(),
            mem_gib: h.mem_capacity_bytes as f64 / (1u64 << 30) as f64,
            mem_bw_tb_s: h.mem_bw_bytes_per_s / 1e12,
            fp16_tflops: h.fp16_tflops,
            fp8_tflops: h.fp8_tflops,
            tdp_w: h.tdp_w,
            cost_per_gpu_hr: h.cost_per_gpu_hr,
        })
        .collect();
    let models = model_catalog()
        .iter()
        .map(|m| ModelSummary {
            key: m.name.clone(),
            name: m.display.clone(),
            params: m.params(),
            active_params: m.active_params(),
            kv_bytes_per_token: m.kv_bytes_per_token(2.0),
            max_position: m.max_position,
        })
        .collect();
    let mut profiles: Vec<ProfileSummary> = manual_profile_catalog()
        .iter()
        .filter_map(|p| ManualProfile::by_key(&p.key))
        .map(|p| ProfileSummary::of(&p, "manual"))
        .collect();
    for m in model_catalog() {
        for hw in ["h100", "h200"] {
            let fitting = [1, 2, 4, 8].iter().find_map(|tp| {
                let key = format!("{hw}/{}/tp{tp}", m.name);
                ComputedProfile::from_key(&key)
                    .ok()
                    .filter(|p| p.total_kv_blks() > 0)
            });
            if let Some(p) = fitting {
                profiles.push(ProfileSummary::of(&p, "computed"));
            }
        }
    }
    Catalog {
        schema_version: 1,
        hardware,
        models,
        profiles,
    }
}

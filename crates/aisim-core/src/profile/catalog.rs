//! The built-in catalogs: hardware, model architectures and hand-calibrated
//! profiles, embedded from `data/` (facts from public references).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::model::ModelSpec;

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
    /// How much slower the attention kernel reads decoders' KV when a pass
    /// also holds prompt chunks (one variable-length kernel then serves
    /// both): a property of the GPU's attention kernels, 1 (no slowdown)
    /// unless measured (docs/fidelity.md, "The mixed pass").
    #[serde(default = "no_slowdown", skip_serializing_if = "is_no_slowdown")]
    pub mixed_pass_kv_factor: f64,
}

fn no_slowdown() -> f64 {
    1.0
}

fn is_no_slowdown(v: &f64) -> bool {
    *v == 1.0
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

impl ModelSpec {
    /// Finds a model by name, ignoring case.
    pub fn find(key: &str) -> Option<&'static ModelSpec> {
        model_catalog()
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(key))
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
        assert_eq!(hardware_catalog().len(), 10);
        assert_eq!(HardwareSpec::find("rtx4090").unwrap().name, "RTX-4090");
        assert_eq!(
            HardwareSpec::find("rtxpro6000").unwrap().name,
            "RTX-PRO-6000"
        );
        assert_eq!(HardwareSpec::find("H100").unwrap().name, "H100-SXM");
        assert_eq!(manual_profile_catalog().len(), 3);
        assert!(ModelSpec::find("nope").is_none());
    }
}

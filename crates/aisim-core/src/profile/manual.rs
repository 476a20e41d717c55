//! Hand-calibrated profiles with measured constants.

use super::catalog::{manual_profile_catalog, ManualProfileSpec};
use super::gpu_profile::GpuProfile;
use super::power::PowerModel;

/// A measured serving unit (`a100`, `h100`, `a10g`).
#[derive(Debug, Clone)]
pub struct ManualProfile {
    spec: ManualProfileSpec,
}

impl ManualProfile {
    /// The built-in profile with this key, ignoring case.
    pub fn by_key(key: &str) -> Option<ManualProfile> {
        manual_profile_catalog()
            .iter()
            .find(|p| p.key.eq_ignore_ascii_case(key))
            .map(|spec| ManualProfile { spec: spec.clone() })
    }

    /// A profile from constants of your own.
    pub fn from_spec(spec: ManualProfileSpec) -> ManualProfile {
        ManualProfile { spec }
    }
}

impl GpuProfile for ManualProfile {
    fn key(&self) -> &str {
        &self.spec.key
    }
    fn display_name(&self) -> String {
        self.spec.name.clone()
    }
    fn w_s(&self) -> f64 {
        self.spec.w_s
    }
    fn h_s(&self) -> f64 {
        self.spec.h_s
    }
    fn calibration_ctx(&self) -> u32 {
        self.spec.calibration_ctx
    }
    fn chunk(&self) -> u32 {
        self.spec.chunk
    }
    fn blk_size(&self) -> u32 {
        self.spec.blk_size
    }
    fn total_kv_blks(&self) -> u64 {
        self.spec.total_kv_blks
    }
    fn max_slots(&self) -> u32 {
        self.spec.max_slots
    }
    fn cost_per_hr(&self) -> f64 {
        self.spec.cost_per_hr
    }
    fn gpus(&self) -> u32 {
        1
    }
    fn power(&self) -> PowerModel {
        let p = &self.spec.power;
        PowerModel::Measured {
            idle_w: p.idle_w,
            nominal_w: p.nominal_w,
            logistic_k: p.logistic_k,
            logistic_x0: p.logistic_x0,
            max_slots: self.spec.max_slots,
        }
    }
}

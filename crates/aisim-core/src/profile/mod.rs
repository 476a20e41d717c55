//! GPU profiles: one serving unit (model + hardware + parallel layout + serving
//! configuration) described by the iteration model's constants.

mod catalog;
mod computed;
mod hardware_file;
mod hf_config;
mod manual;
mod model;
mod overrides;
mod power;
mod summary;

use std::fmt::Debug;
use std::sync::Arc;

pub use catalog::{hardware_catalog, manual_profile_catalog, model_catalog, HardwareSpec};
pub use computed::{ComputedProfile, ServingConfig, ATTAINABLE_BANDWIDTH_FRACTION};
pub use manual::ManualProfile;
pub use model::{MlaSpec, ModelSpec, MoeSpec};
pub use overrides::ProfileOverride;
pub use power::PowerModel;
pub use summary::{
    catalog_summary, Catalog, HardwareSummary, ModelSummary, ProfileSummary, SLOT_CONTEXTS,
};

use crate::error::CoreError;

/// A serving unit's constants and the formulas derived from them (engine.md).
pub trait GpuProfile: Debug + Send + Sync {
    /// The key it is named by (`a100`, `h200/llama-3.1-70b/tp8`).
    fn key(&self) -> &str;
    /// Human-readable name.
    fn display_name(&self) -> String;
    /// Fixed cost of one iteration, seconds.
    fn w_s(&self) -> f64;
    /// Per-sequence cost of one iteration at `calibration_ctx`, seconds.
    fn h_s(&self) -> f64;
    /// Context length at which `h_s` was measured.
    fn calibration_ctx(&self) -> u32;
    /// Prompt tokens per prefill iteration.
    fn chunk(&self) -> u32;
    /// Tokens per KV block.
    fn blk_size(&self) -> u32;
    /// KV blocks of the unit.
    fn total_kv_blks(&self) -> u64;
    /// Most sequences at `calibration_ctx` (0: no cap).
    fn max_slots(&self) -> u32;
    /// Dollars per hour of the unit.
    fn cost_per_hr(&self) -> f64;
    /// GPUs in the unit.
    fn gpus(&self) -> u32;
    /// Power draw against batch size.
    fn power(&self) -> PowerModel;
    /// KV bytes per token of the whole unit, when the model is known.
    fn kv_bytes_per_token(&self) -> Option<f64> {
        None
    }
    /// The model it serves (a catalog name, `llama-3.1-70b`), when the
    /// profile knows one: two profiles serve one model when these match.
    fn model_name(&self) -> Option<&str> {
        None
    }
    /// Compute-bound time of a prefill chunk of `c` tokens with `q` already in
    /// context, when the profile knows the architecture.
    fn prefill_roofline_s(&self, _c: u32, _q: u32) -> Option<f64> {
        None
    }
    /// Whether `prefill_roofline_s` answers.
    fn has_roofline(&self) -> bool {
        false
    }

    /// `iter(n, L) = W + H · (L / calibration_ctx) · n`, seconds.
    fn iter_s(&self, n: f64, mean_len: f64) -> f64 {
        self.w_s() + self.h_s() * (mean_len / self.calibration_ctx() as f64) * n
    }

    /// `iter(n) = W + H · n` (sequences at the calibration context).
    fn iter_n_s(&self, n: f64) -> f64 {
        self.w_s() + self.h_s() * n
    }

    /// Concurrent sequences one unit holds at context `max_ctx` (integer division).
    fn n_slots(&self, max_ctx: u32) -> u64 {
        slots_at(self, max_ctx)
    }

    /// `(ceil(l_in / chunk) + l_out) × iter(n_slots(max_ctx), l_in + l_out)`, seconds.
    fn service_time_s(&self, l_in: u32, l_out: u32, max_ctx: u32) -> f64 {
        let iters = (l_in as u64).div_ceil(self.chunk().max(1) as u64) + l_out as u64;
        iters as f64 * self.iter_s(self.n_slots(max_ctx) as f64, l_in as f64 + l_out as f64)
    }

    /// `n_slots / service_time`, requests per second.
    fn throughput_rps(&self, max_ctx: u32, mean_in: u32, mean_out: u32) -> f64 {
        self.n_slots(max_ctx) as f64 / self.service_time_s(mean_in, mean_out, max_ctx)
    }
}

/// `min(max_slots × calibration_ctx / max_ctx, total_kv_blks / ceil(max_ctx / blk_size))`
/// with integer division (no slot cap when `max_slots` is 0).
pub(crate) fn slots_at<P: GpuProfile + ?Sized>(p: &P, max_ctx: u32) -> u64 {
    let max_ctx = max_ctx.max(1) as u64;
    let by_kv = p.total_kv_blks() / max_ctx.div_ceil(p.blk_size().max(1) as u64);
    match p.max_slots() {
        0 => by_kv,
        s => by_kv.min(s as u64 * p.calibration_ctx() as u64 / max_ctx),
    }
}

/// Resolves a profile by key: a manual profile (`a100`, `h100`, `a10g`) or a
/// computed one `HARDWARE/MODEL[/tpN][/fp8|int4|fp16]`, where `MODEL` is a catalog
/// name or the path of a HuggingFace `config.json`.
pub fn resolve_profile(key: &str) -> Result<Arc<dyn GpuProfile>, CoreError> {
    let key = key.trim();
    if !key.contains('/') {
        return match ManualProfile::by_key(key) {
            Some(p) => Ok(Arc::new(p)),
            None => Err(unknown(key)),
        };
    }
    Ok(Arc::new(ComputedProfile::from_key(key)?))
}

pub(crate) fn unknown(key: &str) -> CoreError {
    let manual: Vec<&str> = manual_profile_catalog()
        .iter()
        .map(|p| p.key.as_str())
        .collect();
    let hw: Vec<&str> = hardware_catalog()
        .iter()
        .flat_map(|h| h.aliases.first().map(String::as_str))
        .collect();
    let models: Vec<&str> = model_catalog().iter().map(|m| m.name.as_str()).collect();
    CoreError::UnknownProfile {
        name: key.to_string(),
        hint: format!(
            "use a manual profile ({}) or HARDWARE/MODEL[/tpN][/fp8|int4] with hardware one of {} and model one of {} or a path to a HuggingFace config.json; `aisim profiles` lists them",
            manual.join(", "),
            hw.join(", "),
            models.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn manual_profile_check_values() {
        for (key, st, tp) in [
            ("a100", 6.065200, 42.2080),
            ("h100", 3.001760, 85.2833),
            ("a10g", 5.882400, 21.7598),
        ] {
            let p = resolve_profile(key).unwrap();
            let s = p.service_time_s(512, 256, 4096);
            assert!((s - st).abs() < 5e-7, "{key} service time {s}");
            let t = p.throughput_rps(4096, 512, 256);
            assert!((t - tp).abs() < 5e-5, "{key} throughput {t}");
        }
        assert_eq!(resolve_profile("a100").unwrap().n_slots(8192), 128);
        assert_eq!(resolve_profile("h100").unwrap().n_slots(8192), 128);
    }

    #[test]
    fn power_check_values() {
        let h100 = resolve_profile("h100").unwrap().power();
        assert!(rel(h100.watts(1.0), 304.4) < 1e-3, "{}", h100.watts(1.0));
        assert!(
            rel(h100.watts(128.0), 582.8) < 1e-3,
            "{}",
            h100.watts(128.0)
        );
        let a100 = resolve_profile("a100").unwrap().power();
        assert!(rel(a100.watts(32.0), 369.1) < 1e-3, "{}", a100.watts(32.0));
    }

    #[test]
    fn unknown_profile_names_the_alternatives() {
        let e = resolve_profile("z900").unwrap_err().to_string();
        assert!(
            e.contains("z900") && e.contains("a100") && e.contains("llama-3.1-70b"),
            "{e}"
        );
        let e = resolve_profile("h100/no-such-model")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no-such-model"), "{e}");
        let e = resolve_profile("q100/llama-3.1-8b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("q100"), "{e}");
    }
}

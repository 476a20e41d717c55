//! GPU profiles: one serving unit (model + hardware + parallel layout + serving
//! configuration) described by the iteration model's constants.

mod catalog;
mod computed;
mod gpu_profile;
mod hardware_file;
mod hf_config;
mod manual;
mod model;
mod overrides;
mod power;
mod summary;
mod unknown;

use std::sync::Arc;

pub use catalog::{hardware_catalog, manual_profile_catalog, model_catalog, HardwareSpec};
pub use computed::{ComputedProfile, ServingConfig, ATTAINABLE_BANDWIDTH_FRACTION};
pub use gpu_profile::GpuProfile;
pub use manual::ManualProfile;
pub use model::{MlaSpec, ModelSpec, MoeSpec};
pub use overrides::ProfileOverride;
pub use power::PowerModel;
pub use summary::{
    catalog_summary, Catalog, HardwareSummary, ModelSummary, ProfileSummary, SLOT_CONTEXTS,
};

use crate::error::CoreError;
use unknown::unknown;

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

//! The error for a profile key that names nothing. Both `resolve_profile`
//! and `ComputedProfile::from_key` report it, so it lives below both.

use super::catalog::{hardware_catalog, manual_profile_catalog, model_catalog};
use crate::error::CoreError;

/// An unknown profile `key`, with a hint listing the manual profiles,
/// hardware and models it could have named.
pub(crate) fn unknown(key: &str) -> CoreError {
    let manual: Vec<&str> = manual_profile_catalog()
        .iter()
        .map(|p| p.key.as_str())
        .collect();
    CoreError::UnknownProfile {
        name: key.to_string(),
        hint: format!(
            "use a manual profile ({}) or {}",
            manual.join(", "),
            computed_forms()
        ),
    }
}

/// An unknown profile `key` where only a computed one will do (a key with a
/// model part, or the profile of the physics and fitted timings): the hint
/// lists the hardware and models, not the manual profiles.
pub(crate) fn unknown_computed(key: &str) -> CoreError {
    CoreError::UnknownProfile {
        name: key.to_string(),
        hint: format!("use {}", computed_forms()),
    }
}

/// `HARDWARE/MODEL[/tpN][/fp8|int4]` and the names each part may take.
fn computed_forms() -> String {
    let hw: Vec<&str> = hardware_catalog()
        .iter()
        .flat_map(|h| h.aliases.first().map(String::as_str))
        .collect();
    let models: Vec<&str> = model_catalog().iter().map(|m| m.name.as_str()).collect();
    format!(
        "HARDWARE/MODEL[/tpN][/fp8|int4] with hardware one of {} and model one of {} or a path to a HuggingFace config.json; `aisim profiles` lists them",
        hw.join(", "),
        models.join(", ")
    )
}

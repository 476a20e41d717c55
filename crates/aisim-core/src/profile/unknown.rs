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

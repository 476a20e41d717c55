//! Why a saturation search could not run (`SaturateError`): in a file of its
//! own, as sweep's and fidelity's errors are, so that the probe, which
//! returns it, does not import the module that drives the probes.

use aisim_replay::ReplayError;

use super::setting::Setting;

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SaturateError {
    /// A search setting out of range; `setting` is its field in the report.
    #[error("`{setting}`: {reason}")]
    Setting {
        /// The field (`tolerance`, `points`, `max_probes`, `attainment`).
        setting: &'static str,
        /// What is allowed.
        reason: String,
    },
    /// A workload or spec the search cannot scale.
    #[error("{0}")]
    Workload(String),
    /// The trace could not be read for its rate.
    #[error(transparent)]
    Trace(ReplayError),
    /// A probe's replay failed.
    #[error("the probe at {} req/s (admission.speedup {}) failed: {source}", aisim_core::number::float(.at.rate_rps), aisim_core::number::float(.at.speedup))]
    Probe {
        /// Where it ran.
        at: Setting,
        /// Its error.
        source: ReplayError,
    },
}

impl SaturateError {
    /// Whether this is aisim's bug rather than the user's input.
    pub fn is_internal(&self) -> bool {
        match self {
            SaturateError::Setting { .. } | SaturateError::Workload(_) => false,
            SaturateError::Trace(e) | SaturateError::Probe { source: e, .. } => e.is_internal(),
        }
    }
}

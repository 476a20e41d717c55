//! Timing models: the duration of one pass from its composition.

mod fixed;
mod iteration;
mod layers;
mod pass;
mod physics;
mod polynomial;
mod profile_csv;
mod table;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use fixed::FixedTiming;
pub use iteration::IterationTiming;
pub use layers::LayerTiming;
pub use pass::{PassShape, PassTime, PrefillChunk, TimingModel};
pub use physics::{
    allreduce_latency_s, PhysicsCoefficients, PhysicsTerms, PhysicsTiming, ALLREDUCE_HOP_S,
    ALLREDUCE_LATENCY_S, ATTAINABLE_COMPUTE_FRACTION, COEFFICIENT_NAMES,
};
pub use polynomial::PolynomialTiming;
pub use table::TableTiming;

use crate::error::CoreError;
use crate::profile::{resolve_profile, ComputedProfile};

/// A timing model chosen by name in a spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimingSpec {
    /// Dynamo mocker's uncalibrated polynomial.
    #[default]
    Polynomial,
    /// Constant time per pass part.
    Fixed {
        /// Milliseconds per pass that computes prompt tokens.
        prefill_ms: f64,
        /// Milliseconds per pass that has decoding requests.
        decode_ms: f64,
    },
    /// W/H iteration model of a GPU profile (`a100`, `h200/llama-3.1-70b/tp8`, ...).
    Iteration {
        /// Profile key.
        profile: String,
    },
    /// Profiled table from a JSON file.
    Table {
        /// Path of the table file.
        path: PathBuf,
    },
    /// Physics model of a computed profile (`h100/llama-3.1-8b`, ...) with
    /// coefficients (default: the zero-shot model; fitted ones from `aisim calibrate`).
    Physics {
        /// Profile key `HARDWARE/MODEL[/tpN][/fp8|int4]`.
        profile: String,
        /// Coefficients of the basis terms; left out: the defaults.
        #[serde(default)]
        coefficients: PhysicsCoefficients,
        /// The profiles the coefficients were fitted on (a `fitted:FILE`'s
        /// `profiles`; left out: none recorded). Used with another
        /// profile they describe other hardware or another model, and the
        /// replay warns (`TimingSpec::fit_warning`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fitted_on: Vec<String>,
    },
    /// Per-layer GPU profiles (LLMServingSim's CSV shape) in a folder.
    Layers {
        /// Folder holding `dense.csv`, `attention.csv` and `per_sequence.csv`.
        dir: PathBuf,
        /// Decoder layers of the model; left out: from the folder's `meta.yaml`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        layers: Option<u32>,
    },
}

impl TimingSpec {
    /// Builds the model (reading files and catalogs as needed).
    pub fn build(&self) -> Result<Arc<dyn TimingModel>, CoreError> {
        Ok(match self {
            TimingSpec::Polynomial => Arc::new(PolynomialTiming),
            TimingSpec::Fixed {
                prefill_ms,
                decode_ms,
            } => Arc::new(FixedTiming::new(*prefill_ms, *decode_ms)?),
            TimingSpec::Iteration { profile } => {
                Arc::new(IterationTiming::from_profile(resolve_profile(profile)?))
            }
            TimingSpec::Table { path } => Arc::new(TableTiming::from_file(path)?),
            TimingSpec::Physics {
                profile,
                coefficients,
                ..
            } => Arc::new(PhysicsTiming::new(
                &ComputedProfile::from_key(profile)?,
                *coefficients,
            )?),
            TimingSpec::Layers { dir, layers } => Arc::new(LayerTiming::from_dir(dir, *layers)?),
        })
    }

    /// A warning when fitted coefficients are used with a profile they were
    /// not fitted on (one profile written two ways, `H100/…` or with the
    /// default `/tp1`, is the same profile); `None` otherwise.
    pub fn fit_warning(&self) -> Option<String> {
        let TimingSpec::Physics {
            profile, fitted_on, ..
        } = self
        else {
            return None;
        };
        let norm = |k: &str| {
            let k = k.trim().to_ascii_lowercase();
            k.strip_suffix("/tp1").map(str::to_string).unwrap_or(k)
        };
        (!fitted_on.is_empty() && !fitted_on.iter().any(|f| norm(f) == norm(profile))).then(|| {
            format!(
                "the physics coefficients were fitted on {}, and are used here with {profile}: they describe other hardware or another model",
                fitted_on.join(", ")
            )
        })
    }

    /// The GPU profile the timing comes from, if any (its tensor parallelism
    /// and KV memory then describe the engine).
    pub fn profile_key(&self) -> Option<&str> {
        match self {
            TimingSpec::Iteration { profile } | TimingSpec::Physics { profile, .. } => {
                Some(profile)
            }
            TimingSpec::Polynomial
            | TimingSpec::Fixed { .. }
            | TimingSpec::Table { .. }
            | TimingSpec::Layers { .. } => None,
        }
    }
}

//! Timing models: the duration of one pass from its composition.

mod fixed;
mod iteration;
mod layers;
mod physics;
mod polynomial;
mod profile_csv;
mod table;

use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use fixed::FixedTiming;
pub use iteration::IterationTiming;
pub use layers::LayerTiming;
pub use physics::{
    PhysicsCoefficients, PhysicsTerms, PhysicsTiming, ALLREDUCE_LATENCY_S,
    ATTAINABLE_COMPUTE_FRACTION, COEFFICIENT_NAMES, MIXED_PASS_DECODE_KV_FACTOR,
};
pub use polynomial::PolynomialTiming;
pub use table::TableTiming;

use crate::error::CoreError;
use crate::profile::{resolve_profile, ComputedProfile};

/// Prompt work of one request in a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefillChunk {
    /// Tokens already in the request's KV before this pass (cached prefix or earlier chunks).
    pub context_before: u32,
    /// Prompt tokens computed in this pass.
    pub tokens: u32,
}

/// What one pass (of one rank) computes.
#[derive(Debug, Clone, Copy)]
pub struct PassShape<'a> {
    /// Requests computing prompt tokens, in batch order.
    pub prefill: &'a [PrefillChunk],
    /// Requests generating one token.
    pub decode_requests: u32,
    /// Sum of the context lengths (prompt + generated) of the decoding requests.
    pub decode_context_tokens: u64,
    /// KV capacity of the rank in tokens (for occupancy-based models).
    pub kv_capacity_tokens: u64,
}

impl PassShape<'_> {
    /// Prompt tokens computed in the pass.
    pub fn prefill_tokens(&self) -> u64 {
        self.prefill.iter().map(|c| c.tokens as u64).sum()
    }
}

/// A pass duration split into its prompt and decode parts (seconds), so the
/// engine can apply `decode_speedup_ratio` to the decode part only.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PassTime {
    /// Seconds spent on prompt tokens.
    pub prefill_s: f64,
    /// Seconds spent on decoding.
    pub decode_s: f64,
}

impl PassTime {
    /// `seconds` for a whole pass, booked as prefill time when the pass
    /// computes prompt tokens and as decode time otherwise (so
    /// `decode_speedup_ratio` applies to pure decode passes).
    pub fn whole_pass(shape: &PassShape<'_>, seconds: f64) -> PassTime {
        if shape.prefill.is_empty() {
            PassTime {
                prefill_s: 0.0,
                decode_s: seconds,
            }
        } else {
            PassTime {
                prefill_s: seconds,
                decode_s: 0.0,
            }
        }
    }
}

/// A model of how long a pass takes. Implement it to plug in a model of your own.
///
/// ```
/// use aisim_core::timing::{PassShape, PassTime, TimingModel};
/// #[derive(Debug)]
/// struct TenMsPerPass;
/// impl TimingModel for TenMsPerPass {
///     fn name(&self) -> &str { "ten-ms" }
///     fn pass_time(&self, _shape: &PassShape<'_>) -> PassTime {
///         PassTime { prefill_s: 0.0, decode_s: 0.010 }
///     }
/// }
/// ```
pub trait TimingModel: Debug + Send + Sync {
    /// Short name for reports and errors.
    fn name(&self) -> &str;
    /// Duration of a pass. NaN, infinite or negative values are reported as errors
    /// by the engine.
    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime;
}

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
            } => Arc::new(PhysicsTiming::new(
                &ComputedProfile::from_key(profile)?,
                *coefficients,
            )?),
            TimingSpec::Layers { dir, layers } => Arc::new(LayerTiming::from_dir(dir, *layers)?),
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

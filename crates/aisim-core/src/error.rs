//! Errors of the engine crate: each names what was wrong and where.

use std::path::PathBuf;

use crate::number::{float, Quoted};

/// Everything that can go wrong building or driving an engine.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A configuration value is out of range or inconsistent.
    #[error("invalid engine configuration: `{field}` = {value}: {reason}")]
    InvalidConfig {
        /// The field, as named in the spec / on the command line.
        field: &'static str,
        /// The offending value, rendered.
        value: String,
        /// Why it is wrong and what would be right.
        reason: String,
    },
    /// A timing model produced NaN, infinity or a negative duration.
    #[error("timing model `{model}` returned an invalid pass duration ({} s) for a pass with {prefill_tokens} prompt tokens and {decode_requests} decoding requests", float(*.value))]
    InvalidDuration {
        /// Name of the timing model.
        model: String,
        /// The value it returned, in seconds.
        value: f64,
        /// Prompt tokens computed in the pass.
        prefill_tokens: u64,
        /// Decoding requests in the pass.
        decode_requests: u32,
    },
    /// A pass would end past the clock's limit (2^63 ns): the timing made
    /// passes that long, and the run would never end.
    #[error("the run's clock would pass its limit of 2^63 ns (292 years): a pass of {} s under timing model `{model}` starts at {} s; passes this long come from the timing (its fixed times, coefficients or pass overhead)", float(*.pass_s), float(*.at_s))]
    ClockLimit {
        /// Name of the timing model.
        model: String,
        /// The pass's length, seconds.
        pass_s: f64,
        /// When it starts, seconds.
        at_s: f64,
    },
    /// A profile name that no catalog knows.
    #[error("unknown profile `{name}`: {hint}")]
    UnknownProfile {
        /// The name as given.
        name: String,
        /// What names are accepted.
        hint: String,
    },
    /// A manual profile (GPU constants, no model) where the model is needed:
    /// the physics and fitted timings work from the model's architecture.
    #[error("profile `{name}` names no model: {hint}")]
    ProfileWithoutModel {
        /// The name as given.
        name: String,
        /// What to give instead.
        hint: String,
    },
    /// A data file (timing table, HuggingFace config, catalog) could not be used.
    #[error("{}: {field}: {reason}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// The field or point that is wrong (e.g. `prefill[3]`).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file could not be read at all.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A data file that is not readable text (too large, not UTF-8).
    #[error(transparent)]
    Text(#[from] crate::text_file::TextFileError),
}

impl CoreError {
    /// Whether this is aisim's bug rather than the user's input. None is: a
    /// bad pass duration comes from the timing model the user chose (a table,
    /// fitted coefficients) and its message names that model.
    pub fn is_internal(&self) -> bool {
        match self {
            CoreError::InvalidConfig { .. }
            | CoreError::InvalidDuration { .. }
            | CoreError::ClockLimit { .. }
            | CoreError::UnknownProfile { .. }
            | CoreError::ProfileWithoutModel { .. }
            | CoreError::BadFile { .. }
            | CoreError::Io { .. }
            | CoreError::Text(_) => false,
        }
    }

    pub(crate) fn config(
        field: &'static str,
        value: impl Quoted,
        reason: impl Into<String>,
    ) -> Self {
        CoreError::InvalidConfig {
            field,
            value: value.quoted(),
            reason: reason.into(),
        }
    }
}

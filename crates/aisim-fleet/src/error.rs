//! Errors of fleet planning: each names the input and what to do.

use std::path::PathBuf;

use aisim_core::number::Quoted;

/// Everything that can go wrong planning a fleet.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// A CDF that is not a distribution.
    #[error("{source_name}: point {index}: {reason}")]
    BadCdf {
        /// Where the CDF came from (built-in name or file).
        source_name: String,
        /// 0-based point index.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A parameter out of range.
    #[error("invalid `{field}` = {value}: {reason}")]
    Invalid {
        /// The parameter (as on the command line).
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// A pool's field out of range.
    #[error("pool {index} (`{id}`): `{field}` = {value}: {reason}")]
    Pool {
        /// 0-based position among the pools.
        index: usize,
        /// Its id.
        id: String,
        /// The field.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// A file that does not parse or lacks a field.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong (with line and column when known).
        reason: String,
    },
    /// A file that cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The caller's cancel flag stopped a simulation (`aisim_core::cancel`).
    #[error("interrupted")]
    Cancelled,
    /// An engine-side error (unknown profile, ...).
    #[error(transparent)]
    Core(#[from] aisim_core::CoreError),
    /// A trace that could not be read.
    #[error(transparent)]
    Replay(#[from] aisim_replay::ReplayError),
}

impl FleetError {
    /// Whether this is aisim's bug (exit 1) rather than the user's input (exit 2).
    pub fn is_internal(&self) -> bool {
        match self {
            FleetError::Core(e) => e.is_internal(),
            FleetError::Replay(e) => e.is_internal(),
            FleetError::BadCdf { .. }
            | FleetError::Invalid { .. }
            | FleetError::Pool { .. }
            | FleetError::File { .. }
            | FleetError::Io { .. }
            | FleetError::Cancelled => false,
        }
    }

    pub(crate) fn invalid(
        field: &'static str,
        value: impl Quoted,
        reason: impl Into<String>,
    ) -> FleetError {
        FleetError::Invalid {
            field,
            value: value.quoted(),
            reason: reason.into(),
        }
    }
}

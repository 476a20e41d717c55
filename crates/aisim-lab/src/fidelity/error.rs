//! Errors of measured runs, imports, validation and calibration.

use std::path::PathBuf;

use aisim_replay::ReplayError;

/// What can go wrong with a measured run or a fit.
#[derive(Debug, thiserror::Error)]
pub enum FidelityError {
    /// A field of a measured-run or fitted-coefficients file that is missing
    /// or wrong.
    #[error("{}: field `{field}`: {reason}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// The field (dotted path).
        field: String,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// A run whose measurement holds nothing to compare with a replay.
    #[error("run `{run}`: nothing to compare: {reason}")]
    NothingToCompare {
        /// The run's name.
        run: String,
        /// Why.
        reason: String,
    },
    /// A fit under which the simulated server cannot carry the load its
    /// own runs measured: it is refused, not returned.
    #[error("the fit is refused: {reason}")]
    Overloaded {
        /// Which run, and what the fitted model did with it.
        reason: String,
    },
    /// Replaying or reading something for a run failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

impl FidelityError {
    /// Whether this is aisim's bug (exit 1) rather than the input (exit 2).
    pub fn is_internal(&self) -> bool {
        match self {
            FidelityError::Field { .. }
            | FidelityError::NothingToCompare { .. }
            | FidelityError::Overloaded { .. } => false,
            FidelityError::Replay(e) => e.is_internal(),
        }
    }

    pub(crate) fn field(
        path: &std::path::Path,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> FidelityError {
        FidelityError::Field {
            path: path.to_path_buf(),
            field: field.into(),
            reason: reason.into(),
        }
    }
}

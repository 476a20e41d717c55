//! What can stop a sweep: each error names the file (grid, plan, result),
//! the axis or the run, and the value.

use std::path::PathBuf;

use aisim_replay::ReplayError;

/// Why a sweep could not be planned, run or merged.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A grid, plan or result file that does not parse or breaks a rule of
    /// its format.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line (and column) when it has one.
        reason: String,
    },
    /// A file or folder that cannot be read, created or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done (`cannot read`, `cannot write`).
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A failure in a results folder once it exists (a result that cannot
    /// be written or renamed, disk full; a leftover that cannot be
    /// removed): not the input's fault, so the CLI exits 1 for it
    /// (docs/errors.md). A folder that cannot be created is [`Io`], the
    /// user's `--out`, as for any output file.
    ///
    /// [`Io`]: SweepError::Io
    #[error("{what} {}: {source}", path.display())]
    Write {
        /// What was being done (`cannot write`, `cannot remove`).
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// One run of the grid whose spec is refused (an unknown field, a value
    /// out of range, a trace that does not read), found at plan time.
    #[error("{}: run {id} ({axes}): {source}", grid.display())]
    Run {
        /// The grid file.
        grid: PathBuf,
        /// The run's id.
        id: String,
        /// Its axis values, `axis = value, ...`, the one at fault first
        /// when the error names it.
        axes: String,
        /// Why its spec is refused.
        source: Box<ReplayError>,
    },
    /// A replay of the plan that failed while it ran.
    #[error("run {id} of {}: {source}", plan.display())]
    Replay {
        /// The plan file.
        plan: PathBuf,
        /// The run's id.
        id: String,
        /// Its error.
        source: Box<ReplayError>,
    },
    /// A shard given by `--shard`, `--shards` or a scheduler's variable
    /// that is malformed or missing.
    #[error("{name}: {reason}")]
    Shard {
        /// The flag or environment variable.
        name: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// Results that do not make up their plan: ids missing or present more
    /// than once, or results of several plans.
    #[error("{reason}")]
    Incomplete {
        /// Which ids (or plans), listed.
        reason: String,
    },
}

impl SweepError {
    /// Whether this is aisim's bug rather than the user's input.
    pub fn is_internal(&self) -> bool {
        match self {
            SweepError::Run { source, .. } | SweepError::Replay { source, .. } => {
                source.is_internal()
            }
            SweepError::File { .. }
            | SweepError::Io { .. }
            | SweepError::Write { .. }
            | SweepError::Shard { .. }
            | SweepError::Incomplete { .. } => false,
        }
    }

    pub(crate) fn file(path: impl Into<PathBuf>, reason: impl Into<String>) -> SweepError {
        SweepError::File {
            path: path.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn write(
        what: &'static str,
        path: impl Into<PathBuf>,
        e: std::io::Error,
    ) -> SweepError {
        SweepError::Write {
            what,
            path: path.into(),
            source: e,
        }
    }

    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
        e: std::io::Error,
    ) -> SweepError {
        SweepError::Io {
            what,
            path: path.into(),
            source: e,
        }
    }
}

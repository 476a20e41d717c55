//! Errors of the replay crate: each names the file, line and field, or the spec
//! field, and what to do about it.

use std::path::PathBuf;

use aisim_core::CoreError;

/// Everything that can stop a replay before or while it runs.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A bad row in a trace file.
    #[error("{}:{line}: field `{field}`: {reason}", path.display())]
    Trace {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number (the header is line 1 in CSV files).
        line: usize,
        /// The field that is wrong.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A trace file that cannot be used at all.
    #[error("{}: {reason}", path.display())]
    TraceFile {
        /// The trace file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A spec value that is out of range or inconsistent.
    #[error("invalid replay spec: `{field}`: {reason}")]
    Spec {
        /// The spec field (dotted path).
        field: String,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// A spec file that does not parse.
    #[error("{}: {reason}", path.display())]
    SpecFile {
        /// The spec file.
        path: PathBuf,
        /// The parse error, with line and column.
        reason: String,
    },
    /// A file that cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An engine error (configuration, timing model).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A broken invariant of the simulator (e.g. an engine that stalls): a
    /// bug in aisim, not in the input.
    #[error("internal error: {reason}; this is a bug in aisim, please report it with the spec")]
    Internal {
        /// What broke.
        reason: String,
    },
    /// A placement policy chose a worker or DP rank that does not exist: a
    /// bug in the policy (built-in or injected), not in the input.
    #[error("internal error: placement policy `{policy}` chose worker {worker} rank {rank} of the {pool} pool, but there are {workers} workers of {dp_size} ranks; this is a bug in the policy")]
    Placement {
        /// The policy's `name()`.
        policy: String,
        /// The pool it placed on (`workers` when aggregated, `prefill` or
        /// `decode` when disaggregated).
        pool: String,
        /// The worker it chose.
        worker: u32,
        /// The rank it chose.
        rank: u32,
        /// Workers in the topology.
        workers: u32,
        /// DP ranks per worker.
        dp_size: u32,
    },
    /// Streamed per-request records could not be written (the run stopped).
    #[error("cannot write the per-request records: {0}")]
    Output(#[source] std::io::Error),
    /// The caller's cancel flag stopped the run (`aisim_core::cancel`).
    #[error("interrupted")]
    Cancelled,
}

impl ReplayError {
    /// Whether this is aisim's bug (exit 1) rather than the user's input (exit 2).
    pub fn is_internal(&self) -> bool {
        match self {
            ReplayError::Internal { .. } | ReplayError::Placement { .. } => true,
            ReplayError::Core(e) => e.is_internal(),
            ReplayError::Trace { .. }
            | ReplayError::TraceFile { .. }
            | ReplayError::Spec { .. }
            | ReplayError::SpecFile { .. }
            | ReplayError::Io { .. }
            | ReplayError::Output(_)
            | ReplayError::Cancelled => false,
        }
    }

    pub(crate) fn spec(field: impl Into<String>, reason: impl Into<String>) -> ReplayError {
        ReplayError::Spec {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

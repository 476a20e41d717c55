//! Workloads: where requests come from. A workload hands out first turns in
//! planned-arrival order and, when a turn ends, the next turn of its session.

pub mod clock;
mod demo;
pub mod random;
pub mod synthetic;
mod trace_source;

use aisim_core::{Request, SimDuration, SimTime};

pub use demo::{demo_trace, DEMO_TRACE_NAME};
pub use synthetic::SyntheticWorkload;
pub use trace_source::TraceWorkload;

use crate::error::ReplayError;
use crate::per_request::TraceRows;
use crate::spec::{ReplaySpec, WorkloadSpec};
use crate::trace::{read_trace, TraceData, TraceNotes};

/// One request as the workload offers it.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The request; `arrival` is its planned arrival for first turns.
    pub request: Request,
    /// Turn index within its session (0 for the first).
    pub turn: u32,
    /// For later turns: their time on the (normalized, sped-up) trace clock.
    pub trace_at: Option<SimTime>,
    /// Think time before this turn, from the row (sped up).
    pub think: Option<SimDuration>,
    /// For later turns: the gap to the previous turn on the trace clock, the
    /// fallback think time.
    pub trace_gap: Option<SimDuration>,
}

/// A source of requests.
pub trait Workload {
    /// Planned arrival of the next first turn.
    fn peek_root(&self) -> Option<SimTime>;
    /// The next first turn, in planned-arrival order.
    fn next_root(&mut self) -> Option<Offer>;
    /// The turn after `prev` in its session, if any. Takes the ended turn
    /// whole, so a next turn can reuse what it carries (its block ids) instead
    /// of copying it: a session's cost stays linear in its turns.
    fn next_turn(&mut self, prev: Offer) -> Option<Offer>;
    /// Whether a turn may follow another (the workload has sessions).
    fn may_have_sessions(&self) -> bool;
    /// Requests (of every turn) not yet handed out; they count as offered.
    fn remaining(&self) -> u64;
    /// Rows skipped on purpose while reading (BurstGPT failed requests).
    fn skipped_rows(&self) -> u64 {
        0
    }
    /// Why the workload stopped early, if it did (a time beyond the clock);
    /// the run then fails with it.
    fn take_failure(&mut self) -> Option<ReplayError> {
        None
    }
    /// What reading the trace counted without refusing it.
    fn notes(&self) -> TraceNotes {
        TraceNotes::default()
    }
    /// The trace row of each request, by id, for per-request records
    /// (`None`: the requests come from no file).
    fn trace_rows(&self) -> Option<TraceRows> {
        None
    }
}

/// Builds the workload a spec describes.
pub fn build_workload(spec: &ReplaySpec) -> Result<Box<dyn Workload>, ReplayError> {
    build_workload_with(spec, None)
}

/// Reads the trace a spec's workload names (the demo's too): `None` for a
/// generated workload. What [`build_workload_with`] takes, so several runs
/// of one trace read it once.
pub fn load_trace(spec: &WorkloadSpec) -> Result<Option<TraceData>, ReplayError> {
    Ok(match spec {
        WorkloadSpec::Demo => Some(demo_trace()?),
        WorkloadSpec::Trace {
            path,
            format,
            trace_block_size,
        } => Some(read_trace_logged(path, *format, *trace_block_size)?),
        WorkloadSpec::Synthetic(_) => None,
    })
}

/// [`build_workload`] from a trace already read by [`load_trace`] of the
/// same workload spec, when `loaded` is given (a copy of its rows is taken).
pub fn build_workload_with(
    spec: &ReplaySpec,
    loaded: Option<&TraceData>,
) -> Result<Box<dyn Workload>, ReplayError> {
    let speedup = spec.admission.speedup;
    if let (Some(trace), WorkloadSpec::Demo | WorkloadSpec::Trace { .. }) = (loaded, &spec.workload)
    {
        return Ok(Box::new(TraceWorkload::new(trace.clone(), speedup)?));
    }
    Ok(match &spec.workload {
        WorkloadSpec::Demo => Box::new(TraceWorkload::new(demo_trace()?, speedup)?),
        WorkloadSpec::Trace {
            path,
            format,
            trace_block_size,
        } => Box::new(TraceWorkload::new(
            read_trace_logged(path, *format, *trace_block_size)?,
            speedup,
        )?),
        WorkloadSpec::Synthetic(s) => {
            Box::new(SyntheticWorkload::new(s.clone(), spec.seed, speedup))
        }
    })
}

/// Reads a trace inside a `load_trace` span and logs what it read.
fn read_trace_logged(
    path: &std::path::Path,
    format: Option<crate::trace::TraceFormat>,
    trace_block_size: Option<u32>,
) -> Result<crate::trace::TraceData, ReplayError> {
    let started = std::time::Instant::now();
    let _span = tracing::info_span!("load_trace", path = %path.display()).entered();
    let trace = read_trace(path, format, trace_block_size)?;
    tracing::info!(
        format = ?trace.format,
        rows = trace.records.len(),
        skipped = trace.skipped_failed,
        bytes = std::fs::metadata(path).map_or(0, |m| m.len()),
        wall_ms = started.elapsed().as_millis() as u64,
        "trace read"
    );
    Ok(trace)
}

/// Milliseconds to a rounded duration. Every input is checked against the
/// clock first (`clock.rs`, `ReplaySpec::validate`), so the fallback is never
/// reached.
pub(crate) fn ms_to_duration(ms: f64) -> SimDuration {
    SimDuration::from_secs_f64(ms.max(0.0) * 1e-3).unwrap_or(SimDuration(u64::MAX / 4))
}

//! Workloads: where requests come from. A workload hands out first turns in
//! planned-arrival order and, when a turn ends, the next turn of its session.

pub mod clock;
mod demo;
pub mod random;
mod source;
pub mod synthetic;
mod trace_source;

pub(crate) use clock::ms_to_duration;
pub use demo::{demo_trace, DEMO_TRACE_NAME};
pub use source::{Offer, Workload};
pub use synthetic::SyntheticWorkload;
pub(crate) use trace_source::trace_rows;
pub use trace_source::TraceWorkload;

use crate::error::ReplayError;
use crate::spec::{ReplaySpec, WorkloadSpec};
use crate::trace::{read_trace, TraceData};

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

/// `spec`'s workload from its trace, read already (`loaded`; read now when
/// `None`): moved out of the `Arc` when nothing else holds it (no copy),
/// or, `shared`, left there, each request copying its hash ids as it is
/// offered (the parts of a split run share one trace). A generated
/// workload reads no trace.
pub(crate) fn workload_of_loaded(
    spec: &ReplaySpec,
    loaded: Option<std::sync::Arc<TraceData>>,
    shared: bool,
) -> Result<Box<dyn Workload>, ReplayError> {
    let (Some(trace), WorkloadSpec::Demo | WorkloadSpec::Trace { .. }) = (loaded, &spec.workload)
    else {
        return build_workload_with(spec, None);
    };
    let speedup = spec.admission.speedup;
    if shared {
        return Ok(Box::new(TraceWorkload::shared(trace, speedup)?));
    }
    match std::sync::Arc::try_unwrap(trace) {
        Ok(t) => Ok(Box::new(TraceWorkload::new(t, speedup)?)),
        Err(shared) => build_workload_with(spec, Some(&shared)),
    }
}

/// Whether `spec`'s workload, from `trace` when it reads one, may have
/// sessions (`Workload::may_have_sessions`), judged without building it:
/// a trace with any session or parent id counts.
pub(crate) fn may_have_sessions(spec: &ReplaySpec, trace: Option<&TraceData>) -> bool {
    match (&spec.workload, trace) {
        (WorkloadSpec::Synthetic(s), _) => s.turns > 1,
        (_, Some(t)) => trace_source::may_link_sessions(&t.records),
        (_, None) => true,
    }
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

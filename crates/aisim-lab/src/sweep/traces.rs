//! Every distinct trace of a sweep, read once and shared by its runs (the
//! sweep's speed rests on it: reading a trace costs as much as replaying it).

use std::sync::Arc;

use aisim_replay::spec::WorkloadSpec;
use aisim_replay::trace::TraceData;
use aisim_replay::workload::load_trace;
use aisim_replay::ReplayError;

/// Traces read so far, by the workload spec that names them.
#[derive(Debug, Default)]
pub(crate) struct Traces {
    read: Vec<(WorkloadSpec, Arc<TraceData>)>,
}

impl Traces {
    /// The trace `workload` names, read on first use; `None` for a
    /// generated workload.
    pub(crate) fn get(
        &mut self,
        workload: &WorkloadSpec,
    ) -> Result<Option<Arc<TraceData>>, ReplayError> {
        if let Some(t) = self.loaded(workload) {
            return Ok(Some(t));
        }
        let Some(trace) = load_trace(workload)? else {
            return Ok(None);
        };
        let trace = Arc::new(trace);
        self.read.push((workload.clone(), trace.clone()));
        Ok(Some(trace))
    }

    /// The trace of `workload` if it has been read.
    pub(crate) fn loaded(&self, workload: &WorkloadSpec) -> Option<Arc<TraceData>> {
        self.read
            .iter()
            .find(|(w, _)| w == workload)
            .map(|(_, t)| t.clone())
    }
}

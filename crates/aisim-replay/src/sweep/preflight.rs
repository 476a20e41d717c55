//! The checks a replay makes before its first event, made at plan time so a
//! bad run is named there and not on a cluster node: the spec's own
//! validation, its timing model and engines built, its trace read and laid
//! on the clock. Each distinct model, engine and trace is checked once.

use std::collections::HashSet;
use std::sync::Arc;

use aisim_core::timing::TimingModel;
use aisim_core::Engine;

use super::traces::Traces;
use crate::workload::build_workload_with;
use crate::{ReplayError, ReplaySpec};

/// What has been checked already.
#[derive(Default)]
pub(crate) struct Preflight {
    timings: Vec<(String, Arc<dyn TimingModel>)>,
    engines: HashSet<String>,
    workloads: HashSet<String>,
    traces: Traces,
}

impl Preflight {
    /// Checks one run's spec.
    pub(crate) fn check(&mut self, spec: &ReplaySpec) -> Result<(), ReplayError> {
        let mut spec = spec.clone();
        spec.apply_profile()?;
        spec.validate()?;
        let timing_key = serde_json::to_string(&spec.timing).expect("specs serialize");
        let timing = match self.timings.iter().find(|(k, _)| *k == timing_key) {
            Some((_, t)) => t.clone(),
            None => {
                let t = spec.timing.build()?;
                self.timings.push((timing_key.clone(), t.clone()));
                t
            }
        };
        for pool in spec.pools() {
            let key = format!(
                "{timing_key}{}",
                serde_json::to_string(pool.engine).expect("engines serialize")
            );
            if !self.engines.contains(&key) {
                Engine::new(pool.engine.clone(), timing.clone())?;
                self.engines.insert(key);
            }
        }
        // The trace at this speedup: a time it stretches beyond the clock
        // is refused when the workload is built.
        let key = format!(
            "{}{}",
            serde_json::to_string(&spec.workload).expect("specs serialize"),
            spec.admission.speedup
        );
        if !self.workloads.contains(&key) {
            let trace = self.traces.get(&spec.workload)?;
            build_workload_with(&spec, trace.as_deref())?;
            self.workloads.insert(key);
        }
        Ok(())
    }
}

//! `Replayer`: validates a spec, builds engines, workload and policies, runs the
//! runtime and derives the report.

use std::time::Instant;

use aisim_core::Engine;

use crate::collector::RequestRecord;
use crate::error::ReplayError;
use crate::policy::ReplayComposition;
use crate::report::ReplayReport;
use crate::runtime::{AggRuntime, ReplayObserver, Silent};
use crate::spec::{ReplaySpec, WorkloadSpec};
use crate::workload::{build_workload, DEMO_TRACE_NAME};

/// A finished replay: the report and every request's record.
#[derive(Debug)]
pub struct ReplayOutput {
    /// Aggregate report.
    pub report: ReplayReport,
    /// Per-request records, by id.
    pub records: Vec<RequestRecord>,
}

/// Runs one spec with the policies of a composition.
pub struct Replayer<C: ReplayComposition> {
    spec: ReplaySpec,
    composition: C,
    fast_forward: bool,
}

impl<C: ReplayComposition> Replayer<C> {
    /// Takes the GPU profile's engine facts into the spec
    /// (`ReplaySpec::apply_profile`) and validates it.
    pub fn new(mut spec: ReplaySpec, composition: C) -> Result<Replayer<C>, ReplayError> {
        spec.apply_profile()?;
        spec.validate()?;
        Ok(Replayer {
            spec,
            composition,
            fast_forward: true,
        })
    }

    /// Whether workers may run passes back to back between global events (on
    /// by default). The report is byte-identical either way; turning it off is
    /// for checking exactly that, and for measuring what it saves.
    pub fn with_fast_forward(mut self, on: bool) -> Self {
        self.fast_forward = on;
        self
    }

    /// The spec.
    pub fn spec(&self) -> &ReplaySpec {
        &self.spec
    }

    /// Runs to the end.
    pub fn run(&self) -> Result<ReplayOutput, ReplayError> {
        self.run_observed(&mut Silent)
    }

    /// Runs to the end, telling `observer` about progress.
    pub fn run_observed(
        &self,
        observer: &mut dyn ReplayObserver,
    ) -> Result<ReplayOutput, ReplayError> {
        let started = Instant::now();
        let spec = &self.spec;
        let _span = tracing::info_span!(
            "replay",
            workers = spec.workers(),
            backend = ?spec.engine.backend
        )
        .entered();
        let timing = spec.timing.build()?;
        let engines = (0..spec.workers())
            .map(|_| Engine::new(spec.engine.clone(), timing.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        tracing::info!(timing = timing.name(), "engines built");
        let source = match &spec.workload {
            WorkloadSpec::Demo => DEMO_TRACE_NAME.to_string(),
            WorkloadSpec::Trace { path, .. } => path.display().to_string(),
            WorkloadSpec::Synthetic(_) => "synthetic".to_string(),
        };
        let workload = build_workload(spec)?;
        tracing::info!(
            source = %source,
            wall_ms = started.elapsed().as_millis() as u64,
            "workload ready"
        );
        let placement = self.composition.placement(spec);
        let _scaling = self.composition.scaling(spec);
        let mut runtime = AggRuntime::new(spec, engines, workload, placement);
        runtime.set_fast_forward(self.fast_forward);
        let (collector, mut totals) = runtime.run(observer)?;
        totals.source = source;
        let (records, itl) = collector.finish();
        let wall_s = started.elapsed().as_secs_f64();
        tracing::info!(
            requests = records.len(),
            passes = totals.workers.iter().map(|w| w.passes).sum::<u64>(),
            simulated_s = totals.end_ns as f64 * 1e-9,
            wall_s,
            "replay finished"
        );
        let report = ReplayReport::derive(spec, &records, itl, &totals, wall_s);
        tracing::debug!(
            wall_ms = (started.elapsed().as_secs_f64() - wall_s) * 1e3,
            "report derived"
        );
        Ok(ReplayOutput { report, records })
    }
}

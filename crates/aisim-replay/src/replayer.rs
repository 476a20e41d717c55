//! `Replayer`: validates a spec, builds engines, workload and policies, runs the
//! runtime and derives the report.

use std::sync::Arc;
use std::time::Instant;

use aisim_core::timing::TimingModel;
use aisim_core::{Engine, EngineConfig};

use crate::collector::{Collected, CollectorOptions, RequestRecord};
use crate::curves::ReportCdfs;
use crate::error::ReplayError;
use crate::policy::PlacementPolicy;
use crate::policy::{DisaggPool, ReplayComposition, ScalingPolicy};
use crate::report::{PolicyNames, ReplayReport, RunTotals};
use crate::runtime::{
    run_split, AggTopology, DisaggTopology, EngineFactory, ReplayObserver, Runtime, Scaler, Silent,
    SplitParts, Topology, Workers,
};
use crate::spec::{PoolPlan, ReplaySpec, TopologySpec, WorkloadSpec};
use crate::trace::TraceData;
use crate::workload::{
    load_trace, may_have_sessions, ms_to_duration, trace_rows, workload_of_loaded, Workload,
    DEMO_TRACE_NAME,
};

/// A finished replay: the report and, when asked for, every request's record.
#[derive(Debug)]
pub struct ReplayOutput {
    /// Aggregate report.
    pub report: ReplayReport,
    /// Per-request records, by id (empty unless `Replayer::with_records`).
    pub records: Vec<RequestRecord>,
    /// The latency curves, when asked for (`Replayer::with_cdfs`).
    pub cdfs: Option<ReportCdfs>,
}

/// Runs one spec with the policies of a composition.
pub struct Replayer<C: ReplayComposition> {
    spec: ReplaySpec,
    composition: C,
    fast_forward: bool,
    keep_records: bool,
    stream_records: bool,
    exact_limit: Option<usize>,
    cdfs: bool,
    trace: Option<Arc<TraceData>>,
    /// See `with_split`.
    split: bool,
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
            keep_records: false,
            stream_records: false,
            exact_limit: None,
            cdfs: false,
            trace: None,
            split: true,
        })
    }

    /// Whether to keep every request's record for `ReplayOutput::records`
    /// (off by default: records then live only while their request is in
    /// flight, and memory does not grow with the request count).
    pub fn with_records(mut self, on: bool) -> Self {
        self.keep_records = on;
        self.stream_records = false;
        self
    }

    /// Hands every request's record to the observer's `records` as the run
    /// goes (in the order the loop finishes with them), instead of keeping them for
    /// `ReplayOutput::records` (which stays empty): memory stays bounded at
    /// any request count.
    pub fn stream_records(mut self) -> Self {
        self.keep_records = true;
        self.stream_records = true;
        self
    }

    /// Whether to derive the latency curves for `ReplayOutput::cdfs` (the
    /// HTML report's): read from the values the percentiles come from, so
    /// they keep nothing more in memory.
    pub fn with_cdfs(mut self, on: bool) -> Self {
        self.cdfs = on;
        self
    }

    /// Values each distribution keeps exactly before its percentiles switch
    /// to the sketch (`distribution::EXACT_LIMIT` by default).
    pub fn with_exact_limit(mut self, limit: usize) -> Self {
        self.exact_limit = Some(limit);
        self
    }

    /// Whether workers may run passes back to back between global events (on
    /// by default). The report is byte-identical either way; turning it off is
    /// for checking exactly that, and for measuring what it saves.
    pub fn with_fast_forward(mut self, on: bool) -> Self {
        self.fast_forward = on;
        self
    }

    /// Whether a run may be split between two threads when it allows it
    /// (on by default; see `runtime/split.rs`). The report and records are
    /// byte-identical either way; turning it off is for checking exactly
    /// that, and for measuring what it saves.
    pub fn with_split(mut self, on: bool) -> Self {
        self.split = on;
        self
    }

    /// Replays `trace`, read before by `workload::load_trace` of this
    /// spec's workload, instead of reading the file again: a sweep reads
    /// each trace once for all its runs.
    pub fn with_trace(mut self, trace: Arc<TraceData>) -> Self {
        self.trace = Some(trace);
        self
    }

    /// [`Replayer::with_trace`] when a trace was read (`None` for a
    /// generated workload, which reads none).
    pub fn with_loaded_trace(self, trace: Option<Arc<TraceData>>) -> Self {
        match trace {
            Some(t) => self.with_trace(t),
            None => self,
        }
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
        let timing = self.composition.timing(spec)?;
        let timing_name = timing.name().to_string();
        let source = match &spec.workload {
            WorkloadSpec::Demo => DEMO_TRACE_NAME.to_string(),
            WorkloadSpec::Trace { path, .. } => path.display().to_string(),
            WorkloadSpec::Synthetic(_) => "synthetic".to_string(),
        };
        let placement = self.composition.placement(spec);
        let scaling = self.composition.scaling(spec);
        let (split, mut loaded) = self.split_plan(&*placement, &*scaling)?;
        let workload = match split {
            Some(_) => None,
            None => Some(workload_of_loaded(spec, loaded.take(), false)?),
        };
        tracing::info!(
            source = %source,
            wall_ms = started.elapsed().as_millis() as u64,
            "workload ready"
        );
        let mut policies = PolicyNames {
            placement: placement.name().to_string(),
            scaling: scaling.name().to_string(),
            timing: timing_name,
            decode_timing: None,
        };
        let rows = || match (&workload, &loaded) {
            (Some(w), _) => w.trace_rows(),
            (None, Some(t)) => Some(trace_rows(&t.records, &t.session_names)),
            (None, None) => None,
        };
        let options = CollectorOptions {
            keep_records: self.keep_records,
            trace_rows: self.keep_records.then(|| rows().map(Arc::new)).flatten(),
            exact_limit: self.exact_limit,
            ..CollectorOptions::default()
        };
        let (mut collected, mut totals) = match &spec.topology {
            TopologySpec::Aggregated { workers } => {
                let plans = spec.scaling.plans(spec);
                let scaler = pool_scaler("workers", scaling, *workers, plans.first());
                // With a scaling policy that ticks, the pool has a slot for
                // every worker it may reach; the first `workers` start.
                if let Some(placements) = split {
                    let trace = loaded;
                    let build = |placement: Box<dyn PlacementPolicy>| {
                        let topo = AggTopology::new(
                            pool_workers(*workers, &spec.engine, &timing)?,
                            &spec.engine,
                            placement,
                        );
                        Ok((topo, workload_of_loaded(spec, trace.clone(), true)?))
                    };
                    let parts = SplitParts {
                        spec,
                        placements,
                        build: &build,
                    };
                    run_split(parts, options, self.stream_records, observer)?
                } else {
                    let workload = workload.expect("built for one loop");
                    let slots = scaler.as_ref().map_or(*workers, Scaler::slots);
                    let topo = AggTopology::new(
                        pool_workers(slots, &spec.engine, &timing)?,
                        &spec.engine,
                        placement,
                    );
                    let topo = match scaler {
                        Some(s) => topo.with_scaler(s, *workers),
                        None => topo,
                    };
                    self.run_topology(topo, workload, options, observer)?
                }
            }
            TopologySpec::Disaggregated {
                prefill,
                decode,
                kv_transfer,
            } => {
                let plans = spec.scaling.plans(spec);
                let scalers = [
                    pool_scaler("prefill", scaling, prefill.workers, plans.first()),
                    pool_scaler(
                        "decode",
                        self.composition.decode_scaling(spec),
                        decode.workers,
                        plans.get(1),
                    ),
                ];
                let slots = |s: &Option<Scaler>, start| s.as_ref().map_or(start, Scaler::slots);
                let pools = spec.pools();
                let (prefill_engine, decode_engine) = (pools[0].engine, pools[1].engine);
                let pool_timing = |pool| -> Result<_, ReplayError> {
                    Ok(self
                        .composition
                        .pool_timing(spec, pool)?
                        .unwrap_or_else(|| timing.clone()))
                };
                let prefill_timing = pool_timing(DisaggPool::Prefill)?;
                let decode_timing = pool_timing(DisaggPool::Decode)?;
                policies.timing = prefill_timing.name().to_string();
                if !Arc::ptr_eq(&prefill_timing, &decode_timing) {
                    policies.decode_timing = Some(decode_timing.name().to_string());
                }
                let topo = DisaggTopology::new(
                    (
                        pool_workers(
                            slots(&scalers[0], prefill.workers),
                            prefill_engine,
                            &prefill_timing,
                        )?,
                        prefill_engine,
                        placement,
                    ),
                    (
                        pool_workers(
                            slots(&scalers[1], decode.workers),
                            decode_engine,
                            &decode_timing,
                        )?,
                        decode_engine,
                        self.composition.decode_placement(spec),
                    ),
                    kv_transfer,
                );
                let [p, d] = scalers;
                let topo = topo.with_scalers(
                    p.map(|s| (s, prefill.workers)),
                    d.map(|s| (s, decode.workers)),
                );
                let workload = workload.expect("built for one loop");
                self.run_topology(topo, workload, options, observer)?
            }
        };
        let cdfs = self.cdfs.then(|| collected.tally.cdfs());
        totals.source = source;
        totals.policies = policies;
        let wall_s = started.elapsed().as_secs_f64();
        let report = ReplayReport::derive(spec, collected.tally, collected.itl, &totals, wall_s);
        tracing::info!(
            requests = report.outcomes.offered,
            passes = totals
                .pools
                .iter()
                .flat_map(|p| &p.workers)
                .map(|w| w.passes)
                .sum::<u64>(),
            simulated_s = totals.end_ns as f64 * 1e-9,
            wall_s,
            "replay finished"
        );
        tracing::debug!(
            wall_ms = (started.elapsed().as_secs_f64() - wall_s) * 1e3,
            "report derived"
        );
        Ok(ReplayOutput {
            report,
            records: collected.records,
            cdfs,
        })
    }

    /// Whether the run would be split between two threads (see
    /// `with_split`); reads the trace to tell whether it has sessions.
    pub fn would_split(&self) -> Result<bool, ReplayError> {
        let placement = self.composition.placement(&self.spec);
        let scaling = self.composition.scaling(&self.spec);
        Ok(self.split_plan(&*placement, &*scaling)?.0.is_some())
    }

    /// A placement per part when the run can be split (`runtime/split.rs`),
    /// and the trace when one was read (a split run reads it once for both
    /// parts; the single loop's workload takes it over).
    #[allow(clippy::type_complexity)]
    fn split_plan(
        &self,
        placement: &dyn PlacementPolicy,
        scaling: &dyn ScalingPolicy,
    ) -> Result<
        (
            Option<Vec<Box<dyn PlacementPolicy + Send>>>,
            Option<Arc<TraceData>>,
        ),
        ReplayError,
    > {
        let spec = &self.spec;
        let mut loaded = self.trace.clone();
        let TopologySpec::Aggregated { workers } = spec.topology else {
            return Ok((None, loaded));
        };
        let ticks = scaling.first_tick().is_some();
        // With fast-forward off the run checks exactly that: one loop.
        if !self.split || !self.fast_forward || !SplitParts::applies(spec, workers, ticks) {
            return Ok((None, loaded));
        }
        let copies = [placement.copy_if_oblivious(), placement.copy_if_oblivious()];
        let [Some(a), Some(b)] = copies else {
            return Ok((None, loaded));
        };
        if loaded.is_none() {
            loaded = load_trace(&spec.workload)?.map(Arc::new);
        }
        if may_have_sessions(spec, loaded.as_deref()) {
            return Ok((None, loaded));
        }
        Ok((Some(vec![a, b]), loaded))
    }

    fn run_topology<T: Topology>(
        &self,
        topo: T,
        workload: Box<dyn Workload>,
        options: CollectorOptions,
        observer: &mut dyn ReplayObserver,
    ) -> Result<(Collected, RunTotals), ReplayError> {
        let mut runtime = Runtime::new(&self.spec, topo, workload, options);
        runtime.set_fast_forward(self.fast_forward);
        runtime.set_stream_records(self.stream_records);
        runtime.run(observer)
    }
}

/// A pool's scaling state when `policy` ticks: a slot for every worker the
/// spec's plan lets it reach (its count at the start without a plan), of
/// which the first `start` accept.
fn pool_scaler(
    pool: &'static str,
    policy: Box<dyn ScalingPolicy>,
    start: u32,
    plan: Option<&PoolPlan>,
) -> Option<Scaler> {
    policy.first_tick()?;
    let (slots, min, startup_s) = plan.map_or((start, 1, 0.0), |p| {
        (p.max_workers, p.min_workers, p.startup_s)
    });
    let startup = ms_to_duration(startup_s * 1e3);
    Some(Scaler::new(pool, policy, slots, start, min, startup))
}

/// `count` workers of `engine`: one engine now, to refuse a bad
/// configuration before anything runs; the others when their worker gets
/// its first request.
fn pool_workers(
    count: u32,
    engine: &EngineConfig,
    timing: &Arc<dyn TimingModel>,
) -> Result<Workers, ReplayError> {
    let first = Engine::new(engine.clone(), timing.clone())?;
    tracing::info!(timing = timing.name(), workers = count, "engines built");
    let (config, timing) = (engine.clone(), timing.clone());
    let make: EngineFactory = Box::new(move || Ok(Engine::new(config.clone(), timing.clone())?));
    Ok(Workers::new(count, first, make))
}

//! The replay's flags, turned into the spec they describe: `aisim replay`'s
//! command line, a sweep grid's `base_args` and `aisim.replay(...)`'s
//! keyword arguments all come here, so they build the same spec and refuse
//! the same things with the same words.
//!
//! Every field is a flag of `aisim replay` in snake case (`--slo-ttft-ms` is
//! `slo_ttft_ms`), absent when not given: a flag given where it has no
//! effect is an error, never a silent no-op.

use std::path::PathBuf;

use aisim_core::{Backend, PreemptionMode};
use aisim_replay::frontend::Served;
use aisim_replay::spec::{
    DispatchMode, KvTransferMode, KvTransferSpec, LoadPlannerSpec, PoolBoundsSpec, PoolSpec,
    RouterKind, RouterQueueSpec, ScalingKind, TopologySpec, WorkloadSpec,
};
use aisim_replay::trace::TraceFormat;
use aisim_replay::{ReplayError, ReplaySpec};
use serde::{Deserialize, Serialize};

use super::synthetic_flags::SyntheticFlags;
use super::timing_form::{apply_frontend, timing_flags};
use super::JobError;

/// Requests the router queue holds unless `--router-queue-capacity` says.
const ROUTER_QUEUE_CAPACITY: u32 = 1024;

/// Workers the built-in demo runs on unless `--workers` says otherwise.
const DEMO_WORKERS: u32 = 4;

pub use super::synthetic_flags::FieldFlag;

/// The spec fields a pool's `--prefill-timing` / `--decode-timing` sets.
const POOL_TIMING_FIELDS: [[&str; 4]; 2] = [
    [
        "topology.prefill.timing.profile",
        "topology.prefill.timing.prefill_ms",
        "topology.prefill.timing.decode_ms",
        "topology.prefill.timing.coefficients",
    ],
    [
        "topology.decode.timing.profile",
        "topology.decode.timing.prefill_ms",
        "topology.decode.timing.decode_ms",
        "topology.decode.timing.coefficients",
    ],
];

/// `aisim replay`'s flags that describe the run (not where its outputs
/// go), each absent unless given. See `aisim replay --help` for each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayFlags {
    /// Trace file (Mooncake / Bailian JSONL, Azure / BurstGPT CSV).
    pub trace: Option<PathBuf>,
    /// Trace format [default: detected].
    pub trace_format: Option<TraceFormat>,
    /// Tokens per trace block.
    pub trace_block_size: Option<u32>,
    /// Divide trace timestamps and think times by this.
    pub speedup: Option<f64>,
    /// Keep K requests (sessions) in flight.
    pub concurrency: Option<u32>,
    /// When a session's next turn is sent.
    pub dispatch: Option<DispatchMode>,
    /// Replay a generated workload instead of a trace.
    pub synthetic: bool,
    /// Workers.
    pub workers: Option<u32>,
    /// Engine scheduling semantics.
    pub backend: Option<Backend>,
    /// Attention data-parallel ranks per worker.
    pub dp_size: Option<u32>,
    /// Tensor-parallel GPUs per rank.
    pub tp_size: Option<u32>,
    /// Tokens per KV block.
    pub block_size: Option<u32>,
    /// KV blocks per rank.
    pub num_gpu_blocks: Option<u32>,
    /// Most running requests per rank.
    pub max_num_seqs: Option<u32>,
    /// Token budget per pass.
    pub max_num_batched_tokens: Option<u32>,
    /// Turn prefix caching off.
    pub no_prefix_caching: bool,
    /// Turn chunked prefill off.
    pub no_chunked_prefill: bool,
    /// vLLM preemption victim.
    pub preemption: Option<PreemptionMode>,
    /// Reject requests longer than this.
    pub max_model_len: Option<u32>,
    /// Timing model (the `--timing` forms).
    pub timing: Option<String>,
    /// GPU profile.
    pub profile: Option<String>,
    /// Divide every pass time by this.
    pub speedup_ratio: Option<f64>,
    /// Divide decode time by this as well.
    pub decode_speedup_ratio: Option<f64>,
    /// Disaggregated: prefill workers.
    pub prefill_workers: Option<u32>,
    /// Disaggregated: decode workers.
    pub decode_workers: Option<u32>,
    /// Disaggregated: the prefill pool's GPU profile.
    pub prefill_profile: Option<String>,
    /// Disaggregated: the prefill pool's timing model.
    pub prefill_timing: Option<String>,
    /// Disaggregated: the decode pool's GPU profile.
    pub decode_profile: Option<String>,
    /// Disaggregated: the decode pool's timing model.
    pub decode_timing: Option<String>,
    /// Disaggregated: token budget per pass of a prefill worker.
    pub prefill_max_num_batched_tokens: Option<u32>,
    /// Disaggregated: most running requests of a prefill worker.
    pub prefill_max_num_seqs: Option<u32>,
    /// Disaggregated: KV blocks of a prefill worker.
    pub prefill_num_gpu_blocks: Option<u32>,
    /// Disaggregated: token budget per pass of a decode worker.
    pub decode_max_num_batched_tokens: Option<u32>,
    /// Disaggregated: most running requests of a decode worker.
    pub decode_max_num_seqs: Option<u32>,
    /// Disaggregated: KV blocks of a decode worker.
    pub decode_num_gpu_blocks: Option<u32>,
    /// Disaggregated: KV transfer bandwidth, GB/s.
    pub kv_transfer_gb_s: Option<f64>,
    /// Disaggregated: fixed cost of a KV transfer, ms.
    pub kv_transfer_latency_ms: Option<f64>,
    /// Disaggregated: KV bytes of one token.
    pub kv_bytes_per_token: Option<u64>,
    /// Disaggregated: what a KV transfer sends.
    pub kv_transfer_mode: Option<KvTransferMode>,
    /// Placement policy.
    pub router: Option<RouterKind>,
    /// kv: sampling temperature.
    pub router_temperature: Option<f64>,
    /// kv: weight of the blocks still to prefill.
    pub prefill_load_scale: Option<f64>,
    /// sticky: the inner policy.
    pub router_inner: Option<RouterKind>,
    /// Router queue threshold.
    pub router_queue_threshold: Option<u32>,
    /// Router queue capacity.
    pub router_queue_capacity: Option<u32>,
    /// Scaling policy.
    pub planner: Option<ScalingKind>,
    /// load planner: seconds between ticks.
    pub planner_tick_s: Option<f64>,
    /// load planner: fewest workers of each pool.
    pub min_workers: Option<u32>,
    /// load planner: most workers of each pool.
    pub max_workers: Option<u32>,
    /// load planner, disaggregated: fewest prefill workers.
    pub prefill_min_workers: Option<u32>,
    /// load planner, disaggregated: most prefill workers.
    pub prefill_max_workers: Option<u32>,
    /// load planner, disaggregated: fewest decode workers.
    pub decode_min_workers: Option<u32>,
    /// load planner, disaggregated: most decode workers.
    pub decode_max_workers: Option<u32>,
    /// load planner: seconds until a new worker accepts requests.
    pub startup_s: Option<f64>,
    /// load planner: p90 TTFT target, ms.
    pub planner_ttft_ms: Option<f64>,
    /// load planner, disaggregated: p90 TPOT target, ms.
    pub planner_tpot_ms: Option<f64>,
    /// load planner: waiting requests per accepting worker.
    pub planner_queue_depth: Option<f64>,
    /// Warm-up: the first N offered requests are not measured.
    pub warmup: Option<u64>,
    /// Warm-up: requests planned in the first S seconds are not measured.
    pub warmup_s: Option<f64>,
    /// Requests not finished S seconds after their planned arrival time out.
    pub timeout: Option<f64>,
    /// After the last planned arrival, in-flight work may finish for S seconds.
    pub drain: Option<f64>,
    /// Stop the run at S seconds of simulated time.
    pub max_sim_time: Option<f64>,
    /// Where requests reach the engine from.
    pub frontend: Option<Served>,
    /// Time outside the engine per request, ms.
    pub frontend_ms: Option<f64>,
    /// Goodput threshold on TTFT, ms.
    #[serde(alias = "sla_ttft_ms")]
    pub slo_ttft_ms: Option<f64>,
    /// Goodput threshold on TPOT, ms.
    #[serde(alias = "sla_tpot_ms")]
    pub slo_tpot_ms: Option<f64>,
    /// Goodput threshold on E2E, ms.
    #[serde(alias = "sla_e2e_ms")]
    pub slo_e2e_ms: Option<f64>,
    /// Seed of every random choice.
    pub seed: Option<u64>,
    /// Seeds to run (the report's `seeds` section); only checked here.
    pub seeds: Option<u64>,
    /// A spec file the flags override.
    pub spec: Option<PathBuf>,
    /// The generated workload's flags (with `synthetic`).
    #[serde(flatten)]
    pub workload: SyntheticFlags,
}

impl ReplayFlags {
    /// Flags from a JSON object named as the flags in snake case, unknown
    /// names refused (with the list of known ones). Choices are read as the
    /// CLI writes them (`http-streaming`) or as the spec does (`http_streaming`).
    pub fn from_value(mut value: serde_json::Value) -> Result<ReplayFlags, JobError> {
        for key in ["frontend", "kv_transfer_mode"] {
            if let Some(serde_json::Value::String(choice)) = value.get_mut(key) {
                *choice = choice.replace('-', "_");
            }
        }
        let known = serde_json::to_value(ReplayFlags::default()).expect("flags serialize");
        let known: Vec<&String> = known.as_object().expect("an object").keys().collect();
        if let Some(map) = value.as_object() {
            for key in map.keys() {
                let alias = ["sla_ttft_ms", "sla_tpot_ms", "sla_e2e_ms"].contains(&key.as_str());
                if !alias && !known.contains(&key) {
                    let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
                    return Err(JobError::msg(format!(
                        "unknown replay flag `{key}`, expected one of {}",
                        names.join(", ")
                    )));
                }
            }
        }
        serde_json::from_value(value).map_err(|e| JobError::msg(format!("replay flags: {e}")))
    }

    /// The spec these flags describe, over `--spec`'s file or the defaults.
    pub fn to_spec(&self) -> Result<ReplaySpec, JobError> {
        let base = match &self.spec {
            Some(path) => Some(ReplaySpec::from_file(path).map_err(|e| blame_file(e, path))?),
            None => None,
        };
        self.to_spec_over(base)
    }

    /// The spec these flags describe over `base` (a spec a front end read:
    /// then no `--spec` file may be given), or the defaults.
    pub fn to_spec_over(&self, base: Option<ReplaySpec>) -> Result<ReplaySpec, JobError> {
        let from_file = base.is_some();
        let mut spec = base.unwrap_or_default();
        self.set_workload(&mut spec)?;
        if !from_file && matches!(spec.workload, WorkloadSpec::Demo) {
            spec.topology = TopologySpec::Aggregated {
                workers: DEMO_WORKERS,
            };
        }
        self.set_topology(&mut spec)?;
        if let Some(s) = self.speedup {
            spec.admission.speedup = s;
        }
        if self.concurrency.is_some() {
            spec.admission.concurrency = self.concurrency;
        }
        if let Some(d) = self.dispatch {
            spec.dispatch = d;
        }
        let e = &mut spec.engine;
        if let Some(b) = self.backend {
            e.backend = b;
        }
        macro_rules! set {
            ($($flag:ident => $field:expr),* $(,)?) => { $( if let Some(v) = self.$flag { $field = v; } )* };
        }
        set!(dp_size => e.dp_size, tp_size => e.tp_size, max_num_seqs => e.max_num_seqs,
             max_num_batched_tokens => e.max_num_batched_tokens, speedup_ratio => e.speedup_ratio,
             decode_speedup_ratio => e.decode_speedup_ratio, preemption => e.preemption);
        if self.block_size.is_some() {
            e.block_size = self.block_size;
        }
        if self.max_model_len.is_some() {
            e.max_model_len = self.max_model_len;
        }
        if self.no_prefix_caching {
            e.enable_prefix_caching = false;
        }
        if self.no_chunked_prefill {
            e.enable_chunked_prefill = false;
        }
        if let Some(t) = timing_flags(
            self.timing.as_deref(),
            self.profile.as_deref(),
            &spec.timing,
        )? {
            spec.timing = t;
        }
        if self.num_gpu_blocks.is_some() {
            spec.engine.num_gpu_blocks = self.num_gpu_blocks;
        }
        self.set_pools(&mut spec);
        self.set_pool_timings(&mut spec)?;
        if let Some(r) = self.router {
            spec.router.policy = r;
        }
        if let Some(r) = self.router_inner {
            spec.router.inner = Some(r);
        }
        if let Some(t) = self.router_temperature {
            spec.router.temperature = t;
        }
        if let Some(s) = self.prefill_load_scale {
            spec.router.prefill_load_scale = s;
        }
        match (self.router_queue_threshold, self.router_queue_capacity, &mut spec.router.queue) {
            (Some(threshold), capacity, q) => {
                let capacity = capacity.or(q.map(|q| q.capacity)).unwrap_or(ROUTER_QUEUE_CAPACITY);
                *q = Some(RouterQueueSpec { threshold, capacity });
            }
            (None, Some(capacity), Some(q)) => q.capacity = capacity,
            (None, Some(_), None) => return Err(JobError::msg(
                "--router-queue-capacity has no effect without --router-queue-threshold: the router queues requests only while every worker is at that threshold"
            )),
            (None, None, _) => {}
        }
        self.set_scaling(&mut spec)?;
        let d = &mut spec.discipline;
        set!(warmup => d.warmup_requests, warmup_s => d.warmup_s, seed => spec.seed);
        if self.timeout.is_some() {
            d.timeout_s = self.timeout;
        }
        if self.drain.is_some() {
            d.drain_s = self.drain;
        }
        if self.max_sim_time.is_some() {
            d.max_sim_time_s = self.max_sim_time;
        }
        for (flag, field) in [
            (self.slo_ttft_ms, &mut spec.sla.ttft_ms),
            (self.slo_tpot_ms, &mut spec.sla.tpot_ms),
            (self.slo_e2e_ms, &mut spec.sla.e2e_ms),
        ] {
            if flag.is_some() {
                *field = flag;
            }
        }
        apply_frontend(
            &mut spec,
            self.frontend,
            self.frontend_ms,
            self.timing.as_deref(),
        )?;
        self.check_effects(&spec)?;
        // The spec keeps only what was set: the profile's engine facts are
        // applied when a run is built (`Replayer::new`), so a sweep's base or
        // a `--print-spec` copy does not carry one profile's values into
        // another's run. They are checked now, on a copy.
        let mut applied = spec.clone();
        applied
            .apply_profile()
            .and_then(|()| applied.validate())
            .map_err(|e| blame_flag(e, &self.field_flags()))?;
        Ok(spec)
    }

    /// A job's error led by the flag behind the spec field it names (an
    /// error found while building or running the spec).
    pub fn blame(&self, e: JobError) -> JobError {
        match e.into_boxed().downcast::<ReplayError>() {
            Ok(e) => blame_flag(*e, &self.field_flags()),
            Err(other) => JobError::from_boxed(other),
        }
    }

    /// The topology: `--workers` (aggregated) or `--prefill-workers` and
    /// `--decode-workers` (disaggregated), with the KV link's flags.
    fn set_topology(&self, spec: &mut ReplaySpec) -> Result<(), JobError> {
        let disagg = self.prefill_workers.is_some() || self.decode_workers.is_some();
        if let (Some(_), true) = (self.workers, disagg) {
            let flag = if self.prefill_workers.is_some() {
                "--prefill-workers"
            } else {
                "--decode-workers"
            };
            return Err(JobError::msg(format!("--workers and {flag} describe different topologies: give --workers N (aggregated) or --prefill-workers P --decode-workers D (disaggregated)")));
        }
        if let Some(w) = self.workers {
            spec.topology = TopologySpec::Aggregated { workers: w };
        }
        if disagg && !matches!(spec.topology, TopologySpec::Disaggregated { .. }) {
            let (Some(p), Some(d)) = (self.prefill_workers, self.decode_workers) else {
                let (given, missing) = if self.prefill_workers.is_some() {
                    ("--prefill-workers", "--decode-workers")
                } else {
                    ("--decode-workers", "--prefill-workers")
                };
                return Err(JobError::msg(format!(
                    "{given} needs {missing}: a disaggregated topology has both pools"
                )));
            };
            spec.topology = TopologySpec::Disaggregated {
                prefill: PoolSpec::new(p),
                decode: PoolSpec::new(d),
                kv_transfer: KvTransferSpec::default(),
            };
        }
        let TopologySpec::Disaggregated {
            prefill,
            decode,
            kv_transfer: t,
        } = &mut spec.topology
        else {
            if let Some(flag) = self.disagg_flags().first() {
                return Err(JobError::msg(format!("{flag} has no effect on an aggregated topology: it applies to disaggregated serving (--prefill-workers P --decode-workers D)")));
            }
            return Ok(());
        };
        if let Some(p) = self.prefill_workers {
            prefill.workers = p;
        }
        if let Some(d) = self.decode_workers {
            decode.workers = d;
        }
        if let Some(v) = self.kv_transfer_gb_s {
            t.gb_s = v;
        }
        if let Some(v) = self.kv_transfer_latency_ms {
            t.latency_ms = v;
        }
        if self.kv_bytes_per_token.is_some() {
            t.bytes_per_token = self.kv_bytes_per_token;
        }
        if let Some(m) = self.kv_transfer_mode {
            t.mode = m;
        }
        Ok(())
    }

    /// The flags only a disaggregated topology reads, those given: the
    /// pools' own engine settings, the KV link and the planner's per-pool
    /// settings (`--prefill-workers` and `--decode-workers` make one).
    fn disagg_flags(&self) -> Vec<&'static str> {
        self.given_flags(&[
            "topology.prefill.engine.",
            "topology.decode.engine.",
            "topology.prefill.timing.",
            "topology.decode.timing.",
            "topology.kv_transfer.",
            "scaling.load.prefill.",
            "scaling.load.decode.",
            "scaling.load.tpot_ms",
        ])
    }

    /// The flags given that set a spec field starting with one of `prefixes`.
    fn given_flags(&self, prefixes: &[&str]) -> Vec<&'static str> {
        let mut flags: Vec<&'static str> = self
            .field_flags()
            .into_iter()
            .filter(|(field, _, given)| *given && prefixes.iter().any(|p| field.starts_with(p)))
            .map(|(_, flag, _)| flag)
            .collect();
        flags.dedup();
        flags
    }

    /// The per-pool engine flags: a pool given one gets its own engine,
    /// the spec's `engine` (every other flag) with that setting changed.
    fn set_pools(&self, spec: &mut ReplaySpec) {
        let base = spec.engine.clone();
        let TopologySpec::Disaggregated {
            prefill, decode, ..
        } = &mut spec.topology
        else {
            return;
        };
        let pools = [
            (
                prefill,
                self.prefill_max_num_batched_tokens,
                self.prefill_max_num_seqs,
                self.prefill_num_gpu_blocks,
            ),
            (
                decode,
                self.decode_max_num_batched_tokens,
                self.decode_max_num_seqs,
                self.decode_num_gpu_blocks,
            ),
        ];
        for (pool, budget, seqs, blocks) in pools {
            if budget.is_none() && seqs.is_none() && blocks.is_none() {
                continue;
            }
            let e = pool.engine.get_or_insert_with(|| Box::new(base.clone()));
            if let Some(v) = budget {
                e.max_num_batched_tokens = v;
            }
            if let Some(v) = seqs {
                e.max_num_seqs = v;
            }
            if blocks.is_some() {
                e.num_gpu_blocks = blocks;
            }
        }
    }

    /// `--prefill-timing` / `--prefill-profile` and the decode pool's: a
    /// pool given either runs a timing of its own, read as `--timing` and
    /// `--profile` read theirs (a physics timing without a pool profile takes
    /// the spec's); a pool given neither runs the spec's `timing`.
    fn set_pool_timings(&self, spec: &mut ReplaySpec) -> Result<(), JobError> {
        let base = spec.timing.clone();
        let TopologySpec::Disaggregated {
            prefill, decode, ..
        } = &mut spec.topology
        else {
            return Ok(());
        };
        let pools = [
            (
                prefill,
                &self.prefill_timing,
                &self.prefill_profile,
                "--prefill",
            ),
            (
                decode,
                &self.decode_timing,
                &self.decode_profile,
                "--decode",
            ),
        ];
        for (pool, timing, profile, prefix) in pools {
            let own = pool.timing.as_deref().unwrap_or(&base).clone();
            let t = timing_flags(timing.as_deref(), profile.as_deref(), &own).map_err(|e| {
                e.context(match (timing, profile) {
                    (Some(t), _) => format!("{prefix}-timing {t}"),
                    (None, p) => format!("{prefix}-profile {}", p.as_deref().unwrap_or_default()),
                })
            })?;
            if let Some(t) = t {
                pool.timing = Some(Box::new(t));
            }
        }
        Ok(())
    }

    /// The scaling flags: `--planner` picks the policy; the planner's
    /// parameters need the load planner (flags with no effect are errors).
    fn set_scaling(&self, spec: &mut ReplaySpec) -> Result<(), JobError> {
        match self.planner {
            Some(ScalingKind::None) => {
                spec.scaling.policy = ScalingKind::None;
                spec.scaling.load = None;
            }
            Some(ScalingKind::Load) => spec.scaling.policy = ScalingKind::Load,
            None => {}
        }
        if spec.scaling.policy != ScalingKind::Load {
            if let Some(flag) = self.given_flags(&["scaling.load."]).first() {
                return Err(JobError::msg(format!("{flag} has no effect with the scaling policy {}: it sets the load-based planner (--planner load)", spec.scaling.policy.name())));
            }
            return Ok(());
        }
        let p = spec
            .scaling
            .load
            .get_or_insert_with(LoadPlannerSpec::default);
        if let Some(v) = self.planner_tick_s {
            p.tick_s = v;
        }
        if let Some(v) = self.min_workers {
            p.min_workers = v;
        }
        if self.max_workers.is_some() {
            p.max_workers = self.max_workers;
        }
        if let Some(v) = self.startup_s {
            p.startup_s = v;
        }
        if self.planner_ttft_ms.is_some() {
            p.ttft_ms = self.planner_ttft_ms;
        }
        if let Some(v) = self.planner_queue_depth {
            p.queue_depth = v;
        }
        if self.planner_tpot_ms.is_some() {
            p.tpot_ms = self.planner_tpot_ms;
        }
        let pools = [
            (
                &mut p.prefill,
                self.prefill_min_workers,
                self.prefill_max_workers,
            ),
            (
                &mut p.decode,
                self.decode_min_workers,
                self.decode_max_workers,
            ),
        ];
        for (bounds, min, max) in pools {
            if min.is_none() && max.is_none() {
                continue;
            }
            let b = bounds.get_or_insert_with(PoolBoundsSpec::default);
            if min.is_some() {
                b.min_workers = min;
            }
            if max.is_some() {
                b.max_workers = max;
            }
        }
        Ok(())
    }

    /// The spec (and engine) fields the flags set, for errors to name the flag.
    pub fn field_flags(&self) -> Vec<FieldFlag> {
        let timing = self.timing.is_some();
        let mut fields = vec![
            ("topology.workers", "--workers", self.workers.is_some()),
            ("admission.speedup", "--speedup", self.speedup.is_some()),
            (
                "admission.concurrency",
                "--concurrency",
                self.concurrency.is_some(),
            ),
            (
                "workload.trace_block_size",
                "--trace-block-size",
                self.trace_block_size.is_some(),
            ),
            ("discipline.warmup_s", "--warmup-s", self.warmup_s.is_some()),
            ("discipline.timeout_s", "--timeout", self.timeout.is_some()),
            ("discipline.drain_s", "--drain", self.drain.is_some()),
            (
                "discipline.max_sim_time_s",
                "--max-sim-time",
                self.max_sim_time.is_some(),
            ),
            (
                "router.temperature",
                "--router-temperature",
                self.router_temperature.is_some(),
            ),
            (
                "router.prefill_load_scale",
                "--prefill-load-scale",
                self.prefill_load_scale.is_some(),
            ),
            (
                "router.inner",
                "--router-inner",
                self.router_inner.is_some(),
            ),
            (
                "frontend.request_ms",
                "--frontend-ms",
                self.frontend_ms.is_some(),
            ),
            ("sla.ttft_ms", "--slo-ttft-ms", self.slo_ttft_ms.is_some()),
            ("sla.tpot_ms", "--slo-tpot-ms", self.slo_tpot_ms.is_some()),
            ("sla.e2e_ms", "--slo-e2e-ms", self.slo_e2e_ms.is_some()),
            ("timing.prefill_ms", "--timing", timing),
            ("timing.decode_ms", "--timing", timing),
            ("dp_size", "--dp-size", self.dp_size.is_some()),
            ("tp_size", "--tp-size", self.tp_size.is_some()),
            ("block_size", "--block-size", self.block_size.is_some()),
            (
                "num_gpu_blocks",
                "--num-gpu-blocks",
                self.num_gpu_blocks.is_some(),
            ),
            (
                "max_num_seqs",
                "--max-num-seqs",
                self.max_num_seqs.is_some(),
            ),
            (
                "max_num_batched_tokens",
                "--max-num-batched-tokens",
                self.max_num_batched_tokens.is_some(),
            ),
            (
                "max_model_len",
                "--max-model-len",
                self.max_model_len.is_some(),
            ),
            (
                "speedup_ratio",
                "--speedup-ratio",
                self.speedup_ratio.is_some(),
            ),
            (
                "decode_speedup_ratio",
                "--decode-speedup-ratio",
                self.decode_speedup_ratio.is_some(),
            ),
        ];
        let pool_flags = [
            (
                "topology.prefill.workers",
                "--prefill-workers",
                self.prefill_workers.is_some(),
            ),
            (
                "topology.decode.workers",
                "--decode-workers",
                self.decode_workers.is_some(),
            ),
            (
                "topology.prefill.engine.max_num_batched_tokens",
                "--prefill-max-num-batched-tokens",
                self.prefill_max_num_batched_tokens.is_some(),
            ),
            (
                "topology.prefill.engine.max_num_seqs",
                "--prefill-max-num-seqs",
                self.prefill_max_num_seqs.is_some(),
            ),
            (
                "topology.prefill.engine.num_gpu_blocks",
                "--prefill-num-gpu-blocks",
                self.prefill_num_gpu_blocks.is_some(),
            ),
            (
                "topology.decode.engine.max_num_batched_tokens",
                "--decode-max-num-batched-tokens",
                self.decode_max_num_batched_tokens.is_some(),
            ),
            (
                "topology.decode.engine.max_num_seqs",
                "--decode-max-num-seqs",
                self.decode_max_num_seqs.is_some(),
            ),
            (
                "topology.decode.engine.num_gpu_blocks",
                "--decode-num-gpu-blocks",
                self.decode_num_gpu_blocks.is_some(),
            ),
            (
                "topology.prefill.timing.profile",
                "--prefill-profile",
                self.prefill_profile.is_some(),
            ),
            (
                "topology.decode.timing.profile",
                "--decode-profile",
                self.decode_profile.is_some(),
            ),
            ("timing.profile", "--profile", self.profile.is_some()),
            (
                "topology.kv_transfer.gb_s",
                "--kv-transfer-gb-s",
                self.kv_transfer_gb_s.is_some(),
            ),
            (
                "topology.kv_transfer.latency_ms",
                "--kv-transfer-latency-ms",
                self.kv_transfer_latency_ms.is_some(),
            ),
            (
                "topology.kv_transfer.bytes_per_token",
                "--kv-bytes-per-token",
                self.kv_bytes_per_token.is_some(),
            ),
            (
                "topology.kv_transfer.mode",
                "--kv-transfer-mode",
                self.kv_transfer_mode.is_some(),
            ),
            ("engine.dp_size", "--dp-size", self.dp_size.is_some()),
            (
                "router.queue.threshold",
                "--router-queue-threshold",
                self.router_queue_threshold.is_some(),
            ),
            ("engine.backend", "--backend", self.backend.is_some()),
            ("scaling.policy", "--planner", self.planner.is_some()),
            (
                "scaling.load.tick_s",
                "--planner-tick-s",
                self.planner_tick_s.is_some(),
            ),
            (
                "scaling.load.min_workers",
                "--min-workers",
                self.min_workers.is_some(),
            ),
            (
                "scaling.load.max_workers",
                "--max-workers",
                self.max_workers.is_some(),
            ),
            (
                "scaling.load.startup_s",
                "--startup-s",
                self.startup_s.is_some(),
            ),
            (
                "scaling.load.ttft_ms",
                "--planner-ttft-ms",
                self.planner_ttft_ms.is_some(),
            ),
            (
                "scaling.load.queue_depth",
                "--planner-queue-depth",
                self.planner_queue_depth.is_some(),
            ),
            (
                "scaling.load.tpot_ms",
                "--planner-tpot-ms",
                self.planner_tpot_ms.is_some(),
            ),
            (
                "scaling.load.prefill.min_workers",
                "--prefill-min-workers",
                self.prefill_min_workers.is_some(),
            ),
            (
                "scaling.load.prefill.max_workers",
                "--prefill-max-workers",
                self.prefill_max_workers.is_some(),
            ),
            (
                "scaling.load.decode.min_workers",
                "--decode-min-workers",
                self.decode_min_workers.is_some(),
            ),
            (
                "scaling.load.decode.max_workers",
                "--decode-max-workers",
                self.decode_max_workers.is_some(),
            ),
        ];
        fields.extend(pool_flags);
        let pool_timings = [
            (
                POOL_TIMING_FIELDS[0],
                "--prefill-timing",
                self.prefill_timing.is_some(),
            ),
            (
                POOL_TIMING_FIELDS[1],
                "--decode-timing",
                self.decode_timing.is_some(),
            ),
        ];
        for (pool_fields, flag, given) in pool_timings {
            fields.extend(pool_fields.map(|f| (f, flag, given)));
        }
        fields.extend(self.workload.field_flags());
        fields
    }

    /// The workload: TRACE or `--synthetic` replace the spec file's, and the
    /// workload flags refine whichever it is.
    fn set_workload(&self, spec: &mut ReplaySpec) -> Result<(), JobError> {
        match (&self.trace, self.synthetic) {
            (Some(_), true) => {
                return Err(JobError::msg(
                    "give either a TRACE file or --synthetic, not both",
                ))
            }
            (Some(path), false) => {
                spec.workload = WorkloadSpec::Trace {
                    path: path.clone(),
                    format: None,
                    trace_block_size: None,
                }
            }
            (None, true) if !matches!(spec.workload, WorkloadSpec::Synthetic(_)) => {
                spec.workload = WorkloadSpec::Synthetic(self.workload.to_spec()?);
                return Ok(());
            }
            (None, _) => {}
        }
        match &mut spec.workload {
            WorkloadSpec::Synthetic(s) => self.workload.apply(s)?,
            WorkloadSpec::Trace {
                format,
                trace_block_size,
                ..
            } => {
                if self.trace_format.is_some() {
                    *format = self.trace_format;
                }
                if self.trace_block_size.is_some() {
                    *trace_block_size = self.trace_block_size;
                }
            }
            WorkloadSpec::Demo => {}
        }
        Ok(())
    }

    /// Every flag given must change the run `spec` describes: one that would
    /// be ignored is an error naming it and what it needs.
    fn check_effects(&self, spec: &ReplaySpec) -> Result<(), JobError> {
        let bail = |text: String| Err(JobError::msg(text));
        let workload = match &spec.workload {
            WorkloadSpec::Demo => "the built-in demo trace".to_string(),
            WorkloadSpec::Trace { path, .. } => format!("the trace {}", path.display()),
            WorkloadSpec::Synthetic(_) => "a generated workload".to_string(),
        };
        if !matches!(spec.workload, WorkloadSpec::Synthetic(_)) {
            if let Some(flag) = self.workload.given().first() {
                return bail(format!("{flag} has no effect on {workload}: it shapes a generated workload (--synthetic)"));
            }
        }
        if !matches!(spec.workload, WorkloadSpec::Trace { .. }) {
            let trace_flags = [
                ("--trace-format", self.trace_format.is_some()),
                ("--trace-block-size", self.trace_block_size.is_some()),
            ];
            if let Some((flag, _)) = trace_flags.iter().find(|(_, given)| *given) {
                return bail(format!(
                    "{flag} has no effect on {workload}: it applies to a TRACE file"
                ));
            }
        }
        if let (Some(flag), Some(k)) = (self.workload.arrival_flag(), spec.admission.concurrency) {
            return bail(format!("{flag} has no effect with --concurrency {k}: in concurrency mode a request arrives when one in flight ends"));
        }
        let synthetic = match &spec.workload {
            WorkloadSpec::Synthetic(s) => Some(s),
            WorkloadSpec::Demo | WorkloadSpec::Trace { .. } => None,
        };
        if let (Some(d), Some(1)) = (self.dispatch, synthetic.map(|s| s.turns)) {
            return bail(format!("--dispatch {d} has no effect with 1 turn per session: it times later turns (give --turns N with N above 1)"));
        }
        if !crate::seeds::seed_matters(spec) {
            let router = spec.router.placing().name();
            let given = [
                ("--seed", self.seed.is_some()),
                ("--seeds", self.seeds.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
                return bail(format!("{flag} has no effect on {workload} with the {router} router: nothing is random (the seed draws a generated workload's Poisson or Gamma arrivals, uniform or normal lengths and prefix groups, --router random's choices and --router kv's at --router-temperature above 0)"));
            }
        }
        let kv_flags = [
            ("--router-temperature", self.router_temperature.is_some()),
            ("--prefill-load-scale", self.prefill_load_scale.is_some()),
        ];
        if let Some((flag, _)) = kv_flags.iter().find(|(_, given)| *given) {
            let placing = spec.router.placing();
            if placing != RouterKind::Kv {
                return bail(format!("{flag} has no effect with the {} router: only --router kv (or sticky over --router-inner kv) reads it", placing.name()));
            }
        }
        if self.router_inner.is_some() && spec.router.policy != RouterKind::Sticky {
            return bail(format!("--router-inner has no effect with the {} router: only --router sticky has an inner policy", spec.router.policy.name()));
        }
        // The vLLM core's settings (TensorRT-LLM runs on it too); SGLang's
        // core has its own.
        let vllm_only = [
            ("--preemption", self.preemption.is_some(), "it retracts the newest request, there is no victim to choose"),
            ("--max-num-batched-tokens", self.max_num_batched_tokens.is_some(), "its budgets are the spec's engine.max_prefill_tokens and engine.chunked_prefill_size"),
        ];
        if spec.engine.backend == Backend::Sglang {
            if let Some((flag, _, why)) = vllm_only.iter().find(|(_, given, _)| *given) {
                return bail(format!("{flag} has no effect with --backend sglang: {why}"));
            }
        }
        Ok(())
    }
}

/// `e`, led by the flag of `fields` that was given and set the field `e`
/// names (the library error stays in the chain; its text, already in the
/// message, is not repeated as a cause).
pub fn blame_flag(e: ReplayError, fields: &[FieldFlag]) -> JobError {
    let field = match &e {
        ReplayError::Spec { field, .. } => field.as_str(),
        ReplayError::Core(aisim_core::CoreError::InvalidConfig { field, .. }) => field,
        _ => return e.into(),
    };
    match fields.iter().find(|(f, _, given)| *given && *f == field) {
        Some((_, flag, _)) => {
            // Another field the message names, set by a flag, is named by
            // its flag too (two pools' profiles that disagree).
            let mut message = format!("{flag}: {e}");
            for (other, other_flag, _) in fields.iter().filter(|(f, _, g)| *g && *f != field) {
                let quoted = format!("`{other}`");
                // The first flag of a field only (`contains` fails after it).
                if message.contains(&quoted) && !message.contains(&format!("{quoted}, ")) {
                    message = message.replace(&quoted, &format!("{quoted}, {other_flag}"));
                }
            }
            JobError::from(e).context(message)
        }
        None => e.into(),
    }
}

/// `e` from reading the spec file `path`, naming the file when it does not
/// already (a value out of range names only its field).
pub fn blame_file(e: ReplayError, path: &std::path::Path) -> JobError {
    let message = e.to_string();
    let named = path.display().to_string();
    if message.contains(&named) {
        e.into()
    } else {
        JobError::from(e).context(format!("{named}: {message}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_error(field: &str) -> ReplayError {
        ReplayError::Spec {
            field: field.into(),
            reason: "-2 must be above 0".into(),
        }
    }

    #[test]
    fn the_given_flag_behind_a_field_leads_the_message() {
        let fields = [
            ("admission.speedup", "--speedup", true),
            ("topology.workers", "--workers", false),
        ];
        let e = blame_flag(spec_error("admission.speedup"), &fields);
        assert_eq!(
            e.to_string(),
            "--speedup: invalid replay spec: `admission.speedup`: -2 must be above 0"
        );
        assert!(e.into_boxed().source().is_some());
        // Not given: the field came from a spec file or a default.
        let e = blame_flag(spec_error("topology.workers"), &fields);
        assert_eq!(
            e.to_string(),
            "invalid replay spec: `topology.workers`: -2 must be above 0"
        );
        let core = ReplayError::Core(aisim_core::CoreError::InvalidConfig {
            field: "dp_size",
            value: "0".into(),
            reason: "must be at least 1".into(),
        });
        let e = blame_flag(core, &[("dp_size", "--dp-size", true)]);
        assert!(e
            .to_string()
            .starts_with("--dp-size: invalid engine configuration: `dp_size` = 0"));
    }

    #[test]
    fn a_spec_file_error_names_the_file_once() {
        let e = blame_file(
            spec_error("topology.workers"),
            std::path::Path::new("run.json"),
        );
        assert_eq!(
            e.to_string(),
            "run.json: invalid replay spec: `topology.workers`: -2 must be above 0"
        );
        let parse = ReplayError::SpecFile {
            path: "run.json".into(),
            reason: "line 1 column 2: bad".into(),
        };
        assert_eq!(
            blame_file(parse, std::path::Path::new("run.json")).to_string(),
            "run.json: line 1 column 2: bad"
        );
    }

    #[test]
    fn flags_from_json_refuse_unknown_names_and_read_the_cli_forms() {
        let f = ReplayFlags::from_value(serde_json::json!({
            "workers": 2, "router": "kv", "slo_ttft_ms": 500, "synthetic": true,
            "rate": 5, "frontend": "http-streaming", "dispatch": "fixed:20"
        }))
        .unwrap();
        assert_eq!(f.workers, Some(2));
        assert_eq!(f.frontend, Some(Served::HttpStreaming));
        assert_eq!(f.workload.rate, Some(5.0));
        let e = ReplayFlags::from_value(serde_json::json!({"wrokers": 2})).unwrap_err();
        assert!(
            e.to_string().starts_with("unknown replay flag `wrokers`"),
            "{e}"
        );
    }
}

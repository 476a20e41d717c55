//! `aisim replay`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use aisim_core::{Backend, PreemptionMode};
use aisim_lab::jobs::replay::{ReplayJob, ReplayOutputs};
use aisim_lab::jobs::JobError;
use aisim_replay::collector::RequestRecord;
use aisim_replay::per_request::{RowFormat, RowWriter};
use aisim_replay::runtime::ReplayObserver;
use aisim_replay::spec::{
    DispatchMode, KvTransferMode, KvTransferSpec, LoadPlannerSpec, PoolBoundsSpec, PoolSpec,
    RouterKind, RouterQueueSpec, ScalingKind, TopologySpec, WorkloadSpec,
};
use aisim_replay::trace::TraceFormat;
use aisim_replay::{ReplayError, ReplaySpec};
use anyhow::Context;
use clap::{Args, ValueEnum};

use super::blame::{blame_file, blame_flag, FieldFlag};
use super::synthetic::SyntheticArgs;
use crate::exit::{anyhow_of, input, CliError};
use crate::output::{check_paths, stdout_taker, HtmlArgs, OutputArgs, Target};
use aisim_lab::jobs::timing_form::{apply_frontend, timing_flags, timing_in};
use aisim_replay::frontend::Served;

/// Requests the router queue holds unless `--router-queue-capacity` says.
const ROUTER_QUEUE_CAPACITY: u32 = 1024;

/// Workers the built-in demo runs on unless `--workers` says otherwise.
const DEMO_WORKERS: u32 = 4;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Mooncake,
    Bailian,
    Azure,
    Burstgpt,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BackendArg {
    Vllm,
    Sglang,
    Trtllm,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FrontendArg {
    /// The engine in process: no time outside it.
    InProcess,
    /// A streaming HTTP server: TTFT and E2E as its clients see them.
    HttpStreaming,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum PreemptionArg {
    Lifo,
    Fifo,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TransferModeArg {
    /// The whole prompt.
    FullPrompt,
    /// Only what the decode worker's prefix cache lacks.
    DestinationMissing,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
enum RouterArg {
    RoundRobin,
    Random,
    LeastLoaded,
    Kv,
    Lpwl,
    Sticky,
}

impl RouterArg {
    fn kind(self) -> RouterKind {
        match self {
            RouterArg::RoundRobin => RouterKind::RoundRobin,
            RouterArg::Random => RouterKind::Random,
            RouterArg::LeastLoaded => RouterKind::LeastLoaded,
            RouterArg::Kv => RouterKind::Kv,
            RouterArg::Lpwl => RouterKind::Lpwl,
            RouterArg::Sticky => RouterKind::Sticky,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
enum PlannerArg {
    None,
    Load,
}

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Trace file (Mooncake / Bailian JSONL, Azure / BurstGPT CSV).
    trace: Option<PathBuf>,
    /// Trace format [default: detected from the extension and first line].
    #[arg(long, value_enum)]
    trace_format: Option<FormatArg>,
    /// Tokens per trace block [default: 512; 16 for bailian].
    #[arg(long)]
    trace_block_size: Option<u32>,
    /// Divide trace timestamps and think times by this [default: 1.0].
    #[arg(long)]
    speedup: Option<f64>,
    /// Concurrency mode: keep K requests (sessions) in flight, ignoring trace spacing.
    #[arg(long, value_name = "K")]
    concurrency: Option<u32>,
    /// When a session's next turn is sent: tracets, thinktime or fixed:MS [default: thinktime].
    #[arg(long)]
    dispatch: Option<DispatchMode>,
    /// Replay a generated workload instead of a trace.
    #[arg(long)]
    synthetic: bool,

    /// Workers [default: 1; 4 for the demo].
    #[arg(long)]
    workers: Option<u32>,
    /// Engine scheduling semantics [default: vllm].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Attention data-parallel ranks per worker [default: 1].
    #[arg(long)]
    dp_size: Option<u32>,
    /// Tensor-parallel GPUs per rank, for GPU counts and GPU-hours [default: 1, or the profile's tp].
    #[arg(long)]
    tp_size: Option<u32>,
    /// Tokens per KV block; the KV capacity in tokens stays the same [default: 64 vllm, 32 trtllm, 1 sglang].
    #[arg(long)]
    block_size: Option<u32>,
    /// KV blocks per rank, overriding the KV capacity in tokens [default: that capacity / --block-size; the capacity is 1048576 tokens on every backend, or the profile's].
    #[arg(long)]
    num_gpu_blocks: Option<u32>,
    /// Most running requests per rank [default: 256].
    #[arg(long)]
    max_num_seqs: Option<u32>,
    /// Token budget per pass, vLLM and TensorRT-LLM [default: 8192].
    #[arg(long)]
    max_num_batched_tokens: Option<u32>,
    /// Turn prefix caching off.
    #[arg(long)]
    no_prefix_caching: bool,
    /// Turn chunked prefill off.
    #[arg(long)]
    no_chunked_prefill: bool,
    /// vLLM preemption victim [default: lifo].
    #[arg(long, value_enum)]
    preemption: Option<PreemptionArg>,
    /// Reject requests longer than this (prompt + output) [default: the --profile model's maximum context, else none].
    #[arg(long)]
    max_model_len: Option<u32>,
    /// Timing model: polynomial, fixed:PREFILL_MS,DECODE_MS, table:FILE, physics, fitted:FITTED.json or layers:DIR[,LAYERS] [default: polynomial].
    #[arg(long)]
    timing: Option<String>,
    /// GPU profile (a100, h100/llama-3.1-70b/tp8, ...): alone, its iteration timing; with --timing physics or fitted:FILE, the physics model's; also sets the KV capacity, tp and (a HARDWARE/MODEL profile) --max-model-len.
    #[arg(long)]
    profile: Option<String>,
    /// Divide every pass time by this [default: 1.0].
    #[arg(long)]
    speedup_ratio: Option<f64>,
    /// Divide decode time by this as well [default: 1.0].
    #[arg(long)]
    decode_speedup_ratio: Option<f64>,

    /// Disaggregated: prefill workers (with --decode-workers).
    #[arg(long, value_name = "P")]
    prefill_workers: Option<u32>,
    /// Disaggregated: decode workers (with --prefill-workers).
    #[arg(long, value_name = "D")]
    decode_workers: Option<u32>,
    /// Disaggregated: the prefill pool's GPU profile, read as --profile is (its iteration timing, or with --prefill-timing physics its physics model; its KV capacity and tp) [default: --profile].
    #[arg(long, value_name = "KEY")]
    prefill_profile: Option<String>,
    /// Disaggregated: the prefill pool's timing model, in --timing's forms [default: --timing].
    #[arg(long, value_name = "TIMING")]
    prefill_timing: Option<String>,
    /// Disaggregated: the decode pool's GPU profile, read as --profile is; both pools serve one model [default: --profile].
    #[arg(long, value_name = "KEY")]
    decode_profile: Option<String>,
    /// Disaggregated: the decode pool's timing model, in --timing's forms [default: --timing].
    #[arg(long, value_name = "TIMING")]
    decode_timing: Option<String>,
    /// Disaggregated: token budget per pass of a prefill worker [default: --max-num-batched-tokens].
    #[arg(long)]
    prefill_max_num_batched_tokens: Option<u32>,
    /// Disaggregated: most running requests of a prefill worker [default: --max-num-seqs].
    #[arg(long)]
    prefill_max_num_seqs: Option<u32>,
    /// Disaggregated: KV blocks of a prefill worker [default: --num-gpu-blocks].
    #[arg(long)]
    prefill_num_gpu_blocks: Option<u32>,
    /// Disaggregated: token budget per pass of a decode worker [default: --max-num-batched-tokens].
    #[arg(long)]
    decode_max_num_batched_tokens: Option<u32>,
    /// Disaggregated: most running requests of a decode worker [default: --max-num-seqs].
    #[arg(long)]
    decode_max_num_seqs: Option<u32>,
    /// Disaggregated: KV blocks of a decode worker [default: --num-gpu-blocks].
    #[arg(long)]
    decode_num_gpu_blocks: Option<u32>,
    /// Disaggregated: KV transfer bandwidth, gigabytes (1e9 bytes) per second [default: 50, one 400 Gb/s NIC].
    #[arg(long, value_name = "GB_S")]
    kv_transfer_gb_s: Option<f64>,
    /// Disaggregated: fixed cost of a KV transfer, ms [default: 0].
    #[arg(long, value_name = "MS")]
    kv_transfer_latency_ms: Option<f64>,
    /// Disaggregated: KV bytes of one token, whole model [default: the --profile model's].
    #[arg(long, value_name = "BYTES")]
    kv_bytes_per_token: Option<u64>,
    /// Disaggregated: what a KV transfer sends [default: full-prompt].
    #[arg(long, value_enum)]
    kv_transfer_mode: Option<TransferModeArg>,

    /// Placement policy [default: round_robin]. kv: cache-aware (the router's own index of each rank's blocks, fed by KV events); lpwl: least prefill work left; sticky: a session's turns where its first went.
    #[arg(long, value_enum)]
    router: Option<RouterArg>,
    /// kv: 0 takes the lowest cost; above 0, samples ranks with probability ∝ exp(-(c - c_min) / ((c_max - c_min) × T)), seeded [default: 0].
    #[arg(long, value_name = "T")]
    router_temperature: Option<f64>,
    /// kv: weight of the blocks still to prefill against the blocks active on the rank [default: 1.0].
    #[arg(long)]
    prefill_load_scale: Option<f64>,
    /// sticky: the policy that places first turns and requests without a session [default: round_robin].
    #[arg(long, value_enum, value_name = "POLICY")]
    router_inner: Option<RouterArg>,
    /// Router queue: a request waits in the router while every worker holds N or more requests (running + waiting).
    #[arg(long, value_name = "N")]
    router_queue_threshold: Option<u32>,
    /// Router queue: requests it holds; one more is rejected (router_queue_full) [default: 1024].
    #[arg(long, value_name = "N")]
    router_queue_capacity: Option<u32>,

    /// Scaling policy [default: none]. load: the load-based planner scales each pool between its --min-workers and --max-workers (--workers, or --prefill-workers and --decode-workers, the counts at the start).
    #[arg(long, value_enum)]
    planner: Option<PlannerArg>,
    /// load planner: seconds between ticks [default: 10].
    #[arg(long, value_name = "S")]
    planner_tick_s: Option<f64>,
    /// load planner: fewest workers of each pool (accepting or starting) [default: 1].
    #[arg(long, value_name = "N")]
    min_workers: Option<u32>,
    /// load planner: most workers of each pool (accepting or starting) [default: the pool's count at the start].
    #[arg(long, value_name = "N")]
    max_workers: Option<u32>,
    /// load planner, disaggregated: fewest prefill workers [default: --min-workers].
    #[arg(long, value_name = "N")]
    prefill_min_workers: Option<u32>,
    /// load planner, disaggregated: most prefill workers [default: --max-workers].
    #[arg(long, value_name = "N")]
    prefill_max_workers: Option<u32>,
    /// load planner, disaggregated: fewest decode workers [default: --min-workers].
    #[arg(long, value_name = "N")]
    decode_min_workers: Option<u32>,
    /// load planner, disaggregated: most decode workers [default: --max-workers].
    #[arg(long, value_name = "N")]
    decode_max_workers: Option<u32>,
    /// load planner: seconds from a scale-up decision until the new worker accepts requests [default: 30].
    #[arg(long, value_name = "S")]
    startup_s: Option<f64>,
    /// load planner: target for the p90 TTFT of the requests whose first token came since the last tick (the aggregated or the prefill pool's), ms [default: --slo-ttft-ms, else 1000].
    #[arg(long, value_name = "MS")]
    planner_ttft_ms: Option<f64>,
    /// load planner, disaggregated: target for the p90 TPOT of the requests completed since the last tick (the decode pool's), ms [default: --slo-tpot-ms, else 100].
    #[arg(long, value_name = "MS")]
    planner_tpot_ms: Option<f64>,
    /// load planner: target for the waiting requests per accepting worker [default: 4].
    #[arg(long, value_name = "N")]
    planner_queue_depth: Option<f64>,

    /// Warm-up: the first N offered requests are simulated but not measured.
    #[arg(long, value_name = "N")]
    warmup: Option<u64>,
    /// Warm-up: requests planned in the first S seconds are not measured.
    #[arg(long, value_name = "S")]
    warmup_s: Option<f64>,
    /// Requests not finished S seconds after their planned arrival time out.
    #[arg(long, value_name = "S")]
    timeout: Option<f64>,
    /// After the last planned arrival, in-flight work may finish for S seconds.
    #[arg(long, value_name = "S")]
    drain: Option<f64>,
    /// Stop the run at S seconds of simulated time.
    #[arg(long, value_name = "S")]
    max_sim_time: Option<f64>,
    /// Where requests reach the engine from; over HTTP, TTFT and E2E include the time outside the engine (docs/fidelity.md) [default: in-process].
    #[arg(long, value_enum)]
    frontend: Option<FrontendArg>,
    /// Time outside the engine per request, ms [default: --frontend's: 0 in process, 25 over streaming HTTP; or the fitted one of --timing fitted:FILE].
    #[arg(long, value_name = "MS")]
    frontend_ms: Option<f64>,
    /// Goodput threshold on TTFT, ms.
    #[arg(long = "slo-ttft-ms", alias = "sla-ttft-ms", value_name = "MS")]
    sla_ttft_ms: Option<f64>,
    /// Goodput threshold on TPOT, ms.
    #[arg(long = "slo-tpot-ms", alias = "sla-tpot-ms", value_name = "MS")]
    sla_tpot_ms: Option<f64>,
    /// Goodput threshold on E2E, ms.
    #[arg(long = "slo-e2e-ms", alias = "sla-e2e-ms", value_name = "MS")]
    sla_e2e_ms: Option<f64>,
    /// Seed of every random choice [default: 42].
    #[arg(long)]
    seed: Option<u64>,
    /// Also run seeds --seed + 1 .. --seed + N - 1 (N in all, in parallel) and
    /// add each figure's mean and 95 % interval over them (a generated
    /// workload, --router random, or --router kv with --router-temperature
    /// above 0; at most 10000).
    #[arg(long, value_name = "N")]
    seeds: Option<u64>,

    /// Run this spec file (flags given as well override its fields).
    #[arg(long, value_name = "FILE")]
    spec: Option<PathBuf>,
    /// Print the spec this invocation describes (to --out FILE if given) and
    /// exit; its paths are absolute, so it runs from any folder.
    #[arg(long)]
    print_spec: bool,
    /// Write one record per request to FILE, trace line and ids, times and
    /// latencies in ms (docs/report.md): JSON lines, or CSV when FILE ends in
    /// .csv; `-` is stdout, which then carries only these lines (the report
    /// goes to --out FILE).
    #[arg(long, value_name = "FILE", value_parser = Target::parser())]
    per_request: Option<Target>,
    #[command(flatten)]
    html: HtmlArgs,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    output: OutputArgs,
    // Last: the heading would carry over to the flags after it.
    #[command(flatten, next_help_heading = "Generated workload (with --synthetic)")]
    workload: SyntheticArgs,
}

impl ReplayArgs {
    /// The spec these flags describe (over `--spec` or the defaults).
    fn build_spec(&self) -> anyhow::Result<ReplaySpec> {
        let mut spec = match &self.spec {
            Some(path) => ReplaySpec::from_file(path).map_err(|e| blame_file(e, path))?,
            None => ReplaySpec::default(),
        };
        self.set_workload(&mut spec)?;
        if self.spec.is_none() && matches!(spec.workload, WorkloadSpec::Demo) {
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
            e.backend = match b {
                BackendArg::Vllm => Backend::Vllm,
                BackendArg::Sglang => Backend::Sglang,
                BackendArg::Trtllm => Backend::Trtllm,
            };
        }
        macro_rules! set {
            ($($flag:ident => $field:expr),* $(,)?) => { $( if let Some(v) = self.$flag { $field = v; } )* };
        }
        set!(dp_size => e.dp_size, tp_size => e.tp_size, max_num_seqs => e.max_num_seqs,
             max_num_batched_tokens => e.max_num_batched_tokens, speedup_ratio => e.speedup_ratio,
             decode_speedup_ratio => e.decode_speedup_ratio);
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
        if let Some(p) = self.preemption {
            e.preemption = match p {
                PreemptionArg::Lifo => PreemptionMode::Lifo,
                PreemptionArg::Fifo => PreemptionMode::Fifo,
            };
        }
        if let Some(t) = timing_flags(
            self.timing.as_deref(),
            self.profile.as_deref(),
            &spec.timing,
        )
        .map_err(anyhow_of)?
        {
            spec.timing = t;
        }
        if self.num_gpu_blocks.is_some() {
            spec.engine.num_gpu_blocks = self.num_gpu_blocks;
        }
        self.set_pools(&mut spec);
        self.set_pool_timings(&mut spec)?;
        if let Some(r) = self.router {
            spec.router.policy = r.kind();
        }
        if let Some(r) = self.router_inner {
            spec.router.inner = Some(r.kind());
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
            (None, Some(_), None) => anyhow::bail!(
                "--router-queue-capacity has no effect without --router-queue-threshold: the router queues requests only while every worker is at that threshold"
            ),
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
            (self.sla_ttft_ms, &mut spec.sla.ttft_ms),
            (self.sla_tpot_ms, &mut spec.sla.tpot_ms),
            (self.sla_e2e_ms, &mut spec.sla.e2e_ms),
        ] {
            if flag.is_some() {
                *field = flag;
            }
        }
        let served = self.frontend.map(|f| match f {
            FrontendArg::InProcess => Served::InProcess,
            FrontendArg::HttpStreaming => Served::HttpStreaming,
        });
        apply_frontend(&mut spec, served, self.frontend_ms, self.timing.as_deref())
            .map_err(anyhow_of)?;
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

    /// The topology: `--workers` (aggregated) or `--prefill-workers` and
    /// `--decode-workers` (disaggregated), with the KV link's flags.
    fn set_topology(&self, spec: &mut ReplaySpec) -> anyhow::Result<()> {
        let disagg = self.prefill_workers.is_some() || self.decode_workers.is_some();
        if let (Some(_), true) = (self.workers, disagg) {
            let flag = if self.prefill_workers.is_some() {
                "--prefill-workers"
            } else {
                "--decode-workers"
            };
            anyhow::bail!("--workers and {flag} describe different topologies: give --workers N (aggregated) or --prefill-workers P --decode-workers D (disaggregated)");
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
                anyhow::bail!("{given} needs {missing}: a disaggregated topology has both pools");
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
                anyhow::bail!("{flag} has no effect on an aggregated topology: it applies to disaggregated serving (--prefill-workers P --decode-workers D)");
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
            t.mode = match m {
                TransferModeArg::FullPrompt => KvTransferMode::FullPrompt,
                TransferModeArg::DestinationMissing => KvTransferMode::DestinationMissing,
            };
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
    fn set_pool_timings(&self, spec: &mut ReplaySpec) -> anyhow::Result<()> {
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
            let t = timing_flags(timing.as_deref(), profile.as_deref(), &own)
                .map_err(anyhow_of)
                .with_context(|| match (timing, profile) {
                    (Some(t), _) => format!("{prefix}-timing {t}"),
                    (None, p) => format!("{prefix}-profile {}", p.as_deref().unwrap_or_default()),
                })?;
            if let Some(t) = t {
                pool.timing = Some(Box::new(t));
            }
        }
        Ok(())
    }

    /// The scaling flags: `--planner` picks the policy; the planner's
    /// parameters need the load planner (flags with no effect are errors).
    fn set_scaling(&self, spec: &mut ReplaySpec) -> anyhow::Result<()> {
        match self.planner {
            Some(PlannerArg::None) => {
                spec.scaling.policy = ScalingKind::None;
                spec.scaling.load = None;
            }
            Some(PlannerArg::Load) => spec.scaling.policy = ScalingKind::Load,
            None => {}
        }
        if spec.scaling.policy != ScalingKind::Load {
            if let Some(flag) = self.given_flags(&["scaling.load."]).first() {
                anyhow::bail!("{flag} has no effect with the scaling policy {}: it sets the load-based planner (--planner load)", spec.scaling.policy.name());
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
    fn field_flags(&self) -> Vec<FieldFlag> {
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
            ("sla.ttft_ms", "--slo-ttft-ms", self.sla_ttft_ms.is_some()),
            ("sla.tpot_ms", "--slo-tpot-ms", self.sla_tpot_ms.is_some()),
            ("sla.e2e_ms", "--slo-e2e-ms", self.sla_e2e_ms.is_some()),
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
    fn set_workload(&self, spec: &mut ReplaySpec) -> anyhow::Result<()> {
        match (&self.trace, self.synthetic) {
            (Some(_), true) => anyhow::bail!("give either a TRACE file or --synthetic, not both"),
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
                if let Some(f) = self.trace_format {
                    *format = Some(match f {
                        FormatArg::Mooncake => TraceFormat::Mooncake,
                        FormatArg::Bailian => TraceFormat::Bailian,
                        FormatArg::Azure => TraceFormat::Azure,
                        FormatArg::Burstgpt => TraceFormat::Burstgpt,
                    });
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
    fn check_effects(&self, spec: &ReplaySpec) -> anyhow::Result<()> {
        let workload = match &spec.workload {
            WorkloadSpec::Demo => "the built-in demo trace".to_string(),
            WorkloadSpec::Trace { path, .. } => format!("the trace {}", path.display()),
            WorkloadSpec::Synthetic(_) => "a generated workload".to_string(),
        };
        if !matches!(spec.workload, WorkloadSpec::Synthetic(_)) {
            if let Some(flag) = self.workload.given().first() {
                anyhow::bail!("{flag} has no effect on {workload}: it shapes a generated workload (--synthetic)");
            }
        }
        if !matches!(spec.workload, WorkloadSpec::Trace { .. }) {
            let trace_flags = [
                ("--trace-format", self.trace_format.is_some()),
                ("--trace-block-size", self.trace_block_size.is_some()),
            ];
            if let Some((flag, _)) = trace_flags.iter().find(|(_, given)| *given) {
                anyhow::bail!("{flag} has no effect on {workload}: it applies to a TRACE file");
            }
        }
        if let (Some(flag), Some(k)) = (self.workload.arrival_flag(), spec.admission.concurrency) {
            anyhow::bail!("{flag} has no effect with --concurrency {k}: in concurrency mode a request arrives when one in flight ends");
        }
        let synthetic = match &spec.workload {
            WorkloadSpec::Synthetic(s) => Some(s),
            WorkloadSpec::Demo | WorkloadSpec::Trace { .. } => None,
        };
        if let (Some(d), Some(1)) = (self.dispatch, synthetic.map(|s| s.turns)) {
            anyhow::bail!("--dispatch {d} has no effect with 1 turn per session: it times later turns (give --turns N with N above 1)");
        }
        if !aisim_lab::seeds::seed_matters(spec) {
            let router = spec.router.placing().name();
            let given = [
                ("--seed", self.seed.is_some()),
                ("--seeds", self.seeds.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
                anyhow::bail!("{flag} has no effect on {workload} with the {router} router: nothing is random (the seed draws a generated workload's Poisson or Gamma arrivals, uniform or normal lengths and prefix groups, --router random's choices and --router kv's at --router-temperature above 0)");
            }
        }
        let kv_flags = [
            ("--router-temperature", self.router_temperature.is_some()),
            ("--prefill-load-scale", self.prefill_load_scale.is_some()),
        ];
        if let Some((flag, _)) = kv_flags.iter().find(|(_, given)| *given) {
            let placing = spec.router.placing();
            if placing != RouterKind::Kv {
                anyhow::bail!("{flag} has no effect with the {} router: only --router kv (or sticky over --router-inner kv) reads it", placing.name());
            }
        }
        if self.router_inner.is_some() && spec.router.policy != RouterKind::Sticky {
            anyhow::bail!("--router-inner has no effect with the {} router: only --router sticky has an inner policy", spec.router.policy.name());
        }
        // The vLLM core's settings (TensorRT-LLM runs on it too); SGLang's
        // core has its own.
        let vllm_only = [
            ("--preemption", self.preemption.is_some(), "it retracts the newest request, there is no victim to choose"),
            ("--max-num-batched-tokens", self.max_num_batched_tokens.is_some(), "its budgets are the spec's engine.max_prefill_tokens and engine.chunked_prefill_size"),
        ];
        if spec.engine.backend == Backend::Sglang {
            if let Some((flag, _, why)) = vllm_only.iter().find(|(_, given, _)| *given) {
                anyhow::bail!("{flag} has no effect with --backend sglang: {why}");
            }
        }
        if self.print_spec {
            let given = [
                ("--per-request", self.per_request.is_some()),
                ("--html", self.html.html.is_some()),
                ("--format", self.output.format.is_some()),
                ("--seeds", self.seeds.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
                anyhow::bail!("{flag} has no effect with --print-spec, which runs nothing (--out FILE writes the spec there)");
            }
        }
        Ok(())
    }
}

impl ReplayArgs {
    /// The spec these flags describe as a sweep grid's `base_args`, their
    /// relative paths (TRACE, --spec, a `table:` timing) taken from
    /// `folder`, the grid's. Flags about one run's outputs are refused: the
    /// sweep writes the results.
    pub(crate) fn spec_in(mut self, folder: &std::path::Path) -> anyhow::Result<ReplaySpec> {
        let outputs = [
            ("--per-request", self.per_request.is_some()),
            ("--html", self.html.html.is_some()),
            ("--format", self.output.format.is_some()),
            ("--out", self.output.out.is_some()),
            ("--seeds", self.seeds.is_some()),
            ("--print-spec", self.print_spec),
            ("--quiet", self.quiet),
        ];
        if let Some((flag, _)) = outputs.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} has no effect in a grid's base_args, which describe the runs' spec (the sweep writes the results; for several seeds, make `seed` an axis)");
        }
        for path in [self.trace.as_mut(), self.spec.as_mut()]
            .into_iter()
            .flatten()
        {
            *path = folder.join(&*path);
        }
        // Every flag that carries a path: the timing forms' files, read
        // (`fitted:`) while the flags are turned into a spec.
        for timing in [
            &mut self.timing,
            &mut self.prefill_timing,
            &mut self.decode_timing,
        ]
        .into_iter()
        .flatten()
        {
            *timing = timing_in(timing, folder).map_err(anyhow_of)?;
        }
        let mut spec = self.build_spec()?;
        spec.resolve_paths(folder);
        Ok(spec)
    }
}
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

/// Runs the command.
pub fn run(args: ReplayArgs) -> Result<(), CliError> {
    let mut spec = args.build_spec().map_err(input)?;
    args.check_outputs(&spec)?;
    if args.print_spec {
        let here = std::env::current_dir()
            .context("resolving the spec's paths against the current folder")
            .map_err(input)?;
        spec.resolve_paths(&here);
        let target = args.output.out.clone().unwrap_or(Target::Stdout);
        return target.write("the spec", format!("{}\n", spec.to_json()).as_bytes());
    }
    let per_request_on_stdout = args
        .per_request
        .as_ref()
        .is_some_and(Target::is_stdout)
        .then_some("--per-request -");
    let other_on_stdout = stdout_taker(&[per_request_on_stdout, args.html.on_stdout()])?;
    args.output.check_stdout(other_on_stdout)?;
    // Errors found while building or running (a speedup that stretches a
    // trace line past the clock) lead with the flag too, as the spec's own.
    let field_flags = args.field_flags();
    let blamed = |e: JobError| match e.into_boxed().downcast::<ReplayError>() {
        Ok(e) => input(blame_flag(*e, &field_flags)),
        Err(other) => input(anyhow::Error::from_boxed(other)),
    };
    let outputs = ReplayOutputs {
        cdfs: args.html.html.is_some(),
        stream_records: args.per_request.is_some(),
    };
    // Said before the run as well as in the report (`warnings`).
    for w in aisim_replay::report::spec_warnings(&spec) {
        tracing::warn!("{w}");
    }
    let job = ReplayJob::new(spec, args.seeds, outputs).map_err(blamed)?;
    let mut progress = (!args.quiet && std::io::stderr().is_terminal())
        .then(crate::progress::ProgressBarObserver::new);
    let mut written = 0u64;
    let output = match &args.per_request {
        None => job
            .run(&mut RunObserver {
                progress: progress.as_mut(),
                records: None,
                written: &mut written,
            })
            .map_err(blamed)?,
        // Records are written as their requests end, so memory stays bounded
        // at any request count; a write error stops the run.
        Some(target) => {
            let format = match target {
                Target::File(path) => RowFormat::for_file_name(&path.to_string_lossy()),
                Target::Stdout => RowFormat::Jsonl,
            };
            let mut result = None;
            target.stream("the per-request records", |w| {
                let run = job.run(&mut RunObserver {
                    progress: progress.as_mut(),
                    records: Some(RowWriter::new(format, w)),
                    written: &mut written,
                });
                match run.map_err(|e| e.into_boxed().downcast::<ReplayError>()) {
                    Err(Ok(e)) => match *e {
                        ReplayError::Output(e) => Err(e),
                        other => {
                            result = Some(Err(JobError::from(other)));
                            Ok(())
                        }
                    },
                    Err(Err(other)) => {
                        result = Some(Err(JobError::from_boxed(other)));
                        Ok(())
                    }
                    Ok(out) => {
                        result = Some(Ok(out));
                        Ok(())
                    }
                }
            })?;
            result.expect("set unless writing failed").map_err(blamed)?
        }
    };
    let started = Instant::now();
    let _span = tracing::info_span!("report").entered();
    let json = aisim_report::to_json(&output.report);
    args.html
        .write(|| aisim_report::html::render_replay_html(&output.report, output.cdfs.as_ref()))?;
    args.output.emit_beside(
        other_on_stdout,
        || aisim_report::replay::render_replay(&output.report),
        &json,
    )?;
    tracing::info!(
        records = written,
        json_bytes = json.len(),
        wall_ms = started.elapsed().as_millis() as u64,
        "outputs written"
    );
    Ok(())
}

/// The replay's observer in the binary: the progress bar on a terminal, and
/// the per-request records when asked for.
struct RunObserver<'a> {
    progress: Option<&'a mut crate::progress::ProgressBarObserver>,
    records: Option<RowWriter<&'a mut dyn std::io::Write>>,
    written: &'a mut u64,
}

impl ReplayObserver for RunObserver<'_> {
    fn progress(&mut self, dispatched: u64, remaining: u64) {
        if let Some(p) = &mut self.progress {
            p.progress(dispatched, remaining);
        }
    }

    fn records(&mut self, batch: &[RequestRecord]) -> std::io::Result<()> {
        if let Some(w) = &mut self.records {
            w.write(batch)?;
            *self.written += batch.len() as u64;
        }
        Ok(())
    }

    fn finished(&mut self) {
        if let Some(p) = &mut self.progress {
            p.finished();
        }
    }
}

/// What commands that take the replay's flags (`sweep saturate`) read of
/// them besides the spec.
impl ReplayArgs {
    /// The files the run reads, each named by the flag that gave it (or the
    /// spec file's field): the trace, `--spec`, timing tables and fitted files.
    pub(crate) fn input_files<'a>(&'a self, spec: &'a ReplaySpec) -> Vec<(String, &'a Path)> {
        let flag = |field: &str| -> String {
            let given = match field {
                "workload.path" => self.trace.as_ref().map(|_| "TRACE"),
                "timing.path" => self.timing.as_ref().map(|_| "--timing"),
                "topology.prefill.timing.path" => {
                    self.prefill_timing.as_ref().map(|_| "--prefill-timing")
                }
                _ => self.decode_timing.as_ref().map(|_| "--decode-timing"),
            };
            match (given, &self.spec) {
                (Some(f), _) => f.to_string(),
                (None, Some(_)) => format!("--spec's {field}"),
                (None, None) => field.to_string(),
            }
        };
        let mut files: Vec<(String, &Path)> = spec
            .input_files()
            .into_iter()
            .map(|(field, path)| (flag(field), path))
            .collect();
        files.extend(self.spec.as_deref().map(|p| ("--spec".to_string(), p)));
        for (name, timing) in [
            ("--timing", &self.timing),
            ("--prefill-timing", &self.prefill_timing),
            ("--decode-timing", &self.decode_timing),
        ] {
            if let Some(path) = timing.as_deref().and_then(|t| t.strip_prefix("fitted:")) {
                files.push((name.to_string(), Path::new(path)));
            }
        }
        files
    }

    /// Refuses, before any work, an output that is an input or another output.
    pub(crate) fn check_outputs(&self, spec: &ReplaySpec) -> Result<(), CliError> {
        let inputs = self.input_files(spec);
        let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (f.as_str(), *p)).collect();
        check_paths(
            &inputs,
            &[
                ("--out", self.output.out.as_ref()),
                ("--per-request", self.per_request.as_ref()),
                ("--html", self.html.html.as_ref()),
            ],
        )
    }

    /// The spec the flags describe.
    pub(crate) fn spec(&self) -> anyhow::Result<ReplaySpec> {
        self.build_spec()
    }

    /// `--format` / `--out` and `--html`.
    pub(crate) fn outputs(&self) -> (&OutputArgs, &HtmlArgs) {
        (&self.output, &self.html)
    }

    /// The flags given among those such a command may set itself or not
    /// read: one run's outputs and seeds, and the arrival rate's flags.
    pub(crate) fn run_and_rate_flags(&self) -> Vec<&'static str> {
        [
            ("--seeds", self.seeds.is_some()),
            ("--per-request", self.per_request.is_some()),
            ("--print-spec", self.print_spec),
            ("--speedup", self.speedup.is_some()),
            ("--rate", self.workload.rate.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }
}

//! `aisim replay`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use aisim_core::{Backend, PreemptionMode};
use aisim_lab::jobs::replay::{ReplayJob, ReplayOutputs};
use aisim_lab::jobs::replay_flags::ReplayFlags;
use aisim_lab::jobs::timing_form::timing_in;
use aisim_lab::jobs::JobError;
use aisim_replay::collector::RequestRecord;
use aisim_replay::frontend::Served;
use aisim_replay::per_request::{RowFormat, RowWriter};
use aisim_replay::runtime::ReplayObserver;
use aisim_replay::spec::{DispatchMode, KvTransferMode, RouterKind, ScalingKind};
use aisim_replay::trace::TraceFormat;
use aisim_replay::{ReplayError, ReplaySpec};
use anyhow::Context;
use clap::{Args, ValueEnum};

use super::synthetic::SyntheticArgs;
use crate::exit::{anyhow_of, input, CliError};
use crate::output::{check_paths, stdout_taker, HtmlArgs, OutputArgs, Target};

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
    /// The flags that describe the run, for the library to build its spec.
    fn flags(&self) -> ReplayFlags {
        ReplayFlags {
            trace: self.trace.clone(),
            trace_format: self.trace_format.map(|f| match f {
                FormatArg::Mooncake => TraceFormat::Mooncake,
                FormatArg::Bailian => TraceFormat::Bailian,
                FormatArg::Azure => TraceFormat::Azure,
                FormatArg::Burstgpt => TraceFormat::Burstgpt,
            }),
            trace_block_size: self.trace_block_size,
            speedup: self.speedup,
            concurrency: self.concurrency,
            dispatch: self.dispatch,
            synthetic: self.synthetic,
            workers: self.workers,
            backend: self.backend.map(|b| match b {
                BackendArg::Vllm => Backend::Vllm,
                BackendArg::Sglang => Backend::Sglang,
                BackendArg::Trtllm => Backend::Trtllm,
            }),
            dp_size: self.dp_size,
            tp_size: self.tp_size,
            block_size: self.block_size,
            num_gpu_blocks: self.num_gpu_blocks,
            max_num_seqs: self.max_num_seqs,
            max_num_batched_tokens: self.max_num_batched_tokens,
            no_prefix_caching: self.no_prefix_caching,
            no_chunked_prefill: self.no_chunked_prefill,
            preemption: self.preemption.map(|p| match p {
                PreemptionArg::Lifo => PreemptionMode::Lifo,
                PreemptionArg::Fifo => PreemptionMode::Fifo,
            }),
            max_model_len: self.max_model_len,
            timing: self.timing.clone(),
            profile: self.profile.clone(),
            speedup_ratio: self.speedup_ratio,
            decode_speedup_ratio: self.decode_speedup_ratio,
            prefill_workers: self.prefill_workers,
            decode_workers: self.decode_workers,
            prefill_profile: self.prefill_profile.clone(),
            prefill_timing: self.prefill_timing.clone(),
            decode_profile: self.decode_profile.clone(),
            decode_timing: self.decode_timing.clone(),
            prefill_max_num_batched_tokens: self.prefill_max_num_batched_tokens,
            prefill_max_num_seqs: self.prefill_max_num_seqs,
            prefill_num_gpu_blocks: self.prefill_num_gpu_blocks,
            decode_max_num_batched_tokens: self.decode_max_num_batched_tokens,
            decode_max_num_seqs: self.decode_max_num_seqs,
            decode_num_gpu_blocks: self.decode_num_gpu_blocks,
            kv_transfer_gb_s: self.kv_transfer_gb_s,
            kv_transfer_latency_ms: self.kv_transfer_latency_ms,
            kv_bytes_per_token: self.kv_bytes_per_token,
            kv_transfer_mode: self.kv_transfer_mode.map(|m| match m {
                TransferModeArg::FullPrompt => KvTransferMode::FullPrompt,
                TransferModeArg::DestinationMissing => KvTransferMode::DestinationMissing,
            }),
            router: self.router.map(RouterArg::kind),
            router_temperature: self.router_temperature,
            prefill_load_scale: self.prefill_load_scale,
            router_inner: self.router_inner.map(RouterArg::kind),
            router_queue_threshold: self.router_queue_threshold,
            router_queue_capacity: self.router_queue_capacity,
            planner: self.planner.map(|p| match p {
                PlannerArg::None => ScalingKind::None,
                PlannerArg::Load => ScalingKind::Load,
            }),
            planner_tick_s: self.planner_tick_s,
            min_workers: self.min_workers,
            max_workers: self.max_workers,
            prefill_min_workers: self.prefill_min_workers,
            prefill_max_workers: self.prefill_max_workers,
            decode_min_workers: self.decode_min_workers,
            decode_max_workers: self.decode_max_workers,
            startup_s: self.startup_s,
            planner_ttft_ms: self.planner_ttft_ms,
            planner_tpot_ms: self.planner_tpot_ms,
            planner_queue_depth: self.planner_queue_depth,
            warmup: self.warmup,
            warmup_s: self.warmup_s,
            timeout: self.timeout,
            drain: self.drain,
            max_sim_time: self.max_sim_time,
            frontend: self.frontend.map(|f| match f {
                FrontendArg::InProcess => Served::InProcess,
                FrontendArg::HttpStreaming => Served::HttpStreaming,
            }),
            frontend_ms: self.frontend_ms,
            slo_ttft_ms: self.sla_ttft_ms,
            slo_tpot_ms: self.sla_tpot_ms,
            slo_e2e_ms: self.sla_e2e_ms,
            seed: self.seed,
            seeds: self.seeds,
            spec: self.spec.clone(),
            workload: self.workload.flags(),
        }
    }

    /// The spec these flags describe (over `--spec` or the defaults): the
    /// library builds it (`ReplayFlags`), as for every front end.
    fn build_spec(&self) -> anyhow::Result<ReplaySpec> {
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
        self.flags().to_spec().map_err(anyhow_of)
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
    let flags = args.flags();
    let blamed = |e: JobError| input(anyhow_of(flags.blame(e)));
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

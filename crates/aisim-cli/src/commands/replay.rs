//! `aisim replay`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use aisim_core::profile::resolve_profile;
use aisim_core::timing::TimingSpec;
use aisim_core::{Backend, PreemptionMode};
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{DispatchMode, RouterKind, TopologySpec, WorkloadSpec};
use aisim_replay::trace::TraceFormat;
use aisim_replay::{ReplaySpec, Replayer};
use anyhow::Context;
use clap::{Args, ValueEnum};

use super::synthetic::SyntheticArgs;
use crate::exit::{input, CliError};
use crate::output::OutputArgs;

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
enum PreemptionArg {
    Lifo,
    Fifo,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
enum RouterArg {
    RoundRobin,
    Random,
    LeastLoaded,
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
    #[command(flatten)]
    synthetic: SyntheticArgs,

    /// Workers [default: 1; 4 for the demo].
    #[arg(long)]
    workers: Option<u32>,
    /// Engine scheduling semantics [default: vllm].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Attention data-parallel ranks per worker [default: 1].
    #[arg(long)]
    dp_size: Option<u32>,
    /// Tensor-parallel GPUs per rank, for GPU counts [default: 1].
    #[arg(long)]
    tp_size: Option<u32>,
    /// Tokens per KV block [default: 64 vllm, 32 trtllm, 16 sglang].
    #[arg(long)]
    block_size: Option<u32>,
    /// KV blocks per rank [default: 16384, or the profile's capacity].
    #[arg(long)]
    num_gpu_blocks: Option<u32>,
    /// Most running requests per rank [default: 256].
    #[arg(long)]
    max_num_seqs: Option<u32>,
    /// Token budget per pass [default: 8192].
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
    /// Reject requests longer than this (prompt + output).
    #[arg(long)]
    max_model_len: Option<u32>,
    /// Timing model: polynomial, fixed:PREFILL_MS,DECODE_MS or table:FILE [default: polynomial].
    #[arg(long)]
    timing: Option<String>,
    /// Iteration timing from a GPU profile (a100, h100/llama-3.1-70b/tp8, ...); also sets the KV capacity.
    #[arg(long, conflicts_with = "timing")]
    profile: Option<String>,
    /// Divide every pass time by this [default: 1.0].
    #[arg(long)]
    speedup_ratio: Option<f64>,
    /// Divide decode time by this as well [default: 1.0].
    #[arg(long)]
    decode_speedup_ratio: Option<f64>,

    /// Placement policy [default: round_robin].
    #[arg(long, value_enum)]
    router: Option<RouterArg>,

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
    /// Goodput threshold on TTFT, ms.
    #[arg(long)]
    sla_ttft_ms: Option<f64>,
    /// Goodput threshold on TPOT, ms.
    #[arg(long)]
    sla_tpot_ms: Option<f64>,
    /// Goodput threshold on E2E, ms.
    #[arg(long)]
    sla_e2e_ms: Option<f64>,
    /// Seed of every random choice [default: 42].
    #[arg(long)]
    seed: Option<u64>,

    /// Run this spec file (flags given as well override its fields).
    #[arg(long, value_name = "FILE")]
    spec: Option<PathBuf>,
    /// Print the spec this invocation describes and exit.
    #[arg(long)]
    print_spec: bool,
    /// Write one JSON line per request to FILE.
    #[arg(long, value_name = "FILE")]
    per_request: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    output: OutputArgs,
}

fn parse_timing(s: &str) -> anyhow::Result<TimingSpec> {
    if s == "polynomial" {
        return Ok(TimingSpec::Polynomial);
    }
    if let Some(rest) = s.strip_prefix("fixed:") {
        let (p, d) = rest
            .split_once(',')
            .context("fixed timing is written fixed:PREFILL_MS,DECODE_MS, e.g. fixed:20,5")?;
        let prefill_ms = p
            .trim()
            .parse()
            .with_context(|| format!("`{p}` is not a number of milliseconds"))?;
        let decode_ms = d
            .trim()
            .parse()
            .with_context(|| format!("`{d}` is not a number of milliseconds"))?;
        return Ok(TimingSpec::Fixed {
            prefill_ms,
            decode_ms,
        });
    }
    if let Some(path) = s.strip_prefix("table:") {
        return Ok(TimingSpec::Table { path: path.into() });
    }
    anyhow::bail!("--timing `{s}`: use polynomial, fixed:PREFILL_MS,DECODE_MS or table:FILE")
}

impl ReplayArgs {
    /// The spec these flags describe (over `--spec` or the defaults).
    fn build_spec(&self) -> anyhow::Result<ReplaySpec> {
        let mut spec = match &self.spec {
            Some(path) => ReplaySpec::from_file(path)?,
            None => ReplaySpec::default(),
        };
        if let Some(path) = &self.trace {
            anyhow::ensure!(
                !self.synthetic.synthetic,
                "give either a TRACE file or --synthetic, not both"
            );
            spec.workload = WorkloadSpec::Trace {
                path: path.clone(),
                format: self.trace_format.map(|f| match f {
                    FormatArg::Mooncake => TraceFormat::Mooncake,
                    FormatArg::Bailian => TraceFormat::Bailian,
                    FormatArg::Azure => TraceFormat::Azure,
                    FormatArg::Burstgpt => TraceFormat::Burstgpt,
                }),
                trace_block_size: self.trace_block_size,
            };
        } else if self.synthetic.synthetic {
            spec.workload = WorkloadSpec::Synthetic(self.synthetic.to_spec()?);
        } else if self.spec.is_none() {
            spec.topology = TopologySpec::Aggregated {
                workers: DEMO_WORKERS,
            };
        }
        if let Some(w) = self.workers {
            spec.topology = TopologySpec::Aggregated { workers: w };
        }
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
        if let Some(t) = &self.timing {
            spec.timing = parse_timing(t)?;
        }
        if let Some(key) = &self.profile {
            let p = resolve_profile(key)?;
            spec.timing = TimingSpec::Iteration {
                profile: key.clone(),
            };
            if self.num_gpu_blocks.is_none() {
                let tokens = p.total_kv_blks() * p.blk_size() as u64;
                let blocks = tokens / spec.engine.effective_block_size() as u64;
                spec.engine.num_gpu_blocks = u32::try_from(blocks).unwrap_or(u32::MAX);
            }
        }
        if let Some(n) = self.num_gpu_blocks {
            spec.engine.num_gpu_blocks = n;
        }
        if let Some(r) = self.router {
            spec.router.policy = match r {
                RouterArg::RoundRobin => RouterKind::RoundRobin,
                RouterArg::Random => RouterKind::Random,
                RouterArg::LeastLoaded => RouterKind::LeastLoaded,
            };
        }
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
        spec.validate()?;
        Ok(spec)
    }
}

/// Runs the command.
pub fn run(args: ReplayArgs) -> Result<(), CliError> {
    let spec = args.build_spec().map_err(input)?;
    if args.print_spec {
        println!("{}", spec.to_json());
        return Ok(());
    }
    let replayer = Replayer::new(spec, SpecComposition)
        .map_err(input)?
        .with_records(args.per_request.is_some());
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let output = if show_progress {
        let mut bar = aisim_replay::progress::ProgressBarObserver::new();
        replayer.run_observed(&mut bar)
    } else {
        replayer.run()
    }
    .map_err(input)?;
    if let Some(path) = &args.per_request {
        write_per_request(path, &output.records).map_err(input)?;
    }
    let json = aisim_report::to_json(&output.report);
    args.output.emit(
        || aisim_report::replay::render_replay(&output.report),
        &json,
    )
}

fn write_per_request(
    path: &PathBuf,
    records: &[aisim_replay::collector::RequestRecord],
) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for r in records {
        serde_json::to_writer(&mut w, r)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}

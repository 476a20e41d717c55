//! `aisim measured import`.

use std::path::{Path, PathBuf};

use aisim_lab::fidelity::import::{requests_path, trace_path};
use aisim_lab::fidelity::measured::MeasuredRun;
use aisim_lab::jobs::fidelity::{self as jobs, ImportRequest, ImportSource};
use aisim_lab::jobs::Version;
use clap::{Args, Subcommand, ValueEnum};

use crate::exit::{input, job, CliError};
use crate::output::{check_paths, Target};

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct MeasuredArgs {
    #[command(subcommand)]
    pub command: MeasuredCommand,
}

/// What `aisim measured` does.
#[derive(Debug, Subcommand)]
pub enum MeasuredCommand {
    /// Write a measured run (and the trace it implies, NAME.trace.jsonl beside it).
    ///
    /// Example:
    ///   aisim measured import requests.jsonl --out run.json --profile h100/llama-3.1-8b
    ///   aisim measured import --from llmservingsim ../shared/real/llmservingsim/RTX4090__Llama-3.1-8B --out rtx4090.json
    ///   aisim measured import --from inference-perf RUN_DIR --stage 0 --profile h100/mixtral-8x7b/tp2 --out stage0.json
    ///   aisim measured import --from vllm-bench vllm-result.json --profile h100/llama-3.1-8b --out run.json
    ///   aisim measured import --from aiperf artifacts/RUN --profile h100/llama-3.1-8b --out run.json
    ///   aisim measured import --from guidellm benchmarks.json --benchmark 2 --profile h100/llama-3.1-8b --out run.json
    ///   aisim measured import --from blis observed.csv --profile h100/llama-3.1-8b --out run.json
    #[command(verbatim_doc_comment)]
    Import(ImportArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Source {
    /// The generic per-request shape (JSONL or CSV, docs/fidelity.md).
    Generic,
    /// An LLMServingSim run folder (requests.jsonl, meta.json, trace_mooncake_b16.jsonl).
    Llmservingsim,
    /// An inference-perf run folder (results/config.yaml, the stages' lifecycle metrics, exp-config.yaml); needs --stage and --profile.
    InferencePerf,
    /// The JSON of `vllm bench serve --save-result --save-detailed` (sent at start_times); needs --profile.
    VllmBench,
    /// AIPerf's profile_export.jsonl, or its artifact folder (sent at request_start_ns); needs --profile.
    Aiperf,
    /// GuideLLM's benchmarks.json or .yaml, or its folder (planned at targeted_start); needs --profile, and --benchmark N when it holds several.
    Guidellm,
    /// SGLang's bench_serving --output-details JSONL, when a run has send times (start_times); needs --profile, and --benchmark N when it holds several runs.
    SglangBench,
    /// A BLIS TraceV2: its data CSV (the header YAML of the same name beside it), or the folder holding both (planned at arrival_time_us); needs --profile.
    Blis,
}

/// Flags of `measured import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Per-request file, or the run folder (--from llmservingsim, inference-perf; aiperf, guidellm: their output folder; blis: the folder of a trace's header and data).
    pub input: PathBuf,
    /// What INPUT is [default: generic].
    #[arg(long, value_enum)]
    pub from: Option<Source>,
    /// The measured-run file to write; its trace (NAME.trace.jsonl) and per-request file (NAME.requests.jsonl) go beside it.
    #[arg(long, value_name = "RUN.json")]
    pub out: PathBuf,
    /// Name of the run [default: the file name of --out without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Profile of the run's physics timing (HARDWARE/MODEL[/tpN]) [default: llmservingsim: from the folder name].
    #[arg(long)]
    pub profile: Option<String>,
    /// Take the run's spec (engine, timing, ...) from this measured run; the workload is the import's.
    #[arg(long, value_name = "RUN.json")]
    pub spec_from: Option<PathBuf>,
    /// Tokens per prompt block of the hash ids (generic files; aiperf: the prompts of inputs.json; blis: the prefix groups') [default: 16].
    #[arg(long)]
    pub trace_block_size: Option<u32>,
    /// With --from inference-perf: the stage to import (0-based), or `summary` for all of them.
    #[arg(long, value_name = "N|summary")]
    pub stage: Option<String>,
    /// With --from guidellm: the benchmark of the report; with --from sglang-bench: the run (line) of the file (0-based) [default: its only one].
    #[arg(long, value_name = "N")]
    pub benchmark: Option<usize>,
}

/// Refuses, before any work, an import whose outputs (the run, its trace
/// and its per-request file) are one of its inputs or each other.
fn check_import_paths(a: &ImportArgs) -> Result<(), CliError> {
    // A run folder's inputs are its files (and its results folder's).
    let files = |dir: &Path| -> Vec<(&str, PathBuf)> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| ("INPUT", e.path()))
            .filter(|(_, p)| p.is_file())
            .collect()
    };
    let mut inputs = if a.input.is_dir() {
        let mut all = files(&a.input);
        all.extend(files(&a.input.join("results")));
        all
    } else {
        vec![("INPUT", a.input.clone())]
    };
    inputs.extend(a.spec_from.clone().map(|p| ("--spec-from", p)));
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    let (trace, requests) = (
        Target::File(trace_path(&a.out)),
        Target::File(requests_path(&a.out)),
    );
    let out = Target::File(a.out.clone());
    check_paths(
        &inputs,
        &[
            ("--out", Some(&out)),
            ("--out's trace", Some(&trace)),
            ("--out's per-request file", Some(&requests)),
        ],
    )
}

/// Runs the command.
pub fn run(args: MeasuredArgs) -> Result<(), CliError> {
    let MeasuredCommand::Import(a) = args.command;
    check_import_paths(&a)?;
    let i = jobs::measured_import(&ImportRequest {
        version: Version::CURRENT,
        input: a.input,
        from: a.from.map(|f| match f {
            Source::Generic => ImportSource::Generic,
            Source::Llmservingsim => ImportSource::Llmservingsim,
            Source::InferencePerf => ImportSource::InferencePerf,
            Source::VllmBench => ImportSource::VllmBench,
            Source::Aiperf => ImportSource::Aiperf,
            Source::Guidellm => ImportSource::Guidellm,
            Source::SglangBench => ImportSource::SglangBench,
            Source::Blis => ImportSource::Blis,
        }),
        out: a.out.clone(),
        name: a.name,
        profile: a.profile,
        spec_from: a.spec_from,
        trace_block_size: a.trace_block_size,
        stage: a.stage,
        benchmark: a.benchmark,
    })
    .map_err(job)?;
    let beside = match &i.requests {
        Some((path, _)) => format!(
            "its trace {} and per-request file {} beside it",
            i.trace_path.display(),
            path.display()
        ),
        None => format!("its trace {} beside it", i.trace_path.display()),
    };
    Target::File(i.trace_path).write("the trace", i.trace.as_bytes())?;
    if let Some((path, text)) = i.requests {
        Target::File(path).write("the per-request file", text.as_bytes())?;
    }
    Target::File(a.out.clone()).write(
        "the measured run",
        format!("{}\n", i.run.to_json()).as_bytes(),
    )?;
    // What was written must read back: it is checked as any run is.
    let run = MeasuredRun::from_file(&a.out).map_err(input)?;
    crate::output::note(format_args!(
        // The name in quotes: a run named `run` is not "the run run".
        "wrote the measured run `{}` ({} requests) to {}, {beside}",
        run.name,
        run.measured.offered.or(run.measured.completed).unwrap_or(0),
        a.out.display()
    ));
    Ok(())
}

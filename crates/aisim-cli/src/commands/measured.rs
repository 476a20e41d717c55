//! `aisim measured import`.

use std::path::PathBuf;

use aisim_lab::fidelity::import::{imported, read_generic, read_llmservingsim};
use aisim_lab::fidelity::measured::MeasuredRun;
use aisim_replay::ReplaySpec;
use clap::{Args, Subcommand, ValueEnum};

use super::timing::timing_flags;
use crate::exit::{input, CliError};
use crate::output::Target;

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
    #[command(verbatim_doc_comment)]
    Import(ImportArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Source {
    /// The generic per-request shape (JSONL or CSV, docs/fidelity.md).
    Generic,
    /// An LLMServingSim run folder (requests.jsonl, meta.json, trace_mooncake_b16.jsonl).
    Llmservingsim,
}

/// Flags of `measured import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Per-request file, or with --from llmservingsim the run folder.
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
    /// Tokens per prompt block of the hash ids (generic files) [default: 16].
    #[arg(long)]
    pub trace_block_size: Option<u32>,
}

/// Runs the command.
pub fn run(args: MeasuredArgs) -> Result<(), CliError> {
    let MeasuredCommand::Import(a) = args.command;
    let (requests, spec, block) = match a.from.unwrap_or(Source::Generic) {
        Source::Llmservingsim => {
            if a.trace_block_size.is_some() {
                return Err(input(anyhow::anyhow!("--trace-block-size has no effect with --from llmservingsim: its trace has 16-token blocks")));
            }
            if a.spec_from.is_some() {
                return Err(input(anyhow::anyhow!("--spec-from has no effect with --from llmservingsim: the spec comes from its meta.json")));
            }
            let (r, s) = read_llmservingsim(&a.input, a.profile.as_deref()).map_err(input)?;
            (r, s, 16)
        }
        Source::Generic => {
            let block = a.trace_block_size.unwrap_or(16);
            if block == 0 {
                return Err(input(anyhow::anyhow!(
                    "--trace-block-size 0: at least 1 token per block"
                )));
            }
            let mut spec = match &a.spec_from {
                Some(p) => MeasuredRun::from_file(p).map_err(input)?.spec,
                None => ReplaySpec::default(),
            };
            if a.profile.is_some() {
                if let Some(t) = timing_flags(Some("physics"), a.profile.as_deref(), &spec.timing)
                    .map_err(input)?
                {
                    spec.timing = t;
                }
            }
            (read_generic(&a.input).map_err(input)?, spec, block)
        }
    };
    let name = a.name.clone().unwrap_or_else(|| {
        a.out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let i = imported(&a.out, &name, spec, &requests, block);
    Target::File(i.trace_path).write("the trace", i.trace.as_bytes())?;
    Target::File(i.requests_path).write("the per-request file", i.requests.as_bytes())?;
    Target::File(a.out.clone()).write(
        "the measured run",
        format!("{}\n", i.run.to_json()).as_bytes(),
    )?;
    // What was written must read back: it is checked as any run is.
    MeasuredRun::from_file(&a.out).map_err(input)?;
    Ok(())
}

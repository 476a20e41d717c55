//! `aisim validate`.

use std::path::{Path, PathBuf};

use aisim_lab::jobs::fidelity::{self as jobs, ValidateRequest};
use aisim_lab::jobs::Version;
use clap::Args;

use crate::exit::{job, CliError};
use crate::output::{check_paths, OutputArgs, Target};

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Measured-run files (docs/fidelity.md).
    #[arg(required = true, value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
    /// Timing model instead of each run's: polynomial, fixed:PREFILL_MS,DECODE_MS, table:FILE, physics, fitted:FITTED.json or layers:DIR[,LAYERS].
    #[arg(long)]
    pub timing: Option<String>,
    /// Profile of --timing physics / fitted:FILE (else each run's); alone, its iteration timing.
    #[arg(long)]
    pub profile: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Refuses an output that is one of the runs or a file they read (the file
/// of `--timing fitted:FILE` or `table:FILE` included).
pub fn check_run_outputs(
    runs: &[PathBuf],
    timing: Option<&str>,
    outputs: &[(&str, Option<&Target>)],
) -> Result<(), CliError> {
    let mut inputs = jobs::run_inputs(runs).map_err(job)?;
    if let Some(path) = timing.and_then(|t| {
        ["fitted:", "table:"]
            .iter()
            .find_map(|form| t.strip_prefix(form))
    }) {
        inputs.push(("--timing".to_string(), PathBuf::from(path)));
    }
    let inputs: Vec<(&str, &Path)> = inputs
        .iter()
        .map(|(f, p)| (f.as_str(), p.as_path()))
        .collect();
    check_paths(&inputs, outputs)
}

/// Runs the command.
pub fn run(args: ValidateArgs) -> Result<(), CliError> {
    args.output.check_stdout(None)?;
    check_run_outputs(
        &args.runs,
        args.timing.as_deref(),
        &[("--out", args.output.out.as_ref())],
    )?;
    let report = jobs::validate(&ValidateRequest {
        version: Version::CURRENT,
        runs: args.runs,
        timing: args.timing,
        profile: args.profile,
    })
    .map_err(job)?;
    let json = aisim_report::to_json(&report);
    args.output
        .emit(|| aisim_report::fidelity::render_validation(&report), &json)
}

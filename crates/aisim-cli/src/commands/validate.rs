//! `aisim validate`.

use std::path::PathBuf;

use aisim_lab::fidelity::measured::MeasuredRun;
use aisim_lab::fidelity::validate::validate;
use clap::Args;

use super::timing::timing_flags;
use crate::exit::{input, CliError};
use crate::output::OutputArgs;

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

/// Reads every run.
pub fn read_runs(paths: &[PathBuf]) -> Result<Vec<MeasuredRun>, CliError> {
    paths
        .iter()
        .map(|p| MeasuredRun::from_file(p).map_err(input))
        .collect()
}

/// The runs with `--timing` / `--profile` applied (each over its own spec's timing).
pub fn with_timing(
    mut runs: Vec<MeasuredRun>,
    timing: Option<&str>,
    profile: Option<&str>,
) -> Result<Vec<MeasuredRun>, CliError> {
    for run in &mut runs {
        if let Some(t) = timing_flags(timing, profile, &run.spec.timing)
            .map_err(|e| input(e.context(format!("run {}", run.name))))?
        {
            run.spec.timing = t;
        }
    }
    Ok(runs)
}

/// Runs the command.
pub fn run(args: ValidateArgs) -> Result<(), CliError> {
    args.output.check_stdout(None)?;
    let runs = with_timing(
        read_runs(&args.runs)?,
        args.timing.as_deref(),
        args.profile.as_deref(),
    )?;
    let report = validate(&runs, None).map_err(input)?;
    let json = aisim_report::to_json(&report);
    args.output
        .emit(|| aisim_report::fidelity::render_validation(&report), &json)
}

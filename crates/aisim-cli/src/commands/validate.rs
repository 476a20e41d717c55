//! `aisim validate`.

use std::path::PathBuf;

use aisim_lab::jobs::fidelity::{self as jobs, ValidateRequest};
use aisim_lab::jobs::Version;
use clap::Args;

use crate::exit::{job, CliError};
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

/// Runs the command.
pub fn run(args: ValidateArgs) -> Result<(), CliError> {
    args.output.check_stdout(None)?;
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

//! `aisim calibrate`.

use std::path::PathBuf;

use aisim_lab::jobs::fidelity::{self as jobs, CalibrateRequest, Calibrated};
use aisim_lab::jobs::Version;
use clap::Args;

use crate::exit::{input, job, CliError};
use crate::output::{Format, OutputArgs, Target};
use crate::progress::CalibrateBar;

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Measured-run files (docs/fidelity.md); each needs a physics (or profile) timing.
    #[arg(required = true, value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
    /// Write the fitted coefficients here (what --timing fitted:FILE reads); `-` is stdout, which then carries only them.
    #[arg(long, value_name = "FITTED.json", value_parser = Target::parser(), required = true)]
    pub out: Target,
    /// Coefficients to fit, comma-separated [default: all the runs exercise].
    #[arg(long, value_delimiter = ',')]
    pub fit: Option<Vec<String>>,
    /// Start from these coefficients (physics or fitted:FILE) [default: physics].
    #[arg(long)]
    pub timing: Option<String>,
    /// Most replays of the set of runs [default: 200].
    #[arg(long)]
    pub max_evaluations: Option<u32>,
    /// Measured runs not fitted to: the report gives the fit's error on them.
    #[arg(long, value_name = "RUN.json", num_args = 1..)]
    pub holdout: Vec<PathBuf>,
    /// Also fit on every run but one, for each run, and report the error on the one left out.
    #[arg(long)]
    pub cross_validate: bool,
    /// Report format on stdout [default: table].
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

/// Runs the command.
pub fn run(args: CalibrateArgs) -> Result<(), CliError> {
    if args.out.is_stdout() && args.format.is_some() {
        return Err(input(anyhow::anyhow!(
            "--out - and --format would both write stdout: give --out a FILE or drop --format"
        )));
    }
    // The start's fitted file may be refitted in place (written whole).
    let inputs: Vec<PathBuf> = args.runs.iter().chain(&args.holdout).cloned().collect();
    super::validate::check_run_outputs(&inputs, None, &[("--out", Some(&args.out))])?;
    // The search takes seconds: a terminal sees its replays and each stage.
    let bar = CalibrateBar::new();
    let request = CalibrateRequest {
        version: Version::CURRENT,
        runs: args.runs,
        fit: args.fit,
        timing: args.timing,
        max_evaluations: args.max_evaluations,
        holdout: args.holdout,
        cross_validate: args.cross_validate,
    };
    let calibrated = jobs::calibrate_observed(&request, &mut |p| bar.observe(p));
    bar.finish();
    let Calibrated { report, fitted } = calibrated.map_err(job)?;
    args.out.write(
        "the fitted coefficients",
        aisim_report::to_json(&fitted).as_bytes(),
    )?;
    let json = aisim_report::to_json(&report);
    if args.out.is_stdout() {
        return Ok(());
    }
    let output = OutputArgs {
        format: args.format,
        out: None,
    };
    output.emit(
        || aisim_report::fidelity::render_calibration(&report),
        &json,
    )
}

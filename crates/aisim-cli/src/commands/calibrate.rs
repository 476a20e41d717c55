//! `aisim calibrate`.

use std::path::PathBuf;
use std::time::Instant;

use aisim_core::timing::{PhysicsTiming, COEFFICIENT_NAMES};
use aisim_lab::fidelity::calibrate::{
    calibrate, physics_timing, CalibrateOptions, FittedFile, FITTED_VERSION,
};
use aisim_lab::fidelity::validate::validate;
use aisim_report::fidelity::{CalibrationHost, CalibrationReport};
use clap::Args;

use super::timing::parse_timing;
use super::validate::read_runs;
use crate::exit::{input, CliError};
use crate::output::{Format, OutputArgs, Target};

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
    /// Most replays of the set of runs [default: 1000].
    #[arg(long)]
    pub max_evaluations: Option<u32>,
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
    let started = Instant::now();
    let runs = read_runs(&args.runs)?;
    let mut options = CalibrateOptions::for_runs(&runs);
    if let Some(t) = &args.timing {
        let spec = parse_timing(t, None, &runs[0].spec.timing).map_err(input)?;
        let aisim_core::timing::TimingSpec::Physics { coefficients, .. } = spec else {
            return Err(input(anyhow::anyhow!(
                "--timing {t}: calibration starts from physics or fitted:FILE"
            )));
        };
        options.start = coefficients;
    }
    if let Some(fit) = &args.fit {
        options.fit = Vec::new();
        for name in fit {
            let known = COEFFICIENT_NAMES
                .iter()
                .find(|n| **n == name.trim())
                .ok_or_else(|| {
                    input(anyhow::anyhow!(
                        "--fit {name}: not a coefficient; use {}",
                        COEFFICIENT_NAMES.join(", ")
                    ))
                })?;
            options.fit.push(known);
        }
    }
    if let Some(n) = args.max_evaluations {
        if n == 0 {
            return Err(input(anyhow::anyhow!(
                "--max-evaluations 0: at least 1 replay is needed"
            )));
        }
        options.max_evaluations = n;
    }
    let at = |c| -> Result<Vec<_>, CliError> {
        runs.iter()
            .map(|r| {
                let mut r = r.clone();
                r.spec.timing = physics_timing(&r, c).map_err(input)?;
                Ok(r)
            })
            .collect()
    };
    let zero_shot = validate(&at(options.start)?, None).map_err(input)?;
    let fit = calibrate(&runs, &options).map_err(input)?;
    let calibrated = validate(&at(fit.coefficients)?, None).map_err(input)?;
    let file = FittedFile {
        version: FITTED_VERSION,
        coefficients: fit.coefficients,
        fit: Some(fit.clone()),
    };
    // A fitted file is usable only if the model accepts it.
    PhysicsTiming::new(
        &aisim_core::profile::ComputedProfile::from_key(
            runs[0].spec.timing.profile_key().unwrap_or_default(),
        )
        .map_err(input)?,
        fit.coefficients,
    )
    .map_err(input)?;
    args.out.write(
        "the fitted coefficients",
        aisim_report::to_json(&file).as_bytes(),
    )?;
    let report = CalibrationReport {
        fit: &fit,
        zero_shot: &zero_shot,
        calibrated: &calibrated,
        host: CalibrationHost {
            wall_s: started.elapsed().as_secs_f64(),
        },
    };
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

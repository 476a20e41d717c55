//! `aisim sweep saturate`: the replay's flags plus a range to search, the
//! highest rate at which the SLOs hold (docs/sweeps.md).

use aisim_lab::jobs::sweep::{
    blame_saturate, check_saturate_flags, sweep_saturate, SaturateRequest,
};
use aisim_lab::jobs::Version;
use aisim_lab::saturate::{Axis, Range};

use super::replay::ReplayArgs;
use crate::exit::{input, job, CliError};
use crate::output::stdout_taker;

/// Flags of the subcommand (documented on `SweepCommand` in main.rs).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Search arrivals per second over LO..HI: a trace's mean rate times the
    /// speedup, a generated workload's --rate.
    #[arg(
        long,
        value_name = "LO..HI",
        allow_hyphen_values = true,
        required_unless_present = "speedup_range",
        conflicts_with = "speedup_range"
    )]
    rate_range: Option<Range>,
    /// Search the trace-time compression (admission.speedup) over LO..HI.
    #[arg(long, value_name = "LO..HI", allow_hyphen_values = true)]
    speedup_range: Option<Range>,
    /// Least share of the offered cohort that must complete within every
    /// --slo-*-ms limit for a rate to hold (0.99 reads like a p99 limit).
    #[arg(long, value_name = "SHARE", default_value_t = 0.9)]
    attainment: f64,
    /// Bisection stops once the failing end is within this share of the holding end.
    #[arg(long, value_name = "SHARE", default_value_t = 0.01)]
    tolerance: f64,
    /// Most bisection probes (0 ..= 64); the curve's points come on top.
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_probes: u32,
    /// Evenly spaced points over the range, both ends included (2 ..= 1000).
    #[arg(long, value_name = "N", default_value_t = 5)]
    points: u32,
    /// Threads running the curve's replays [default: the machine's cores;
    /// more than 4 per core are not started].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    // Last: its headings would carry over to the flags after it.
    #[command(flatten)]
    replay: ReplayArgs,
}

impl Args {
    /// The axis searched (clap requires one of the ranges).
    fn axis(&self) -> Axis {
        match self.rate_range {
            Some(_) => Axis::Rate,
            None => Axis::Speedup,
        }
    }

    /// A replay flag the search sets itself, or that only one replay
    /// reads, is an error naming it (docs/errors.md).
    fn check_effects(&self, axis: Axis) -> Result<(), CliError> {
        check_saturate_flags(&self.replay.run_and_rate_flags(), axis).map_err(job)
    }
}

/// Runs the command: writes the outputs, then fails (exit 2) when the range
/// did not answer (its low end fails, its high end holds, or the probes ran
/// out before the tolerance).
pub fn run(args: Args) -> Result<(), CliError> {
    let axis = args.axis();
    args.check_effects(axis)?;
    let spec = args.replay.spec().map_err(input)?;
    args.replay.check_outputs(&spec)?;
    let (output, html) = args.replay.outputs();
    let html_on_stdout = stdout_taker(&[html.on_stdout()])?;
    output.check_stdout(html_on_stdout)?;
    let request = SaturateRequest {
        version: Version::CURRENT,
        spec,
        rate_range: args.rate_range.map(|r| r.to_string()),
        speedup_range: args.speedup_range.map(|r| r.to_string()),
        attainment: args.attainment,
        tolerance: args.tolerance,
        max_probes: args.max_probes,
        points: args.points,
        threads: args.threads,
    };
    let report = sweep_saturate(&request).map_err(|e| job(blame_saturate(e, axis)))?;
    if let Some(w) = aisim_report::saturate::holds_again(&report) {
        tracing::warn!("{w}");
    }
    html.write(|| aisim_report::html::render_saturate_html(&report))?;
    output.emit_beside(
        html_on_stdout,
        || aisim_report::saturate::render_saturate(&report),
        &aisim_report::to_json(&report),
    )?;
    if report.status.answered() {
        Ok(())
    } else {
        Err(input(anyhow::anyhow!(aisim_report::saturate::verdict(
            &report
        ))))
    }
}

//! `aisim compare`.

use std::path::PathBuf;

use aisim_lab::compare::{compare_files, CompareRequest, Compared};
use aisim_lab::jobs::Version;
use clap::Args;

use crate::exit::{job, CliError};
use crate::output::{check_paths, stdout_taker, HtmlArgs, OutputArgs};

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first run's JSON report (`aisim replay --out A.json`).
    #[arg(value_name = "A.json")]
    a: PathBuf,
    /// The second run's JSON report.
    #[arg(value_name = "B.json")]
    b: PathBuf,
    /// Every figure of the report in the table, not only the headline ones (JSON has them all).
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    html: HtmlArgs,
}

/// Runs the command.
pub fn run(args: CompareArgs) -> Result<(), CliError> {
    let other_on_stdout = stdout_taker(&[args.html.on_stdout()])?;
    args.output.check_stdout(other_on_stdout)?;
    check_paths(
        &[("A.json", &args.a), ("B.json", &args.b)],
        &[
            ("--out", args.output.out.as_ref()),
            ("--html", args.html.html.as_ref()),
        ],
    )?;
    let Compared { comparison, a, b } = compare_files(&CompareRequest {
        version: Version::CURRENT,
        a: args.a,
        b: args.b,
    })
    .map_err(job)?;
    // The table shows the warnings above it; beside JSON or the page on
    // stdout they go to stderr.
    if args.output.json_on_stdout() || other_on_stdout.is_some() {
        for w in &comparison.warnings {
            tracing::warn!("{w}");
        }
    }
    args.html
        .write(|| aisim_report::html::render_compare_html(&comparison, &a, &b))?;
    args.output.emit_beside(
        other_on_stdout,
        || aisim_report::compare::render_comparison(&comparison, args.all),
        &aisim_report::to_json(&comparison),
    )
}

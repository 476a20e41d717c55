//! `aisim compare`.

use std::path::{Path, PathBuf};

use aisim_core::text_file::{json_error_text, read_text_file};
use aisim_replay::{ReplayReport, SCHEMA_VERSION};
use clap::Args;

use crate::exit::{input, CliError};
use crate::output::{stdout_taker, HtmlArgs, OutputArgs};

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first run's JSON report (`aisim replay --out A.json`).
    #[arg(value_name = "A.json")]
    a: PathBuf,
    /// The second run's JSON report.
    #[arg(value_name = "B.json")]
    b: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    html: HtmlArgs,
}

/// Reads a replay report, refusing any other file by name.
fn read_report(path: &Path) -> anyhow::Result<ReplayReport> {
    let text = read_text_file(path)?;
    let not_a_report = |why: String| {
        anyhow::anyhow!(
            "{}: not an aisim replay report (the JSON `aisim replay --out FILE` writes): {why}",
            path.display()
        )
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| not_a_report(json_error_text(&e)))?;
    match value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(v) if v == SCHEMA_VERSION as u64 => {}
        Some(v) => {
            return Err(not_a_report(format!(
                "report schema version {v}; this aisim reads version {SCHEMA_VERSION}"
            )))
        }
        None => return Err(not_a_report("no `schema_version`".into())),
    }
    serde_json::from_value(value).map_err(|e| not_a_report(e.to_string()))
}

/// Runs the command.
pub fn run(args: CompareArgs) -> Result<(), CliError> {
    let other_on_stdout = stdout_taker(&[args.html.on_stdout()])?;
    args.output.check_stdout(other_on_stdout)?;
    let a = read_report(&args.a).map_err(input)?;
    let b = read_report(&args.b).map_err(input)?;
    let comparison = aisim_report::compare::compare(
        &a,
        &args.a.display().to_string(),
        &b,
        &args.b.display().to_string(),
    );
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
        || aisim_report::compare::render_comparison(&comparison),
        &aisim_report::to_json(&comparison),
    )
}

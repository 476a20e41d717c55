//! `aisim profiles`.

use clap::Args;

use crate::exit::CliError;
use crate::output::OutputArgs;

/// List hardware, models and GPU profiles with their derived numbers.
///
/// Profiles are named elsewhere by key: a manual profile (`a100`, `h100`,
/// `a10g`) or `HARDWARE/MODEL[/tpN][/fp8|int4]`, e.g. `h200/llama-3.1-70b/tp8`.
///
/// Example: `aisim profiles --format json | jq '.profiles[].key'`
#[derive(Debug, Args)]
pub struct ProfilesArgs {
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs the command.
pub fn run(args: ProfilesArgs) -> Result<(), CliError> {
    let catalog = aisim_core::profile::catalog_summary();
    let json = aisim_report::to_json(&catalog);
    args.output
        .emit(|| aisim_report::profiles::render_catalog(&catalog), &json)
}

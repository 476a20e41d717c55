//! `aisim profiles`.

use clap::Args;

use crate::exit::CliError;
use crate::output::OutputArgs;

/// Flags of the subcommand (documented on `Command` in main.rs).
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

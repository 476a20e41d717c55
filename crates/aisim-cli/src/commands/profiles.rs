//! `aisim profiles`.

use aisim_lab::jobs::catalog::{self, ProfilesRequest};
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
    let listing = catalog::profiles(&ProfilesRequest::default());
    let json = aisim_report::to_json(&listing);
    args.output
        .emit(|| aisim_report::profiles::render_listing(&listing), &json)
}

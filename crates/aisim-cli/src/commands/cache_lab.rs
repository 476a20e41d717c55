//! `aisim cache-lab`.

use aisim_core::cache_lab::START_REQUESTS;
use aisim_lab::jobs::catalog::{self, CacheLabRequest};
use aisim_lab::jobs::Version;
use clap::Args;

use crate::exit::{job, CliError};
use crate::output::OutputArgs;

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct CacheLabArgs {
    /// Entries the LRU prefix cache holds (one session's prefix each).
    #[arg(short = 'C', long, default_value_t = 4)]
    capacity: u64,
    /// Sessions: request i reads the prefix of session i mod S.
    #[arg(short, long, default_value_t = 4)]
    sessions: u64,
    /// Requests played from an empty cache before the steps (at most 4096).
    #[arg(long, default_value_t = START_REQUESTS)]
    requests: u64,
    /// Requests added after that, one at a time, each printed (requests + steps at most 4096).
    #[arg(long, default_value_t = 0)]
    steps: u64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs the command.
pub fn run(a: CacheLabArgs) -> Result<(), CliError> {
    let run = catalog::cache_lab(&CacheLabRequest {
        version: Version::CURRENT,
        capacity: a.capacity,
        sessions: a.sessions,
        requests: a.requests,
        steps: a.steps,
    })
    .map_err(job)?;
    let json = aisim_report::to_json(&run);
    a.output
        .emit(|| aisim_report::cache_lab::render_cache_lab(&run), &json)
}

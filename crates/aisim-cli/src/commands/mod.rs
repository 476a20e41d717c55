//! One module per subcommand.

mod blame;
pub mod cache_lab;
pub mod calibrate;
pub mod compare;
pub mod fleet;
pub mod gen_trace;
pub mod measured;
pub mod profiles;
pub mod replay;
pub mod saturate;
pub mod sweep;
mod synthetic;
pub(crate) mod timing;
pub mod validate;

use crate::exit::{input, CliError};

/// The threads `--threads` asks for (0 refused), else the machine's.
pub(crate) fn threads(flag: Option<usize>) -> Result<usize, CliError> {
    match flag {
        Some(0) => Err(input(anyhow::anyhow!(
            "--threads 0: at least 1 thread runs the replays"
        ))),
        Some(n) => Ok(n),
        None => Ok(aisim_lab::seeds::available_threads()),
    }
}

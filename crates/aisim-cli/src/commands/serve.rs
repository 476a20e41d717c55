//! `aisim serve`: the flags into the service's configuration; the service
//! itself is `aisim_serve::serve`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use aisim_serve::{ServeConfig, ServeError, Token};
use clap::Args;

use crate::exit::CliError;

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address and port to listen on (port 0: any free port, printed).
    /// Any address but loopback needs a token.
    #[arg(long, default_value = "127.0.0.1:8000", value_name = "ADDR:PORT")]
    bind: SocketAddr,
    /// Data folder: uploaded traces and jobs, kept across restarts.
    #[arg(long, default_value = "./aisim-data", value_name = "DIR")]
    data: PathBuf,
    /// Jobs run at once [default: the machine's cores].
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// File holding the token every request must carry (`Authorization:
    /// Bearer TOKEN`) [default: $AISIM_TOKEN, else none].
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Largest trace upload, bytes.
    #[arg(long, default_value_t = aisim_serve::DEFAULT_MAX_UPLOAD, value_name = "BYTES")]
    max_upload: u64,
    /// Origin allowed to call the API from a browser page (CORS) [default: none].
    #[arg(long, value_name = "ORIGIN")]
    cors: Option<String>,
    /// Let requests name files on the server (measured runs, grids, timing
    /// tables), not only uploaded traces.
    #[arg(long)]
    allow_local_files: bool,
    /// Seconds a connection may send or read nothing before it is dropped.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    client_timeout: u64,
}

fn failed(e: ServeError) -> CliError {
    if e.is_usage() {
        CliError::Input(anyhow::Error::new(e))
    } else {
        CliError::Internal(anyhow::Error::new(e))
    }
}

/// Runs the command until SIGTERM or Ctrl-C.
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    let token = match (&args.token_file, std::env::var("AISIM_TOKEN")) {
        (Some(file), _) => Some(Token::from_file(file).map_err(failed)?),
        (None, Ok(text)) => Some(Token::new(&text, "AISIM_TOKEN").map_err(failed)?),
        (None, Err(_)) => None,
    };
    let config = ServeConfig {
        bind: args.bind,
        data: args.data,
        workers: args
            .workers
            .unwrap_or_else(aisim_core::thread_pool::available_threads),
        token,
        max_upload: args.max_upload,
        cors: args.cors,
        allow_local_files: args.allow_local_files,
        client_timeout: std::time::Duration::from_secs(args.client_timeout),
    };
    aisim_serve::serve(config, |addr| {
        // The one line scripts wait for.
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on http://{addr}");
        let _ = out.flush();
    })
    .map_err(failed)
}

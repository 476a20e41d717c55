//! `aisim`: replay LLM serving traces and plan GPU fleets, on a virtual clock.
//!
//! This binary only parses arguments, sets up logging and progress, runs the
//! library crates and maps failures to exit codes (0 ok, 1 run failed, 2 bad
//! usage, configuration or input).

mod commands;
mod exit;
mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use exit::CliError;

/// Deterministic simulator of LLM inference serving.
#[derive(Debug, Parser)]
#[command(name = "aisim", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// More log detail (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List hardware, models and GPU profiles with their derived numbers.
    Profiles(commands::profiles::ProfilesArgs),
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let result: Result<(), CliError> = match cli.command {
        Command::Profiles(args) => commands::profiles::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

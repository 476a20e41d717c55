//! Output conventions shared by every subcommand: a table on stdout by default,
//! `--format json` for JSON on stdout, `--out FILE` to also write the JSON.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::exit::{input, CliError};

/// What stdout carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Human-readable tables.
    #[default]
    Table,
    /// The full report as JSON.
    Json,
}

/// `--format` and `--out`.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl OutputArgs {
    /// Prints `table` or `json` by the chosen format, and writes `json` to `--out`.
    pub fn emit(&self, table: impl FnOnce() -> String, json: &str) -> Result<(), CliError> {
        if let Some(path) = &self.out {
            std::fs::write(path, json)
                .with_context(|| format!("cannot write {}", path.display()))
                .map_err(input)?;
        }
        match self.format {
            Format::Table => print!("{}", table()),
            Format::Json => print!("{json}"),
        }
        Ok(())
    }
}

//! Output conventions shared by every subcommand: a table on stdout by default,
//! `--format json` for JSON on stdout, `--out FILE` to also write the JSON, and
//! `-` as a file name for stdout. Every byte the binary writes to stdout goes
//! through [`Target`], so a closed pipe and a full disk are handled once.

use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

use aisim_core::out_file::{check_outputs, AtomicFile};

use clap::builder::{PathBufValueParser, TypedValueParser};
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

/// Where an output goes: `-` is stdout, anything else a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard output.
    Stdout,
    /// A file, created or truncated.
    File(PathBuf),
}

impl Target {
    /// The clap parser of an output flag's value.
    pub fn parser() -> impl TypedValueParser<Value = Target> {
        PathBufValueParser::new().map(|p| {
            if p.as_os_str() == "-" {
                Target::Stdout
            } else {
                Target::File(p)
            }
        })
    }

    /// Whether this is stdout.
    pub fn is_stdout(&self) -> bool {
        *self == Target::Stdout
    }

    /// The file, unless this is stdout.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Target::Stdout => None,
            Target::File(p) => Some(p),
        }
    }

    /// Writes `bytes` whole; `what` names them in the error.
    pub fn write(&self, what: &str, bytes: &[u8]) -> Result<(), CliError> {
        self.stream(what, |w| w.write_all(bytes))
    }

    /// Lets `fill` write through a buffer, then flushes it. A file that
    /// cannot be created is the user's error (exit 2); a failing write is
    /// not (exit 1), and a closed stdout pipe ends the program quietly.
    pub fn stream(
        &self,
        what: &str,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), CliError> {
        match self {
            Target::Stdout => {
                let mut w = BufWriter::new(std::io::stdout().lock());
                fill(&mut w)
                    .and_then(|()| w.flush())
                    .map_err(|e| self.write_error(what, e))
            }
            // Written under a temporary name and renamed when complete: a
            // failed or interrupted write leaves the file as it was.
            Target::File(p) => {
                let mut f = AtomicFile::create(p).map_err(|e| {
                    input(anyhow::anyhow!(
                        "cannot create {} for {what}: {e}",
                        p.display()
                    ))
                })?;
                fill(&mut f)
                    .and_then(|()| f.commit())
                    .map_err(|e| self.write_error(what, e))
            }
        }
    }

    fn write_error(&self, what: &str, e: std::io::Error) -> CliError {
        match self {
            Target::Stdout if e.kind() == ErrorKind::BrokenPipe => CliError::ClosedPipe,
            Target::Stdout => CliError::Write(format!("cannot write {what} to stdout: {e}")),
            Target::File(p) => {
                CliError::Write(format!("cannot write {what} to {}: {e}", p.display()))
            }
        }
    }
}

/// `--format` and `--out`.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format on stdout [default: table].
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Also write the JSON report to FILE; `-` puts the JSON on stdout instead of the table.
    #[arg(long, value_name = "FILE", value_parser = Target::parser())]
    pub out: Option<Target>,
}

impl OutputArgs {
    /// Fails when two streams would share stdout: `--out -` with `--format
    /// table`, or `other` (a flag such as `--per-request -` that already
    /// writes stdout) with `--out -` or an explicit `--format`. Check it
    /// before the work; [`OutputArgs::emit`] checks it again.
    pub fn check_stdout(&self, other: Option<&str>) -> Result<(), CliError> {
        let out_stdout = self.out.as_ref().is_some_and(Target::is_stdout);
        let why = match (other, out_stdout, self.format) {
            (None, true, Some(Format::Table)) => "--out - and --format table would both write stdout: --out - prints the JSON instead of the table, so drop --format table or give --out a FILE".to_string(),
            (Some(flag), true, _) => format!("{flag} and --out - would both write stdout: give one of them a FILE"),
            (Some(flag), false, Some(f)) => format!(
                "{flag} and --format {} would both write stdout: drop --format (the report then goes only to --out FILE)",
                f.to_possible_value().expect("no skipped values").get_name()
            ),
            _ => return Ok(()),
        };
        Err(input(anyhow::Error::msg(why)))
    }

    /// Whether stdout carries the JSON (`--format json` or `--out -`), not the table.
    pub fn json_on_stdout(&self) -> bool {
        self.format == Some(Format::Json) || self.out == Some(Target::Stdout)
    }

    /// Writes `json` to `--out`, then the rendering `--format` chooses to
    /// stdout: `table()`, or `json` with `--format json` or `--out -`.
    pub fn emit(&self, table: impl FnOnce() -> String, json: &str) -> Result<(), CliError> {
        self.emit_beside(None, table, json)
    }

    /// As [`OutputArgs::emit`], but nothing goes to stdout when `other` (see
    /// [`OutputArgs::check_stdout`]) already wrote it.
    pub fn emit_beside(
        &self,
        other: Option<&str>,
        table: impl FnOnce() -> String,
        json: &str,
    ) -> Result<(), CliError> {
        self.check_stdout(other)?;
        if let Some(t @ Target::File(_)) = &self.out {
            t.write("the JSON report", json.as_bytes())?;
        }
        if other.is_some() {
            return Ok(());
        }
        if self.json_on_stdout() {
            Target::Stdout.write("the JSON report", json.as_bytes())
        } else {
            Target::Stdout.write("the report", table().as_bytes())
        }
    }
}

/// `--html FILE`: the report as one self-contained HTML page.
#[derive(Debug, Args)]
pub struct HtmlArgs {
    /// Also write the report as one self-contained HTML page (inline SVG
    /// charts and the tables; no script, nothing fetched) to FILE; `-` is
    /// stdout, which then carries only the page.
    #[arg(long, value_name = "FILE", value_parser = Target::parser())]
    pub html: Option<Target>,
}

impl HtmlArgs {
    /// `--html -`, when the page goes to stdout.
    pub fn on_stdout(&self) -> Option<&'static str> {
        self.html
            .as_ref()
            .is_some_and(Target::is_stdout)
            .then_some("--html -")
    }

    /// Writes the page `render` makes, when asked for.
    pub fn write(&self, render: impl FnOnce() -> String) -> Result<(), CliError> {
        match &self.html {
            Some(t) => t.write("the HTML report", render().as_bytes()),
            None => Ok(()),
        }
    }
}

/// The one flag among `flags` (each `Some` when it writes stdout) that does;
/// two of them would interleave their streams, an error naming both.
pub fn stdout_taker(flags: &[Option<&'static str>]) -> Result<Option<&'static str>, CliError> {
    let mut given = flags.iter().flatten();
    let first = given.next().copied();
    match (first, given.next()) {
        (Some(a), Some(b)) => Err(input(anyhow::anyhow!(
            "{a} and {b} would both write stdout: give one of them a FILE"
        ))),
        _ => Ok(first),
    }
}

/// Refuses, before any work, an output file (flag and target) that is one
/// of the `inputs` (flag and path) or another output, or whose folder does
/// not exist (docs/errors.md, "Output files"). Stdout is no file.
pub fn check_paths(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, Option<&Target>)],
) -> Result<(), CliError> {
    let files: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|(flag, t)| Some((*flag, t.and_then(Target::file)?)))
        .collect();
    check_outputs(inputs, &files).map_err(input)
}

/// A progress or summary line on stderr. A closed stderr (`2>&1 | head`)
/// loses the line, never the command: `eprintln!` would panic there.
pub fn note(line: std::fmt::Arguments) {
    use std::io::Write;
    let line = line.to_string();
    let line = aisim_core::safe_text::terminal_safe(&line);
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

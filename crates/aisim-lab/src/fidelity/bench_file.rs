//! What the readers of load generators' result files share: what a reader
//! gives (the requests and the run's origin), finding the file in a run
//! folder, and reading JSON values as times and counts with errors that
//! say what the field must be.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use aisim_replay::trace::{row_error, Lines};
use aisim_replay::ReplayError;

use serde_json::{Map, Value};

use super::measured::{Origin, Served};
use super::timed_request::TimedRequest;
use super::FidelityError;

/// A load generator's run read as measured requests.
#[derive(Debug, Clone)]
pub struct BenchRun {
    /// Every request the file holds, completed or not, in file order.
    pub requests: Vec<TimedRequest>,
    /// What it was read from, which time is the arrival, and what is known
    /// of shared prefixes.
    pub origin: Origin,
    /// Where its times were taken: a server over HTTP, streaming (the load
    /// generators), or a simulation's engine (a simulator's own trace).
    pub served: Served,
}

/// `input` itself, or in a folder the first of `names` it holds.
pub(crate) fn input_file(input: &Path, names: &[&str]) -> Result<PathBuf, FidelityError> {
    if !input.is_dir() {
        return Ok(input.to_path_buf());
    }
    names
        .iter()
        .map(|n| input.join(n))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            FidelityError::field(
                input,
                "(folder)",
                format!(
                    "holds none of {}: name the result file itself",
                    names.join(", ")
                ),
            )
        })
}

/// A number of seconds (or any unit: `what` says which), finite.
pub(crate) fn number(v: &Value, what: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!("{v}: must be a number of {what}")),
    }
}

/// A whole count (of tokens), 0 ..= u32::MAX.
pub(crate) fn count(v: &Value) -> Result<u32, String> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("{v}: must be a whole number from 0 to 4294967295"))
}

/// An id: a string as it is, anything else as its JSON text.
pub(crate) fn id_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// Reads JSON lines, giving each object and its line to `row`.
pub(crate) fn json_lines(
    path: &Path,
    mut row: impl FnMut(usize, &Map<String, Value>) -> Result<(), ReplayError>,
) -> Result<(), ReplayError> {
    let file = File::open(path).map_err(|source| ReplayError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = Lines::new(BufReader::new(file), path);
    while let Some((line, text)) = lines.next_line()? {
        if text.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(text)
            .map_err(|e| aisim_replay::trace::json_rows::broken_json(path, line, &e))?;
        let o = v
            .as_object()
            .ok_or_else(|| row_error(path, line, "(row)", "not a JSON object"))?;
        row(line, o)?;
    }
    Ok(())
}

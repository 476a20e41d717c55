//! CSV readers: Azure LLM inference traces and BurstGPT logs.

use std::io::BufRead;
use std::path::Path;

use super::timestamp::parse_wall_clock_ms;
use super::{row_error, SessionInterner, TraceRecord};
use crate::error::ReplayError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Azure,
    BurstGpt,
}

/// Splits one CSV line, honouring double quotes (`""` inside quotes is a quote).
pub(crate) fn split_csv(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

struct Columns {
    names: Vec<String>,
}

impl Columns {
    fn find(&self, path: &Path, name: &str) -> Result<usize, ReplayError> {
        self.position(name).ok_or_else(|| {
            row_error(
                path,
                1,
                name,
                format!("missing column (header has: {})", self.names.join(", ")),
            )
        })
    }
    fn position(&self, name: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|n| n.trim().eq_ignore_ascii_case(name))
    }
}

fn cell<'a>(
    cells: &'a [String],
    idx: usize,
    path: &Path,
    line: usize,
    field: &str,
) -> Result<&'a str, ReplayError> {
    cells
        .get(idx)
        .map(|s| s.trim())
        .ok_or_else(|| row_error(path, line, field, "missing (row has too few columns)"))
}

fn tokens(s: &str, path: &Path, line: usize, field: &str) -> Result<u32, ReplayError> {
    if let Ok(v) = s.parse::<u32>() {
        return Ok(v);
    }
    // Some exports write counts as floats ("12.0").
    match s.parse::<f64>() {
        Ok(v) if v < 0.0 => Err(row_error(path, line, field, format!("negative length {s}"))),
        Ok(v) if v.fract() == 0.0 && v <= u32::MAX as f64 => Ok(v as u32),
        _ => Err(row_error(
            path,
            line,
            field,
            format!("`{s}` is not a whole number of tokens"),
        )),
    }
}

fn seconds(s: &str, path: &Path, line: usize, field: &str) -> Result<f64, ReplayError> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(row_error(
            path,
            line,
            field,
            format!("`{s}` is not a number of seconds"),
        )),
    }
}

pub(crate) fn read<R: BufRead>(
    reader: R,
    path: &Path,
    shape: Shape,
) -> Result<(Vec<TraceRecord>, u64), ReplayError> {
    let mut lines = reader.lines().enumerate();
    let header = loop {
        match lines.next() {
            None => {
                return Err(ReplayError::TraceFile {
                    path: path.to_path_buf(),
                    reason: "empty file: no CSV header".into(),
                })
            }
            Some((_, l)) => {
                let l = l.map_err(|source| ReplayError::Io {
                    path: path.to_path_buf(),
                    source,
                })?;
                if !l.trim().is_empty() {
                    break l;
                }
            }
        }
    };
    let cols = Columns {
        names: split_csv(header.trim_start_matches('\u{feff}')),
    };
    let (ts_name, in_name, out_name) = match shape {
        Shape::Azure => ("TIMESTAMP", "ContextTokens", "GeneratedTokens"),
        Shape::BurstGpt => ("Timestamp", "Request tokens", "Response tokens"),
    };
    let (ts, inp, out) = (
        cols.find(path, ts_name)?,
        cols.find(path, in_name)?,
        cols.find(path, out_name)?,
    );
    let session_col = cols.position("Session ID");
    let mut sessions = SessionInterner::default();
    let mut records = Vec::new();
    let mut skipped = 0u64;
    for (i, l) in lines {
        let line = i + 1;
        let text = l.map_err(|source| ReplayError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let cells = split_csv(&text);
        let ts_text = cell(&cells, ts, path, line, ts_name)?;
        let timestamp_ms = match shape {
            Shape::Azure => {
                parse_wall_clock_ms(ts_text).map_err(|r| row_error(path, line, ts_name, r))?
            }
            Shape::BurstGpt => seconds(ts_text, path, line, ts_name)? * 1e3,
        };
        let input_length = tokens(cell(&cells, inp, path, line, in_name)?, path, line, in_name)?;
        let output_length = tokens(
            cell(&cells, out, path, line, out_name)?,
            path,
            line,
            out_name,
        )?;
        if shape == Shape::BurstGpt && output_length == 0 {
            // A failed request in the log: skipped on purpose, and counted.
            skipped += 1;
            continue;
        }
        let session = session_col
            .and_then(|c| cells.get(c))
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| sessions.intern(s));
        records.push(TraceRecord {
            line,
            timestamp_ms,
            input_length,
            output_length,
            hash_ids: Vec::new(),
            session,
            chat_id: None,
            parent_chat_id: None,
            think_ms: None,
        });
    }
    Ok((records, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_cells() {
        assert_eq!(
            split_csv("a,\"b,c\",\"d\"\"e\","),
            vec!["a", "b,c", "d\"e", ""]
        );
    }
}

//! A profiled timing table read from JSON.
//!
//! ```json
//! { "prefill": [[tokens, ms], ...],
//!   "decode": { "kv_tokens": [...], "context": [...], "ms": [[...], ...] } }
//! ```
//! `prefill` is interpolated linearly in the prompt tokens of the pass (and
//! extrapolated linearly beyond its ends); `decode.ms[i][j]` is the time at
//! `kv_tokens[i]` active KV tokens and mean context `context[j]`, interpolated
//! (and extrapolated) bilinearly and floored at 1 ms. Axes must be strictly
//! increasing and every value finite.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::pass::{PassShape, PassTime, TimingModel};
use crate::error::CoreError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    prefill: Vec<[f64; 2]>,
    decode: DecodeGrid,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecodeGrid {
    kv_tokens: Vec<f64>,
    context: Vec<f64>,
    ms: Vec<Vec<f64>>,
}

/// Prefill and decode times interpolated from measured points.
#[derive(Debug, Clone)]
pub struct TableTiming {
    prefill_x: Vec<f64>,
    prefill_ms: Vec<f64>,
    kv_tokens: Vec<f64>,
    context: Vec<f64>,
    decode_ms: Vec<Vec<f64>>,
    name: String,
}

pub(super) fn bad(path: &Path, field: impl Into<String>, reason: impl Into<String>) -> CoreError {
    CoreError::BadFile {
        path: path.to_path_buf(),
        field: field.into(),
        reason: reason.into(),
    }
}

pub(super) fn check_axis(path: &Path, field: &str, xs: &[f64]) -> Result<(), CoreError> {
    if xs.is_empty() {
        return Err(bad(path, field, "needs at least one point"));
    }
    for (i, x) in xs.iter().enumerate() {
        if !x.is_finite() {
            return Err(bad(
                path,
                format!("{field}[{i}]"),
                format!("{x} is not a finite number"),
            ));
        }
        if i > 0 && *x <= xs[i - 1] {
            return Err(bad(
                path,
                format!("{field}[{i}]"),
                format!("{x} is not above the previous point {}: points must be sorted in strictly increasing order", xs[i - 1]),
            ));
        }
    }
    Ok(())
}

/// Index `i` of the segment `[xs[i], xs[i+1]]` used for `x` (the end segments
/// extend beyond the axis), and the weight of `xs[i+1]`.
pub(super) fn segment(xs: &[f64], x: f64) -> (usize, f64) {
    if xs.len() == 1 {
        return (0, 0.0);
    }
    let i = match xs.iter().position(|&v| v > x) {
        Some(0) => 0,
        Some(k) => k - 1,
        None => xs.len() - 2,
    }
    .min(xs.len() - 2);
    (i, (x - xs[i]) / (xs[i + 1] - xs[i]))
}

pub(super) fn interp(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let (i, w) = segment(xs, x);
    if xs.len() == 1 {
        return ys[0];
    }
    ys[i] + w * (ys[i + 1] - ys[i])
}

impl TableTiming {
    /// Reads and validates a table file.
    pub fn from_file(path: &Path) -> Result<TableTiming, CoreError> {
        let text = crate::text_file::read_text_file(path)?;
        Self::from_json(&text, path)
    }

    /// Parses and validates a table; `path` names it in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<TableTiming, CoreError> {
        let file: TableFile = serde_json::from_str(text).map_err(|e| {
            bad(
                path,
                format!("line {} column {}", e.line(), e.column()),
                crate::text_file::json_message(&e),
            )
        })?;
        let prefill_x: Vec<f64> = file.prefill.iter().map(|p| p[0]).collect();
        let prefill_ms: Vec<f64> = file.prefill.iter().map(|p| p[1]).collect();
        check_axis(path, "prefill (tokens)", &prefill_x)?;
        for (i, v) in prefill_ms.iter().enumerate() {
            if !v.is_finite() {
                return Err(bad(
                    path,
                    format!("prefill[{i}] (ms)"),
                    format!("{v} is not a finite number"),
                ));
            }
        }
        let g = file.decode;
        check_axis(path, "decode.kv_tokens", &g.kv_tokens)?;
        check_axis(path, "decode.context", &g.context)?;
        if g.ms.len() != g.kv_tokens.len() {
            return Err(bad(
                path,
                "decode.ms",
                format!(
                    "has {} rows, expected one per kv_tokens point ({})",
                    g.ms.len(),
                    g.kv_tokens.len()
                ),
            ));
        }
        for (i, row) in g.ms.iter().enumerate() {
            if row.len() != g.context.len() {
                return Err(bad(
                    path,
                    format!("decode.ms[{i}]"),
                    format!(
                        "has {} values, expected one per context point ({})",
                        row.len(),
                        g.context.len()
                    ),
                ));
            }
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                return Err(bad(
                    path,
                    format!("decode.ms[{i}][{j}]"),
                    "not a finite number",
                ));
            }
        }
        Ok(TableTiming {
            prefill_x,
            prefill_ms,
            kv_tokens: g.kv_tokens,
            context: g.context,
            decode_ms: g.ms,
            name: format!("table:{}", path.display()),
        })
    }

    /// Interpolated prefill milliseconds for `tokens` prompt tokens (0 for none).
    pub fn prefill_ms(&self, tokens: u64) -> f64 {
        if tokens == 0 {
            return 0.0;
        }
        interp(&self.prefill_x, &self.prefill_ms, tokens as f64)
    }

    /// Interpolated decode milliseconds, floored at 1 ms.
    pub fn decode_ms(&self, kv_tokens: f64, mean_context: f64) -> f64 {
        let rows: Vec<f64> = self
            .decode_ms
            .iter()
            .map(|row| interp(&self.context, row, mean_context))
            .collect();
        interp(&self.kv_tokens, &rows, kv_tokens).max(1.0)
    }

    /// The file this table came from.
    pub fn source(&self) -> PathBuf {
        PathBuf::from(self.name.trim_start_matches("table:"))
    }
}

impl TimingModel for TableTiming {
    fn name(&self) -> &str {
        &self.name
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        let decode_ms = if shape.decode_requests == 0 {
            0.0
        } else {
            let mean = shape.decode_context_tokens as f64 / shape.decode_requests as f64;
            self.decode_ms(shape.decode_context_tokens as f64, mean)
        };
        PassTime {
            prefill_s: self.prefill_ms(shape.prefill_tokens()) * 1e-3,
            decode_s: decode_ms * 1e-3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"prefill": [[0, 5], [1000, 25], [2000, 65]],
        "decode": {"kv_tokens": [0, 10000], "context": [100, 1100], "ms": [[5, 7], [9, 15]]}}"#;

    fn parse(text: &str) -> Result<TableTiming, CoreError> {
        TableTiming::from_json(text, Path::new("t.json"))
    }

    #[test]
    fn interpolates_and_extrapolates() {
        let t = parse(GOOD).unwrap();
        assert_eq!(t.prefill_ms(500), 15.0);
        assert_eq!(t.prefill_ms(3000), 105.0); // beyond the end: last slope 0.04 ms/token
        assert_eq!(t.decode_ms(5000.0, 600.0), 9.0); // centre of the grid
        assert_eq!(t.decode_ms(20000.0, 100.0), 13.0); // extrapolated along kv_tokens
        assert_eq!(t.decode_ms(-1e9, 100.0), 1.0); // floored at 1 ms
    }

    #[test]
    fn rejects_unsorted_and_non_finite_points() {
        let unsorted = GOOD.replace("[1000, 25], [2000, 65]", "[2000, 65], [1000, 25]");
        let e = parse(&unsorted).unwrap_err().to_string();
        assert!(
            e.contains("t.json")
                && e.contains("prefill (tokens)[2]")
                && e.contains("strictly increasing"),
            "{e}"
        );
        let e = parse(&GOOD.replace("[9, 15]", "[9, 1e999]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.json"), "{e}");
        let e = parse(&GOOD.replace("\"context\": [100, 1100]", "\"context\": [100, 100]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("decode.context[1]"), "{e}");
        let e = parse(&GOOD.replace("[[5, 7], [9, 15]]", "[[5, 7]]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("decode.ms") && e.contains("rows"), "{e}");
        let e = parse("{\"prefill\": []}").unwrap_err().to_string();
        assert!(e.contains("t.json"), "{e}");
    }
}

//! SGLang's `python -m sglang.bench_serving --output-details` results
//! (JSONL, one run a line) as measured requests.
//!
//! Schema read from SGLang's public source (sgl-project/sglang,
//! `python/sglang/bench_serving.py` at commit 0033168f0f58: adapted, as it
//! says, from vLLM's `benchmark_serving.py`). Facts used, not code: each
//! run appends one JSON object, a line, to the output file; with
//! `--output-details` it holds, merged into the object (or, as some
//! wrappers of it write, under `details`), the
//! parallel arrays `input_lens`, `output_lens`, `ttfts` (seconds from the
//! POST to the first streamed chunk with text), `itls` (seconds between
//! such chunks) and `errors` (`""` on success), one entry a request, and
//! `generated_texts` (unused). `RequestFuncOutput` keeps no send time, so
//! the file says nothing of when each request was sent: a run is imported
//! only when its object has `start_times` too (seconds, the client's
//! `perf_counter` before each POST, as vLLM's `--save-detailed` writes);
//! otherwise the arrival process is unknown and the import is refused,
//! saying so. No prompt is kept (prefix reuse is unknown).

use std::path::Path;

use serde_json::{Map, Value};

use super::bench_file::{json_lines, BenchRun};
use super::measured::{Arrival, Origin, PrefixReuse, Served};
use super::parallel_arrays::{parallel_requests, Place};
use super::FidelityError;
use aisim_replay::trace::row_error;
use aisim_replay::ReplayError;

/// Why a run without send times cannot be imported, and what would do.
const NO_START_TIMES: &str = "the arrival process is unknown: SGLang's bench_serving keeps no send time of its requests. Supply them: each request's send time as `start_times` (seconds on the client's clock, one a request, as vLLM's --save-detailed writes), or the requests in the generic shape with their send_s (docs/fidelity.md)";

/// Reads run `run` (0-based, in the file's order; `None` when the file
/// holds one) of an SGLang results file: every request, completed or not.
pub fn read_sglang_bench(path: &Path, run: Option<usize>) -> Result<BenchRun, FidelityError> {
    let mut runs: Vec<(usize, Map<String, Value>)> = Vec::new();
    json_lines(path, |line, o| {
        runs.push((line, o.clone()));
        Ok(())
    })?;
    let n = match run {
        Some(n) if n < runs.len() => n,
        Some(n) => {
            return Err(FidelityError::field(
                path,
                "(runs)",
                format!(
                    "--benchmark {n}: the file holds {} runs, one a line (0 ..= {})",
                    runs.len(),
                    runs.len().saturating_sub(1)
                ),
            ))
        }
        None if runs.len() == 1 => 0,
        None if runs.is_empty() => {
            return Err(ReplayError::TraceFile {
                path: path.to_path_buf(),
                reason: "no runs".into(),
            }
            .into())
        }
        None => {
            return Err(FidelityError::field(
                path,
                "(runs)",
                format!(
                    "{} runs, one a line: choose one with --benchmark N (0-based)",
                    runs.len()
                ),
            ))
        }
    };
    let (line, top) = &runs[n];
    let line = *line;
    // The arrays are merged into the run's object, or under `details`.
    let (top, prefix) = match top.get("details") {
        Some(Value::Object(d)) => (d, "details."),
        _ => (top, ""),
    };
    let error = |field: String, reason: String| -> FidelityError {
        row_error(path, line, &format!("{prefix}{field}"), reason).into()
    };
    let requests = parallel_requests(
        top,
        &Place {
            error: &error,
            no_start_times: NO_START_TIMES,
            no_arrays: "the per-request arrays are written only with `python -m sglang.bench_serving --output-details`",
        },
    )?;
    Ok(BenchRun {
        requests,
        origin: Origin {
            from: "sglang-bench".into(),
            arrival: Arrival::Sent,
            prefix_reuse: PrefixReuse::Unknown,
        },
        served: Served::HttpStreaming,
    })
}

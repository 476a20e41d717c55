//! `vllm bench serve --save-result --save-detailed`'s result JSON as
//! measured requests.
//!
//! Schema read from vLLM's public source (vllm-project/vllm, commit
//! 009e6d4a1cd6, `vllm/benchmarks/serve.py`: the result of `benchmark()`
//! and the fields `--save-detailed` keeps; commit 02cfb534df56,
//! `vllm/benchmarks/lib/endpoint_request_func.py`: `RequestFuncOutput`).
//! Facts used, not code: the file is one JSON object whose per-request
//! fields are parallel arrays, one entry a request in the order sent:
//! `input_lens` (prompt tokens), `output_lens` (output tokens; 0 for a
//! failed request), `start_times` (`time.perf_counter()` just before the
//! POST, seconds on the client's monotonic clock; older vLLMs do not write
//! it), `ttfts` (seconds from the start to the first streamed chunk; 0 when
//! none came), `itls` (seconds between consecutive streamed chunks after
//! the first: one a token unless a chunk carries several), `errors` (the
//! failure's text, `""` on success, and possibly `""` on a failure too) and
//! `generated_texts` (unused). The client's own E2E is `ttft + Σ itl`.
//! Nothing of the prompts is kept, so prefix reuse is unknown; requests are
//! sent when the client's rate (and `--max-concurrency`) lets them, and
//! only that send time is kept: the arrival is the send.

use std::path::Path;

use serde_json::Value;

use super::bench_file::BenchRun;
use super::json_file::read_json;
use super::measured::{Arrival, Origin, PrefixReuse, Served};
use super::parallel_arrays::{parallel_requests, Place};
use super::FidelityError;

/// Reads a vLLM result file; every request, completed or not, in the
/// order the file lists them (its ids are their indices).
pub fn read_vllm_bench(path: &Path) -> Result<BenchRun, FidelityError> {
    let v: Value = read_json(path)?;
    let top = v.as_object().ok_or_else(|| {
        FidelityError::field(
            path,
            "(file)",
            "not a JSON object: a vllm bench serve result is one",
        )
    })?;
    let error = |field: String, reason: String| FidelityError::field(path, field, reason);
    let requests = parallel_requests(
        top,
        &Place {
            error: &error,
            no_start_times: "the arrival process is unknown without each request's send time (this vLLM does not write start_times: run `vllm bench serve --save-result --save-detailed` with a vLLM that does, or import the requests in the generic shape with their send_s)",
            no_arrays: "the per-request arrays are written only with `vllm bench serve --save-result --save-detailed`",
        },
    )?;
    Ok(BenchRun {
        requests,
        origin: Origin {
            from: "vllm-bench".into(),
            arrival: Arrival::Sent,
            prefix_reuse: PrefixReuse::Unknown,
        },
        served: Served::HttpStreaming,
    })
}

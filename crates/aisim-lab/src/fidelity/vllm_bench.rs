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

use serde_json::{Map, Value};

use super::bench_file::{count, number, BenchRun};
use super::json_file::read_json;
use super::measured::{Arrival, Origin, PrefixReuse};
use super::request_check::{check_path, Names, Seen};
use super::timed_request::TimedRequest;
use super::FidelityError;

/// The per-request arrays the reader needs.
const ARRAYS: [&str; 6] = [
    "start_times",
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "errors",
];

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
    let arrays = ARRAYS
        .iter()
        .map(|&name| array(path, top, name))
        .collect::<Result<Vec<_>, _>>()?;
    let [starts, inputs, outputs, ttfts, itls, errors] = arrays[..] else {
        unreachable!("six arrays")
    };
    let n = starts.len();
    if n == 0 {
        return Err(FidelityError::field(
            path,
            "start_times",
            "empty: no requests",
        ));
    }
    for (name, a) in ARRAYS.iter().zip(&arrays) {
        if a.len() != n {
            return Err(FidelityError::field(
                path,
                *name,
                format!(
                    "{} entries, but start_times has {n}: the arrays hold one entry a request",
                    a.len()
                ),
            ));
        }
    }
    let mut seen = Seen::default();
    let mut requests = Vec::with_capacity(n);
    for i in 0..n {
        let at = |name: &str| format!("{name}[{i}]");
        let seconds = |name: &str, v: &Value| {
            number(v, "seconds").map_err(|reason| FidelityError::field(path, at(name), reason))
        };
        let tokens = |name: &str, v: &Value| {
            count(v).map_err(|reason| FidelityError::field(path, at(name), reason))
        };
        let start = seconds("start_times", &starts[i])?;
        let input = tokens("input_lens", &inputs[i])?;
        let output = tokens("output_lens", &outputs[i])?;
        let ttft = seconds("ttfts", &ttfts[i])?;
        let gaps = match &itls[i] {
            Value::Array(g) => g
                .iter()
                .enumerate()
                .map(|(j, g)| {
                    number(g, "seconds").map_err(|reason| {
                        FidelityError::field(path, format!("itls[{i}][{j}]"), reason)
                    })
                })
                .collect::<Result<Vec<f64>, _>>()?,
            other => {
                return Err(FidelityError::field(
                    path,
                    at("itls"),
                    format!("{other}: must be an array of the gaps between chunks, in seconds"),
                ))
            }
        };
        let error = match &errors[i] {
            Value::String(e) => e.trim().to_string(),
            Value::Null => String::new(),
            other => {
                return Err(FidelityError::field(
                    path,
                    at("errors"),
                    format!("{other}: must be the failure's text, or \"\""),
                ))
            }
        };
        if ttft < 0.0 {
            return Err(FidelityError::field(
                path,
                at("ttfts"),
                format!("{ttft}: must be 0 seconds or more"),
            ));
        }
        // A failure may come without a text; no output token is no completion.
        let failed = if !error.is_empty() {
            Some(error)
        } else if output == 0 {
            Some("no output token (output_lens 0)".to_string())
        } else {
            None
        };
        let r = match failed {
            Some(why) => TimedRequest {
                line: i + 1,
                id: i.to_string(),
                send_s: start,
                first_token_s: start,
                end_s: start,
                input_tokens: input,
                // What it asked for is not kept: replayed with one token.
                output_tokens: output.max(1),
                failed: Some(why),
                ..TimedRequest::default()
            },
            None => {
                let first = start + ttft;
                let end = first + gaps.iter().sum::<f64>();
                // Every token's time is known when each chunk held one.
                let every_token = gaps.len() + 1 == output as usize;
                TimedRequest {
                    line: i + 1,
                    id: i.to_string(),
                    send_s: start,
                    first_token_s: first,
                    end_s: end,
                    input_tokens: input,
                    output_tokens: output,
                    itl_s: every_token.then_some(gaps),
                    ..TimedRequest::default()
                }
            }
        };
        let names = Names {
            send: at("start_times"),
            first: at("ttfts"),
            end: at("itls"),
            output: at("output_lens"),
            itl: at("itls"),
            id: format!("[{i}]"),
            turn: format!("[{i}]"),
        };
        check_path(path, &r, &names, &mut seen)?;
        requests.push(r);
    }
    Ok(BenchRun {
        requests,
        origin: Origin {
            from: "vllm-bench".into(),
            arrival: Arrival::Sent,
            prefix_reuse: PrefixReuse::Unknown,
        },
    })
}

fn array<'v>(
    path: &Path,
    top: &'v Map<String, Value>,
    name: &str,
) -> Result<&'v [Value], FidelityError> {
    match top.get(name) {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(FidelityError::field(
            path,
            name,
            format!("{}: must be an array, one entry a request", kind(other)),
        )),
        None if name == "start_times" => Err(FidelityError::field(
            path,
            name,
            "missing: the arrival process is unknown without each request's send time (this vLLM does not write start_times: run `vllm bench serve --save-result --save-detailed` with a vLLM that does, or import the requests in the generic shape with their send_s)",
        )),
        None => Err(FidelityError::field(
            path,
            name,
            "missing: the per-request arrays are written only with `vllm bench serve --save-result --save-detailed`",
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

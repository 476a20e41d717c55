//! Per-request results as parallel arrays, one entry a request, as vLLM's
//! `vllm bench serve --save-detailed` writes them and SGLang's
//! `bench_serving --output-details` (adapted from vLLM's) does:
//! `start_times` (seconds, the client's `perf_counter` before the POST),
//! `input_lens`, `output_lens` (0 for a failed request), `ttfts`
//! (seconds; 0 when no chunk came), `itls` (seconds between consecutive
//! streamed chunks after the first) and `errors` (the failure's text, `""`
//! on success). The sources each reader was written from are cited beside
//! it (`vllm_bench.rs`, `sglang_bench.rs`).

use serde_json::{Map, Value};

use super::bench_file::{count, number};
use super::request_check::{check, Names, Seen};
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

/// Where an error of a field goes: its file and the field's JSON path (and
/// line, for a JSON line), and what it is missing.
pub(crate) struct Place<'a> {
    /// The error of `field` (a JSON path in the object) and `reason`.
    pub error: &'a dyn Fn(String, String) -> FidelityError,
    /// Why `start_times` is needed and how to supply it, when missing.
    pub no_start_times: &'a str,
    /// How to have the per-request arrays written, when one is missing.
    pub no_arrays: &'a str,
}

/// The requests of an object of parallel arrays, one entry a request, in
/// their order (their ids are their indices); every request, completed or
/// not.
pub(crate) fn parallel_requests(
    top: &Map<String, Value>,
    place: &Place,
) -> Result<Vec<TimedRequest>, FidelityError> {
    let err = place.error;
    let arrays = ARRAYS
        .iter()
        .map(|&name| array(top, name, place))
        .collect::<Result<Vec<_>, _>>()?;
    let [starts, inputs, outputs, ttfts, itls, errors] = arrays[..] else {
        unreachable!("six arrays")
    };
    let n = starts.len();
    if n == 0 {
        return Err(err("start_times".into(), "empty: no requests".into()));
    }
    for (name, a) in ARRAYS.iter().zip(&arrays) {
        if a.len() != n {
            return Err(err(
                name.to_string(),
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
        let seconds =
            |name: &str, v: &Value| number(v, "seconds").map_err(|reason| err(at(name), reason));
        let tokens = |name: &str, v: &Value| count(v).map_err(|reason| err(at(name), reason));
        let start = seconds("start_times", &starts[i])?;
        let input = tokens("input_lens", &inputs[i])?;
        let output = tokens("output_lens", &outputs[i])?;
        let ttft = seconds("ttfts", &ttfts[i])?;
        let gaps = match &itls[i] {
            Value::Array(g) => g
                .iter()
                .enumerate()
                .map(|(j, g)| {
                    let field = || format!("itls[{i}][{j}]");
                    match number(g, "seconds") {
                        Ok(x) if x < 0.0 => {
                            Err(err(field(), format!("{x}: must be 0 seconds or more")))
                        }
                        Ok(x) => Ok(x),
                        Err(reason) => Err(err(field(), reason)),
                    }
                })
                .collect::<Result<Vec<f64>, _>>()?,
            other => {
                return Err(err(
                    at("itls"),
                    format!("{other}: must be an array of the gaps between chunks, in seconds"),
                ))
            }
        };
        let error = match &errors[i] {
            Value::String(e) => e.trim().to_string(),
            Value::Null => String::new(),
            other => {
                return Err(err(
                    at("errors"),
                    format!("{other}: must be the failure's text, or \"\""),
                ))
            }
        };
        if ttft < 0.0 {
            return Err(err(
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
        check(&r, &names, &mut seen).map_err(|b| err(b.field, b.reason))?;
        requests.push(r);
    }
    Ok(requests)
}

fn array<'v>(
    top: &'v Map<String, Value>,
    name: &str,
    place: &Place,
) -> Result<&'v [Value], FidelityError> {
    let err = place.error;
    match top.get(name) {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(err(
            name.into(),
            format!("{}: must be an array, one entry a request", kind(other)),
        )),
        None if name == "start_times" => Err(err(
            name.into(),
            format!("missing: {}", place.no_start_times),
        )),
        None => Err(err(name.into(), format!("missing: {}", place.no_arrays))),
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

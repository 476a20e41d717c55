//! GuideLLM's benchmarks report (`benchmarks.json`, or `.yaml`), one of its
//! benchmarks, as measured requests.
//!
//! Schema read from GuideLLM's public source (vllm-project/guidellm:
//! `src/guidellm/schemas/info.py` at commit 04fcfd864c6a, `RequestInfo` and
//! `RequestTimings`; `src/guidellm/schemas/request_stats.py` at commit
//! 06cef2910dc1, `GenerativeRequestStats`; the benchmark's `requests`
//! (`StatusBreakdown` of `successful`, `incomplete`, `errored`) and
//! `request_totals` in `src/guidellm/benchmark/schemas`). Facts used, not
//! code: the report's `benchmarks` is a list; each benchmark's
//! `requests.{successful, incomplete, errored}` are lists of request
//! stats, and `request_totals` counts each status (the lists may be a
//! sample of them). A request's `info.timings` are Unix timestamps in
//! seconds: `targeted_start` (when the scheduler planned to send it),
//! `request_start` (when the backend sent it), `first_token_iteration` and
//! `last_token_iteration` (`first_iteration`, `last_iteration` in earlier
//! releases), `token_iterations`, `request_end` (`resolve_end` when
//! absent); `info.error`, `info.conversation_id`, `info.turn_index`; the
//! token counts are `prompt_tokens` and `output_tokens` (computed fields,
//! written) or `input_metrics.total_tokens` and
//! `output_metrics.total_tokens`. GuideLLM keeps no per-token time (its own
//! token timings spread the iterations evenly), so the ITL is unknown, and
//! no prompt (prefix reuse is unknown).

use std::path::Path;

use serde_json::{Map, Value};

use super::bench_file::{count, id_text, input_file, number, BenchRun};
use super::measured::{Arrival, Origin, PrefixReuse, Served};
use super::request_check::{check_path, Names, Seen};
use super::timed_request::{TimedRequest, Turn};
use super::FidelityError;

/// The report's file names in a GuideLLM output folder.
pub const GUIDELLM_FILES: [&str; 3] = ["benchmarks.json", "benchmarks.yaml", "benchmarks.yml"];

/// The three lists of a benchmark's requests, in the order read.
const STATUSES: [&str; 3] = ["successful", "incomplete", "errored"];

/// A request as read, its times still Unix seconds.
struct Read {
    /// Its JSON path, for errors.
    at: String,
    request: TimedRequest,
    planned: Option<f64>,
    conversation: Option<(String, u32)>,
}

/// Reads benchmark `benchmark` (0-based; `None` when the report holds
/// one) of a GuideLLM report, or of the folder holding it.
pub fn read_guidellm(input: &Path, benchmark: Option<usize>) -> Result<BenchRun, FidelityError> {
    let path = input_file(input, &GUIDELLM_FILES)?;
    let path = path.as_path();
    let report = read_report(path)?;
    let benchmarks = report
        .get("benchmarks")
        .ok_or_else(|| {
            FidelityError::field(
                path,
                "benchmarks",
                "missing: not a GuideLLM benchmarks report",
            )
        })?
        .as_array()
        .ok_or_else(|| FidelityError::field(path, "benchmarks", "must be a list"))?;
    let n = match benchmark {
        Some(n) if n < benchmarks.len() => n,
        Some(n) => {
            return Err(FidelityError::field(
                path,
                "benchmarks",
                format!(
                    "--benchmark {n}: the report holds {} (0 ..= {})",
                    benchmarks.len(),
                    benchmarks.len().saturating_sub(1)
                ),
            ))
        }
        None if benchmarks.len() == 1 => 0,
        None => {
            return Err(FidelityError::field(
                path,
                "benchmarks",
                format!(
                    "{} benchmarks: choose one with --benchmark N (0-based)",
                    benchmarks.len()
                ),
            ))
        }
    };
    let at = format!("benchmarks[{n}]");
    let b = benchmarks[n]
        .as_object()
        .ok_or_else(|| FidelityError::field(path, &at, "must be an object"))?;
    let lists = b
        .get("requests")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            FidelityError::field(path, format!("{at}.requests"), "missing, or not an object")
        })?;
    let mut read = Vec::new();
    for status in STATUSES {
        let field = format!("{at}.requests.{status}");
        let list = match lists.get(status) {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(a)) => a,
            Some(other) => {
                return Err(FidelityError::field(
                    path,
                    &field,
                    format!("{other}: must be a list of requests"),
                ))
            }
        };
        // A sample is not the run: its arrivals are not the load offered.
        if let Some(total) = b
            .get("request_totals")
            .and_then(|t| t.get(status))
            .and_then(Value::as_u64)
        {
            if total != list.len() as u64 {
                return Err(FidelityError::field(
                    path,
                    &field,
                    format!(
                        "{} requests of the {total} the run made ({at}.request_totals.{status}): the report keeps a sample, whose arrivals are not the load offered; save every request (GuideLLM's --sample-requests) and import that",
                        list.len()
                    ),
                ));
            }
        }
        for (i, r) in list.iter().enumerate() {
            read.push(request(path, &format!("{field}[{i}]"), status, r)?);
        }
    }
    if read.is_empty() {
        return Err(FidelityError::field(
            path,
            format!("{at}.requests"),
            "no requests",
        ));
    }
    // The planned arrival when every request has one, else the send.
    let planned = read.iter().all(|r| r.planned.is_some());
    let arrival = |r: &Read| {
        if planned {
            r.planned.unwrap_or(r.request.send_s)
        } else {
            r.request.send_s
        }
    };
    // The earliest time of any (a bad file may have a token before its
    // arrival: the check says so, rather than the clock).
    let first = read
        .iter()
        .flat_map(|r| [arrival(r), r.request.first_token_s, r.request.end_s])
        .fold(f64::INFINITY, f64::min);
    let multi_turn = read
        .iter()
        .any(|r| r.conversation.as_ref().is_some_and(|c| c.1 > 0));
    let mut seen = Seen::default();
    let mut requests = Vec::with_capacity(read.len());
    for r in read {
        let sent = arrival(&r);
        let mut q = r.request;
        // Times from the first arrival: seconds since 1970 keep a float's
        // microseconds only so far from the run.
        q.first_token_s -= first;
        q.end_s -= first;
        q.send_s = sent - first;
        if multi_turn {
            q.session = r.conversation.map(|(session_id, turn_index)| Turn {
                session_id,
                turn_index,
            });
        }
        let at = &r.at;
        let names = Names {
            send: format!(
                "{at}.info.timings.{}",
                if planned {
                    "targeted_start"
                } else {
                    "request_start"
                }
            ),
            first: format!("{at}.info.timings.first_token_iteration"),
            end: format!("{at}.info.timings.request_end"),
            output: format!("{at}.output_tokens"),
            itl: format!("{at}.info.timings"),
            id: format!("{at}.request_id"),
            turn: format!("{at}.info.turn_index"),
        };
        check_path(path, &q, &names, &mut seen)?;
        requests.push(q);
    }
    Ok(BenchRun {
        requests,
        origin: Origin {
            from: "guidellm".into(),
            arrival: if planned {
                Arrival::Planned
            } else {
                Arrival::Sent
            },
            prefix_reuse: PrefixReuse::Unknown,
        },
        served: Served::HttpStreaming,
    })
}

/// The report, JSON or (by its extension) YAML, as JSON values.
fn read_report(path: &Path) -> Result<Value, FidelityError> {
    let yaml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
    if !yaml {
        return super::json_file::read_json(path);
    }
    let text = aisim_core::text_file::read_text_file(path)
        .map_err(|e| FidelityError::field(path, "(file)", e.to_string()))?;
    serde_yaml_ng::from_str(&text).map_err(|e| FidelityError::field(path, "(file)", e.to_string()))
}

/// The first of `keys` `o` has (not null).
fn first_of<'v>(o: &'v Map<String, Value>, keys: &[&str]) -> Option<(&'v Value, String)> {
    keys.iter().find_map(|k| {
        o.get(*k)
            .filter(|v| !v.is_null())
            .map(|v| (v, k.to_string()))
    })
}

fn request(path: &Path, at: &str, status: &str, r: &Value) -> Result<Read, FidelityError> {
    let err =
        |field: &str, reason: String| FidelityError::field(path, format!("{at}.{field}"), reason);
    let o = r
        .as_object()
        .ok_or_else(|| FidelityError::field(path, at, "must be an object (a request's stats)"))?;
    let info = o
        .get("info")
        .and_then(Value::as_object)
        .ok_or_else(|| err("info", "missing, or not an object".into()))?;
    let timings = info
        .get("timings")
        .and_then(Value::as_object)
        .ok_or_else(|| err("info.timings", "missing, or not an object".into()))?;
    let time = |keys: &[&str]| -> Result<Option<f64>, FidelityError> {
        match first_of(timings, keys) {
            None => Ok(None),
            Some((v, k)) => number(v, "seconds")
                .map(Some)
                .map_err(|reason| err(&format!("info.timings.{k}"), reason)),
        }
    };
    let planned = time(&["targeted_start"])?;
    let sent = match time(&["request_start", "resolve_start"])? {
        Some(t) => t,
        // A request that failed before it was sent: offered when planned.
        None if status != "successful" => planned.ok_or_else(|| {
            err(
                "info.timings.request_start",
                "missing, and no targeted_start: when the request was offered is unknown".into(),
            )
        })?,
        None => {
            return Err(err(
                "info.timings.request_start",
                "missing: when the request was sent is needed to replay it".into(),
            ))
        }
    };
    let first = time(&["first_token_iteration", "first_iteration"])?;
    let last = time(&["last_token_iteration", "last_iteration"])?;
    let end = time(&["request_end", "resolve_end"])?;
    let tokens = |keys: &[&str], metrics: &str| -> Result<Option<u32>, FidelityError> {
        let v = first_of(o, keys).or_else(|| {
            o.get(metrics)
                .and_then(|m| m.get("total_tokens"))
                .filter(|v| !v.is_null())
                .map(|v| (v, format!("{metrics}.total_tokens")))
        });
        match v {
            None => Ok(None),
            Some((v, k)) => count(v).map(Some).map_err(|reason| err(&k, reason)),
        }
    };
    let input = tokens(&["prompt_tokens"], "input_metrics")?.ok_or_else(|| {
        err(
            "prompt_tokens",
            "missing (nor input_metrics.total_tokens): the prompt's tokens are needed to replay the request".into(),
        )
    })?;
    let output = tokens(&["output_tokens"], "output_metrics")?;
    let id = o
        .get("request_id")
        .or_else(|| info.get("request_id"))
        .filter(|v| !v.is_null())
        .map(id_text)
        .unwrap_or_else(|| at.to_string());
    let conversation = match (info.get("conversation_id"), info.get("turn_index")) {
        (Some(c), Some(t)) if !c.is_null() && !t.is_null() => Some((
            id_text(c),
            count(t).map_err(|reason| err("info.turn_index", reason))?,
        )),
        _ => None,
    };
    let request = if status == "successful" {
        let first = first.ok_or_else(|| {
            err(
                "info.timings.first_token_iteration",
                "missing on a successful request: a streaming run records it".into(),
            )
        })?;
        let end = end.or(last).ok_or_else(|| {
            err(
                "info.timings.request_end",
                "missing on a successful request".into(),
            )
        })?;
        let output = output.ok_or_else(|| err("output_tokens", "missing".into()))?;
        TimedRequest {
            id,
            send_s: sent,
            first_token_s: first,
            end_s: end,
            input_tokens: input,
            output_tokens: output,
            ..TimedRequest::default()
        }
    } else {
        // Cut off (incomplete) or failed (errored): what came before its end.
        let why = info
            .get("error")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| match info.get("status").and_then(Value::as_str) {
                Some(s) => format!("{status} ({s})"),
                None => status.to_string(),
            });
        let first = first.unwrap_or(sent);
        let end = end.or(last).unwrap_or(first).max(first);
        TimedRequest {
            id,
            send_s: sent,
            first_token_s: first,
            end_s: end,
            input_tokens: input,
            output_tokens: output.unwrap_or(0).max(1),
            failed: Some(why),
            ..TimedRequest::default()
        }
    };
    Ok(Read {
        at: at.to_string(),
        request,
        planned,
        conversation,
    })
}

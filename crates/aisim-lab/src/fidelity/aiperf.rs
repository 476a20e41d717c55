//! AIPerf's per-request export, `profile_export.jsonl`, as measured
//! requests.
//!
//! Schema read from AIPerf's public source and documentation
//! (ai-dynamo/aiperf: `aiperf/common/models/record_models.py`, commit
//! 02402e8f77b4 and later, `MetricRecordInfo` / `MetricRecordMetadata`;
//! `docs/tutorials/working-with-profile-exports.md`, the records of
//! AIPerf 0.x). Facts used, not code: one JSON object a line, `metadata`,
//! `metrics` and `error`. `metadata.request_start_ns` and
//! `request_end_ns` are wall-clock nanoseconds (`time.time_ns()`; the end
//! is the error's time when the request failed), `x_request_id` the
//! request's id, `conversation_id` and `turn_index` its conversation (the
//! dataset's) and turn, `x_correlation_id` the conversation instance,
//! `benchmark_phase` `warmup` or `profiling`, `was_cancelled`. Each of
//! `metrics` is `{"value", "unit"}` in display units: `time_to_first_token`
//! (ms), `request_latency` (ms, on the client's monotonic clock, as the
//! TTFT and the gaps are), `inter_chunk_latency` (a list, ms, the gaps
//! between streamed chunks after the first), `inter_token_latency` (the
//! request's mean, not used), `input_sequence_length` and
//! `output_sequence_length` (tokens). `error` is null, or `{code, type,
//! message}`. The export keeps no prompt, but `inputs.json` beside it keeps
//! every turn's request body (`aiperf_inputs.rs`): with it, prompts are
//! hashed in blocks; without, prefix reuse is unknown. Only the send time
//! is kept: the arrival is the send.

use std::path::Path;

use serde_json::{Map, Value};

use super::aiperf_inputs::{read_inputs, Prompt, INPUTS_FILE};
use super::bench_file::{count, id_text, input_file, json_lines, number, BenchRun};
use super::measured::{Arrival, Origin, PrefixReuse, Served};
use super::prompt_blocks::{text_blocks, token_ids_blocks};
use super::request_check::{check_line, Names, Seen};
use super::timed_request::{TimedRequest, Turn};
use super::FidelityError;
use aisim_replay::trace::row_error;
use aisim_replay::ReplayError;

/// The export's file name in an AIPerf artifact folder.
pub const AIPERF_FILE: &str = "profile_export.jsonl";

/// One record as read, before conversations are known: its times from its
/// own send (the wall clock's nanoseconds since 1970 are too many for a
/// float to keep a microsecond of; they are taken from the first send).
struct Record {
    request: TimedRequest,
    start_ns: u64,
    conversation: Option<(String, u32)>,
    /// The dataset's conversation and turn, which `inputs.json` names.
    dataset_turn: Option<(String, u32)>,
}

/// Reads AIPerf's `profile_export.jsonl` (or the artifact folder holding
/// it): every request of the profiling phase, completed or not; warm-up
/// records are left out (not measured, and not replayed). With
/// `inputs.json` beside it, every request's prompt is hashed in blocks of
/// `block` tokens.
pub fn read_aiperf(input: &Path, block: u32) -> Result<BenchRun, FidelityError> {
    let path = input_file(input, &[AIPERF_FILE])?;
    let path = path.as_path();
    let mut records = Vec::new();
    json_lines(path, |line, o| {
        if let Some(r) = record(path, line, o)? {
            records.push(r);
        }
        Ok(())
    })?;
    if records.is_empty() {
        return Err(ReplayError::TraceFile {
            path: path.to_path_buf(),
            reason: "no requests of the profiling phase".into(),
        }
        .into());
    }
    // Conversations only when some request is a later turn: a single-turn
    // run's requests each start a conversation of their own.
    let multi_turn = records
        .iter()
        .any(|r| r.conversation.as_ref().is_some_and(|c| c.1 > 0));
    let mut seen = Seen::default();
    let names = Names {
        send: "metadata.request_start_ns".into(),
        first: "metrics.time_to_first_token".into(),
        end: "metadata.request_end_ns".into(),
        output: "metrics.output_sequence_length".into(),
        itl: "metrics.inter_chunk_latency".into(),
        id: "metadata.x_request_id".into(),
        turn: "metadata.turn_index".into(),
    };
    let inputs = path.with_file_name(INPUTS_FILE);
    let prefix_reuse = if inputs.is_file() {
        hash_prompts(path, &inputs, &mut records, block)?
    } else {
        PrefixReuse::Unknown
    };
    let first_ns = records.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let mut requests = Vec::with_capacity(records.len());
    for Record {
        mut request,
        start_ns,
        conversation,
        ..
    } in records
    {
        let sent = (start_ns - first_ns) as f64 / 1e9;
        request.send_s += sent;
        request.first_token_s += sent;
        request.end_s += sent;
        if multi_turn {
            request.session = conversation.map(|(session_id, turn_index)| Turn {
                session_id,
                turn_index,
            });
        }
        check_line(path, &request, &names, &mut seen)?;
        requests.push(request);
    }
    Ok(BenchRun {
        requests,
        origin: Origin {
            from: "aiperf".into(),
            arrival: Arrival::Sent,
            prefix_reuse,
        },
        served: Served::HttpStreaming,
    })
}

/// Every record's prompt block ids, from the prompts of `inputs`: text in
/// blocks of the file's mean characters per token, token ids exactly.
fn hash_prompts(
    path: &Path,
    inputs: &Path,
    records: &mut [Record],
    block: u32,
) -> Result<PrefixReuse, FidelityError> {
    let prompts = read_inputs(inputs)?;
    let mut found = Vec::with_capacity(records.len());
    for r in records.iter() {
        let prompt = r
            .dataset_turn
            .as_ref()
            .and_then(|k| prompts.get(k))
            .ok_or_else(|| {
                row_error(
                    path,
                    r.request.line,
                    "metadata.conversation_id",
                    match &r.dataset_turn {
                        Some((c, t)) => format!(
                            "{c}, turn {t}: no such payload in {} (its prompts are hashed for every request or none)",
                            inputs.display()
                        ),
                        None => format!(
                            "missing (or its turn_index): the request's prompt in {} is unknown",
                            inputs.display()
                        ),
                    },
                )
            })?;
        found.push(prompt);
    }
    let (chars, tokens) = records
        .iter()
        .zip(&found)
        .filter_map(|(r, p)| match p {
            Prompt::Text(t) => Some((t.chars().count() as f64, r.request.input_tokens as f64)),
            Prompt::Tokens(_) => None,
        })
        .fold((0.0, 0.0), |(c, t), (a, b)| (c + a, t + b));
    let per_token = if tokens > 0.0 { chars / tokens } else { 1.0 };
    let mut any_text = false;
    for (r, p) in records.iter_mut().zip(found) {
        let input = r.request.input_tokens;
        r.request.hash_ids = Some(match p {
            Prompt::Text(t) => {
                any_text = true;
                text_blocks(t, input, block, per_token)
            }
            Prompt::Tokens(ids) => token_ids_blocks(ids, block),
        });
    }
    Ok(if any_text {
        PrefixReuse::PromptText
    } else {
        PrefixReuse::TokenIds
    })
}

/// Seconds in one `unit` of AIPerf's display units of time.
fn unit_seconds(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-9),
        "us" => Some(1e-6),
        "ms" => Some(1e-3),
        "s" | "sec" => Some(1.0),
        _ => None,
    }
}

fn object<'v>(
    path: &Path,
    line: usize,
    o: &'v Map<String, Value>,
    field: &str,
) -> Result<&'v Map<String, Value>, ReplayError> {
    match o.get(field) {
        Some(Value::Object(m)) => Ok(m),
        None => Err(row_error(path, line, field, "missing")),
        Some(other) => Err(row_error(
            path,
            line,
            field,
            format!("{other}: must be an object"),
        )),
    }
}

/// A metric's `value`, and its unit, when the record has the metric.
fn metric<'v>(
    path: &Path,
    line: usize,
    metrics: &'v Map<String, Value>,
    tag: &str,
) -> Result<Option<(&'v Value, &'v str)>, ReplayError> {
    let Some(m) = metrics.get(tag) else {
        return Ok(None);
    };
    let field = format!("metrics.{tag}");
    let m = m.as_object().ok_or_else(|| {
        row_error(
            path,
            line,
            &field,
            format!("{m}: must be {{\"value\", \"unit\"}}"),
        )
    })?;
    let value = m
        .get("value")
        .ok_or_else(|| row_error(path, line, &format!("{field}.value"), "missing"))?;
    let unit = m.get("unit").and_then(Value::as_str).unwrap_or("");
    Ok(Some((value, unit)))
}

/// A time metric in seconds (its value a number, or each of a list).
fn time_metric(
    path: &Path,
    line: usize,
    metrics: &Map<String, Value>,
    tag: &str,
) -> Result<Option<Vec<f64>>, ReplayError> {
    let Some((value, unit)) = metric(path, line, metrics, tag)? else {
        return Ok(None);
    };
    let scale = unit_seconds(unit).ok_or_else(|| {
        row_error(
            path,
            line,
            &format!("metrics.{tag}.unit"),
            format!("`{unit}`: must be a unit of time (ns, us, ms, s)"),
        )
    })?;
    let field = format!("metrics.{tag}.value");
    let one = |v: &Value| -> Result<f64, ReplayError> {
        let x = number(v, unit).map_err(|reason| row_error(path, line, &field, reason))?;
        if x < 0.0 {
            return Err(row_error(
                path,
                line,
                &field,
                format!("{x}: must be 0 or more"),
            ));
        }
        Ok(x * scale)
    };
    Ok(Some(match value {
        Value::Array(a) => a.iter().map(one).collect::<Result<_, _>>()?,
        v => vec![one(v)?],
    }))
}

/// A single time metric (not a list), seconds.
fn single(
    path: &Path,
    line: usize,
    metrics: &Map<String, Value>,
    tag: &str,
) -> Result<Option<f64>, ReplayError> {
    match time_metric(path, line, metrics, tag)? {
        None => Ok(None),
        Some(v) if v.len() == 1 && !metrics[tag]["value"].is_array() => Ok(Some(v[0])),
        Some(_) => Err(row_error(
            path,
            line,
            &format!("metrics.{tag}.value"),
            "must be one number",
        )),
    }
}

fn tokens(
    path: &Path,
    line: usize,
    metrics: &Map<String, Value>,
    tag: &str,
) -> Result<Option<u32>, ReplayError> {
    match metric(path, line, metrics, tag)? {
        None => Ok(None),
        Some((v, _)) => count(v)
            .map(Some)
            .map_err(|reason| row_error(path, line, &format!("metrics.{tag}.value"), reason)),
    }
}

/// A wall-clock timestamp, nanoseconds.
fn ns(path: &Path, line: usize, meta: &Map<String, Value>, key: &str) -> Result<u64, ReplayError> {
    let field = format!("metadata.{key}");
    let v = meta
        .get(key)
        .ok_or_else(|| row_error(path, line, &field, "missing"))?;
    v.as_u64().ok_or_else(|| {
        row_error(
            path,
            line,
            &field,
            format!("{v}: must be a whole number of nanoseconds"),
        )
    })
}

fn record(path: &Path, line: usize, o: &Map<String, Value>) -> Result<Option<Record>, ReplayError> {
    let meta = object(path, line, o, "metadata")?;
    match meta.get("benchmark_phase").and_then(Value::as_str) {
        Some("warmup") => return Ok(None),
        None | Some("profiling") => {}
        Some(other) => {
            return Err(row_error(
                path,
                line,
                "metadata.benchmark_phase",
                format!("`{other}`: one of warmup, profiling"),
            ))
        }
    }
    let metrics = object(path, line, o, "metrics")?;
    let start_ns = ns(path, line, meta, "request_start_ns")?;
    let end_ns = ns(path, line, meta, "request_end_ns")?;
    // Times from the request's own send until all are read.
    let start = 0.0;
    let end_wall = if end_ns >= start_ns {
        (end_ns - start_ns) as f64 / 1e9
    } else {
        return Err(row_error(
            path,
            line,
            "metadata.request_end_ns",
            format!("{end_ns}: is before request_start_ns {start_ns}"),
        ));
    };
    let failed = match o.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => Some(
            e.get("message")
                .or_else(|| e.get("type"))
                .map(id_text)
                .unwrap_or_else(|| Value::Object(e.clone()).to_string()),
        ),
        Some(other) => {
            return Err(row_error(
                path,
                line,
                "error",
                format!("{other}: must be null or {{code, type, message}}"),
            ))
        }
    };
    let cancelled = meta.get("was_cancelled").and_then(Value::as_bool) == Some(true);
    let failed = failed.or_else(|| cancelled.then(|| "cancelled".to_string()));
    let ttft = single(path, line, metrics, "time_to_first_token")?;
    let latency = single(path, line, metrics, "request_latency")?;
    let gaps = time_metric(path, line, metrics, "inter_chunk_latency")?;
    let input = tokens(path, line, metrics, "input_sequence_length")?.ok_or_else(|| {
        row_error(
            path,
            line,
            "metrics.input_sequence_length",
            "missing: the prompt's tokens are needed to replay the request",
        )
    })?;
    let output = tokens(path, line, metrics, "output_sequence_length")?;
    let id = match meta.get("x_request_id") {
        None | Some(Value::Null) => format!("line {line}"),
        Some(v) => id_text(v),
    };
    let dataset_turn = match (meta.get("conversation_id"), meta.get("turn_index")) {
        (Some(Value::String(c)), Some(t)) => count(t).ok().map(|t| (c.clone(), t)),
        _ => None,
    };
    let conversation = match (
        ["x_correlation_id", "conversation_id"]
            .iter()
            .find_map(|k| meta.get(*k).filter(|v| !v.is_null())),
        meta.get("turn_index"),
    ) {
        (Some(c), Some(t)) if !c.is_null() && !t.is_null() => {
            let turn =
                count(t).map_err(|reason| row_error(path, line, "metadata.turn_index", reason))?;
            Some((id_text(c), turn))
        }
        _ => None,
    };
    // E2E on the client's monotonic clock, as the TTFT: the request's
    // latency when the record has it, else its wall-clock span.
    let e2e = latency.unwrap_or(end_wall);
    let request = match failed {
        Some(why) => {
            let first = start + ttft.unwrap_or(0.0).min(e2e.max(0.0));
            TimedRequest {
                line,
                id,
                send_s: start,
                first_token_s: first,
                end_s: (start + e2e).max(first),
                input_tokens: input,
                // What it asked for is not kept: replayed with the tokens
                // that came, at least one.
                output_tokens: output.unwrap_or(0).max(1),
                failed: Some(why),
                ..TimedRequest::default()
            }
        }
        None => {
            let ttft = ttft.ok_or_else(|| {
                row_error(
                    path,
                    line,
                    "metrics.time_to_first_token",
                    "missing on a request that completed: a streaming run records it",
                )
            })?;
            let output = output.ok_or_else(|| {
                row_error(path, line, "metrics.output_sequence_length", "missing")
            })?;
            // Every token's time is known when each chunk held one token.
            let itl_s = gaps.filter(|g| g.len() + 1 == output as usize);
            TimedRequest {
                line,
                id,
                send_s: start,
                first_token_s: start + ttft,
                end_s: start + e2e,
                input_tokens: input,
                output_tokens: output,
                itl_s,
                ..TimedRequest::default()
            }
        }
    };
    Ok(Some(Record {
        request,
        start_ns,
        conversation,
        dataset_turn,
    }))
}

//! Importing measured runs from per-request measurements: a generic file
//! (JSONL or CSV, docs/fidelity.md) or an LLMServingSim run folder. Each
//! import gives the measured run and the Mooncake trace it implies (arrivals
//! at the measured send times), written next to each other.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use aisim_core::timing::TimingSpec;
use serde_json::{Map, Value};

use super::bench_file::json_lines;
use super::json_file::read_json;
use super::measured::{
    Arrival, Measured, MeasuredRun, Origin, PrefixReuse, Served, MEASURED_VERSION,
};
use super::request_check::{check_line, Names, Seen};
use super::stats::Stats;
use super::timed_request::{requests_text, trace_order, TimedRequest, Turn};
use super::FidelityError;
use aisim_replay::spec::WorkloadSpec;
use aisim_replay::trace::csv::{cell_text, CsvRecords};
use aisim_replay::trace::{read_trace, row_error, write_mooncake_row, TraceFormat};
use aisim_replay::ReplayError;
use aisim_replay::ReplaySpec;
use csv::ByteRecord;

/// Column names of the generic per-request shape.
pub const GENERIC_FIELDS: [&str; 11] = [
    "request_id",
    "send_s",
    "first_token_s",
    "end_s",
    "input_tokens",
    "output_tokens",
    "hash_ids",
    "error",
    "itl_s",
    "session_id",
    "turn_index",
];

/// The summary measurement tools print, over the requests that completed:
/// TTFT = first − send, TPOT = (end − first) / (output − 1) over requests
/// with 2 tokens or more, E2E = end − send (ms), output tokens per second
/// over their first send to last end, and ITL over every token gap when
/// every completed request has every token's time (`itl_s`). `offered` is
/// every request when some did not complete.
pub fn summarize(requests: &[TimedRequest]) -> Measured {
    let done: Vec<&TimedRequest> = requests.iter().filter(|r| r.completed()).collect();
    let ms = |f: &dyn Fn(&TimedRequest) -> Option<f64>| -> Vec<f64> {
        done.iter().filter_map(|r| f(r)).map(|s| s * 1e3).collect()
    };
    let ttft = ms(&|r| Some(r.first_token_s - r.send_s));
    let tpot = ms(&|r| {
        (r.output_tokens > 1).then(|| (r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64)
    });
    let e2e = ms(&|r| Some(r.end_s - r.send_s));
    let itl: Option<Vec<f64>> = done
        .iter()
        .map(|r| r.itl_s.as_ref())
        .collect::<Option<Vec<_>>>()
        .map(|gaps| gaps.into_iter().flatten().map(|g| g * 1e3).collect());
    let start = done.iter().map(|r| r.send_s).fold(f64::INFINITY, f64::min);
    let end = done
        .iter()
        .map(|r| r.end_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let tokens: u64 = done.iter().map(|r| r.output_tokens as u64).sum();
    let span = end - start;
    let stats = |v: &[f64]| (!v.is_empty()).then(|| Stats::of(v));
    Measured {
        offered: (done.len() < requests.len()).then_some(requests.len() as u64),
        completed: Some(done.len() as u64),
        ttft_ms: stats(&ttft),
        tpot_ms: stats(&tpot),
        itl_ms: itl.as_deref().and_then(stats),
        e2e_ms: stats(&e2e),
        output_tok_s: (span > 0.0).then(|| tokens as f64 / span),
    }
}

fn field_error(
    path: &Path,
    line: usize,
    field: &str,
    value: impl std::fmt::Display,
    need: &str,
) -> ReplayError {
    row_error(path, line, field, format!("{value}: {need}"))
}

fn get<'v>(
    path: &Path,
    line: usize,
    row: &'v Map<String, Value>,
    field: &str,
) -> Result<&'v Value, ReplayError> {
    row.get(field)
        .ok_or_else(|| row_error(path, line, field, "missing"))
}

fn seconds(path: &Path, line: usize, v: &Value, field: &str) -> Result<f64, ReplayError> {
    v.as_f64()
        .ok_or_else(|| field_error(path, line, field, v, "must be a number of seconds"))
}

fn tokens(path: &Path, line: usize, v: &Value, field: &str) -> Result<u32, ReplayError> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            field_error(
                path,
                line,
                field,
                v,
                "must be a whole number of tokens from 0 to 4294967295",
            )
        })
}

fn id_of(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

fn generic_json(
    path: &Path,
    line: usize,
    o: &Map<String, Value>,
) -> Result<TimedRequest, ReplayError> {
    if let Some(k) = o.keys().find(|k| !GENERIC_FIELDS.contains(&k.as_str())) {
        return Err(row_error(
            path,
            line,
            k,
            format!("unknown field; expected {}", GENERIC_FIELDS.join(", ")),
        ));
    }
    let hash_ids = match o.get("hash_ids") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|h| {
                    h.as_u64().ok_or_else(|| {
                        field_error(
                            path,
                            line,
                            "hash_ids",
                            h,
                            "must be whole numbers of 0 or more",
                        )
                    })
                })
                .collect::<Result<Vec<u64>, _>>()?,
        ),
        Some(other) => {
            return Err(field_error(
                path,
                line,
                "hash_ids",
                other,
                "must be an array of whole numbers",
            ))
        }
    };
    let failed = match o.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(e)) if e.is_empty() => None,
        Some(Value::String(e)) => Some(e.clone()),
        Some(other) => {
            return Err(field_error(
                path,
                line,
                "error",
                other,
                "must be the text of why the request did not complete",
            ))
        }
    };
    let itl_s = match o.get("itl_s") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|g| seconds(path, line, g, "itl_s"))
                .collect::<Result<Vec<f64>, _>>()?,
        ),
        Some(other) => {
            return Err(field_error(
                path,
                line,
                "itl_s",
                other,
                "must be an array of the gaps between tokens, in seconds",
            ))
        }
    };
    let session = match (o.get("session_id"), o.get("turn_index")) {
        (None | Some(Value::Null), None | Some(Value::Null)) => None,
        (Some(s), Some(t)) if !s.is_null() && !t.is_null() => Some(Turn {
            session_id: id_of(s),
            turn_index: tokens(path, line, t, "turn_index").map_err(|_| {
                field_error(path, line, "turn_index", t, "must be a whole number from 0")
            })?,
        }),
        (Some(s), _) if !s.is_null() => {
            return Err(row_error(
                path,
                line,
                "turn_index",
                "missing: a request of a conversation (session_id) needs its turn",
            ))
        }
        _ => {
            return Err(row_error(
                path,
                line,
                "session_id",
                "missing: a turn (turn_index) needs its conversation",
            ))
        }
    };
    Ok(TimedRequest {
        line,
        id: id_of(get(path, line, o, "request_id")?),
        send_s: seconds(path, line, get(path, line, o, "send_s")?, "send_s")?,
        first_token_s: seconds(
            path,
            line,
            get(path, line, o, "first_token_s")?,
            "first_token_s",
        )?,
        end_s: seconds(path, line, get(path, line, o, "end_s")?, "end_s")?,
        input_tokens: tokens(
            path,
            line,
            get(path, line, o, "input_tokens")?,
            "input_tokens",
        )?,
        output_tokens: tokens(
            path,
            line,
            get(path, line, o, "output_tokens")?,
            "output_tokens",
        )?,
        hash_ids,
        failed,
        itl_s,
        session,
    })
}

/// A CSV row as the JSON object it stands for: numbers as numbers,
/// `hash_ids` space-separated.
fn csv_row(
    path: &Path,
    line: usize,
    header: &[String],
    cells: &[&str],
) -> Result<Map<String, Value>, ReplayError> {
    if cells.len() != header.len() {
        return Err(row_error(
            path,
            line,
            "(row)",
            format!("{} columns: the header has {}", cells.len(), header.len()),
        ));
    }
    let mut o = Map::new();
    for (name, &cell) in header.iter().zip(cells) {
        let v = match name.as_str() {
            "request_id" => Value::String(cell.to_string()),
            "hash_ids" | "error" | "itl_s" | "session_id" | "turn_index" if cell.is_empty() => {
                Value::Null
            }
            "error" | "session_id" => Value::String(cell.to_string()),
            "itl_s" => Value::Array(
                cell.split_whitespace()
                    .map(|g| match serde_json::from_str::<serde_json::Number>(g) {
                        Ok(n) => Ok(Value::Number(n)),
                        Err(_) => Err(field_error(
                            path,
                            line,
                            "itl_s",
                            format!("`{g}`"),
                            "must be numbers of seconds, space-separated",
                        )),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            "hash_ids" => Value::Array(
                cell.split_whitespace()
                    .map(|h| {
                        h.parse::<u64>().map(Value::from).map_err(|_| {
                            field_error(
                                path,
                                line,
                                "hash_ids",
                                h,
                                "must be whole numbers of 0 or more",
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            field => match serde_json::from_str::<serde_json::Number>(cell) {
                Ok(n) => Value::Number(n),
                Err(_) => {
                    return Err(field_error(
                        path,
                        line,
                        field,
                        format!("`{cell}`"),
                        "must be a number",
                    ))
                }
            },
        };
        o.insert(name.clone(), v);
    }
    Ok(o)
}

/// Reads a generic per-request file: JSONL, or CSV (by the `.csv`
/// extension; a header row, then one request a record).
pub fn read_generic(path: &Path) -> Result<Vec<TimedRequest>, FidelityError> {
    let mut out = Vec::new();
    let mut seen = Seen::default();
    let names = Names::generic("send_s", "first_token_s", "end_s", "output_tokens");
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv {
        let file = File::open(path).map_err(|source| ReplayError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        // Parsed by the `csv` crate, as the trace readers' CSV: quoted cells
        // may hold commas and line breaks; a record's line is its first.
        let mut records = CsvRecords::new(BufReader::new(file), path);
        let mut cells = ByteRecord::new();
        let mut header: Option<Vec<String>> = None;
        while let Some(line) = records.next(&mut cells)? {
            let texts = (0..cells.len())
                .map(|i| cell_text(&cells, i, path, line, "(row)").map(Option::unwrap_or_default))
                .collect::<Result<Vec<&str>, _>>()?;
            if texts.iter().all(|t| t.is_empty()) {
                continue;
            }
            let Some(h) = &header else {
                header = Some(
                    texts
                        .iter()
                        .map(|c| c.trim_start_matches('\u{feff}').to_string())
                        .collect(),
                );
                continue;
            };
            let o = csv_row(path, line, h, &texts)?;
            let r = generic_json(path, line, &o)?;
            check_line(path, &r, &names, &mut seen)?;
            out.push(r);
        }
    } else {
        json_lines(path, |line, o| {
            let r = generic_json(path, line, o)?;
            check_line(path, &r, &names, &mut seen)?;
            out.push(r);
            Ok(())
        })?;
    }
    if out.is_empty() {
        return Err(ReplayError::TraceFile {
            path: path.to_path_buf(),
            reason: "no requests".into(),
        }
        .into());
    }
    Ok(out)
}

/// Where the trace of the measured run `out` goes: `NAME.trace.jsonl` beside it.
pub fn trace_path(out: &Path) -> PathBuf {
    sibling(out, "trace.jsonl")
}

/// `STEM.suffix` beside `out`.
fn sibling(out: &Path, suffix: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    out.with_file_name(format!("{stem}.{suffix}"))
}

/// The Mooncake trace of `requests`: arrivals at their send times from the
/// first one (ms), in send order. The turns of a conversation share a
/// numeric `session_id` (the conversations numbered from 0 as they first
/// appear), and each later turn's `delay_ms` is the measured think time:
/// its send after the end of the turn before it (0 when it was sent before
/// that one ended), which the replay's default dispatch (`thinktime`) adds
/// to the simulated end.
pub fn trace_text(requests: &[TimedRequest]) -> String {
    let start = requests
        .iter()
        .map(|r| r.send_s)
        .fold(f64::INFINITY, f64::min);
    let mut out = Vec::new();
    // Each conversation's number and the end of its latest turn so far.
    let mut sessions: std::collections::HashMap<&str, (u64, f64)> = Default::default();
    for r in trace_order(requests) {
        let hashes = r.hash_ids.as_deref().unwrap_or(&[]);
        let (session, delay_ms) = match &r.session {
            None => (None, None),
            Some(t) => {
                let next = sessions.len() as u64;
                match sessions.get_mut(t.session_id.as_str()) {
                    None => {
                        sessions.insert(&t.session_id, (next, r.end_s));
                        (Some(next), None)
                    }
                    Some((n, end)) => {
                        let delay = ((r.send_s - *end) * 1e3).max(0.0);
                        *end = r.end_s;
                        (Some(*n), Some(delay))
                    }
                }
            }
        };
        write_mooncake_row(
            &mut out,
            (r.send_s - start) * 1e3,
            r.input_tokens,
            r.output_tokens,
            hashes,
            session,
            delay_ms,
        )
        .expect("writing to memory");
    }
    String::from_utf8(out).expect("the rows are ASCII")
}

/// Where the per-request file of the measured run `out` goes:
/// `NAME.requests.jsonl` beside it.
pub fn requests_path(out: &Path) -> PathBuf {
    sibling(out, "requests.jsonl")
}

/// What an import writes: the measured run (at `out`), its trace (at
/// `trace_path`) and its requests in the generic shape (at `requests_path`),
/// which calibration compares request by request.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The measured run; its workload names the trace, and its `requests`
    /// the per-request file, relative to its folder.
    pub run: MeasuredRun,
    /// Where the trace goes: [`trace_path`] of `out`.
    pub trace_path: PathBuf,
    /// The trace, Mooncake JSONL.
    pub trace: String,
    /// Where the per-request file goes ([`requests_path`] of `out`) and the
    /// file, generic JSONL in trace order; `None` for a summary-only import.
    pub requests: Option<(PathBuf, String)>,
}

impl Imported {
    /// Writes the trace and the run at `out`, and reads the run back (checked
    /// as any run is). The binary writes through its own output path
    /// instead, for its exit codes.
    pub fn write(&self, out: &Path) -> Result<MeasuredRun, FidelityError> {
        let run = format!("{}\n", self.run.to_json());
        let requests = self.requests.as_ref().map(|(p, t)| (p.as_path(), t));
        let files = [
            Some((self.trace_path.as_path(), &self.trace)),
            requests,
            Some((out, &run)),
        ];
        for (path, text) in files.into_iter().flatten() {
            std::fs::write(path, text).map_err(|source| ReplayError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        MeasuredRun::from_file(out)
    }
}

/// What a generic or LLMServingSim import says of its origin: sent at the
/// file's send times, prefixes from its hash ids when it has them.
pub fn origin_of(from: &str, requests: &[TimedRequest]) -> Origin {
    Origin {
        from: from.to_string(),
        arrival: Arrival::Sent,
        prefix_reuse: if requests.iter().any(|r| r.hash_ids.is_some()) {
            PrefixReuse::HashIds
        } else {
            PrefixReuse::Unknown
        },
    }
}

/// The measured run of `requests` to be written at `out` (named `name`),
/// with `spec` but for its workload: the trace beside it, of
/// `block_size`-token blocks.
pub fn imported(
    out: &Path,
    name: &str,
    mut spec: ReplaySpec,
    requests: &[TimedRequest],
    block_size: u32,
    origin: Origin,
) -> Imported {
    let trace_path = trace_path(out);
    let requests_path = requests_path(out);
    spec.workload = WorkloadSpec::Trace {
        path: PathBuf::from(trace_path.file_name().unwrap_or_default()),
        format: Some(TraceFormat::Mooncake),
        trace_block_size: Some(block_size),
    };
    Imported {
        run: MeasuredRun {
            version: MEASURED_VERSION,
            name: name.to_string(),
            spec,
            measured: summarize(requests),
            requests: Some(PathBuf::from(requests_path.file_name().unwrap_or_default())),
            served: Served::InProcess,
            origin: Some(origin),
        },
        trace_path,
        trace: trace_text(requests),
        requests: Some((requests_path, requests_text(requests))),
    }
}

/// An LLMServingSim run folder: its requests (sent when vLLM queued them),
/// with the prompt block hashes of its Mooncake trace, and the spec its
/// `meta.json` implies (engine limits, KV blocks; the physics model of
/// `profile`, by default `HARDWARE/MODEL` from the folder's name `HW__MODEL`).
pub fn read_llmservingsim(
    dir: &Path,
    profile: Option<&str>,
) -> Result<(Vec<TimedRequest>, ReplaySpec), FidelityError> {
    let path = dir.join("requests.jsonl");
    let mut requests = Vec::new();
    let mut seen = Seen::default();
    json_lines(&path, |line, o| {
        let r = TimedRequest {
            line,
            id: id_of(get(&path, line, o, "request_id")?),
            send_s: seconds(&path, line, get(&path, line, o, "queued_ts")?, "queued_ts")?,
            first_token_s: seconds(
                &path,
                line,
                get(&path, line, o, "first_token_ts")?,
                "first_token_ts",
            )?,
            end_s: seconds(
                &path,
                line,
                get(&path, line, o, "last_token_ts")?,
                "last_token_ts",
            )?,
            input_tokens: tokens(
                &path,
                line,
                get(&path, line, o, "input_toks")?,
                "input_toks",
            )?,
            output_tokens: tokens(
                &path,
                line,
                get(&path, line, o, "output_toks")?,
                "output_toks",
            )?,
            hash_ids: None,
            ..TimedRequest::default()
        };
        check_line(
            &path,
            &r,
            &Names::generic(
                "queued_ts",
                "first_token_ts",
                "last_token_ts",
                "output_toks",
            ),
            &mut seen,
        )?;
        requests.push(r);
        Ok(())
    })?;
    let trace_file = dir.join("trace_mooncake_b16.jsonl");
    let trace = read_trace(&trace_file, Some(TraceFormat::Mooncake), Some(16))?;
    if trace.records.len() != requests.len() {
        return Err(FidelityError::field(
            &trace_file,
            "(rows)",
            format!(
                "{} rows for {} measured requests in {}",
                trace.records.len(),
                requests.len(),
                path.display()
            ),
        ));
    }
    for (r, t) in requests.iter_mut().zip(&trace.records) {
        if t.input_length != r.input_tokens {
            return Err(ReplayError::Trace {
                path: trace_file.clone(),
                line: t.line,
                field: "input_length".into(),
                reason: format!(
                    "{}: requests.jsonl line {} measured {} input tokens",
                    t.input_length, r.line, r.input_tokens
                ),
            }
            .into());
        }
        r.hash_ids = Some(t.hash_ids.clone());
    }
    let meta_path = dir.join("meta.json");
    let meta: Value = read_json(&meta_path)?;
    let spec = spec_from_meta(&meta_path, &meta, dir, profile)?;
    Ok((requests, spec))
}

fn spec_from_meta(
    path: &Path,
    meta: &Value,
    dir: &Path,
    profile: Option<&str>,
) -> Result<ReplaySpec, FidelityError> {
    let kwargs = &meta["engine_kwargs"];
    let kv = &meta["kv_cache"];
    let whole = |v: &Value, field: &str| -> Result<Option<u32>, FidelityError> {
        match v {
            Value::Null => Ok(None),
            v => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| {
                    FidelityError::field(path, field, format!("{v}: must be a whole number"))
                }),
        }
    };
    let mut spec = ReplaySpec::default();
    let e = &mut spec.engine;
    e.backend = aisim_core::Backend::Vllm;
    if let Some(n) = whole(&kwargs["max_num_seqs"], "engine_kwargs.max_num_seqs")? {
        e.max_num_seqs = n;
    }
    if let Some(n) = whole(
        &kwargs["max_num_batched_tokens"],
        "engine_kwargs.max_num_batched_tokens",
    )? {
        e.max_num_batched_tokens = n;
    }
    e.max_model_len = whole(&kwargs["max_model_len"], "engine_kwargs.max_model_len")?;
    e.block_size = Some(whole(&kv["block_size"], "kv_cache.block_size")?.unwrap_or(16));
    e.num_gpu_blocks = whole(&kv["num_gpu_blocks"], "kv_cache.num_gpu_blocks")?;
    if let Some(on) = kv["enable_prefix_caching"].as_bool() {
        e.enable_prefix_caching = on;
    }
    let tp = whole(
        &kwargs["tensor_parallel_size"],
        "engine_kwargs.tensor_parallel_size",
    )?
    .unwrap_or(1);
    let profile = match profile {
        Some(p) => p.to_string(),
        None => {
            let folder = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
            let name = folder
                .file_name()
                .map(|n| n.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            let Some((hw, model)) = name.split_once("__") else {
                return Err(FidelityError::field(dir, "(folder name)", format!("`{name}` is not HARDWARE__MODEL: give the profile (--profile HARDWARE/MODEL)")));
            };
            let tp = if tp > 1 {
                format!("/tp{tp}")
            } else {
                String::new()
            };
            format!("{hw}/{model}{tp}")
        }
    };
    spec.timing = TimingSpec::Physics {
        profile,
        coefficients: Default::default(),
        fitted_on: Vec::new(),
    };
    // KV the run did not record comes from the profile's memory, written
    // into the spec so that it stays whatever timing replays the run.
    spec.apply_profile()?;
    Ok(spec)
}

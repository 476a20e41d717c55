//! A BLIS TraceV2 (its YAML header and its CSV data) as measured requests.
//!
//! Schema read from BLIS's public source (inference-sim/inference-sim,
//! `sim/workload/tracev2.go` at commit 0045b72691ec: `TraceHeader`,
//! `TraceRecord`, `ExportTraceV2`, `LoadTraceV2`; `cmd/observe_cmd.go`:
//! the header `blis observe` writes; `cmd/calibrate.go`: the warm-up
//! records). Facts used, not code: a trace is two files, a YAML header
//! (`trace_version`, `time_unit: us`, `mode`: `real` from `blis observe`
//! against a server, `generated` or `replayed` from BLIS's own
//! simulation, `warm_up_requests`: that many leading records are warm-up,
//! `server`, `network`) and a CSV with a header row whose columns are
//! found by name (optional ones come and go between versions):
//! `request_id`, `session_id`, `round_index`, `prefix_group`,
//! `prefix_length`, `input_tokens`, `output_tokens`,
//! `server_input_tokens` (0 when not recorded), `arrival_time_us` (when
//! the workload planned it), `send_time_us` (when the client sent it),
//! `first_chunk_time_us`, `last_chunk_time_us` (integer microseconds on
//! one clock), `num_chunks`, `status` (`ok`, `error`, `timeout`) and
//! `error_message`. Only the first and last chunk's times are kept, so the
//! ITL is unknown; a prefix group and its length say which prompts share
//! their first tokens, which become shared block hashes.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use csv::ByteRecord;
use serde_json::Value;

use super::bench_file::BenchRun;
use super::measured::{Arrival, Origin, PrefixReuse, Served};
use super::prompt_blocks::prefix_group_ids;
use super::request_check::{check_line, Names, Seen};
use super::timed_request::{TimedRequest, Turn};
use super::FidelityError;
use aisim_replay::trace::csv::{cell_text, CsvRecords};
use aisim_replay::trace::row_error;
use aisim_replay::ReplayError;

/// The columns every TraceV2 has that the import needs.
const REQUIRED: [&str; 8] = [
    "request_id",
    "input_tokens",
    "output_tokens",
    "arrival_time_us",
    "send_time_us",
    "first_chunk_time_us",
    "last_chunk_time_us",
    "status",
];

/// The header and data files of a trace: `input` is the CSV (its header the
/// YAML of the same name beside it), the YAML (its data the CSV of the
/// same name), or a folder holding one of each.
fn trace_files(input: &Path) -> Result<(PathBuf, PathBuf), FidelityError> {
    let with_ext = |p: &Path, exts: &[&str]| {
        exts.iter()
            .map(|e| p.with_extension(e))
            .find(|p| p.is_file())
    };
    if input.is_dir() {
        let files: Vec<PathBuf> = std::fs::read_dir(input)
            .map_err(|source| ReplayError::Io {
                path: input.to_path_buf(),
                source,
            })?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        let of = |exts: &[&str]| -> Vec<&PathBuf> {
            files
                .iter()
                .filter(|p| {
                    p.extension()
                        .is_some_and(|e| exts.iter().any(|x| e.eq_ignore_ascii_case(x)))
                })
                .collect()
        };
        let (yaml, csv) = (of(&["yaml", "yml"]), of(&["csv"]));
        if yaml.len() != 1 || csv.len() != 1 {
            return Err(FidelityError::field(
                input,
                "(folder)",
                format!(
                    "holds {} YAML and {} CSV files: a TraceV2 folder holds one of each (its header and its data); else name the CSV",
                    yaml.len(),
                    csv.len()
                ),
            ));
        }
        return Ok((yaml[0].clone(), csv[0].clone()));
    }
    let is_yaml = input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
    if is_yaml {
        let csv = with_ext(input, &["csv"]).ok_or_else(|| {
            FidelityError::field(input, "(data)", "no CSV of the same name beside the header")
        })?;
        return Ok((input.to_path_buf(), csv));
    }
    let yaml = with_ext(input, &["yaml", "yml"]).ok_or_else(|| {
        FidelityError::field(
            input,
            "(header)",
            "no YAML header of the same name beside the data (blis observe --trace-header): name the folder holding both, or put the header beside the CSV as NAME.yaml",
        )
    })?;
    Ok((yaml, input.to_path_buf()))
}

/// What the import takes from the header.
struct Header {
    warm_up: usize,
    real: bool,
}

fn read_header(path: &Path) -> Result<Header, FidelityError> {
    let text = aisim_core::text_file::read_text_file(path)
        .map_err(|e| FidelityError::field(path, "(file)", e.to_string()))?;
    let v: Value = serde_yaml_ng::from_str(&text)
        .map_err(|e| FidelityError::field(path, "(file)", e.to_string()))?;
    let o = v.as_object().ok_or_else(|| {
        FidelityError::field(path, "(file)", "not a mapping: a TraceV2 header is one")
    })?;
    match o.get("trace_version").and_then(Value::as_u64) {
        Some(2 | 3) => {}
        other => {
            return Err(FidelityError::field(
                path,
                "trace_version",
                format!(
                    "{}: this aisim reads TraceV2 headers of versions 2 and 3",
                    other.map_or("missing".into(), |n| n.to_string())
                ),
            ))
        }
    }
    match o.get("time_unit").and_then(Value::as_str) {
        None | Some("us") => {}
        Some(u) => {
            return Err(FidelityError::field(
                path,
                "time_unit",
                format!("`{u}`: the data's times are read as microseconds (us)"),
            ))
        }
    }
    let warm_up = match o.get("warm_up_requests") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().map(|n| n as usize).ok_or_else(|| {
            FidelityError::field(
                path,
                "warm_up_requests",
                format!("{v}: must be a whole number"),
            )
        })?,
    };
    let real = match o.get("mode").and_then(Value::as_str) {
        Some("real") => true,
        Some("generated" | "replayed") => false,
        other => {
            return Err(FidelityError::field(
                path,
                "mode",
                format!(
                    "{}: one of real, generated, replayed",
                    other.map_or("missing".into(), |m| format!("`{m}`"))
                ),
            ))
        }
    };
    Ok(Header { warm_up, real })
}

/// One data row as read, its times still the file's microseconds.
struct Row {
    line: usize,
    id: String,
    planned: i64,
    sent: i64,
    first: i64,
    last: i64,
    input: u32,
    output: u32,
    status: String,
    error: String,
    session: Option<(String, u32)>,
    prefix: Option<(String, u32)>,
}

/// Reads a BLIS TraceV2: every request after the header's warm-up ones,
/// completed or not, arriving when the workload planned them; prompts of a
/// prefix group share hash ids for their `prefix_length` tokens, in blocks
/// of `block` tokens.
pub fn read_blis(input: &Path, block: u32) -> Result<BenchRun, FidelityError> {
    let (header_path, data_path) = trace_files(input)?;
    let header = read_header(&header_path)?;
    let path = data_path.as_path();
    let file = File::open(path).map_err(|source| ReplayError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut records = CsvRecords::new(BufReader::new(file), path);
    let mut cells = ByteRecord::new();
    let mut columns: Option<HashMap<String, usize>> = None;
    let mut rows = Vec::new();
    while let Some(line) = records.next(&mut cells)? {
        let Some(cols) = &columns else {
            let names: HashMap<String, usize> = (0..cells.len())
                .map(|i| {
                    cell_text(&cells, i, path, line, "(header)").map(|t| {
                        (
                            t.unwrap_or_default()
                                .trim_start_matches('\u{feff}')
                                .to_string(),
                            i,
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            if let Some(missing) = REQUIRED.iter().find(|c| !names.contains_key(**c)) {
                return Err(row_error(
                    path,
                    line,
                    missing,
                    "missing from the header row: a TraceV2 data file has it",
                )
                .into());
            }
            columns = Some(names);
            continue;
        };
        rows.push(row(path, line, &cells, cols)?);
    }
    if rows.len() <= header.warm_up {
        return Err(FidelityError::field(
            path,
            "(rows)",
            format!(
                "{} requests, all of them warm-up ({} warm_up_requests): no request to measure",
                rows.len(),
                header.warm_up
            ),
        ));
    }
    // The leading records are warm-up: neither measured nor replayed.
    let rows = &rows[header.warm_up..];
    let base = rows
        .iter()
        .flat_map(|r| [r.planned, r.sent])
        .min()
        .unwrap_or(0);
    let s = |us: i64| (us - base) as f64 / 1e6;
    let multi_turn = rows
        .iter()
        .any(|r| r.session.as_ref().is_some_and(|t| t.1 > 0));
    let any_group = rows.iter().any(|r| r.prefix.is_some());
    let names = Names {
        send: "arrival_time_us".into(),
        first: "first_chunk_time_us".into(),
        end: "last_chunk_time_us".into(),
        output: "output_tokens".into(),
        itl: "num_chunks".into(),
        id: "request_id".into(),
        turn: "round_index".into(),
    };
    let mut seen = Seen::default();
    let mut requests = Vec::with_capacity(rows.len());
    for (k, r) in rows.iter().enumerate() {
        let ok = r.status == "ok";
        let (first, end) = if ok {
            (s(r.first), s(r.last))
        } else {
            // What came before it ended: nothing, when no chunk did.
            let first = if r.first > 0 {
                s(r.first)
            } else {
                s(r.sent.max(r.planned))
            };
            (
                first,
                if r.last > 0 {
                    s(r.last).max(first)
                } else {
                    first
                },
            )
        };
        let hash_ids = any_group.then(|| match &r.prefix {
            Some((group, len)) => prefix_group_ids(group, *len, r.input, block, k as u64),
            None => prefix_group_ids("", 0, r.input, block, k as u64),
        });
        let q = TimedRequest {
            line: r.line,
            id: r.id.clone(),
            send_s: s(r.planned),
            first_token_s: first,
            end_s: end,
            input_tokens: r.input,
            output_tokens: if ok { r.output } else { r.output.max(1) },
            hash_ids,
            failed: (!ok).then(|| {
                if r.error.is_empty() {
                    r.status.clone()
                } else {
                    r.error.clone()
                }
            }),
            itl_s: None,
            session: if multi_turn {
                r.session.clone().map(|(session_id, turn_index)| Turn {
                    session_id,
                    turn_index,
                })
            } else {
                None
            },
        };
        check_line(path, &q, &names, &mut seen)?;
        requests.push(q);
    }
    Ok(BenchRun {
        requests,
        origin: Origin {
            from: "blis".into(),
            arrival: Arrival::Planned,
            prefix_reuse: if any_group {
                PrefixReuse::PrefixGroups
            } else {
                PrefixReuse::Unknown
            },
        },
        served: if header.real {
            Served::HttpStreaming
        } else {
            Served::InProcess
        },
    })
}

fn row(
    path: &Path,
    line: usize,
    cells: &ByteRecord,
    cols: &HashMap<String, usize>,
) -> Result<Row, ReplayError> {
    let text = |name: &str| -> Result<&str, ReplayError> {
        match cols.get(name) {
            None => Ok(""),
            Some(&i) => Ok(cell_text(cells, i, path, line, name)?
                .unwrap_or_default()
                .trim()),
        }
    };
    let int = |name: &str| -> Result<i64, ReplayError> {
        let t = text(name)?;
        t.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            row_error(
                path,
                line,
                name,
                format!("`{t}`: must be a whole number of microseconds, 0 or more"),
            )
        })
    };
    let tokens = |name: &str| -> Result<u32, ReplayError> {
        let t = text(name)?;
        t.parse::<u32>().map_err(|_| {
            row_error(
                path,
                line,
                name,
                format!("`{t}`: must be a whole number of tokens from 0 to 4294967295"),
            )
        })
    };
    let optional_tokens = |name: &str| -> Result<u32, ReplayError> {
        if text(name)?.is_empty() {
            Ok(0)
        } else {
            tokens(name)
        }
    };
    let status = text("status")?.to_string();
    if !matches!(status.as_str(), "ok" | "error" | "timeout") {
        return Err(row_error(
            path,
            line,
            "status",
            format!("`{status}`: one of ok, error, timeout"),
        ));
    }
    let server_input = optional_tokens("server_input_tokens")?;
    let input = if server_input > 0 {
        server_input
    } else {
        tokens("input_tokens")?
    };
    let session = match text("session_id")? {
        "" => None,
        s => Some((s.to_string(), optional_tokens("round_index")?)),
    };
    let prefix = match text("prefix_group")? {
        "" => None,
        g => Some((g.to_string(), optional_tokens("prefix_length")?)),
    };
    Ok(Row {
        line,
        id: text("request_id")?.to_string(),
        planned: int("arrival_time_us")?,
        sent: int("send_time_us")?,
        first: int("first_chunk_time_us")?,
        last: int("last_chunk_time_us")?,
        input,
        output: tokens("output_tokens")?,
        error: text("error_message")?.to_string(),
        status,
        session,
        prefix,
    })
}

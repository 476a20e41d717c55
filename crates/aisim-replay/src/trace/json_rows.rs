//! JSONL readers: Mooncake and Qwen Bailian / agentic-coder rows.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::bad_row::{row_error, shown};
use super::lines::Lines;
use super::record::{SessionInterner, TraceRecord};
use super::{float, mooncake_row};
use crate::error::ReplayError;
use aisim_core::number::{Number, NumberError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Mooncake,
    Bailian,
}

struct Row<'a> {
    obj: &'a Map<String, Value>,
    path: &'a Path,
    line: usize,
}

impl Row<'_> {
    /// The first of `names` present (aliases), or `None`.
    fn get<'n>(&self, names: &[&'n str]) -> Option<(&'n str, &Value)> {
        names
            .iter()
            .find_map(|n| self.obj.get(*n).filter(|v| !v.is_null()).map(|v| (*n, v)))
    }

    fn err(&self, field: &str, reason: impl Into<String>) -> ReplayError {
        row_error(self.path, self.line, field, reason)
    }

    fn number(&self, names: &[&str]) -> Result<Option<f64>, ReplayError> {
        match self.get(names) {
            None => Ok(None),
            Some((n, v)) => match v.as_f64() {
                Some(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(self.err(n, format!("{} is not a number", shown(&v.to_string())))),
            },
        }
    }

    fn required_number(&self, names: &[&str]) -> Result<f64, ReplayError> {
        self.number(names)?
            .ok_or_else(|| self.err(names[0], "missing"))
    }

    fn length(&self, names: &[&str]) -> Result<u32, ReplayError> {
        let (n, v) = self
            .get(names)
            .ok_or_else(|| self.err(names[0], "missing"))?;
        whole(v, "a number of tokens", Number::to_u32).map_err(|r| self.err(n, r))
    }

    fn integer(&self, name: &str) -> Result<Option<i64>, ReplayError> {
        match self.get(&[name]) {
            None => Ok(None),
            Some((n, v)) => whole(v, "an integer", Number::to_i64)
                .map(Some)
                .map_err(|r| self.err(n, r)),
        }
    }

    fn hash_ids(&self) -> Result<Vec<u64>, ReplayError> {
        match self.get(&["hash_ids"]) {
            None => Ok(Vec::new()),
            Some((n, Value::Array(items))) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    whole(v, "a block id", Number::to_u64)
                        .map_err(|r| self.err(n, format!("element {i}: {r}")))
                })
                .collect(),
            Some((n, v)) => Err(self.err(
                n,
                format!("{} is not a list of block ids", shown(&v.to_string())),
            )),
        }
    }

    fn session(&self, interner: &mut SessionInterner) -> Option<u64> {
        self.get(&["session_id"])
            .map(|(_, v)| intern_value(v, interner))
    }
}

/// A whole number by the readers' one number rule, or why not.
fn whole<T>(
    v: &Value,
    what: &str,
    convert: impl Fn(Number) -> Result<T, NumberError>,
) -> Result<T, String> {
    match v {
        Value::Number(x) => convert(Number::of_json(x)).map_err(|e| e.to_string()),
        _ => Err(format!("{} is not {what}", shown(&v.to_string()))),
    }
}

/// The fields of both shapes, typed: the fast path. A row that does not fit it
/// (a wrong type, a missing field) goes through the `Value` path, which names
/// the field that is wrong.
#[derive(Deserialize)]
struct TypedRow {
    timestamp: Option<f64>,
    created_time: Option<f64>,
    input_length: Option<u32>,
    input_tokens: Option<u32>,
    output_length: Option<u32>,
    output_tokens: Option<u32>,
    hash_ids: Option<Vec<u64>>,
    session_id: Option<Value>,
    delay_ms: Option<f64>,
    delay: Option<f64>,
    chat_id: Option<i64>,
    parent_chat_id: Option<i64>,
    time_to_parent_chat: Option<f64>,
}

fn intern_value(v: &Value, interner: &mut SessionInterner) -> u64 {
    match v {
        Value::String(s) => interner.intern(s),
        other => interner.intern(&other.to_string()),
    }
}

/// The record of a well-formed row, or `None` to take the checking path.
fn fast_record(
    text: &str,
    line: usize,
    shape: Shape,
    sessions: &mut SessionInterner,
) -> Option<TraceRecord> {
    let r: TypedRow = serde_json::from_str(text).ok()?;
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let session = r
        .session_id
        .as_ref()
        .filter(|v| !v.is_null())
        .map(|v| intern_value(v, sessions));
    let record = match shape {
        Shape::Mooncake => TraceRecord {
            line,
            timestamp_ms: finite(r.timestamp.or(r.created_time))?,
            input_length: r.input_length.or(r.input_tokens)?,
            output_length: r.output_length.or(r.output_tokens)?,
            hash_ids: r.hash_ids.unwrap_or_default(),
            session,
            chat_id: None,
            parent_chat_id: None,
            think_ms: r.delay_ms.or(r.delay),
        },
        Shape::Bailian => TraceRecord {
            line,
            timestamp_ms: finite(r.timestamp)? * 1e3,
            input_length: r.input_length?,
            output_length: r.output_length?,
            hash_ids: r.hash_ids.unwrap_or_default(),
            session,
            chat_id: Some(r.chat_id?),
            parent_chat_id: r.parent_chat_id,
            think_ms: r.time_to_parent_chat.map(|s| s * 1e3),
        },
    };
    // A think time the checking path would reject goes there for its message.
    record
        .think_ms
        .is_none_or(|t| t.is_finite() && t >= 0.0)
        .then_some(record)
}

pub(crate) fn read<R: BufRead>(
    reader: R,
    path: &Path,
    shape: Shape,
    sessions: &mut SessionInterner,
) -> Result<(Vec<TraceRecord>, u64), ReplayError> {
    let mut records = Vec::new();
    let mut lines = Lines::new(reader, path);
    read_rows(&mut lines, path, shape, sessions, &mut records, u64::MAX)?;
    Ok((records, 0))
}

/// Reads the rows of `lines` into `records`: to the end, or until the line
/// holding byte `until` is read (every line starting at or before it).
/// Returns whether it stopped there (and not at the end).
pub(crate) fn read_rows<R: BufRead>(
    lines: &mut Lines<'_, R>,
    path: &Path,
    shape: Shape,
    sessions: &mut SessionInterner,
    records: &mut Vec<TraceRecord>,
    until: u64,
) -> Result<bool, ReplayError> {
    let mut ids = Vec::new();
    while lines.consumed() <= until {
        let Some((line_no, text)) = lines.next_line()? else {
            return Ok(false);
        };
        if text.trim().is_empty() {
            continue;
        }
        if shape == Shape::Mooncake {
            if let Some(row) = mooncake_row::parse(text, &mut ids) {
                records.push(mooncake_record(line_no, row));
                continue;
            }
        }
        records.push(serde_record(text, line_no, shape, path, sessions)?);
    }
    Ok(true)
}

/// The record of a canonical Mooncake row (`mooncake_row::parse`'s) on
/// line `line`.
pub(crate) fn mooncake_record(line: usize, row: mooncake_row::CanonicalRow) -> TraceRecord {
    TraceRecord {
        line,
        timestamp_ms: row.timestamp_ms,
        input_length: row.input_length,
        output_length: row.output_length,
        hash_ids: row.hash_ids,
        session: None,
        chat_id: None,
        parent_chat_id: None,
        think_ms: None,
    }
}

/// A row read by `serde_json`, as every row but the scanner's canonical ones
/// is: typed first, then field by field to name what is wrong.
pub(crate) fn serde_record(
    text: &str,
    line_no: usize,
    shape: Shape,
    path: &Path,
    sessions: &mut SessionInterner,
) -> Result<TraceRecord, ReplayError> {
    if let Some(record) = fast_record(text, line_no, shape, sessions) {
        return Ok(record);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| broken_json(path, line_no, &e))?;
    let Value::Object(obj) = &value else {
        return Err(row_error(
            path,
            line_no,
            "(row)",
            "a row must be a JSON object",
        ));
    };
    let row = Row {
        obj,
        path,
        line: line_no,
    };
    let think_names: &[&str] = match shape {
        Shape::Mooncake => &["delay_ms", "delay"],
        Shape::Bailian => &["time_to_parent_chat"],
    };
    let think = row.number(think_names)?;
    if let Some(t) = think.filter(|&t| t < 0.0) {
        let (name, _) = row.get(think_names).expect("just read");
        return Err(row.err(name, format!("negative think time {}", float(t))));
    }
    Ok(match shape {
        Shape::Mooncake => TraceRecord {
            line: line_no,
            timestamp_ms: row.required_number(&["timestamp", "created_time"])?,
            input_length: row.length(&["input_length", "input_tokens"])?,
            output_length: row.length(&["output_length", "output_tokens"])?,
            hash_ids: row.hash_ids()?,
            session: row.session(sessions),
            chat_id: None,
            parent_chat_id: None,
            think_ms: think,
        },
        Shape::Bailian => TraceRecord {
            line: line_no,
            timestamp_ms: row.required_number(&["timestamp"])? * 1e3,
            input_length: row.length(&["input_length"])?,
            output_length: row.length(&["output_length"])?,
            hash_ids: row.hash_ids()?,
            session: row.session(sessions),
            chat_id: Some(
                row.integer("chat_id")?
                    .ok_or_else(|| row.err("chat_id", "missing"))?,
            ),
            parent_chat_id: row.integer("parent_chat_id")?,
            think_ms: think.map(|s| s * 1e3),
        },
    })
}

/// A JSONL row that does not parse: its line, and the column within it.
pub fn broken_json(path: &Path, line: usize, e: &serde_json::Error) -> ReplayError {
    row_error(
        path,
        line,
        "(row)",
        format!(
            "broken JSON at column {}: {}",
            e.column(),
            aisim_core::text_file::json_message(e)
        ),
    )
}

// The scanner's agreement with the serde path is tested here, where the
// reader chooses between them: the scanner's own file then names nothing of
// this one, which calls it.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::mooncake_row::parse;
    use proptest::prelude::*;

    /// A number as a trace might write it: mostly plain, sometimes with a
    /// sign, a fraction, an exponent, leading zeros or past 64 bits.
    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => any::<u32>().prop_map(|v| v.to_string()),
            2 => any::<u64>().prop_map(|v| v.to_string()),
            1 => (0u64..1000).prop_map(|v| format!("{v}.0")),
            1 => (0u64..1000).prop_map(|v| format!("{v}.5")),
            1 => (0u64..1000).prop_map(|v| format!("{v}e2")),
            1 => (0u64..1000).prop_map(|v| format!("-{v}")),
            1 => (0u64..1000).prop_map(|v| format!("0{v}")),
            1 => Just("18446744073709551616".to_string()),
            1 => Just("4294967296".to_string()),
            1 => Just("null".to_string()),
            1 => Just("\"7\"".to_string()),
        ]
    }

    fn ws() -> impl Strategy<Value = &'static str> {
        prop_oneof![4 => Just(""), 2 => Just(" "), 1 => Just("\t"), 1 => Just("\n  ")]
    }

    /// A row: mostly the four keys once each in a random order, sometimes
    /// any keys (some missing, some repeated, an unknown one); random values
    /// and whitespace.
    fn row() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("timestamp"),
            Just("input_length"),
            Just("output_length"),
            Just("hash_ids"),
            Just("session_id"),
        ];
        let value = || {
            (
                number(),
                proptest::collection::vec(number(), 0..4),
                ws(),
                ws(),
            )
        };
        let four = Just(vec![
            "timestamp",
            "input_length",
            "output_length",
            "hash_ids",
        ])
        .prop_shuffle()
        .prop_flat_map(move |keys| (Just(keys), proptest::collection::vec(value(), 4)))
        .prop_map(|(keys, values)| {
            keys.into_iter()
                .zip(values)
                .map(|(k, (n, ids, a, b))| (k, n, ids, a, b))
                .collect::<Vec<_>>()
        });
        let any_keys = proptest::collection::vec(
            (key, value()).prop_map(|(k, (n, ids, a, b))| (k, n, ids, a, b)),
            0..6,
        );
        prop_oneof![3 => four, 1 => any_keys].prop_map(|fields| {
            let body: Vec<String> = fields
                .into_iter()
                .map(|(k, n, ids, a, b)| {
                    let v = if k == "hash_ids" {
                        format!("[{}]", ids.join(&format!(",{a}")))
                    } else {
                        n
                    };
                    format!("{a}\"{k}\"{b}:{a}{v}{b}")
                })
                .collect();
            format!("{{{}}}", body.join(","))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the scanner reads, the reader's serde path reads the
        /// same; what it cannot read exactly, it declines.
        #[test]
        fn the_scanner_agrees_with_the_serde_path_or_declines(text in row()) {
            let mut scratch = Vec::new();
            if let Some(ours) = parse(&text, &mut scratch) {
                let mut sessions = crate::trace::SessionInterner::default();
                let path = std::path::Path::new("t.jsonl");
                let theirs = serde_record(&text, 1, Shape::Mooncake, path, &mut sessions);
                let theirs = theirs.map_err(|e| e.to_string());
                prop_assert!(theirs.is_ok(), "{} -> {:?}", text, theirs);
                let r = theirs.unwrap();
                prop_assert_eq!(
                    (ours.timestamp_ms, ours.input_length, ours.output_length, ours.hash_ids),
                    (r.timestamp_ms, r.input_length, r.output_length, r.hash_ids),
                    "{}", text
                );
                prop_assert_eq!((r.session, r.think_ms), (None, None));
            }
        }
    }
}

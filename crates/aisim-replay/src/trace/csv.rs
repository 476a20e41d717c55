//! CSV readers: Azure LLM inference traces and BurstGPT logs, parsed by the
//! `csv` crate (quoted fields may hold commas, quotes and line breaks; a
//! record's line is the line it starts on).

use std::io::{BufRead, Read};
use std::path::Path;

use csv::ByteRecord;

use super::bad_row::{row_error, shown};
use super::lines::{utf8, MAX_LINE_BYTES};
use super::record::{SessionInterner, TraceRecord};
use crate::error::ReplayError;
use aisim_core::number::Number;
use aisim_core::wall_clock::parse_wall_clock_ms;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Azure,
    BurstGpt,
}

/// One record with the line it starts on.
struct Record<'a> {
    cells: &'a ByteRecord,
    path: &'a Path,
    line: usize,
}

impl Record<'_> {
    fn is_blank(&self) -> bool {
        self.cells.iter().all(|c| c.trim_ascii().is_empty())
    }

    /// Cell `idx` (trimmed), which must be there.
    fn cell(&self, idx: usize, field: &str) -> Result<&str, ReplayError> {
        cell_text(self.cells, idx, self.path, self.line, field)?.ok_or_else(|| {
            row_error(
                self.path,
                self.line,
                field,
                "missing (row has too few columns)",
            )
        })
    }

    fn tokens(&self, idx: usize, field: &str) -> Result<u32, ReplayError> {
        let s = self.cell(idx, field)?;
        let reason = match Number::of_text(s) {
            None => format!("`{}` is not a number of tokens", shown(s)),
            Some(n) => match n.to_u32() {
                Ok(v) => return Ok(v),
                Err(e) => e.to_string(),
            },
        };
        Err(row_error(self.path, self.line, field, reason))
    }

    fn seconds(&self, idx: usize, field: &str) -> Result<f64, ReplayError> {
        let s = self.cell(idx, field)?;
        match Number::of_text(s) {
            Some(n) => match n {
                Number::Unsigned(u) => Ok(u as f64),
                Number::Negative(i) => Ok(i as f64),
                Number::Float(x) if x.is_finite() => Ok(x),
                Number::Float(_) => Err(row_error(
                    self.path,
                    self.line,
                    field,
                    format!("`{}` seconds is out of range", shown(s)),
                )),
            },
            None => Err(row_error(
                self.path,
                self.line,
                field,
                format!("`{}` is not a number of seconds", shown(s)),
            )),
        }
    }
}

struct Columns {
    names: Vec<String>,
    line: usize,
}

impl Columns {
    fn find(&self, path: &Path, name: &str) -> Result<usize, ReplayError> {
        self.position(name).ok_or_else(|| {
            row_error(
                path,
                self.line,
                name,
                format!("missing column (header has: {})", self.names.join(", ")),
            )
        })
    }
    fn position(&self, name: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|n| n.trim().eq_ignore_ascii_case(name))
    }
}

pub(crate) fn read<R: BufRead>(
    reader: R,
    path: &Path,
    shape: Shape,
    sessions: &mut SessionInterner,
) -> Result<(Vec<TraceRecord>, u64), ReplayError> {
    read_capped(reader, path, shape, MAX_LINE_BYTES, sessions)
}

/// CSV records of a file, each with the line it starts on (aisim-core's
/// shared reader: blank lines, CRLF, a BOM and quoted line breaks counted),
/// none held past `cap` bytes (a quote left open would otherwise read the
/// rest of the file).
pub struct CsvRecords<'p, R: Read> {
    records: aisim_core::csv_records::CsvRecords<R>,
    path: &'p Path,
}

impl<'p, R: Read> CsvRecords<'p, R> {
    /// Records of `reader`, errors naming `path`; no record over the line cap.
    pub fn new(reader: R, path: &'p Path) -> Self {
        Self::capped(reader, path, MAX_LINE_BYTES)
    }

    fn capped(reader: R, path: &'p Path, cap: u64) -> Self {
        CsvRecords {
            records: aisim_core::csv_records::CsvRecords::new(reader, cap),
            path,
        }
    }

    /// Reads the next record into `cells`; its first line, or `None` at the end.
    pub fn next(&mut self, cells: &mut ByteRecord) -> Result<Option<usize>, ReplayError> {
        use aisim_core::csv_records::CsvRecordError as E;
        self.records.next(cells).map_err(|e| match e {
            E::Io(source) => ReplayError::Io {
                path: self.path.to_path_buf(),
                source,
            },
            E::TooLong { line, .. } | E::Malformed { line, .. } => {
                row_error(self.path, line, "(row)", e.to_string())
            }
        })
    }
}

/// Cell `idx` of a record as trimmed text (`None` past its end); bytes that
/// are not UTF-8 are an error naming the line and field.
pub fn cell_text<'c>(
    cells: &'c ByteRecord,
    idx: usize,
    path: &Path,
    line: usize,
    field: &str,
) -> Result<Option<&'c str>, ReplayError> {
    cells
        .get(idx)
        .map(|b| utf8(b, path, line, Some(field)).map(str::trim))
        .transpose()
}

fn read_capped<R: BufRead>(
    reader: R,
    path: &Path,
    shape: Shape,
    cap: u64,
    sessions: &mut SessionInterner,
) -> Result<(Vec<TraceRecord>, u64), ReplayError> {
    let mut records_in = CsvRecords::capped(reader, path, cap);
    let mut cells = ByteRecord::new();
    let mut next = |cells: &mut ByteRecord| records_in.next(cells);
    let header = loop {
        let Some(line) = next(&mut cells)? else {
            return Err(ReplayError::TraceFile {
                path: path.to_path_buf(),
                reason: "empty file: no CSV header".into(),
            });
        };
        let rec = Record {
            cells: &cells,
            path,
            line,
        };
        if !rec.is_blank() {
            let names = (0..cells.len())
                .map(|i| {
                    rec.cell(i, "(header)")
                        .map(|s| s.trim_start_matches('\u{feff}').to_string())
                })
                .collect::<Result<Vec<_>, _>>()?;
            break Columns { names, line };
        }
    };
    let (ts_name, in_name, out_name) = match shape {
        Shape::Azure => ("TIMESTAMP", "ContextTokens", "GeneratedTokens"),
        Shape::BurstGpt => ("Timestamp", "Request tokens", "Response tokens"),
    };
    let (ts, inp, out) = (
        header.find(path, ts_name)?,
        header.find(path, in_name)?,
        header.find(path, out_name)?,
    );
    let session_col = header.position("Session ID");
    let mut records = Vec::new();
    let mut skipped = 0u64;
    while let Some(line) = next(&mut cells)? {
        let rec = Record {
            cells: &cells,
            path,
            line,
        };
        if rec.is_blank() {
            continue;
        }
        let timestamp_ms = match shape {
            Shape::Azure => parse_wall_clock_ms(rec.cell(ts, ts_name)?)
                .map_err(|r| row_error(path, line, ts_name, r))?,
            Shape::BurstGpt => rec.seconds(ts, ts_name)? * 1e3,
        };
        let input_length = rec.tokens(inp, in_name)?;
        let output_length = rec.tokens(out, out_name)?;
        if shape == Shape::BurstGpt && output_length == 0 {
            // A failed request in the log: skipped on purpose, and counted.
            skipped += 1;
            continue;
        }
        let session = match session_col {
            Some(c) if c < cells.len() => Some(rec.cell(c, "Session ID")?)
                .filter(|s| !s.is_empty())
                .map(|s| sessions.intern(s)),
            _ => None,
        };
        records.push(TraceRecord {
            line,
            timestamp_ms,
            input_length,
            output_length,
            hash_ids: Vec::new(),
            session,
            chat_id: None,
            parent_chat_id: None,
            think_ms: None,
        });
    }
    Ok((records, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read_text(text: &str) -> Result<Vec<TraceRecord>, String> {
        read(
            text.as_bytes(),
            Path::new("t.csv"),
            Shape::BurstGpt,
            &mut SessionInterner::default(),
        )
        .map(|(r, _)| r)
        .map_err(|e| e.to_string())
    }

    #[test]
    fn quoted_fields_hold_commas_and_line_breaks_and_lines_stay_right() {
        let text = "Timestamp,Model,Request tokens,Response tokens\n\
                    1,\"gpt,4\",10,2\n\
                    2,\"multi\nline\nmodel\",20,3\n\
                    3,m,x,4\n";
        let e = read_text(text).unwrap_err();
        assert_eq!(
            e,
            "t.csv:6: field `Request tokens`: `x` is not a number of tokens"
        );
        let ok = read_text(&text.replace(",x,", ",30,")).unwrap();
        assert_eq!(
            ok.iter()
                .map(|r| (r.line, r.input_length))
                .collect::<Vec<_>>(),
            vec![(2, 10), (3, 20), (6, 30)]
        );
    }

    /// A bad row's error names the line it starts on, whatever precedes
    /// it: blank lines, CRLF, a BOM, a record spanning lines; with or
    /// without a final line end; in both CSV shapes.
    #[test]
    fn a_bad_row_is_named_by_its_first_line_in_every_layout() {
        let layouts: &[(&str, usize)] = &[
            ("<h>\n<g>\n\n<b>", 4),
            ("<h>\n\n\n<g>\n\n<b>\n", 6),
            ("<h>\r\n<g>\r\n\r\n<b>\r\n", 4),
            ("\u{feff}\n<h>\n<g>\n\n<b>", 5),
            ("<h>\n<q>\n\n<b>\n", 5),
            ("\r\n<h>\r\n<q>\r\n\r\n<b>", 6),
        ];
        for shape in [Shape::Azure, Shape::BurstGpt] {
            let (header, good, quoted, bad) = match shape {
                Shape::Azure => (
                    "TIMESTAMP,ContextTokens,GeneratedTokens,Note",
                    "2023-11-16 18:15:46.6805900,10,2,x",
                    "2023-11-16 18:15:47.0000000,10,2,\"two\nlines\"",
                    "2023-11-16 18:15:48.0000000,10,oops,x",
                ),
                Shape::BurstGpt => (
                    "Timestamp,Request tokens,Response tokens,Note",
                    "1,10,2,x",
                    "2,10,2,\"two\r\nlines\"",
                    "3,10,oops,x",
                ),
            };
            let field = match shape {
                Shape::Azure => "GeneratedTokens",
                Shape::BurstGpt => "Response tokens",
            };
            for (layout, line) in layouts {
                let text = layout
                    .replace("<h>", header)
                    .replace("<g>", good)
                    .replace("<q>", quoted)
                    .replace("<b>", bad);
                let e = read(
                    text.as_bytes(),
                    Path::new("t.csv"),
                    shape,
                    &mut SessionInterner::default(),
                )
                .unwrap_err();
                assert_eq!(
                    e.to_string(),
                    format!("t.csv:{line}: field `{field}`: `oops` is not a number of tokens"),
                    "{shape:?} {layout:?}"
                );
            }
        }
    }

    #[test]
    fn an_unclosed_quote_stops_at_the_cap_naming_the_record() {
        let mut text =
            String::from("Timestamp,Model,Request tokens,Response tokens\n0,m,1,1\n1,\"open,1,1\n");
        for i in 0..1000 {
            text.push_str(&format!("{i},m,1,1\n"));
        }
        let e = read_capped(
            text.as_bytes(),
            Path::new("t.csv"),
            Shape::BurstGpt,
            1000,
            &mut SessionInterner::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:3: field `(row)`: a record longer than 1000 bytes (a quote left open?)"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Rows written by a CSV writer (any model name: commas, quotes,
        /// line breaks) read back as written, each on the line it starts on.
        #[test]
        fn generated_rows_round_trip(
            rows in proptest::collection::vec(
                (0u32..1_000_000, "[a-z ,\"\n]{0,12}", 0u32..100_000, 1u32..5_000, "[a-z0-9,]{0,4}"),
                1..20,
            )
        ) {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(["Timestamp", "Model", "Request tokens", "Response tokens", "Session ID"]).unwrap();
            let mut want = Vec::new();
            let mut line = 2;
            let mut sessions = SessionInterner::default();
            for (ms, model, input, output, session) in &rows {
                let ts = format!("{}.{:03}", ms / 1000, ms % 1000);
                w.write_record([ts.as_str(), model, &input.to_string(), &output.to_string(), session]).unwrap();
                let s = (!session.is_empty()).then(|| sessions.intern(session));
                want.push((line, *ms as f64, *input, *output, s));
                line += 1 + model.matches('\n').count();
            }
            let bytes = w.into_inner().unwrap();
            let (got, skipped) = read(bytes.as_slice(), Path::new("t.csv"), Shape::BurstGpt, &mut SessionInterner::default()).unwrap();
            prop_assert_eq!(skipped, 0);
            let got: Vec<_> = got.iter()
                .map(|r| (r.line, r.timestamp_ms, r.input_length, r.output_length, r.session))
                .collect();
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                prop_assert_eq!((g.0, g.2, g.3, g.4), (w.0, w.2, w.3, w.4));
                prop_assert!((g.1 - w.1).abs() < 1e-6, "{} vs {}", g.1, w.1);
            }
        }
    }
}

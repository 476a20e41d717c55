//! The layer profiles' CSV files, read by a CSV parser: quoted cells (which
//! may hold commas and line breaks; a record's line is its first), cells
//! trimmed, the columns found by their header names in any order. Every
//! error names the file, the line and the field.

use std::path::Path;

use csv::ByteRecord;

use super::table::bad;
use crate::csv_records::CsvRecords;
use crate::error::CoreError;

/// Rows of a numeric CSV, each `(line, name, numbers)`: `numbers` in the
/// order of the columns asked for; `name` is the text column's, when one is
/// asked for.
pub(super) type Rows = Vec<(usize, String, Vec<f64>)>;

/// Reads `path`: a header naming every column of `numeric` (and `text`,
/// when given) once, in any order, and nothing else; then one record a
/// row, blank records skipped. Numbers must be finite and 0 or more.
pub(super) fn read_rows(
    path: &Path,
    text: Option<&str>,
    numeric: &[&str],
) -> Result<Rows, CoreError> {
    // Bounded, BOM dropped, bad bytes named by line and column.
    let content = crate::text_file::read_text_file(path)?;
    let expected: Vec<&str> = text.into_iter().chain(numeric.iter().copied()).collect();
    // The shared reader names each record's first line; cells are trimmed
    // here, after the parse, so a quoted cell's line breaks still count.
    let mut records = CsvRecords::new(content.as_bytes(), crate::text_file::MAX_TEXT_FILE_BYTES);
    let mut cells = ByteRecord::new();
    let mut next =
        |records: &mut CsvRecords<&[u8]>| -> Result<Option<(usize, Vec<String>)>, CoreError> {
            while let Some(line) = records.next(&mut cells).map_err(|e| {
                let at = e.line().map_or("(file)".into(), |l| format!("line {l}"));
                bad(path, at, format!("not CSV: {e}"))
            })? {
                let r = cells
                    .iter()
                    .map(|c| std::str::from_utf8(c).map(|t| t.trim().to_string()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(path, format!("line {line}"), format!("not UTF-8: {e}")))?;
                if r.iter().all(String::is_empty) {
                    continue;
                }
                return Ok(Some((line, r)));
            }
            Ok(None)
        };
    let header = next(&mut records)?;
    let header_line = header.as_ref().map_or(1, |h| h.0);
    let names: Vec<String> = header.map(|(_, r)| r).unwrap_or_default();
    let want = || format!("expected the columns {}", expected.join(","));
    let mut columns = Vec::with_capacity(expected.len());
    for name in &expected {
        match names.iter().position(|n| n == name) {
            Some(i) => columns.push(i),
            None => {
                return Err(bad(
                    path,
                    format!("line {header_line}: field `{name}`"),
                    format!("missing from the header `{}`: {}", names.join(","), want()),
                ))
            }
        }
    }
    for (i, n) in names.iter().enumerate() {
        if !expected.contains(&n.as_str()) || names[..i].contains(n) {
            let what = if expected.contains(&n.as_str()) {
                "named twice"
            } else {
                "not a column of this profile"
            };
            return Err(bad(
                path,
                format!("line {header_line}: field `{n}`"),
                format!("{what}: {}", want()),
            ));
        }
    }
    let mut rows = Vec::new();
    while let Some((line, r)) = next(&mut records)? {
        if r.len() != names.len() {
            return Err(bad(
                path,
                format!("line {line}"),
                format!("{} cells: the header has {}", r.len(), names.len()),
            ));
        }
        let skip = usize::from(text.is_some());
        let mut numbers = Vec::with_capacity(numeric.len());
        for (&i, field) in columns.iter().zip(&expected).skip(skip) {
            let cell = &r[i];
            let v = cell
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    bad(
                        path,
                        format!("line {line}: field `{field}`"),
                        format!("`{cell}` is not a number of 0 or more"),
                    )
                })?;
            numbers.push(v);
        }
        let name = if text.is_some() {
            r[columns[0]].to_string()
        } else {
            String::new()
        };
        rows.push((line, name, numbers));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(tag: &str, text: &str) -> Result<Rows, CoreError> {
        let scratch = crate::scratch::ScratchDir::new(&format!("profile-csv-{tag}"));
        let dir = scratch.path();
        let path = dir.join("dense.csv");
        std::fs::write(&path, text).unwrap();

        read_rows(&path, Some("layer"), &["tokens", "time_us"])
    }

    #[test]
    fn quoted_cells_and_any_column_order() {
        let rows = read(
            "order",
            "time_us, layer ,tokens\n\"1.5\",\"qkv, fused\",4\n\n2,\"two\nlines\",8\n",
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![
                (2, "qkv, fused".to_string(), vec![4.0, 1.5]),
                (4, "two\nlines".to_string(), vec![8.0, 2.0]),
            ]
        );
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let cases = [
            ("layer,tokens\n", "line 1: field `time_us`"),
            ("layer,tokens,time_us,extra\n", "line 1: field `extra`"),
            ("layer,tokens,time_us,tokens\n", "named twice"),
            ("layer,tokens,time_us\nqkv,4\n", "line 2"),
            (
                "layer,tokens,time_us\n\"a\nb\",4,x\n",
                "line 2: field `time_us`",
            ),
            (
                "layer,tokens,time_us\nqkv,4,1\nqkv,-1,1\n",
                "line 3: field `tokens`",
            ),
            ("layer,tokens,time_us\nqkv,4,NaN\n", "`NaN`"),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let e = read(&format!("bad{i}"), text).unwrap_err().to_string();
            assert!(e.contains("dense.csv") && e.contains(want), "{text:?}: {e}");
        }
    }

    /// A bad row is named by its first line whatever precedes it: blank
    /// lines, CRLF, a BOM, a record spanning lines, no final line end.
    #[test]
    fn a_bad_row_is_named_by_its_first_line_in_every_layout() {
        let layouts: &[(&str, usize)] = &[
            ("<h>\n<g>\n\n<b>", 4),
            ("\n\n<h>\n\n\n<g>\n\n<b>\n", 8),
            ("<h>\r\n<g>\r\n\r\n<b>\r\n", 4),
            ("\u{feff}\n<h>\n<g>\n\n<b>", 5),
            ("<h>\n<q>\n\n<b>\n", 5),
            ("\r\n<h>\r\n<q>\r\n\r\n<b>", 6),
        ];
        for (i, (layout, line)) in layouts.iter().enumerate() {
            let text = layout
                .replace("<h>", "layer,tokens,time_us")
                .replace("<g>", "qkv,4,1")
                .replace("<q>", "\"two\r\nlines\",4,1")
                .replace("<b>", "qkv,4,oops");
            let e = read(&format!("layout{i}"), &text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("line {line}: field `time_us`: `oops`")),
                "{layout:?}: {e}"
            );
        }
    }
}
